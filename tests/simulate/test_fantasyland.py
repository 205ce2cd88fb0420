"""The Fantasyland setter is exact: it matches brute force over every arrangement of the cards."""

from __future__ import annotations

import itertools
import random
from functools import cache

import numpy as np
import pytest

from pipeline.rules.batch import evaluate_boards
from pipeline.rules.board import evaluate_board
from pipeline.rules.cards import parse_cards
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import RuleSet, preset, ruleset_from_mapping
from pipeline.solver.fantasyland import DEFAULT_STAY_VALUE, Arrangement, solve_fantasyland

STANDARD = preset("standard")
REQUALIFY = ruleset_from_mapping({"name": "requalify", "fantasyland": {"stay_requalify": True}})


@cache
def arrangements(count: int) -> np.ndarray:
    """Every way to pick top 3, middle 5 and bottom 5 of ``count`` card positions: (N, 13)."""
    rows = []
    positions = range(count)
    for top in itertools.combinations(positions, 3):
        rest = [position for position in positions if position not in top]
        for middle in itertools.combinations(rest, 5):
            left = [position for position in rest if position not in middle]
            for bottom in itertools.combinations(left, 5):
                rows.append(top + middle + bottom)
    return np.asarray(rows, dtype=np.int8)


def brute_force_value(cards: list[int], variant: Variant, rules: RuleSet, stay_value: float) -> float:
    """The best value over every legal arrangement, judged by the rules core (-1 when none is legal)."""
    boards = np.asarray(cards)[arrangements(len(cards))]
    verdicts = evaluate_boards(boards, variant, rules, np.ones(len(boards), dtype=bool))
    value = verdicts.royalties.sum(axis=1) + np.where(verdicts.fantasyland_cards > 0, stay_value, 0)
    value = np.where(verdicts.foul, -1, value)
    return float(value.max())


def check_arrangement(
    arrangement: Arrangement, cards: list[int], variant: Variant, rules: RuleSet, stay_value: float
) -> None:
    """The arrangement uses exactly the cards, and its claims agree with the rules core."""
    placed = arrangement.top + arrangement.middle + arrangement.bottom
    assert (len(arrangement.top), len(arrangement.middle), len(arrangement.bottom)) == (3, 5, 5)
    assert sorted(placed + arrangement.discards) == sorted(cards)
    verdict = evaluate_board(
        arrangement.top, arrangement.middle, arrangement.bottom, variant, rules, True
    )
    assert verdict.foul == arrangement.foul
    assert verdict.royalties == arrangement.royalties
    assert arrangement.stays == verdict.fantasyland_next
    if not arrangement.foul:
        expected = sum(verdict.royalties) + (stay_value if verdict.fantasyland_next else 0)
        assert arrangement.value == expected


CASES = [
    (Variant.CLASSIC, STANDARD, 13, 12),
    (Variant.PINEAPPLE, preset("flat-trips"), 13, 8),
    (Variant.PINEAPPLE, STANDARD, 14, 5),
    (Variant.LOWBALL_PINEAPPLE, STANDARD, 14, 4),
    (Variant.PINEAPPLE, preset("poker-arena-pineapple"), 14, 3),
    (Variant.PINEAPPLE, REQUALIFY, 14, 3),
]


@pytest.mark.parametrize(
    ("variant", "rules", "count", "deals"), CASES,
    ids=[f"{variant.value}-{rules.name}-{count}" for variant, rules, count, _ in CASES],
)
def test_matches_brute_force_on_random_deals(
    variant: Variant, rules: RuleSet, count: int, deals: int
) -> None:
    generator = random.Random(f"fantasyland-{variant.value}-{rules.name}-{count}")
    for _ in range(deals):
        cards = generator.sample(range(52), count)
        arrangement = solve_fantasyland(cards, variant, rules)
        check_arrangement(arrangement, cards, variant, rules, DEFAULT_STAY_VALUE)
        best = brute_force_value(cards, variant, rules, DEFAULT_STAY_VALUE)
        if best < 0:
            assert arrangement.foul
        else:
            assert arrangement.value == best, cards


@pytest.mark.parametrize("stay_value", [0, 3, 40])
def test_matches_brute_force_for_other_stay_values(stay_value: float) -> None:
    generator = random.Random(f"stay-{stay_value}")
    for _ in range(6):
        cards = generator.sample(range(52), 13)
        arrangement = solve_fantasyland(cards, Variant.PINEAPPLE, STANDARD, stay_value)
        check_arrangement(arrangement, cards, Variant.PINEAPPLE, STANDARD, stay_value)
        assert arrangement.value == brute_force_value(cards, Variant.PINEAPPLE, STANDARD, stay_value)


@pytest.mark.slow
def test_matches_brute_force_on_many_deals() -> None:
    generator = random.Random("fantasyland-many")
    for index in range(60):
        variant = (Variant.PINEAPPLE, Variant.LOWBALL_PINEAPPLE, Variant.CLASSIC)[index % 3]
        count = 13 if variant is Variant.CLASSIC else 14
        cards = generator.sample(range(52), count)
        arrangement = solve_fantasyland(cards, variant, STANDARD)
        check_arrangement(arrangement, cards, variant, STANDARD, DEFAULT_STAY_VALUE)
        assert arrangement.value == max(0, brute_force_value(cards, variant, STANDARD, 10))


def test_prefers_staying_when_the_stay_is_worth_more() -> None:
    # Trips on top (333 = 11, stays) or the aces' pair on top (9) with a full house below.
    cards = list(parse_cards("3c 3d 3h As Ad Kc Kd Qh Jh Th 9h 8h 2s 4c"))
    stay = solve_fantasyland(cards, Variant.PINEAPPLE, STANDARD, stay_value=30)
    assert stay.stays
    no_stay = solve_fantasyland(cards, Variant.PINEAPPLE, STANDARD, stay_value=0)
    assert no_stay.value >= stay.royalty_total


def test_a_known_best_board() -> None:
    # Royal flush bottom (25), quad nines middle (20, and "full house or better in the middle"
    # stays), aces on top (9): 54 plus the stay.
    cards = list(parse_cards("As Ks Qs Js Ts 9c 9d 9h 9s 2c Ac Ad 3h 4d"))
    arrangement = solve_fantasyland(cards, Variant.PINEAPPLE, STANDARD)
    assert arrangement.royalties == (9, 20, 25)
    assert arrangement.stays
    assert arrangement.value == 54 + DEFAULT_STAY_VALUE
    assert len(arrangement.discards) == 1


def test_progressive_seventeen_cards_is_legal_and_at_least_as_good_as_fourteen() -> None:
    rules = preset("progressive")
    generator = random.Random("seventeen")
    for _ in range(5):
        cards = generator.sample(range(52), 17)
        full = solve_fantasyland(cards, Variant.PINEAPPLE, rules)
        check_arrangement(full, cards, Variant.PINEAPPLE, rules, DEFAULT_STAY_VALUE)
        fewer = solve_fantasyland(cards[:14], Variant.PINEAPPLE, rules)
        assert full.value >= fewer.value
        assert len(full.discards) == 4


def test_lowball_without_a_low_fouls() -> None:
    # No five distinct ranks of ten or lower without a straight: every board fouls.
    cards = list(parse_cards("Ac Ad Ah As Kc Kd Kh Ks Qc Qd Qh Qs Jc Jd"))
    arrangement = solve_fantasyland(cards, Variant.LOWBALL_PINEAPPLE, STANDARD)
    assert arrangement.foul
    assert arrangement.value == 0
    check_arrangement(arrangement, cards, Variant.LOWBALL_PINEAPPLE, STANDARD, 10)


def test_is_deterministic_and_ignores_card_order_for_the_value() -> None:
    generator = random.Random("order")
    cards = generator.sample(range(52), 14)
    first = solve_fantasyland(cards, Variant.PINEAPPLE, STANDARD)
    assert solve_fantasyland(cards, Variant.PINEAPPLE, STANDARD) == first
    assert solve_fantasyland(list(reversed(cards)), Variant.PINEAPPLE, STANDARD).value == first.value


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        (list(range(12)), "13-17 cards"),
        (list(range(18)), "13-17 cards"),
        ([0] * 13, "distinct"),
        (list(range(40, 53)), "distinct card codes"),
    ],
)
def test_rejects_bad_deals(cards: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        solve_fantasyland(cards, Variant.PINEAPPLE, STANDARD)


def test_rejects_negative_royalties_and_stay_values() -> None:
    negative = ruleset_from_mapping({"name": "odd", "royalties": {"bottom": {"straight": -2}}})
    with pytest.raises(ValueError, match="non-negative royalties"):
        solve_fantasyland(list(range(13)), Variant.PINEAPPLE, negative)
    with pytest.raises(ValueError, match="stay_value"):
        solve_fantasyland(list(range(13)), Variant.PINEAPPLE, STANDARD, stay_value=-1)
