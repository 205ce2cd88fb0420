"""The demo database comes graded: the shipped grades land, and the pages have something to show."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from pipeline import read, store
from pipeline.analysis.grade import GradeSettings
from pipeline.analysis.runner import analyze_database
from pipeline.ingest import demo


def test_grades_are_copied_for_stored_hands_only_and_idempotently(
    certain_db: Path, simulated_db: Path, tmp_path: Path
) -> None:
    graded = tmp_path / "graded.duckdb"
    shutil.copy(certain_db, graded)
    analyze_database(graded, player="ann", settings=GradeSettings(rollouts=12))
    folder = tmp_path / "grades"
    folder.mkdir()
    with store.open_database(graded, read_only=True) as connection:
        for table in demo.GRADE_FILES:
            connection.execute(f"COPY {table} TO '{folder / (table + '.parquet')}' (FORMAT parquet)")
        expected = connection.execute("SELECT count(*) FROM decision_grades").fetchone()[0]
    # a database holding other hands takes none of them
    assert demo.load_demo_grades(simulated_db, folder) == 0
    target = tmp_path / "target.duckdb"
    shutil.copy(certain_db, target)
    assert demo.load_demo_grades(target, folder) == expected
    assert demo.load_demo_grades(target, folder) == expected  # again: replaced, not doubled
    connection = duckdb.connect(str(target), read_only=True)
    try:
        assert connection.execute("SELECT count(*) FROM decision_grades").fetchone()[0] == expected
    finally:
        connection.close()
    summary = read.grading.grading_summary(target, read.scope.Filters(players=("ann",)))
    assert summary["decisions"].sum() == expected and summary["fl_hands"].sum() == 1
    assert demo.load_demo_grades(target, tmp_path / "missing") == 0


def test_the_shipped_format_rebuilds_every_column(certain_db: Path, tmp_path: Path) -> None:
    """The compact files (sums only, no cards per row) load back to the rows ofc analyze wrote."""
    graded = tmp_path / "graded.duckdb"
    shutil.copy(certain_db, graded)
    analyze_database(graded, settings=GradeSettings(rollouts=12))
    folder = tmp_path / "grades"
    folder.mkdir()
    with store.open_database(graded, read_only=True) as connection:
        for table in demo.GRADE_FILES:
            columns = demo.SHIPPED_COLUMNS.get(table, "*")
            connection.execute(f"COPY (SELECT {columns} FROM {table}) TO "
                               f"'{folder / (table + '.parquet')}' (FORMAT parquet)")
    target = tmp_path / "target.duckdb"
    shutil.copy(certain_db, target)
    assert demo.load_demo_grades(target, folder) > 0
    order = "ORDER BY hand_key, player, street, alternative"
    columns = ("placement, top, middle, bottom, discards, samples, total, ev, se, diff, diff_se, "
               "eval_samples, eval_ev, eval_se, exact, is_best, is_chosen")
    rows = {}
    for name, database in (("original", graded), ("loaded", target)):
        connection = duckdb.connect(str(database), read_only=True)
        try:
            rows[name] = connection.execute(
                f"SELECT {columns} FROM decision_alternatives {order}").fetchall()
        finally:
            connection.close()
    assert len(rows["loaded"]) == len(rows["original"]) > 0
    for mine, theirs in zip(rows["loaded"], rows["original"], strict=True):
        assert mine[:5] == theirs[:5]
        for value, expected in zip(mine[5:], theirs[5:], strict=True):
            if isinstance(expected, float):
                assert value == pytest.approx(expected, rel=1e-9, abs=1e-9)
            else:
                assert value == expected


@pytest.mark.skipif(not (demo.SAMPLE_HANDS.exists() and demo.SAMPLE_GRADES.is_dir()),
                    reason="the sample data does not ship here")
def test_the_demo_database_is_graded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database = tmp_path / "demo.duckdb"
    demo.build_demo_database(database)
    everyone = read.scope.Filters()
    summary = read.grading.grading_summary(database, everyone)
    # every variant of the demo, several players, hundreds of decisions, exact ones among them
    assert set(summary["variant"]) == {"pineapple", "classic", "2-7-pineapple"}
    assert summary["decisions"].sum() >= 1000 and summary["exact"].sum() > 0
    assert summary["player"].n_unique() >= 5
    assert summary["hands"].sum() >= 300
    # the trainer has quizzes for the players, with their positions
    player = summary.sort("decisions", descending=True)["player"][0]
    quizzes = read.grading.trainer_quizzes(database, everyone.with_players([player]))
    assert quizzes.height > 0
    first = quizzes.row(0, named=True)
    position = read.grading.quiz_position(database, first["hand_key"], player, first["street"])
    assert (position["kind"] == "dealt").any()
    alternatives = read.grading.decision_alternatives(database, first["hand_key"], player,
                                                      first["street"])
    assert alternatives.height == first["alternatives"]
    # a new user's first look: both pages show grades
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    app = AppTest.from_file(str(Path(__file__).parents[2] / "dashboard" / "app.py"),
                            default_timeout=120)
    app.run()
    app.switch_page("views/decision_grading.py").run()
    assert not app.exception, [error.message for error in app.exception]
    assert not app.info  # no "nothing graded yet"
    assert {metric.label for metric in app.metric} >= {"EV loss / decision", "EV loss / hand"}
    app.switch_page("views/trainer.py").run()
    assert not app.exception, [error.message for error in app.exception]
    assert len(app.selectbox(key="trainer_pick").options) > 0
