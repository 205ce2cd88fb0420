"""Fouls (docs/rules.md, "Fouls"): a board is legal iff bottom >= middle >= top; a fouled board
collects no royalty. Every edge: kickers across row sizes, the wheel, equal rows, two pair,
flush against flush, and a middle identical in ranks to the bottom. Boards: "top / middle / bottom"."""

from __future__ import annotations

import pytest

from pipeline.rules.board import evaluate_board
from pipeline.rules.cards import CardError, parse_cards
from tests.rules.helpers import CLASSIC, PINEAPPLE, board


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # spec example: QQ5 on top vs QQ432 in the middle: pair ties, kicker 5 > 4
        ("Qs Qh 5d / Qc Qd 4h 3s 2c / Ac Ad Ah 9s 9c", "top pair kicker beats middle pair kicker"),
        # K-K-T top vs K-K-9-3-2 middle: first kicker T > 9
        ("Ks Kh Td / Kc Kd 9h 3s 2c / Ac Ad Ah 9s 9c", "top first kicker higher"),
        # A-K-9 top vs A-K-8-7-6 middle (high cards): third card 9 > 8
        ("As Kh 9d / Ac Kd 8h 7s 6c / 2c 2d 2h 3s 3c", "top high card beats middle high card"),
        # any top pair beats a five-card high card
        ("2s 2h 3d / Ac Kd Qh Js 9c / 4c 4d 4h 5s 5c", "category: pair > high card"),
        # top trips beat middle two pair
        ("5s 5h 5d / Ac Ad Kh Ks Qc / 2c 2d 2h 6s 6c", "top trips beat middle two pair"),
        # 6-high straight in the middle beats the wheel on the bottom
        ("Kc Qd 2h / 2c 3d 4h 5s 6c / Ad 2d 3h 4s 5c", "wheel is below the 6-high straight"),
        # two pair K/8 with ace kicker in the middle beats K/8 with queen kicker
        ("2c 3d 4h / Kc Kd 8h 8s Ac / Kh Ks 8c 8d Qc", "two pair kicker"),
        # two pair: second pair 8 beats 7
        ("2c 3d 4h / Kc Kd 8h 8s 2d / Kh Ks 7c 7d Ac", "two pair second pair"),
        # flush vs flush: A-K-4-3-2 beats A-Q-J-T-8 on the second card
        ("2c 3d 5h / Ah Kh 4h 3h 2h / As Qs Js Ts 8s", "flush vs flush by ranks"),
        # flush vs flush decided by the last card
        ("2c 3d 4h / Ah Qh 9h 5h 3h / As Qs 9s 5s 2s", "flush vs flush last card"),
        # category: a middle flush over a bottom straight
        ("2c 3d 4h / 2h 5h 8h Jh Kh / 8s 9c Td Jd Qd", "middle flush over bottom straight"),
        # full house: trips rank first (888-22 over 777-AA)
        ("2c 3d 4h / 8c 8d 8h 2s 2h / 7c 7d 7h Ac Ad", "full house by trips rank"),
        # quads by rank: four kings in the middle over four nines on the bottom
        ("2c 3d 4h / Kc Kd Kh Ks 5c / 9c 9d 9h 9s Ac", "quads rank"),
    ],
)
def test_fouls(text, why):
    verdict = board(text)
    assert verdict.foul, why
    assert verdict.foul_reason, why
    assert verdict.royalties == (0, 0, 0), why


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # spec example: A-K-Q top ties the middle's first three cards; the longer row is stronger
        ("As Kh Qd / Ac Kd Qh 3s 2c / 7c 7d 8h 8s 9c", "top A-K-Q below middle A-K-Q-3-2"),
        # K-K-9 top vs K-K-9-3-2 middle: every top card ties, the middle is longer
        ("Ks Kh 9d / Kc Kd 9h 3s 2c / Ac Ad Ah 9s 9c", "pair and kicker tie: longer row wins"),
        # Q-Q-5 top vs Q-Q-5-3-2: same
        ("Qs Qh 5d / Qc Qd 5h 3s 2c / Ac Ad Ah 9s 9c", "longer row wins"),
        # the wheel in the middle, the 6-high straight on the bottom
        ("Kc Qd 2h / Ad 2d 3h 4s 5c / 2c 3d 4h 5s 6c", "wheel below 6-high straight"),
        # equal five-card rows are legal (bottom >= middle): same ranks, other suits
        ("Qc Jd 2h / Kc Kd 7h 5s 3c / Kh Ks 7d 5d 3d", "middle equals bottom exactly"),
        ("2s 4s 6h / Ac Qc 9c 5c 3c / Ad Qd 9d 5d 3d", "equal flushes"),
        ("2c 3d 4h / 5c 6d 7h 8s 9c / 5d 6h 7s 8c 9d", "equal straights"),
        ("Kc Jd 6h / Ac 2d 3h 4s 5c / Ad 2h 3s 4h 5d", "equal wheels"),
        # two pair kickers the legal way round
        ("2c 3d 4h / Kc Kd 8h 8s Qc / Kh Ks 8c 8d Ac", "two pair, bottom has the better kicker"),
        ("2c 3d 4h / Qc Qd Jh Js Ac / Kh Ks 2h 2s 3c", "two pair: top pair K beats Q"),
        ("2c 3d 5h / As Qs Js Ts 8s / Ah Kh 4h 3h 2h", "flush vs flush, bottom higher"),
        # a straight beats any top, even trips aces
        ("As Ah Ad / 2c 3d 4h 5s 6c / 7c 8d 9h Ts Jc", "straight beats top trips"),
        # category: middle pair vs top high card
        ("Ac Kd Qh / 2c 2d 3h 4s 5c / 6c 6d 7h 8s 9c", "pair beats any top high card"),
    ],
)
def test_legal_boards(text, why):
    verdict = board(text)
    assert not verdict.foul, why
    assert verdict.foul_reason is None, why


def test_fouls_are_the_same_in_classic_and_pineapple():
    text = "Qs Qh 5d / Qc Qd 4h 3s 2c / Ac Ad Ah 9s 9c"
    assert board(text, CLASSIC).foul and board(text, PINEAPPLE).foul
    text = "As Kh Qd / Ac Kd Qh 3s 2c / 7c 7d 8h 8s 9c"
    assert not board(text, CLASSIC).foul and not board(text, PINEAPPLE).foul


def test_fouled_board_keeps_raw_royalties_but_collects_nothing_and_never_enters_fantasyland():
    # top AA (9) beats the middle pair of kings: foul; bottom flush (4) would have scored
    verdict = board("Ac Ah 2d / Kc Kd 3h 4s 5c / 2h 6h 8h Th Qh")
    assert verdict.foul
    assert verdict.raw_royalties == (9, 0, 4)
    assert verdict.royalties == (0, 0, 0)
    assert verdict.royalty_total == 0
    assert verdict.fantasyland_cards == 0
    assert not verdict.fantasyland_next


def test_middle_over_bottom_foul_voids_middle_royalty():
    # middle flush (8) over bottom straight (2)
    verdict = board("2c 3d 4h / 2h 5h 8h Jh Kh / 8s 9c Td Jd Qd")
    assert verdict.raw_royalties == (0, 8, 2)
    assert verdict.royalties == (0, 0, 0)


def test_foul_reason_names_the_rows():
    verdict = board("Qs Qh 5d / Qc Qd 4h 3s 2c / Ac Ad Ah 9s 9c")
    assert "top" in verdict.foul_reason and "middle" in verdict.foul_reason
    verdict = board("Kc Qd 2h / 2c 3d 4h 5s 6c / Ad 2d 3h 4s 5c")
    assert "middle" in verdict.foul_reason and "bottom" in verdict.foul_reason


@pytest.mark.parametrize(
    ("top", "middle", "bottom"),
    [
        ("Ac Kd", "2c 3d 4h 5s 6c", "7c 8d 9h Ts Jc"),  # short top
        ("Ac Kd Qh", "2c 3d 4h 5s", "7c 8d 9h Ts Jc"),  # short middle
        ("Ac Kd Qh", "2c 3d 4h 5s 6c", "7c 8d 9h Ts Jc Qc"),  # long bottom
        ("Ac Kd Qh", "2c 3d 4h 5s 6c", "7c 8d 9h Ts Ac"),  # Ac twice
    ],
)
def test_bad_boards_raise_card_error(top, middle, bottom):
    with pytest.raises(CardError):
        evaluate_board(parse_cards(top), parse_cards(middle), parse_cards(bottom), CLASSIC)
