"""Model error shown: a mistake is measured again under a second continuation, and a verdict that
does not hold there is *uncertain*: never a mistake, never a quiz. Outdated grades (an older
grader, another rollout policy) are recognised, left out of the figures and regraded."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline import read, store
from pipeline.analysis import rollout
from pipeline.analysis.decisions import decision_at, load_hands, select_hands
from pipeline.analysis.grade import SECOND_POLICY, GradeSettings, grade_decision
from pipeline.analysis.runner import analyze_database
from pipeline.cli import analyze
from pipeline.rules.ruleset import STANDARD
from tests.analysis.hands import database_decisions, query_rows

QUICK = GradeSettings(rollouts=24, evaluation=48, contenders=0, evaluation_se=0.0,
                      second_samples=48)
FLIPPING = replace(QUICK, second_policy="random")
"""A second continuation that plays at random: after it, most plays are worth about the same
(a random finish fouls whatever came before), so many mistakes of the expert's continuation
do not hold under it."""


@pytest.fixture(scope="module")
def flipped(simulated_source: list[dict], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The simulated hands, everyone graded with the random second continuation."""
    from tests.analysis.hands import build_database

    database = build_database(tmp_path_factory.mktemp("uncertain"), simulated_source,
                              name="uncertain")
    analyze_database(database, settings=FLIPPING, hands=6)
    return database


def test_a_verdict_that_flips_is_uncertain_never_a_mistake(flipped: Path) -> None:
    rows = query_rows(flipped, "SELECT mistake, uncertain, ev_loss, loss_se, z, second_loss, "
                          "second_policy, exact FROM decision_grades")
    uncertain = [row for row in rows if row[1]]
    assert len(uncertain) >= 3, "no verdict flipped under the random continuation"
    for mistake, is_uncertain, loss, loss_se, z, second, second_policy, _exact in rows:
        assert not (mistake and is_uncertain)
        if second is None:  # no second look: only mistakes by the rollout policy get one
            assert not is_uncertain and second_policy is None
            continue
        assert second_policy == "random"
        # looked at: the rollout policy's verdict was a mistake (a loss beyond the noise) ...
        assert loss > max(z * loss_se, FLIPPING.min_loss) - 1e-9
        # ... which stands only when the second continuation confirms it
        assert is_uncertain == (second < FLIPPING.min_loss)
        assert mistake == (not is_uncertain)
    # and some hold under both continuations
    assert any(row[0] for row in rows)


def test_the_trainer_never_quizzes_an_uncertain_verdict(flipped: Path) -> None:
    everyone = read.scope.Filters()
    quizzes = read.grading.trainer_quizzes(flipped, everyone, limit=500)
    keys = {(row["hand_key"], row["player"], row["street"]) for row in quizzes.iter_rows(named=True)}
    uncertain = {tuple(row) for row in query_rows(
        flipped, "SELECT hand_key, player, street FROM decision_grades WHERE uncertain")}
    mistakes = {tuple(row) for row in query_rows(
        flipped, "SELECT hand_key, player, street FROM decision_grades WHERE mistake")}
    assert uncertain and not keys & uncertain
    assert keys == mistakes
    summary = read.grading.grading_summary(flipped, everyone)
    assert summary["uncertain"].sum() == len(uncertain)
    assert summary["mistakes"].sum() == len(mistakes)
    by_street = read.grading.grading_by_street(flipped, everyone)
    assert by_street["uncertain"].sum() == len(uncertain)


def test_a_certain_mistake_holds_under_any_continuation(certain_db: Path) -> None:
    """Hand A: ann's last street fouls for sure whatever anyone plays after it (exact)."""
    connection = store.connect(certain_db, read_only=True)
    try:
        hand = {view.hand_id: view for view in load_hands(connection, select_hands(connection))}["A"]
    finally:
        connection.close()
    decision = decision_at(hand, hand.seat_of("ann"), 4)
    for second in ("random", "solid", "chaser"):
        grade = grade_decision(decision, STANDARD, replace(QUICK, second_policy=second))
        assert grade is not None and grade.mistake and not grade.uncertain
        assert grade.second_loss is not None and grade.second_loss > 6
    unlooked = grade_decision(decision, STANDARD, replace(QUICK, second_policy=None))
    assert unlooked is not None and unlooked.mistake and unlooked.second_loss is None


def test_outdated_grades_are_recognised_left_out_and_regraded(simulated_db: Path,
                                                              tmp_path: Path) -> None:
    everyone = read.scope.Filters()
    # graded with another rollout policy: every grade is outdated, no figure counts it
    analyze_database(simulated_db, settings=replace(QUICK, policy="solid"), hands=3)
    decisions, hands = read.grading.outdated_summary(simulated_db)
    assert decisions > 0 and hands == 3
    assert read.grading.grading_summary(simulated_db, everyone)["decisions"].sum() == 0
    assert read.grading.trainer_quizzes(simulated_db, everyone).is_empty()
    outdated_hand = query_rows(simulated_db, "SELECT hand_key FROM decision_grades LIMIT 1")[0][0]
    shown = read.grading.hand_grades(simulated_db, outdated_hand)
    assert shown["outdated"].all()
    # grades of this grader for three other hands count; the outdated ones still do not
    analyze_database(simulated_db, settings=QUICK, hands=6)
    # (the six most recent hands include the three outdated ones: regraded too)
    assert read.grading.outdated_summary(simulated_db) == (0, 0)
    graded = read.grading.grading_summary(simulated_db, everyone)["decisions"].sum()
    assert graded == query_rows(simulated_db, "SELECT count(*) FROM decision_grades")[0][0]
    # an older grader: rows of an earlier version (or none recorded) are outdated too
    copy = tmp_path / "older.duckdb"
    shutil.copy(simulated_db, copy)
    connection = store.connect(copy)
    try:
        connection.execute("UPDATE decision_grades SET grader_version = NULL WHERE hand_key IN "
                           "(SELECT hand_key FROM decision_grades ORDER BY hand_key LIMIT 1)")
        connection.execute("UPDATE decision_grades SET grader_version = ? WHERE hand_key IN "
                           "(SELECT DISTINCT hand_key FROM decision_grades ORDER BY hand_key "
                           "LIMIT 1 OFFSET 1)", [store.GRADER_VERSION - 1])
        before = connection.execute("SELECT count(*) FROM decision_grades").fetchone()[0]
    finally:
        connection.close()
    decisions, hands = read.grading.outdated_summary(copy)
    assert hands == 2 and 0 < decisions < before
    assert read.grading.grading_summary(copy, everyone)["decisions"].sum() == before - decisions
    # ofc analyze --outdated regrades exactly those two hands
    summary = analyze_database(copy, settings=QUICK, outdated=True)
    assert summary.hands == 2
    assert read.grading.outdated_summary(copy) == (0, 0)
    assert read.grading.grading_summary(copy, everyone)["decisions"].sum() == before


def test_a_database_graded_before_grader_versions_is_outdated(simulated_db: Path) -> None:
    analyze_database(simulated_db, settings=QUICK, hands=2)
    connection = store.connect(simulated_db)
    try:  # as an older grader wrote it: no version, no second look
        for column in ("grader_version", "uncertain", "second_policy", "second_loss",
                       "second_loss_se"):
            connection.execute(f"ALTER TABLE decision_grades DROP COLUMN {column}")
        connection.execute("UPDATE meta SET value = 'old' WHERE key = 'schema_fingerprint'")
        total = connection.execute("SELECT count(*) FROM decision_grades").fetchone()[0]
    finally:
        connection.close()
    # read as it is (read-only: not migrated): every grade outdated, the figures empty
    assert read.grading.outdated_summary(simulated_db) == (total, 2)
    assert read.grading.grading_summary(simulated_db, read.scope.Filters())["decisions"].sum() == 0
    # the next write migrates the table and ofc analyze --outdated regrades both hands
    summary = analyze_database(simulated_db, settings=QUICK, outdated=True)
    assert summary.hands == 2 and read.grading.outdated_summary(simulated_db) == (0, 0)


def test_the_grader_constants_agree() -> None:
    assert store.GRADER_POLICY == rollout.DEFAULT_POLICY == analyze.DEFAULT_POLICY
    assert analyze.DEFAULT_SECOND_POLICY == SECOND_POLICY == GradeSettings().second_policy


def test_the_second_look_stops_once_its_verdict_is_clear(simulated_db: Path) -> None:
    """Staged (a quarter, half, all of its samples), the second look stops at the first stage
    whose loss is ``second_z`` SEs from the mistake line; on these decisions that changes no
    verdict, and a look that stopped measured what a look of that many samples measures."""
    full = replace(FLIPPING, second_samples=200, second_z=0.0)
    staged = replace(full, second_z=3.0)
    decisions = database_decisions(simulated_db, streets=(1, 2, 3))
    looked = stopped = 0
    for decision in decisions:
        everything = grade_decision(decision, STANDARD, full)
        early = grade_decision(decision, STANDARD, staged)
        assert everything is not None and early is not None
        assert (early.mistake, early.uncertain) == (everything.mistake, everything.uncertain)
        if everything.second_loss is None:
            assert early.second_loss is None
            continue
        looked += 1
        assert everything.second_samples == 2 * 200
        used = early.second_samples // 2
        assert used in (50, 100, 200)
        if used == 200:
            assert early.second_loss == everything.second_loss
            continue
        stopped += 1
        assert 0 < 3.0 * early.second_loss_se <= abs(early.second_loss - staged.min_loss)
        # the stage's samples are the stream's first ones: a look of that many samples
        alone = grade_decision(decision, STANDARD, replace(full, second_samples=used))
        assert alone is not None
        assert (alone.second_loss, alone.second_loss_se) == (early.second_loss,
                                                             early.second_loss_se)
    assert looked >= 5 and stopped >= 3, (looked, stopped)
