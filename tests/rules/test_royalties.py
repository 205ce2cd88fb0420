"""Royalties (docs/rules.md, "Royalties"): every line of the standard table on legal boards, the
flat-trips preset, and house-rule tables read from rules files.

Boards are "top / middle / bottom"; every expected tuple is (top, middle, bottom)."""

from __future__ import annotations

import pytest

from pipeline.records.rules_file import load_rules_file
from pipeline.rules.ruleset import preset
from tests.rules.helpers import CLASSIC, PINEAPPLE, board

RANKS = "23456789TJQKA"

# --- bottom: straight 2, flush 4, full house 6, quads 10, straight flush 15, royal 25 --------
# top 4-3-2 high, middle Q-T-9-7-6 high card (no royalty); each bottom beats the middle.
BOTTOM_BASE = "2c 3d 4h / 6c 7d 9h Ts Qc / "


@pytest.mark.parametrize(
    ("bottom", "points", "hand"),
    [
        ("Ac Kd 8h 5s 2d", 0, "high card"),
        ("Ah As 8h 5s 2d", 0, "pair"),
        ("Ah As 8h 8s 2d", 0, "two pair"),
        ("8c 8d 8h 5s 2d", 0, "trips: no bottom royalty in the standard table"),
        ("8s 9c Td Jh Qd", 2, "straight"),
        ("Ac 2d 3h 4s 5c", 2, "wheel straight"),
        ("2h 5h 8h Jh Kh", 4, "flush"),
        ("8c 8d 8h 5s 5d", 6, "full house"),
        ("8c 8d 8h 8s 5d", 10, "quads"),
        ("5s 6s 7s 8s 9s", 15, "straight flush"),
        ("As 2s 3s 4s 5s", 15, "steel wheel is a straight flush, not royal"),
        ("Th Jh Qh Kh Ah", 25, "royal flush"),
    ],
)
def test_standard_bottom_royalties(bottom, points, hand):
    verdict = board(BOTTOM_BASE + bottom)
    assert not verdict.foul, hand
    assert verdict.royalties == (0, 0, points), hand


# --- middle: trips 2, straight 4, flush 8, full house 12, quads 20, SF 30, royal 50 ----------
# The bottom must be at least the middle, so it often scores too (second number, from the
# bottom table above).
@pytest.mark.parametrize(
    ("text", "expected", "hand"),
    [
        ("2c 3d 4h / Kc Kd 5h 6s 8c / Ac Ad 7h 7s 9c", (0, 0, 0), "pair / two pair: nothing"),
        ("2c 3d 4h / Kc Kd 5h 5s 8c / Ac Ad Ah 6s 7c", (0, 0, 0), "two pair / trips: nothing"),
        ("2c 3d 4h / 7c 7d 7h Ks 2d / 8c 8d 8h As 3c", (0, 2, 0), "trips 2 / trips 0"),
        ("2c 3d 4h / 5c 6d 7h 8s 9c / 2h 5h 9h Jh Kh", (0, 4, 4), "straight 4 / flush 4"),
        ("2c 3d 4h / 2d 5d 8d Jd Kd / Ac Ad Ah 5s 5c", (0, 8, 6), "flush 8 / full house 6"),
        ("2c 3d 4h / 9c 9d 9h 5s 5c / Ac Ad Ah As 6c", (0, 12, 10), "full house 12 / quads 10"),
        ("2c 3d 4h / 5c 5d 5h 5s Kc / 9d Td Jd Qd Kd", (0, 20, 15), "quads 20 / SF 15"),
        ("2c 3d 4h / 5d 6d 7d 8d 9d / Th Jh Qh Kh Ah", (0, 30, 25), "SF 30 / royal 25"),
        ("2c 3d 4h / Td Jd Qd Kd Ad / Th Jh Qh Kh Ah", (0, 50, 25), "royal 50 / royal 25"),
    ],
)
def test_standard_middle_royalties(text, expected, hand):
    verdict = board(text)
    assert not verdict.foul, hand
    assert verdict.royalties == expected, hand
    assert verdict.royalty_total == sum(expected)


def _top_pair_board(pair_rank: str) -> str:
    """Top pair of ``pair_rank`` with a kicker; middle two pair; bottom trips (no other royalty)."""
    others = [rank for rank in RANKS if rank != pair_rank]
    a, b, c, d, e, f, g = others[:7]
    top = f"{pair_rank}c {pair_rank}d {g}c"
    middle = f"{a}h {a}s {b}h {b}s {c}h"  # two pair beats any top pair
    bottom = f"{d}c {d}d {d}h {e}s {f}s"  # trips beat two pair
    return f"{top} / {middle} / {bottom}"


# 66 = 1, 77 = 2, 88 = 3, 99 = 4, TT = 5, JJ = 6, QQ = 7, KK = 8, AA = 9; 22..55 nothing
TOP_PAIR_POINTS = dict(zip(RANKS, (0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))


@pytest.mark.parametrize("pair_rank", list(RANKS))
def test_standard_top_pairs(pair_rank):
    verdict = board(_top_pair_board(pair_rank))
    assert not verdict.foul
    assert verdict.classes == ("pair", "two_pair", "trips")
    assert verdict.royalties == (TOP_PAIR_POINTS[pair_rank], 0, 0)


def _top_trips_board(trips_rank: str) -> str:
    """Top trips; middle straight (4) avoiding that rank; bottom spade flush (4)."""
    middle = "2c 3d 4c 5d 6c" if trips_rank in "TJQKA" else "Tc Jd Qc Kd Ac"
    return f"{trips_rank}c {trips_rank}d {trips_rank}h / {middle} / 2s 4s 7s 9s Js"


# 222 = 10, 333 = 11, ... AAA = 22
TOP_TRIPS_POINTS = dict(zip(RANKS, range(10, 23), strict=True))


@pytest.mark.parametrize("trips_rank", list(RANKS))
def test_standard_top_trips(trips_rank):
    # top uses clubs/diamonds/hearts of the rank, the middle avoids the rank, the bottom is spades
    verdict = board(_top_trips_board(trips_rank))
    assert not verdict.foul
    assert verdict.classes == ("trips", "straight", "flush")
    assert verdict.royalties == (TOP_TRIPS_POINTS[trips_rank], 4, 4)


def test_top_high_card_and_three_to_a_flush_score_nothing():
    verdict = board("Qh Jh Th / Kc Kd 5h 5s 8c / Ac Ad Ah 6s 7c")
    assert verdict.royalties == (0, 0, 0)


def test_royalties_do_not_depend_on_the_variant():
    text = "Qs Qh 3s / 5c 6c 7h 8s 9d / 2h 4h 6h Th Kh"  # QQ 7, straight 4, flush 4
    for variant in (CLASSIC, PINEAPPLE):
        assert board(text, variant).royalties == (7, 4, 4)


# --- flat-trips preset: any top trips 20, no middle-trips royalty, the rest standard ----------
FLAT = preset("flat-trips")


@pytest.mark.parametrize("trips_rank", ["2", "7", "A"])
def test_flat_trips_top_trips_pay_20_whatever_the_rank(trips_rank):
    verdict = board(_top_trips_board(trips_rank), rules=FLAT)
    # top trips 20, middle straight 4, bottom flush 4 (unchanged)
    assert verdict.royalties == (20, 4, 4)


def test_flat_trips_no_middle_trips_royalty_but_pairs_and_bottom_unchanged():
    assert board("2c 3d 4h / 7c 7d 7h Ks 2d / 8c 8d 8h As 3c", rules=FLAT).royalties == (0, 0, 0)
    assert board(_top_pair_board("Q"), rules=FLAT).royalties == (7, 0, 0)
    assert board("2c 3d 4h / 5d 6d 7d 8d 9d / Th Jh Qh Kh Ah", rules=FLAT).royalties == (0, 30, 25)


# --- house-rule tables from rules files ------------------------------------------------------
def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_rules_file_middle_trips_2_and_bottom_trips_1(tmp_path):
    rules = load_rules_file(write(tmp_path, "bottom-trips.toml", "[royalties.bottom]\ntrips = 1\n"))
    # middle trips keep the standard 2, bottom trips now pay 1
    assert board("2c 3d 4h / 7c 7d 7h Ks 2d / 8c 8d 8h As 3c", rules=rules).royalties == (0, 2, 1)
    # the rest of the standard table is untouched
    assert board(BOTTOM_BASE + "8s 9c Td Jh Qd", rules=rules).royalties == (0, 0, 2)


DOUBLING = """\
name = "doubling"
[royalties.bottom]
quads = 8
straight_flush = 10
royal_flush = 20
[royalties.middle]
quads = 16
straight_flush = 20
royal_flush = 40
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2c 3d 4h / 9c 9d 9h 5s 5c / Ac Ad Ah As 6c", (0, 12, 8)),  # FH 12 (std) / quads 8
        ("2c 3d 4h / 5c 5d 5h 5s Kc / 9d Td Jd Qd Kd", (0, 16, 10)),  # quads 16 / SF 10
        ("2c 3d 4h / 5d 6d 7d 8d 9d / Th Jh Qh Kh Ah", (0, 20, 20)),  # SF 20 / royal 20
        ("2c 3d 4h / Td Jd Qd Kd Ad / Th Jh Qh Kh Ah", (0, 40, 20)),  # royal 40 / royal 20
        ("2c 3d 4h / 5c 6d 7h 8s 9c / 2h 5h 9h Jh Kh", (0, 4, 4)),  # unchanged lines
    ],
)
def test_rules_file_bottom_quads_8_sf_10_royal_20_middle_doubling(tmp_path, text, expected):
    rules = load_rules_file(write(tmp_path, "doubling.toml", DOUBLING))
    assert rules.name == "doubling"
    assert board(text, rules=rules).royalties == expected


def test_rules_file_bottom_straight_4_middle_tripling(tmp_path):
    rules = load_rules_file(
        write(tmp_path, "tripling.toml", "[royalties.bottom]\nstraight = 4\n[royalties.middle]\nstraight = 12\n")
    )
    assert rules.name == "tripling"  # named after the file when it does not say
    # middle 9-high straight 12, bottom ace-high straight 4
    assert board("2c 3d 4h / 5c 6d 7h 8s 9c / Tc Jd Qh Ks Ad", rules=rules).royalties == (0, 12, 4)


def test_rules_file_top_table_with_ten_and_lower_case_keys(tmp_path):
    rules = load_rules_file(
        write(
            tmp_path, "tops.toml",
            '[royalties.top.pairs]\n"5" = 1\n"6" = 2\n"10" = 9\nq = 10\n[royalties.top.trips]\nA = 30\n',
        )
    )
    expected_pairs = {"5": 1, "6": 2, "7": 2, "T": 9, "Q": 10, "K": 8, "4": 0}
    for rank, points in expected_pairs.items():
        assert board(_top_pair_board(rank), rules=rules).royalties[0] == points, rank
    assert board(_top_trips_board("A"), rules=rules).royalties == (30, 4, 4)
    assert board(_top_trips_board("K"), rules=rules).royalties == (21, 4, 4)  # standard KKK
