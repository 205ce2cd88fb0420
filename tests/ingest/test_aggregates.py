"""The aggregates are kept with the hands: after an ingest in many batches, duplicates, a delete,
a re-ingest of edited hands and a re-score they equal a rebuild from the stored hands and answer
as a full pass does; they change in the same transaction as the hands; a database made before
them keeps working and gets them at its next write; aggregates that do not count every board are
not trusted."""

from __future__ import annotations

import copy
from pathlib import Path

import duckdb
import pytest
from polars.testing import assert_frame_equal

from pipeline import read, store
from pipeline.ingest.delete import delete_hand
from pipeline.ingest.driver import ingest_mappings, ingest_paths
from pipeline.ingest.errors import DatabaseError
from pipeline.ingest.rescore import rescore
from pipeline.read.scope import Filters
from pipeline.read.totals import AggregatesUnavailable, Route, aggregates_ready
from pipeline.rules.ruleset import preset
from tests.simulated_mix import (
    Mixed,
    assert_routes_agree,
    mixed,
    rebuilt_aggregates,
    stored_aggregates,
)

__all__ = ["mixed"]


def _assert_kept(database: Path) -> None:
    kept, again = rebuilt_aggregates(database)
    for table, rows in again.items():
        assert kept[table] == rows, table
    assert assert_routes_agree(database) > 0


def _swap_middle_and_bottom(record: dict) -> dict:
    """The same hand with every player's middle and bottom rows swapped: still valid, other
    verdicts (a strong middle over a weak bottom fouls)."""
    edited = copy.deepcopy(record)
    for player in edited["players"]:
        for street in player["streets"]:
            placed = street["placed"]
            middle, bottom = placed.pop("middle", None), placed.pop("bottom", None)
            if bottom is not None:
                placed["middle"] = bottom
            if middle is not None:
                placed["bottom"] = middle
    return edited


def test_kept_in_batches_equal_a_rebuild(mixed: Mixed) -> None:
    kept, again = rebuilt_aggregates(mixed.database)
    assert kept == again
    assert len(kept["board_totals"]) > 50 and len(kept["pair_totals"]) > 100
    assert kept["fantasyland_draws"]


def test_duplicates_change_nothing(mixed: Mixed, tmp_path: Path) -> None:
    database = mixed.copy(tmp_path)
    connection = duckdb.connect(str(database), read_only=True)
    before = stored_aggregates(connection)
    connection.close()
    summary = ingest_mappings(mixed.records()[:300], database, "again.jsonl", batch_size=50)
    assert summary.duplicates == 300 and summary.stored == 0
    connection = duckdb.connect(str(database), read_only=True)
    assert stored_aggregates(connection) == before
    connection.close()


def test_a_delete_and_a_reingest_of_edited_hands(mixed: Mixed, tmp_path: Path) -> None:
    database = mixed.copy(tmp_path)
    records = mixed.records()
    edited = [_swap_middle_and_bottom(record) for record in records[10:400:37]]
    for record in edited:
        assert delete_hand(database, record["site"], record["hand_id"])
    assert not delete_hand(database, records[10]["site"], records[10]["hand_id"])
    _assert_kept(database)
    summary = ingest_mappings(edited, database, "corrections.jsonl")
    assert summary.stored == len(edited) and summary.rejected == 0, summary
    _assert_kept(database)
    # the edits changed verdicts: the totals are not those of the original hands
    connection = duckdb.connect(str(database), read_only=True)
    after = stored_aggregates(connection)
    connection.close()
    original, _ = rebuilt_aggregates(mixed.database)
    assert after["board_totals"] != original["board_totals"]


def test_a_rescore_rebuilds_them(mixed: Mixed, tmp_path: Path) -> None:
    database = mixed.copy(tmp_path)
    before, _ = rebuilt_aggregates(database)
    rescore(database, preset("flat-trips"))
    _assert_kept(database)
    after, _ = rebuilt_aggregates(database)
    assert after["board_totals"] != before["board_totals"]
    assert after["fantasyland_draws"] == before["fantasyland_draws"]


def test_they_change_in_the_same_transaction_as_the_hands(
        mixed: Mixed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure while counting a batch leaves neither its hands nor its counts behind."""
    from pipeline.ingest import writer

    database = tmp_path / "atomic.duckdb"
    calls = {"batches": 0}
    real = writer.add_hands

    def failing(connection, frames, skip=()):  # noqa: ANN001, ANN202
        calls["batches"] += 1
        real(connection, frames, skip)
        if calls["batches"] == 3:
            raise duckdb.IOException("disk full")

    monkeypatch.setattr(writer, "add_hands", failing)
    with pytest.raises((DatabaseError, duckdb.Error)):
        ingest_paths([mixed.files[0]], database, batch_size=40, bulk=False)
    connection = duckdb.connect(str(database), read_only=True)
    try:
        hands = connection.sql("SELECT count(*) FROM hands").fetchall()[0][0]
        assert 0 < hands < 240  # the batches before the failure, whole
        assert aggregates_ready(connection)  # counted exactly: every stored board, no other
        boards = connection.sql("SELECT count(*) FROM seats").fetchall()[0][0]
        counted = connection.sql("SELECT sum(boards) FROM board_totals").fetchall()[0][0]
        assert counted == boards
    finally:
        connection.close()


def _make_old(database: Path) -> None:
    """What a database written before the aggregates looks like."""
    connection = duckdb.connect(str(database))
    for table in store.AGGREGATE_TABLES:
        connection.execute(f"DROP TABLE {table}")
    connection.execute("ALTER TABLE sessions DROP COLUMN fouls")
    connection.execute("ALTER TABLE sessions DROP COLUMN royalties")
    connection.execute("DELETE FROM meta WHERE key IN ('aggregates_version', "
                       "'schema_fingerprint')")
    connection.close()


def test_a_database_made_before_them(mixed: Mixed, tmp_path: Path) -> None:
    database = mixed.copy(tmp_path)
    with preferred_full_pass():
        expected = read.players.player_kpis(database, Filters())
        sessions = read.sessions.session_results(database, Filters())
    _make_old(database)
    # readers open it read-only, as it is: the full pass answers, with the same figures
    connection = read.source.open_reader(database)
    try:
        assert not aggregates_ready(connection)
        with pytest.raises(AggregatesUnavailable):
            read.players.player_kpis(connection, Filters(), route=Route.AGGREGATES)
        assert_frame_equal(read.players.player_kpis(connection, Filters()), expected)
        assert_frame_equal(read.sessions.session_results(connection, Filters()), sessions)
    finally:
        connection.close()
    # its next write builds them (here: taking a hand out)
    record = mixed.records()[5]
    assert delete_hand(database, record["site"], record["hand_id"])
    _assert_kept(database)
    with store.open_database(database, read_only=True) as connection:
        assert connection.sql("SELECT count(*) FROM sessions WHERE fouls IS NULL "
                              "OR royalties IS NULL").fetchall()[0][0] == 0


def test_an_ingest_or_a_rescore_builds_them_too(mixed: Mixed, tmp_path: Path) -> None:
    first = mixed.copy(tmp_path)
    _make_old(first)
    ingest_paths([mixed.files[2]], first)  # unchanged: nothing written, still old
    with store.open_database(first, read_only=True) as connection:
        assert not aggregates_ready(connection)
    ingest_mappings([_swap_middle_and_bottom(mixed.records()[0]) | {"hand_id": "new-1"}],
                    first, "one.jsonl")
    _assert_kept(first)
    second = tmp_path / "second.duckdb"
    second.write_bytes(mixed.database.read_bytes())
    _make_old(second)
    rescore(second)
    _assert_kept(second)


def test_aggregates_that_miss_boards_are_not_trusted(mixed: Mixed, tmp_path: Path) -> None:
    database = mixed.copy(tmp_path)
    connection = duckdb.connect(str(database))
    connection.execute("UPDATE board_totals SET boards = boards + 1 "
                       "WHERE rowid = (SELECT min(rowid) FROM board_totals)")
    connection.close()
    connection = read.source.open_reader(database)
    try:
        assert not aggregates_ready(connection)
        automatic = read.players.player_kpis(connection, Filters())
        assert_frame_equal(automatic, read.players.player_kpis(
            connection, Filters(), route=Route.FULL_PASS))
    finally:
        connection.close()


def preferred_full_pass():  # noqa: ANN201
    """Answer by a full pass in the block."""
    from pipeline.read.totals import preferred_route

    return preferred_route(Route.FULL_PASS)
