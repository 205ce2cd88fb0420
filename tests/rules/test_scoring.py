"""Scoring (docs/rules.md, "Scoring between two players", "Fouls", "Cap / table stakes").

Four boards that use all 52 cards between them, derived by hand:

P  2c 3d 5h / Jc Jd 4c 6d 8h / Ac Ad 7c 7d 9h   5-3-2 high / pair of jacks / two pair A-7; royalties 0
Q  4h 6h 8s / Tc Td 3c 5d 9s / Kc Kd Kh 2d 3h   8-6-4 high / pair of tens / trips kings;  royalties 0
R  Qh Qd 2h / 5c 6c 7h 8c 9c / 2s 4s 6s Ts Ks   QQ (7) / 9-high straight (4) / flush (4): royalties 15
F  As Ah 3s / Qc Qs 4d 5s 7s / 8d 9d Th Jh Js   AA on top over QQ in the middle: FOUL (raw 9 / 0 / 0)

Row by row (1-6, scoop 3, netted royalties):
P v Q: top Q (8 > 5), middle P (JJ > TT), bottom Q (trips > two pair): P -1, Q +1
P v R: R wins all three: 3 + scoop 3 + royalties 15 - 0 = R +21
Q v R: R wins all three: R +21
F v x: the foul pays 3 rows + scoop 3 + x's royalties: P +6, Q +6, R +21
"""

from __future__ import annotations

import pytest

from pipeline.records.rules_file import load_rules_file
from pipeline.rules.ruleset import preset, ruleset_from_mapping
from pipeline.rules.scoring import score_hand, score_pair, settlement_pairs
from tests.rules.helpers import board

P_TEXT = "2c 3d 5h / Jc Jd 4c 6d 8h / Ac Ad 7c 7d 9h"
Q_TEXT = "4h 6h 8s / Tc Td 3c 5d 9s / Kc Kd Kh 2d 3h"
R_TEXT = "Qh Qd 2h / 5c 6c 7h 8c 9c / 2s 4s 6s Ts Ks"
F_TEXT = "As Ah 3s / Qc Qs 4d 5s 7s / 8d 9d Th Jh Js"
F2_TEXT = "Kc Kh 2c / Qc Qd 3h 4s 5c / 9c 9d 9h 8s 7c"  # KK over QQ: also fouled

P, Q, R, F, F2 = (board(text) for text in (P_TEXT, Q_TEXT, R_TEXT, F_TEXT, F2_TEXT))
STANDARD = preset("standard")
TWO_FOUR = ruleset_from_mapping({"scoring": {"method": "2-4"}})
WINNER_ONLY = ruleset_from_mapping({"scoring": {"royalties": "winner-only"}})
TWO_FOUR_WINNER_ONLY = ruleset_from_mapping({"scoring": {"method": "2-4", "royalties": "winner-only"}})


def capped(cap: int):
    return ruleset_from_mapping({"name": f"cap{cap}", "scoring": {"cap": cap}})


def test_the_four_boards_are_what_the_docstring_says():
    all_cards = []
    for text in (P_TEXT, Q_TEXT, R_TEXT, F_TEXT):
        all_cards += text.replace("/", " ").split()
    assert len(set(all_cards)) == 52
    assert [v.foul for v in (P, Q, R, F, F2)] == [False, False, False, True, True]
    assert P.royalties == (0, 0, 0) and Q.royalties == (0, 0, 0)
    assert R.royalties == (7, 4, 4)
    assert F.raw_royalties == (9, 0, 0) and F.royalties == (0, 0, 0)


# --- two players, 1-6 ------------------------------------------------------------------------
def test_one_six_without_scoop():
    outcome = score_pair(P, Q, STANDARD)
    assert outcome.rows == (-1, 1, -1)
    assert (outcome.rows_won, outcome.rows_lost, outcome.scoop) == (1, 2, 0)
    assert outcome.royalty_points == 0
    assert outcome.points == -1
    assert score_pair(Q, P, STANDARD).points == 1


def test_one_six_with_scoop_and_royalties():
    # 3 rows + scoop 3 + royalties 15
    outcome = score_pair(R, P, STANDARD)
    assert outcome.rows == (1, 1, 1)
    assert (outcome.rows_won, outcome.rows_lost, outcome.scoop) == (3, 0, 1)
    assert outcome.royalty_points == 15
    assert outcome.points == 21
    reverse = score_pair(P, R, STANDARD)
    assert (reverse.scoop, reverse.royalty_points, reverse.points) == (-1, -15, -21)


def test_scoop_bonus_6_from_a_rules_file(tmp_path):
    path = tmp_path / "scoop6.toml"
    path.write_text("[scoring]\nscoop_bonus = 6\n", encoding="utf-8")
    rules = load_rules_file(path)
    assert score_pair(R, P, rules).points == 3 + 6 + 15
    assert score_pair(P, Q, rules).points == -1  # no scoop: unchanged
    # a foul pays 3 rows + the scoop of 6 + the opponent's royalties
    assert score_pair(F, P, rules).points == -9
    assert score_pair(F, R, rules).points == -(9 + 15)


# --- 2-4 -------------------------------------------------------------------------------------
def test_two_four_majority_is_two_rows():
    # Q wins top and bottom: 2 - 1 + 1 for the majority
    assert score_pair(Q, P, TWO_FOUR).points == 2
    assert score_pair(P, Q, TWO_FOUR).points == -2


def test_two_four_scoop_is_three_plus_one():
    # 3 rows + 1 majority, no scoop bonus; royalties still count
    assert score_pair(R, P, TWO_FOUR).points == 4 + 15
    assert score_pair(F, P, TWO_FOUR).points == -4
    assert score_pair(F, R, TWO_FOUR).points == -(4 + 15)


# --- a tied row, netted against winner-only royalties ----------------------------------------
# X: 99 (4) / J-J-8-6-3 / heart flush (4)          royalties 8
# Y: 66 (1) / J-J-8-6-3 (same ranks) / QQQ-55 (6)   royalties 7
# rows: top X, middle tie, bottom Y -> row points 0, no scoop, no majority
X = board("9c 9d 2s / Jc Jh 8c 6d 3s / 2h 5h 8h Th Kh")
Y = board("6c 6s 4s / Jd Js 8d 6h 3h / Qc Qd Qs 5c 5d")
# Y3: A-K-3 / QQ / diamond flush with the same ranks as X's hearts (4): royalties 4
# rows: top X, middle Y3, bottom tie
Y3 = board("Ac Ks 3c / Qc Qd 4c 6c 7s / 2d 5d 8d Td Kd")


def test_tied_row_boards():
    assert X.royalties == (4, 0, 4) and Y.royalties == (1, 0, 6) and Y3.royalties == (0, 0, 4)
    assert score_pair(X, Y, STANDARD).rows == (1, 0, -1)
    assert score_pair(X, Y3, STANDARD).rows == (1, -1, 0)


def test_netted_royalties_with_a_tied_row():
    # 0 row points + (8 - 7)
    assert score_pair(X, Y, STANDARD).points == 1
    assert score_pair(Y, X, STANDARD).points == -1
    # 0 + (8 - 4)
    assert score_pair(X, Y3, STANDARD).points == 4


def test_winner_only_royalties_with_a_tied_row():
    # X keeps only the top it won (4); Y keeps the bottom it won (6); the tied middle pays nothing
    outcome = score_pair(X, Y, WINNER_ONLY)
    assert outcome.royalty_points == 4 - 6
    assert outcome.points == -2
    assert score_pair(Y, X, WINNER_ONLY).points == 2
    # X's top (4) counts; the tied bottom flushes count for nobody; Y3's won middle pays 0
    assert score_pair(X, Y3, WINNER_ONLY).points == 4
    assert score_pair(Y3, X, WINNER_ONLY).points == -4


def test_two_four_with_a_tied_row_has_no_majority():
    # one row each: no majority bonus for anyone
    assert score_pair(X, Y, TWO_FOUR).points == 0 + 1
    assert score_pair(X, Y, TWO_FOUR_WINNER_ONLY).points == -2


def test_winner_only_when_the_winner_scoops():
    # R wins every row, so all of its royalties count
    assert score_pair(R, P, WINNER_ONLY).points == 21


# --- fouls -----------------------------------------------------------------------------------
def test_foul_pays_six_plus_the_opponents_royalties():
    assert score_pair(P, F, STANDARD).points == 6
    assert score_pair(F, P, STANDARD).points == -6
    outcome = score_pair(F, R, STANDARD)
    assert outcome.rows == (-1, -1, -1)
    assert outcome.scoop == -1
    assert outcome.royalty_points == -15
    assert outcome.points == -21
    # the fouled AA top is stronger than P's 5-3-2, yet P wins that row
    assert score_pair(P, F, STANDARD).rows == (1, 1, 1)


def test_foul_against_winner_only_royalties_pays_them_all():
    assert score_pair(R, F, WINNER_ONLY).points == 21


def test_both_fouled_is_zero():
    for rules in (STANDARD, TWO_FOUR, WINNER_ONLY):
        outcome = score_pair(F, F2, rules)
        assert outcome.rows == (0, 0, 0)
        assert outcome.points == 0
        assert score_pair(F2, F, rules).points == 0


# --- several players -------------------------------------------------------------------------
def test_three_player_hand():
    # P: -1 (v Q) - 21 (v R) = -22; Q: +1 - 21 = -20; R: +21 + 21 = +42
    result = score_hand([P, Q, R], STANDARD, [0, 1, 2])
    assert result.points == (-22, -20, 42)
    assert sum(result.points) == 0


def test_four_player_hand_with_a_foul():
    # P: -1 - 21 + 6 = -16; Q: +1 - 21 + 6 = -14; R: 21 + 21 + 21 = 63; F: -6 - 6 - 21 = -33
    result = score_hand([P, Q, R, F], STANDARD, [0, 1, 2, 3])
    assert result.points == (-16, -14, 63, -33)
    # without a cap the order does not matter
    assert score_hand([P, Q, R, F], STANDARD, [2, 3, 0, 1]).points == (-16, -14, 63, -33)
    assert score_hand([P, Q, R, F], STANDARD).points == (-16, -14, 63, -33)


def test_four_player_hand_under_two_four():
    # P v Q: P -2; P v R: R 4 + 15 = 19; P v F: P +4; Q v R: R +19; Q v F: Q +4; R v F: R 4 + 15
    # P: -2 - 19 + 4 = -17; Q: +2 - 19 + 4 = -13; R: 19 * 3 = 57; F: -4 - 4 - 19 = -27
    assert score_hand([P, Q, R, F], TWO_FOUR, [0, 1, 2, 3]).points == (-17, -13, 57, -27)


def test_settlement_order_is_left_of_button_against_each_other_clockwise():
    # West, North, East, South with South on the button: W-N, W-E, W-S, N-E, N-S, E-S
    assert settlement_pairs(4, [0, 1, 2, 3]) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert settlement_pairs(4, [3, 0, 1, 2]) == [(3, 0), (3, 1), (3, 2), (0, 1), (0, 2), (1, 2)]
    assert settlement_pairs(3, [1, 2, 0]) == [(1, 2), (1, 0), (2, 0)]


# --- caps ------------------------------------------------------------------------------------
# Boards [P, F, R] in seat order. Uncapped: P v F = P +6, P v R = R +21, F v R = R +21.
def test_cap_two_players():
    assert score_hand([R, P], capped(10), [0, 1]).points == (10, -10)
    assert score_hand([R, P], capped(30), [0, 1]).points == (21, -21)  # under the cap: untouched


def test_cap_strict_order_p_first():
    # cap 20, order P, F, R: pairs (P,F) (P,R) (F,R)
    # P v F: P +6, F -6.  P v R: P owes 21 and can pay it (6 - 21 = -15 >= -20): P -15, R +21.
    # F v R: F owes 21 but is at -6, can pay only 14: F -20, R +35.
    result = score_hand([P, F, R], capped(20), [0, 1, 2])
    assert result.points == (-15, -20, 35)
    assert [m.settled for m in result.matchups] == [6, -21, -14]
    assert [m.outcome.points for m in result.matchups] == [6, -21, -21]


def test_cap_strict_order_r_first_player_at_cap_is_done():
    # cap 20, order R, P, F: pairs (R,P) (R,F) (P,F)
    # R v P: P pays 20 of 21 (partial): P at -20 is done.  R v F: F pays 20 of 21.
    # P v F: P is done, so P does not collect the 6 it would win: settles 0.
    result = score_hand([P, F, R], capped(20), [2, 0, 1])
    assert result.points == (-20, -20, 40)
    assert [(m.first, m.second, m.settled) for m in result.matchups] == [(2, 0, 20), (2, 1, 20), (0, 1, 0)]


def test_cap_strict_order_f_first():
    # cap 20, order F, R, P: (F,R) F pays 20 and is done; (F,P) 0; (R,P) P pays 20
    result = score_hand([P, F, R], capped(20), [1, 2, 0])
    assert result.points == (-20, -20, 40)
    assert [m.settled for m in result.matchups] == [-20, 0, 20]


def test_cap_four_players_cap_10():
    # order P, Q, R, F:
    # (P,Q) P -1.  (P,R) P can pay 9 more: P -10, R +9.  (P,F) P done: 0.
    # (Q,R) Q is at +1, can pay 11: Q -10, R +20.  (Q,F) Q done: 0.  (R,F) F pays 10: R +30, F -10
    result = score_hand([P, Q, R, F], capped(10), [0, 1, 2, 3])
    assert result.points == (-10, -10, 30, -10)
    assert [m.settled for m in result.matchups] == [-1, -9, 0, -11, 0, 10]


def test_cap_four_players_cap_25():
    # (P,Q) P -1.  (P,R) P pays 21: P -22, R +21.  (P,F) P +6: P -16, F -6.
    # (Q,R) Q pays 21: Q -20, R +42.  (Q,F) Q +6: Q -14, F -12.  (R,F) F pays 13: R +55, F -25
    result = score_hand([P, Q, R, F], capped(25), [0, 1, 2, 3])
    assert result.points == (-16, -14, 55, -25)
    assert [m.settled for m in result.matchups] == [-1, -21, 6, -21, 6, 13]


def test_score_hand_rejects_an_order_that_is_not_a_permutation():
    with pytest.raises(ValueError):
        score_hand([P, Q, R], STANDARD, [0, 1, 1])
