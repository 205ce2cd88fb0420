"""A bulk load counts its hands in the aggregates once, at the end of each file: the database
is the one a batch-by-batch ingest gives, table by table; while it runs (and if it dies midway)
no reader trusts the aggregates, and the next write builds them; which files are bulk loads."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipeline import store
from pipeline.ingest import aggregates, writer
from pipeline.ingest.driver import BULK_BYTES_PER_HAND, bulk_load, ingest_paths
from pipeline.ingest.errors import DatabaseError
from pipeline.read.totals import aggregates_ready
from pipeline.store.aggregates import AGGREGATES_META_KEY
from tests.simulated_mix import BATCH, Mixed, mixed, rebuilt_aggregates

__all__ = ["mixed"]

COMPARED_TABLES = (
    "hands", "seats", "boards", "placements", "discards", "evaluations", "matchups", "results",
    "sessions", "session_totals", "board_totals", "pair_totals", "board_totals_all",
    "pair_totals_all", "fantasyland_draws", "play_order", "hand_summaries", "rejects",
)
"""Every table a file's ingest writes, but ``ingested_files`` (its times differ)."""


def _tables(database: Path) -> dict[str, list[tuple]]:
    connection = duckdb.connect(str(database), read_only=True)
    try:
        tables = {table: connection.sql(f"SELECT * EXCLUDE (rejected_at) FROM {table} ORDER BY ALL"
                                        if table == "rejects" else
                                        f"SELECT * FROM {table} ORDER BY ALL").fetchall()
                  for table in COMPARED_TABLES}
        tables["meta"] = connection.sql(
            "SELECT * FROM meta WHERE key <> 'schema_version' ORDER BY ALL").fetchall()
    finally:
        connection.close()
    return tables


def test_a_bulk_load_equals_batch_by_batch(mixed: Mixed, tmp_path: Path) -> None:
    """The mixed files (three games, three rule sets) ingested as bulk loads give the database
    the batch-by-batch ingest gave, table by table."""
    database = tmp_path / "bulk.duckdb"
    summary = ingest_paths(mixed.files, database, batch_size=BATCH, bulk=True)
    assert summary.stored == 550 and summary.rejected == 0, summary
    bulk, batch_by_batch = _tables(database), _tables(mixed.database)
    for table, rows in batch_by_batch.items():
        assert bulk[table] == rows, table
    assert len(bulk["board_totals"]) > 50 and len(bulk["play_order"]) > 1000
    kept, again = rebuilt_aggregates(database)
    assert kept == again


def test_a_bulk_load_into_a_new_database_builds_the_aggregates_once(
        mixed: Mixed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Into a new database the first batch is deferred too (aggregates of no hand are
    current): the aggregates are built once, at the end, over every hand of the file, not also
    from the first batch alone; the database is the batch-by-batch one."""
    built: list[int] = []
    real = aggregates.rebuild

    def counted(connection, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        built.append(connection.execute("SELECT count(*) FROM hands").fetchall()[0][0])
        return real(connection, *args, **kwargs)

    monkeypatch.setattr(aggregates, "rebuild", counted)
    database = tmp_path / "new.duckdb"
    summary = ingest_paths(mixed.files, database, batch_size=BATCH, bulk=True)
    assert summary.stored == 550
    # once per file (each a bulk load), at its end: every hand stored so far
    assert len(built) == len(mixed.files) and built[-1] == 550, built
    assert built[0] > BATCH, built  # the first file is more than its first batch
    monkeypatch.undo()
    bulk, batch_by_batch = _tables(database), _tables(mixed.database)
    for table, rows in batch_by_batch.items():
        assert bulk[table] == rows, table


def test_a_bulk_load_into_a_database_with_hands(mixed: Mixed, tmp_path: Path) -> None:
    """A bulk load adds to what is stored: the first file batch by batch, then the other two as
    bulk loads, equal the batch-by-batch database."""
    database = tmp_path / "mixed-ways.duckdb"
    ingest_paths(mixed.files[:1], database, batch_size=BATCH, bulk=False)
    ingest_paths(mixed.files[1:], database, batch_size=BATCH, bulk=True)
    bulk, batch_by_batch = _tables(database), _tables(mixed.database)
    for table, rows in batch_by_batch.items():
        assert bulk[table] == rows, table


def test_no_reader_trusts_them_midway_and_the_next_write_builds_them(
        mixed: Mixed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bulk load that dies after some batches leaves its hands stored and the aggregates
    marked out of date (readers do not use them); the next ingest builds them."""
    database = tmp_path / "died.duckdb"
    ingest_paths(mixed.files[1:2], database, batch_size=BATCH)  # aggregates current
    calls = {"batches": 0}
    real = writer.defer_hands

    def dying(connection, frames, skip, deferral):  # noqa: ANN001, ANN202
        calls["batches"] += 1
        if calls["batches"] == 3:
            raise duckdb.IOException("disk full")
        real(connection, frames, skip, deferral)

    monkeypatch.setattr(writer, "defer_hands", dying)
    with pytest.raises((DatabaseError, duckdb.Error)):
        ingest_paths(mixed.files[:1], database, batch_size=BATCH, bulk=True)
    monkeypatch.undo()
    connection = duckdb.connect(str(database), read_only=True)
    try:
        hands = connection.sql("SELECT count(*) FROM hands").fetchall()[0][0]
        assert hands == 160 + 2 * BATCH  # the file before, and two whole batches of this one
        assert store.get_meta(connection, AGGREGATES_META_KEY) is None
        assert not aggregates_ready(connection)
    finally:
        connection.close()
    ingest_paths(mixed.files, database, batch_size=BATCH, bulk=False)
    again, batch_by_batch = _tables(database), _tables(mixed.database)
    for table in ("board_totals", "pair_totals", "play_order", "hand_summaries",
                  "fantasyland_draws", "sessions"):
        assert again[table] == batch_by_batch[table], table
    connection = duckdb.connect(str(database), read_only=True)
    try:
        assert aggregates_ready(connection)
    finally:
        connection.close()


def test_which_files_are_bulk_loads() -> None:
    """A file is a bulk load when it has BULK_BYTES_PER_HAND bytes or more per stored hand: any
    file into an empty database; a day's file (1,000 hands, 1.6 MB) into a database of a
    million hands is not; a million hands (1.6 GB) into a database of 100,000 is."""
    assert bulk_load(100, 0)
    assert not bulk_load(1_600_000, 1_000_000)
    assert bulk_load(1_600_000_000, 100_000)
    assert bulk_load(BULK_BYTES_PER_HAND * 500, 500)
    assert not bulk_load(BULK_BYTES_PER_HAND * 500 - 1, 500)
