"""The engines: what runs the units and the SQL of a build or re-score.

An :class:`Engine` runs :func:`pipeline.lake.units.prepare_unit` over work units, makes Parquet
files queryable as named relations, runs the statements of :mod:`pipeline.lake.queries` and
writes their results in the lake's layout. Two implement it:

* :class:`LocalEngine` (``--engine local``): the units one after the other in this process,
  the SQL in an in-memory DuckDB reading the Parquet files directly. The reference, and the
  engine for small lakes;
* :class:`pipeline.lake.spark.SparkEngine` (``--engine spark``): the units as Spark partitions
  in ``mapInArrow``, the SQL in Spark SQL.

The build (:mod:`pipeline.lake.build`) and the re-score (:mod:`pipeline.lake.rescore`) are
written once against this interface, so the engines differ only in where the work runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.lake.plan import FileScan, WorkUnit, scan_file
from pipeline.lake.queries import DUCKDB, Dialect
from pipeline.lake.rescoring import BOARD_COLUMNS, RescoreCounts, scored_chunks
from pipeline.lake.tables import PARTITION_COLUMNS, PARTITIONED_TABLES, file_schema
from pipeline.lake.units import prepare_unit
from pipeline.lake.writing import PartitionedWriter
from pipeline.records.rules_file import RulesResolver

__all__ = ["EVENTS_FOLDER", "Engine", "LocalEngine", "relation_schema", "sql_text"]

EVENTS_FOLDER = "events"
"""Staging subfolder of the units' events."""

FILE_COLUMN = "_file"


def relation_schema(table: str, partitioned: bool, with_file: bool) -> pa.Schema:
    """The columns of a lake table read as a relation: its files' columns, then site and month
    (partitioned), then ``_file`` (the file each row is in)."""
    fields = list(file_schema(table))
    if partitioned:
        fields += [pa.field(name, pa.string()) for name in PARTITION_COLUMNS]
    if with_file:
        fields.append(pa.field(FILE_COLUMN, pa.string()))
    return pa.schema(fields)


class Engine(Protocol):
    """What the build and the re-score need from an engine."""

    name: str
    dialect: Dialect

    def begin(self, staging: Path) -> None:
        """A commit starts: ``staging`` is its folder (intermediate results may go there)."""
        ...

    def scan(self, paths: Sequence[str], forced_format: str | None,
             split_bytes: int) -> list[FileScan]:
        """:func:`~pipeline.lake.plan.scan_file` every file, in order."""
        ...

    def prepare(self, units: Sequence[WorkUnit], resolver: RulesResolver, staging: Path,
                batch_size: int, on_records: Callable[[int], None],
                whole_lake: bool = False) -> None:
        """Run every unit; events under ``staging/events``, frames under ``staging/frames``.
        ``whole_lake``: the rest of the commit reads every stored seat (the session gap
        changed), however few records the units read."""
        ...

    def register_lake(self, name: str, table: str, files: Sequence[Path], base: Path,
                      with_file: bool = False) -> None:
        """The lake files of ``table`` (partition columns from their folders) as ``name``."""
        ...

    def register_folder(self, name: str, folder: Path, schema: pa.Schema) -> None:
        """Every Parquet file in ``folder`` as ``name`` (empty, with ``schema``, when none)."""
        ...

    def register_arrow(self, name: str, data: pa.Table) -> None:
        """A small Arrow table from this process as ``name``."""
        ...

    def view(self, name: str, sql: str, reused: bool = False) -> None:
        """``sql`` as the relation ``name`` (computed where it is used; ``reused``: used several
        times in the commit, so an engine may keep its rows once computed)."""
        ...

    def materialise(self, name: str, sql: str) -> None:
        """Compute ``sql`` once and keep its rows as ``name``."""
        ...

    def query(self, sql: str) -> pa.Table:
        """The (small) result of ``sql``, here."""
        ...

    def write(self, sql: str, table: str, folder: Path, prefix: str) -> None:
        """Write the result of ``sql`` (``table``'s file columns, then site and month when it is
        partitioned) as ``table``'s Parquet files under ``folder``."""
        ...

    def write_new_rows(self, writes: Mapping[str, str], totals: str, relations: Sequence[str],
                       staging: Path, prefix: str) -> pa.Table:
        """Write the commit's new rows of the hand tables (``writes``: table → SQL over the
        ``frames_<table>`` and the ``relations`` named, in the order they depend on each other;
        every statement keeps a hand's rows together) under ``staging/<table>``, and return the
        per-player sums of ``totals`` (one or more rows per player: parts that add up)."""
        ...

    def file_path(self, value: str) -> Path:
        """A ``_file`` value as a path."""
        ...

    def rescore(self, boards_sql: str, resolver: RulesResolver, staging: Path, prefix: str,
                on_records: Callable[[int], None]) -> RescoreCounts:
        """Score the boards of ``boards_sql`` (:data:`~pipeline.lake.rescoring.BOARD_COLUMNS`)
        and write the verdict tables under ``staging/<table>``."""
        ...

    def close(self) -> None:
        """Let go of what the engine holds."""
        ...


def sql_text(text: str) -> str:
    """``text`` as an SQL string literal (quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


class LocalEngine:
    """Units in this process, SQL in an in-memory DuckDB over the Parquet files."""

    name = "local"
    dialect = DUCKDB

    def __init__(self, memory_limit: str | None = None) -> None:
        self.connection = duckdb.connect()
        self.connection.execute("SET enable_progress_bar = false")
        if memory_limit:
            self.connection.execute(f"SET memory_limit = {sql_text(memory_limit)}")
        self._arrow: dict[str, pa.Table] = {}

    def begin(self, staging: Path) -> None:
        """Nothing to prepare: intermediate results are DuckDB temporary tables."""

    def scan(self, paths: Sequence[str], forced_format: str | None,
             split_bytes: int) -> list[FileScan]:
        """One file after the other."""
        return [scan_file(order, path, forced_format, split_bytes)
                for order, path in enumerate(paths)]

    def prepare(self, units: Sequence[WorkUnit], resolver: RulesResolver, staging: Path,
                batch_size: int, on_records: Callable[[int], None],
                whole_lake: bool = False) -> None:
        """Each unit in turn; its events written as one Parquet file (everything runs here,
        ``whole_lake`` or not)."""
        folder = staging / EVENTS_FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        for unit in units:
            events = prepare_unit(unit, resolver, staging, batch_size)
            pq.write_table(events, folder / f"unit-{unit.unit:06d}.parquet")
            records = events.column("records").to_pylist()
            on_records(sum(value for value in records if value))

    def _empty(self, name: str, schema: pa.Schema) -> None:
        self.register_arrow(name, schema.empty_table())

    def register_lake(self, name: str, table: str, files: Sequence[Path], base: Path,
                      with_file: bool = False) -> None:
        """The files through ``read_parquet`` (Hive partitions decoded, as text)."""
        partitioned = table in PARTITIONED_TABLES
        if not files:
            self._empty(name, relation_schema(table, partitioned, with_file))
            return
        listed = ", ".join(sql_text(str(path)) for path in files)
        options = ", hive_partitioning = true, hive_types = {'site': VARCHAR, 'month': VARCHAR}" \
            if partitioned else ", hive_partitioning = false"
        names = [*file_schema(table).names, *(PARTITION_COLUMNS if partitioned else ())]
        selected = ", ".join(f'"{column}"' for column in names)
        if with_file:
            options += ", filename = true"
            selected += f', filename AS "{FILE_COLUMN}"'
        self.connection.execute(
            f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT {selected} "
            f"FROM read_parquet([{listed}]{options})"
        )

    def register_folder(self, name: str, folder: Path, schema: pa.Schema) -> None:
        """``folder/*.parquet`` through ``read_parquet``."""
        if not folder.is_dir() or not any(folder.glob("*.parquet")):
            self._empty(name, schema)
            return
        self.connection.execute(
            f"CREATE OR REPLACE TEMP VIEW {name} AS "
            f"SELECT * FROM read_parquet({sql_text(str(folder / '*.parquet'))})"
        )

    def register_arrow(self, name: str, data: pa.Table) -> None:
        """Registered with DuckDB (kept alive here)."""
        self.connection.execute(f"DROP VIEW IF EXISTS {name}")
        self._arrow[name] = data
        self.connection.register(name, data)

    def view(self, name: str, sql: str, reused: bool = False) -> None:
        """A temporary view (DuckDB reads the staged Parquet again where it is used)."""
        self.connection.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {sql}")

    def materialise(self, name: str, sql: str) -> None:
        """A temporary table."""
        self.connection.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}")

    def query(self, sql: str) -> pa.Table:
        """As Arrow."""
        return self.connection.sql(sql).to_arrow_table()

    def write(self, sql: str, table: str, folder: Path, prefix: str) -> None:
        """Streamed from DuckDB in batches into a :class:`PartitionedWriter`."""
        writer = PartitionedWriter(folder, table, prefix)
        try:
            reader = self.connection.sql(sql).to_arrow_reader(200_000)
            for batch in reader:
                writer.write(batch)
        finally:
            writer.close()

    def write_new_rows(self, writes: Mapping[str, str], totals: str, relations: Sequence[str],
                       staging: Path, prefix: str) -> pa.Table:
        """Each table written in turn (the relations are this connection's); the sums in one
        query."""
        for table, sql in writes.items():
            self.write(sql, table, staging / table, prefix)
        return self.query(totals)

    def file_path(self, value: str) -> Path:
        """DuckDB gives the path as it was listed."""
        return Path(value)

    def rescore(self, boards_sql: str, resolver: RulesResolver, staging: Path, prefix: str,
                on_records: Callable[[int], None]) -> RescoreCounts:
        """The boards streamed in hand order, scored in chunks, written as they come."""
        counts = RescoreCounts()
        writers = {name: PartitionedWriter(staging / name, name, prefix)
                   for name in ("evaluations", "matchups", "results")}
        try:
            ordered = f"SELECT {', '.join(BOARD_COLUMNS)} FROM ({boards_sql}) ORDER BY hand_key, position"
            reader = self.connection.sql(ordered).to_arrow_reader(100_000)
            before = 0
            for tables in scored_chunks(reader, resolver, counts):
                for name, frame in tables.items():
                    writers[name].write(frame)
                on_records(counts.hands - before)
                before = counts.hands
        finally:
            for writer in writers.values():
                writer.close()
        return counts

    def close(self) -> None:
        """Close the DuckDB connection."""
        self.connection.close()


def cpu_count() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1
