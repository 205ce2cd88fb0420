"""The grading questions of pipeline.read, checked against the stored rows."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import duckdb
import pytest

from pipeline import read
from pipeline.analysis.grade import GradeSettings
from pipeline.analysis.runner import analyze_database
from pipeline.read import charts


def test_grading_questions_match_the_stored_grades(simulated_db: Path) -> None:
    summary = analyze_database(simulated_db, hands=3, settings=GradeSettings(rollouts=6), jobs=1)
    assert summary.decisions > 0
    connection = duckdb.connect(str(simulated_db), read_only=True)
    try:
        rows = connection.execute(
            "SELECT player, hand_key, street, situation, ev_loss, mistake, rollouts, exact, "
            "policy_gap FROM decision_grades").fetchall()
    finally:
        connection.close()
    assert len(rows) == summary.decisions
    by_player: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        by_player[row[0]].append(row)
    frame = read.grading.grading_summary(simulated_db, read.scope.Filters())
    assert sorted(frame["player"].to_list()) == sorted(by_player)
    assert set(frame["variant"]) == {"pineapple"}  # one row per player and variant
    for shown in frame.iter_rows(named=True):
        mine = by_player[shown["player"]]
        losses = [row[4] for row in mine]
        hands = {row[1] for row in mine}
        assert shown["decisions"] == len(mine)
        assert shown["hands"] == len(hands)
        assert shown["mistakes"] == sum(row[5] for row in mine)
        assert shown["exact"] == sum(row[7] for row in mine)
        assert shown["correct_share"] == pytest.approx(1 - sum(row[5] for row in mine) / len(mine))
        assert shown["ev_loss_per_decision"] == pytest.approx(sum(losses) / len(losses))
        assert shown["ev_loss_per_hand"] == pytest.approx(sum(losses) / len(hands))
        mean = sum(losses) / len(losses)
        spread = math.sqrt(sum((x - mean) ** 2 for x in losses) / (len(losses) - 1) / len(losses))
        assert shown["ev_loss_se"] == pytest.approx(spread, abs=1e-9)
        # the loss per hand has its own error: the spread of the hands' summed losses
        per_hand = [sum(row[4] for row in mine if row[1] == key) for key in hands]
        hand_mean = sum(per_hand) / len(per_hand)
        hand_spread = (math.sqrt(sum((x - hand_mean) ** 2 for x in per_hand)
                                 / (len(per_hand) - 1) / len(per_hand)) if len(per_hand) > 1 else 0)
        assert shown["ev_loss_per_hand_se"] == pytest.approx(hand_spread, abs=1e-9)
        # the sampled ones (exact: every deal): 6, more where plays in contention raced on
        sampled = [row[6] for row in mine if not row[7]]
        assert shown["rollouts"] == pytest.approx(sum(sampled) / len(sampled))
        assert set(sampled) <= {6, 12, 24}
        # the gap to the rollout policy's own play: measured in every decision (expert policy)
        gaps = [row[8] for row in mine]
        assert None not in gaps and shown["policy_decisions"] == len(gaps)
        assert shown["policy_gap_per_decision"] == pytest.approx(sum(gaps) / len(gaps))
        gap_mean = sum(gaps) / len(gaps)
        gap_spread = math.sqrt(sum((x - gap_mean) ** 2 for x in gaps) / (len(gaps) - 1)
                               / len(gaps))
        assert shown["policy_gap_se"] == pytest.approx(gap_spread, abs=1e-9)
    hero = frame["player"][0]
    streets = read.grading.grading_by_street(simulated_db, read.scope.Filters(players=(hero,)))
    assert set(streets["player"]) == {hero}
    assert streets["decisions"].sum() == len(by_player[hero])
    for shown in streets.iter_rows(named=True):
        mine = [row for row in by_player[hero] if row[2] == shown["street"]]
        assert shown["decisions"] == len(mine)
        assert shown["total_loss"] == pytest.approx(sum(row[4] for row in mine))
        street_gaps = [row[8] for row in mine]
        assert shown["policy_decisions"] == len(street_gaps)
        assert shown["policy_gap_per_decision"] == pytest.approx(sum(street_gaps) / len(street_gaps))
    # the chart: the EV loss and, for one player, the gap to the grader's bot beside it
    figure = charts.ev_loss_bars(streets, "street", "EV loss by street")
    assert [trace.name for trace in figure.data] == ["EV loss", "behind the grader's bot"]
    assert list(figure.data[1].y) == pytest.approx(streets["policy_gap_per_decision"].to_list())
    everyone = read.grading.grading_by_street(simulated_db, read.scope.Filters())
    several = charts.ev_loss_bars(everyone, "street", "EV loss by street")
    assert sorted(trace.name for trace in several.data) == sorted(by_player)  # no gap series
    situations = read.grading.grading_by_situation(simulated_db, read.scope.Filters(players=(hero,)))
    assert situations["decisions"].sum() == len(by_player[hero])
    assert set(situations["situation"]) <= {"fantasyland_made", "fantasyland_draw", "standard"}
    worst = read.grading.worst_decisions(simulated_db, read.scope.Filters(), limit=5)
    assert worst["ev_loss"].to_list() == sorted((row[4] for row in rows), reverse=True)[:5]
    assert worst["policy_gap"].null_count() == 0
    top = worst.row(0, named=True)
    alternatives = read.grading.decision_alternatives(simulated_db, top["hand_key"], top["player"],
                                                 top["street"])
    assert alternatives.height == top["alternatives"]
    assert alternatives.filter(alternatives["is_best"])["placement"].to_list() == [top["best_placement"]]
    # a date filter that keeps nothing
    empty = read.grading.grading_summary(simulated_db, read.scope.Filters(variants=("classic",)))
    assert empty.is_empty()


def test_before_any_grading_the_questions_answer_empty(certain_db: Path) -> None:
    assert read.grading.grading_summary(certain_db, read.scope.Filters()).is_empty()
    assert read.grading.worst_decisions(certain_db, read.scope.Filters()).is_empty()
    assert read.grading.fantasyland_comparisons(certain_db, read.scope.Filters()).is_empty()


def test_grades_written_before_the_policy_gap_read_as_unmeasured(simulated_db: Path,
                                                                  tmp_path: Path) -> None:
    """A database graded before the gap was measured (no such columns, opened read-only, as
    the dashboard does): the summary answers with the gap unmeasured, the rest unchanged."""
    import shutil

    database = tmp_path / "older.duckdb"
    shutil.copy(simulated_db, database)
    analyze_database(database, hands=2, settings=GradeSettings(rollouts=6), jobs=1)
    current = read.grading.grading_summary(database, read.scope.Filters())
    connection = duckdb.connect(str(database))
    try:
        for column in ("policy_alternative", "policy_gap", "policy_gap_se"):
            connection.execute(f"ALTER TABLE decision_grades DROP COLUMN {column}")
    finally:
        connection.close()
    older = read.grading.grading_summary(database, read.scope.Filters())
    assert older.drop("policy_decisions", "policy_gap_per_decision", "policy_gap_se").equals(
        current.drop("policy_decisions", "policy_gap_per_decision", "policy_gap_se"))
    assert older["policy_decisions"].to_list() == [0] * older.height
    worst = read.grading.worst_decisions(database, read.scope.Filters(), limit=5)
    assert worst["policy_gap"].null_count() == worst["policy_alternative"].null_count() == 5
    assert older["policy_gap_per_decision"].null_count() == older.height
    assert current["policy_decisions"].min() > 0
    # one hand's grades too: the bot's play unnamed, the rest as stored
    key = worst["hand_key"][0]
    hand = read.grading.hand_grades(database, key)
    assert hand.height > 0 and hand["policy_placement"].null_count() == hand.height
    assert hand["policy_gap"].null_count() == hand.height
    assert key in read.hands.hand_list(database, read.scope.Filters(),
                                       read.scope.HandFlags(graded=True))["hand_key"].to_list()


def test_one_hands_grades_and_the_graded_flag(simulated_db: Path, tmp_path: Path) -> None:
    """The hand browser's questions: the grades of one hand are its stored rows, the bot's play
    named from its alternatives; the graded flag keeps exactly the hands with a grade (a hero's,
    when one is chosen)."""
    import shutil

    connection = duckdb.connect(str(simulated_db), read_only=True)
    try:
        player, other = (row[0] for row in connection.execute(
            "SELECT DISTINCT player FROM seats ORDER BY player LIMIT 2").fetchall())
    finally:
        connection.close()
    analyze_database(simulated_db, player=player, hands=2, settings=GradeSettings(rollouts=6),
                     jobs=1)
    connection = duckdb.connect(str(simulated_db), read_only=True)
    try:
        stored = connection.execute(
            "SELECT g.hand_key, g.street, g.ev_loss, g.mistake, g.chosen_placement, a.placement "
            "FROM decision_grades g JOIN decision_alternatives a USING (hand_key, player, street) "
            "WHERE a.alternative = g.policy_alternative ORDER BY g.hand_key, g.street").fetchall()
        others = [row[0] for row in connection.execute(
            "SELECT hand_key FROM hands EXCEPT SELECT hand_key FROM decision_grades").fetchall()]
    finally:
        connection.close()
    graded = sorted({row[0] for row in stored})
    assert len(graded) == 2 and others
    for key in graded:
        frame = read.grading.hand_grades(simulated_db, key)
        mine = [row for row in stored if row[0] == key]
        assert frame["player"].to_list() == [player] * len(mine)
        assert frame["street"].to_list() == [row[1] for row in mine]
        assert frame["ev_loss"].to_list() == pytest.approx([row[2] for row in mine])
        assert frame["mistake"].to_list() == [row[3] for row in mine]
        assert frame["chosen_placement"].to_list() == [row[4] for row in mine]
        assert frame["policy_placement"].to_list() == [row[5] for row in mine]
    assert read.grading.hand_grades(simulated_db, others[0]).is_empty()

    flagged = read.hands.hand_list(simulated_db, read.scope.Filters(),
                                   read.scope.HandFlags(graded=True))
    assert sorted(flagged["hand_key"].to_list()) == graded
    assert flagged["total"].to_list() == [2, 2]
    hero = read.hands.hand_list(simulated_db, read.scope.Filters(players=(player,)),
                                read.scope.HandFlags(graded=True))
    assert sorted(hero["hand_key"].to_list()) == graded
    assert read.hands.hand_list(simulated_db, read.scope.Filters(players=(other,)),
                                read.scope.HandFlags(graded=True)).is_empty()
    # a database nobody graded: no hand is graded, and no question fails
    fresh = tmp_path / "ungraded.duckdb"
    shutil.copy(simulated_db, fresh)
    connection = duckdb.connect(str(fresh))
    try:
        connection.execute("DROP TABLE decision_grades")
    finally:
        connection.close()
    assert read.hands.hand_list(fresh, read.scope.Filters(),
                                read.scope.HandFlags(graded=True)).is_empty()
    assert read.grading.hand_grades(fresh, graded[0]).is_empty()
