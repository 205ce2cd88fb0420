"""``ofc rescore``: recompute verdicts of every stored hand under a rule set, from the database."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.cli import CommandError
from pipeline.cli.common import add_rules_option, rules_from_option
from pipeline.cli.database import add_database_option


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``rescore`` command."""
    parser = subparsers.add_parser(
        "rescore",
        help="recompute evaluations, matchups and results under another rule set",
        description=(
            "Re-score every hand in the database from its stored boards (no file is read): "
            "evaluations, matchups, results and session points are replaced. With --rules "
            "every hand is scored under that rule set (\"what would my results be with scoop "
            "6?\"); without it each hand under the rules its record named. Every match is "
            "settled again from the new results, under the rule set's match cap and stake "
            "(ofc settle)."
        ),
    )
    add_database_option(parser)
    add_rules_option(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    """Re-score and print what was done."""
    from pipeline.ingest.errors import DatabaseError
    from pipeline.ingest.rescore import rescore

    if not Path(arguments.db).is_file():
        raise CommandError(f"no database at {arguments.db}")
    rules = rules_from_option(arguments.rules)
    try:
        summary = rescore(arguments.db, rules, progress=not arguments.quiet)
    except DatabaseError as error:
        raise CommandError(str(error)) from error
    print(
        f"re-scored {summary.hands:,} hands ({summary.players:,} player results) under "
        f"{summary.rules or 'the rules each record names'} in {summary.seconds:.1f} s; "
        f"{summary.disagreements:,} player results differ from what the source reported"
    )
    print(_matches_line(arguments.db))
    return 0


def _matches_line(database: str) -> str:
    """What the re-score means for the matches: they settle from the new results."""
    from pipeline.read.matches import match_settlements

    matches = match_settlements(database)
    if not matches:
        return "no hand is in a match (no match_id): nothing to settle"
    unsettled = sum(match.settlement is None for match in matches)
    capped = sum(1 for match in matches if match.cap)
    text = (f"{len(matches):,} match{'es' if len(matches) != 1 else ''} settled again from "
            f"the new results ({capped:,} under a match cap)")
    if unsettled:
        text += f"; {unsettled:,} cannot be settled (ofc settle says why)"
    return text + ": see ofc settle"
