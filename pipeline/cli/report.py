"""``ofc report PLAYER``: the coaching report of one player as HTML, Markdown or JSON."""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

import duckdb

from pipeline.cli import CommandError
from pipeline.cli.database import add_database_option, add_lake_option, open_for_reading
from pipeline.report import NoHandsError, ReportRequest, ReportSettings, create_report
from pipeline.report.render import FORMATS, render, report_file_name

VARIANTS = ("classic", "pineapple", "2-7-pineapple")
SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".json": "json"}


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from error


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from error
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``report`` command."""
    defaults = ReportSettings()
    parser = subparsers.add_parser(
        "report",
        help="a coaching report for one player: findings with evidence, notable hands, charts",
        description=(
            "Write a coaching report for PLAYER: hands, sessions and points per hand with their "
            "standing among players; findings (fouls, chasing Fantasyland, Fantasyland entry and "
            "stay, royalties by row, scoops, results by position and variant, trend across "
            "sessions, head-to-head) each with the field's value, the sample size, a confidence "
            "statement and the estimated cost or gain in points per hand; notable hands as "
            "boards. The HTML works offline (charts and plotly.js inline)."
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
    parser.add_argument("--min-sample", type=_positive, default=defaults.min_sample, metavar="N",
                        help="observations a finding needs (default: %(default)s)")
    parser.add_argument("--min-sessions", type=_positive, default=defaults.min_sessions,
                        metavar="N", help="sessions a trend needs (default: %(default)s)")
    parser.add_argument("--rank-min-hands", type=_positive,
                        default=defaults.percentile_min_hands, metavar="N",
                        help="hands a player needs in a variant to be ranked (default: "
                             "%(default)s)")
    parser.set_defaults(handler=run)


def _output_format(arguments: argparse.Namespace) -> str:
    if arguments.output_format:
        return arguments.output_format
    if arguments.out and arguments.out != "-":
        return SUFFIX_FORMATS.get(Path(arguments.out).suffix.lower(), "html")
    return "html"


def run(arguments: argparse.Namespace) -> int:
    """Build the report and write it."""
    if arguments.since and arguments.until and arguments.since > arguments.until:
        raise CommandError("--since is after --until", code=2)
    output_format = _output_format(arguments)
    request = ReportRequest(
        player=arguments.player, aliases=tuple(arguments.alias), since=arguments.since,
        until=arguments.until, variant=arguments.variant,
    )
    settings = ReportSettings(
        min_sample=arguments.min_sample, min_sessions=arguments.min_sessions,
        percentile_min_hands=arguments.rank_min_hands,
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
    shown = sum(1 for finding in report.findings if finding.shown)
    print(f"wrote {target} ({output_format}): {report.headline.hands:,} hands, "
          f"{shown} findings, {len(report.notable)} notable hands", file=sys.stderr)
    return 0
