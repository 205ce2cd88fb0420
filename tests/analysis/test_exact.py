"""Exact endgames: the enumerated value of every play equals brute force on hand-built positions.

Brute force here is written independently of :mod:`pipeline.analysis.exact` and of the batch
rules core: every combination of the unseen cards with :func:`itertools.combinations`, the
opponents' streets played board by board, each finished hand judged by the scalar rules core
(:func:`~pipeline.rules.board.evaluate_board`, :func:`~pipeline.rules.scoring.score_hand`).
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from pipeline import store
from pipeline.analysis.decisions import (
    Decision,
    HandView,
    SeatPlay,
    StreetPlay,
    decision_at,
    load_hands,
)
from pipeline.analysis.exact import deal_count, enumerate_deals
from pipeline.analysis.grade import GradeSettings, grade_decision
from pipeline.analysis.policy import BoardBatch
from pipeline.analysis.rollout import DEFAULT_FANTASYLAND_VALUE, column_policy
from pipeline.rules.board import evaluate_board
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD
from pipeline.rules.scoring import score_hand


def brute_force(decision: Decision, policy: str = "solid") -> list[float]:
    """The exact value of every alternative, one deal at a time (see the module docstring)."""
    hand = decision.hand
    variant = hand.variant
    bot = column_policy(policy, variant, STANDARD)
    slots = [(seat, size, discards) for seat, _, size, discards in decision.plan.current]
    slots += [(seat, size, discards) for step in decision.plan.future
              for seat, _, size, discards in step]
    alternatives = decision.alternatives().alternatives
    totals = [0.0] * len(alternatives)
    deals = 0

    def deal(remaining: tuple[int, ...], slot: int, hands: list[tuple[int, ...]]) -> None:
        nonlocal deals
        if slot == len(slots):
            deals += 1
            finish(hands)
            return
        for cards in itertools.combinations(remaining, slots[slot][1]):
            rest = tuple(card for card in remaining if card not in cards)
            deal(rest, slot + 1, [*hands, cards])

    def play(rows, seat: int, hands: list[tuple[int, ...]]) -> list[list[int]]:  # noqa: ANN001
        board = BoardBatch.from_rows([rows])
        for (owner, _, discards), cards in zip(slots, hands, strict=True):
            if owner == seat:
                bot.play_street(board, np.asarray([cards]), discards)
        return board.rows(0)

    def finish(hands: list[tuple[int, ...]]) -> None:
        # the opponents play from their own cards and boards only: once per deal
        verdicts = {
            seat: evaluate_board(*play(rows, seat, hands), variant=variant, rules=STANDARD)
            for seat, rows in enumerate(decision.visible) if seat != decision.hero
        }
        for index, alternative in enumerate(alternatives):
            mine = evaluate_board(*play(alternative.rows_after, decision.hero, hands),
                                  variant=variant, rules=STANDARD)
            everyone = [mine if seat == decision.hero else verdicts[seat]
                        for seat in range(len(hand.seats))]
            points = score_hand(everyone, STANDARD, list(range(len(hand.seats)))).points
            bonus = DEFAULT_FANTASYLAND_VALUE if mine.fantasyland_cards > 0 else 0.0
            totals[index] += points[decision.hero] + bonus

    deal(decision.unseen, 0, [])
    assert deals == deal_count(decision)
    return [total / deals for total in totals]


def _certain(database: Path, hand_id: str) -> Decision:
    connection = store.connect(database, read_only=True)
    try:
        hands = {hand.hand_id: hand for hand in load_hands(connection, [
            row[0] for row in connection.execute("SELECT hand_key FROM hands").fetchall()])}
    finally:
        connection.close()
    hand = hands[hand_id]
    return decision_at(hand, hand.seat_of("ann"), 4)


def _hand(variant: Variant, seed: int, players: int = 3) -> HandView:
    """``players`` players, every card dealt from one shuffled deck in turn; the first street goes
    2 bottom, 2 middle, 1 top, later cards go round the rows with room (bottom, middle, top, ...;
    the last card of a Pineapple street is discarded)."""
    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    plays: list[list[StreetPlay]] = [[] for _ in range(players)]
    counts = [[0, 0, 0] for _ in range(players)]
    turn = [0] * players
    for number, shape in enumerate(variant.streets):
        for seat in range(players):
            cards = [deck.pop() for _ in range(shape.dealt)]
            kept = cards[:shape.dealt - shape.discarded]
            if number == 0:
                rows = [2, 2, 1, 1, 0]
            else:
                rows = []
                for _ in kept:
                    room = [3 - counts[seat][0], 5 - counts[seat][1], 5 - counts[seat][2]]
                    while room[(2, 1, 0)[turn[seat] % 3]] <= 0:
                        turn[seat] += 1
                    row = (2, 1, 0)[turn[seat] % 3]
                    turn[seat] += 1
                    counts[seat][row] += 1
                    rows.append(row)
            if number == 0:
                for row in rows:
                    counts[seat][row] += 1
            plays[seat].append(StreetPlay(tuple(zip(kept, rows, strict=True)),
                                          tuple(cards[len(kept):])))
    seats = tuple(SeatPlay(name, position, False, sum(s.dealt for s in variant.streets),
                           tuple(plays[position]))
                  for position, name in enumerate(("first", "second", "third")[:players]))
    return HandView(seed, f"{variant.value}-{seed}", variant, "standard", seats)


def _check(decision: Decision) -> None:
    grade = grade_decision(decision, STANDARD, GradeSettings())
    assert grade is not None and grade.exact
    expected = brute_force(decision)
    for tally, value in zip(grade.tallies, expected, strict=True):
        assert tally.exact and tally.se == 0.0
        assert tally.ev == pytest.approx(value, abs=1e-9)
    assert grade.ev_loss == pytest.approx(max(expected) - expected[grade.chosen], abs=1e-9)
    assert grade.loss_se == 0.0


def test_one_opponent_to_act_pineapple(certain_db: Path) -> None:
    """ann's last street, bob still to play his: C(24, 3) = 2,024 deals."""
    decision = _certain(certain_db, "A")
    assert deal_count(decision) == 2024
    _check(decision)


def test_the_middle_seat_pineapple() -> None:
    """Pineapple, the second of three on the last street: the third player's street to come."""
    decision = decision_at(_hand(Variant.PINEAPPLE, 11), 1, 4)
    assert deal_count(decision) == 165  # C(11, 3): 52 - 17 own - 13 and 11 seen
    deals = enumerate_deals(decision)
    assert deals is not None and deals.shape == (165, 3)
    assert len({tuple(row) for row in deals.tolist()}) == 165
    assert not set(deals.ravel().tolist()) & decision.known
    _check(decision)


def test_the_last_to_act_has_one_deal() -> None:
    """Nothing is unknown to the last player on the last street: one deal, the scalar verdict."""
    decision = decision_at(_hand(Variant.PINEAPPLE, 5), 2, 4)
    assert deal_count(decision) == 1
    _check(decision)


def test_several_slots_and_the_hero_own_last_street() -> None:
    """Two-player Classic, the last to act on the second to last street: the opponent's last
    card and the hero's own (28 × 27 deals), the hero's last card placed by the policy."""
    decision = decision_at(_hand(Variant.CLASSIC, 3, players=2), 1, 7)
    assert deal_count(decision) == 28 * 27
    _check(decision)


def test_too_many_deals_are_sampled(certain_db: Path) -> None:
    decision = _certain(certain_db, "A")
    assert enumerate_deals(decision, limit=2023) is None
    grade = grade_decision(decision, STANDARD, GradeSettings(rollouts=30, exact_limit=2000))
    assert grade is not None and not grade.exact
    exact = grade_decision(decision, STANDARD, GradeSettings())
    assert exact is not None
    # sampling agrees with the exact values within its noise (the exact spread of the deals)
    for sampled, value in zip(grade.tallies, exact.tallies, strict=True):
        if sampled.samples >= 30:
            spread = (value.total_sq / value.samples - value.ev ** 2) ** 0.5
            assert abs(sampled.ev - value.ev) <= 4 * spread / sampled.samples ** 0.5 + 1e-9
