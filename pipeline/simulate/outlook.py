"""Row outlooks: what a partly filled row is likely to become, precomputed for every row state.

The bots judge a placement by the rows it leaves behind. A row's *state* is the rank multiset
of its cards (identified by the sum of :data:`~pipeline.rules.values.RANK_KEYS`) and whether all
its cards share a suit. For every state this module computes, once, the distribution of the
finished row when its empty slots are filled from a fresh deck (cards elsewhere are ignored), and
keeps a few numbers from it:

* ``strength``: mean and variance of the finished row on a common scale (13 × category + the
  rank of the main group, plus the kickers as a fraction: a pair of queens is 23.x, a flush
  65 + its top rank), so that a top can be compared with a middle and a middle with a bottom;
  a finished row has variance 0 and its exact value order;
* the expected royalty of the row as a top, middle or bottom under a rule set;
* for a top, the chance of finishing at or above the Fantasyland entry (QQ+, or the house rule);
* for a 2-7 middle, the chance of qualifying and its expected royalty.

States get compact ids (:func:`state_space`: the count is part of a state because the deuce's
rank key is 0) and the outlooks are numpy arrays indexed by id, so the bots can look up whole
columns of candidate placements at once. Everything is computed with numpy over all states at
once (a fraction of a second), exactly from the rules core's value tables
(:mod:`pipeline.solver.tables`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache
from math import comb

import numpy as np

from pipeline.rules.game import Variant
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.values import CATEGORY_SHIFT, RANK_KEYS, HandClass
from pipeline.solver.tables import (
    FIVE_HIGH_ARRAY,
    FIVE_LOW_CLASS_ARRAY,
    FLUSH_HIGH_ARRAY,
    KEY_LIMIT,
    THREE_HIGH_ARRAY,
)

_BINOMIAL = np.asarray([[comb(n, k) for k in range(6)] for n in range(6)], dtype=np.float64)
_RANK_KEYS = np.asarray(RANK_KEYS, dtype=np.int64)
_HIGH_CLASSES = len(HandClass)
_LOW_CLASSES = 6


def strength_scale(values: np.ndarray) -> np.ndarray:
    """Map row values to the common strength scale: 13 × category + rank of the main group,
    plus the kickers as a fraction below 1, so that finished rows compare exactly as values do."""
    return (
        13 * (values >> CATEGORY_SHIFT) + ((values >> 16) & 0xF) - 1 + (values & 0xFFFF) / 65536.0
    )


def _count_vectors(total: int, limit: int) -> np.ndarray:
    """Every rank-count vector (13 ranks, each at most ``limit``) summing to ``total``."""
    vectors = []
    for ranks in itertools.combinations_with_replacement(range(13), total):
        counts = [0] * 13
        for rank in ranks:
            counts[rank] += 1
        if max(counts, default=0) <= limit:
            vectors.append(counts)
    return np.asarray(vectors, dtype=np.int64).reshape(-1, 13)


@dataclass(frozen=True, slots=True)
class StateSpace:
    """Every row state of up to five cards: a compact id per (rank multiset, card count).

    ``index[key_sum + count * KEY_LIMIT]`` is the id of a state (-1 where no state exists);
    ``counts``, ``keys`` and ``vectors`` (rank counts) describe each id.
    """

    index: np.ndarray
    counts: np.ndarray
    keys: np.ndarray
    vectors: np.ndarray


@cache
def state_space() -> StateSpace:
    """The state ids (built once per process)."""
    vectors = np.concatenate([_count_vectors(filled, 4) for filled in range(6)])
    counts = vectors.sum(axis=1)
    keys = vectors @ _RANK_KEYS
    index = np.full(6 * KEY_LIMIT, -1, dtype=np.int32)
    index[keys + counts * KEY_LIMIT] = np.arange(len(vectors), dtype=np.int32)
    return StateSpace(index, counts, keys, vectors)


@cache
def _floor(size: int) -> np.ndarray:
    """Per state id: the strength of a row of ``size`` cards finished with the lowest cards that
    pair nothing (what a player who keeps the row down ends with); 0 for states that do not fit."""
    space = state_space()
    table = THREE_HIGH_ARRAY if size == 3 else FIVE_HIGH_ARRAY
    floor = np.zeros(len(space.counts))
    for identity, (vector, count) in enumerate(zip(space.vectors.tolist(), space.counts.tolist(),
                                                   strict=True)):
        if count > size:
            continue
        ranks = [rank for rank in range(13) for _ in range(vector[rank])]
        fillers = [rank for rank in range(13) if not vector[rank]][:size - count]
        key = sum(RANK_KEYS[rank] for rank in ranks + fillers)
        floor[identity] = strength_scale(table[np.asarray([key])])[0]
    return floor


@dataclass(frozen=True, slots=True)
class _Outcomes:
    """Rules-independent outlooks per state id (and, for five-card rows, per suitedness)."""

    mean: np.ndarray
    variance: np.ndarray
    classes: np.ndarray  # chance of each finished HandClass
    pair_ranks: np.ndarray  # chance of a finished pair of each rank (tops)
    trips_ranks: np.ndarray  # chance of finished trips of each rank (tops)
    low_classes: np.ndarray  # chance of each finished LowClass (five-card rows)


def _completion_weights(states: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """For states of one card count: the completions of their empty slots and their chances."""
    filled = int(states[0].sum())
    missing = size - filled
    additions = _count_vectors(missing, 4)
    weights = np.prod(
        _BINOMIAL[4 - states[:, None, :], additions[None, :, :]], axis=2
    ) / comb(52 - filled, missing)
    return additions, weights


@cache
def _outcomes(size: int, suited: bool) -> _Outcomes:
    """Outlooks of every state id as a row of ``size`` cards (3 for a top, 5 otherwise).

    States with more cards than the row holds get zeros. ``suited`` (five-card rows only) mixes
    in the chance of a flush for states whose cards are distinct ranks (all of one suit); other
    states get their plain outlook.
    """
    space = state_space()
    ids = len(space.counts)
    result = {
        "mean": np.zeros(ids), "variance": np.zeros(ids),
        "classes": np.zeros((ids, _HIGH_CLASSES)), "pair_ranks": np.zeros((ids, 13)),
        "trips_ranks": np.zeros((ids, 13)), "low_classes": np.zeros((ids, _LOW_CLASSES)),
    }
    for filled in range(size + 1):
        chosen = np.flatnonzero(space.counts == filled)
        states = space.vectors[chosen]
        additions, weights = _completion_weights(states, size)
        totals = space.keys[chosen][:, None] + (additions @ _RANK_KEYS)[None, :]
        if size == 3:
            values = THREE_HIGH_ARRAY[totals]
            low_values = np.zeros_like(values)
        else:
            values = FIVE_HIGH_ARRAY[totals]
            low_values = FIVE_LOW_CLASS_ARRAY[totals]
        distribution = _Distribution(values, low_values, weights)
        if suited and filled >= 1:
            distribution = _with_flushes(distribution, states, filled)
        for name in result:
            result[name][chosen] = getattr(distribution, name)
    return _Outcomes(**result)


class _Distribution:
    """Summary numbers of finished-row distributions, one row per state."""

    def __init__(self, values: np.ndarray, low_classes: np.ndarray, weights: np.ndarray):
        scale = strength_scale(values)
        self.mean = (weights * scale).sum(axis=1)
        self.variance = np.maximum((weights * scale * scale).sum(axis=1) - self.mean**2, 0.0)
        categories = values >> CATEGORY_SHIFT
        main_rank = ((values >> 16) & 0xF) - 1
        self.classes = np.stack(
            [(weights * (categories == hand_class)).sum(axis=1) for hand_class in range(_HIGH_CLASSES)],
            axis=1,
        )
        self.pair_ranks = np.stack(
            [(weights * ((categories == HandClass.PAIR) & (main_rank == rank))).sum(axis=1)
             for rank in range(13)], axis=1,
        )
        self.trips_ranks = np.stack(
            [(weights * ((categories == HandClass.TRIPS) & (main_rank == rank))).sum(axis=1)
             for rank in range(13)], axis=1,
        )
        self.low_classes = np.stack(
            [(weights * (low_classes == low)).sum(axis=1) for low in range(_LOW_CLASSES)], axis=1
        )


def _with_flushes(plain: _Distribution, states: np.ndarray, filled: int) -> _Distribution:
    """Suited states (distinct ranks, one suit): mix in the chance that the row ends a flush.

    The flush chance is C(13 - filled, missing) / C(52 - filled, missing); the other outcomes are
    taken from the rank-only distribution. A finished flush is never a 2-7 low. States with a
    repeated rank cannot be suited and keep their plain outlook.
    """
    distinct = (states <= 1).all(axis=1)
    missing = 5 - filled
    state_masks = states @ (1 << np.arange(13))
    addition_masks = np.asarray(
        [sum(1 << rank for rank in ranks) for ranks in itertools.combinations(range(13), missing)],
        dtype=np.int64,
    )
    free = (state_masks[:, None] & addition_masks[None, :]) == 0
    flush_values = FLUSH_HIGH_ARRAY[(state_masks[:, None] | addition_masks[None, :]) & 0x1FFF]
    weights = free / np.maximum(free.sum(axis=1, keepdims=True), 1)
    flush = _Distribution(flush_values, np.zeros_like(flush_values), weights)
    chance = np.where(distinct, comb(13 - filled, missing) / comb(52 - filled, missing), 0.0)
    mixed = object.__new__(_Distribution)
    for name in ("classes", "pair_ranks", "trips_ranks"):
        setattr(mixed, name, (1 - chance)[:, None] * getattr(plain, name)
                + chance[:, None] * getattr(flush, name))
    mixed.low_classes = (1 - chance)[:, None] * plain.low_classes
    mixed.low_classes[:, 0] += chance
    mixed.mean = (1 - chance) * plain.mean + chance * flush.mean
    second_moment = (1 - chance) * (plain.variance + plain.mean**2) + chance * (
        flush.variance + flush.mean**2
    )
    mixed.variance = np.maximum(second_moment - mixed.mean**2, 0.0)
    return mixed


@dataclass(frozen=True, slots=True)
class RowOutlooks:
    """Outlooks for one variant and rule set, as arrays indexed by state id.

    Top arrays are indexed ``[id]``; five-card arrays ``[id, suited]``. ``top_fantasyland_mean``
    and ``_variance`` describe the top's strength given that it qualifies for Fantasyland;
    ``top_floor`` and ``five_floor`` are a row's strength when its open slots get the lowest
    cards that pair nothing.
    ``low_*`` hold the 2-7 middle's chance of qualifying and expected royalty (zeros outside
    2-7 Pineapple).
    """

    top_mean: np.ndarray
    top_variance: np.ndarray
    top_royalty: np.ndarray
    top_fantasyland: np.ndarray
    top_fantasyland_mean: np.ndarray
    top_fantasyland_variance: np.ndarray
    top_floor: np.ndarray
    five_floor: np.ndarray
    five_mean: np.ndarray
    five_variance: np.ndarray
    bottom_royalty: np.ndarray
    middle_royalty: np.ndarray
    low_qualify: np.ndarray
    low_royalty: np.ndarray


@cache
def row_outlooks(variant: Variant, rules: RuleSet) -> RowOutlooks:
    """The outlook arrays for a variant and rule set (built once per process, then cached)."""
    fl = rules.fantasyland
    royalties = rules.royalties
    top = _outcomes(3, False)
    entry = fl.lowball_entry_top_pair if variant is Variant.LOWBALL_PINEAPPLE else fl.entry_top_pair
    top_royalty = top.pair_ranks @ np.asarray(royalties.top_pairs, dtype=np.float64) + (
        top.trips_ranks @ np.asarray(royalties.top_trips, dtype=np.float64)
    )
    fantasyland = top.pair_ranks[:, entry:].sum(axis=1) + top.trips_ranks.sum(axis=1)
    if not fl.enabled:
        fantasyland = np.zeros_like(fantasyland)
    # The top's strength given that it qualifies (pairs at their rank plus half a kicker).
    pair_scale = 13.5 + np.arange(13.0)
    trips_scale = 39.0 + np.arange(13.0)
    qualifying = top.pair_ranks[:, entry:]
    weight = np.maximum(fantasyland, 1e-12)
    first = (qualifying @ pair_scale[entry:] + top.trips_ranks @ trips_scale) / weight
    second = (qualifying @ pair_scale[entry:] ** 2 + top.trips_ranks @ trips_scale**2) / weight
    fantasyland_mean = np.where(fantasyland > 0, first, 0.0)
    fantasyland_variance = np.where(fantasyland > 0, np.maximum(second - first**2, 0.0), 0.0)
    plain, suited = _outcomes(5, False), _outcomes(5, True)

    def both(name: str) -> np.ndarray:
        """An outcome array for plain and suited states side by side (last axis)."""
        return np.stack([getattr(plain, name), getattr(suited, name)], axis=-1)

    classes = both("classes")  # (ids, 10, 2)
    low_classes = both("low_classes")
    bottom = np.asarray(royalties.bottom, dtype=np.float64)
    middle = np.asarray(royalties.middle, dtype=np.float64)
    low = np.asarray(royalties.lowball_middle, dtype=np.float64)
    arrays = {
        "top_mean": top.mean, "top_variance": top.variance, "top_royalty": top_royalty,
        "top_fantasyland": fantasyland, "top_fantasyland_mean": fantasyland_mean,
        "top_fantasyland_variance": fantasyland_variance,
        "top_floor": _floor(3), "five_floor": _floor(5),
        "five_mean": both("mean"), "five_variance": both("variance"),
        "bottom_royalty": np.einsum("ics,c->is", classes, bottom),
        "middle_royalty": np.einsum("ics,c->is", classes, middle),
        "low_qualify": low_classes[:, 1:, :].sum(axis=1),
        "low_royalty": np.einsum("ics,c->is", low_classes, low),
    }
    # float32 halves the memory traffic of the bots' arithmetic; the scale's kicker fraction
    # (1/65536) stays distinguishable below 128.
    return RowOutlooks(**{name: array.astype(np.float32) for name, array in arrays.items()})
