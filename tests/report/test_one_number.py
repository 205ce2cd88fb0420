"""One number everywhere: the coaching report, Compare players, Player review and Sessions show
the same group, outlier verdict, strength, rank and rates for every player of the demo, with
the same settings - and no rank where the players cannot be told apart.

The pages draw their table with :func:`pipeline.report.compare.compare_players`; here it is
checked against each player's own report (the same functions of
:mod:`pipeline.report.standing`), and the pages in AppTest against it.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from pipeline.read.scope import Filters
from pipeline.report import ReportRequest, create_report
from pipeline.report.compare import compare_players
from pipeline.report.reference import ReferenceSpec

APP = Path(__file__).parents[2] / "dashboard" / "app.py"
CLOSE = 1e-12


@pytest.fixture(scope="module")
def players(demo: Path) -> list[str]:
    """Every player of the demo."""
    from pipeline import read

    return sorted(read.overview.filter_options(demo).players)


def _same(value: float | None, expected: float | None) -> bool:
    if value is None or expected is None:
        return value is None and expected is None
    return value == pytest.approx(expected, abs=CLOSE)


@pytest.mark.parametrize("spec", ["field", "qualified:300:40"])
def test_report_and_comparison_agree_for_every_demo_player(demo: Path, players: list[str],
                                                           spec: str) -> None:
    reference = ReferenceSpec.parse(spec)
    table = {row["player"]: row for row in compare_players(
        demo, Filters(), tuple(players), reference).table.to_dicts()}
    assert set(table) == set(players) and len(players) >= 5
    for player in players:
        report = create_report(demo, ReportRequest(player, reference=reference))
        row = table[player]
        group = report.reference
        assert row["group_players"] == len(group.members), player
        assert (row["status"] == "beyond the outlier rule") == group.player_is_outlier
        strength = report.strength
        for column, value in (("strength", strength and strength.value),
                              ("strength_low", strength and strength.low),
                              ("strength_high", strength and strength.high),
                              ("rank", strength and strength.rank)):
            assert _same(row[column], value), (player, column)
        assert row["standing"] == (strength.note if strength else row["standing"])
        findings = {f.key: f for f in report.findings}
        fouls = findings["fouls.overall"]
        assert _same(row["foul_rate"], fouls.player.value), player
        assert _same(row["group_foul_rate"], fouls.reference.value), player
        entries = findings["fantasyland.entry"]
        assert _same(row["fl_entry_rate"], entries.player.value), player
        assert _same(row["group_fl_entry_rate"], entries.reference.value), player
        rows = [findings[f"royalties.{name}"] for name in ("top", "middle", "bottom")]
        assert _same(row["royalties_per_hand"], sum(f.player.value for f in rows))
        assert _same(row["group_royalties_per_hand"], sum(f.reference.value for f in rows))
        # the balance sheet's rate line is the same figure
        sheet = next(s for s in report.balance if s.variant == "all")
        line = next(line for line in sheet.lines if line.key == "fouls")
        assert _same(line.player / 100, fouls.player.value)
        assert _same(line.reference / 100, fouls.reference.value)
        # no rank where the group's players cannot be told apart, nor a percentile
        if strength is not None and strength.separation_p is not None \
                and strength.separation_p >= 0.05:
            assert strength.rank is None and row["rank"] is None
        for variant in report.headline.variants:
            assert variant.percentile is None or variant.players_ranked >= 10


def test_the_pages_show_the_comparison(demo: Path, players: list[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    expected = {row["player"]: row for row in compare_players(
        demo, Filters(), tuple(players), ReferenceSpec()).table.to_dicts()}
    monkeypatch.setenv("OFC_DASHBOARD_DB", str(demo))
    app = AppTest.from_file(str(APP), default_timeout=180)
    app.run()
    app.sidebar.multiselect(key="f_players").set_value(players).run()
    for page, key, tab in (
            ("views/compare_players.py", "compare_reference_table",
             ("compare_tab", "Against a reference group")),
            ("views/sessions.py", "sessions_reference_table",
             ("sessions_tab", "Players against a group"))):
        app.switch_page(page).run()
        _open_tab(app, *tab)  # only the open tab is drawn
        shown = _table(app)
        assert set(shown) <= set(expected) and shown, key
        for player, row in shown.items():
            _check_row(row, expected[player], key)
    hero = players[0]
    app.sidebar.multiselect(key="f_players").set_value([hero]).run()
    app.switch_page("views/player_review.py").run()
    _open_tab(app, "review_tab", "Against a reference group")
    [row] = _table(app).values()
    _check_row(row, expected[hero], "review")


def _open_tab(app: AppTest, key: str, label: str) -> None:
    """Open one of a page's tabs (the pages draw only the open tab)."""
    assert not app.exception, [e.message for e in app.exception]
    app.session_state[key] = label
    app.run()
    assert not app.exception, [e.message for e in app.exception]


def _table(app: AppTest) -> dict[str, dict]:
    for element in app.dataframe:
        if {"standing", "group_players"} <= set(element.value.columns):
            return {row["player"]: row for row in pl.from_pandas(element.value).to_dicts()}
    raise AssertionError("no comparison table on the page")


def _check_row(shown: dict, expected: dict, where: str) -> None:
    for column in ("group_players", "status", "rank", "foul_rate", "group_foul_rate",
                   "strength", "fl_entry_rate", "standing"):
        value, wanted = shown[column], expected[column]
        if isinstance(wanted, float):
            assert value == pytest.approx(wanted, abs=1e-9), (where, column)
        elif wanted is None:
            assert value is None or value != value, (where, column)  # None or NaN
        else:
            assert value == wanted, (where, column)
