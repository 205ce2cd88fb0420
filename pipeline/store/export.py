"""Export the database as Parquet, partitioned by site and month, for any engine to read.

``DIR/<table>/site=<site>/month=<YYYY-MM>/*.parquet`` (Hive-style partitions) for every table
that belongs to hands; the month is the hand's start (``unknown`` when the record had no time).
Tables not tied to hands (``rejects``, ``ingested_files``) are written as ``DIR/<table>.parquet``.

An export replaces only what an export wrote: each table folder carries a marker file
(:data:`EXPORT_MARKER`) and each plain Parquet file the key :data:`EXPORT_KEY` in its metadata.
Anything else already at one of those names (a user's own ``results/`` folder, a file called
``hands``) stops the export before anything is written, naming it. Each table is written beside
its final place and moved there once complete, so an interrupted export never leaves a half
table under the real name.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
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

EXPORT_MARKER = ".ofc-export"
"""The file inside every table folder an export wrote (hidden: Parquet readers skip it)."""

EXPORT_KEY = "ofc_export"
"""The Parquet metadata key of every plain table file an export wrote."""

_PARTIAL = ".partial"


class ExportError(Exception):
    """The export cannot be written where asked (a clear reason, nothing was changed)."""


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def is_export_folder(path: Path) -> bool:
    """True when ``path`` is a table folder written by an export (it carries the marker)."""
    return path.is_dir() and not path.is_symlink() and (path / EXPORT_MARKER).is_file()


def is_export_file(path: Path) -> bool:
    """True when ``path`` is a plain table file written by an export (its metadata says so)."""
    if not path.is_file() or path.is_symlink():
        return False
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_metadata(path).metadata or {}
    except Exception:  # noqa: BLE001 - not a Parquet file at all
        return False
    return EXPORT_KEY.encode() in metadata


def _check_targets(root: Path) -> None:
    """Raise ExportError naming the first target an export did not write (nothing written yet)."""
    if root.exists() and not root.is_dir():
        raise ExportError(f"{root} exists and is not a folder")
    # (the hidden ".<table>.partial" names are the export's own work in progress)
    for table in PARTITIONED_QUERIES:
        target = root / table
        if (target.exists() or target.is_symlink()) and not is_export_folder(target):
            raise ExportError(
                f"{target} exists and was not written by ofc export (no {EXPORT_MARKER} "
                "marker in it); it is left alone: move it, or export into another folder"
            )
    for table in PLAIN_TABLES:
        target = root / f"{table}.parquet"
        if (target.exists() or target.is_symlink()) and not is_export_file(target):
            raise ExportError(
                f"{target} exists and was not written by ofc export; it is left alone: "
                "move it, or export into another folder"
            )


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def export_parquet(
    connection: duckdb.DuckDBPyConnection, directory: str | os.PathLike[str]
) -> dict[str, int]:
    """Write every table under ``directory``; returns rows written per table.

    Raises :class:`ExportError` (before writing anything) when ``directory`` is a file, cannot be
    created or written, or holds something at a table's name that no export wrote."""
    root = Path(directory)
    _check_targets(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ExportError(f"cannot create {root}: {error.strerror or error}") from error
    if not os.access(root, os.W_OK | os.X_OK):
        raise ExportError(f"cannot write into {root}: permission denied")
    stamp = json.dumps({"written_by": "ofc export", "at": datetime.now(UTC).isoformat()})
    written: dict[str, int] = {}
    for table, query in PARTITIONED_QUERIES.items():
        target = root / table
        partial = root / f".{table}{_PARTIAL}"
        _remove(partial)
        count = connection.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        written[table] = int(count)
        if count:
            connection.execute(
                f"COPY ({query}) TO {_literal(partial)} "
                "(FORMAT parquet, PARTITION_BY (site, month))"
            )
        else:
            partial.mkdir()
        (partial / EXPORT_MARKER).write_text(stamp + "\n", encoding="utf-8")
        _remove(target)
        partial.rename(target)
    for table in PLAIN_TABLES:
        target = root / f"{table}.parquet"
        partial = root / f".{table}.parquet{_PARTIAL}"
        _remove(partial)
        count = connection.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        written[table] = int(count)
        connection.execute(
            f"COPY {table} TO {_literal(partial)} "
            f"(FORMAT parquet, KV_METADATA {{{EXPORT_KEY}: {_literal(Path(table))}}})"
        )
        os.replace(partial, target)
    return written
