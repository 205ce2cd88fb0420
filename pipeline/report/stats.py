"""Small, exact statistics for the coaching report: pure functions over counts and sums.

Means come from integer sums (``n``, ``sum``, ``sum of squares``) so that the same database gives
the same numbers to the last bit. Intervals are 95 % unless a ``z`` is given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class Slope:
    """A weighted least-squares line through points (x, y)."""

    slope: float
    intercept: float
    se: float | None
    points: int


def weighted_slope(xs: Sequence[float], ys: Sequence[float],
                   weights: Sequence[float]) -> Slope | None:
    """Weighted least squares y = a + b x (weights ∝ precision, e.g. hands per session).

    The slope's standard error uses the weighted residual variance with n - 2 degrees of
    freedom; None below three points or when every x is the same.
    """
    n = len(xs)
    if n < 3 or len(ys) != n or len(weights) != n:
        return None
    total_weight = sum(weights)
    if total_weight <= 0:
        return None
    x_mean = sum(w * x for w, x in zip(weights, xs, strict=True)) / total_weight
    y_mean = sum(w * y for w, y in zip(weights, ys, strict=True)) / total_weight
    sxx = sum(w * (x - x_mean) ** 2 for w, x in zip(weights, xs, strict=True))
    if sxx == 0:
        return None
    sxy = sum(w * (x - x_mean) * (y - y_mean) for w, x, y in zip(weights, xs, ys, strict=True))
    slope = sxy / sxx
    intercept = y_mean - slope * x_mean
    residual = sum(
        w * (y - intercept - slope * x) ** 2 for w, x, y in zip(weights, xs, ys, strict=True)
    )
    # residual variance per unit weight, then Var(slope) = sigma^2 / sum w (x - x_mean)^2
    se = math.sqrt(max(residual, 0.0) / (n - 2) / sxx)
    return Slope(slope, intercept, se, n)
