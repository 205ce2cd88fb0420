"""Grading decisions: certain positions, convergence, refinement and reproducibility."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline import store
from pipeline.analysis.decisions import (
    HandView,
    SeatPlay,
    StreetPlay,
    decision_at,
    load_hands,
    select_hands,
)
from pipeline.analysis.grade import GradeSettings, grade_decision
from pipeline.analysis.rollout import FANTASYLAND_GROUP, Rollouts
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD
from pipeline.solver.fantasyland import solve_fantasyland


def _hands(database: Path, limit: int | None = None) -> dict[str, HandView]:
    connection = store.connect(database, read_only=True)
    try:
        return {hand.hand_id: hand for hand in load_hands(connection, select_hands(connection, limit=limit))}
    finally:
        connection.close()


def _last_street(database: Path, hand_id: str):  # noqa: ANN202
    hand = _hands(database)[hand_id]
    return decision_at(hand, hand.seat_of("ann"), 4)


def test_the_decision_sees_what_the_player_saw(certain_db: Path) -> None:
    decision = _last_street(certain_db, "A")
    assert decision.player == "ann" and decision.street_number == 5 and decision.last_street
    assert len(decision.dealt) == 3 and decision.discards == 1
    # ann acts first (left of the button): bob's fifth street is not seen yet
    bob = decision.visible[decision.hand.seat_of("bob")]
    assert sum(len(row) for row in bob) == 11
    # own 11 cards + 3 dealt + 3 own discards + bob's 11 placed
    assert len(decision.known) == 28 and len(decision.unseen) == 24
    assert decision.plan.current == ((1, 0, 3, 1),) and decision.plan.future == ()


def test_a_certain_foul_is_a_mistake(certain_db: Path) -> None:
    grade = grade_decision(_last_street(certain_db, "A"), STANDARD, GradeSettings(rollouts=40))
    assert grade is not None
    chosen = grade.alternatives[grade.chosen]
    assert chosen.describe() == "top Kh · middle 2c · bottom – · discard 5d"
    best = grade.alternatives[grade.best]
    assert "Kh" not in " ".join(map(str, best.placed[0]))
    assert best.placed[0] and best.placed[0][0] >> 2 != 11  # no king on top
    assert grade.mistake
    assert grade.ev_loss > 6  # at least the foul's six points against a legal board
    assert grade.ev_loss > grade.z * grade.loss_se
    # every placement with the king on top fouls: worth the same as the chosen one
    for alternative, tally in zip(grade.alternatives, grade.tallies, strict=True):
        king_on_top = any(card >> 2 == 11 for card in alternative.placed[0])
        if king_on_top:
            assert tally.diff == 0.0
        else:
            assert tally.diff > 6


def test_a_placement_that_cannot_foul_is_graded_correct(certain_db: Path) -> None:
    grade = grade_decision(_last_street(certain_db, "B"), STANDARD, GradeSettings(rollouts=40))
    assert grade is not None
    assert grade.alternatives[grade.chosen].describe() == "top 2c · middle Kh · bottom – · discard 5d"
    assert grade.exact  # bob still has to play his last street: 2,024 deals, every one played
    assert not grade.mistake
    # the best play keeps the king in the middle too; what it discards matters a few hundredths
    best = grade.alternatives[grade.best]
    assert all(card >> 2 != 11 for card in best.placed[0])
    assert 0.0 <= grade.ev_loss < GradeSettings().min_loss
    assert grade.situation == "standard"


def _a_decision(database: Path, street: int = 1):  # noqa: ANN202
    hand = next(iter(_hands(database, 1).values()))
    seat = next(index for index, seat in enumerate(hand.seats) if not seat.fantasyland)
    return decision_at(hand, seat, street)


def test_standard_errors_shrink_as_one_over_root_n(simulated_db: Path) -> None:
    decision = _a_decision(simulated_db)
    small = grade_decision(decision, STANDARD, GradeSettings(rollouts=25, screen=0))
    large = grade_decision(decision, STANDARD, GradeSettings(rollouts=400, screen=0))
    assert small is not None and large is not None
    ratios = []
    for before, after in zip(small.tallies, large.tallies, strict=True):
        assert after.samples == 400
        if before.se > 0 and math.isfinite(before.se):
            ratios.append(after.se / before.se)
            # the small run's estimate is within reach of the large one's
            assert abs(before.ev - after.ev) < 5 * before.se + 1e-9
    assert ratios
    mean_ratio = sum(ratios) / len(ratios)
    assert 0.15 < mean_ratio < 0.4  # sqrt(25 / 400) = 0.25


def test_more_rollouts_refine_the_stored_sums(simulated_db: Path) -> None:
    decision = _a_decision(simulated_db, street=2)
    # without the contender race and with a fixed evaluation count (tests/analysis/test_race.py
    # refines raced sums)
    settings = GradeSettings(rollouts=12, screen=0, seed=4, contenders=0, evaluation_se=0.0)
    first = grade_decision(decision, STANDARD, settings)
    assert first is not None
    prior = {alternative.describe(): (tally, evaluated) for alternative, tally, evaluated
             in zip(first.alternatives, first.tallies, first.evaluations, strict=True)}
    more = replace(settings, rollouts=40)
    refined = grade_decision(decision, STANDARD, more, prior)
    direct = grade_decision(decision, STANDARD, more)
    assert refined is not None and direct is not None
    added = sum(after.samples - before.samples for after, before in zip(
        refined.tallies + refined.evaluations, first.tallies + first.evaluations, strict=True))
    assert refined.new_samples == added >= 28 * len(refined.alternatives)
    for mine, theirs in zip(refined.tallies, direct.tallies, strict=True):
        assert mine.samples == theirs.samples == 40
        assert mine.total == pytest.approx(theirs.total)
        assert mine.total_sq == pytest.approx(theirs.total_sq)
        assert mine.diff_total == pytest.approx(theirs.diff_total, abs=1e-9)
    # the evaluation stream too: the same play selected, the same fresh samples behind the loss
    assert (refined.best, refined.ev_loss) == (direct.best, pytest.approx(direct.ev_loss))
    for mine, theirs in zip(refined.evaluations, direct.evaluations, strict=True):
        if theirs.samples:
            assert mine.samples == theirs.samples == more.evaluation_samples == 67
            assert mine.diff_total == pytest.approx(theirs.diff_total, abs=1e-9)
    # asking for no more than is stored adds nothing
    again = grade_decision(decision, STANDARD, more, {
        alternative.describe(): (tally, evaluated) for alternative, tally, evaluated
        in zip(refined.alternatives, refined.tallies, refined.evaluations, strict=True)})
    assert again is not None and again.new_samples == 0


def test_a_fixed_seed_gives_fixed_results(simulated_db: Path) -> None:
    decision = _a_decision(simulated_db, street=1)
    runs = [grade_decision(decision, STANDARD, GradeSettings(rollouts=16, seed=seed))
            for seed in (7, 7, 8)]
    assert all(run is not None for run in runs)
    same = [(t.samples, t.total, t.diff_total) for t in runs[0].tallies]
    assert same == [(t.samples, t.total, t.diff_total) for t in runs[1].tallies]
    assert same != [(t.samples, t.total, t.diff_total) for t in runs[2].tallies]
    assert (runs[0].best, runs[0].ev_loss) == (runs[1].best, runs[1].ev_loss)


def test_samples_do_not_depend_on_where_a_run_starts(simulated_db: Path) -> None:
    decision = _a_decision(simulated_db, street=1)
    options = decision.alternatives().alternatives[:3]
    whole = Rollouts(decision, STANDARD, 0, 10, seed=2).values(options)
    tail = Rollouts(decision, STANDARD, 4, 10, seed=2).values(options)
    assert (whole[:, 4:] == tail).all()
    assert (Rollouts(decision, STANDARD, 0, 10, seed=2).values(options, 2, 5) == whole[:, 2:5]).all()


def test_racing_keeps_the_chosen_placement_at_full_count(simulated_db: Path) -> None:
    decision = _a_decision(simulated_db, street=0)
    # the screening alone (no contender race past the full count)
    grade = grade_decision(decision, STANDARD, GradeSettings(rollouts=64, screen=8,
                                                             contenders=0))
    assert grade is not None
    assert grade.tallies[grade.chosen].samples == 64
    assert grade.tallies[grade.best].samples == 64
    counts = [tally.samples for tally in grade.tallies]
    assert min(counts) >= 8
    assert sum(counts) < 64 * len(counts)  # clearly worse placements stopped early
    assert len(grade.alternatives) == 232 or grade.legal == 232
    # with the race (the default, on the opening too): the chosen and the best play run at
    # least the full count, the plays screened out no more than before
    raced = grade_decision(decision, STANDARD, GradeSettings(rollouts=64, screen=8))
    assert raced is not None
    assert raced.tallies[raced.chosen].samples >= 64
    assert raced.tallies[raced.best].samples >= 64
    assert max(tally.samples for tally in raced.tallies) > 64  # the race ran on the opening
    screened = {index for index, tally in enumerate(grade.tallies) if tally.samples < 64}
    assert screened  # some plays were clearly worse
    assert {index for index, tally in enumerate(raced.tallies) if tally.samples < 64} <= screened


def test_an_opponent_in_fantasyland_is_dealt_from_the_unseen_cards(certain_db: Path) -> None:
    hand = _hands(certain_db)["F"]
    decision = decision_at(hand, hand.seat_of("bob"), 2)
    ann = hand.seat_of("ann")
    assert decision.visible[ann] is None  # set in private
    assert decision.plan.fantasyland == ((ann, 0, 14),)
    rollouts = Rollouts(decision, STANDARD, 3, 13, seed=5)
    for sample in rollouts.deck:
        assert len(set(sample.tolist())) == len(sample)
        assert not set(sample.tolist()) & decision.known
    boards = rollouts.opponents.cards[rollouts.opponents.seats.index(ann)]
    groups = [(3 + index) // FANTASYLAND_GROUP for index in range(10)]
    for index, group in enumerate(groups):
        same = [other for other, other_group in enumerate(groups) if other_group == group]
        assert all((boards[other] == boards[index]).all() for other in same)
        # the Fantasyland cards are the first 14 of the sample's deck, the rest follow
        assert set(boards[index].tolist()) <= set(rollouts.deck[index, :14].tolist())
        # set as the exact setter sets them
        solved = solve_fantasyland(rollouts.deck[index, :14].tolist(), Variant.PINEAPPLE,
                                   STANDARD, rollouts.fantasyland_value)
        assert boards[index].tolist() == [*solved.top, *solved.middle, *solved.bottom]
    assert len({tuple(board) for board in boards.tolist()}) == len(set(groups))
    values = rollouts.values(decision.alternatives().alternatives[:2])
    assert values.shape == (2, 10)
    # more samples: a group begun in the first batch keeps its board in the next
    rollouts.grow(19)
    grown = rollouts.opponents.cards[rollouts.opponents.seats.index(ann)]
    assert (grown[:10] == boards).all()
    for index in range(10, 16):
        group = (3 + index) // FANTASYLAND_GROUP
        same = [other for other in range(16) if (3 + other) // FANTASYLAND_GROUP == group]
        assert all((grown[other] == grown[index]).all() for other in same)


def test_two_opponents_in_fantasyland_split_their_cards_at_random() -> None:
    deck = list(range(51, -1, -1))

    def fantasyland(name: str, position: int, cards: list[int]) -> SeatPlay:
        placed = tuple((card, 0 if index < 3 else 1 if index < 8 else 2)
                       for index, card in enumerate(cards[:13]))
        return SeatPlay(name, position, True, 14, (StreetPlay(placed, tuple(cards[13:])),))

    hero = SeatPlay("hero", 0, False, 17, (StreetPlay(
        tuple((card, row) for card, row in zip(deck[:5], (2, 2, 1, 1, 0), strict=True)), ()),))
    hand = HandView(1, "two-fl", Variant.PINEAPPLE, "standard",
                    (hero, fantasyland("a", 1, deck[5:19]), fantasyland("b", 2, deck[19:33])))
    decision = decision_at(hand, 0, 0)
    assert decision.plan.fantasyland == ((1, 0, 14), (2, 14, 14))
    rollouts = Rollouts(decision, STANDARD, 0, 40, seed=1)
    first, second = rollouts.deck[:, :14], rollouts.deck[:, 14:28]
    # neither opponent gets the low half of the Fantasyland cards every time
    assert not (first.max(axis=1) < second.min(axis=1)).any()
    assert not (second.max(axis=1) < first.min(axis=1)).any()
    for sample in rollouts.deck:
        assert len(set(sample.tolist())) == len(sample)
