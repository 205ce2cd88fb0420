"""A bulk load counts its hands in the aggregates once, at the end of each file: the database
is the one a batch-by-batch ingest gives, table by table; while it runs (and if it dies midway)
no reader trusts the aggregates, and the next write builds them; which files are bulk loads.
A run of many files also works out its sessions once, after its last file; should it die
before, the next write finds the seats still waiting."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipeline import store
from pipeline.ingest import aggregates, sessions, writer
from pipeline.ingest.driver import (
    BULK_BYTES_PER_HAND,
    BULK_HANDS_PER_FILE,
    bulk_load,
    bulk_run,
    ingest_paths,
)
from pipeline.ingest.errors import DatabaseError
from pipeline.ingest.sessions import SESSIONS_PENDING_META_KEY
from pipeline.read.totals import aggregates_ready
from pipeline.store.aggregates import AGGREGATES_META_KEY
from tests.ingest.conftest import disk_full
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


def _same_hands(split: dict[str, list[tuple]], whole: dict[str, list[tuple]]) -> None:
    """The tables of the split files' database are the whole files' one, table by table, but
    for where each hand was read (``hands.source_path`` and ``source_line``)."""
    for table, rows in whole.items():
        if table == "hands":
            assert [row[:12] + row[14:] for row in split[table]] == [
                row[:12] + row[14:] for row in rows], table
            assert {Path(row[12]).name for row in split[table]} != {
                Path(row[12]).name for row in rows}
        else:
            assert split[table] == rows, table


def _split(mixed: Mixed, folder: Path, parts: int) -> list[Path]:
    """The mixed files' lines dealt into ``parts`` small files (a folder of session files)."""
    lines = [line for path in mixed.files
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    folder.mkdir()
    files = []
    for number in range(parts):
        path = folder / f"part-{number:03d}.jsonl"
        path.write_text("".join(line + "\n" for line in lines[number::parts]), encoding="utf-8")
        files.append(path)
    return files


def _count_aggregate_work(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """Record the aggregates' work: per build from every stored hand, how many hands the
    database held; per batch counted on its own (``add_hands``), its hands."""
    built: list[int] = []
    added: list[int] = []
    real, real_add = aggregates.rebuild, writer.add_hands

    def counted(connection, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        built.append(connection.execute("SELECT count(*) FROM hands").fetchall()[0][0])
        return real(connection, *args, **kwargs)

    def adding(connection, frames, skip):  # noqa: ANN001, ANN202
        added.append(frames["hands"].num_rows)
        return real_add(connection, frames, skip)

    monkeypatch.setattr(aggregates, "rebuild", counted)
    monkeypatch.setattr(writer, "add_hands", adding)
    return built, added


def test_a_run_of_many_files_counts_them_once_after_the_last(
        mixed: Mixed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many small files in one run (the default, ``bulk`` not given): their hands are counted
    in the aggregates once, after the last file (each file used to merge its own into every
    total, about 0.13 s a file whatever its size), and the database is the batch-by-batch one,
    table by table."""
    files = _split(mixed, tmp_path / "sessions", 25)
    built, added = _count_aggregate_work(monkeypatch)
    database = tmp_path / "run.duckdb"
    summary = ingest_paths(files, database, batch_size=BATCH)
    assert summary.stored == 550 and summary.rejected == 0, summary
    assert built == [550] and not added, (built, added)
    monkeypatch.undo()
    _same_hands(_tables(database), _tables(mixed.database))
    connection = duckdb.connect(str(database), read_only=True)
    try:
        assert aggregates_ready(connection)
    finally:
        connection.close()


def test_a_run_that_dies_midway_leaves_the_aggregates_to_the_next_write(
        mixed: Mixed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of many files that stops after some of them keeps those files' hands, with the
    aggregates marked out of date (no reader uses them); the next ingest builds them."""
    files = _split(mixed, tmp_path / "sessions", 10)
    database = tmp_path / "died.duckdb"
    calls = {"files": 0}
    real = writer.finish_source

    def dying(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls["files"] += 1
        if calls["files"] == 4:
            raise duckdb.IOException("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr("pipeline.ingest.driver.finish_source", dying)
    with pytest.raises((DatabaseError, duckdb.Error)):
        ingest_paths(files, database, batch_size=BATCH)
    monkeypatch.undo()
    connection = duckdb.connect(str(database), read_only=True)
    try:
        assert connection.sql("SELECT count(*) FROM hands").fetchall()[0][0] > 0
        assert store.get_meta(connection, AGGREGATES_META_KEY) is None
        assert not aggregates_ready(connection)
    finally:
        connection.close()
    ingest_paths(files, database, batch_size=BATCH)
    _same_hands(_tables(database), _tables(mixed.database))


def test_which_runs_count_once_at_their_end() -> None:
    """Several files together are a bulk load, or are enough files that counting each costs
    more than one build; a few day's files into a big database are counted file by file."""
    assert bulk_run(100, 2, 0)
    assert bulk_run(BULK_BYTES_PER_HAND * 500, 2, 500)
    assert bulk_run(1_000, 300, 1_000_000)  # 300 session files: 300 merges cost more
    assert not bulk_run(1_600_000, 3, 1_000_000)  # three day's files into a million hands
    assert bulk_run(1_000, 100, 100 * BULK_HANDS_PER_FILE)
    assert not bulk_run(1_000, 99, 100 * BULK_HANDS_PER_FILE)


def test_one_connection_serves_many_files(
        mixed: Mixed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer keeps its connection from file to file (it lets readers in every
    HOLD_SECONDS): closing it after every file cost a checkpoint and a new connection each,
    about 90 ms a file. ``ofc watch`` likewise, within one look over its folder."""
    from pipeline.ingest.watch import Watcher, WatchOptions

    files = _split(mixed, tmp_path / "sessions", 12)
    opened: list[int] = []
    real = store.connect

    def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        opened.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "connect", counting)
    # a minute's hold (the default's 1.5 s, bound at definition, could pass on a slow machine)
    monkeypatch.setattr(writer.Writer.__init__, "__defaults__", (60.0, None))
    summary = ingest_paths(files, tmp_path / "one.duckdb", batch_size=BATCH)
    assert summary.stored == 550
    assert len(opened) <= 3, len(opened)  # the open check, then one for every file
    opened.clear()
    watcher = Watcher([tmp_path / "sessions"], tmp_path / "watched.duckdb",
                      WatchOptions(settle=0.0, idle=0.0))
    watcher.run(once=True)
    assert watcher.status.new_hands == 550
    assert len(opened) <= 4, len(opened)


def test_a_watchs_first_look_over_many_files_counts_them_once(
        mixed: Mixed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ofc watch`` on a folder of many session files: its first look counts their hands in
    the aggregates once, at its end (it merged every file's into the totals: 250 one-hand
    files took 47 s, now 17 s), and gives the database an ingest of the files gives; a later
    look with one new file counts it as it is stored."""
    from pipeline.ingest.watch import Watcher, WatchOptions

    files = _split(mixed, tmp_path / "sessions", 20)
    late = files.pop()
    late.rename(tmp_path / late.name)
    built, added = _count_aggregate_work(monkeypatch)
    watched = tmp_path / "watched.duckdb"
    watcher = Watcher([tmp_path / "sessions"], watched, WatchOptions(settle=0.0, idle=0.0))
    watcher.run(once=True)
    first = watcher.status.new_hands
    assert built == [first] and not added, (built, added)
    (tmp_path / late.name).rename(late)
    watcher = Watcher([tmp_path / "sessions"], watched, WatchOptions(settle=0.0, idle=0.0))
    watcher.run(once=True)
    assert watcher.status.new_hands == 550 - first > 0
    assert built == [first] and sum(added) == 550 - first, (built, added)
    monkeypatch.undo()
    ingested = tmp_path / "ingested.duckdb"
    ingest_paths(files + [late], ingested, batch_size=BATCH)
    by_watch, by_ingest = _tables(watched), _tables(ingested)
    for table, rows in by_ingest.items():
        assert by_watch[table] == rows, table


def _count_session_work(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record, per call of the sessions' work (:func:`~pipeline.ingest.sessions.add_sessions` or
    :func:`~pipeline.ingest.sessions.update_sessions`), how many hands the database held."""
    calls: list[int] = []
    for name in ("add_sessions", "update_sessions"):
        real = getattr(sessions, name)

        def counted(connection, *args, real=real, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            calls.append(connection.execute("SELECT count(*) FROM hands").fetchall()[0][0])
            return real(connection, *args, **kwargs)

        monkeypatch.setattr(sessions, name, counted)
    return calls


def _waiting(database: Path) -> tuple[int, str | None]:
    """Seats with a start time and no session yet, and the sessions-pending meta value."""
    connection = duckdb.connect(str(database), read_only=True)
    try:
        waiting = connection.sql(
            "SELECT count(*) FROM seats se JOIN hands h USING (hand_key) "
            "WHERE se.session_id IS NULL AND h.started_at IS NOT NULL").fetchall()[0][0]
        return int(waiting), store.get_meta(connection, SESSIONS_PENDING_META_KEY)
    finally:
        connection.close()


def test_a_run_of_many_files_works_out_sessions_once(
        mixed: Mixed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Into a database with stored sessions, a run of many small files merges their seats into
    the sessions once, after the last file (per file it cost about 30 ms, half a folder of
    one-hand files' time), and the sessions are those of the whole files, ids and all; ``ofc
    watch``'s first look over such a folder does the same."""
    from pipeline.ingest.watch import Watcher, WatchOptions

    files = _split(mixed, tmp_path / "sessions", 25)
    database = tmp_path / "run.duckdb"
    ingest_paths(files[:1], database, batch_size=BATCH)  # the sessions so far, and their gap
    calls = _count_session_work(monkeypatch)
    summary = ingest_paths(files[1:], database, batch_size=BATCH)
    assert summary.stored + 22 >= 550 and calls == [550], calls
    watched = tmp_path / "watched.duckdb"
    calls.clear()
    Watcher([tmp_path / "sessions"], watched, WatchOptions(settle=0.0, idle=0.0)).run(once=True)
    assert calls == [550], calls
    monkeypatch.undo()
    assert _waiting(database) == (0, None) and _waiting(watched) == (0, None)
    whole = _tables(mixed.database)
    _same_hands(_tables(database), whole)
    _same_hands(_tables(watched), whole)


@pytest.mark.parametrize("next_write", ["the same files again", "one file again"])
def test_a_run_that_dies_before_its_sessions_leaves_them_to_the_next_write(
        mixed: Mixed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, next_write: str) -> None:
    """A run of many files that dies after storing every file but before its sessions (its
    last transaction) leaves those seats waiting, marked in ``meta``; the next write finds
    them, even one that stores nothing new (every file already ingested: a run's end, or
    one file's), and the sessions are then those of one uninterrupted ingest. A run's end
    also builds the aggregates the died run left out of date (one file's end leaves them to
    the next write that stores hands: within a run they are out of date on purpose)."""
    files = _split(mixed, tmp_path / "sessions", 10)
    database = tmp_path / "died.duckdb"

    monkeypatch.setattr("pipeline.ingest.driver.finish_load", disk_full)
    with pytest.raises((DatabaseError, duckdb.Error)):
        ingest_paths(files, database, batch_size=BATCH)
    monkeypatch.undo()
    waiting, pending = _waiting(database)
    assert waiting > 0 and pending is not None, (waiting, pending)
    again = ingest_paths(files if next_write == "the same files again" else files[:1], database,
                         batch_size=BATCH)
    assert again.stored == 0, again
    assert _waiting(database) == (0, None)
    stored, whole = _tables(database), _tables(mixed.database)
    if next_write == "one file again":
        kept = ("hands", "seats", "sessions", "session_totals")
        stored, whole = ({table: tables[table] for table in kept} for tables in (stored, whole))
    _same_hands(stored, whole)


def test_a_watch_that_dies_before_its_sessions_leaves_them_to_its_next_start(
        mixed: Mixed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ofc watch``'s first look over many files dies after reading every file to its end
    but before its sessions: the next start finds nothing new to read, and still works out
    the waiting seats' sessions when it opens the database."""
    from pipeline.ingest.watch import Watcher, WatchOptions

    _split(mixed, tmp_path / "sessions", 10)
    watched = tmp_path / "watched.duckdb"

    monkeypatch.setattr("pipeline.ingest.watch.finish_load", disk_full)
    with pytest.raises((DatabaseError, duckdb.Error)):
        Watcher([tmp_path / "sessions"], watched, WatchOptions(settle=0.0, idle=0.0)).run(once=True)
    monkeypatch.undo()
    waiting, pending = _waiting(watched)
    assert waiting > 0 and pending is not None, (waiting, pending)
    again = Watcher([tmp_path / "sessions"], watched, WatchOptions(settle=0.0, idle=0.0))
    again.run(once=True)
    assert again.status.new_hands == 0
    assert _waiting(watched) == (0, None)
    kept = ("hands", "seats", "sessions", "session_totals")
    whole = _tables(mixed.database)
    _same_hands(*({table: tables[table] for table in kept} for tables in (_tables(watched), whole)))
