"""The batch evaluator: whole columns of boards at once with numpy lookup tables.

It gives exactly the scalar verdicts of :mod:`pipeline.rules.board` and
:mod:`pipeline.rules.scoring` (tests/rules/test_batch.py checks this on many random boards).

How: every card maps to one packed 64-bit key (a rank key whose sums identify the rank multiset,
a rank bit and a suit key). Summing a row's card keys gives, in one integer, an index into a
table of non-flush row values, the rank bitmask (an index into a flush table) and a suit sum
that says whether the row is a flush. Rows are processed in cache-sized chunks.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

import numpy as np

from pipeline.rules.game import Variant
from pipeline.rules.ruleset import RoyaltyMode, RuleSet, ScoringMethod
from pipeline.rules.values import (
    CATEGORY_SHIFT,
    RANK_KEYS,
    HandClass,
    LowClass,
    evaluate_five_ranks,
    evaluate_low_ranks,
    evaluate_three_ranks,
    low_class,
)

_RANK_SUM_BITS = 24
_MASK_SHIFT = 24
_SUIT_SHIFT = 40
_SUIT_KEYS = (1, 8, 64, 512)
_CHUNK = 32_768


@dataclass(frozen=True, slots=True)
class _Tables:
    card_keys: np.ndarray  # (52,) int64 packed keys
    five_high: np.ndarray  # rank sum -> non-flush high value (int32)
    three_high: np.ndarray  # rank sum -> top value (int32)
    five_low: np.ndarray  # rank sum -> non-flush 2-7 low value (int32)
    low_class: np.ndarray  # rank sum -> LowClass of a non-flush low (int8)
    flush_high: np.ndarray  # rank bitmask -> flush / straight flush value (int32)
    is_flush: np.ndarray  # suit sum -> bool


@cache
def _tables() -> _Tables:
    card_keys = np.zeros(52, dtype=np.int64)
    for card in range(52):
        rank, suit = card >> 2, card & 3
        card_keys[card] = RANK_KEYS[rank] | ((1 << rank) << _MASK_SHIFT) | (_SUIT_KEYS[suit] << _SUIT_SHIFT)
    size = 5 * RANK_KEYS[-1] + 1
    five_high = np.zeros(size, dtype=np.int32)
    five_low = np.zeros(size, dtype=np.int32)
    low_classes = np.zeros(size, dtype=np.int8)
    three_high = np.zeros(size, dtype=np.int32)
    for ranks in itertools.combinations_with_replacement(range(13), 5):
        if max(ranks.count(rank) for rank in ranks) > 4:
            continue
        key = sum(RANK_KEYS[rank] for rank in ranks)
        five_high[key] = evaluate_five_ranks(ranks, flush=False)
        low_value = evaluate_low_ranks(ranks, flush=False)
        five_low[key] = low_value
        low_classes[key] = low_class(low_value)
    for ranks in itertools.combinations_with_replacement(range(13), 3):
        three_high[sum(RANK_KEYS[rank] for rank in ranks)] = evaluate_three_ranks(ranks)
    flush_high = np.zeros(1 << 13, dtype=np.int32)
    for ranks in itertools.combinations(range(13), 5):
        flush_high[sum(1 << rank for rank in ranks)] = evaluate_five_ranks(ranks, flush=True)
    is_flush = np.zeros(5 * _SUIT_KEYS[-1] + 1, dtype=bool)
    for suit_key in _SUIT_KEYS:
        is_flush[5 * suit_key] = True
    return _Tables(card_keys, five_high, three_high, five_low, low_classes, flush_high, is_flush)


@dataclass(frozen=True, slots=True)
class BoardColumns:
    """Verdicts for N boards as columns (row order top, middle, bottom).

    ``classes`` hold :class:`HandClass` numbers, except a 2-7 middle which holds :class:`LowClass`.
    """

    values: np.ndarray  # (N, 3) int32
    classes: np.ndarray  # (N, 3) int8
    foul: np.ndarray  # (N,) bool
    raw_royalties: np.ndarray  # (N, 3) int16
    royalties: np.ndarray  # (N, 3) int16
    fantasyland_cards: np.ndarray  # (N,) int8

    def __len__(self) -> int:
        return len(self.foul)


def _row_keys(cards: np.ndarray, keys: np.ndarray) -> np.ndarray:
    packed = keys[cards[:, 0]]
    for column in range(1, cards.shape[1]):
        packed = packed + keys[cards[:, column]]
    return packed


def _five_card_values(packed: np.ndarray, tables: _Tables) -> tuple[np.ndarray, np.ndarray]:
    rank_sum = packed & ((1 << _RANK_SUM_BITS) - 1)
    flush = tables.is_flush[packed >> _SUIT_SHIFT]
    high = tables.five_high[rank_sum]
    if flush.any():
        mask = (packed >> _MASK_SHIFT) & 0xFFFF
        high = np.where(flush, tables.flush_high[mask & 0x1FFF], high)
    return high, flush


def evaluate_boards(
    cards: np.ndarray,
    variant: Variant,
    rules: RuleSet,
    in_fantasyland: np.ndarray | None = None,
) -> BoardColumns:
    """Evaluate N complete boards given as an (N, 13) array of card codes (top 3, middle 5, bottom 5).

    Cards are assumed valid (0..51, no duplicates on a board); validation happens upstream.

    >>> from pipeline.rules.cards import parse_cards
    >>> from pipeline.rules.ruleset import STANDARD
    >>> cards = np.array([parse_cards("Qh Qd 2h 5c 6c 7h 8c 9c 2s 4s 6s Ts Ks"),
    ...                   parse_cards("As Ah 3s Qc Qs 4d 5s 7s 8d 9d Th Jh Js")])
    >>> columns = evaluate_boards(cards, Variant.CLASSIC, STANDARD)
    >>> columns.foul.tolist(), columns.royalties.tolist(), columns.fantasyland_cards.tolist()
    ([False, True], [[7, 4, 4], [0, 0, 0]], [13, 0])
    >>> columns.raw_royalties.tolist()[1]  # AA on top would have paid 9, but the board fouled
    [9, 0, 0]
    """
    cards = np.ascontiguousarray(cards, dtype=np.intp)
    if cards.ndim != 2 or cards.shape[1] != 13:
        raise ValueError(f"expected an (N, 13) card array, got shape {cards.shape}")
    count = cards.shape[0]
    flags = (
        np.zeros(count, dtype=bool) if in_fantasyland is None else np.asarray(in_fantasyland, dtype=bool)
    )
    values = np.empty((count, 3), dtype=np.int32)
    classes = np.empty((count, 3), dtype=np.int8)
    foul = np.empty(count, dtype=bool)
    raw = np.empty((count, 3), dtype=np.int16)
    fantasyland_cards = np.empty(count, dtype=np.int8)
    for start in range(0, count, _CHUNK):
        stop = min(start + _CHUNK, count)
        _evaluate_chunk(
            cards[start:stop], flags[start:stop], variant, rules,
            values[start:stop], classes[start:stop], foul[start:stop], raw[start:stop],
            fantasyland_cards[start:stop],
        )
    royalties = np.where(foul[:, None], np.int16(0), raw).astype(np.int16)
    return BoardColumns(values, classes, foul, raw, royalties, fantasyland_cards)


@cache
def _royalty_arrays(rules: RuleSet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    top = np.zeros(64, dtype=np.int16)  # index: (category << 4) | (rank + 1)
    for rank in range(13):
        top[(HandClass.PAIR << 4) | (rank + 1)] = rules.royalties.top_pairs[rank]
        top[(HandClass.TRIPS << 4) | (rank + 1)] = rules.royalties.top_trips[rank]
    return (
        top,
        np.asarray(rules.royalties.middle, dtype=np.int16),
        np.asarray(rules.royalties.bottom, dtype=np.int16),
        np.asarray(rules.royalties.lowball_middle, dtype=np.int16),
    )


def _evaluate_chunk(
    cards: np.ndarray,
    in_fantasyland: np.ndarray,
    variant: Variant,
    rules: RuleSet,
    values: np.ndarray,
    classes: np.ndarray,
    foul: np.ndarray,
    raw: np.ndarray,
    fantasyland_cards: np.ndarray,
) -> None:
    tables = _tables()
    keys = tables.card_keys
    top_royalty, middle_royalty, bottom_royalty, low_royalty = _royalty_arrays(rules)
    top_packed = _row_keys(cards[:, 0:3], keys)
    top = tables.three_high[top_packed & ((1 << _RANK_SUM_BITS) - 1)]
    bottom, _ = _five_card_values(_row_keys(cards[:, 8:13], keys), tables)
    middle_packed = _row_keys(cards[:, 3:8], keys)
    lowball = variant is Variant.LOWBALL_PINEAPPLE
    if lowball:
        rank_sum = middle_packed & ((1 << _RANK_SUM_BITS) - 1)
        middle_flush = tables.is_flush[middle_packed >> _SUIT_SHIFT]
        middle = np.where(middle_flush, 0, tables.five_low[rank_sum]).astype(np.int32)
        middle_class = np.where(middle_flush, 0, tables.low_class[rank_sum]).astype(np.int8)
        fouled = (middle == 0) | (top > bottom)
        middle_raw = low_royalty[middle_class]
    else:
        middle, _ = _five_card_values(middle_packed, tables)
        middle_class = (middle >> CATEGORY_SHIFT).astype(np.int8)
        fouled = (middle > bottom) | (top > middle)
        middle_raw = middle_royalty[middle_class]
    top_class = top >> CATEGORY_SHIFT
    bottom_class = bottom >> CATEGORY_SHIFT
    values[:, 0] = top
    values[:, 1] = middle
    values[:, 2] = bottom
    classes[:, 0] = top_class
    classes[:, 1] = middle_class
    classes[:, 2] = bottom_class
    foul[:] = fouled
    raw[:, 0] = top_royalty[(top >> 16) & 0x3F]
    raw[:, 1] = middle_raw
    raw[:, 2] = bottom_royalty[bottom_class]
    fantasyland_cards[:] = _fantasyland_cards(
        top, top_class, middle_class, bottom_class, fouled, in_fantasyland, variant, rules
    )


def _fantasyland_cards(
    top: np.ndarray,
    top_class: np.ndarray,
    middle_class: np.ndarray,
    bottom_class: np.ndarray,
    fouled: np.ndarray,
    in_fantasyland: np.ndarray,
    variant: Variant,
    rules: RuleSet,
) -> np.ndarray:
    fl = rules.fantasyland
    if not fl.enabled:
        return np.zeros(len(top), dtype=np.int8)
    top_rank = ((top >> 16) & 0xF) - 1
    trips = top_class == HandClass.TRIPS
    pair = top_class == HandClass.PAIR
    if variant is Variant.LOWBALL_PINEAPPLE:
        top_ok = trips | (pair & (top_rank >= fl.lowball_entry_top_pair))
        perfect = middle_class == LowClass.PERFECT_LOW
        entry = np.where(
            top_ok & perfect, fl.lowball_cards_both, np.where(top_ok | perfect, fl.lowball_cards, 0)
        )
        stay_cards = fl.lowball_cards
        middle_stays = np.zeros(len(top), dtype=bool)
    else:
        qualifies = trips | (pair & (top_rank >= fl.entry_top_pair))
        if variant is Variant.CLASSIC:
            entry_count = np.full(len(top), fl.cards_classic)
            stay_cards = fl.stay_cards_classic
        elif fl.progressive:
            tiers = np.asarray(fl.progressive_cards)
            entry_count = np.where(trips, tiers[3], tiers[np.clip(top_rank - 10, 0, 2)])
            stay_cards = fl.stay_cards_pineapple
        else:
            entry_count = np.full(len(top), fl.cards_pineapple)
            stay_cards = fl.stay_cards_pineapple
        entry = np.where(qualifies, entry_count, 0)
        middle_stays = (middle_class >= HandClass.FULL_HOUSE) if fl.stay_middle_full_house else False
    stays = (
        (trips & fl.stay_top_trips)
        | ((bottom_class >= HandClass.QUADS) & fl.stay_bottom_quads)
        | middle_stays
    )
    if fl.stay_requalify:
        stays = stays | (entry > 0)
    stay = np.where(stays, stay_cards, 0)
    result = np.where(in_fantasyland, stay, entry)
    return np.where(fouled, 0, result).astype(np.int8)


@dataclass(frozen=True, slots=True)
class PairColumns:
    """Pairwise outcomes for N pairs of boards, from the first board's view (before caps)."""

    rows: np.ndarray  # (N, 3) int8: +1 first won, -1 second won, 0 tie
    scoop: np.ndarray  # (N,) int8
    royalty_points: np.ndarray  # (N,) int32
    points: np.ndarray  # (N,) int32


def score_pairs(
    boards: BoardColumns, first: np.ndarray, second: np.ndarray, rules: RuleSet
) -> PairColumns:
    """Score board ``first[i]`` against board ``second[i]`` for every i (indexes into ``boards``).

    Board 0 (P) against board 1 (R, which scoops with 15 in royalties), both ways round:

    >>> from pipeline.rules.cards import parse_cards
    >>> from pipeline.rules.ruleset import STANDARD
    >>> boards = evaluate_boards(np.array([parse_cards("2c 3d 5h Jc Jd 4c 6d 8h Ac Ad 7c 7d 9h"),
    ...                                    parse_cards("Qh Qd 2h 5c 6c 7h 8c 9c 2s 4s 6s Ts Ks")]),
    ...                          Variant.CLASSIC, STANDARD)
    >>> pairs = score_pairs(boards, np.array([0, 1]), np.array([1, 0]), STANDARD)
    >>> pairs.points.tolist(), pairs.scoop.tolist(), pairs.royalty_points.tolist()
    ([-21, 21], [-1, 1], [-15, 15])
    """
    first_values = boards.values[first]
    second_values = boards.values[second]
    first_foul = boards.foul[first]
    second_foul = boards.foul[second]
    rows = np.sign(first_values.astype(np.int64) - second_values).astype(np.int8)
    rows[first_foul] = -1
    rows[second_foul] = 1
    rows[first_foul & second_foul] = 0
    won = (rows == 1).sum(axis=1)
    lost = (rows == -1).sum(axis=1)
    scoop = ((won == 3).astype(np.int8) - (lost == 3).astype(np.int8))
    points = (won - lost).astype(np.int32)
    if rules.scoring.method is ScoringMethod.ONE_SIX:
        points += scoop * np.int32(rules.scoring.scoop_bonus)
    else:
        points += (won >= 2).astype(np.int32) - (lost >= 2).astype(np.int32)
    first_royalties = boards.royalties[first].astype(np.int32)
    second_royalties = boards.royalties[second].astype(np.int32)
    if rules.scoring.royalty_mode is RoyaltyMode.NETTED:
        royalty_points = first_royalties.sum(axis=1) - second_royalties.sum(axis=1)
    else:
        royalty_points = (
            np.where(rows > 0, first_royalties, 0) - np.where(rows < 0, second_royalties, 0)
        ).sum(axis=1)
    royalty_points = royalty_points.astype(np.int32)
    return PairColumns(rows, scoop, royalty_points, points + royalty_points)


@dataclass(frozen=True, slots=True)
class SettledPair:
    """One pair of settlement positions across many hands, scored and settled."""

    first_position: int
    second_position: int
    hands: np.ndarray  # indexes of the hands (rows of ``seats``) where both positions sit
    first: np.ndarray  # board indexes of the first player
    second: np.ndarray  # board indexes of the second player
    outcome: PairColumns  # before the cap
    settled: np.ndarray  # int64 points the first player receives after the cap


def settle_pairs(
    boards: BoardColumns, seats: np.ndarray, rules: RuleSet
) -> tuple[np.ndarray, list[SettledPair]]:
    """Settle H hands pair by pair in strict order, as :func:`pipeline.rules.scoring.score_hand`.

    ``seats`` is an (H, P) array of board indexes in settlement order (left of the button first),
    -1 where a hand has fewer than P players. Returns the (H, P) int64 points per player and every
    pair's outcome and settled amount (a per-hand cap applied with the running totals).

    One hand of P, F (fouled) and R under a per-hand cap of 20, settled in the order P, F, R:

    >>> from pipeline.rules.cards import parse_cards
    >>> from pipeline.rules.ruleset import ruleset_from_mapping
    >>> cap20 = ruleset_from_mapping({"scoring": {"cap": 20}})
    >>> boards = evaluate_boards(np.array([parse_cards("2c 3d 5h Jc Jd 4c 6d 8h Ac Ad 7c 7d 9h"),
    ...                                    parse_cards("As Ah 3s Qc Qs 4d 5s 7s 8d 9d Th Jh Js"),
    ...                                    parse_cards("Qh Qd 2h 5c 6c 7h 8c 9c 2s 4s 6s Ts Ks")]),
    ...                          Variant.CLASSIC, cap20)
    >>> totals, pairs = settle_pairs(boards, np.array([[0, 1, 2]]), cap20)
    >>> totals.tolist()
    [[-15, -20, 35]]
    >>> [(pair.first_position, pair.second_position, pair.settled.tolist()) for pair in pairs]
    [(0, 1, [6]), (0, 2, [-21]), (1, 2, [-14])]
    """
    hands, players = seats.shape
    totals = np.zeros((hands, players), dtype=np.int64)
    cap = rules.scoring.cap
    settled_pairs: list[SettledPair] = []
    for i in range(players):
        for j in range(i + 1, players):
            present = np.flatnonzero((seats[:, i] >= 0) & (seats[:, j] >= 0))
            if not len(present):
                continue
            first = seats[present, i]
            second = seats[present, j]
            outcome = score_pairs(boards, first, second, rules)
            amount = outcome.points.astype(np.int64)
            if cap:
                first_total = totals[present, i]
                second_total = totals[present, j]
                done = (first_total <= -cap) | (second_total <= -cap)
                amount = np.where(amount > 0, np.minimum(amount, cap + second_total), amount)
                amount = np.where(amount < 0, -np.minimum(-amount, cap + first_total), amount)
                amount = np.where(done, 0, amount)
            totals[present, i] += amount
            totals[present, j] -= amount
            settled_pairs.append(SettledPair(i, j, present, first, second, outcome, amount))
    return totals, settled_pairs


def settle_hands(boards: BoardColumns, seats: np.ndarray, rules: RuleSet) -> np.ndarray:
    """Points per player for H hands at once: the totals of :func:`settle_pairs`, as int32.

    Two hands at once: P, Q, R (three players) and R against P alone (-1 marks the empty seat):

    >>> from pipeline.rules.cards import parse_cards
    >>> from pipeline.rules.ruleset import STANDARD
    >>> boards = evaluate_boards(np.array([parse_cards("2c 3d 5h Jc Jd 4c 6d 8h Ac Ad 7c 7d 9h"),
    ...                                    parse_cards("4h 6h 8s Tc Td 3c 5d 9s Kc Kd Kh 2d 3h"),
    ...                                    parse_cards("Qh Qd 2h 5c 6c 7h 8c 9c 2s 4s 6s Ts Ks")]),
    ...                          Variant.CLASSIC, STANDARD)
    >>> settle_hands(boards, np.array([[0, 1, 2], [2, 0, -1]]), STANDARD).tolist()
    [[-22, -20, 42], [21, -21, 0]]
    """
    return settle_pairs(boards, seats, rules)[0].astype(np.int32)
