"""The Fantasyland solver against brute force, and Fantasyland hands against the solver."""

from __future__ import annotations

import itertools
import random
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from pipeline import store
from pipeline.analysis.decisions import load_hands, select_hands
from pipeline.analysis.fantasyland import grade_fantasyland, solve_deal
from pipeline.rules.batch import evaluate_boards
from pipeline.rules.board import evaluate_board
from pipeline.rules.cards import parse_cards
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD, RuleSet, preset


@cache
def _partitions() -> np.ndarray:
    """Every split of 13 positions into top 3, middle 5, bottom 5: (72072, 13)."""
    rows = []
    positions = set(range(13))
    for top in itertools.combinations(range(13), 3):
        rest = sorted(positions - set(top))
        for middle in itertools.combinations(rest, 5):
            bottom = sorted(set(rest) - set(middle))
            rows.append((*top, *middle, *bottom))
    return np.asarray(rows, dtype=np.intp)


def brute_force(cards: tuple[int, ...], variant: Variant, rules: RuleSet, stay_value: float) -> float:
    """The best value over every legal board of every 13 of the cards (0 when all foul)."""
    best = 0.0
    partitions = _partitions()
    for kept in itertools.combinations(cards, 13):
        boards = np.asarray(kept, dtype=np.intp)[partitions]
        verdicts = evaluate_boards(boards, variant, rules, np.ones(len(boards), dtype=bool))
        values = verdicts.royalties.sum(axis=1) + stay_value * (verdicts.fantasyland_cards > 0)
        legal = ~verdicts.foul
        if legal.any():
            best = max(best, float(values[legal].max()))
    return best


def _check(cards: tuple[int, ...], variant: Variant, rules: RuleSet, stay_value: float) -> None:
    arrangement = solve_deal(cards, variant, rules, stay_value)
    assert arrangement.value == pytest.approx(brute_force(cards, variant, rules, stay_value))
    assert sorted(arrangement.top + arrangement.middle + arrangement.bottom
                  + arrangement.discards) == sorted(cards)
    if not arrangement.foul:
        verdict = evaluate_board(arrangement.top, arrangement.middle, arrangement.bottom,
                                 variant, rules, in_fantasyland=True)
        assert not verdict.foul
        assert arrangement.value == verdict.royalty_total + (
            stay_value if verdict.fantasyland_cards else 0)


@pytest.mark.parametrize("seed", range(5))
def test_thirteen_cards_equal_brute_force(seed: int) -> None:
    cards = tuple(random.Random(seed).sample(range(52), 13))
    _check(cards, Variant.CLASSIC, STANDARD, 10.0)


@pytest.mark.parametrize("seed", range(4))
def test_fourteen_cards_equal_brute_force(seed: int) -> None:
    cards = tuple(random.Random(100 + seed).sample(range(52), 14))
    _check(cards, Variant.PINEAPPLE, STANDARD, 10.0)


def test_strong_deals_and_other_rules_equal_brute_force() -> None:
    # made to stay: quads, trips and big pairs in the deal
    _check(parse_cards("As Ah Ad Ac Ks Kh Qd Qc 7s 7h 5d 4d 3d 2d"), Variant.PINEAPPLE, STANDARD, 10.0)
    _check(parse_cards("Qs Qh Qd Js Jh Jd 9c 8c 7c 6c 5c 2h 3s"), Variant.CLASSIC, STANDARD, 25.0)
    _check(parse_cards("7s 5h 4d 3c 2s Ks Kh 8d 8c Ad Ac 9h 9s Ts"), Variant.LOWBALL_PINEAPPLE,
           STANDARD, 10.0)
    _check(parse_cards("Ks Kh Kd 9c 9d 4s 4h Tc Jc Qc 2d 3d 6h 8s"), Variant.PINEAPPLE,
           preset("flat-trips"), 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2))
def test_fifteen_cards_equal_brute_force(seed: int) -> None:
    cards = tuple(random.Random(200 + seed).sample(range(52), 15))
    _check(cards, Variant.PINEAPPLE, preset("progressive"), 10.0)


def test_a_fantasyland_hand_against_the_solver(certain_db: Path) -> None:
    connection = store.connect(certain_db, read_only=True)
    try:
        hand = next(h for h in load_hands(connection, select_hands(connection)) if h.hand_id == "F")
    finally:
        connection.close()
    graded = grade_fantasyland(hand, hand.seat_of("ann"), STANDARD, 10.0)
    assert graded is not None
    assert len(graded.dealt) == 14
    assert not graded.played_foul and not graded.played_stays
    assert graded.played_royalties == 8 + 0 + 4 and graded.played_value == 12
    assert graded.solver.value == brute_force(graded.dealt, Variant.PINEAPPLE, STANDARD, 10.0)
    assert graded.points_given_up == graded.solver.value - 12 > 0
    row = graded.row()
    assert row["played_top"] == "Kh Kd Qs" and row["played_discards"] == "2c"
    assert row["points_given_up"] == graded.points_given_up
    # not a Fantasyland hand: nothing to compare
    assert grade_fantasyland(hand, hand.seat_of("bob"), STANDARD) is None
