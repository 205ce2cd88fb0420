"""``ofc settle``: each match's settlement: points, settled points and money per player."""

from __future__ import annotations

import argparse
import sys

from pipeline.cli import CommandError
from pipeline.cli.common import add_rules_option, rules_from_option, terminal_text
from pipeline.cli.database import add_database_option, add_lake_option, print_rows, read_rows

FORMATS = ("text", "json", "csv")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``settle`` command."""
    parser = subparsers.add_parser(
        "settle",
        help="settle each match: points, points after the match cap, money per player",
        description=(
            "One row per match and player: match, player, hands, points (the player's hand "
            "points summed over the match), settled (after the match cap: a player below -cap "
            "pays only the cap, the shortfall is taken from the winners in proportion to their "
            "winnings) and money (settled x stake), then the site and a note. A match is the "
            "hands carrying one match_id (a boards CSV's match column, a live session). Each "
            "match is settled under the rule set that scored its hands; with --rules its boards "
            "are scored again under that rule set (nothing is written). A match whose hands "
            "have different players, rules, games or tables is listed, not settled, and its "
            "note says why (docs/rules.md, section 9)."
        ),
    )
    add_database_option(parser)
    add_lake_option(parser)
    add_rules_option(parser, "score and settle every match under this rule set instead (a "
                             "preset name or a TOML rules file); the database is not changed")
    parser.add_argument("--match", metavar="ID", help="only this match (its match_id)")
    parser.add_argument("--site", metavar="SITE", help="only matches of this site")
    parser.add_argument("--format", choices=(*FORMATS, "table"), default="text",
                        help="text (a table; also 'table'), json (a list of objects) or csv "
                             "(default: %(default)s)")
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    """Print every match's settlement."""
    from pipeline.read.matches import SETTLEMENT_COLUMNS, match_settlements, settlement_rows

    rules = rules_from_option(arguments.rules)
    matches = read_rows(arguments.db, lambda connection: match_settlements(
        connection, rules=rules, match=arguments.match, site=arguments.site), arguments.lake)
    if not matches:
        where = f"match {arguments.match!r}" if arguments.match is not None else "match"
        if arguments.site is not None:
            where += f" of site {arguments.site!r}"
        source = arguments.lake or arguments.db
        raise CommandError(f"no {where} in {source}: only hands with a match_id (a boards CSV "
                           "match column, a live session) form matches")
    output = "text" if arguments.format == "table" else arguments.format
    # JSON gives numbers; text and CSV the exact decimals (CSV cells stay numbers)
    rows = settlement_rows(matches, exact=output != "json")
    print_rows(rows, SETTLEMENT_COLUMNS, output, title="match settlements")
    if output == "text":
        unsettled = sum(match.settlement is None for match in matches)
        for match in matches:
            if match.settlement is not None:
                cap = f"match cap {match.cap}" if match.cap else "no match cap"
                print(terminal_text(
                    f"{match.match_id}: {match.hands} hands, rules {match.rules} ({cap}, stake "
                    f"{match.stake} per point, money in units of "
                    f"{match.settlement.money_unit})"))
        print(f"{len(matches):,} match{'es' if len(matches) != 1 else ''}: "
              f"{len(matches) - unsettled:,} settled, {unsettled:,} not settled"
              + (" (the note says why)" if unsettled else ""), file=sys.stdout)
    return 0
