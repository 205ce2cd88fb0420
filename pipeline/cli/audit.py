"""``ofc audit``: hands whose reported points disagree with the re-score, with the reason."""

from __future__ import annotations

import argparse

from pipeline.cli.database import (
    add_database_option,
    add_lake_option,
    add_output_format_option,
    print_rows,
    read_rows,
)


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
    add_lake_option(parser)
    add_output_format_option(parser)
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    """Print the disagreeing results (exit 0 either way)."""
    from pipeline.read.audit import audit_rows

    audit = read_rows(arguments.db, audit_rows, arguments.lake)
    rows = audit.to_dicts()
    if not rows and arguments.format == "table":
        print("no disagreements: every reported result matches the re-score")
        return 0
    hands = len({(row["site"], row["hand_id"]) for row in rows})
    print_rows(rows, tuple(audit.columns), arguments.format,
               title=f"{hands} hand(s) disagree with the re-score")
    return 0
