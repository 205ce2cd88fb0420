"""Export the database as Parquet, partitioned by site and month, for any engine to read.

``DIR/<table>/site=<site>/month=<YYYY-MM>/*.parquet`` (Hive-style partitions) for every table
that belongs to hands; the month is the hand's start (``unknown`` when the record had no time).
Tables not tied to hands (``rejects``, ``ingested_files``) are written as ``DIR/<table>.parquet``.
A table's earlier export in DIR is replaced.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb

MONTH = "coalesce(strftime({column}, '%Y-%m'), 'unknown')"

PARTITIONED_QUERIES: dict[str, str] = {
    "hands": f"SELECT *, {MONTH.format(column='started_at')} AS month FROM hands",
    "sessions": (
        f"SELECT *, {MONTH.format(column='started_at')} AS month FROM sessions"
    ),
    **{
        table: (
            f"SELECT t.*, h.site, {MONTH.format(column='h.started_at')} AS month "
            f"FROM {table} t JOIN hands h ON h.hand_key = t.hand_key"
        )
        for table in (
            "seats", "placements", "discards", "boards", "evaluations", "matchups", "results",
        )
    },
}
"""Query per hand table, each with the ``site`` and ``month`` partition columns."""

PLAIN_TABLES: tuple[str, ...] = ("rejects", "ingested_files")


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def export_parquet(
    connection: duckdb.DuckDBPyConnection, directory: str | os.PathLike[str]
) -> dict[str, int]:
    """Write every table under ``directory``; returns rows written per table."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    for table, query in PARTITIONED_QUERIES.items():
        target = root / table
        if target.exists():
            shutil.rmtree(target)
        count = connection.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        written[table] = int(count)
        if count == 0:
            continue
        connection.execute(
            f"COPY ({query}) TO {_literal(target)} "
            "(FORMAT parquet, PARTITION_BY (site, month))"
        )
    for table in PLAIN_TABLES:
        target = root / f"{table}.parquet"
        target.unlink(missing_ok=True)
        count = connection.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        written[table] = int(count)
        connection.execute(f"COPY {table} TO {_literal(target)} (FORMAT parquet)")
    return written
