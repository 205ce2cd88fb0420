"""The learned policy's play as compiled loops (numba): rows, features, weighted sum and pick.

:class:`pipeline.simulate.learned.LearnedBot` scores every option with a quadratic form of a
few features of its rows' outlooks. Written as numpy passes (one pass over all options per
operation, 180 weighted terms) that was most of a grade's CPU. Here:

* :func:`play_learned` plays a whole street for a column of boards (what the rollouts run):
  per board, each row's state and live-card fields after each subset of the street's cards
  (the same integers as :class:`pipeline.simulate.dealer.StreetRows`), the options considered
  (the rows' room; in the opening the shapes players use), each option's fields read from the
  packed outlook tables, its features, worth and the best pick, then the rows after it, the
  cards placed and the discards seen;
* :func:`worth_of_fields` is the same worth for options whose fields are already arrays (the
  plain path, :meth:`LearnedBot.scores`), and :func:`features_of_fields` the same features
  (training, :func:`pipeline.simulate.learned.base_features`).

All share :func:`_block_features` / :func:`_block_worth` over blocks of options, so an option
gets the same worth, bit for bit, whichever path scores it and whichever options are scored
beside it (elementwise float32 arithmetic in a fixed order, no reassociation, no fused
multiply-add). The normal CDF is a logistic of a cubic through this module's own float32
:func:`_exp` (the same bits on every processor): these are the numbers the weights are
trained on. The hot loops avoid array views and named-tuple field reads, each of which costs
numba a reference count.

Pure computation: no I/O. Compiled on first use (about 15 s) and cached beside the module
(numba's ``cache=True``), so later processes load it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

RAW_FIELDS = (
    "open_top", "open_middle", "open_bottom", "top_mean", "top_variance", "top_royalty",
    "top_fantasyland", "top_fantasyland_mean", "top_fantasyland_variance", "top_floor",
    "middle_mean", "middle_floor", "middle_variance", "middle_royalty", "middle_qualify",
    "bottom_mean", "bottom_variance", "bottom_royalty", "top_live", "middle_live",
    "middle_flush", "bottom_live", "bottom_flush",
)
"""The option fields the features are made of, in the order of the kernels' raw rows."""

FEATURE_SLOTS = (
    "legal", "legal_top_royalty", "legal_middle_royalty", "legal_bottom_royalty",
    "fantasyland", "fantasyland_raw", "legal_top", "legal_middle", "legal_bottom",
    "open_middle", "open_top", "top_floor", "middle_floor", "legal_squared",
    "top_royalty", "middle_royalty", "bottom_royalty", "top_spread", "middle_spread",
    "bottom_spread", "upper", "lower", "top_live", "middle_live", "middle_flush",
    "bottom_live", "bottom_flush",
)
"""Every base feature of either family, in the order of the kernels' feature rows (a
family's weights name theirs by position here: :class:`KernelPlan`)."""

BLOCK = 256
"""Options scored together: their features and partial sums stay in the first-level cache.
A board's options go in one block (a street has at most 243 placements: a Classic
opening)."""

(_OPEN_TOP, _OPEN_MIDDLE, _OPEN_BOTTOM, _TOP_MEAN, _TOP_VARIANCE, _TOP_ROYALTY, _TOP_FL,
 _TOP_FL_MEAN, _TOP_FL_VARIANCE, _TOP_FLOOR, _MIDDLE_MEAN, _MIDDLE_FLOOR, _MIDDLE_VARIANCE,
 _MIDDLE_ROYALTY, _MIDDLE_QUALIFY, _BOTTOM_MEAN, _BOTTOM_VARIANCE, _BOTTOM_ROYALTY, _TOP_LIVE,
 _MIDDLE_LIVE, _MIDDLE_FLUSH, _BOTTOM_LIVE, _BOTTOM_FLUSH) = range(len(RAW_FIELDS))

(_LEGAL, _LEGAL_TOP_ROYALTY, _LEGAL_MIDDLE_ROYALTY, _LEGAL_BOTTOM_ROYALTY, _FANTASYLAND,
 _FANTASYLAND_RAW, _LEGAL_TOP, _LEGAL_MIDDLE, _LEGAL_BOTTOM, _F_OPEN_MIDDLE, _F_OPEN_TOP,
 _F_TOP_FLOOR, _F_MIDDLE_FLOOR, _LEGAL_SQUARED, _F_TOP_ROYALTY, _F_MIDDLE_ROYALTY,
 _F_BOTTOM_ROYALTY, _TOP_SPREAD, _MIDDLE_SPREAD, _BOTTOM_SPREAD, _UPPER, _LOWER, _F_TOP_LIVE,
 _F_MIDDLE_LIVE, _F_MIDDLE_FLUSH, _F_BOTTOM_LIVE, _F_BOTTOM_FLUSH) = range(len(FEATURE_SLOTS))

_F32 = np.float32
_ONE = _F32(1.0)
_ZERO = _F32(0.0)
_TINY_VARIANCE = _F32(1e-6)
_TINY_CHANCE = _F32(1e-12)
_HALF_DOWN = _F32(-0.5)
_CUBIC = _F32(-0.070566)
_LINEAR = _F32(1.5976)
_INVERSE_ROOT_TWO_PI = _F32(0.3989422804014327)
_STRENGTH = _F32(1.0 / 13.0)  # one hand category on the outlooks' strength scale
_PAIR_SCALE = _F32(13.0)  # strength scale of the weakest pair
_TWO = _F32(2.0)
_INFINITY = _F32(np.inf)


_POWERS_OF_TWO = np.asarray([2.0 ** (power - 127) for power in range(255)], dtype=np.float32)
"""2 ** (n - 127) for n = 0 to 254, float32: the scale of :func:`_exp` by table (the loop
stays plain arithmetic, which the compiler vectorises)."""
_EXP_LOW = _F32(-87.0)
_EXP_HIGH = _F32(88.0)
_LOG2_E = _F32(1.44269504088896341)
_LN2_HIGH = _F32(0.693359375)
_LN2_LOW = _F32(-2.12194440e-4)
_EXP_TERMS = (_F32(1.9875691500e-4), _F32(1.3981999507e-3), _F32(8.3334519073e-3),
              _F32(4.1665795894e-2), _F32(1.6666665459e-1), _F32(5.0000001201e-1))


@njit(cache=True, inline="always", error_model="numpy")
def _exp(value):  # noqa: ANN001, ANN202
    """e ** value in float32 (Cephes' ``expf``: the argument reduced by ln 2, a degree-6
    polynomial, scaled by a power of two; about 1 unit in the last place; 0 below -87 and
    infinity above 88, so that a certain foul's chance is exactly 0, as with ``numpy.exp``):
    plain arithmetic and a table lookup, the same bits on every processor, and vectorised by
    the compiler where a call to the C library's ``expf`` would not be."""
    given = value
    value = min(max(value, _EXP_LOW), _EXP_HIGH)
    whole = np.floor(value * _LOG2_E + _F32(0.5))
    value = value - whole * _LN2_HIGH
    value = value - whole * _LN2_LOW
    square = value * value
    result = _EXP_TERMS[0]
    result = result * value + _EXP_TERMS[1]
    result = result * value + _EXP_TERMS[2]
    result = result * value + _EXP_TERMS[3]
    result = result * value + _EXP_TERMS[4]
    result = result * value + _EXP_TERMS[5]
    result = result * square + value + _ONE
    result = result * _POWERS_OF_TWO[np.int64(whole) + 127]
    result = _ZERO if given < _EXP_LOW else result
    return _INFINITY if given > _EXP_HIGH else result


@njit(cache=True, inline="always", error_model="numpy")
def _cdf(value):  # noqa: ANN001, ANN202
    """The standard normal CDF as a logistic of a cubic (:func:`fast_normal_cdf`)."""
    result = value * value
    result = result * _CUBIC
    result = result - _LINEAR
    result = result * value
    result = _exp(result)
    result = result + _ONE
    return _ONE / result


@njit(cache=True, inline="always", error_model="numpy")
def _maximum(first, second):  # noqa: ANN001, ANN202
    """numpy's maximum of two float32 numbers (a NaN wins)."""
    if first != first:
        return first
    if second != second:
        return second
    return first if first >= second else second


@njit(cache=True, inline="always", error_model="numpy")
def _ordered(top_mean, top_variance, middle_mean, middle_low, middle_variance,  # noqa: ANN001, ANN202
             bottom_mean, bottom_variance):
    """P(middle > top) and P(bottom > middle | middle > top) for independent normal rows
    (:func:`pipeline.simulate.bots.ordered_parts`, with :func:`_cdf`)."""
    spread = top_variance + middle_variance
    spread = spread + _TINY_VARIANCE
    spread = np.sqrt(spread)
    alpha = top_mean - middle_mean
    alpha = alpha / spread
    above = _ONE - _cdf(alpha)
    mills = alpha * _HALF_DOWN
    mills = mills * alpha
    mills = _exp(mills)
    mills = mills * _INVERSE_ROOT_TWO_PI
    mills = mills / _maximum(above, _TINY_CHANCE)
    share = spread * spread
    share = middle_variance / share
    conditional_mean = share * spread
    conditional_mean = conditional_mean * mills
    conditional_mean = conditional_mean + middle_low
    conditional_variance = share * mills
    conditional_variance = conditional_variance * (mills - alpha)
    conditional_variance = _ONE - conditional_variance
    conditional_variance = _maximum(conditional_variance, _ZERO)
    conditional_variance = conditional_variance * middle_variance
    below_spread = conditional_variance + bottom_variance
    below_spread = below_spread + _TINY_VARIANCE
    below_spread = np.sqrt(below_spread)
    gap = bottom_mean - conditional_mean
    gap = gap / below_spread
    return above, _cdf(gap)


@njit(cache=True, error_model="numpy")
def _ordered_rows(count, top_mean, top_variance, middle_mean, middle_low, middle_variance,  # noqa: ANN001, ANN202
                  bottom_mean, bottom_variance, above, below):
    """:func:`_ordered` of the first ``count`` options of a block, into ``above`` and
    ``below``."""
    for at in range(count):
        above[at], below[at] = _ordered(top_mean[at], top_variance[at], middle_mean[at],
                                        middle_low[at], middle_variance[at], bottom_mean[at],
                                        bottom_variance[at])


@njit(cache=True, error_model="numpy")
def _steered(count, mean, open_slots, steer, out):  # noqa: ANN001, ANN202
    """A row's mean with its open slots counting ``steer`` more strength."""
    for at in range(count):
        out[at] = mean[at] + steer * open_slots[at]


@njit(cache=True, error_model="numpy")
def _product(count, first, second, out):  # noqa: ANN001, ANN202
    """``first × second``, elementwise."""
    for at in range(count):
        out[at] = first[at] * second[at]


@njit(cache=True, error_model="numpy")
def _scaled(count, values, scale, out):  # noqa: ANN001, ANN202
    """``values × scale``, elementwise."""
    for at in range(count):
        out[at] = values[at] * scale


@njit(cache=True, error_model="numpy")
def _spread(count, variance, out):  # noqa: ANN001, ANN202
    """A row's strength spread on the feature scale: ``sqrt(variance) / 13``."""
    for at in range(count):
        out[at] = np.sqrt(variance[at]) * _STRENGTH


@njit(cache=True, error_model="numpy")
def _under(count, low_mean, low_variance, high_mean, high_variance, out):  # noqa: ANN001, ANN202
    """P(the low row stays under the high one) for independent normal rows (2-7's chances)."""
    for at in range(count):
        spread = low_variance[at] + high_variance[at]
        spread = np.sqrt(spread + _TINY_VARIANCE)
        out[at] = _cdf((high_mean[at] - low_mean[at]) / spread)


@njit(cache=True, error_model="numpy")
def _block_features(field, count, low, steer, out, work):  # noqa: ANN001, ANN202
    """The base features (:data:`FEATURE_SLOTS` rows of ``out``) of the first ``count``
    options of a block (``field``: :data:`RAW_FIELDS` rows, float32, C order); ``work``:
    scratch (4 rows). ``low``: 2-7 Pineapple's family (its middle is a low hand). Each step
    is one plain loop over whole contiguous rows, so the compiler vectorises it."""
    steered_bottom = work[0]
    upper = out[_UPPER]
    lower = out[_LOWER]
    legal = out[_LEGAL]
    chance = work[1]  # legal given a top that qualifies for Fantasyland
    _steered(count, field[_BOTTOM_MEAN], field[_OPEN_BOTTOM], steer, steered_bottom)
    if low:
        qualify = field[_MIDDLE_QUALIFY]
        _under(count, field[_TOP_MEAN], field[_TOP_VARIANCE], steered_bottom, field[_BOTTOM_VARIANCE],
               lower)
        _under(count, field[_TOP_FL_MEAN], field[_TOP_FL_VARIANCE], steered_bottom,
               field[_BOTTOM_VARIANCE], chance)
        _product(count, chance, qualify, chance)
        _product(count, qualify, lower, legal)
        upper[:count] = qualify[:count]
        out[_LEGAL_MIDDLE, :count] = _ZERO
        out[_F_MIDDLE_FLOOR, :count] = _ZERO
        out[_MIDDLE_SPREAD, :count] = _ZERO
    else:
        steered_middle = work[2]
        _steered(count, field[_MIDDLE_MEAN], field[_OPEN_MIDDLE], steer, steered_middle)
        _ordered_rows(count, field[_TOP_MEAN], field[_TOP_VARIANCE], steered_middle,
                      field[_MIDDLE_MEAN], field[_MIDDLE_VARIANCE], steered_bottom,
                      field[_BOTTOM_VARIANCE], upper, lower)
        qualifying_lower = work[3]
        _ordered_rows(count, field[_TOP_FL_MEAN], field[_TOP_FL_VARIANCE], steered_middle,
                      field[_MIDDLE_MEAN], field[_MIDDLE_VARIANCE], steered_bottom,
                      field[_BOTTOM_VARIANCE], chance, qualifying_lower)
        _product(count, upper, lower, legal)
        _product(count, chance, qualifying_lower, chance)
    scaled_legal = work[0]  # the steered bottom is no longer needed
    _scaled(count, legal, _STRENGTH, scaled_legal)
    _product(count, legal, field[_TOP_ROYALTY], out[_LEGAL_TOP_ROYALTY])
    _product(count, legal, field[_MIDDLE_ROYALTY], out[_LEGAL_MIDDLE_ROYALTY])
    _product(count, legal, field[_BOTTOM_ROYALTY], out[_LEGAL_BOTTOM_ROYALTY])
    _product(count, field[_TOP_FL], chance, out[_FANTASYLAND])
    out[_FANTASYLAND_RAW, :count] = field[_TOP_FL, :count]
    _product(count, scaled_legal, field[_TOP_MEAN], out[_LEGAL_TOP])
    _product(count, scaled_legal, field[_BOTTOM_MEAN], out[_LEGAL_BOTTOM])
    out[_F_OPEN_MIDDLE, :count] = field[_OPEN_MIDDLE, :count]
    out[_F_OPEN_TOP, :count] = field[_OPEN_TOP, :count]
    _scaled(count, field[_TOP_FLOOR], _STRENGTH, out[_F_TOP_FLOOR])
    _product(count, legal, legal, out[_LEGAL_SQUARED])
    out[_F_TOP_ROYALTY, :count] = field[_TOP_ROYALTY, :count]
    out[_F_MIDDLE_ROYALTY, :count] = field[_MIDDLE_ROYALTY, :count]
    out[_F_BOTTOM_ROYALTY, :count] = field[_BOTTOM_ROYALTY, :count]
    out[_F_TOP_LIVE, :count] = field[_TOP_LIVE, :count]
    out[_F_MIDDLE_LIVE, :count] = field[_MIDDLE_LIVE, :count]
    out[_F_MIDDLE_FLUSH, :count] = field[_MIDDLE_FLUSH, :count]
    out[_F_BOTTOM_LIVE, :count] = field[_BOTTOM_LIVE, :count]
    out[_F_BOTTOM_FLUSH, :count] = field[_BOTTOM_FLUSH, :count]
    _spread(count, field[_TOP_VARIANCE], out[_TOP_SPREAD])
    _spread(count, field[_BOTTOM_VARIANCE], out[_BOTTOM_SPREAD])
    if not low:
        _product(count, scaled_legal, field[_MIDDLE_MEAN], out[_LEGAL_MIDDLE])
        _scaled(count, field[_MIDDLE_FLOOR], _STRENGTH, out[_F_MIDDLE_FLOOR])
        _spread(count, field[_MIDDLE_VARIANCE], out[_MIDDLE_SPREAD])


@njit(cache=True, error_model="numpy")
def _weighted(features, count, weights, base_slots, first_slots, group_starts,  # noqa: ANN001, ANN202
              second_slots, columns, total, inner):
    """``total[:count]``: every option's weighted sum with one row of ``weights`` — the base
    features' terms in order, then per product group ``first × Σ weight × second`` (terms of
    weight 0 left out). Elementwise loops over the options, so the compiler vectorises them;
    the features are indexed in place (a row view per term would cost a reference count each)."""
    for at in range(count):
        total[at] = _ZERO
    for index in range(base_slots.size):
        weight = weights[index]
        if weight != _ZERO:
            slot = base_slots[index]
            for at in range(count):
                total[at] += features[slot, at] * weight
    for group in range(first_slots.size):
        started = False
        for pair in range(group_starts[group], group_starts[group + 1]):
            weight = weights[columns[pair]]
            if weight == _ZERO:
                continue
            slot = second_slots[pair]
            if started:
                for at in range(count):
                    inner[at] += features[slot, at] * weight
            else:
                for at in range(count):
                    inner[at] = features[slot, at] * weight
                started = True
        if started:
            slot = first_slots[group]
            for at in range(count):
                inner[at] *= features[slot, at]
            for at in range(count):
                total[at] += inner[at]


@njit(cache=True, error_model="numpy")
def _block_worth(features, count, stages, table, base_slots, first_slots, group_starts,  # noqa: ANN001, ANN202
                 second_slots, columns, total, inner, scratch):
    """The worth of the ``count`` options whose features are in ``features`` (each with the
    weights of its stage, ``table[stages[at]]``) into ``total``: the options of one stage in
    one vectorised pass, options of other stages one by one (the same operations)."""
    uniform = True
    for at in range(1, count):
        if stages[at] != stages[0]:
            uniform = False
            break
    if count == 0:
        return
    if uniform:
        _weighted(features, count, table[stages[0]], base_slots, first_slots, group_starts,
                  second_slots, columns, total, inner)
        return
    one = np.empty((features.shape[0], 1), dtype=np.float32)
    for at in range(count):
        for slot in range(features.shape[0]):
            one[slot, 0] = features[slot, at]
        _weighted(one, 1, table[stages[at]], base_slots, first_slots, group_starts,
                  second_slots, columns, scratch, inner)
        total[at] = scratch[0]


@njit(cache=True, error_model="numpy")
def normal_cdf_values(values):  # noqa: ANN001, ANN201
    """:func:`_cdf` of every value of a one-dimensional float32 array (a new array)."""
    result = np.empty_like(values)
    for at in range(values.size):
        result[at] = _cdf(values[at])
    return result


@njit(cache=True, error_model="numpy")
def features_of_fields(raw, low, steer):  # noqa: ANN001, ANN201
    """The base features (:data:`FEATURE_SLOTS` × options, float32) of options given as
    :data:`RAW_FIELDS` × options float32 arrays."""
    count = raw.shape[1]
    features = np.empty((len(FEATURE_SLOTS), count), dtype=np.float32)
    field = np.empty((len(RAW_FIELDS), BLOCK), dtype=np.float32)
    block = np.empty((len(FEATURE_SLOTS), BLOCK), dtype=np.float32)
    work = np.empty((4, BLOCK), dtype=np.float32)
    for start in range(0, count, BLOCK):
        stop = min(count, start + BLOCK)
        field[:, :stop - start] = raw[:, start:stop]
        _block_features(field, stop - start, low, steer, block, work)
        features[:, start:stop] = block[:, :stop - start]
    return features


@njit(cache=True, error_model="numpy")
def _block_buffers():  # noqa: ANN202
    """A block's scratch: its options' raw fields and features, work rows, totals, inner sums
    and a one-option score."""
    return (np.zeros((len(RAW_FIELDS), BLOCK), dtype=np.float32),
            np.empty((len(FEATURE_SLOTS), BLOCK), dtype=np.float32),
            np.empty((4, BLOCK), dtype=np.float32), np.empty(BLOCK, dtype=np.float32),
            np.empty(BLOCK, dtype=np.float32), np.empty(1, dtype=np.float32))


@njit(cache=True, error_model="numpy")
def worth_of_fields(raw, stages, low, steer, table, base_slots, first_slots,  # noqa: ANN001, ANN201
                    group_starts, second_slots, columns):
    """The worth (float32) of options given as :data:`RAW_FIELDS` × options float32 arrays,
    each with the weights of its stage (``table``: stages × features float32)."""
    count = raw.shape[1]
    result = np.empty(count, dtype=np.float32)
    field, features, work, total, inner, scratch = _block_buffers()
    for start in range(0, count, BLOCK):
        stop = min(count, start + BLOCK)
        field[:, :stop - start] = raw[:, start:stop]
        _block_features(field, stop - start, low, steer, features, work)
        _block_worth(features, stop - start, stages[start:stop], table, base_slots,
                     first_slots, group_starts, second_slots, columns, total, inner, scratch)
        result[start:stop] = total[:stop - start]
    return result


ROW_SLOTS = (
    ("open_top", "top_mean", "top_variance", "top_royalty", "top_fantasyland",
     "top_fantasyland_mean", "top_fantasyland_variance", "top_floor"),
    ("open_middle", "middle_mean", "middle_floor", "middle_variance", "middle_royalty",
     "middle_qualify"),
    ("open_bottom", "bottom_mean", "bottom_variance", "bottom_royalty"),
)
"""Per row, the option fields its outlook table holds, in the table's column order
(:func:`play_learned`'s ``tables``): ``open`` first, the floor of the top last and of the
middle third."""

_RAW_SLOTS = np.asarray([[RAW_FIELDS.index(name) for name in names]
                        + [0] * (8 - len(names)) for names in ROW_SLOTS], dtype=np.int64)
"""Per row (3 × 8), the :data:`RAW_FIELDS` row of each column of its outlook table (a
constant of the compiled code: no reference counting)."""
_ROW_WIDTHS = np.asarray([len(names) for names in ROW_SLOTS], dtype=np.int64)
"""Per row, how many columns of its outlook table are fields."""


@njit(cache=True, error_model="numpy", inline="always")
def _shaped(staged, top, middle):  # noqa: ANN001, ANN202
    """Whether an opening's top and middle (their subsets' staged fields) have a shape players
    use: at most one unpaired card on top (two open slots, or a pair's floor) and at most
    three in the middle."""
    return ((staged[0, top, 0] >= _TWO or staged[0, top, 7] >= _PAIR_SCALE)
            and (staged[1, middle, 0] >= _TWO or staged[1, middle, 2] >= _PAIR_SCALE))




@njit(cache=True, error_model="numpy", inline="always")
def _gather_board(owner, board, entries, fits, live, subsets, tables, opening, last_stage,  # noqa: ANN001, ANN202, PLR0913
                  staged, considered, raw, stages, owners, picks, count):
    """Add the options considered of board ``owner`` to the block (``raw``, ``stages``,
    ``owners``, ``picks``, holding ``count``); returns the new count. Its rows after each
    subset of the street's cards are at ``board`` of ``entries`` / ``fits`` (3 × boards ×
    subsets) and ``live`` (5 × boards × subsets); ``staged`` and ``considered`` are scratch."""
    subsets_count = entries.shape[2]
    for row in range(3):
        for subset in range(subsets_count):
            if fits[row, board, subset]:
                entry = entries[row, board, subset]
                for field in range(8):
                    staged[row, subset, field] = tables[row, entry, field]
    any_shaped = False
    for pattern in range(subsets.shape[0]):
        top = subsets[pattern, 0]
        middle = subsets[pattern, 1]
        fit = (fits[0, board, top] and fits[1, board, middle]
               and fits[2, board, subsets[pattern, 2]])
        considered[pattern] = fit
        if fit and opening and not any_shaped:
            any_shaped = _shaped(staged, top, middle)
    for pattern in range(subsets.shape[0]):
        if not considered[pattern]:
            continue
        top = subsets[pattern, 0]
        middle = subsets[pattern, 1]
        bottom = subsets[pattern, 2]
        if any_shaped and not _shaped(staged, top, middle):
            continue
        for row, subset in ((0, top), (1, middle), (2, bottom)):
            for field in range(_ROW_WIDTHS[row]):
                raw[_RAW_SLOTS[row, field], count] = staged[row, subset, field]
        raw[_TOP_LIVE, count] = live[0, board, top]
        raw[_MIDDLE_LIVE, count] = live[1, board, middle]
        raw[_MIDDLE_FLUSH, count] = live[2, board, middle]
        raw[_BOTTOM_LIVE, count] = live[3, board, bottom]
        raw[_BOTTOM_FLUSH, count] = live[4, board, bottom]
        opened = staged[0, top, 0] + staged[1, middle, 0]
        opened = opened + staged[2, bottom, 0]
        stages[count] = min(max(np.int64(opened), 0), last_stage)
        owners[count] = owner
        picks[count] = pattern
        count += 1
    return count


@njit(cache=True, error_model="numpy")
def _score_block(raw, features, work, total, inner, scratch, stages, owners, picks, count,  # noqa: ANN001, ANN202, PLR0913
                 low, steer, table, base_slots, first_slots, group_starts, second_slots,
                 columns, best, chosen):
    """Score the ``count`` options of the block and keep each board's best (the first on
    equal scores; a NaN wins, as in ``numpy.argmax``); nothing when the block is empty."""
    if count == 0:
        return
    _block_features(raw, count, low, steer, features, work)
    _block_worth(features, count, stages, table, base_slots, first_slots, group_starts,
                 second_slots, columns, total, inner, scratch)
    for at in range(count):
        board = owners[at]
        value = total[at]
        held = best[board]
        if held != held:
            continue
        if value != value or value > held:
            best[board] = value
            chosen[board] = picks[at]


@njit(cache=True, error_model="numpy")
def _gather_chunk(first, last, entries, fits, live, subsets, tables, opening, last_stage,  # noqa: ANN001, ANN202, PLR0913
                  staged, considered, raw, features, work, total, inner, scratch, stages, owners,
                  picks, count, low, steer, table, base_slots, first_slots, group_starts,
                  second_slots, columns, best, chosen):
    """:func:`_gather_board` for boards ``first`` to ``last`` (a chunk of :func:`_rows_of`),
    scoring the block (:func:`_score_block`) whenever a board's options might not fit in it;
    returns the block's new count. One call per chunk with every buffer an argument: the
    boards' loop binds no array (each binding would cost numba a reference count)."""
    patterns_count = subsets.shape[0]
    for board in range(first, last):
        if count + patterns_count > BLOCK:
            _score_block(raw, features, work, total, inner, scratch, stages, owners, picks,
                         count, low, steer, table, base_slots, first_slots, group_starts,
                         second_slots, columns, best, chosen)
            count = 0
        count = _gather_board(board, board - first, entries, fits, live, subsets, tables,
                              opening, last_stage, staged, considered, raw, stages, owners,
                              picks, count)
    return count


class StreetTables(NamedTuple):
    """The dealer's lookup tables the compiled street player reads (built once per process,
    :func:`pipeline.simulate.dealer.street_tables`): per card its rank key, suit key, rank
    bit and card bit; suit-key sums to a suit state; suit states joined; the row states'
    index, the state a card of each rank leads to, and each state's ranks; the live-card
    shares and masks; the row lengths and starting slots."""

    card_keys: np.ndarray
    suit_keys: np.ndarray
    rank_bits: np.ndarray
    card_bits: np.ndarray
    mono_suit: np.ndarray
    suit_after: np.ndarray
    state_index: np.ndarray
    state_next: np.ndarray
    state_ranks: np.ndarray
    rank_cards: np.ndarray
    suit_cards: np.ndarray
    live_share: np.ndarray
    flush_share: np.ndarray
    row_lengths: np.ndarray
    row_starts: np.ndarray
    key_limit: int
    no_suit: int


_ALL_CARDS = np.uint64((1 << 52) - 1)


@intrinsic
def _count_bits(typing_context, value):  # noqa: ANN001, ANN202, ARG001
    """The set bits of a uint64, by the processor's population count (LLVM's ``ctpop``)."""
    if value != types.uint64:
        return None

    def generate(context, builder, signature, arguments):  # noqa: ANN001, ANN202, ARG001
        return builder.ctpop(arguments[0])

    return types.uint64(types.uint64), generate


@njit(cache=True, inline="always")
def _popcount(value):  # noqa: ANN001, ANN202
    """The set bits of a uint64 (exact), as int64."""
    return np.int64(_count_bits(value))


_ROWS_CHUNK = 64
"""Boards whose rows :func:`play_learned` works out in one go before gathering their options."""


@njit(cache=True, error_model="numpy")
def _rows_of(first, last, dealt, keys, counts, suits, cards, seen, live_on, tables,  # noqa: ANN001, ANN202, PLR0913
             subset_keys, subset_suits, subset_counts, entries, fits, live, added, drawn,
             reached):
    """Boards ``first`` to ``last``: their rows after each subset of the street's cards, as
    :class:`pipeline.simulate.dealer.StreetRows` works them out (the same integers, the same
    share-table entries): the subsets' rank keys and suit states (``subset_keys``,
    ``subset_suits``), and per row the outlook entry and whether the cards fit (``entries``,
    ``fits``: 3 × boards × subsets, from board ``first`` on) and the live fields (``live``:
    5 × boards × subsets; 1 and 0 without ``live_on``). ``added``, ``drawn`` and ``reached`` are scratch (subsets, 6 and
    subsets long): allocated once by the caller, not per board."""
    # the tables' fields bound once per call (a field read costs a reference count)
    card_bits = tables.card_bits
    card_keys = tables.card_keys
    flush_share = tables.flush_share
    key_limit = tables.key_limit
    live_share = tables.live_share
    mono_suit = tables.mono_suit
    no_suit = tables.no_suit
    rank_bits = tables.rank_bits
    rank_cards = tables.rank_cards
    row_lengths = tables.row_lengths
    state_index = tables.state_index
    state_next = tables.state_next
    state_ranks = tables.state_ranks
    suit_after = tables.suit_after
    suit_cards = tables.suit_cards
    suit_keys = tables.suit_keys
    size = dealt.shape[1]
    subsets_count = subset_counts.size
    for board in range(first, last):
        at_board = board - first
        for subset in range(subsets_count):
            key = 0
            suit_key = 0
            ranks = 0
            for column in range(size):
                if (subset >> column) & 1:
                    card = dealt[board, column]
                    key += card_keys[card]
                    suit_key += suit_keys[card]
                    ranks |= rank_bits[card]
            subset_keys[subset] = key
            subset_suits[subset] = mono_suit[suit_key]
            added[subset] = ranks
        unseen = np.uint64(0)
        if live_on:
            known = np.uint64(0)
            for card in range(52):
                if seen[board, card]:
                    known |= card_bits[card]
            for column in range(size):
                known |= card_bits[dealt[board, column]]
            for slot in range(13):
                if cards[board, slot] >= 0:
                    known |= card_bits[cards[board, slot]]
            unseen = ~known & _ALL_CARDS
            drawn[0] = no_suit
            drawn[5] = no_suit
            for suit in range(4):
                drawn[suit + 1] = _popcount(unseen & suit_cards[suit])
        empty = max(np.int64(state_index[0]), 0)
        for row in range(3):
            # the row's state after each subset, from the subset without its lowest card and
            # that card's rank (the state-space transition table): one lookup of the big index
            # per row instead of one per subset
            reached[0] = state_index[counts[board, row] * key_limit
                                            + keys[board, row]]
            for subset in range(1, subsets_count):
                before = reached[subset & (subset - 1)]
                lowest = 0
                while not (subset >> lowest) & 1:
                    lowest += 1
                reached[subset] = (state_next[before, dealt[board, lowest] >> 2]
                                   if before >= 0 else -1)
            current_ranks = np.int64(state_ranks[max(np.int64(reached[0]), 0)])
            at = 2 * row - 1 if row else 0  # the row's live field in ``live`` (its flush: next)
            for subset in range(subsets_count):
                count = counts[board, row] + subset_counts[subset]
                suit = suit_after[subset_suits[subset] + 6 * suits[board, row] + 7]
                fit = count <= row_lengths[row]
                state = max(np.int64(reached[subset]), 0) if fit else empty
                fits[row, at_board, subset] = fit
                if row == 0:
                    entries[row, at_board, subset] = state
                else:
                    entries[row, at_board, subset] = 2 * state + (1 if 0 <= suit < 4 else 0)
                if not live_on:
                    live[at, at_board, subset] = _ONE
                    if row > 0:
                        live[at + 1, at_board, subset] = _ZERO
                    continue
                mask = current_ranks | added[subset]
                code = _popcount(rank_cards[mask] & unseen) << 8
                code |= _popcount(np.uint64(mask)) << 4
                code |= count
                live[at, at_board, subset] = live_share[code]
                if row > 0:
                    flush_code = (drawn[suit + 1] << 4) | count
                    live[at + 1, at_board, subset] = flush_share[flush_code]


@njit(cache=True, error_model="numpy")
def play_learned(dealt, keys, counts, suits, cards, seen, live_on, card_keys, suit_keys,  # noqa: ANN001, ANN201, PLR0913
                 rank_bits, card_bits, mono_suit, suit_after, state_index, state_next,
                 state_ranks, rank_cards, suit_cards, live_share, flush_share, row_lengths,
                 row_starts, key_limit, no_suit, subsets, patterns, within, tables, opening,
                 low, steer, table, base_slots, first_slots, group_starts, second_slots,
                 columns):
    """Play one street on every board as :class:`pipeline.simulate.learned.LearnedBot`
    chooses, in one pass over the boards (their rows worked out by :func:`_rows_of`, a chunk
    of boards at a time, then each board's options considered gathered into blocks and
    scored): returns the pick per board and the rows' new keys, counts and suits (new
    arrays); the cards placed go into ``cards`` and the discards into ``seen`` (in place), as
    :meth:`pipeline.analysis.policy.ColumnPolicy.play_street` does.

    ``subsets``: each pattern's subset of the dealt cards per row (patterns × 3); ``within``:
    each dealt card's place among the pattern's cards of its row; ``tables``: the three rows'
    outlooks (3 × entries × 8, float32), an entry's fields side by side in the order of
    :data:`ROW_SLOTS`; ``opening``: only the shapes players use are considered (when a board
    has any); ``live_on``: work out the live-card fields (else 1 and 0). The rest: the weights
    as :func:`worth_of_fields` takes them.

    The dealer's tables come as the fields of :class:`StreetTables`, one argument each
    (``*street_tables``): arrays and numbers are typed at once by the compiled function's
    dispatcher, where a named tuple of arrays took a third of a millisecond per call."""
    street_tables = StreetTables(card_keys, suit_keys, rank_bits, card_bits, mono_suit,
                                 suit_after, state_index, state_next, state_ranks, rank_cards,
                                 suit_cards, live_share, flush_share, row_lengths, row_starts,
                                 key_limit, no_suit)
    boards_count = dealt.shape[0]
    subsets_count = 1 << dealt.shape[1]
    subset_counts = np.zeros(subsets_count, dtype=np.int64)
    for subset in range(subsets_count):
        subset_counts[subset] = _popcount(np.uint64(subset))
    subset_keys = np.empty(subsets_count, dtype=np.int64)
    subset_suits = np.empty(subsets_count, dtype=np.int64)
    entries = np.zeros((3, _ROWS_CHUNK, subsets_count), dtype=np.int64)
    fits = np.zeros((3, _ROWS_CHUNK, subsets_count), dtype=np.bool_)
    live = np.zeros((5, _ROWS_CHUNK, subsets_count), dtype=np.float32)
    added = np.zeros(subsets_count, dtype=np.int64)
    drawn = np.zeros(6, dtype=np.int64)
    reached = np.zeros(subsets_count, dtype=np.int64)
    raw, features, work, total, inner, scratch = _block_buffers()
    stages = np.empty(BLOCK, dtype=np.int64)
    owners = np.empty(BLOCK, dtype=np.int64)
    picks = np.empty(BLOCK, dtype=np.int64)
    considered = np.empty(subsets.shape[0], dtype=np.bool_)
    staged = np.zeros((3, subsets_count, 8), dtype=np.float32)
    best = np.full(boards_count, -np.inf, dtype=np.float32)
    chosen = np.zeros(boards_count, dtype=np.int64)
    last_stage = table.shape[0] - 1
    count = 0
    for first in range(0, boards_count, _ROWS_CHUNK):
        last = min(boards_count, first + _ROWS_CHUNK)
        _rows_of(first, last, dealt, keys, counts, suits, cards, seen, live_on, street_tables,
                 subset_keys, subset_suits, subset_counts, entries, fits, live, added, drawn,
                 reached)
        count = _gather_chunk(first, last, entries, fits, live, subsets, tables, opening,
                              last_stage, staged, considered, raw, features, work, total, inner,
                              scratch, stages, owners, picks, count, low, steer, table,
                              base_slots, first_slots, group_starts, second_slots, columns,
                              best, chosen)
    _score_block(raw, features, work, total, inner, scratch, stages, owners, picks, count, low,
                 steer, table, base_slots, first_slots, group_starts, second_slots, columns,
                 best, chosen)
    new_keys = keys.copy()
    new_counts = counts.copy()
    new_suits = suits.copy()
    for board in range(boards_count):
        pick = chosen[board]
        for row in range(3):
            subset = subsets[pick, row]
            key = 0
            suit_key = 0
            for column in range(dealt.shape[1]):
                if (subset >> column) & 1:
                    key += card_keys[dealt[board, column]]
                    suit_key += suit_keys[dealt[board, column]]
            new_keys[board, row] = keys[board, row] + key
            new_counts[board, row] = counts[board, row] + subset_counts[subset]
            new_suits[board, row] = suit_after[
                mono_suit[suit_key] + 6 * suits[board, row] + 7]
        for column in range(dealt.shape[1]):
            row = patterns[pick, column]
            card = dealt[board, column]
            if row >= 0:
                cards[board, row_starts[row] + counts[board, row]
                      + within[pick, column]] = card
            else:
                seen[board, card] = True
    return chosen, new_keys, new_counts, new_suits
