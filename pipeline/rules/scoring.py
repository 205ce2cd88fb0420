"""Settling a hand: pairwise points, the multiway sum, and the table-stakes cap.

Between two boards (spec/rules.md, "Scoring between two players"): +1 for each row won, a scoop
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
    """Per-row result (+1/-1/0 from the first board's view), fouls included."""
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
    """Points between two boards under ``rules``, from the first player's point of view."""
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
    """Pairs in strict settlement order: the first in ``order`` against each other clockwise, then the next..."""
    order = list(order) if order is not None else list(range(player_count))
    return [(order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))]


def capped_amount(points: int, first_total: int, second_total: int, cap: int) -> int:
    """What a pair actually settles under a per-hand cap, given both players' running totals.

    The loser pays at most what keeps their hand total at ``-cap``; a player already at ``-cap``
    is done (the pair settles 0). ``cap`` 0 means no cap.
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
