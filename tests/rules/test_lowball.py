"""2-7 Pineapple (docs/rules.md, "Fouls" and "Royalties"): the middle is a 2-7 low that must be
ten-high or better (no pair, straight or flush; the ace is always high), the bottom must beat the
top, and the middle pays 9-high 1, 8-high 2, 7-high 4, 7-5-4-3-2 8.

Reading (the spec does not say otherwise): top and bottom royalties follow the standard table."""

from __future__ import annotations

import pytest

from pipeline.rules.cards import parse_cards
from pipeline.rules.ruleset import preset
from pipeline.rules.scoring import score_pair
from pipeline.rules.values import LowClass, evaluate_low, low_class
from tests.rules import reference
from tests.rules.helpers import CLASSIC, LOWBALL, board

STANDARD = preset("standard")


def low(text: str) -> int:
    return evaluate_low(parse_cards(text))


# K-Q-J high top (three to a flush is nothing) and a two-pair bottom: the bottom beats the top
# and neither has a royalty, so only the middle decides foul and royalty.
def lowball_board(middle: str):
    return board(f"Ks Qs Js / {middle} / Ah Ad Kh Kd 9s", LOWBALL)


@pytest.mark.parametrize(
    ("middle", "low_class_name", "royalty"),
    [
        ("Tc 9d 8h 7s 5c", "ten_low", 0),  # the worst qualifying low (T-9-8-7-6 is a straight)
        ("Tc 4d 3h 2s 5c", "ten_low", 0),
        ("9c 7d 5h 3s 2c", "nine_low", 1),
        ("9c 8d 7h 6s 4c", "nine_low", 1),
        ("8c 6d 4h 3s 2c", "eight_low", 2),
        ("8c 7d 6h 5s 3c", "eight_low", 2),
        ("7c 6d 4h 3s 2c", "seven_low", 4),
        ("7c 6d 5h 4s 2c", "seven_low", 4),  # 7-6-5-4-2 is no straight
        ("7c 5d 4h 3s 2c", "perfect_low", 8),  # 7-5-4-3-2
    ],
)
def test_qualifying_middles_and_royalties(middle, low_class_name, royalty):
    verdict = lowball_board(middle)
    assert not verdict.foul
    assert verdict.classes[1] == low_class_name
    assert low_class(low(middle)).label == low_class_name
    assert verdict.royalties == (0, royalty, 0)


@pytest.mark.parametrize(
    ("middle", "why"),
    [
        ("Jc 7d 5h 3s 2c", "jack-low"),
        ("Kc 5d 4h 3s 2c", "king-low"),
        ("8c 8d 5h 3s 2c", "pair"),
        ("8c 8d 5h 5s 2c", "two pair"),
        ("8c 8d 8h 3s 2c", "trips"),
        ("7c 6d 5h 4s 3c", "seven-high straight"),
        ("6c 5d 4h 3s 2c", "six-high straight"),
        ("Tc 9d 8h 7s 6c", "ten-high straight"),
        ("8h 6h 4h 3h 2h", "flush (would be an 8-low)"),
        ("7d 5d 4d 3d 2d", "flush (would be the perfect low)"),
        ("Ac 2d 3h 4s 5c", "A-2-3-4-5: the ace is high, so ace-high"),
        ("Ac 7d 5h 3s 2c", "ace-high"),
    ],
)
def test_non_qualifying_middles_foul(middle, why):
    verdict = lowball_board(middle)
    assert verdict.foul, why
    assert verdict.classes[1] == "no_low", why
    assert "middle" in verdict.foul_reason, why
    assert verdict.royalties == (0, 0, 0), why
    assert low(middle) == 0, why
    assert low_class(low(middle)) is LowClass.NO_LOW, why


def test_lower_lows_are_better():
    # best first
    ladder = [
        "7c 5d 4h 3s 2c",
        "7c 6d 4h 3s 2c",
        "7c 6d 5h 3s 2c",
        "7c 6d 5h 4s 2c",
        "8c 5d 4h 3s 2c",
        "8c 6d 4h 3s 2c",
        "8c 6d 5h 4s 2c",
        "8c 7d 6h 5s 3c",
        "9c 5d 4h 3s 2c",
        "9c 8d 7h 6s 4c",
        "Tc 5d 4h 3s 2c",
        "Tc 9d 8h 7s 5c",
    ]
    values = [low(text) for text in ladder]
    assert values == sorted(values, reverse=True)
    assert len(set(values)) == len(values)
    assert min(values) > 0
    # suits never rank
    assert low("7c 5d 4h 3s 2c") == low("7h 5s 4c 3d 2h")


@pytest.mark.parametrize(
    ("text", "foul", "why"),
    [
        # spec kicker example, now top against bottom: Q-Q-5 beats Q-Q-4-3-2
        ("Qs Qh 5d / 9c 8d 7h 6s 4c / Qc Qd 4h 3s 2c", True, "top beats bottom on the kicker"),
        ("Qs Qh 5d / 9c 8d 7h 6s 4c / Qc Qd 5h 3s 2c", False, "Q-Q-5 ties, the bottom is longer"),
        ("Kh Kd 3h / Tc 9d 8h 7s 5c / Qc Qd As 4s 6c", True, "KK top over a bottom QQ"),
        ("Kh Kd 3h / Tc 9d 8h 7s 5c / Ac Ad Ah 4s 6c", False, "bottom trips beat top KK"),
        # the middle is not compared with the top: a 7-high middle under KK is fine
        ("Kh Kd 3h / 7c 5d 4h 3s 2c / Ac Ad Ah 9s 6c", False, "middle below top is fine"),
        # ... nor with the bottom: a T-high middle over a 9-high bottom is fine
        ("9c 8d 2h / Tc 9d 8h 7s 5c / 9s 8s 6d 4d 3c", False, "middle above bottom is fine"),
    ],
)
def test_bottom_must_beat_top_and_middle_is_not_compared(text, foul, why):
    assert board(text, LOWBALL).foul is foul, why


def test_the_same_board_fouls_in_classic():
    # T-high middle over the 9-high bottom: a classic foul, legal in 2-7
    text = "9c 8d 2h / Tc 9d 8h 7s 5c / 9s 8s 6d 4d 3c"
    assert board(text, CLASSIC).foul
    assert not board(text, LOWBALL).foul


def test_top_and_bottom_royalties_follow_the_standard_table():
    # KK top 8, perfect low 8, bottom flush 4
    verdict = board("Kh Kd 3h / 7c 5d 4h 3s 2c / 2s 6s 9s Js Qs", LOWBALL)
    assert verdict.royalties == (8, 8, 4)
    # trips top 222 = 10, ten-low 0, bottom straight 2
    verdict = board("2c 2d 2h / Tc 9d 8h 7s 5c / 9s Ts Jh Qd Kc", LOWBALL)
    assert verdict.royalties == (10, 0, 2)


# A: KK (8) / 7-5-4-3-2 (8) / AAA      royalties 16
# B: Q-J-4 / 8-6-5-3-2 (2) / KK-QQ     royalties 2
# C: KK (8) / 9-7-5-4-2 (1) / AAA      royalties 9
A = board("Kh Kd 3h / 7c 5d 4h 3s 2c / Ac Ad Ah 9s 6c", LOWBALL)
B = board("Qs Jd 4s / 8c 6d 5h 3d 2d / Ks Kc Qh Qd 9h", LOWBALL)
C = board("Kh Kd 3h / 9c 7d 5s 4d 2c / Ac Ad Ah 9s 6c", LOWBALL)


def test_lowball_scoring_compares_middles_as_lows():
    assert (A.royalties, B.royalties, C.royalties) == ((8, 8, 0), (0, 2, 0), (8, 1, 0))
    # A wins every row (the perfect low beats the 8-low): 3 + 3 + (16 - 2) = 20
    outcome = score_pair(A, B, STANDARD)
    assert outcome.rows == (1, 1, 1)
    assert outcome.points == 20
    # C: top C, middle B (8-low beats 9-low), bottom C: 1 + (9 - 2) = 8
    outcome = score_pair(C, B, STANDARD)
    assert outcome.rows == (1, -1, 1)
    assert outcome.points == 8


def test_lowball_matches_the_reference_on_random_middles():
    import random

    rng = random.Random(27)
    deck = list(range(52))
    low_cards = [card for card in deck if card // 4 <= 8]  # 2..T: mostly near-qualifying
    for _ in range(4000):
        middle = rng.sample(low_cards if rng.random() < 0.8 else deck, 5)
        other = rng.sample(low_cards, 5)
        expected = reference.low_key(middle)
        value = evaluate_low(middle)
        assert (value == 0) is (expected is None), middle
        assert low_class(value).label == reference.low_class_name(expected)
        other_key = reference.low_key(other)
        if expected is not None and other_key is not None:
            better = (expected < other_key) - (expected > other_key)
            other_value = evaluate_low(other)
            assert ((value > other_value) - (value < other_value)) == better
