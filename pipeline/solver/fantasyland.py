"""The exact Fantasyland setter: the best legal board from 13-17 cards dealt at once.

:func:`solve_fantasyland` maximises ``royalties + stay_value × stays`` over every legal way to
set 13 of the cards (the rest are discarded), where ``stays`` means the board keeps the player
in Fantasyland under the rule set. It is exact, not a heuristic.

How it stays fast (a 14-card hand has about a million arrangements): all five- and three-card
subsets of the hand are valued at once with numpy. A row *scores* when it earns a royalty or
qualifies for the stay; the optimum is a choice, for each row, of either one scoring subset or a
*filler* (any cards that keep the board legal). Scoring subsets are few, so a branch-and-bound
walks scoring choices best-first: the bound of a partial choice is the sum of the best possible
score of each row still open, and a branch stops as soon as that cannot beat the best board
found. Only a complete choice that could still win is checked for legal fillers.

Why the pruning is safe: with non-negative royalties (checked), every legal board's value equals
the score of its scoring rows (fillers score 0 by definition), and any legal completion of a
choice is worth at least that choice's score. So the best feasible choice is the optimum, and
no pruned branch could contain a better board. tests/simulate/test_fantasyland.py checks this
against brute force over every arrangement of random 13- and 14-card deals.
"""

from __future__ import annotations

import itertools
import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache

import numpy as np

from pipeline.rules.cards import Card, card_text
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.values import CATEGORY_SHIFT, HandClass, LowClass
from pipeline.solver.tables import (
    FIVE_HIGH_ARRAY,
    FIVE_LOW_ARRAY,
    FIVE_LOW_CLASS_ARRAY,
    FLUSH_HIGH_ARRAY,
    RANK_KEY_ARRAY,
    THREE_HIGH_ARRAY,
    judge_board,
)

DEFAULT_STAY_VALUE = 10
"""Points a stay in Fantasyland is assumed to be worth, on top of the board's royalties."""

MIN_CARDS = 13
MAX_CARDS = 17


@dataclass(frozen=True, slots=True)
class Arrangement:
    """A set Fantasyland board.

    ``royalties`` are per row (top, middle, bottom); ``stays`` is true when the board keeps the
    player in Fantasyland; ``value`` is ``sum(royalties) + stay_value`` when it stays, else the
    royalty sum. ``foul`` is true only when no legal board exists (possible in 2-7 Pineapple
    without five low cards); the board is then some fouled arrangement worth 0.
    """

    top: tuple[Card, ...]
    middle: tuple[Card, ...]
    bottom: tuple[Card, ...]
    discards: tuple[Card, ...]
    royalties: tuple[int, int, int]
    stays: bool
    value: float
    foul: bool = False

    @property
    def royalty_total(self) -> int:
        """Royalties the board collects."""
        return sum(self.royalties)

    def as_text(self) -> dict[str, list[str]]:
        """Rows and discards as canonical card texts."""
        return {
            "top": [card_text(card) for card in self.top],
            "middle": [card_text(card) for card in self.middle],
            "bottom": [card_text(card) for card in self.bottom],
            "discards": [card_text(card) for card in self.discards],
        }


@dataclass(frozen=True, slots=True)
class Subsets:
    """Every k-subset of n card positions: incidence matrix, bitmask and index of each subset."""

    incidence: np.ndarray  # (K, n) float64, 1 where the subset holds the position
    masks: tuple[int, ...]
    mask_array: np.ndarray
    positions: np.ndarray  # (K, k) the positions of each subset


@cache
def subsets_of(count: int, size: int) -> Subsets:
    """Every ``size``-subset of ``count`` card positions, in ``itertools.combinations`` order
    (the order the setter lists them in, and its tie-breaks follow)."""
    positions = list(itertools.combinations(range(count), size))
    incidence = np.zeros((len(positions), count), dtype=np.float64)
    for row, chosen in enumerate(positions):
        incidence[row, list(chosen)] = 1.0
    masks = tuple(sum(1 << position for position in chosen) for chosen in positions)
    return Subsets(
        incidence, masks, np.asarray(masks, dtype=np.int64),
        np.asarray(positions, dtype=np.int64).reshape(-1, size),
    )


def _compatible(
    lower: tuple[np.ndarray, np.ndarray],
    upper: tuple[np.ndarray, np.ndarray],
    ordered: bool,
    open_position: int,
) -> list[list[int]]:
    """For each lower-row candidate, the positions of the upper-row candidates that fit with it.

    Candidates come as (masks, values) arrays. Fitting means no shared card and, when
    ``ordered``, a value not above the lower row's. Each list keeps score order and ends with
    ``open_position`` (the filler).
    """
    lower_masks, lower_values = lower
    upper_masks, upper_values = upper
    if not len(lower_masks):
        return []
    if not len(upper_masks):
        return [[open_position] for _ in range(len(lower_masks))]
    fits = (lower_masks[:, None] & upper_masks[None, :]) == 0
    if ordered:
        fits &= upper_values[None, :] <= lower_values[:, None]
    rows, columns = np.nonzero(fits)
    bounds = np.searchsorted(rows, np.arange(len(lower_masks) + 1)).tolist()
    columns_list = columns.tolist()
    return [
        [*columns_list[bounds[row]:bounds[row + 1]], open_position]
        for row in range(len(lower_masks))
    ]


class _ScoreCap:
    """The best score among scoring subsets whose value is at most some value (0 when none)."""

    __slots__ = ("values", "best_so_far", "overall")

    def __init__(self, candidates: list[tuple[float, int, int, int, bool, int]]):
        by_value = sorted((candidate[2], candidate[0]) for candidate in candidates)
        self.values = [value for value, _ in by_value]
        self.best_so_far: list[float] = []
        best: float = 0
        for _, score in by_value:
            best = max(best, score)
            self.best_so_far.append(best)
        self.overall: float = best

    def under(self, value: int) -> float:
        """The best score of a subset valued at most ``value``."""
        position = bisect_right(self.values, value)
        return self.best_so_far[position - 1] if position else 0


@lru_cache(maxsize=1 << 16)
def _free_subset_indexes(count: int, size: int, free: int) -> tuple[int, ...]:
    """Indexes (among all ``size``-subsets of ``count`` positions) of the subsets of ``free``."""
    bits = [1 << position for position in range(count) if free >> position & 1]
    if len(bits) < size:
        return ()
    index_of = _index_of_mask(count, size)
    return tuple(index_of[sum(chosen)] for chosen in itertools.combinations(bits, size))


@cache
def _index_of_mask(count: int, size: int) -> dict[int, int]:
    return {mask: index for index, mask in enumerate(subsets_of(count, size).masks)}


SUIT_KEYS = (1, 8, 64, 512)
"""Each suit's key: five cards are of one suit when their keys sum to five times one key."""
IS_FLUSH = np.zeros(5 * 512 + 1, dtype=bool)
"""Whether a sum of five suit keys is a flush."""
IS_FLUSH[[5 * key for key in SUIT_KEYS]] = True


def check_setter_rules(rules: RuleSet, stay_value: float) -> None:
    """Raise :class:`ValueError` when the setter cannot run under these rules: a negative
    ``stay_value`` or a negative royalty (its pruning counts on non-negative scores)."""
    tables = rules.royalties
    if not 0 <= stay_value < math.inf:  # also false for nan
        raise ValueError(f"stay_value must be a finite number ≥ 0, got {stay_value}")
    for name in ("top_pairs", "top_trips", "middle", "bottom", "lowball_middle"):
        if min(getattr(tables, name)) < 0:
            raise ValueError(
                f"the Fantasyland setter needs non-negative royalties; rules {rules.name!r} "
                f"has a negative {name.replace('_', ' ')} royalty"
            )


def solve_fantasyland(
    cards: Sequence[Card],
    variant: Variant,
    rules: RuleSet,
    stay_value: float = DEFAULT_STAY_VALUE,
) -> Arrangement:
    """The best legal board from a Fantasyland deal of 13-17 cards.

    Maximises royalties plus ``stay_value`` when the board keeps the player in Fantasyland (a
    stay, judged as the rules core judges it for a player in Fantasyland). Ties go to the first
    board found, with bottoms tried strongest first. Pure and deterministic. Raises
    :class:`ValueError` for a wrong card count, repeated cards, a negative ``stay_value`` or a
    rule set with negative royalties.
    """
    cards = tuple(int(card) for card in cards)
    count = len(cards)
    if not MIN_CARDS <= count <= MAX_CARDS:
        raise ValueError(f"a Fantasyland deal has {MIN_CARDS}-{MAX_CARDS} cards, got {count}")
    if len(set(cards)) != count or not all(0 <= card < 52 for card in cards):
        raise ValueError("Fantasyland cards must be distinct card codes 0..51")
    check_setter_rules(rules, stay_value)
    return _Solver(cards, variant, rules, stay_value).solve()


class _Solver:
    """One branch-and-bound search (see the module docstring)."""

    def __init__(self, cards: tuple[Card, ...], variant: Variant, rules: RuleSet, stay_value: float):
        self.cards = cards
        self.variant = variant
        self.rules = rules
        self.stay_value = stay_value
        self.lowball = variant is Variant.LOWBALL_PINEAPPLE
        self.all_mask = (1 << len(cards)) - 1
        self._filler_cache: dict[tuple[int, int], int] = {}
        self._value_subsets()

    # --- valuing every subset -------------------------------------------------------------
    def _value_subsets(self) -> None:
        """Value every five- and three-card subset at once; list the scoring ones best first."""
        rules = self.rules
        fl = rules.fantasyland
        count = len(self.cards)
        hand = np.asarray(self.cards, dtype=np.int64)
        ranks = hand >> 2
        features = np.empty((count, 3), dtype=np.float64)
        features[:, 0] = RANK_KEY_ARRAY[ranks]
        features[:, 1] = np.left_shift(1, ranks)
        features[:, 2] = np.asarray(SUIT_KEYS, dtype=np.float64)[hand & 3]

        fives = subsets_of(count, 5)
        sums = (fives.incidence @ features).astype(np.int64)
        key_sums = sums[:, 0]
        flush = IS_FLUSH[sums[:, 2]]
        high = np.where(flush, FLUSH_HIGH_ARRAY[sums[:, 1] & 0x1FFF], FIVE_HIGH_ARRAY[key_sums])
        high_class = high >> CATEGORY_SHIFT
        bottom_royalty = np.asarray(rules.royalties.bottom, dtype=np.int64)[high_class]
        bottom_stay = (high_class >= HandClass.QUADS) & fl.stay_bottom_quads
        if self.lowball:
            middle_value = np.where(flush, 0, FIVE_LOW_ARRAY[key_sums])
            low_classes = np.where(flush, 0, FIVE_LOW_CLASS_ARRAY[key_sums])
            middle_royalty = np.asarray(rules.royalties.lowball_middle, dtype=np.int64)[low_classes]
            middle_stay = (low_classes == LowClass.PERFECT_LOW) & fl.stay_requalify
        else:
            middle_value = high
            middle_royalty = np.asarray(rules.royalties.middle, dtype=np.int64)[high_class]
            middle_stay = (high_class >= HandClass.FULL_HOUSE) & fl.stay_middle_full_house

        threes = subsets_of(count, 3)
        top = THREE_HIGH_ARRAY[(threes.incidence @ features[:, 0]).astype(np.int64)]
        top_class = top >> CATEGORY_SHIFT
        top_rank = ((top >> 16) & 0xF) - 1
        top_royalty = np.where(
            top_class == HandClass.TRIPS,
            np.asarray(rules.royalties.top_trips, dtype=np.int64)[top_rank],
            np.where(
                top_class == HandClass.PAIR,
                np.asarray(rules.royalties.top_pairs, dtype=np.int64)[top_rank],
                0,
            ),
        )
        top_stay = (top_class == HandClass.TRIPS) & fl.stay_top_trips
        if fl.stay_requalify:
            entry_pair = fl.lowball_entry_top_pair if self.lowball else fl.entry_top_pair
            top_stay = top_stay | (top_class == HandClass.TRIPS) | (
                (top_class == HandClass.PAIR) & (top_rank >= entry_pair)
            )
        if not fl.enabled:
            bottom_stay = np.zeros_like(bottom_stay)
            middle_stay = np.zeros_like(middle_stay)
            top_stay = np.zeros_like(top_stay)

        self.five_masks = fives.masks
        self._five_mask_array = fives.mask_array
        self._high_array = high
        self._middle_array = middle_value
        self.three_masks = threes.masks
        self._top_array = top
        self.bottoms, self.bottom_filler_cap, self.bottom_arrays = self._candidates(
            bottom_royalty, bottom_stay, fives.mask_array, high, -high
        )
        self.middles, self.middle_filler_cap, self.middle_arrays = self._candidates(
            middle_royalty, middle_stay, fives.mask_array, middle_value, -middle_value
        )
        self.tops, self.top_filler_cap, self.top_arrays = self._candidates(
            top_royalty, top_stay, threes.mask_array, top, top
        )
        # The cards of each scoring top that make it score: the pair of a pair plus kicker (the
        # kicker could be any card), else all three.
        chosen = np.asarray([candidate[5] for candidate in self.tops], dtype=np.int64)
        positions = threes.positions[chosen]
        top_ranks = ranks[positions]
        bits = np.int64(1) << positions
        first_second = (top_ranks[:, 0] == top_ranks[:, 1]) & (top_ranks[:, 2] != top_ranks[:, 0])
        first_third = (top_ranks[:, 0] == top_ranks[:, 2]) & (top_ranks[:, 1] != top_ranks[:, 0])
        second_third = (top_ranks[:, 1] == top_ranks[:, 2]) & (top_ranks[:, 0] != top_ranks[:, 1])
        self.top_cores: list[int] = np.select(
            [first_second, first_third, second_third],
            [bits[:, 0] | bits[:, 1], bits[:, 0] | bits[:, 2], bits[:, 1] | bits[:, 2]],
            bits.sum(axis=1),
        ).tolist()

    @cached_property
    def five_high(self) -> list[int]:
        """High value of every five-card subset (a list: fast single lookups)."""
        return self._high_array.tolist()

    @cached_property
    def five_middle(self) -> list[int]:
        """The value that orders each five-card subset as a middle (2-7: its low value)."""
        return self._middle_array.tolist() if self.lowball else self.five_high

    @cached_property
    def three_high(self) -> list[int]:
        """Value of every three-card subset."""
        return self._top_array.tolist()

    def _candidates(
        self,
        royalty: np.ndarray,
        stay: np.ndarray,
        masks: np.ndarray,
        value: np.ndarray,
        order: np.ndarray,
    ) -> tuple[list[tuple[float, int, int, int, bool, int]], int, tuple[np.ndarray, np.ndarray]]:
        """Scoring subsets, best score first, as (score, mask, value, royalty, stays, index); the
        filler cap: the highest value of a subset that scores nothing (-1 when none); and the
        masks and values of the listed subsets as arrays.

        A filler row never needs to score (a scoring row is one of the listed choices), so
        fillers are only looked for at or below the cap.
        """
        score = royalty + np.where(stay, self.stay_value, 0)
        scoring = score > 0
        fillers = value[~scoring]
        filler_cap = int(fillers.max()) if len(fillers) else -1
        chosen = np.flatnonzero(scoring)
        chosen = chosen[np.lexsort((chosen, order[chosen], -score[chosen]))]
        chosen_masks = masks[chosen]
        chosen_values = value[chosen]
        candidates = list(
            zip(
                score[chosen].tolist(), chosen_masks.tolist(), chosen_values.tolist(),
                royalty[chosen].tolist(), stay[chosen].tolist(), chosen.tolist(), strict=True,
            )
        )
        return candidates, filler_cap, (chosen_masks, chosen_values)

    # --- the search -----------------------------------------------------------------------
    def solve(self) -> Arrangement:
        """Run the branch-and-bound and return the best board (see :func:`solve_fantasyland`)."""
        lowball = self.lowball
        stay_value = self.stay_value
        top_cap = _ScoreCap(self.tops)
        middle_cap = _ScoreCap(self.middles)
        bottom_filler_cap = self.bottom_filler_cap
        middle_filler_cap = self.middle_filler_cap
        any_top = top_cap.overall
        any_middle = middle_cap.overall
        best: float = -1.0
        self.best_rows: tuple[int, int, int] | None = None
        filler = (0, 0, -1, 0, False, -1)
        bottoms = self.bottoms
        middles = [*self.middles, filler]
        tops = [*self.tops, filler]
        open_row = len(middles) - 1, len(tops) - 1
        every_middle = list(range(len(middles)))
        every_top = list(range(len(tops)))
        top_cores = self.top_cores
        # Which scoring rows can share a board at all (disjoint, and ordered where both are
        # known): index lists per row, in score order, each ending with the open (filler) row.
        middles_with = _compatible(self.bottom_arrays, self.middle_arrays, not lowball, open_row[0])
        tops_with_bottom = _compatible(self.bottom_arrays, self.top_arrays, True, open_row[1])
        tops_with_middle = _compatible(
            self.middle_arrays, self.top_arrays, not lowball, open_row[1]
        )
        for bottom_position in range(len(bottoms) + 1):
            if bottom_position < len(bottoms):
                bottom = bottoms[bottom_position]
                bottom_open = False
                top_under_bottom = top_cap.under(bottom[2])
                bound = top_under_bottom + (any_middle if lowball else middle_cap.under(bottom[2]))
                middle_positions = middles_with[bottom_position]
            else:
                bottom = filler
                bottom_open = True
                bound = any_middle + any_top
                top_under_bottom = any_top
                middle_positions = every_middle
            bottom_score, bottom_mask, bottom_value, bottom_royalty, bottom_stay, bottom_index = bottom
            if bottom_score + bound <= best:
                if bottom_open or bottom_score + any_middle + any_top <= best:
                    break
                continue
            for middle_position in middle_positions:
                middle = middles[middle_position]
                middle_score, middle_mask, middle_value, middle_royalty, middle_stay, middle_index = middle
                if bottom_score + middle_score + top_under_bottom <= best:
                    break
                middle_open = middle_index < 0
                if middle_open:
                    top_positions = every_top if bottom_open else tops_with_bottom[bottom_position]
                else:
                    if not lowball:
                        if bottom_score + middle_score + top_cap.under(middle_value) <= best:
                            continue
                        if bottom_open and middle_value > bottom_filler_cap:
                            continue
                    top_positions = tops_with_middle[middle_position]
                used = bottom_mask | middle_mask
                for top_position in top_positions:
                    top = tops[top_position]
                    top_score, top_mask, top_value, top_royalty, top_stay, top_index = top
                    if bottom_score + middle_score + top_score <= best:
                        break
                    if top_index >= 0:
                        if top_mask & used:
                            continue
                        if lowball:
                            if top_value > (bottom_filler_cap if bottom_open else bottom_value):
                                continue
                        elif middle_open and top_value > middle_filler_cap:
                            continue
                        # One filler row and a top pair: whether any kicker can work is decided
                        # by the cards left beside the pair (cached per pair).
                        if middle_open and bottom_open:
                            core = top_cores[top_position]
                            if self._strongest_filler(core, bottom_filler_cap) < top_value or (
                                not lowball
                                and self._strongest_filler(core, middle_filler_cap) < top_value
                            ):
                                continue
                        elif middle_open or bottom_open:
                            core = top_cores[top_position]
                            if middle_open:
                                if not lowball and self._strongest_filler(
                                    bottom_mask | core, min(bottom_value, middle_filler_cap)
                                ) < top_value:
                                    continue
                            elif self._strongest_filler(
                                middle_mask | core, bottom_filler_cap
                            ) < (top_value if lowball else middle_value):
                                continue
                    exact = bottom_royalty + middle_royalty + top_royalty
                    if bottom_stay or middle_stay or top_stay:
                        exact += stay_value
                    if exact <= best:
                        continue
                    rows = self._fill(bottom_index, middle_index, top_index)
                    if rows is not None:
                        value = self._value_of(rows)
                        if value > best:
                            best = value
                            self.best_rows = rows
        self.best = best
        return self._arrangement()

    def _strongest_filler(self, used: int, ceiling: int) -> int:
        """The value of the strongest five free cards valued at most ``ceiling`` (-1: none)."""
        key = (used, ceiling)
        value = self._filler_cache.get(key)
        if value is None:
            index = self._strongest_free(used, 5, self.five_high, -1, ceiling)
            value = self.five_high[index] if index >= 0 else -1
            self._filler_cache[key] = value
        return value

    def _value_of(self, rows: tuple[int, int, int]) -> float:
        """Royalties plus the stay value of a legal board given as subset indexes."""
        top, middle, bottom = self._row_cards(rows)
        verdict = judge_board(top, middle, bottom, self.variant, self.rules, True)
        if verdict.foul:  # pragma: no cover - fillers are legal by construction
            raise AssertionError("the Fantasyland setter built a fouled board")
        return sum(verdict.royalties) + (self.stay_value if verdict.fantasyland_cards else 0)

    def _row_cards(self, rows: tuple[int, int, int]) -> tuple[list[Card], list[Card], list[Card]]:
        top_index, middle_index, bottom_index = rows
        return (
            self._cards_of(self.three_masks[top_index]),
            self._cards_of(self.five_masks[middle_index]),
            self._cards_of(self.five_masks[bottom_index]),
        )

    def _cards_of(self, mask: int) -> list[Card]:
        chosen = [card for position, card in enumerate(self.cards) if mask >> position & 1]
        return sorted(chosen, key=lambda card: (-(card >> 2), card & 3))

    # --- fillers ---------------------------------------------------------------------------
    def _fill(self, bottom: int, middle: int, top: int) -> tuple[int, int, int] | None:
        """Complete a choice of scoring rows (index -1 = open) with legal fillers, or None.

        The ordering between the chosen rows was checked by the caller. Fillers are looked for
        at or below their row's filler cap; the search is exhaustive, each filler tried
        strongest first, so the board keeps as much strength as the ordering allows.
        """
        lowball = self.lowball
        five_masks = self.five_masks
        used = 0
        if bottom >= 0:
            used |= five_masks[bottom]
        if middle >= 0:
            used |= five_masks[middle]
        if top >= 0:
            used |= self.three_masks[top]
        top_value = self.three_high[top] if top >= 0 else -1
        open_rows = (bottom < 0) + (middle < 0) + (top < 0)
        if open_rows == 0:
            return (top, middle, bottom)
        if open_rows == 1:
            if top < 0:
                limit = self.five_high[bottom] if lowball else self.five_middle[middle]
                choice = self._strongest_free(
                    used, 3, self.three_high, -1, min(limit, self.top_filler_cap)
                )
                return None if choice < 0 else (choice, middle, bottom)
            if middle < 0:
                if lowball:
                    choice = self._strongest_free(
                        used, 5, self.five_middle, 1, self.middle_filler_cap
                    )
                else:
                    ceiling = min(self.five_high[bottom], self.middle_filler_cap)
                    choice = self._strongest_free(used, 5, self.five_high, top_value, ceiling)
                return None if choice < 0 else (top, choice, bottom)
            floor = top_value if lowball else self.five_middle[middle]
            choice = self._strongest_free(used, 5, self.five_high, floor, self.bottom_filler_cap)
            return None if choice < 0 else (top, middle, choice)
        return self._fill_search(bottom, middle, top, used, top_value)

    def _strongest_free(
        self, used: int, size: int, values: list[int], floor: int, ceiling: int
    ) -> int:
        """The strongest subset of the free cards with floor <= value <= ceiling, or -1."""
        if ceiling < floor:
            return -1
        best = -1
        best_value = floor - 1
        for index in _free_subset_indexes(len(self.cards), size, self.all_mask & ~used):
            value = values[index]
            if best_value < value <= ceiling:
                best, best_value = index, value
        return best

    def _free_fives(self, used: int, middle: bool, floor: int, ceiling: int) -> list[int]:
        """Every five-card subset of the free cards valued floor..ceiling, strongest first
        (values of a middle when ``middle``, else high values)."""
        if ceiling < floor:
            return []
        free = self.all_mask & ~used
        free_count = free.bit_count()
        if free_count < 5:
            return []
        if free_count >= 8:  # many subsets: filter them all at once
            array = self._middle_array if middle else self._high_array
            chosen = np.flatnonzero((self._five_mask_array & used) == 0)
            chosen_values = array[chosen]
            keep = (chosen_values >= floor) & (chosen_values <= ceiling)
            chosen = chosen[keep]
            return chosen[np.lexsort((chosen, -chosen_values[keep]))].tolist()
        values = self.five_middle if middle else self.five_high
        listed = [
            index for index in _free_subset_indexes(len(self.cards), 5, free)
            if floor <= values[index] <= ceiling
        ]
        listed.sort(key=lambda index: (-values[index], index))
        return listed

    def _fill_search(
        self, bottom: int, middle: int, top: int, used: int, top_value: int
    ) -> tuple[int, int, int] | None:
        """Two or three open rows: exhaustive search (middle, then bottom, then top)."""
        lowball = self.lowball
        five_high = self.five_high
        five_middle = self.five_middle
        five_masks = self.five_masks
        if middle >= 0:
            middle_options = [middle]
        elif lowball:
            middle_options = self._free_fives(used, True, 1, self.middle_filler_cap)
        else:
            ceiling = self.middle_filler_cap
            if bottom >= 0:
                ceiling = min(ceiling, five_high[bottom])
            middle_options = self._free_fives(used, False, top_value, ceiling)
        for middle_choice in middle_options:
            middle_used = used | five_masks[middle_choice]
            if bottom >= 0:
                bottom_options = [bottom]
            elif top >= 0:  # only the bottom is left to find: its strongest choice decides
                floor = top_value if lowball else five_middle[middle_choice]
                choice = self._strongest_free(
                    middle_used, 5, five_high, floor, self.bottom_filler_cap
                )
                if choice >= 0:
                    return (top, middle_choice, choice)
                continue
            else:
                floor = top_value if lowball else five_middle[middle_choice]
                bottom_options = self._free_fives(middle_used, False, floor, self.bottom_filler_cap)
            for bottom_choice in bottom_options:
                if top >= 0:
                    return (top, middle_choice, bottom_choice)
                limit = five_high[bottom_choice] if lowball else five_middle[middle_choice]
                used_rows = middle_used | five_masks[bottom_choice]
                top_choice = self._strongest_free(
                    used_rows, 3, self.three_high, -1, min(limit, self.top_filler_cap)
                )
                if top_choice >= 0:
                    return (top_choice, middle_choice, bottom_choice)
        return None

    # --- the answer ------------------------------------------------------------------------
    def _arrangement(self) -> Arrangement:
        if self.best_rows is None:
            return self._fouled()
        top, middle, bottom = self._row_cards(self.best_rows)
        verdict = judge_board(top, middle, bottom, self.variant, self.rules, True)
        placed = {*top, *middle, *bottom}
        return Arrangement(
            top=tuple(top), middle=tuple(middle), bottom=tuple(bottom),
            discards=tuple(card for card in self.cards if card not in placed),
            royalties=verdict.royalties,
            stays=verdict.fantasyland_cards > 0,
            value=self.best,
        )

    def _fouled(self) -> Arrangement:
        """No legal board exists: set the cards by strength (bottom strongest) and foul."""
        ordered = sorted(self.cards, key=lambda card: (-(card >> 2), card & 3))
        return Arrangement(
            top=tuple(ordered[10:13]), middle=tuple(ordered[5:10]), bottom=tuple(ordered[0:5]),
            discards=tuple(ordered[13:]), royalties=(0, 0, 0), stays=False, value=0, foul=True,
        )
