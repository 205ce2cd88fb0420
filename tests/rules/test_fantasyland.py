"""Fantasyland (docs/rules.md, "Fantasyland"): entry with QQ+ on a legal board (house rule KK+),
card counts by variant (classic 13, pineapple 14, progressive QQ 14 / KK 15 / AA 16 / trips 17),
staying (trips top, full house+ middle, quads+ bottom; house rules: no middle stay, re-qualify),
and 2-7 Pineapple (KK+ top or 7-5-4-3-2 middle 14, both 15; trips top or quads+ bottom stays)."""

from __future__ import annotations

import pytest

from pipeline.rules.ruleset import preset, ruleset_from_mapping
from tests.rules.helpers import CLASSIC, LOWBALL, PINEAPPLE, board

STANDARD = preset("standard")
PROGRESSIVE = preset("progressive")
KK_ENTRY = ruleset_from_mapping({"name": "kk", "fantasyland": {"entry_top_pair": "K"}})
KK_PROGRESSIVE = ruleset_from_mapping(
    {"name": "kk-progressive", "extends": "progressive", "fantasyland": {"entry_top_pair": "K"}}
)
NO_MIDDLE_STAY = preset("poker-arena-pineapple")
REQUALIFY = ruleset_from_mapping({"name": "requalify", "fantasyland": {"stay_requalify": True}})
REQUALIFY_PROGRESSIVE = ruleset_from_mapping(
    {"name": "rq-progressive", "extends": "progressive", "fantasyland": {"stay_requalify": True}}
)
DISABLED = ruleset_from_mapping({"name": "no-fl", "fantasyland": {"enabled": False}})


def with_top(top: str) -> str:
    """A legal board under the given top: 9-high straight in the middle, spade flush bottom."""
    return f"{top} / 5c 6c 7h 8c 9c / 2s 4s 6s Ts Ks"


TOPS = {
    "66": "6h 6d 3h",
    "JJ": "Jh Jd 3h",
    "QQ": "Qh Qd 3h",
    "KK": "Kh Kd 3h",
    "AA": "Ah Ad 3h",
    "222": "2c 2d 2h",
    "AAA": "Ac Ad Ah",
    "AKQ": "Ah Kd Qh",
}

# --- entry -----------------------------------------------------------------------------------
ENTRY = [
    # top, classic, pineapple, progressive, KK+ classic, KK+ pineapple, KK+ progressive
    ("66", 0, 0, 0, 0, 0, 0),
    ("AKQ", 0, 0, 0, 0, 0, 0),
    ("JJ", 0, 0, 0, 0, 0, 0),
    ("QQ", 13, 14, 14, 0, 0, 0),
    ("KK", 13, 14, 15, 13, 14, 15),
    ("AA", 13, 14, 16, 13, 14, 16),
    ("222", 13, 14, 17, 13, 14, 17),  # any trips qualify (better than any pair)
    ("AAA", 13, 14, 17, 13, 14, 17),
]


@pytest.mark.parametrize(("top", "classic", "pineapple", "progressive", "kk_classic", "kk_pineapple", "kk_progressive"), ENTRY)
def test_entry(top, classic, pineapple, progressive, kk_classic, kk_pineapple, kk_progressive):
    text = with_top(TOPS[top])
    assert not board(text).foul
    assert board(text, CLASSIC, STANDARD).fantasyland_cards == classic
    assert board(text, PINEAPPLE, STANDARD).fantasyland_cards == pineapple
    assert board(text, PINEAPPLE, PROGRESSIVE).fantasyland_cards == progressive
    assert board(text, CLASSIC, KK_ENTRY).fantasyland_cards == kk_classic
    assert board(text, PINEAPPLE, KK_ENTRY).fantasyland_cards == kk_pineapple
    assert board(text, PINEAPPLE, KK_PROGRESSIVE).fantasyland_cards == kk_progressive
    assert board(text, CLASSIC, STANDARD).fantasyland_next is (classic > 0)


@pytest.mark.parametrize(
    "text",
    [
        # QQ top over a pair of jacks in the middle: foul
        "Qh Qd 3h / Jc Jd 4c 6d 8h / Ac Ad 7c 7d 9h",
        # trips top over a pair of kings: foul
        "2c 2d 2h / Kc Kd 5h 6s 8c / As Ah 9c 9s 4d",
        # AA top, legal middle, but middle flush over bottom straight: foul
        "Ah Ad 3h / 2s 5s 8s Js Ks / 8c 9c Td Jh Qd",
    ],
)
@pytest.mark.parametrize("rules", [STANDARD, PROGRESSIVE, REQUALIFY], ids=lambda r: r.name)
@pytest.mark.parametrize("in_fantasyland", [False, True])
def test_fouled_boards_never_enter_or_stay(text, rules, in_fantasyland):
    for variant in (CLASSIC, PINEAPPLE):
        verdict = board(text, variant, rules, in_fantasyland)
        assert verdict.foul
        assert verdict.fantasyland_cards == 0
        assert not verdict.fantasyland_next


def test_a_stay_condition_alone_does_not_enter():
    # not in Fantasyland: a middle full house and a bottom of quads do not qualify, only the top
    assert board("Qh Jd 3h / 9c 9d 9h 5s 5c / Ac Ad Ah As Kd").fantasyland_cards == 0


def test_disabled_fantasyland():
    assert board(with_top(TOPS["QQ"]), CLASSIC, DISABLED).fantasyland_cards == 0
    assert board(with_top(TOPS["222"]), PINEAPPLE, DISABLED, True).fantasyland_cards == 0


# --- stay ------------------------------------------------------------------------------------
STAY = [
    # board, stays?, stays without the middle full-house rule?
    (with_top(TOPS["222"]), True, True, "trips on top"),
    (with_top(TOPS["AAA"]), True, True, "trips on top"),
    ("Qh Jd 3h / 9c 9d 9h 5s 5c / Ac Ad Ah Kc Kd", True, False, "full house in the middle"),
    ("2c 3d 4h / 5c 5d 5h 5s Kc / 9d Td Jd Qd Kd", True, True, "quads middle (and SF bottom)"),
    ("Qh Jd 3h / Kc Kd 5h 6s 8c / Ac Ad Ah As 6c", True, True, "quads on the bottom"),
    ("Qh Jd 3h / Kc Kd 5h 6s 8c / 5d 6d 7d 8d 9d", True, True, "straight flush on the bottom"),
    ("2c 3d 4h / Kc Kd 5h 6s 8c / Th Jh Qh Kh Ah", True, True, "royal on the bottom"),
    ("Qh Qd 3h / 2d 5d 8d Jd Kd / Ac As Ah 5s 5c", False, False, "QQ top, flush middle, FH bottom"),
    ("Qh Jd 3h / Kc Kd 5h 6s 8c / Ac Ad Ah 5s 5c", False, False, "full house on the bottom only"),
    ("Qh Jd 3h / 7c 7d 7h Ks 2d / 8c 8d 8h As 3c", False, False, "trips in the middle"),
    ("Ah Ad 3h / 5c 6c 7h 8c 9c / 2s 4s 6s Ts Ks", False, False, "AA on top"),
]


@pytest.mark.parametrize(("text", "stays", "stays_without_middle", "why"), STAY)
def test_stay(text, stays, stays_without_middle, why):
    assert not board(text).foul, why
    # classic stays with 13 cards; pineapple and progressive with 14
    assert board(text, CLASSIC, STANDARD, True).fantasyland_cards == (13 if stays else 0), why
    assert board(text, PINEAPPLE, STANDARD, True).fantasyland_cards == (14 if stays else 0), why
    assert board(text, PINEAPPLE, PROGRESSIVE, True).fantasyland_cards == (14 if stays else 0), why
    # stay_middle_full_house = false
    assert board(text, PINEAPPLE, NO_MIDDLE_STAY, True).fantasyland_cards == (
        14 if stays_without_middle else 0
    ), why


def test_progressive_stay_with_trips_is_14_not_17():
    assert board(with_top(TOPS["AAA"]), PINEAPPLE, PROGRESSIVE, False).fantasyland_cards == 17
    assert board(with_top(TOPS["AAA"]), PINEAPPLE, PROGRESSIVE, True).fantasyland_cards == 14


@pytest.mark.parametrize(
    ("top", "classic", "pineapple"),
    [("QQ", 13, 14), ("KK", 13, 14), ("AA", 13, 14), ("JJ", 0, 0), ("66", 0, 0)],
)
def test_stay_by_requalifying_house_rule(top, classic, pineapple):
    text = with_top(TOPS[top])
    assert board(text, CLASSIC, REQUALIFY, True).fantasyland_cards == classic
    assert board(text, PINEAPPLE, REQUALIFY, True).fantasyland_cards == pineapple
    # without the house rule a pair on top never stays
    assert board(text, PINEAPPLE, STANDARD, True).fantasyland_cards == 0


@pytest.mark.parametrize("top", ["QQ", "KK", "AA", "222"])
def test_requalifying_in_progressive_is_a_stay_of_14(top):
    # spec: a stay makes the next hand "again Fantasyland (14 cards in pineapple and in
    # progressive)"; re-qualifying is a house-rule way to stay, so it deals 14 too.
    text = with_top(TOPS[top])
    assert board(text, PINEAPPLE, REQUALIFY_PROGRESSIVE, True).fantasyland_cards == 14


# --- 2-7 Pineapple ---------------------------------------------------------------------------
TEN_LOW = "Tc 9d 8h 7s 5c"  # qualifies, no bonus
PERFECT = "7c 5d 4h 3s 2c"  # 7-5-4-3-2


@pytest.mark.parametrize(
    ("text", "entry", "stay", "why"),
    [
        (f"Kh Kd 3h / {TEN_LOW} / Ac Ad Ah 4s 6c", 14, 0, "KK top"),
        (f"Ah Ad 3h / {TEN_LOW} / Kc Kd Kh 4s 6c", 14, 0, "AA top"),
        (f"Qh Qd 3h / {TEN_LOW} / Ac Ad Ah 4s 6c", 0, 0, "QQ is not enough in 2-7"),
        (f"2c 2d 2h / {TEN_LOW} / 3s 4s 6s Js Ks", 14, 14, "trips top: enters, and stays"),
        (f"Qh Jd 3h / {PERFECT} / Ac Ad Ah 9s 6c", 14, 0, "7-5-4-3-2 middle alone"),
        (f"Kh Kd 3h / {PERFECT} / Ac Ad Ah 9s 6c", 15, 0, "KK top and 7-5-4-3-2: both"),
        (f"Qc Qd Qh / {PERFECT} / Ac Ad Ah 9s 6c", 15, 14, "trips top and 7-5-4-3-2: both; stay 14"),
        (f"Qh Jd 3h / {TEN_LOW} / Ac Ad Ah As 6c", 0, 14, "quads bottom stays"),
        (f"Qh Jd 3h / {TEN_LOW} / 2s 3s 4s 5s 6s", 0, 14, "straight flush bottom stays"),
        ("Qh Jd 3h / 7c 6d 4h 3s 2c / Ac Ad Ah 9s 6c", 0, 0, "7-6-4-3-2 is not the perfect low"),
        (f"Qh Jd 3h / {TEN_LOW} / Ac Ad Ah Kc Kd", 0, 0, "a full house is no stay in 2-7"),
    ],
)
def test_lowball_fantasyland(text, entry, stay, why):
    assert not board(text, LOWBALL).foul, why
    assert board(text, LOWBALL, STANDARD, False).fantasyland_cards == entry, why
    assert board(text, LOWBALL, STANDARD, True).fantasyland_cards == stay, why


@pytest.mark.parametrize(
    "text",
    [
        "Kh Kd 3h / Jc 9d 8h 7s 5c / Ac Ad Ah 4s 6c",  # J-low middle: foul
        "Ac Ad 3h / 7c 5d 4h 3s 2c / Kh Kd 8c 9s Tc",  # AA top beats the bottom KK: foul
        "2c 2d 2h / 7c 5d 4h 3s 9c / Ac Kd 8h 8s 6c",  # trips top over a bottom pair: foul
    ],
)
def test_lowball_fouled_boards_never_enter_or_stay(text):
    for in_fantasyland in (False, True):
        verdict = board(text, LOWBALL, STANDARD, in_fantasyland)
        assert verdict.foul
        assert verdict.fantasyland_cards == 0
