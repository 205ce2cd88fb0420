"""The Parquet lake: the pipeline past one machine, on Apache Spark or in-process.

``ofc lake build`` reads hand-history files exactly as ``ofc ingest`` does (the same readers,
validation, batch rules core and identity), and writes a lake of Parquet files instead of a
DuckDB database: one folder per table with the database's names and columns, Hive-partitioned
by site and month (docs/lake.md). ``ofc lake rescore`` re-scores its stored boards. The read
model reads a lake in place (:class:`pipeline.read.lake.ParquetLake`).

Modules:

* :mod:`~pipeline.lake.tables` — the tables, their columns and partitions;
* :mod:`~pipeline.lake.storage` — the lake folder: manifest, lock, staging, atomic commit;
* :mod:`~pipeline.lake.plan` — files scanned (hash, format, split points) and cut into units;
* :mod:`~pipeline.lake.units` — one unit through ingest's batch core (both engines run it);
* :mod:`~pipeline.lake.queries` — the SQL of a build and a re-score, for DuckDB and Spark;
* :mod:`~pipeline.lake.engine` — the engine interface and the local engine (DuckDB);
* :mod:`~pipeline.lake.spark` — the Spark engine (PySpark, the optional ``spark`` extra);
* :mod:`~pipeline.lake.writing` — Parquet files in the lake's layout;
* :mod:`~pipeline.lake.rescoring` — stored boards scored in chunks;
* :mod:`~pipeline.lake.build`, :mod:`~pipeline.lake.rescore` — the two commands' work;
* :mod:`~pipeline.lake.progress` — the terminal display.

Layer: above :mod:`pipeline.ingest`, :mod:`pipeline.store` and :mod:`pipeline.read` (it reuses
ingest's batch core and the read model's lake reader), below :mod:`pipeline.cli`. PySpark is
imported only by :mod:`~pipeline.lake.spark`, and only when the Spark engine is used.
"""
