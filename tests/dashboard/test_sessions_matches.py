"""The Sessions page shows each match of the opened session, settled (points, settled, money),
with the figures of ``ofc settle``; a match that cannot be settled says why."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from pipeline import read
from pipeline.ingest.driver import ingest_paths
from pipeline.records.rules_file import load_rules_file
from tests.dashboard.conftest import APP
from tests.ingest.conftest import deal_hand, write_jsonl


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
