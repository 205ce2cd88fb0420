"""Compare players, Sessions and Player review under AppTest on simulated players of known
style: the reference group chosen on the page, strength shrunk toward it, fair progress."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from pipeline.read.scope import Filters
from pipeline.report.compare import compare_players
from pipeline.report.reference import ReferenceSpec
from tests.report.conftest import CHASERS, DRIFTER, RANDOM, SOLIDS, Simulated

APP = Path(__file__).parents[2] / "dashboard" / "app.py"


def _app(database: Path, monkeypatch: pytest.MonkeyPatch, players: list[str]) -> AppTest:
    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    app = AppTest.from_file(str(APP), default_timeout=120)
    app.run()
    assert not app.exception, [e.message for e in app.exception]
    app.sidebar.multiselect(key="f_players").set_value(players).run()
    return app


TABLE_COLUMNS = {"reference_table": {"status", "strength", "standing"},
                 "progress_tests": {"question", "95 % interval", "verdict"}}


def _table(app: AppTest, key: str) -> pl.DataFrame:
    """The shown table whose key ends with ``key`` (recognised by its columns)."""
    wanted = next(columns for suffix, columns in TABLE_COLUMNS.items() if key.endswith(suffix))
    for element in app.dataframe:
        if wanted <= set(element.value.columns):
            return pl.from_pandas(element.value)
    raise AssertionError(f"no table {key}: {[list(e.value.columns) for e in app.dataframe]}")


def _named(app: AppTest, prefix: str, names: list[str]) -> None:
    kind = app.selectbox(key=f"{prefix}_kind")
    kind.set_value(kind.options[2]).run()  # named regulars
    app.multiselect(key=f"{prefix}_names").set_value(names).run()
    assert not app.exception, [e.message for e in app.exception]


def _tab(app: AppTest, key: str, label: str) -> None:
    """Open one of a page's tabs (only the open tab is drawn)."""
    app.session_state[key] = label
    app.run()
    assert not app.exception, [e.message for e in app.exception]


def test_compare_players_against_the_solid_players(proof_db: Simulated,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    players = [*CHASERS, RANDOM, SOLIDS[0]]
    app = _app(proof_db.database, monkeypatch, players)
    app.switch_page("views/compare_players.py").run()
    assert not app.exception, [e.message for e in app.exception]
    _named(app, "compare_reference", list(SOLIDS))
    table = _table(app, "compare_reference_table")
    expected = compare_players(proof_db.database, Filters(), tuple(players),
                               ReferenceSpec.parse("named:" + ",".join(SOLIDS)))
    assert sorted(table["player"].to_list()) == sorted(players)
    rows = {row["player"]: row for row in table.to_dicts()}
    for row in expected.table.to_dicts():
        shown = rows[row["player"]]
        assert shown["foul_rate"] == pytest.approx(row["foul_rate"])
        assert shown["group_foul_rate"] == pytest.approx(row["group_foul_rate"])
        if row["strength"] is None:
            assert shown["strength"] is None or shown["strength"] != shown["strength"]  # NaN
        else:
            assert shown["strength"] == pytest.approx(row["strength"])
    for chaser in CHASERS:  # the chasers foul more than the solid players
        assert rows[chaser]["foul_rate"] > rows[chaser]["group_foul_rate"] + 0.05
    assert rows[RANDOM]["status"] == "beyond the outlier rule"
    assert rows[SOLIDS[0]]["status"] == "compared with the group"
    # the solid player's group is the other three solid players (never himself)
    assert rows[SOLIDS[0]]["group_players"] == 3
    # the same figures as each player's coaching report
    from pipeline.report import ReportRequest, create_report
    for player in players:
        report = create_report(proof_db.database, ReportRequest(
            player, reference=ReferenceSpec.parse("named:" + ",".join(SOLIDS))))
        row = next(r for r in expected.table.to_dicts() if r["player"] == player)
        strength = report.strength
        assert row["strength"] == (None if strength is None else strength.value)
        assert row["rank"] == (None if strength is None else strength.rank)


def test_sessions_page_compares_players_and_shows_progress(
        proof_db: Simulated, monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app(proof_db.database, monkeypatch, [])
    app.switch_page("views/sessions.py").run()
    assert not app.exception, [e.message for e in app.exception]
    _tab(app, "sessions_tab", "Players against a group")
    table = _table(app, "sessions_reference_table")
    assert sorted(table["player"].to_list()) == sorted([*SOLIDS, *CHASERS, RANDOM, DRIFTER])
    # with the field as the group, the random player is beyond the outlier rule: not shrunk,
    # ranked nowhere
    rows = {row["player"]: row for row in table.to_dicts()}
    assert rows[RANDOM]["status"] == "beyond the outlier rule"
    assert rows[RANDOM]["rank"] != rows[RANDOM]["rank"] or rows[RANDOM]["rank"] is None
    _tab(app, "sessions_tab", "Progress of a player")
    app.date_input(key="sessions_progress_date").set_value(proof_db.switch.date())
    app.selectbox(key="sessions_progress_player").set_value(DRIFTER).run()
    assert not app.exception, [e.message for e in app.exception]
    tests = {row["key"]: row for row in _table(app, "sessions_progress_tests").to_dicts()}
    assert tests["change.foul"]["verdict"] == "clear" and tests["change.foul"]["estimate"] > 5
    assert tests["change.points"]["verdict"] in ("clear", "not clear")


def test_player_review_against_a_group_and_before_after(
        proof_db: Simulated, monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app(proof_db.database, monkeypatch, [DRIFTER])
    app.switch_page("views/player_review.py").run()
    assert not app.exception, [e.message for e in app.exception]
    _tab(app, "review_tab", "Against a reference group")
    [row] = _table(app, "review_reference_table").to_dicts()
    assert row["player"] == DRIFTER and row["status"] == "compared with the group"
    _tab(app, "review_tab", 'Trend and "did I improve?"')
    tests = {r["key"]: r for r in _table(app, "review_progress_tests").to_dicts()}
    assert set(tests) == {"trend.points", "trend.foul"}
    app.date_input(key="review_progress_date").set_value(proof_db.switch.date()).run()
    tests = {r["key"]: r for r in _table(app, "review_progress_tests").to_dicts()}
    assert tests["change.foul"]["verdict"] == "clear"
    _tab(app, "review_tab", "Against a reference group")
    _named(app, "review_reference", list(SOLIDS))
    [row] = _table(app, "review_reference_table").to_dicts()
    assert row["status"] == "compared with the group" and row["group_players"] == len(SOLIDS)
