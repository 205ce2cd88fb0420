"""Every figure is defined once: ``ofc players --format json``, the dashboard's player table
(Compare players, run in AppTest) and the coaching report's totals give the same numbers for
every player of one database built from simulated hands (fouls, royalties, Fantasyland and
scoops all occur)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from pipeline.ingest.driver import ingest_paths
from pipeline.report import ReportRequest, create_report
from pipeline.report.data import gather_report_data

APP = Path(__file__).parents[2] / "dashboard" / "app.py"


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """400 simulated 3-player hands (solid, chaser and random bots) in a fresh database."""
    folder = tmp_path_factory.mktemp("one-figure")
    hands = folder / "hands.jsonl"
    subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "simulate", "--hands", "400", "--tables", "2",
         "--bots", "solid,chaser,random", "--pool", "5", "--seed", "7", "--quiet",
         "--out", str(hands)],
        check=True, timeout=300,
    )
    path = folder / "hands.duckdb"
    summary = ingest_paths([hands], path)
    assert summary.stored == 400 and summary.rejected == 0
    return path


def cli_players(database: Path) -> dict[str, dict]:
    """``ofc players --format json``, by player."""
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "players", "--db", str(database),
         "--format", "json"], capture_output=True, text=True, check=True, timeout=120,
    )
    return {row["player"]: row for row in json.loads(done.stdout)}


def dashboard_table(database: Path, players: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, dict]:
    """The Compare players page's table for ``players``, by player."""
    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    app = AppTest.from_file(str(APP), default_timeout=120)
    app.run()
    app.sidebar.multiselect(key="f_players").set_value(players).run()
    app.switch_page("views/compare_players.py").run()
    assert not app.exception, [error.message for error in app.exception]
    for element in app.dataframe:
        if {"player", "fl_stay_rate"} <= set(element.value.columns):
            return {row["player"]: row for row in pl.from_pandas(element.value).to_dicts()}
    raise AssertionError("the Compare players table is not shown")


def report_totals(database: Path, player: str) -> dict[str, float]:
    """What the coaching report reads and shows for ``player``: its totals frames, summed."""
    data = gather_report_data(database, ReportRequest(player))
    mine = data.player_totals.filter(pl.col("player") == player)
    # the session sums every comparison of the report is made from
    sessions = data.player_sessions.filter(pl.col("player") == player)
    outside = sessions.filter(pl.col("state") != "fantasyland")
    report = create_report(database, ReportRequest(player))
    counted_all = not report.reference.left_out or report.reference.player_is_outlier
    assert int(mine["hands"].sum()) == int(sessions["boards"].sum())
    return {
        "hands": int(sessions["boards"].sum()),
        "points": int(mine["points"].sum()),
        "fouls": int(sessions["fouls"].sum()),
        "royalties": int(sessions.select(pl.sum_horizontal(
            "royalty_top", "royalty_middle", "royalty_bottom")).sum().item()),
        "fantasyland_entries": int(outside["fantasyland_next"].sum()),
        "fantasyland_hands": int(sessions.filter(pl.col("state") == "fantasyland")["boards"]
                                 .sum()),
        # scoops over the pairings that count: all of them unless someone is left out
        "scoops": int(sessions["scoops"].sum()) if counted_all else None,
        "headline_hands": report.headline.hands,
        "headline_points": report.headline.points,
        "headline_points_per_hand": report.headline.points_per_hand,
    }


def test_players_command_dashboard_and_report_agree(
    database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = cli_players(database)
    assert len(command) == 5
    # the figures are not trivial: every kind of event occurs in this data
    assert sum(row["fouls"] for row in command.values()) > 0
    assert sum(row["fantasyland_entries"] for row in command.values()) > 0
    assert sum(row["fantasyland_hands"] for row in command.values()) > 0
    assert sum(row["scoops"] for row in command.values()) > 0
    assert sum(row["points"] for row in command.values()) == 0

    shown = dashboard_table(database, sorted(command), monkeypatch)
    assert set(shown) == set(command)
    for player, row in command.items():
        page = shown[player]
        assert (page["hands"], page["points"]) == (row["hands"], row["points"]), player
        assert page["points_per_hand"] == pytest.approx(row["points_per_hand"], abs=5e-4)
        assert page["foul_rate"] == pytest.approx(row["foul_rate"], abs=5e-5)

        report = report_totals(database, player)
        for column in ("hands", "points", "fouls", "royalties", "fantasyland_entries",
                       "fantasyland_hands", "scoops"):
            if report[column] is not None:
                assert report[column] == row[column], (player, column)
        assert (report["headline_hands"], report["headline_points"]) == (row["hands"], row["points"])
        assert report["headline_points_per_hand"] == pytest.approx(row["points_per_hand"], abs=5e-4)
