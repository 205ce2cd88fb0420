"""The Decision grading page of the dashboard, run headless on graded databases."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pipeline import read
from pipeline.analysis.grade import GradeSettings
from pipeline.analysis.runner import analyze_database

APP = Path(__file__).parents[2] / "dashboard" / "app.py"
PAGE = "views/decision_grading.py"


def _table(app: AppTest, *columns: str):  # noqa: ANN202
    """The shown table holding these columns (as pandas)."""
    for element in app.dataframe:
        if set(columns) <= set(element.value.columns):
            return element.value
    raise AssertionError(f"no table with {columns}")


def _page(database: Path, monkeypatch: pytest.MonkeyPatch, page: str = PAGE) -> AppTest:
    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    app = AppTest.from_file(str(APP), default_timeout=120)
    app.run()
    assert not app.exception, [error.message for error in app.exception]
    app.switch_page(page).run()
    assert not app.exception, [error.message for error in app.exception]
    return app


def _graded(certain_db: Path, folder: Path) -> Path:
    """A copy of the certain hands with ann's decisions graded."""
    database = folder / "graded.duckdb"
    shutil.copy(certain_db, database)
    analyze_database(database, player="ann", settings=GradeSettings(rollouts=20))
    return database


def test_the_page_shows_the_grades_and_replays_the_worst_decision(
    certain_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = _graded(certain_db, tmp_path)
    app = _page(database, monkeypatch)
    summary = read.grading.grading_summary(database, read.scope.Filters(players=("ann",))).row(0, named=True)
    shown = {metric.label: metric.value for metric in app.metric}
    assert shown["EV loss / decision"] == (
        f"{summary['ev_loss_per_decision']:.2f} ± {summary['ev_loss_se']:.2f}")
    assert shown["Graded correct"] == f"{summary['correct_share'] * 100:.1f} %"
    assert shown["Fantasyland: given up / hand"] == f"{summary['fl_given_up_per_hand']:.2f}"
    assert shown["Behind the grader's bot / decision"] == (
        f"{summary['policy_gap_per_decision']:.2f} ± {summary['policy_gap_se']:.2f}")
    scope = " ".join(block.value for block in app.caption)
    assert f"{summary['decisions']:,} graded decisions in {summary['hands']:,} hands" in scope
    assert "pineapple" in scope and f"{summary['exact']:,} graded exactly" in scope
    assert shown["EV loss / hand"] == (
        f"{summary['ev_loss_per_hand']:.2f} ± {summary['ev_loss_per_hand_se']:.2f}")
    replay = app.selectbox(key="grading_pick")
    assert replay.options[0].startswith("A · street 5")
    text = " ".join(block.value for block in app.markdown)
    assert "street 5" in text and "a mistake" in text
    worst = read.grading.worst_decisions(database, read.scope.Filters(players=("ann",)), 1).row(
        0, named=True)
    captions = " ".join(block.value for block in app.caption)
    if worst["policy_alternative"] == worst["chosen"]:
        assert "makes the same play here" in captions
    else:
        assert f"{worst['policy_gap']:+.2f}" in captions and "would have played" in captions
    boards = " ".join(str(block.proto) for block in app.get("html"))
    assert "as played" in boards and "better" in boards
    alternatives = _table(app, "placement", "equivalents", "diff_se")
    assert alternatives.shape[0] == 6 and alternatives["is_chosen"].sum() == 1
    fantasyland = _table(app, "played_value", "solver_value")
    assert fantasyland["points_given_up"].tolist() == [summary["fl_given_up"]]


def test_the_page_explains_how_to_grade_when_nothing_is_graded(
    certain_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _page(certain_db, monkeypatch)
    assert any("ofc analyze" in block.value for block in app.info)


def test_a_new_user_grades_a_few_hands_from_the_page(
    certain_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "fresh.duckdb"
    shutil.copy(certain_db, database)
    app = _page(database, monkeypatch)
    assert app.selectbox(key="grading_now_player").options == ["bob", "ann"]
    app.selectbox(key="grading_now_player").set_value("ann").run()
    app.button(key="grading_now").click().run()
    assert not app.exception, [error.message for error in app.exception]
    summary = read.grading.grading_summary(database, read.scope.Filters(players=("ann",)))
    assert summary["decisions"].sum() > 0 and summary["fl_hands"].sum() == 1
    app.button(key="grading_now_show").click().run()
    assert not app.exception
    assert any(metric.label == "EV loss / decision" for metric in app.metric)


def test_the_hand_browser_shows_a_graded_hands_grades(
    certain_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = _graded(certain_db, tmp_path)
    app = _page(database, monkeypatch, "views/hand_browser.py")
    app.checkbox(key="hb_graded").check().run()
    assert not app.exception, [error.message for error in app.exception]
    keys = app.selectbox(key="hb_hand").options
    graded = read.hands.hand_list(database, read.scope.Filters(),
                                  read.scope.HandFlags(graded=True))
    assert len(keys) == graded.height > 0
    shown_key = app.selectbox(key="hb_hand").value
    expected = read.grading.hand_grades(database, int(shown_key))
    assert [block.value for block in app.subheader if block.value == "Decision grades"]
    table = _table(app, "chosen_placement", "ev_loss", "policy_gap")
    assert table["street"].tolist() == expected["street"].to_list()
    assert table["chosen_placement"].tolist() == expected["chosen_placement"].to_list()
    assert table["ev_loss"].tolist() == pytest.approx(expected["ev_loss"].to_list())
    # a hand nobody graded shows no grades section
    app.checkbox(key="hb_graded").uncheck().run()
    every = read.hands.hand_list(database, read.scope.Filters())["hand_key"].to_list()
    ungraded = [key for key in every if read.grading.hand_grades(database, key).is_empty()]
    assert ungraded
    app.selectbox(key="hb_hand").set_value(ungraded[0]).run()
    assert not [block for block in app.subheader if block.value == "Decision grades"]


def test_a_replayed_decision_opens_its_hand_in_the_hand_browser(
    certain_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = _graded(certain_db, tmp_path)
    app = _page(database, monkeypatch)
    worst = read.grading.worst_decisions(database, read.scope.Filters(players=("ann",)), 1).row(
        0, named=True)
    # the Hand browser's list is narrowed to hands the decision's hand is not among
    app.session_state["hb_fl"] = True  # the Fantasyland hand only
    app.button(key="grading_open_hand").click().run()
    assert not app.exception, [error.message for error in app.exception]
    assert any(block.value == "Hand browser" for block in app.title)
    picker = app.selectbox(key="hb_hand")
    assert picker.value == worst["hand_key"]
    assert "opened from another page" in picker.options[0]
    assert [block for block in app.subheader if block.value == "Decision grades"]
    table = _table(app, "chosen_placement", "ev_loss", "policy_gap")
    assert worst["chosen_placement"] in table["chosen_placement"].tolist()
    # moving through the hand's streets keeps it, though the list does not hold it (AppTest
    # reruns the page it was told of, so it is told where the browser now is)
    app.switch_page("views/hand_browser.py")
    app.slider(key="hb_replay_street").set_value(1).run()
    assert not app.exception, [error.message for error in app.exception]
    assert app.selectbox(key="hb_hand").value == worst["hand_key"]
    # another hand picked: the request is done, the list is the usual one again
    listed = read.hands.hand_list(database, read.scope.Filters(),
                                  read.scope.HandFlags(fantasyland=True))["hand_key"].to_list()
    assert listed and worst["hand_key"] not in listed
    assert len(app.selectbox(key="hb_hand").options) == len(listed) + 1
    app.selectbox(key="hb_hand").set_value(listed[0]).run()
    assert not app.exception, [error.message for error in app.exception]
    app.run()
    assert len(app.selectbox(key="hb_hand").options) == len(listed)
    assert app.selectbox(key="hb_hand").value == listed[0]


def test_outdated_grades_are_counted_and_regraded_from_the_page(
    certain_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "outdated.duckdb"
    shutil.copy(certain_db, database)
    # graded with another rollout policy than the grader's: outdated, in no figure
    analyze_database(database, player="ann", settings=GradeSettings(rollouts=20, policy="solid"))
    decisions, hands = read.grading.outdated_summary(database)
    assert decisions > 0
    app = _page(database, monkeypatch)
    warnings = " ".join(block.value for block in app.warning)
    assert f"{decisions:,} graded decisions in {hands:,} hands are outdated" in warnings
    shown = {metric.label: metric.value for metric in app.metric}
    assert shown["EV loss / decision"] == "–"  # no figure counts them
    regrade = next(button for button in app.button if button.key == "grading_regrade")
    regrade.click().run(timeout=300)
    assert not app.exception, [error.message for error in app.exception]
    assert read.grading.outdated_summary(database) == (0, 0)
    summary = read.grading.grading_summary(database, read.scope.Filters(players=("ann",)))
    assert summary["decisions"].sum() == decisions
