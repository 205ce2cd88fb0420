"""Small, exact statistics for the coaching report: pure functions over counts and sums.

Means come from integer sums (``n``, ``sum``, ``sum of squares``) so that the same database gives
the same numbers to the last bit. Intervals are 95 % unless a ``z`` is given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

Z_95 = 1.96
Z_80 = 1.2816  # two-sided 80 % (one-sided 90 %)


@dataclass(frozen=True, slots=True)
class Proportion:
    """``successes`` out of ``trials``."""

    successes: int
    trials: int

    @property
    def rate(self) -> float | None:
        """The observed rate, None without trials."""
        return self.successes / self.trials if self.trials else None

    @property
    def se(self) -> float | None:
        """The standard error sqrt(p (1 - p) / n), None without trials."""
        if not self.trials:
            return None
        p = self.successes / self.trials
        return math.sqrt(p * (1 - p) / self.trials)

    def interval(self, z: float = Z_95) -> tuple[float, float] | None:
        """The Wilson score interval, None without trials."""
        return wilson_interval(self.successes, self.trials, z) if self.trials else None


@dataclass(frozen=True, slots=True)
class Mean:
    """A mean over ``n`` values known by their sum and sum of squares."""

    n: int
    total: float
    total_sq: float

    @property
    def value(self) -> float | None:
        """The mean, None when empty."""
        return self.total / self.n if self.n else None

    @property
    def sd(self) -> float | None:
        """The sample standard deviation, None below two values."""
        if self.n < 2:
            return None
        variance = (self.total_sq - self.total * self.total / self.n) / (self.n - 1)
        return math.sqrt(max(variance, 0.0))

    @property
    def se(self) -> float | None:
        """The standard error of the mean, None below two values."""
        sd = self.sd
        return None if sd is None else sd / math.sqrt(self.n)

    def interval(self, z: float = Z_95) -> tuple[float, float] | None:
        """mean ± z·SE, None below two values."""
        value, se = self.value, self.se
        if value is None or se is None:
            return None
        return (value - z * se, value + z * se)


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion; (0, 0) without trials."""
    if trials <= 0:
        return (0.0, 0.0)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    margin = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - margin), min(1.0, centre + margin))


def z_score(difference: float, *standard_errors: float | None) -> float | None:
    """``difference`` over the combined standard error; None when that is unknown or zero."""
    if any(se is None for se in standard_errors):
        return None
    combined = math.sqrt(sum(se * se for se in standard_errors if se is not None))
    if combined == 0:
        return None
    return difference / combined


def two_sided_p(z: float | None) -> float | None:
    """The two-sided p-value of a z statistic under the normal approximation."""
    if z is None:
        return None
    return math.erfc(abs(z) / math.sqrt(2))


def percentile_rank(value: float, others: Sequence[float]) -> float | None:
    """The share (0-100) of ``others`` below ``value``, ties counting half; None without others."""
    if not others:
        return None
    below = sum(1 for other in others if other < value)
    equal = sum(1 for other in others if other == value)
    return 100.0 * (below + 0.5 * equal) / len(others)


# --- ordinals ----------------------------------------------------------------------------------


def ordinal(number: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``12th``, ``13th``, ``21st``, ``71st``, ``111th``.

    >>> [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 33, 71, 101, 111)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '33rd', '71st', '101st', '111th']
    """
    if 10 <= number % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


# --- Student's t -------------------------------------------------------------------------------


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-14:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float | None, df: float | None) -> float | None:
    """The two-sided p-value of a t statistic with ``df`` degrees of freedom (normal without df).

    >>> round(t_two_sided_p(2.0, 10), 4)
    0.0734
    >>> round(t_two_sided_p(1.96, None), 4)
    0.05
    """
    if t is None:
        return None
    if df is None or df <= 0 or math.isinf(df):
        return two_sided_p(t)
    return incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


@lru_cache(maxsize=1024)
def t_quantile(level: float, df: float | None) -> float:
    """The two-sided critical value: P(|T| <= q) = ``level`` (the normal one without df).

    >>> round(t_quantile(0.95, 10), 3), round(t_quantile(0.95, None), 3)
    (2.228, 1.96)
    """
    low, high = 0.0, 1.0
    while (t_two_sided_p(high, df) or 0.0) > 1 - level:  # bracket the root
        low, high = high, high * 2
    for _ in range(60):
        middle = (low + high) / 2
        if (t_two_sided_p(middle, df) or 0.0) > 1 - level:
            low = middle
        else:
            high = middle
    return (low + high) / 2


# --- false discoveries -------------------------------------------------------------------------


def benjamini_hochberg(p_values: Sequence[float | None]) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values (q-values), in the input order; None stays None.

    A test *survives* at false-discovery rate ``alpha`` when its q-value is at most ``alpha``;
    then, among the surviving tests, the expected share of false discoveries is at most
    ``alpha``.

    >>> [round(q, 3) for q in benjamini_hochberg([0.01, 0.04, 0.03, 0.20])]
    [0.04, 0.053, 0.053, 0.2]
    """
    indexed = [(p, index) for index, p in enumerate(p_values) if p is not None]
    count = len(indexed)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 1.0
    for rank, (p, index) in reversed(list(enumerate(sorted(indexed), start=1))):
        running = min(running, p * count / rank)
        adjusted[index] = min(1.0, running)
    return adjusted


# --- robust spread -----------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    """The median (the mean of the middle two for an even count)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


MAD_TO_SD = 1.4826
"""Median absolute deviation × this = a robust standard deviation (exact for a normal)."""


def robust_scale(values: Sequence[float]) -> tuple[float, float] | None:
    """(median, robust SD = 1.4826 × median absolute deviation); None below three values."""
    if len(values) < 3:
        return None
    centre = median(values)
    return centre, MAD_TO_SD * median([abs(value - centre) for value in values])


# --- shrinkage ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Prior:
    """The spread of true strength among a group's players: mean (with its standard error) and
    between-player SD."""

    mean: float
    spread: float
    players: int
    mean_se: float = 0.0


def estimate_prior(values: Sequence[float], standard_errors: Sequence[float]) -> Prior | None:
    """The group's mean and between-player spread (DerSimonian-Laird, method of moments).

    ``values``: each player's estimate (points per hand), ``standard_errors`` their SEs. The
    spread is what is left of the players' differences once their sampling noise is taken out
    (0 when the noise explains them all). None below two players with a positive SE.
    """
    pairs = [(v, se) for v, se in zip(values, standard_errors, strict=True) if se > 0]
    if len(pairs) < 2:
        return None
    weights = [1 / (se * se) for _, se in pairs]
    total = sum(weights)
    mean = sum(w * v for w, (v, _) in zip(weights, pairs, strict=True)) / total
    q = sum(w * (v - mean) ** 2 for w, (v, _) in zip(weights, pairs, strict=True))
    scale = total - sum(w * w for w in weights) / total
    variance = max(0.0, (q - (len(pairs) - 1)) / scale) if scale > 0 else 0.0
    precision = sum(1 / (se * se + variance) for _, se in pairs)
    return Prior(mean, math.sqrt(variance), len(pairs), math.sqrt(1 / precision))


@dataclass(frozen=True, slots=True)
class Shrunk:
    """A player's estimate pulled toward the group mean by how noisy it is."""

    raw: float
    raw_se: float
    value: float
    se: float
    weight: float  # the share of the player's own estimate kept (0: all prior, 1: all own)

    def interval(self, z: float = Z_95) -> tuple[float, float]:
        """value ± z·SE."""
        return (self.value - z * self.se, self.value + z * self.se)


def shrink(value: float, standard_error: float, prior: Prior) -> Shrunk:
    """The empirical-Bayes (normal-normal) estimate: prior mean + B × (value - prior mean).

    B = spread² / (spread² + SE²): a player with few hands (large SE) is pulled most of the way
    to the group's mean, so small samples are not ranked on luck. With no spread left every
    player is the group mean. The standard error adds the uncertainty of the group's mean.
    """
    spread2 = prior.spread ** 2
    se2 = standard_error ** 2
    if spread2 + se2 == 0:
        return Shrunk(value, standard_error, value, 0.0, 1.0)
    weight = spread2 / (spread2 + se2)
    se = math.sqrt(weight * se2 + ((1 - weight) * prior.mean_se) ** 2)
    return Shrunk(value, standard_error, prior.mean + weight * (value - prior.mean), se, weight)
