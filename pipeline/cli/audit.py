"""``ofc audit``: hands whose reported points disagree with the re-score, with the reason."""

from __future__ import annotations

import argparse

from pipeline.cli.database import add_database_option, open_for_reading, print_rows
from pipeline.stats import AUDIT_COLUMNS, audit_rows


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``audit`` command."""
    parser = subparsers.add_parser(
        "audit",
        help="list hands whose reported points disagree with the re-score, and why",
        description=(
            "List every player result where the source disagrees with the re-score: the "
            "reported points differ, or the source's own verdict differs on a foul, a royalty "
            "or Fantasyland. Each row says why."
        ),
    )
    add_database_option(parser)
    parser.add_argument(
        "--format", choices=("table", "json", "csv"), default="table",
        help="output format (default: %(default)s)",
    )
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    """Print the disagreeing results (exit 0 either way)."""
    connection = open_for_reading(arguments.db)
    try:
        rows = audit_rows(connection)
    finally:
        connection.close()
    if not rows and arguments.format == "table":
        print("no disagreements: every reported result matches the re-score")
        return 0
    hands = len({(row["site"], row["hand_id"]) for row in rows})
    print_rows(rows, AUDIT_COLUMNS, arguments.format,
               title=f"{hands} hand(s) disagree with the re-score")
    return 0
