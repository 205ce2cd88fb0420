"""Helpers shared by the commands that use the database: ``--db``, opening, printing rows.

Light on purpose (command modules import it to register ``--db``): DuckDB is imported by the
functions that open the database."""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.cli import CommandError
from pipeline.cli.common import spreadsheet_cell, terminal_cell

if TYPE_CHECKING:
    import duckdb

DEFAULT_DATABASE = "ofc.duckdb"
"""The database of commands given no ``--db``: :data:`pipeline.store.DEFAULT_DATABASE`, written
out here so registering ``--db`` does not import DuckDB (a test checks the two agree)."""

DB_HELP = f"the DuckDB database file (default: {DEFAULT_DATABASE} in the current folder)"


def add_database_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--db FILE`` to a command."""
    parser.add_argument("--db", metavar="FILE", default=DEFAULT_DATABASE, help=DB_HELP)


def add_lake_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--lake DIR``: read a Parquet lake (``ofc lake build``) instead of ``--db``."""
    parser.add_argument("--lake", metavar="DIR",
                        help="read the Parquet lake in DIR (ofc lake build) instead of --db")


def open_lake_for_reading(path: str) -> duckdb.DuckDBPyConnection:
    """A connection reading the lake at ``path`` in place, or a CommandError."""
    import duckdb

    from pipeline.read.lake import LakeUnreadable, ParquetLake, is_lake

    if not is_lake(path):
        raise CommandError(f"no lake at {path} (build one with: ofc lake build PATH --lake {path})")
    try:
        return ParquetLake(Path(path)).open()
    except (LakeUnreadable, duckdb.Error, OSError) as error:
        raise CommandError(f"cannot read the lake {path}: {error}") from error


def upgrade_schema(database: str | Path, program: str = "ofc", wait_seconds: float = 2.0) -> bool:
    """Bring an existing database's schema up to date (the columns added since it was written,
    e.g. ``hands.match_id``) before a reader opens it read-only. Returns False, with a note on
    stderr, when the file cannot be written (read-only place, another writer holding it past
    ``wait_seconds``, not a database): the reader then reads what is there."""
    import duckdb

    from pipeline.store import connect

    try:
        connect(database, wait_seconds=wait_seconds).close()
    except (OSError, duckdb.Error) as error:
        print(f"{program}: could not bring {database}'s tables up to date ({error}); "
              "questions that need newer columns may say so", file=sys.stderr, flush=True)
        return False
    return True


def open_for_reading(path: str, lake: str | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection (on the lake ``lake`` when given), or a CommandError when there is
    no usable database. A database written by an older version gets its newer columns first
    (:func:`upgrade_schema`)."""
    if lake is not None:
        return open_lake_for_reading(lake)
    import duckdb

    from pipeline.store import connect, schema_is_current

    if not Path(path).is_file():
        raise CommandError(f"no database at {path} (create one with: ofc ingest PATH --db {path})")
    try:
        connection = connect(path, read_only=True)
        if schema_is_current(connection):
            return connection
        connection.close()  # written by an older version: its newer columns first
        upgrade_schema(path, wait_seconds=0.5)
        return connect(path, read_only=True)
    except (duckdb.Error, OSError) as error:
        raise CommandError(f"cannot open database {path}: {error}") from error


def add_output_format_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--format table|json|csv`` (the formats :func:`print_rows` writes)."""
    parser.add_argument(
        "--format", choices=("table", "json", "csv"), default="table",
        help="output format (default: %(default)s)",
    )


def read_rows(path: str, question: Callable[[duckdb.DuckDBPyConnection], Any],
              lake: str | None = None) -> Any:
    """Answer one question on a short-lived read-only connection (closed even on error), on
    the lake ``lake`` when given."""
    connection = open_for_reading(path, lake)
    try:
        return question(connection)
    finally:
        connection.close()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _json_text(rows: list[dict[str, Any]]) -> str:
    """Rows as JSON whose text holds no character a terminal acts on: JSON escapes C0 controls
    itself; DEL, C1 controls and bidirectional overrides are written as ``\\uXXXX`` too (the
    same values once parsed)."""
    text = json.dumps(rows, ensure_ascii=False, default=str, indent=1)
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def print_rows(
    rows: list[dict[str, Any]], columns: tuple[str, ...], output_format: str, title: str = ""
) -> None:
    """Print rows as a rich table, JSON (one array) or CSV on stdout.

    Values are untrusted (player names, ids): the table strips control characters and never reads
    markup; CSV neutralises cells a spreadsheet would run as formulas; JSON escapes controls."""
    if output_format == "json":
        sys.stdout.write(_json_text(rows) + "\n")
        return
    if output_format == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([spreadsheet_cell(_cell(row[column])) if isinstance(row[column], str)
                             else _cell(row[column]) for column in columns])
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title or None)
    for column in columns:
        table.add_column(column.replace("_", " "), overflow="fold")
    for row in rows:
        table.add_row(*(terminal_cell(_cell(row[column])) for column in columns))
    console = Console(width=None if sys.stdout.isatty() else 200)
    console.print(table)
