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


@pytest.mark.skipif(not (demo.SAMPLE_HANDS.exists() and demo.SAMPLE_GRADES.is_dir()),
                    reason="the sample data does not ship here")
def test_the_demo_database_is_graded(tmp_path: Path) -> None:
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
