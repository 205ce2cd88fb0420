"""``ofc export``: write the database as Parquet partitioned by site and month."""

from __future__ import annotations

import argparse

from pipeline.cli import CommandError
from pipeline.cli.common import describe_when_shown
from pipeline.cli.database import add_database_option, open_for_reading


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``export`` command."""
    parser = subparsers.add_parser(
        "export",
        help="write the tables as Parquet partitioned by site and month",
    )
    describe_when_shown(parser, _describe)
    parser.add_argument("--parquet", metavar="DIR", required=True, help="output folder")
    add_database_option(parser)
    parser.set_defaults(handler=run)


def _describe(parser: argparse.ArgumentParser) -> None:
    from pipeline.store.export import EXPORT_MARKER

    parser.description = (
        "Write every hand table as Parquet under DIR/<table>/site=<site>/month=<YYYY-MM>/ "
        "(month 'unknown' for hands without a start time), and rejects and ingested_files "
        "as DIR/<table>.parquet. Earlier exports of the same tables in DIR are replaced; "
        f"only what an export wrote is (a table folder carries a {EXPORT_MARKER} file): "
        "anything else at those names stops the export, untouched."
    )


def run(arguments: argparse.Namespace) -> int:
    """Export and print rows per table."""
    from pipeline.store.export import ExportError, export_parquet

    connection = open_for_reading(arguments.db)
    try:
        written = export_parquet(connection, arguments.parquet)
    except ExportError as error:
        raise CommandError(str(error), code=1) from error
    except OSError as error:
        raise CommandError(f"cannot write {arguments.parquet}: {error.strerror or error}") from error
    finally:
        connection.close()
    for table, rows in written.items():
        print(f"{table}: {rows:,} rows")
    print(f"written to {arguments.parquet}")
    return 0
