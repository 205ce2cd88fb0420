"""A followed file's cursor (``file_offsets``) is stored and read back whole: written the first
time, then changed in every field; a cursor another watcher moved meanwhile is refused."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipeline import store
from pipeline.ingest.offsets import Counts, Cursor, CursorMoved, load_cursor, save_cursor


def _database(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect(str(tmp_path / "offsets.duckdb"))
    store.ensure_schema(connection)
    return connection


def test_a_cursor_is_written_then_changed_in_every_field(tmp_path: Path) -> None:
    connection = _database(tmp_path)
    first = Cursor("/logs/table 1.jsonl", "canonical", 120, 3, False, "a" * 64,
                   {"header": None}, Counts(3, 2, 1, 0), 120, 1_000, None)
    save_cursor(connection, first, None)
    assert load_cursor(connection, first.path) == first
    other = Cursor("/logs/table 2.jsonl", "boards_csv", 10, 1, True, "c" * 64)
    save_cursor(connection, other, None)
    second = first.copy(
        format="poker_arena", bytes_read=4_096, lines_read=40, mid_line=True, read_hash="b" * 64,
        state={"game": "pineapple", "players": ["ana", "ben"]},
        counts=Counts(40, 30, 6, 4, unreadable=1, ends_early="line 41: cut",
                      warnings=["line 7: odd"], warning_count=2),
        size_bytes=5_000, modified_ns=2_000, recorded_hash="d" * 64)
    save_cursor(connection, second, first.mark)
    assert load_cursor(connection, first.path) == second
    assert load_cursor(connection, other.path) == other  # the other file's row untouched
    assert connection.sql("SELECT count(*) FROM file_offsets").fetchall() == [(2,)]


def test_a_cursor_moved_by_another_watcher_is_refused(tmp_path: Path) -> None:
    connection = _database(tmp_path)
    cursor = Cursor("/logs/t.jsonl", "canonical", 50, 1, False, "a" * 64)
    save_cursor(connection, cursor, None)
    with pytest.raises(CursorMoved):
        save_cursor(connection, cursor.copy(bytes_read=90), None)  # it thinks there is no row
    stale = cursor.copy(bytes_read=10).mark
    with pytest.raises(CursorMoved):
        save_cursor(connection, cursor.copy(bytes_read=90), stale)
    assert load_cursor(connection, cursor.path) == cursor
