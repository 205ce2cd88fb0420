"""A reject whose hand is stored later is resolved, and the Data page shows it as resolved.

Before: a file was fixed and ingested again, the hand landed, and its old reject stayed beside it
as if the hand were still missing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pipeline.ingest.driver import ingest_paths
from tests.dashboard.conftest import APP
from tests.ingest.conftest import deal_hand, query, write_jsonl


def broken(record: dict) -> dict:
    """The record with a card dealt twice (a typing slip)."""
    broken_record = json.loads(json.dumps(record))
    first = broken_record["players"][0]["streets"][0]
    broken_record["players"][1]["streets"][0]["dealt"][0] = first["dealt"][0]
    return broken_record


@pytest.fixture
def fixed_database(tmp_path: Path) -> Path:
    hands = [deal_hand(seed) for seed in range(5)]
    path = tmp_path / "night.jsonl"
    write_jsonl(path, [hands[0], broken(hands[1]), hands[2], "{not json", hands[3]])
    other = write_jsonl(tmp_path / "other.jsonl", [broken(deal_hand(9))])
    database = tmp_path / "hands.duckdb"
    first = ingest_paths([path, other], database)
    assert (first.stored, first.rejected) == (3, 3)
    write_jsonl(path, [hands[0], hands[1], hands[2], hands[3]])  # fixed (and the junk line gone)
    second = ingest_paths([path], database)
    assert (second.stored, second.duplicates) == (1, 3)
    return database


def test_the_fixed_hands_reject_is_resolved_and_the_others_stay_open(fixed_database: Path) -> None:
    rows = query(fixed_database, "SELECT hand_id, kind, resolved_at IS NOT NULL, resolved_by "
                                 "FROM rejects ORDER BY path, line")
    resolved = {hand_id: (done, by) for hand_id, kind, done, by in rows}
    assert resolved["H1"][0] is True and resolved["H1"][1].endswith("night.jsonl:2")
    assert resolved["H9"] == (False, None)  # still missing: another hand's reject stays open
    assert resolved[None] == (False, None)  # a line with no readable id cannot be resolved


def test_a_conflict_is_never_resolved_by_its_own_stored_hand(tmp_path: Path) -> None:
    hand = deal_hand(1)
    other = json.loads(json.dumps(hand))
    other["players"][0]["reported_points"] = 5
    database = tmp_path / "hands.duckdb"
    ingest_paths([write_jsonl(tmp_path / "a.jsonl", [hand])], database)
    ingest_paths([write_jsonl(tmp_path / "b.jsonl", [other])], database)
    ingest_paths([write_jsonl(tmp_path / "c.jsonl", [deal_hand(2)])], database)
    assert query(database, "SELECT kind, resolved_at FROM rejects") == [("conflict", None)]


def test_the_data_page_shows_resolved_rejects(fixed_database: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OFC_DASHBOARD_DB", str(fixed_database))
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    app.switch_page("views/data.py").run()
    assert not app.exception, [error.message for error in app.exception]
    table = next(frame.value for frame in app.dataframe if "resolved_by" in frame.value.columns)
    statuses = dict(zip(table["hand_id"].fillna("-"), table["status"], strict=True))
    assert statuses == {"H1": "resolved", "H9": "open", "-": "open"}
    assert list(table["status"]) == ["open", "open", "resolved"]  # open ones first
    captions = " ".join(caption.value for caption in app.caption)
    assert "2 records are refused" in captions and "1 earlier rejects are resolved" in captions
    reasons = next(frame.value for frame in app.dataframe if "files" in frame.value.columns)
    assert reasons["records"].sum() == 2  # reasons count only open rejects


def test_a_database_from_before_resolution_still_shows_its_rejects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import duckdb

    database = tmp_path / "old.duckdb"
    ingest_paths([write_jsonl(tmp_path / "a.jsonl", [deal_hand(1), "{not json"])], database)
    connection = duckdb.connect(str(database))
    for column in ("resolved_by", "resolved_at", "site"):  # as an older version wrote it
        connection.execute(f"ALTER TABLE rejects DROP COLUMN {column}")
    connection.close()
    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    app.switch_page("views/data.py").run()  # read-only: the dashboard does not migrate
    assert not app.exception, [error.message for error in app.exception]
    table = next(frame.value for frame in app.dataframe if "resolved_by" in frame.value.columns)
    assert list(table["status"]) == ["open"]
