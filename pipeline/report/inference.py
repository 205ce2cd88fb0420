"""Errors that respect how hands hang together: clustered by session, with a floor.

Hands of one session share a table, the same opponents and the player's mood of the evening; the
hands are not independent draws. Every comparison of the report is a smooth function of sums
(counts, points, royalties) per side (the player, the reference group) and per stratum (variant
and table size). Its variance comes from the delta method with the sums' covariance estimated
two ways:

* **clustered**: sessions are the independent units (``G / (G - 1) × Σ (T_s - T/G)(T_s - T/G)ᵀ``
  over the sessions' sums ``T_s``);
* **independent hands**: every board its own unit (the textbook covariance).

Each side contributes the larger of the two (a few sessions that happen to agree never fake
certainty; hands that hang together are never counted as independent), and the test is
Student's t with the Welch-Satterthwaite degrees of freedom of the two sides' sessions, so a
player with 12 sessions is judged on 12 units, not on 900 hands. The calibration is checked on
simulated fields of identical bots (``tests/benchmarks/bench_findings.py``).

Pure: numpy over small arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.report.stats import incomplete_beta, t_quantile, t_two_sided_p


@dataclass(frozen=True, slots=True)
class Sums:
    """One side's sums in one stratum: ``totals`` (k numbers), their covariance with boards as
    units (``independent``) and with sessions as units (``clustered``), and how many boards
    (``units``) and sessions (``clusters``) they come from."""

    totals: np.ndarray
    independent: np.ndarray
    clustered: np.ndarray
    units: int
    clusters: int

    @classmethod
    def empty(cls, size: int) -> Sums:
        """No data: zeros."""
        return cls(np.zeros(size), np.zeros((size, size)), np.zeros((size, size)), 0, 0)


def clustered_covariance(per_cluster: np.ndarray) -> np.ndarray:
    """The covariance of the column totals of ``per_cluster`` (one row per session), sessions as
    independent units: ``G / (G - 1) × Σ (T_s - mean)(T_s - mean)ᵀ``; zeros below two."""
    rows = np.asarray(per_cluster, dtype=float)
    count = rows.shape[0]
    size = rows.shape[1] if rows.ndim == 2 else 0
    if count < 2:
        return np.zeros((size, size))
    centred = rows - rows.mean(axis=0)
    return count / (count - 1) * (centred.T @ centred)


def sums_of(per_cluster: np.ndarray, moments: np.ndarray, units: int) -> Sums:
    """:class:`Sums` from each session's totals (rows) and the boards' sums of products
    (``moments``: Σ x xᵀ over boards); the independent covariance with the sample's ``n - 1``."""
    rows = np.asarray(per_cluster, dtype=float)
    totals = rows.sum(axis=0) if rows.size else np.zeros(moments.shape[0])
    independent = ((moments - np.outer(totals, totals) / units) * units / (units - 1)
                   if units > 1 else np.zeros_like(moments))
    return Sums(totals, independent, clustered_covariance(rows), int(units), int(rows.shape[0]))


@dataclass(frozen=True, slots=True)
class Test:
    """An estimate with its standard error, Student's t with ``df`` degrees of freedom, the
    two-sided p-value and the 95 % interval."""

    value: float
    se: float
    df: float | None
    t: float | None
    p_value: float | None
    low: float
    high: float


def welch_df(variances: Sequence[float], clusters: Sequence[int]) -> float | None:
    """The Welch-Satterthwaite degrees of freedom of a sum of variances, each estimated from
    ``clusters`` units (None when nothing is known)."""
    pairs = [(v, g) for v, g in zip(variances, clusters, strict=True) if v > 0]
    if not pairs:
        return None
    if any(g < 2 for _, g in pairs):
        return 1.0
    numerator = sum(v for v, _ in pairs) ** 2
    denominator = sum(v * v / (g - 1) for v, g in pairs)
    return max(1.0, numerator / denominator) if denominator > 0 else None


def test_of(value: float, variances: Sequence[float], clusters: Sequence[int],
            level: float = 0.95) -> Test:
    """The t test of ``value`` against zero, its variance the sum of the sides' ``variances``
    (each estimated from ``clusters`` sessions)."""
    value = float(value)
    variance = float(sum(variances))
    se = math.sqrt(max(variance, 0.0))
    df = welch_df(variances, clusters)
    if se <= 0:
        return Test(value, 0.0, df, None, None if value else 1.0, value, value)
    t = value / se
    margin = t_quantile(level, df) * se
    p = t_two_sided_p(t, df)
    return Test(value, se, df, t, None if p is None else float(p), value - margin,
                value + margin)


def gradient(function: Callable[[np.ndarray], float], point: np.ndarray) -> np.ndarray:
    """Central-difference derivatives of a scalar ``function`` at ``point``."""
    result = np.zeros(point.size)
    for index in range(point.size):
        step = 1e-6 * max(1.0, abs(point[index]))
        up, down = point.copy(), point.copy()
        up[index] += step
        down[index] -= step
        result[index] = (function(up) - function(down)) / (2 * step)
    return result


def side_variance(gradients: Sequence[np.ndarray], sides: Sequence[Sums]) -> tuple[float, int]:
    """(variance, sessions) of one side's part of a statistic: the larger of the clustered and
    the independent-hands variance, over the side's strata (strata are independent)."""
    clustered = sum(float(g @ s.clustered @ g) for g, s in zip(gradients, sides, strict=True))
    independent = sum(float(g @ s.independent @ g)
                      for g, s in zip(gradients, sides, strict=True))
    return max(clustered, independent, 0.0), sum(s.clusters for s in sides)


@dataclass(frozen=True, slots=True)
class RatioCell:
    """A ratio in one stratum for both sides (e.g. fouls per hand): the player's and the
    group's :class:`Sums` of (numerator, denominator), and the stratum's weight (the player's
    share of the comparison's units)."""

    player: Sums
    reference: Sums
    weight: float


def ratio_contrast(cells: Sequence[RatioCell], adjusted: bool = False) -> Test | None:
    """The difference of two ratios weighted over strata, ``Σ w (a_p / b_p - a_r / b_r)``, tested.

    ``adjusted``: the ratios are shares of 0/1 outcomes; the independent-hands variance then
    uses ``(x + 1) / (n + 2)`` (so that 0 of 40 is not certain). None when no stratum has both
    sides.
    """
    usable = [c for c in cells if c.player.totals[1] > 0 and c.reference.totals[1] > 0]
    if not usable:
        return None
    total_weight = sum(c.weight for c in usable)
    if total_weight <= 0:
        return None
    value = 0.0
    variances = []
    clusters = []
    for side in ("player", "reference"):
        gradients = []
        sums = []
        for cell in usable:
            part: Sums = getattr(cell, side)
            weight = cell.weight / total_weight
            hits, trials = part.totals
            ratio = hits / trials
            value += (weight if side == "player" else -weight) * ratio
            gradients.append(weight * np.array([1.0 / trials, -hits / (trials * trials)]))
            if adjusted:
                share = (hits + 1) / (trials + 2)
                variance = share * (1 - share) * trials  # of the numerator, denominator fixed
                part = Sums(part.totals, np.array([[variance, 0.0], [0.0, 0.0]]),
                            part.clustered, part.units, part.clusters)
            sums.append(part)
        variance, count = side_variance(gradients, sums)
        variances.append(variance)
        clusters.append(count)
    return test_of(value, variances, clusters)


# --- chi-square --------------------------------------------------------------------------------


def _lower_gamma_series(a: float, x: float) -> float:
    total = term = 1.0 / a
    for n in range(1, 500):
        term *= x / (a + n)
        total += term
        if abs(term) < abs(total) * 1e-15:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _upper_gamma_fraction(a: float, x: float) -> float:
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 500):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def chi_square_p(statistic: float, df: int) -> float:
    """P(χ²(df) ≥ statistic): the upper tail of the chi-square distribution.

    >>> round(chi_square_p(3.841, 1), 3), round(chi_square_p(11.07, 5), 3)
    (0.05, 0.05)
    """
    if statistic <= 0:
        return 1.0
    a, x = df / 2.0, statistic / 2.0
    if x < a + 1:
        return max(0.0, 1.0 - _lower_gamma_series(a, x))
    return min(1.0, _upper_gamma_fraction(a, x))


def f_p(statistic: float, df_between: int, df_within: float | None) -> float:
    """P(F(df_between, df_within) ≥ statistic / df_between) for a chi-square-like
    ``statistic`` whose weights were estimated from ``df_within`` units (the chi-square's tail
    without ``df_within``): a few sessions behind each weight make the test wider, as Student's t
    does for one difference.

    >>> round(f_p(3.841, 1, None), 3), round(f_p(4.965, 1, 10), 3)
    (0.05, 0.05)
    """
    if df_within is None or math.isinf(df_within):
        return chi_square_p(statistic, df_between)
    if statistic <= 0:
        return 1.0
    ratio = statistic / df_between
    return incomplete_beta(df_within / 2.0, df_between / 2.0,
                           df_within / (df_within + df_between * ratio))
