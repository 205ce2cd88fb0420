"""``ofc report PLAYER``: the coaching report of one player as HTML, Markdown or JSON."""

from __future__ import annotations

import argparse
import math
import sys
from datetime import date
from pathlib import Path

from pipeline.cli import CommandError
from pipeline.cli.common import describe_when_shown, positive_whole_number
from pipeline.cli.database import add_database_option, add_lake_option, open_for_reading

VARIANTS = ("classic", "pineapple", "2-7-pineapple")
FORMATS = ("html", "md", "json")
"""The report's formats (:data:`pipeline.report.render.FORMATS`, written out here so registering
the command does not import the report; a test checks the two agree)."""
SETTING_OPTIONS = {
    "min_sample": "min_sample", "min_sessions": "min_sessions",
    "rank_min_hands": "percentile_min_hands", "fdr": "fdr", "window": "rolling_window",
}
"""Option (dest) → the :class:`~pipeline.report.ReportSettings` field it sets. Their defaults
are the settings' own, filled in when the help is shown (:func:`_describe`) and when the
report is made (an option not given is None)."""
SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".json": "json"}


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from error


def _share(text: str) -> float:
    try:
        value = float(text.rstrip("% "))
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from error
    value = value / 100 if value >= 1 else value
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (or 0 and 100 %): {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from error
    if not 0 < value < math.inf:  # nan and inf too
        raise argparse.ArgumentTypeError(f"must be a finite number above 0: {text!r}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``report`` command."""
    parser = subparsers.add_parser(
        "report",
        help="a coaching report for one player: findings with evidence, notable hands, charts",
        description=(
            "Write a coaching report for PLAYER against a reference group (the field, the "
            "players of a stake, named regulars, or everyone with enough hands and a low foul "
            "rate; outliers left out by a visible rule): one ranked list of causes in points "
            "per 100 hands that never overlap and add up to the difference; a Fantasyland "
            "balance sheet per variant, each cause with the rates that explain it; does chasing "
            "Fantasyland pay (more or less than the group); seats and regular opponents within "
            "variant and table size; every test with errors clustered by session, through one "
            "false-discovery correction, and a summary of one item per difference in play "
            "(causes that offset each other as one trade-off with its net); fair trends and a before/after comparison with the mix of "
            "games held fixed; the player's strength shrunk toward the group; notable hands as "
            "boards with each foul explained. The HTML works offline (charts and plotly.js "
            "inline)."
        ),
    )
    parser.add_argument("player", metavar="PLAYER", help="the player's screen name")
    add_database_option(parser)
    add_lake_option(parser)
    parser.add_argument("--since", type=_day, metavar="DATE",
                        help="first day to include (YYYY-MM-DD, UTC)")
    parser.add_argument("--until", type=_day, metavar="DATE",
                        help="last day to include (YYYY-MM-DD, UTC)")
    parser.add_argument("--variant", choices=VARIANTS, help="only hands of this variant")
    parser.add_argument("--alias", action="append", default=[], metavar="NAME",
                        help="another screen name of the same person (repeatable)")
    parser.add_argument("--out", metavar="FILE",
                        help="where to write the report ('-' for standard output; default: "
                             "PLAYER-report.FORMAT in the current folder)")
    parser.add_argument("--format", choices=FORMATS, dest="output_format",
                        help="html, md or json (default: from the --out suffix, else html)")
    parser.add_argument("--min-sample", type=positive_whole_number, metavar="N",
                        help="observations a finding needs (default: %(default)s)")
    parser.add_argument("--min-sessions", type=positive_whole_number,
                        metavar="N", help="sessions a trend needs (default: %(default)s)")
    parser.add_argument("--rank-min-hands", type=positive_whole_number, metavar="N",
                        help="hands a player needs in a variant for a percentile (default: "
                             "%(default)s)")
    parser.add_argument("--reference", default="field", metavar="GROUP",
                        help="whom to compare with: field (everyone else; default), "
                             "stake:RULES[,RULES] (players at those rules), named:A,B,C "
                             "(regulars), or qualified:N:X (at least N hands, foul rate below "
                             "X %%)")
    parser.add_argument("--outlier-sd", type=_positive_float, metavar="K",
                        help="leave out players whose results sit more than K robust SDs from "
                             "the field's (default: %(default)s)")
    parser.add_argument("--no-outlier-rule", action="store_true",
                        help="leave nobody out as an outlier")
    parser.add_argument("--fdr", type=_share, metavar="Q",
                        help="false-discovery rate of the correction over every test (default: "
                             "%(default)s)")
    parser.add_argument("--change-date", type=_day, metavar="DATE",
                        help="compare the hands before and from this day on (a lesson, a rule "
                             "change): did the player improve?")
    parser.add_argument("--window", type=positive_whole_number,
                        metavar="N", help="hands per rolling window (default: %(default)s)")
    parser.set_defaults(handler=run)
    describe_when_shown(parser, _describe)


def _describe(parser: argparse.ArgumentParser) -> None:
    """The defaults the help shows: the report's own settings (imports the report)."""
    for action in parser._actions:
        if action.default is None and (action.dest in SETTING_OPTIONS
                                       or action.dest == "outlier_sd"):
            action.default = _defaults()[action.dest]


def _defaults() -> dict[str, object]:
    """Option (dest) → its default: the report's settings and outlier rule."""
    from pipeline.report import ReportSettings
    from pipeline.report.reference import DEFAULT_OUTLIER_SD

    settings = ReportSettings()
    defaults: dict[str, object] = {option: getattr(settings, field)
                                   for option, field in SETTING_OPTIONS.items()}
    defaults["outlier_sd"] = DEFAULT_OUTLIER_SD
    return defaults


def _output_format(arguments: argparse.Namespace) -> str:
    if arguments.output_format:
        return arguments.output_format
    if arguments.out and arguments.out != "-":
        return SUFFIX_FORMATS.get(Path(arguments.out).suffix.lower(), "html")
    return "html"


def run(arguments: argparse.Namespace) -> int:
    """Build the report and write it."""
    import duckdb

    from pipeline.report import NoHandsError, ReportRequest, ReportSettings, create_report
    from pipeline.report.reference import ReferenceError, ReferenceSpec
    from pipeline.report.render import render, report_file_name

    defaults = _defaults()
    for option in (*SETTING_OPTIONS, "outlier_sd"):
        if getattr(arguments, option) is None:
            setattr(arguments, option, defaults[option])
    if arguments.since and arguments.until and arguments.since > arguments.until:
        raise CommandError("--since is after --until", code=2)
    output_format = _output_format(arguments)
    try:
        reference = ReferenceSpec.parse(
            arguments.reference, None if arguments.no_outlier_rule else arguments.outlier_sd)
    except ReferenceError as error:
        raise CommandError(f"--reference: {error}", code=2) from error
    request = ReportRequest(
        player=arguments.player, aliases=tuple(arguments.alias), since=arguments.since,
        until=arguments.until, variant=arguments.variant, reference=reference,
        change_date=arguments.change_date,
    )
    settings = ReportSettings(
        min_sample=arguments.min_sample, min_sessions=arguments.min_sessions,
        percentile_min_hands=arguments.rank_min_hands, fdr=arguments.fdr,
        rolling_window=arguments.window,
    )
    connection = open_for_reading(arguments.db, arguments.lake)
    where = arguments.lake or arguments.db
    try:
        report = create_report(connection, request, settings)
    except NoHandsError as error:
        raise CommandError(f"{error} in {where}") from error
    except duckdb.Error as error:
        raise CommandError(f"cannot read {where}: {error}") from error
    finally:
        connection.close()
    text = render(report, output_format)
    if arguments.out == "-":
        sys.stdout.write(text)
        return 0
    target = Path(arguments.out) if arguments.out else Path(
        report_file_name(arguments.player, output_format))
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as error:
        raise CommandError(f"cannot write {target}: {error}") from error
    items = len(report.summary)
    print(f"wrote {target} ({output_format}): {report.headline.hands:,} hands against "
          f"{report.reference.label}, {items} clear item{'s' if items != 1 else ''} "
          f"({report.tests} tests), {len(report.notable)} notable hands", file=sys.stderr)
    return 0
