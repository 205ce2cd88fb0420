"""The exact Fantasyland setter as compiled loops (numba), for many deals at once.

:func:`pipeline.solver.fantasyland.solve_fantasyland` is the setter; this module runs the same
search — the same subsets valued the same way, the same candidates in the same order, the same
branch-and-bound with the same bounds, fillers and tie-breaks — compiled, over a column of deals
of one size: the grader's rollouts set an opponent in Fantasyland once per few samples, hundreds
of times a decision, where the Python search took most of a graded session's time. It returns
the boards only (their verdicts come from the batch rules core, as every rollout board's do).
``tests/simulate/test_fantasyland_kernel.py`` checks that it sets every board exactly as the
setter does, in every variant and under every preset rule set.

Pure computation: no I/O. Compiled on first use and cached beside the module, like
:mod:`pipeline.simulate.learned_kernel`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD, RuleSet
from pipeline.rules.values import CATEGORY_SHIFT, HandClass, LowClass
from pipeline.solver.fantasyland import (
    DEFAULT_STAY_VALUE,
    IS_FLUSH,
    MAX_CARDS,
    MIN_CARDS,
    SUIT_KEYS,
    check_setter_rules,
    subsets_of,
)
from pipeline.solver.tables import (
    FIVE_HIGH_ARRAY,
    FIVE_LOW_ARRAY,
    FIVE_LOW_CLASS_ARRAY,
    FLUSH_HIGH_ARRAY,
    RANK_KEY_ARRAY,
    THREE_HIGH_ARRAY,
)

_SUIT_KEYS = np.asarray(SUIT_KEYS, dtype=np.int64)
_FILLER_KEY = types.UniTuple(types.int64, 2)


def rule_arrays(rules: RuleSet, variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    """The royalty tables (5 rows of 13: top pairs and trips by rank, middle and bottom by
    class, 2-7's middle by low class, each padded with 0) and the Fantasyland switches
    (enabled, stay on top trips, middle full house, bottom quads, requalifying; the entry
    pair of the variant) that :func:`solve_deals` reads."""
    royalties = rules.royalties
    tables = np.zeros((5, 13), dtype=np.int64)
    for row, values in enumerate((royalties.top_pairs, royalties.top_trips, royalties.middle,
                                  royalties.bottom, royalties.lowball_middle)):
        tables[row, :len(values)] = values
    fl = rules.fantasyland
    lowball = variant is Variant.LOWBALL_PINEAPPLE
    switches = np.asarray([fl.enabled, fl.stay_top_trips, fl.stay_middle_full_house,
                           fl.stay_bottom_quads, fl.stay_requalify,
                           fl.lowball_entry_top_pair if lowball else fl.entry_top_pair],
                          dtype=np.int64)
    return tables, switches


def solve_deals(deals: np.ndarray, variant: Variant, rules: RuleSet,
                stay_value: float = DEFAULT_STAY_VALUE) -> np.ndarray:
    """The setter's board for each deal of ``deals`` (deals × cards, 13-17 distinct card codes
    each, one size for all): deals × 13 cards, top, middle and bottom, each row ordered as the
    setter orders it (rank down, then suit), exactly the board
    :func:`~pipeline.solver.fantasyland.solve_fantasyland` sets. Raises :class:`ValueError` as
    it does for a wrong card count, cards out of range or rules it cannot run under."""
    deals = np.ascontiguousarray(deals, dtype=np.int64)
    if deals.ndim != 2 or not MIN_CARDS <= deals.shape[1] <= MAX_CARDS:
        raise ValueError(f"expected deals of {MIN_CARDS}-{MAX_CARDS} cards, got {deals.shape}")
    if deals.size and (deals.min() < 0 or deals.max() > 51):
        raise ValueError("Fantasyland cards must be card codes 0..51")
    check_setter_rules(rules, stay_value)
    count = deals.shape[1]
    fives, threes = subsets_of(count, 5), subsets_of(count, 3)  # the setter's own lists
    tables, switches = rule_arrays(rules, variant)
    return _solve_all(deals, fives.positions, fives.mask_array, threes.positions,
                      threes.mask_array, tables, switches,
                      variant is Variant.LOWBALL_PINEAPPLE, float(stay_value), RANK_KEY_ARRAY,
                      FIVE_HIGH_ARRAY, FLUSH_HIGH_ARRAY, FIVE_LOW_ARRAY, FIVE_LOW_CLASS_ARRAY,
                      THREE_HIGH_ARRAY, IS_FLUSH, _SUIT_KEYS)


def prepare() -> None:
    """Compile (the first use after an install: about 15 s) or load the compiled setter in
    this process, so that processes forked after it have it."""
    solve_deals(np.arange(14, dtype=np.int64)[None, :], Variant.PINEAPPLE, STANDARD)


@njit(cache=True)
def _solve_all(deals, fives, five_masks, threes, three_masks, tables, switches, lowball,  # noqa: ANN001, ANN202, PLR0913
               stay_value, rank_keys, five_high_table, flush_high_table, five_low_table,
               five_low_class_table, three_high_table, is_flush, suit_keys):
    """:func:`_solve_one` of every deal: deals × 13 boards."""
    boards = np.empty((deals.shape[0], 13), dtype=np.int64)
    for deal in range(deals.shape[0]):
        _solve_one(deals[deal], fives, five_masks, threes, three_masks, tables, switches,
                   lowball, stay_value, rank_keys, five_high_table, flush_high_table,
                   five_low_table, five_low_class_table, three_high_table, is_flush,
                   suit_keys, boards[deal])
    return boards


@njit(cache=True)
def _candidates(royalty, stay, masks, value, order, stay_value):  # noqa: ANN001, ANN202
    """Scoring subsets best score first (then ``order``, then index), then the open row (the
    setter's filler choice: score 0, no card, value -1, index -1) last: their scores, masks,
    values, royalties, stays and indexes; and the filler cap (the highest value of a subset
    that scores nothing, -1 when none)."""
    size = royalty.size
    score = np.empty(size, dtype=np.float64)
    filler_cap = -1
    scoring = 0
    for index in range(size):
        score[index] = royalty[index] + (stay_value if stay[index] else 0.0)
        if score[index] > 0:
            scoring += 1
        elif value[index] > filler_cap:
            filler_cap = value[index]
    chosen = np.empty(scoring, dtype=np.int64)
    at = 0
    for index in range(size):
        if score[index] > 0:
            chosen[at] = index
            at += 1
    # stable sorts, last key first: index (already), then order, then best score
    chosen = chosen[np.argsort(order[chosen], kind="mergesort")]
    chosen = chosen[np.argsort(-score[chosen], kind="mergesort")]
    listed = chosen.size + 1
    scores = np.zeros(listed, dtype=np.float64)
    listed_masks = np.zeros(listed, dtype=np.int64)
    values = np.full(listed, -1, dtype=np.int64)
    royalties = np.zeros(listed, dtype=np.int64)
    stays = np.zeros(listed, dtype=np.bool_)
    indexes = np.full(listed, -1, dtype=np.int64)
    scores[:-1] = score[chosen]
    listed_masks[:-1] = masks[chosen]
    values[:-1] = value[chosen]
    royalties[:-1] = royalty[chosen]
    stays[:-1] = stay[chosen]
    indexes[:-1] = chosen
    return scores, listed_masks, values, royalties, stays, indexes, filler_cap


@njit(cache=True, inline="always")
def _pick(scores, masks, values, royalties, stays, indexes, position):  # noqa: ANN001, ANN202, PLR0913
    """One listed choice of a row (:func:`_candidates`): score, mask, value, royalty, stay,
    subset index."""
    return (scores[position], masks[position], values[position], royalties[position],
            stays[position], indexes[position])


@njit(cache=True)
def _compatible(lower_masks, lower_values, upper_masks, upper_values, ordered, open_position):  # noqa: ANN001, ANN202
    """For each lower-row candidate, the upper-row candidates that fit with it (no shared card;
    when ``ordered``, a value not above the lower row's), in score order, then the open row:
    as starts (lower + 1) and positions."""
    starts = np.zeros(lower_masks.size + 1, dtype=np.int64)
    positions = np.empty(lower_masks.size * (upper_masks.size + 1), dtype=np.int64)
    at = 0
    for lower in range(lower_masks.size):
        for upper in range(upper_masks.size):
            if lower_masks[lower] & upper_masks[upper]:
                continue
            if ordered and upper_values[upper] > lower_values[lower]:
                continue
            positions[at] = upper
            at += 1
        positions[at] = open_position
        at += 1
        starts[lower + 1] = at
    return starts, positions


@njit(cache=True)
def _score_cap(scores, values):  # noqa: ANN001, ANN202
    """The setter's score cap of a row's candidates: their values ascending and the best score
    of any candidate up to each (:meth:`under` of ``_ScoreCap``), and the best overall."""
    order = np.argsort(scores, kind="mergesort")
    order = order[np.argsort(values[order], kind="mergesort")]
    sorted_values = values[order]
    best_so_far = np.empty(order.size, dtype=np.float64)
    best = 0.0
    for at in range(order.size):
        best = max(best, scores[order[at]])
        best_so_far[at] = best
    return sorted_values, best_so_far, best


@njit(cache=True, inline="always")
def _under(sorted_values, best_so_far, value):  # noqa: ANN001, ANN202
    position = np.searchsorted(sorted_values, value, side="right")
    return best_so_far[position - 1] if position else 0.0


@njit(cache=True)
def _strongest_free(used, masks, values, floor, ceiling):  # noqa: ANN001, ANN202
    """The strongest subset clear of ``used`` with floor <= value <= ceiling (the first such
    in subset order), or -1."""
    if ceiling < floor:
        return -1
    best = -1
    best_value = floor - 1
    for index in range(masks.size):
        if masks[index] & used:
            continue
        value = values[index]
        if best_value < value <= ceiling:
            best = index
            best_value = value
    return best


@njit(cache=True)
def _free_fives(used, masks, values, floor, ceiling):  # noqa: ANN001, ANN202
    """Every five-card subset clear of ``used`` valued floor..ceiling, strongest first (then
    by index)."""
    if ceiling < floor:
        return np.empty(0, dtype=np.int64)
    chosen = np.empty(masks.size, dtype=np.int64)
    at = 0
    for index in range(masks.size):
        if masks[index] & used:
            continue
        if floor <= values[index] <= ceiling:
            chosen[at] = index
            at += 1
    chosen = chosen[:at]
    return chosen[np.argsort(-values[chosen], kind="mergesort")]


@njit(cache=True)
def _solve_one(cards, fives, five_masks, threes, three_masks, tables, switches, lowball,  # noqa: ANN001, ANN202, PLR0912, PLR0913, PLR0915, C901
               stay_value, rank_keys, five_high_table, flush_high_table, five_low_table,
               five_low_class_table, three_high_table, is_flush, suit_keys, board):
    """One deal: the setter's search (``_Solver`` in :mod:`pipeline.solver.fantasyland`, step
    by step), the best board written into ``board``."""
    count = cards.size
    all_mask = (np.int64(1) << count) - 1
    enabled = switches[0] != 0
    stay_top_trips = switches[1] != 0
    stay_middle_full_house = switches[2] != 0
    stay_bottom_quads = switches[3] != 0
    stay_requalify = switches[4] != 0
    entry_pair = switches[5]
    # --- every five- and three-card subset valued
    five_count = fives.shape[0]
    high = np.empty(five_count, dtype=np.int64)
    middle_value = np.empty(five_count, dtype=np.int64)
    bottom_royalty = np.empty(five_count, dtype=np.int64)
    middle_royalty = np.empty(five_count, dtype=np.int64)
    bottom_stay = np.empty(five_count, dtype=np.bool_)
    middle_stay = np.empty(five_count, dtype=np.bool_)
    card_keys = np.empty(count, dtype=np.int64)
    card_bits = np.empty(count, dtype=np.int64)
    card_suits = np.empty(count, dtype=np.int64)
    for position in range(count):
        card_keys[position] = rank_keys[cards[position] >> 2]
        card_bits[position] = np.int64(1) << (cards[position] >> 2)
        card_suits[position] = suit_keys[cards[position] & 3]
    for index in range(five_count):
        key_sum = 0
        bits = 0
        suit_sum = 0
        for slot in range(5):
            position = fives[index, slot]
            key_sum += card_keys[position]
            bits += card_bits[position]
            suit_sum += card_suits[position]
        flush = is_flush[suit_sum]
        value = flush_high_table[bits & 0x1FFF] if flush else five_high_table[key_sum]
        high[index] = value
        category = value >> CATEGORY_SHIFT
        bottom_royalty[index] = tables[3, category]
        bottom_stay[index] = enabled and stay_bottom_quads and category >= HandClass.QUADS
        if lowball:
            low_class = 0 if flush else five_low_class_table[key_sum]
            middle_value[index] = 0 if flush else five_low_table[key_sum]
            middle_royalty[index] = tables[4, low_class]
            middle_stay[index] = (enabled and stay_requalify
                                  and low_class == LowClass.PERFECT_LOW)
        else:
            middle_value[index] = value
            middle_royalty[index] = tables[2, category]
            middle_stay[index] = (enabled and stay_middle_full_house
                                  and category >= HandClass.FULL_HOUSE)
    three_count = threes.shape[0]
    top = np.empty(three_count, dtype=np.int64)
    top_royalty = np.empty(three_count, dtype=np.int64)
    top_stay = np.empty(three_count, dtype=np.bool_)
    for index in range(three_count):
        key_sum = 0
        for slot in range(3):
            key_sum += card_keys[threes[index, slot]]
        value = three_high_table[key_sum]
        top[index] = value
        category = value >> CATEGORY_SHIFT
        rank = ((value >> 16) & 0xF) - 1
        if category == HandClass.TRIPS:
            top_royalty[index] = tables[1, rank]
        elif category == HandClass.PAIR:
            top_royalty[index] = tables[0, rank]
        else:
            top_royalty[index] = 0
        stays = stay_top_trips and category == HandClass.TRIPS
        if stay_requalify:
            stays = stays or category == HandClass.TRIPS or (
                category == HandClass.PAIR and rank >= entry_pair)
        top_stay[index] = enabled and stays
    (bottom_scores, bottom_masks, bottom_values, bottom_royalties, bottom_stays, bottom_indexes,
     bottom_filler_cap) = _candidates(bottom_royalty, bottom_stay, five_masks, high, -high,
                                      stay_value)
    (middle_scores, middle_masks, middle_values, middle_royalties, middle_stays,
     middle_indexes, middle_filler_cap) = _candidates(middle_royalty, middle_stay, five_masks,
                                                      middle_value, -middle_value, stay_value)
    (top_scores, top_masks, top_values, top_royalties, top_stays, top_indexes,
     top_filler_cap) = _candidates(top_royalty, top_stay, three_masks, top, top, stay_value)
    # the cards of each scoring top that make it score: a pair's two, else all three
    open_bottom = bottom_indexes.size - 1  # each row's open choice: its last
    open_middle = middle_indexes.size - 1
    open_top = top_indexes.size - 1
    top_cores = np.empty(open_top, dtype=np.int64)
    for at in range(open_top):
        slots = threes[top_indexes[at]]
        first = cards[slots[0]] >> 2
        second = cards[slots[1]] >> 2
        third = cards[slots[2]] >> 2
        bit_first = np.int64(1) << slots[0]
        bit_second = np.int64(1) << slots[1]
        bit_third = np.int64(1) << slots[2]
        if first == second and third != first:
            top_cores[at] = bit_first | bit_second
        elif first == third and second != first:
            top_cores[at] = bit_first | bit_third
        elif second == third and first != second:
            top_cores[at] = bit_second | bit_third
        else:
            top_cores[at] = bit_first | bit_second | bit_third
    # --- the search
    top_cap_values, top_cap_best, any_top = _score_cap(top_scores[:-1], top_values[:-1])
    middle_cap_values, middle_cap_best, any_middle = _score_cap(middle_scores[:-1],
                                                                middle_values[:-1])
    middles_starts, middles_with = _compatible(
        bottom_masks[:-1], bottom_values[:-1], middle_masks[:-1], middle_values[:-1],
        not lowball, open_middle)
    bottom_tops_starts, tops_with_bottom = _compatible(
        bottom_masks[:-1], bottom_values[:-1], top_masks[:-1], top_values[:-1], True, open_top)
    middle_tops_starts, tops_with_middle = _compatible(
        middle_masks[:-1], middle_values[:-1], top_masks[:-1], top_values[:-1], not lowball,
        open_top)
    every_middle = np.arange(open_middle + 1)
    every_top = np.arange(open_top + 1)
    fillers = Dict.empty(key_type=_FILLER_KEY, value_type=types.int64)
    best = -1.0
    best_top = best_middle = best_bottom = -1
    for bottom_position in range(open_bottom + 1):
        bottom_open = bottom_position == open_bottom
        (bottom_score, bottom_mask, bottom_value, bottom_royalty_now, bottom_stay_now,
         bottom_index) = _pick(bottom_scores, bottom_masks, bottom_values, bottom_royalties,
                               bottom_stays, bottom_indexes, bottom_position)
        if not bottom_open:
            top_under_bottom = _under(top_cap_values, top_cap_best, bottom_value)
            bound = top_under_bottom + (any_middle if lowball else
                                        _under(middle_cap_values, middle_cap_best, bottom_value))
            middle_positions = middles_with[middles_starts[bottom_position]:
                                            middles_starts[bottom_position + 1]]
        else:
            bound = any_middle + any_top
            top_under_bottom = any_top
            middle_positions = every_middle
        if bottom_score + bound <= best:
            if bottom_open or bottom_score + any_middle + any_top <= best:
                break
            continue
        for middle_position in middle_positions:
            (middle_score, middle_mask, middle_value_now, middle_royalty_now, middle_stay_now,
             middle_index) = _pick(middle_scores, middle_masks, middle_values, middle_royalties,
                                   middle_stays, middle_indexes, middle_position)
            if bottom_score + middle_score + top_under_bottom <= best:
                break
            middle_open = middle_index < 0
            if middle_open:
                if bottom_open:
                    top_positions = every_top
                else:
                    top_positions = tops_with_bottom[bottom_tops_starts[bottom_position]:
                                                     bottom_tops_starts[bottom_position + 1]]
            else:
                if not lowball:
                    if bottom_score + middle_score + _under(top_cap_values, top_cap_best,
                                                            middle_value_now) <= best:
                        continue
                    if bottom_open and middle_value_now > bottom_filler_cap:
                        continue
                top_positions = tops_with_middle[middle_tops_starts[middle_position]:
                                                 middle_tops_starts[middle_position + 1]]
            used = bottom_mask | middle_mask
            for top_position in top_positions:
                (top_score, top_mask, top_value, top_royalty_now, top_stay_now,
                 top_index) = _pick(top_scores, top_masks, top_values, top_royalties, top_stays,
                                    top_indexes, top_position)
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
                    if middle_open and bottom_open:
                        core = top_cores[top_position]
                        if _strongest_filler(fillers, core, bottom_filler_cap, five_masks,
                                             high) < top_value or (
                                not lowball and _strongest_filler(
                                    fillers, core, middle_filler_cap, five_masks, high)
                                < top_value):
                            continue
                    elif middle_open or bottom_open:
                        core = top_cores[top_position]
                        if middle_open:
                            if not lowball and _strongest_filler(
                                    fillers, bottom_mask | core,
                                    min(bottom_value, middle_filler_cap), five_masks,
                                    high) < top_value:
                                continue
                        elif _strongest_filler(fillers, middle_mask | core, bottom_filler_cap,
                                               five_masks, high) < (
                                top_value if lowball else middle_value_now):
                            continue
                exact = float(bottom_royalty_now + middle_royalty_now + top_royalty_now)
                if bottom_stay_now or middle_stay_now or top_stay_now:
                    exact += stay_value
                if exact <= best:
                    continue
                filled_top, filled_middle, filled_bottom = _fill(
                    bottom_index, middle_index, top_index, lowball, all_mask, five_masks,
                    three_masks, high, middle_value, top, bottom_filler_cap, middle_filler_cap,
                    top_filler_cap)
                if filled_top >= 0:
                    value = float(top_royalty[filled_top] + middle_royalty[filled_middle]
                                  + bottom_royalty[filled_bottom])
                    if top_stay[filled_top] or middle_stay[filled_middle] or bottom_stay[
                            filled_bottom]:
                        value += stay_value
                    if value > best:
                        best = value
                        best_top, best_middle, best_bottom = (filled_top, filled_middle,
                                                              filled_bottom)
    if best_top < 0:  # no legal board: by strength, bottom strongest (a foul)
        ordered = np.empty(13, dtype=np.int64)
        _write_row(cards, all_mask, ordered, 0, 13)
        board[:3] = ordered[10:13]
        board[3:8] = ordered[5:10]
        board[8:] = ordered[:5]
        return
    _write_row(cards, three_masks[best_top], board, 0, 3)
    _write_row(cards, five_masks[best_middle], board, 3, 5)
    _write_row(cards, five_masks[best_bottom], board, 8, 5)


@njit(cache=True)
def _strongest_filler(fillers, used, ceiling, five_masks, high):  # noqa: ANN001, ANN202
    """The value of the strongest five free cards valued at most ``ceiling`` (-1: none),
    remembered per (used, ceiling)."""
    key = (used, ceiling)
    if key in fillers:
        return fillers[key]
    index = _strongest_free(used, five_masks, high, -1, ceiling)
    value = high[index] if index >= 0 else -1
    fillers[key] = value
    return value


@njit(cache=True)
def _fill(bottom, middle, top, lowball, all_mask, five_masks, three_masks, high,  # noqa: ANN001, ANN202, PLR0911, PLR0913
          middle_value, top_high, bottom_filler_cap, middle_filler_cap, top_filler_cap):
    """A choice of scoring rows (index -1 = open) completed with legal fillers as the setter
    completes it: (top, middle, bottom) subset indexes, or (-1, -1, -1)."""
    used = 0
    if bottom >= 0:
        used |= five_masks[bottom]
    if middle >= 0:
        used |= five_masks[middle]
    if top >= 0:
        used |= three_masks[top]
    top_value = top_high[top] if top >= 0 else -1
    open_rows = (bottom < 0) + (middle < 0) + (top < 0)
    if open_rows == 0:
        return top, middle, bottom
    if open_rows == 1:
        if top < 0:
            limit = high[bottom] if lowball else middle_value[middle]
            choice = _strongest_free(used, three_masks, top_high, -1, min(limit, top_filler_cap))
            return (choice, middle, bottom) if choice >= 0 else (-1, -1, -1)
        if middle < 0:
            if lowball:
                choice = _strongest_free(used, five_masks, middle_value, 1, middle_filler_cap)
            else:
                choice = _strongest_free(used, five_masks, high, top_value,
                                         min(high[bottom], middle_filler_cap))
            return (top, choice, bottom) if choice >= 0 else (-1, -1, -1)
        floor = top_value if lowball else middle_value[middle]
        choice = _strongest_free(used, five_masks, high, floor, bottom_filler_cap)
        return (top, middle, choice) if choice >= 0 else (-1, -1, -1)
    # two or three open rows: exhaustive, middle, then bottom, then top
    if middle >= 0:
        middle_options = np.asarray([middle], dtype=np.int64)
    elif lowball:
        middle_options = _free_fives(used, five_masks, middle_value, 1, middle_filler_cap)
    else:
        ceiling = middle_filler_cap
        if bottom >= 0:
            ceiling = min(ceiling, high[bottom])
        middle_options = _free_fives(used, five_masks, high, top_value, ceiling)
    for middle_choice in middle_options:
        middle_used = used | five_masks[middle_choice]
        if bottom >= 0:
            bottom_options = np.asarray([bottom], dtype=np.int64)
        elif top >= 0:  # only the bottom is left to find: its strongest choice decides
            floor = top_value if lowball else middle_value[middle_choice]
            choice = _strongest_free(middle_used, five_masks, high, floor, bottom_filler_cap)
            if choice >= 0:
                return top, middle_choice, choice
            continue
        else:
            floor = top_value if lowball else middle_value[middle_choice]
            bottom_options = _free_fives(middle_used, five_masks, high, floor, bottom_filler_cap)
        for bottom_choice in bottom_options:
            if top >= 0:
                return top, middle_choice, bottom_choice
            limit = high[bottom_choice] if lowball else middle_value[middle_choice]
            used_rows = middle_used | five_masks[bottom_choice]
            top_choice = _strongest_free(used_rows, three_masks, top_high, -1,
                                         min(limit, top_filler_cap))
            if top_choice >= 0:
                return top_choice, middle_choice, bottom_choice
    return -1, -1, -1


@njit(cache=True)
def _write_row(cards, mask, board, start, size):  # noqa: ANN001, ANN202
    """The cards of ``mask`` ordered rank down, then suit, into ``board[start:]`` (the first
    ``size`` of them)."""
    chosen = np.empty(cards.size, dtype=np.int64)
    at = 0
    for position in range(cards.size):
        if mask >> position & 1:
            card = cards[position]
            chosen[at] = (12 - (card >> 2)) * 4 + (card & 3)
            at += 1
    chosen = np.sort(chosen[:at])
    for slot in range(size):
        key = chosen[slot]
        board[start + slot] = (12 - key // 4) * 4 + key % 4
