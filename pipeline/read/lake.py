"""A Parquet lake as a source of the read model: DuckDB reads the lake's files directly.

A lake (built by ``ofc lake build``, see docs/lake.md) is a folder with one sub-folder of
Parquet files per table and a manifest, ``_lake.json``, naming the live files of every table.
:class:`ParquetLake` opens an in-memory DuckDB connection in which every table of
schemas/database.md is visible by name: a view over ``read_parquet`` of the manifest's files
(Hive partitions decoded, every column cast to the database's type) for the tables the lake
has, an empty table for the others (decision grades), and ``meta`` holding the lake's facts. No
row is copied: every question reads the Parquet files. Pages, the report and the read commands
use it as they use a database file (:mod:`pipeline.read.source`).

It also answers the one question the lake pre-aggregates, :func:`player_summary_from_totals`:
``ofc players`` from the ``player_totals`` table, without reading a single hand.
"""

from __future__ import annotations

import json
import os
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipeline import store
from pipeline.read.source import Database, frame
from pipeline.store.aggregates import PLAYER_TOTAL_COLUMNS

__all__ = [
    "FORMAT",
    "MANIFEST_NAME",
    "LakeUnreadable",
    "ParquetLake",
    "is_lake",
    "player_summary_from_totals",
    "read_manifest",
]

MANIFEST_NAME = "_lake.json"
"""The manifest's file name, in the lake folder."""

FORMAT = "ofc-lake/1"
"""The manifest's ``format``: what wrote it and its version."""


class LakeUnreadable(RuntimeError):
    """The folder is not a lake, or its manifest cannot be read."""


def is_lake(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a lake folder (it holds a manifest)."""
    return (Path(path) / MANIFEST_NAME).is_file()


def read_manifest(root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest of the lake at ``root`` as parsed JSON (None when there is none).

    Raises :class:`LakeUnreadable` when it cannot be read or is not a lake manifest."""
    path = Path(root) / MANIFEST_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise LakeUnreadable(f"cannot read {path}: {error.strerror or error}") from error
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format') if isinstance(data, dict) else data!r}"
                             f", expected {FORMAT!r}")
        if not isinstance(data.get("tables"), dict):
            raise ValueError("no tables")
    except ValueError as error:
        raise LakeUnreadable(f"{path} is not a lake manifest: {error}") from error
    return data


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True, slots=True)
class ParquetLake:
    """A lake folder written by ``ofc lake build``, read in place."""

    path: Path

    @property
    def label(self) -> str:
        """The lake folder."""
        return str(self.path)

    def exists(self) -> bool:
        """Whether the folder holds a lake."""
        return is_lake(self.path)

    def state(self) -> Hashable:
        """The manifest's modification time and size: every commit replaces it."""
        try:
            stat = (self.path / MANIFEST_NAME).stat()
        except OSError:
            return (0, 0)
        return (stat.st_mtime_ns, stat.st_size)

    def open(self) -> duckdb.DuckDBPyConnection:
        """An in-memory connection with every table a view over the lake's Parquet files."""
        manifest = read_manifest(self.path)
        if manifest is None:
            raise LakeUnreadable(f"no lake at {self.path} (no {MANIFEST_NAME})")
        connection = duckdb.connect()
        try:
            connection.execute("SET enable_progress_bar = false")
            store.ensure_schema(connection)
            partitioned = set(manifest.get("partitioned", ()))
            types = {}
            for table, column, column_type in connection.execute(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
            ).fetchall():
                types.setdefault(table, []).append((column, column_type))
            types["player_totals"] = [("player", "VARCHAR"),
                                      *((name, "BIGINT") for name in PLAYER_TOTAL_COLUMNS)]
            connection.execute(
                "CREATE TABLE player_totals ("
                + ", ".join(f'"{name}" {kind}' for name, kind in types["player_totals"]) + ")")
            for table, files in manifest["tables"].items():
                if table not in types or not files:
                    continue
                listed = ", ".join(_literal(str(self.path / relative)) for relative in files)
                options = (", hive_partitioning = true, "
                           "hive_types = {'site': VARCHAR, 'month': VARCHAR}"
                           if table in partitioned else ", hive_partitioning = false")
                # a column the lake does not keep (rejects' resolution, a column added to the
                # database later) reads as NULL, as it does in a database made before it
                stored = {row[0] for row in connection.execute(
                    f"DESCRIBE SELECT * FROM read_parquet([{listed}]{options})").fetchall()}
                selected = ", ".join(
                    f'CAST({_quoted(name) if name in stored else "NULL"} AS {kind}) AS "{name}"'
                    for name, kind in types[table])
                connection.execute(f'DROP TABLE "{table}"')
                connection.execute(f'CREATE VIEW "{table}" AS SELECT {selected} '
                                   f"FROM read_parquet([{listed}]{options})")
            for key, value in (manifest.get("meta") or {}).items():
                store.set_meta(connection, str(key), str(value))
        except BaseException:
            connection.close()
            raise
        return connection


def player_summary_from_totals(db: Database) -> pl.DataFrame:
    """:func:`pipeline.read.players.player_summary` (the ``ofc players`` table) from the lake's
    ``player_totals``: the same columns and figures, computed from the per-player sums."""
    return frame(db, """
        SELECT player, hands, points, points / hands AS points_per_hand, fouls,
               fouls / hands AS foul_rate, royalties,
               fl_next - fl_stays AS fantasyland_entries, fl_hands AS fantasyland_hands, scoops
        FROM player_totals WHERE hands > 0
        ORDER BY points DESC, player
    """)


def _quoted(name: str) -> str:
    """A column name as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'
