"""The report's small statistics against textbook values and numpy."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from pipeline.report.findings import judge
from pipeline.report.stats import (
    Mean,
    Proportion,
    percentile_rank,
    two_sided_p,
    weighted_slope,
    wilson_interval,
    z_score,
)


def test_wilson_interval() -> None:
    # 0 of 10: the upper bound is z^2 / (n + z^2)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(1.96**2 / (10 + 1.96**2))
    # 50 of 100 (textbook: 0.4038 - 0.5962)
    low, high = wilson_interval(50, 100)
    assert (round(low, 4), round(high, 4)) == (0.4038, 0.5962)
    assert Proportion(3, 0).interval() is None and Proportion(0, 0).rate is None
    assert Proportion(30, 120).se == pytest.approx(math.sqrt(0.25 * 0.75 / 120))


def test_mean_from_sums() -> None:
    values = [3, -7, 12, 0, 5, -1, 9]
    mean = Mean(len(values), sum(values), sum(v * v for v in values))
    assert mean.value == pytest.approx(statistics.fmean(values))
    assert mean.sd == pytest.approx(statistics.stdev(values))
    assert mean.se == pytest.approx(statistics.stdev(values) / math.sqrt(len(values)))
    assert Mean(1, 4, 16).se is None and Mean(0, 0, 0).value is None


def test_weighted_slope_matches_numpy() -> None:
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    y = [-2.5, -1.0, 0.5, 0.0, 1.5, 3.0]
    w = [10.0, 30.0, 12.0, 25.0, 8.0, 40.0]
    fit = weighted_slope(x, y, w)
    assert fit is not None
    (slope, intercept), covariance = np.polyfit(x, y, 1, w=np.sqrt(w), cov="unscaled")
    assert fit.slope == pytest.approx(slope) and fit.intercept == pytest.approx(intercept)
    # residual variance per unit weight times the unscaled covariance
    residual = sum(wi * (yi - intercept - slope * xi) ** 2 for xi, yi, wi in zip(x, y, w, strict=True))
    assert fit.se == pytest.approx(math.sqrt(residual / (len(x) - 2) * covariance[0][0]))
    assert weighted_slope([1.0, 2.0], [1.0, 2.0], [1.0, 1.0]) is None
    assert weighted_slope([2.0, 2.0, 2.0], [1.0, 2.0, 3.0], [1.0, 1.0, 1.0]) is None


def test_percentile_and_tests() -> None:
    assert percentile_rank(1.0, [0.0, 1.0, 2.0, 3.0]) == pytest.approx(37.5)
    assert percentile_rank(5.0, []) is None
    assert z_score(1.0, 0.3, 0.4) == pytest.approx(2.0)
    assert z_score(1.0, None) is None and z_score(1.0, 0.0) is None
    assert two_sided_p(1.96) == pytest.approx(0.05, abs=1e-3)


def test_judge_words() -> None:
    assert judge(0.1, 2.5, False)[0] == "leak"
    assert judge(0.1, 2.5, True)[0] == "strength"
    assert judge(-0.1, -1.5, True) == ("likely leak", "Probably lower than the field "
                                       "(p = 0.134); not yet certain at 95 %.")
    assert judge(0.1, 0.5, None)[0] == "in line"
    assert judge(0.1, 3.0, None)[0] == "different"
    assert judge(0.1, 4.0, True)[1].endswith("(p < 0.001).")
