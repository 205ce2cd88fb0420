"""Fast row values for the simulator: lookup tables built once from the rules core's own functions.

The bots and the Fantasyland setter judge millions of partial and complete rows, so they cannot
afford :func:`pipeline.rules.values.evaluate_five` (which counts ranks in a ``Counter``) for
each. Every table here is filled by calling the rules core's value functions on every possible
rank multiset, so a lookup gives exactly the rules core's value.

Keys: the sum of :data:`pipeline.rules.values.RANK_KEYS` over a row's ranks identifies the rank
multiset (each rank at most four times). A five-card row that is a flush is looked up by its
13-bit rank mask instead. Tables exist both as Python lists (fast for scalar code) and as numpy
arrays (for whole columns of candidate rows).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from pipeline.rules.board import fantasyland_cards_next
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.values import (
    CATEGORY_SHIFT,
    RANK_KEYS,
    HandClass,
    evaluate_five_ranks,
    evaluate_low_ranks,
    evaluate_three_ranks,
    low_class,
)

RANK_KEY_OF_CARD: tuple[int, ...] = tuple(RANK_KEYS[card >> 2] for card in range(52))
"""Rank key of each card code (sums of these identify rank multisets)."""

RANK_BIT_OF_CARD: tuple[int, ...] = tuple(1 << (card >> 2) for card in range(52))
"""The rank bit of each card code."""

KEY_LIMIT = 5 * RANK_KEYS[-1] + 1
"""One more than the largest rank-key sum of five cards."""


def _build() -> tuple[list[int], list[int], list[int], list[int], list[int]]:
    five_high = [0] * KEY_LIMIT
    five_low = [0] * KEY_LIMIT
    five_low_class = [0] * KEY_LIMIT
    three_high = [0] * KEY_LIMIT
    for ranks in itertools.combinations_with_replacement(range(13), 5):
        if max(ranks.count(rank) for rank in ranks) > 4:
            continue
        key = sum(RANK_KEYS[rank] for rank in ranks)
        five_high[key] = evaluate_five_ranks(ranks, flush=False)
        five_low[key] = evaluate_low_ranks(ranks, flush=False)
        five_low_class[key] = int(low_class(five_low[key]))
    for ranks in itertools.combinations_with_replacement(range(13), 3):
        three_high[sum(RANK_KEYS[rank] for rank in ranks)] = evaluate_three_ranks(ranks)
    flush_high = [0] * (1 << 13)
    for ranks in itertools.combinations(range(13), 5):
        flush_high[sum(1 << rank for rank in ranks)] = evaluate_five_ranks(ranks, flush=True)
    return five_high, five_low, five_low_class, three_high, flush_high


FIVE_HIGH, FIVE_LOW, FIVE_LOW_CLASS, THREE_HIGH, FLUSH_HIGH = _build()
"""Lists: rank-key sum -> non-flush five-card value, non-flush 2-7 low value (0 = no low), its
:class:`~pipeline.rules.values.LowClass`, three-card top value; and 13-bit rank mask -> flush
(or straight flush) value."""

FIVE_HIGH_ARRAY = np.asarray(FIVE_HIGH, dtype=np.int64)
FIVE_LOW_ARRAY = np.asarray(FIVE_LOW, dtype=np.int64)
FIVE_LOW_CLASS_ARRAY = np.asarray(FIVE_LOW_CLASS, dtype=np.int64)
THREE_HIGH_ARRAY = np.asarray(THREE_HIGH, dtype=np.int64)
FLUSH_HIGH_ARRAY = np.asarray(FLUSH_HIGH, dtype=np.int64)
RANK_KEY_ARRAY = np.asarray(RANK_KEYS, dtype=np.int64)


def five_value(cards: Sequence[int]) -> int:
    """High value of a complete five-card row (exactly :func:`pipeline.rules.values.evaluate_five`)."""
    a, b, c, d, e = cards
    if (a & 3) == (b & 3) == (c & 3) == (d & 3) == (e & 3):
        bits = RANK_BIT_OF_CARD
        return FLUSH_HIGH[bits[a] | bits[b] | bits[c] | bits[d] | bits[e]]
    keys = RANK_KEY_OF_CARD
    return FIVE_HIGH[keys[a] + keys[b] + keys[c] + keys[d] + keys[e]]


def low_value(cards: Sequence[int]) -> int:
    """2-7 low value of a complete middle (exactly :func:`pipeline.rules.values.evaluate_low`)."""
    a, b, c, d, e = cards
    if (a & 3) == (b & 3) == (c & 3) == (d & 3) == (e & 3):
        return 0
    keys = RANK_KEY_OF_CARD
    return FIVE_LOW[keys[a] + keys[b] + keys[c] + keys[d] + keys[e]]


def three_value(cards: Sequence[int]) -> int:
    """Value of a complete top row (exactly :func:`pipeline.rules.values.evaluate_three`)."""
    keys = RANK_KEY_OF_CARD
    a, b, c = cards
    return THREE_HIGH[keys[a] + keys[b] + keys[c]]


def top_royalty_of(value: int, rules: RuleSet) -> int:
    """Royalty of a top row value (pairs and trips by rank), as the rules core pays it."""
    category = value >> CATEGORY_SHIFT
    rank = ((value >> 16) & 0xF) - 1
    if category == HandClass.TRIPS:
        return rules.royalties.top_trips[rank]
    if category == HandClass.PAIR:
        return rules.royalties.top_pairs[rank]
    return 0


def middle_royalty_of(value: int, variant: Variant, rules: RuleSet) -> int:
    """Royalty of a middle row value (a 2-7 low value in 2-7 Pineapple)."""
    if variant is Variant.LOWBALL_PINEAPPLE:
        return rules.royalties.lowball_middle[low_class(value)]
    return rules.royalties.middle[value >> CATEGORY_SHIFT]


def bottom_royalty_of(value: int, rules: RuleSet) -> int:
    """Royalty of a bottom row value."""
    return rules.royalties.bottom[value >> CATEGORY_SHIFT]


class BoardResult:
    """The verdict on one complete board from the fast tables: values, foul, royalties, FL cards."""

    __slots__ = ("values", "foul", "royalties", "fantasyland_cards")

    def __init__(
        self, values: tuple[int, int, int], foul: bool, royalties: tuple[int, int, int],
        fantasyland_cards: int,
    ) -> None:
        self.values = values
        self.foul = foul
        self.royalties = royalties
        self.fantasyland_cards = fantasyland_cards


def judge_board(
    top: Sequence[int],
    middle: Sequence[int],
    bottom: Sequence[int],
    variant: Variant,
    rules: RuleSet,
    in_fantasyland: bool,
) -> BoardResult:
    """Judge a complete board like :func:`pipeline.rules.board.evaluate_board`, only faster.

    The Fantasyland card count comes from the rules core's own
    :func:`~pipeline.rules.board.fantasyland_cards_next`.
    """
    top_value = three_value(top)
    bottom_value = five_value(bottom)
    if variant is Variant.LOWBALL_PINEAPPLE:
        middle_value = low_value(middle)
        foul = middle_value == 0 or top_value > bottom_value
    else:
        middle_value = five_value(middle)
        foul = middle_value > bottom_value or top_value > middle_value
    if foul:
        royalties = (0, 0, 0)
    else:
        royalties = (
            top_royalty_of(top_value, rules),
            middle_royalty_of(middle_value, variant, rules),
            bottom_royalty_of(bottom_value, rules),
        )
    cards = fantasyland_cards_next(
        top_value, middle_value, bottom_value, foul, variant, rules, in_fantasyland
    )
    return BoardResult((top_value, middle_value, bottom_value), foul, royalties, cards)
