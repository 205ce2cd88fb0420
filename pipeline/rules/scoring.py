"""Settling a hand: pairwise points, the multiway sum, and the table-stakes cap.

Between two boards (docs/rules.md, "Scoring between two players"): +1 for each row won, a scoop
bonus for winning all three (1-6: 3, house rule 6) or, under 2-4, +1 for winning the majority
of rows (two or more of the three); plus royalties — netted (own minus the opponent's) or, as a
house rule, counted only for the rows a player won. A fouled board loses every row to a legal
one (so it pays the scoop and the opponent's royalties), and two fouled boards tie at 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.rules.board import BoardEvaluation
from pipeline.rules.ruleset import RoyaltyMode, RuleSet, ScoringMethod


@dataclass(frozen=True, slots=True)
class PairOutcome:
    """How two boards settle, from the first player's point of view (before any cap)."""

    rows: tuple[int, int, int]  # per row: +1 first won, -1 second won, 0 tie
    rows_won: int
    rows_lost: int
    scoop: int  # +1 first scooped, -1 second scooped, 0 neither
    royalty_points: int
    points: int


@dataclass(frozen=True, slots=True)
class Matchup:
    """One settled pair of a hand: players by index into the hand's player list."""

    first: int
    second: int
    outcome: PairOutcome
    settled: int  # points the first player receives after the cap (the second pays them)


@dataclass(frozen=True, slots=True)
class HandScore:
    """Every player's result for a hand, in the order the evaluations were given."""

    points: tuple[int, ...]
    matchups: tuple[Matchup, ...]


def compare_rows(first: BoardEvaluation, second: BoardEvaluation) -> tuple[int, int, int]:
    """Per-row result (+1/-1/0 from the first board's view), fouls included.

    >>> from pipeline.rules.board import evaluate_board
    >>> from pipeline.rules.cards import parse_cards
    >>> P = evaluate_board(*(parse_cards(row) for row in "2c 3d 5h / Jc Jd 4c 6d 8h / Ac Ad 7c 7d 9h".split("/")))
    >>> Q = evaluate_board(*(parse_cards(row) for row in "4h 6h 8s / Tc Td 3c 5d 9s / Kc Kd Kh 2d 3h".split("/")))
    >>> compare_rows(P, Q)  # Q's 8-6-4 top and trips bottom; P's jacks in the middle
    (-1, 1, -1)
    """
    if first.foul and second.foul:
        return (0, 0, 0)
    if first.foul:
        return (-1, -1, -1)
    if second.foul:
        return (1, 1, 1)
    return tuple(  # type: ignore[return-value]
        (a > b) - (a < b) for a, b in zip(first.values, second.values, strict=True)
    )


def score_pair(first: BoardEvaluation, second: BoardEvaluation, rules: RuleSet) -> PairOutcome:
    """Points between two boards under ``rules``, from the first player's point of view.

    R scoops P: 3 rows + the scoop bonus 3 + royalties 15 - 0 = 21 under 1-6; under 2-4 the
    bonus for the majority is 1 instead: 3 + 1 + 15 = 19.

    >>> from pipeline.rules.board import evaluate_board
    >>> from pipeline.rules.cards import parse_cards
    >>> from pipeline.rules.ruleset import STANDARD, ruleset_from_mapping
    >>> P = evaluate_board(*(parse_cards(row) for row in "2c 3d 5h / Jc Jd 4c 6d 8h / Ac Ad 7c 7d 9h".split("/")))
    >>> R = evaluate_board(*(parse_cards(row) for row in "Qh Qd 2h / 5c 6c 7h 8c 9c / 2s 4s 6s Ts Ks".split("/")))
    >>> outcome = score_pair(R, P, STANDARD)
    >>> outcome.rows, outcome.scoop, outcome.royalty_points, outcome.points
    ((1, 1, 1), 1, 15, 21)
    >>> score_pair(P, R, STANDARD).points
    -21
    >>> score_pair(R, P, ruleset_from_mapping({"scoring": {"method": "2-4"}})).points
    19
    """
    rows = compare_rows(first, second)
    won = rows.count(1)
    lost = rows.count(-1)
    scoring = rules.scoring
    points = won - lost
    scoop = 1 if won == 3 else -1 if lost == 3 else 0
    if scoring.method is ScoringMethod.ONE_SIX:
        points += scoop * scoring.scoop_bonus
    else:
        points += (won >= 2) - (lost >= 2)
    if scoring.royalty_mode is RoyaltyMode.NETTED:
        royalty_points = first.royalty_total - second.royalty_total
    else:
        royalty_points = sum(
            first.royalties[row] if result > 0 else -second.royalties[row] if result < 0 else 0
            for row, result in enumerate(rows)
        )
    return PairOutcome(rows, won, lost, scoop, royalty_points, points + royalty_points)


def settlement_pairs(player_count: int, order: Sequence[int] | None = None) -> list[tuple[int, int]]:
    """Pairs in strict settlement order: the first in ``order`` against each other clockwise, then the next...

    Four players with player 3 first (left of the button):

    >>> settlement_pairs(4, [3, 0, 1, 2])
    [(3, 0), (3, 1), (3, 2), (0, 1), (0, 2), (1, 2)]
    """
    order = list(order) if order is not None else list(range(player_count))
    return [(order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))]


def capped_amount(points: int, first_total: int, second_total: int, cap: int) -> int:
    """What a pair actually settles under a per-hand cap, given both players' running totals.

    The loser pays at most what keeps their hand total at ``-cap``; a player already at ``-cap``
    is done (the pair settles 0). ``cap`` 0 means no cap.

    With a cap of 20, a first player already at -6 who owes 21 can pay only 14; a player at -20
    is done:

    >>> capped_amount(-21, -6, 0, 20)
    -14
    >>> capped_amount(6, -20, 0, 20)
    0
    >>> capped_amount(-21, -6, 0, 0)
    -21
    """
    if not cap:
        return points
    if first_total <= -cap or second_total <= -cap:
        return 0
    if points > 0:
        return min(points, cap + second_total)
    if points < 0:
        return -min(-points, cap + first_total)
    return 0


def score_hand(
    evaluations: Sequence[BoardEvaluation],
    rules: RuleSet,
    order: Sequence[int] | None = None,
) -> HandScore:
    """Settle a hand between 2-4 boards: each pair separately, summed per player.

    ``order`` lists player indexes clockwise starting left of the button; it decides the strict
    settlement order used by a per-hand cap. With a cap (``scoring.cap`` > 0) a
    player's running result for the hand can never go below ``-cap``: a loss is cut to what the
    loser can still pay (the winner gets only that), and a player who has reached ``-cap`` is
    done for the hand (no further pair involving them settles).

    Three players (P, Q, R) settle pair by pair, and the hand sums to zero:

    >>> from pipeline.rules.board import evaluate_board
    >>> from pipeline.rules.cards import parse_cards
    >>> from pipeline.rules.ruleset import STANDARD, ruleset_from_mapping
    >>> def board(text):
    ...     return evaluate_board(*(parse_cards(row) for row in text.split("/")))
    >>> P = board("2c 3d 5h / Jc Jd 4c 6d 8h / Ac Ad 7c 7d 9h")
    >>> Q = board("4h 6h 8s / Tc Td 3c 5d 9s / Kc Kd Kh 2d 3h")
    >>> R = board("Qh Qd 2h / 5c 6c 7h 8c 9c / 2s 4s 6s Ts Ks")
    >>> F = board("As Ah 3s / Qc Qs 4d 5s 7s / 8d 9d Th Jh Js")  # fouled: AA over QQ
    >>> score_hand([P, Q, R], STANDARD, [0, 1, 2]).points
    (-22, -20, 42)

    With a per-hand cap of 10, settled in strict order P, Q, R, F, nobody loses more than 10:

    >>> result = score_hand([P, Q, R, F], ruleset_from_mapping({"scoring": {"cap": 10}}), [0, 1, 2, 3])
    >>> result.points
    (-10, -10, 30, -10)
    >>> [(m.first, m.second, m.outcome.points, m.settled) for m in result.matchups]
    [(0, 1, -1, -1), (0, 2, -21, -9), (0, 3, 6, 0), (1, 2, -21, -11), (1, 3, 6, 0), (2, 3, 21, 10)]
    """
    count = len(evaluations)
    if order is not None and sorted(order) != list(range(count)):
        raise ValueError(f"order {list(order)} is not a permutation of {count} players")
    cap = rules.scoring.cap
    totals = [0] * count
    matchups: list[Matchup] = []
    for first, second in settlement_pairs(count, order):
        outcome = score_pair(evaluations[first], evaluations[second], rules)
        amount = capped_amount(outcome.points, totals[first], totals[second], cap)
        totals[first] += amount
        totals[second] -= amount
        matchups.append(Matchup(first, second, outcome, amount))
    return HandScore(tuple(totals), tuple(matchups))
