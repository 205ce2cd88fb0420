"""The trainer: answers checked against the grade and stored, and the Trainer page run end to end."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from pipeline import read
from pipeline.analysis.grade import GradeSettings
from pipeline.analysis.runner import analyze_database
from pipeline.analysis.trainer import AnswerError, check_answer, record_answer

APP = Path(__file__).parents[2] / "dashboard" / "app.py"
PAGE = "views/trainer.py"
PLAYED = {"Kh": "top", "2c": "middle", "5d": "discard"}  # hand A: KK on top (it qualifies for Fantasyland) fouls under QQ
SAFE = {"Kh": "middle", "2c": "top", "5d": "discard"}


@pytest.fixture()
def graded(certain_db: Path, tmp_path: Path) -> Path:
    """The certain hands with ann's decisions graded."""
    database = tmp_path / "graded.duckdb"
    shutil.copy(certain_db, database)
    analyze_database(database, player="ann", settings=GradeSettings(rollouts=20))
    return database


def _key(database: Path, hand_id: str) -> int:
    connection = duckdb.connect(str(database), read_only=True)
    try:
        return connection.execute("SELECT hand_key FROM hands WHERE hand_id = ?",
                                  [hand_id]).fetchone()[0]
    finally:
        connection.close()


def test_an_answer_is_checked_against_the_grade(graded: Path) -> None:
    key = _key(graded, "A")
    worst = read.grading.worst_decisions(graded, read.scope.Filters(players=("ann",)), 1).row(
        0, named=True)
    assert worst["hand_key"] == key and worst["street"] == 5 and worst["exact"]
    played = check_answer(graded, key, "ann", 5, PLAYED)
    assert played.is_played and not played.is_best and not played.correct
    assert played.loss == pytest.approx(worst["ev_loss"])  # exact: the grade's own loss
    assert played.placement == worst["chosen_placement"]
    safe = check_answer(graded, key, "ann", 5, SAFE)
    # the king in the middle never fouls: the best play or within a few hundredths of it
    assert safe.correct and safe.loss < GradeSettings().min_loss and not safe.is_played
    assert safe.mistake_type == worst["mistake_type"] == "chased Fantasyland"
    # an equivalent answer (the other low card on top) is the same class as the best play's
    for wrong, reason in (
        ({"Kh": "top", "2c": "middle"}, "5d has no row"),
        ({"Kh": "top", "2c": "middle", "5d": "discard", "As": "top"}, "was not dealt"),
        ({"Kh": "top", "2c": "top", "5d": "middle"}, "discard exactly 1 card"),
        ({"Kh": "bottom", "2c": "middle", "5d": "discard"}, "room"),
        ({"Kh": "roof", "2c": "middle", "5d": "discard"}, "unknown row"),
    ):
        with pytest.raises(AnswerError, match=reason):
            check_answer(graded, key, "ann", 5, wrong)
    with pytest.raises(AnswerError, match="no stored grade"):
        check_answer(graded, key, "bob", 5, PLAYED)


def test_answers_are_stored_and_counted_by_mistake_type(graded: Path) -> None:
    key = _key(graded, "A")
    for answer in (PLAYED, SAFE, SAFE):
        record_answer(graded, check_answer(graded, key, "ann", 5, answer))
    filters = read.scope.Filters(players=("ann",))
    answers = read.grading.trainer_answers(graded, filters)
    assert answers["correct"].to_list() == [False, True, True]
    progress = read.grading.trainer_progress(graded, filters).row(0, named=True)
    assert progress["mistake_type"] == "chased Fantasyland" and progress["answers"] == 3
    assert progress["correct"] == 2 and progress["graded_mistakes"] >= 1
    quizzes = read.grading.trainer_quizzes(graded, filters)
    first = quizzes.filter(quizzes["hand_key"] == key).row(0, named=True)
    assert first["attempts"] == 3 and first["solved"] == 2


def _page(database: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    app = AppTest.from_file(str(APP), default_timeout=120)
    app.run()
    assert not app.exception, [error.message for error in app.exception]
    app.switch_page(PAGE).run()
    assert not app.exception, [error.message for error in app.exception]
    return app


def test_the_trainer_page_runs_a_quiz_end_to_end(graded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = _page(graded, monkeypatch)
    quiz = app.selectbox(key="trainer_pick")
    first = quiz.value  # (a widget's value reads the live session state: keep it)
    assert quiz.options[0].startswith("1. hand A · pineapple · street 5")
    quizzes = read.grading.trainer_quizzes(graded, read.scope.Filters(players=("ann",)))
    assert len(quiz.options) == quizzes.height
    html = " ".join(str(block.proto) for block in app.get("html"))
    assert "your answer" in html and "K♥" in html  # the board and the dealt cards
    prefix = f"trainer_{_key(graded, 'A')}_5"
    assert not any(button.key == "trainer_check" for button in app.button)
    # the picker: choose the row, tap the card (as on the Record page)
    for card, row in (("Kh", "middle"), ("2c", "top"), ("5d", "discard")):
        app.segmented_control(key=f"{prefix}_row").set_value(row).run()
        app.button(key=f"{prefix}_card_{card}").click().run()
        assert not app.exception, [error.message for error in app.exception]
    # a full row refuses a card (the top already has three after 2c)
    app.button(key=f"{prefix}_card_2c").click().run()  # take 2c back
    app.segmented_control(key=f"{prefix}_row").set_value("bottom").run()
    app.button(key=f"{prefix}_card_2c").click().run()
    assert any("bottom is full" in block.value for block in app.warning)
    app.segmented_control(key=f"{prefix}_row").set_value("top").run()
    app.button(key=f"{prefix}_card_2c").click().run()
    app.button(key="trainer_check").click().run()
    assert not app.exception, [error.message for error in app.exception]
    verdicts = [block.value for block in app.success]
    assert any(text.startswith(("Right", "Good")) for text in verdicts), verdicts
    assert any("lost" in block.value and "chased Fantasyland" in block.value for block in app.markdown)
    costliest = read.grading.trainer_quizzes(graded, read.scope.Filters(players=("ann",))).row(
        0, named=True)
    captions = " ".join(block.value for block in app.caption)
    if costliest["policy_alternative"] == costliest["chosen"]:
        assert "plays what you played at the table" in captions
    else:  # hand A's last street is exact: the gap has no error
        assert "would have played" in captions
        assert f"{costliest['policy_gap']:+.2f} points" in captions
    assert app.get("plotly_chart"), "the alternatives' values with error bars"
    answers = read.grading.trainer_answers(graded, read.scope.Filters(players=("ann",)))
    assert answers.height == 1 and answers["correct"].to_list() == [True]
    assert answers["answer_placement"][0] == "top 2c · middle Kh · bottom – · discard 5d"
    progress = [frame.value for frame in app.dataframe if "mistake_type" in frame.value.columns]
    assert progress and progress[0]["answers"].tolist() == [1]
    # the next quiz starts with an empty answer
    app.button(key="trainer_next").click().run()
    assert not app.exception
    assert app.selectbox(key="trainer_pick").value == (first + 1) % len(quiz.options)


def test_the_trainer_explains_itself_before_any_grading(certain_db: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    app = _page(certain_db, monkeypatch)
    assert any("Grade some hands first" in block.value for block in app.info)


def test_a_read_only_dashboard_checks_an_answer_and_keeps_nothing(
        graded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(read.access.READ_ONLY_ENV, "1")
    app = _page(graded, monkeypatch)
    prefix = f"trainer_{_key(graded, 'A')}_5"
    for card, row in (("Kh", "middle"), ("2c", "top"), ("5d", "discard")):
        app.segmented_control(key=f"{prefix}_row").set_value(row).run()
        app.button(key=f"{prefix}_card_{card}").click().run()
    app.button(key="trainer_check").click().run()
    assert not app.exception, [error.message for error in app.exception]
    assert any(text.startswith(("Right", "Good")) for text in (b.value for b in app.success))
    assert any("read-only" in block.value for block in app.warning)
    answers = read.grading.trainer_answers(graded, read.scope.Filters(players=("ann",)))
    assert answers.height == 0
