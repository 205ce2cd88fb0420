"""``ofc players``: one row per player with totals from the database."""

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
    """Add the ``players`` command."""
    parser = subparsers.add_parser(
        "players",
        help="per-player totals: hands, points, fouls, royalties, Fantasyland, scoops",
        description=(
            "One row per player: hands, re-scored points and points per hand, fouls and foul "
            "rate, royalties collected, Fantasyland entries (earned from a normal hand), "
            "Fantasyland hands played, and scoops."
        ),
    )
    add_database_option(parser)
    add_lake_option(parser)
    add_output_format_option(parser)
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    """Print the per-player table."""
    from pipeline.read.lake import player_summary_from_totals
    from pipeline.read.players import PLAYER_SUMMARY_COLUMNS, player_summary

    # A lake keeps these totals pre-aggregated per player: no hand is read.
    question = player_summary_from_totals if arguments.lake else player_summary
    summary = read_rows(arguments.db, question, arguments.lake)
    rows = summary.with_columns(
        summary["points_per_hand"].round(3), summary["foul_rate"].round(4)
    ).to_dicts()
    print_rows(rows, tuple(PLAYER_SUMMARY_COLUMNS), arguments.format, title="players")
    return 0
