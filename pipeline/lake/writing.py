"""Parquet files in the lake's layout: rows with ``site`` and ``month`` into their partitions.

:class:`PartitionedWriter` is how the local engine writes a table (from DuckDB's result
batches) and how a Spark task of a re-score writes its verdicts: one file per partition, named
with a prefix that no other writer uses, in the same folder names Spark's own writer gives
(:func:`pipeline.lake.tables.partition_path`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.lake.tables import PARTITIONED_TABLES, file_schema, partition_path

__all__ = ["PartitionedWriter", "write_table"]


class PartitionedWriter:
    """Writes a table's rows under ``folder`` (the table's folder in a staging area): by site
    and month for a partitioned table (the rows carry ``site`` and ``month``), else into one
    file. Files are named ``part-<prefix>-<n>.parquet``."""

    def __init__(self, folder: str | os.PathLike[str], table: str, prefix: str) -> None:
        self.folder = Path(folder)
        self.table = table
        self.prefix = prefix
        self.schema = file_schema(table)
        self.partitioned = table in PARTITIONED_TABLES
        self.writers: dict[tuple[str, str], pq.ParquetWriter] = {}
        self.rows = 0

    def _writer(self, site: str, month: str) -> pq.ParquetWriter:
        key = (site, month)
        writer = self.writers.get(key)
        if writer is None:
            folder = self.folder / partition_path(site, month) if self.partitioned else self.folder
            folder.mkdir(parents=True, exist_ok=True)
            name = f"part-{self.prefix}-{len(self.writers):05d}.parquet"
            writer = pq.ParquetWriter(folder / name, self.schema)
            self.writers[key] = writer
        return writer

    def write(self, rows: pa.Table | pa.RecordBatch) -> None:
        """Append rows (the file columns, and site and month for a partitioned table)."""
        if not rows.num_rows:
            return
        table = rows if isinstance(rows, pa.Table) else pa.Table.from_batches([rows])
        self.rows += table.num_rows
        if not self.partitioned:
            self._writer("", "").write_table(table.select(self.schema.names).cast(self.schema))
            return
        groups = table.group_by(["site", "month"], use_threads=False).aggregate([])
        for site, month in zip(groups.column("site").to_pylist(),
                               groups.column("month").to_pylist(), strict=True):
            part = table if groups.num_rows == 1 else table.filter(pc.and_(
                pc.equal(table.column("site"), site), pc.equal(table.column("month"), month)))
            self._writer(site, month).write_table(
                part.select(self.schema.names).cast(self.schema))

    def close(self) -> None:
        """Finish every file."""
        for writer in self.writers.values():
            writer.close()
        self.writers.clear()


def write_table(folder: str | os.PathLike[str], table: str, prefix: str,
                batches: Iterable[pa.Table | pa.RecordBatch]) -> int:
    """Write batches of rows with a :class:`PartitionedWriter`; returns the rows written."""
    writer = PartitionedWriter(folder, table, prefix)
    try:
        for batch in batches:
            writer.write(batch)
    finally:
        writer.close()
    return writer.rows
