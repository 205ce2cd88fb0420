"""``ofc demo``: build a demo database from the sample hands and open the dashboard on it."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.cli import CommandError
from pipeline.cli.dashboard import ServeOptions, add_server_options, serve
from pipeline.ingest.demo import (
    DATA_DIR_ENV,
    DEFAULT_SIMULATED_HANDS,
    DemoError,
    build_demo_database,
    demo_database_path,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` command."""
    parser = subparsers.add_parser(
        "demo",
        help="load sample hands into a demo database and open the dashboard on it",
        description=(
            "Ingest the sample hands (sample_data/demo-hands.jsonl.gz, or simulated ones) into "
            f"a demo database in your data folder (${DATA_DIR_ENV}, else "
            "~/.local/share/ofc-analytics) once, then serve the dashboard on it."
        ),
    )
    parser.add_argument("--db", type=Path, default=None,
                        help="demo database file (default: demo.duckdb in the data folder)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the demo database")
    parser.add_argument("--hands", type=int, default=DEFAULT_SIMULATED_HANDS,
                        help="hands to simulate when no sample file ships "
                             f"(default {DEFAULT_SIMULATED_HANDS})")
    parser.add_argument("--no-serve", action="store_true",
                        help="only build the database, do not start the dashboard")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    """Build the demo database when needed, then serve the dashboard on it."""
    database = (arguments.db or demo_database_path()).expanduser()
    if arguments.rebuild or not database.exists():
        print(f"ofc demo: building the demo database at {database} …", flush=True)
        try:
            summary = build_demo_database(database, rebuild=arguments.rebuild,
                                          hands=arguments.hands)
        except DemoError as error:
            raise CommandError(str(error)) from error
        print(f"ofc demo: {summary.stored:,} hands stored, {summary.rejected:,} quarantined")
    else:
        print(f"ofc demo: using {database} (--rebuild to start again)")
    if arguments.no_serve:
        return 0
    return serve(database, ServeOptions.from_arguments(arguments))
