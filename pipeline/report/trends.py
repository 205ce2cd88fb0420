"""Fair trends: change over time with the mix of games held fixed.

A player's results move with the games played: Classic and Pineapple foul at different rates, a
3-handed table pays more per hand than a heads-up one. Comparing sessions as they come mistakes a
change of mix for a change of play. Here every comparison is made *within* a stratum (variant and
table size): weighted least squares with one intercept per stratum (fixed effects) over cells of
a session's hands, so that hands sharing a table and opponents count together, with Student's t
on ``cells - parameters`` degrees of freedom.

* :func:`within_effect` — the effect of one variable (session number: a trend; after a date: a
  before/after difference), mix held fixed; it needs only the hands' sums per cell
  (:class:`Cells`), so :func:`within_effect_of_cells` gives the same fit from totals kept per
  session;
* :func:`rolling_series` — rolling windows over the player's hands, raw and with the mix held
  fixed (each hand measured against the player's own mean in its stratum).

Pure: numpy over plain arrays (:func:`value_codes` and :func:`strata_codes` turn polars columns
into them without a Python loop over the hands).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from pipeline.report.stats import t_quantile, t_two_sided_p


@dataclass(frozen=True, slots=True)
class WithinFit:
    """The effect of ``x`` on ``y`` within strata, with a session-clustered standard error."""

    estimate: float
    se: float
    df: int
    hands: int
    sessions: int
    strata: int
    t: float | None
    p_value: float | None
    low: float
    high: float


def _codes(values: Sequence[object]) -> np.ndarray:
    """Codes 0, 1, ... of ``values`` in order of first appearance (equal values, equal codes)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        return _first_appearance(values)
    index = {value: code for code, value in enumerate(dict.fromkeys(values))}
    return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))


def _first_appearance(values: np.ndarray) -> np.ndarray:
    """:func:`_codes` of a numeric array, without a Python loop."""
    if values.size == 0:
        return np.zeros(0, dtype=np.int64)
    uniques, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    rank = np.empty(uniques.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(uniques.size)
    return rank[inverse.reshape(-1)]


def _distinct(codes: np.ndarray) -> int:
    """How many distinct values ``codes`` (non-negative integers) holds."""
    return int(np.count_nonzero(np.bincount(codes))) if codes.size else 0


def _weighted_demeaned(values: np.ndarray, weights: np.ndarray, groups: np.ndarray,
                       count: int) -> np.ndarray:
    sums = np.bincount(groups, weights=values * weights, minlength=count)
    totals = np.bincount(groups, weights=weights, minlength=count)
    return values - (sums / np.where(totals > 0, totals, 1.0))[groups]


def value_codes(values: pl.Series) -> np.ndarray:
    """One number per distinct value of ``values`` (equal values, equal numbers): what the fits
    need of strata and sessions (which hands share one), without a Python loop. The fits number
    them again in order of first appearance, so the result is the same as for the values."""
    return values.cast(pl.Categorical).to_physical().cast(pl.Int64).to_numpy()


def strata_codes(hands: pl.DataFrame) -> np.ndarray:
    """Each hand's stratum (variant and table size) as :func:`value_codes`."""
    return value_codes(hands.select(pl.format("{}/{}", "variant", "player_count")).to_series())


@dataclass(frozen=True, slots=True)
class Cells:
    """Hands pooled into cells — a session's hands in one stratum with one value of ``x`` — in
    order of first appearance: everything :func:`within_effect` needs of the hands.

    ``hands``, ``y_total`` and ``y_squares`` are per cell (counts and sums of ``y`` and ``y²``,
    exact for integer ``y``); ``x`` is the cell's value of ``x``; ``stratum`` and ``session``
    number the cells' strata and sessions in order of first appearance.
    """

    hands: np.ndarray
    y_total: np.ndarray
    y_squares: np.ndarray
    x: np.ndarray
    stratum: np.ndarray
    session: np.ndarray


def pool_cells(y: Sequence[float], x: Sequence[float], strata: Sequence[object],
               sessions: Sequence[object]) -> Cells:
    """Pool hands (in play order) into :class:`Cells`."""
    y_values = np.asarray(y, dtype=float)
    x_values = np.asarray(x, dtype=float)
    if not len(strata) == len(sessions) == x_values.size == y_values.size:
        raise ValueError("y, x, strata and sessions differ in length")
    if y_values.size == 0:
        empty = np.zeros(0)
        return Cells(empty, empty, empty, empty, np.zeros(0, np.int64), np.zeros(0, np.int64))
    stratum_codes = _codes(strata)
    session_codes = _codes(sessions)
    x_codes = _codes(x_values)
    # one code per (stratum, session, x), numbered by first appearance
    cell = _first_appearance((stratum_codes * (int(session_codes.max()) + 1) + session_codes)
                             * (int(x_codes.max()) + 1) + x_codes)
    cells = int(cell.max()) + 1
    first = np.zeros(cells, dtype=np.int64)
    first[cell[::-1]] = np.arange(cell.size)[::-1]
    return Cells(
        hands=np.bincount(cell, minlength=cells).astype(float),
        y_total=np.bincount(cell, weights=y_values, minlength=cells),
        y_squares=np.bincount(cell, weights=y_values * y_values, minlength=cells),
        x=x_values[first], stratum=stratum_codes[first], session=session_codes[first],
    )


def cells_from_totals(hands: Sequence[float], y_total: Sequence[float],
                      y_squares: Sequence[float], x: Sequence[float], strata: Sequence[object],
                      sessions: Sequence[object]) -> Cells:
    """:class:`Cells` from totals already kept per cell, listed in order of each cell's first
    hand (as :func:`pool_cells` would number them)."""
    return Cells(np.asarray(hands, dtype=float), np.asarray(y_total, dtype=float),
                 np.asarray(y_squares, dtype=float), np.asarray(x, dtype=float),
                 _codes(strata), _codes(sessions))


def within_effect(y: Sequence[float], x: Sequence[float], strata: Sequence[object],
                  sessions: Sequence[object], level: float = 0.95) -> WithinFit | None:
    """The effect ``b`` of ``x`` on ``y`` within strata: ``y = a[stratum] + b·x``.

    Hands are first pooled into cells (a session's hands in one stratum with one value of
    ``x``), so that hands of one session, which share a table and opponents, count once
    together; then weighted least squares over the cells' means (weights: hands) with one
    intercept per stratum. The standard error comes from the cells' weighted residual variance
    (never below the variance of hands around their cell's mean, which estimates the same thing
    when sessions add nothing of their own: a few cells that happen to line up never fake
    certainty), the test from Student's t on ``cells - strata - 1`` degrees of freedom (only
    strata where ``x`` varies inform ``b``; the others still inform the variance). None when no
    degree of freedom is left or ``x`` never varies within a stratum.
    """
    if np.asarray(y, dtype=float).size < 3:
        return None
    return within_effect_of_cells(pool_cells(y, x, strata, sessions), level)


def within_effect_of_cells(pooled: Cells, level: float = 0.95) -> WithinFit | None:
    """:func:`within_effect` of hands already pooled into cells (the same figures, however the
    cells were counted: from the hands, or from totals kept per session)."""
    hands_per_cell = pooled.hands
    total_hands = float(hands_per_cell.sum())
    if total_hands < 3:
        return None
    cells = hands_per_cell.size
    y_cell = pooled.y_total / hands_per_cell
    x_cell = pooled.x
    stratum = pooled.stratum
    strata_count = int(stratum.max()) + 1
    x_within = _weighted_demeaned(x_cell, hands_per_cell, stratum, strata_count)
    informative = np.abs(x_within) > 1e-12
    if not informative.any():
        return None
    x_within = np.where(informative, x_within, 0.0)
    y_within = _weighted_demeaned(y_cell, hands_per_cell, stratum, strata_count)
    sxx = float((hands_per_cell * x_within) @ x_within)
    if sxx <= 0:
        return None
    estimate = float((hands_per_cell * x_within) @ y_within) / sxx
    residual = y_within - estimate * x_within
    informing_strata = _distinct(stratum[informative])
    df = cells - strata_count - 1
    if df < 1:
        return None
    between = float((hands_per_cell * residual) @ residual) / df
    # hands around their cell's mean: the same variance when sessions add nothing of their own;
    # the larger of the two is used, so a few cells that happen to line up never fake certainty
    spread_in_cells = np.maximum(pooled.y_squares - pooled.y_total * y_cell, 0.0)
    within = float(spread_in_cells.sum()) / max(int(total_hands) - cells, 1)
    variance = max(between, within) / sxx
    se = math.sqrt(max(variance, 0.0))
    t = estimate / se if se > 0 else None
    p = t_two_sided_p(t, df) if t is not None else (None if estimate else 1.0)
    margin = t_quantile(level, df) * se
    sessions_used = _distinct(pooled.session[informative])
    return WithinFit(estimate, se, df, int(hands_per_cell[informative].sum()), sessions_used,
                     informing_strata, t, p, estimate - margin, estimate + margin)


@dataclass(frozen=True, slots=True)
class RollingSeries:
    """Rolling means over the last ``window`` hands, raw and with the mix held fixed."""

    window: int
    hand_number: tuple[int, ...]
    raw: tuple[float, ...]
    adjusted: tuple[float, ...]


def rolling_series(y: Sequence[float], strata: Sequence[object], window: int,
                   max_points: int = 400) -> RollingSeries | None:
    """The rolling mean of ``y`` over ``window`` hands, and of the mix-adjusted values
    ``y - mean of the player's hands in the same stratum + the player's overall mean``.

    A player who plays the same way whatever the game shows a flat adjusted line, however the
    games change. At most ``max_points`` points (evenly thinned, the last always kept); None
    with fewer hands than the window.
    """
    values = np.asarray(y, dtype=float)
    if window < 1 or values.size < window:
        return None
    stratum = _codes(strata)
    count = int(stratum.max()) + 1
    adjusted = _weighted_demeaned(values, np.ones_like(values), stratum, count) + values.mean()

    def rolling(series: np.ndarray) -> np.ndarray:
        running = np.concatenate([[0.0], np.cumsum(series)])
        return (running[window:] - running[:-window]) / window

    raw_mean, adjusted_mean = rolling(values), rolling(adjusted)
    numbers = np.arange(window, values.size + 1)
    step = max(1, math.ceil(numbers.size / max_points))
    kept = list(range(0, numbers.size, step))
    if kept[-1] != numbers.size - 1:
        kept.append(numbers.size - 1)
    return RollingSeries(window, tuple(int(numbers[i]) for i in kept),
                         tuple(float(raw_mean[i]) for i in kept),
                         tuple(float(adjusted_mean[i]) for i in kept))


def raw_difference(y: Sequence[float], after: Sequence[bool]) -> tuple[float, float] | None:
    """Mean after minus mean before, ignoring the mix, with its (unclustered) SE."""
    values = np.asarray(y, dtype=float)
    flags = np.asarray(after, dtype=bool)
    later, earlier = values[flags], values[~flags]
    if later.size < 2 or earlier.size < 2:
        return None
    difference = float(later.mean() - earlier.mean())
    se = math.sqrt(later.var(ddof=1) / later.size + earlier.var(ddof=1) / earlier.size)
    return difference, se
