"""Hand values for OFC rows: 5-card high hands, 3-card tops, and 2-7 lowball middles.

A row's *value* is an ``int`` where a larger value is a stronger row, comparable across row
sizes exactly as docs/rules.md says: category first, then ranks in order (pair rank, then
kickers high to low), and when every card of the shorter row ties, the longer row is stronger.

Encoding: ``category << 20`` plus five 4-bit rank slots, most significant first. Ranks are
stored as ``rank index + 1`` (deuce 1 .. ace 13) so an empty slot (0) is below every rank, which
makes the longer row win when the shorter one is exhausted. Slots hold the rank groups ordered
by (count, rank) descending: a pair of queens with a five is ``[Q, 5]``, a full house ``[trips,
pair]``, a straight its top card (five for the wheel).

The rule's own examples: a top of Q-Q-5 beats a middle of Q-Q-4-3-2 (kicker 5 over 4, a foul),
while A-K-Q on top is below A-K-Q-3-2 in the middle (every top card ties; the longer row wins):

>>> from pipeline.rules.cards import parse_cards
>>> evaluate_row(parse_cards("Qs Qh 5d")) > evaluate_row(parse_cards("Qc Qd 4h 3s 2c"))
True
>>> evaluate_row(parse_cards("As Kh Qd")) < evaluate_row(parse_cards("Ac Kd Qh 3s 2c"))
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from enum import IntEnum

from pipeline.rules.cards import RANK_NAMES, RANK_PLURALS, Card, rank_of, suit_of

CATEGORY_SHIFT = 20


class HandClass(IntEnum):
    """Categories of a high hand; the integer order is the strength order."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    TRIPS = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    QUADS = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9

    @property
    def label(self) -> str:
        """Snake-case name used in outputs and rules files (``full_house``)."""
        return self.name.lower()


class LowClass(IntEnum):
    """Classes of a 2-7 lowball middle; larger is better. ``NO_LOW`` fouls the board."""

    NO_LOW = 0
    TEN_LOW = 1
    NINE_LOW = 2
    EIGHT_LOW = 3
    SEVEN_LOW = 4
    PERFECT_LOW = 5

    @property
    def label(self) -> str:
        """Snake-case name used in outputs and rules files (``seven_low``)."""
        return self.name.lower()


HIGH_CLASS_LABELS = tuple(hand_class.label for hand_class in HandClass)
LOW_CLASS_LABELS = tuple(low_class.label for low_class in LowClass)

# Rank keys whose sums identify any multiset of up to five ranks (each rank at most four times);
# found by a greedy search and checked by tests/rules/test_values.py. Used by the batch evaluator.
RANK_KEYS = (0, 1, 5, 22, 94, 312, 992, 2422, 5624, 12522, 19998, 43258, 79415)
PERFECT_LOW_RANKS = (5, 3, 2, 1, 0)  # 7-5-4-3-2


def pack_value(category: int, ranks: Sequence[int]) -> int:
    """Pack a category and up to five rank indexes (most significant first) into a row value.

    A pair of queens (rank 10) with a five (rank 3): category 1, slots Q+1 = 11 and 5+1 = 4.

    >>> hex(pack_value(HandClass.PAIR, [10, 3]))
    '0x1b4000'
    """
    value = category << CATEGORY_SHIFT
    for slot, rank in enumerate(ranks):
        value |= (rank + 1) << (4 * (4 - slot))
    return value


def value_class(value: int) -> HandClass:
    """The hand class of a high row value.

    >>> from pipeline.rules.cards import parse_cards
    >>> value_class(evaluate_five(parse_cards("Ac 2d 3h 4s 5c")))
    <HandClass.STRAIGHT: 4>
    """
    return HandClass(value >> CATEGORY_SHIFT)


def _grouped_ranks(ranks: Sequence[int]) -> list[tuple[int, int]]:
    """(count, rank) pairs, strongest group first."""
    return sorted(((count, rank) for rank, count in Counter(ranks).items()), reverse=True)


def _straight_high(distinct_ranks: Sequence[int]) -> int | None:
    """Top rank of a five-card straight (3 for the wheel's five), or None."""
    if len(distinct_ranks) != 5:
        return None
    ordered = sorted(distinct_ranks)
    if ordered[4] - ordered[0] == 4:
        return ordered[4]
    if ordered == [0, 1, 2, 3, 12]:
        return 3
    return None


def evaluate_five_ranks(ranks: Sequence[int], flush: bool) -> int:
    """Value of a five-card high hand given its rank indexes and whether it is a flush.

    >>> describe_value(evaluate_five_ranks([12, 12, 12, 7, 7], flush=False))
    'full house, aces full of nines'
    """
    groups = _grouped_ranks(ranks)
    counts = [count for count, _ in groups]
    ordered = [rank for _, rank in groups]
    straight_high = _straight_high(ordered)
    if straight_high is not None and flush:
        category = HandClass.ROYAL_FLUSH if straight_high == 12 else HandClass.STRAIGHT_FLUSH
        return pack_value(category, [straight_high])
    if counts[0] == 4:
        return pack_value(HandClass.QUADS, ordered)
    if counts[:2] == [3, 2]:
        return pack_value(HandClass.FULL_HOUSE, ordered)
    if flush:
        return pack_value(HandClass.FLUSH, ordered)
    if straight_high is not None:
        return pack_value(HandClass.STRAIGHT, [straight_high])
    if counts[0] == 3:
        return pack_value(HandClass.TRIPS, ordered)
    if counts[:2] == [2, 2]:
        return pack_value(HandClass.TWO_PAIR, ordered)
    if counts[0] == 2:
        return pack_value(HandClass.PAIR, ordered)
    return pack_value(HandClass.HIGH_CARD, ordered)


def evaluate_three_ranks(ranks: Sequence[int]) -> int:
    """Value of a three-card top: trips, pair or high card only.

    >>> describe_value(evaluate_three_ranks([0, 0, 0]))
    'three twos'
    """
    groups = _grouped_ranks(ranks)
    ordered = [rank for _, rank in groups]
    category = {3: HandClass.TRIPS, 2: HandClass.PAIR, 1: HandClass.HIGH_CARD}[groups[0][0]]
    return pack_value(category, ordered)


def evaluate_five(cards: Sequence[Card]) -> int:
    """Value of a five-card middle or bottom row (standard high poker, wheel lowest straight).

    >>> from pipeline.rules.cards import parse_cards
    >>> wheel = evaluate_five(parse_cards("Ac 2d 3h 4s 5c"))
    >>> describe_value(wheel)
    'five-high straight'
    >>> wheel < evaluate_five(parse_cards("2c 3d 4h 5s 6c"))
    True
    """
    if len(cards) != 5:
        raise ValueError(f"a five-card row needs 5 cards, got {len(cards)}")
    suits = {suit_of(card) for card in cards}
    return evaluate_five_ranks([rank_of(card) for card in cards], flush=len(suits) == 1)


def evaluate_three(cards: Sequence[Card]) -> int:
    """Value of a three-card top row (straights and flushes do not count).

    >>> from pipeline.rules.cards import parse_cards
    >>> describe_value(evaluate_three(parse_cards("Qh Jh Th")))
    'queen high'
    >>> value_class(evaluate_three(parse_cards("6h 6d 3h")))
    <HandClass.PAIR: 1>
    """
    if len(cards) != 3:
        raise ValueError(f"a top row needs 3 cards, got {len(cards)}")
    return evaluate_three_ranks([rank_of(card) for card in cards])


def evaluate_row(cards: Sequence[Card]) -> int:
    """Value of a full row of 3 or 5 cards.

    >>> from pipeline.rules.cards import parse_cards
    >>> describe_value(evaluate_row(parse_cards("Kc Kd 4h")))
    'pair of kings'
    >>> describe_value(evaluate_row(parse_cards("9c 9d 9h 5s 5c")))
    'full house, nines full of fives'
    """
    return evaluate_three(cards) if len(cards) == 3 else evaluate_five(cards)


# --- 2-7 lowball ---------------------------------------------------------------------------
LOW_VALUE_FLAG = 1 << CATEGORY_SHIFT
_LOW_CODE_MAX = 0xFFFFF


def evaluate_low_ranks(ranks: Sequence[int], flush: bool) -> int:
    """Value of a 2-7 lowball middle: 0 when it does not qualify, else larger is a better low.

    Qualifying means ten-high or better with no pair, straight or flush (the ace is always high).

    >>> evaluate_low_ranks([5, 3, 2, 1, 0], flush=False) > evaluate_low_ranks([6, 3, 2, 1, 0], flush=False)
    True
    >>> evaluate_low_ranks([5, 3, 2, 1, 0], flush=True)  # a flush never qualifies
    0
    """
    distinct = sorted(set(ranks), reverse=True)
    if flush or len(distinct) != 5 or distinct[0] - distinct[4] == 4 or distinct[0] > 8:
        return 0
    code = 0
    for rank in distinct:
        code = (code << 4) | (rank + 1)
    return LOW_VALUE_FLAG | (_LOW_CODE_MAX - code)


def evaluate_low(cards: Sequence[Card]) -> int:
    """Value of a five-card 2-7 lowball middle (0 = does not qualify: the board fouls).

    >>> from pipeline.rules.cards import parse_cards
    >>> evaluate_low(parse_cards("7c 5d 4h 3s 2c")) > evaluate_low(parse_cards("8c 6d 4h 3s 2c"))
    True
    >>> evaluate_low(parse_cards("Ac 2d 3h 4s 5c"))  # the ace is high: ace-high, no low
    0
    """
    if len(cards) != 5:
        raise ValueError(f"a five-card row needs 5 cards, got {len(cards)}")
    suits = {suit_of(card) for card in cards}
    return evaluate_low_ranks([rank_of(card) for card in cards], flush=len(suits) == 1)


def low_class(value: int) -> LowClass:
    """The class of a lowball middle value (by its high card; 7-5-4-3-2 is ``PERFECT_LOW``).

    >>> from pipeline.rules.cards import parse_cards
    >>> low_class(evaluate_low(parse_cards("7c 5d 4h 3s 2c")))
    <LowClass.PERFECT_LOW: 5>
    >>> low_class(evaluate_low(parse_cards("7c 6d 4h 3s 2c"))).label
    'seven_low'
    >>> low_class(0).label
    'no_low'
    """
    if value == 0:
        return LowClass.NO_LOW
    code = _LOW_CODE_MAX - (value & _LOW_CODE_MAX)
    high_rank = (code >> 16) - 1
    if high_rank == 5:
        perfect = 0
        for rank in PERFECT_LOW_RANKS:
            perfect = (perfect << 4) | (rank + 1)
        return LowClass.PERFECT_LOW if code == perfect else LowClass.SEVEN_LOW
    return {6: LowClass.EIGHT_LOW, 7: LowClass.NINE_LOW, 8: LowClass.TEN_LOW}[high_rank]


# --- descriptions --------------------------------------------------------------------------
def value_ranks(value: int) -> list[int]:
    """The rank indexes stored in a high value's slots, most significant first.

    >>> from pipeline.rules.cards import parse_cards
    >>> value_ranks(evaluate_three(parse_cards("Qs Qh 5d")))  # queen (10), then the five (3)
    [10, 3]
    """
    slots = [(value >> (4 * (4 - slot))) & 0xF for slot in range(5)]
    return [slot - 1 for slot in slots if slot]


def describe_value(value: int) -> str:
    """A readable name of a high row value: ``pair of queens``, ``ace-high straight``.

    >>> from pipeline.rules.cards import parse_cards
    >>> describe_value(evaluate_five(parse_cards("Th Jh Qh Kh Ah")))
    'royal flush'
    >>> describe_value(evaluate_five(parse_cards("Kc Kd 8h 8s Ac")))
    'two pair, kings and eights'
    """
    hand_class = value_class(value)
    ranks = value_ranks(value)
    top = ranks[0]
    match hand_class:
        case HandClass.HIGH_CARD:
            return f"{RANK_NAMES[top]} high"
        case HandClass.PAIR:
            return f"pair of {RANK_PLURALS[top]}"
        case HandClass.TWO_PAIR:
            return f"two pair, {RANK_PLURALS[top]} and {RANK_PLURALS[ranks[1]]}"
        case HandClass.TRIPS:
            return f"three {RANK_PLURALS[top]}"
        case HandClass.STRAIGHT:
            return f"{RANK_NAMES[top]}-high straight"
        case HandClass.FLUSH:
            return f"{RANK_NAMES[top]}-high flush"
        case HandClass.FULL_HOUSE:
            return f"full house, {RANK_PLURALS[top]} full of {RANK_PLURALS[ranks[1]]}"
        case HandClass.QUADS:
            return f"four {RANK_PLURALS[top]}"
        case HandClass.STRAIGHT_FLUSH:
            return f"{RANK_NAMES[top]}-high straight flush"
        case HandClass.ROYAL_FLUSH:
            return "royal flush"
    raise ValueError(f"not a row value: {value}")


def describe_low(value: int) -> str:
    """A readable name of a lowball middle value: ``7-5-4-3-2 (perfect low)``, ``no low``.

    >>> from pipeline.rules.cards import parse_cards
    >>> describe_low(evaluate_low(parse_cards("Tc 9d 8h 7s 5c")))
    'T-9-8-7-5 low'
    >>> describe_low(0)
    'no qualifying low'
    """
    if value == 0:
        return "no qualifying low"
    code = _LOW_CODE_MAX - (value & _LOW_CODE_MAX)
    ranks = [((code >> (4 * (4 - slot))) & 0xF) - 1 for slot in range(5)]
    text = "-".join("23456789TJQKA"[rank] for rank in ranks)
    return f"{text} low"
