"""The Sessions page shows each match of the opened session, settled (points, settled, money),
with the figures of ``ofc settle``; a match that cannot be settled says why."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from pipeline import read
from pipeline.ingest.driver import ingest_paths
from pipeline.ingest.errors import DatabaseError
from pipeline.records.rules_file import load_rules_file
from tests.dashboard.conftest import APP
from tests.ingest.conftest import deal_hand, disk_full, write_jsonl


def test_the_sessions_page_settles_the_matches_of_a_session(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    records = []
    for match, seeds in (("m1", range(0, 5)), ("m2", range(5, 8))):
        for seed in seeds:  # one evening, one session per player
            record = deal_hand(seed, hand_id=f"{match}-{seed}",
                               started_at=f"2026-11-01T20:{2 * seed:02d}:00Z")
            record["match_id"] = match
            records.append(record)
    broken = deal_hand(9, hand_id="m2-9", players=2, started_at="2026-11-01T20:20:00Z")
    broken["match_id"] = "m2"  # two players where m2's other hands had three
    records.append(broken)
    rules = tmp_path / "club.toml"
    rules.write_text('[scoring]\ncap = 10\ncap_scope = "match"\nstake = 0.5\n', encoding="utf-8")
    database = tmp_path / "db.duckdb"
    ingest_paths([write_jsonl(tmp_path / "m.jsonl", records)], database,
                 rules=load_rules_file(rules))

    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    app.switch_page("views/sessions.py").run()
    assert not app.exception, [e.message for e in app.exception]
    stored = read.sessions.session_results(database, read.scope.EVERYTHING)
    (session_id,) = stored.filter(pl.col("player") == "jun")["session_id"].to_list()
    app.selectbox(key="open_session").set_value(session_id).run()
    assert not app.exception, [e.message for e in app.exception]
    shown = next(pl.from_pandas(element.value) for element in app.dataframe
                 if {"settled", "money", "note"} <= set(element.value.columns))
    expected = read.matches.settlement_frame(read.matches.match_settlements(database))
    assert shown.to_dicts() == expected.drop("site").to_dicts()
    assert shown.filter(pl.col("match") == "m2")["note"].str.starts_with(
        "not settled: its hands have different players").all()
    assert shown.filter(pl.col("match") == "m1")["money"].sum() == 0
    caption = " ".join(element.value for element in app.caption)
    assert "**m2**: not settled" in caption and "match cap 10, 0.5 per point" in caption


def test_the_sessions_page_says_how_many_hands_wait_for_their_sessions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of many files works out its sessions after its last file; one that died before
    (or is still going) leaves hands without a session. The Sessions page says how many, and
    stops saying it once the next ingest has worked them out."""
    files = []
    for number in range(4):  # four session files, a quarter of an hour apart
        records = [deal_hand(10 * number + seed, hand_id=f"f{number}-{seed}",
                             started_at=f"2026-11-01T2{number}:{2 * seed:02d}:00Z")
                   for seed in range(3)]
        files.append(write_jsonl(tmp_path / f"table-{number}.jsonl", records))
    database = tmp_path / "db.duckdb"

    with monkeypatch.context() as patched:
        patched.setattr("pipeline.ingest.driver.finish_load", disk_full)
        with pytest.raises((DatabaseError, duckdb.Error)):
            ingest_paths(files, database)
    assert read.sessions.hands_waiting_for_sessions(database) == 12

    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    app.switch_page("views/sessions.py").run()
    assert not app.exception, [e.message for e in app.exception]
    notes = " ".join(element.value for element in app.info)
    assert "12 stored hands have no session yet" in notes, notes

    ingest_paths(files, database)  # every file read already: it finds the waiting hands
    assert read.sessions.hands_waiting_for_sessions(database) == 0
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    app.switch_page("views/sessions.py").run()
    assert not app.exception, [e.message for e in app.exception]
    assert not any("no session yet" in element.value for element in app.info)
    assert read.sessions.session_results(database, read.scope.EVERYTHING).height > 0
