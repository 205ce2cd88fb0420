"""The report's statistics against textbook values, numpy and independent implementations."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest

from pipeline.report.stats import (
    Mean,
    Prior,
    Proportion,
    benjamini_hochberg,
    estimate_prior,
    incomplete_beta,
    ordinal,
    percentile_rank,
    robust_scale,
    shrink,
    t_quantile,
    t_two_sided_p,
    two_sided_p,
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


def test_percentile_and_tests() -> None:
    assert percentile_rank(1.0, [0.0, 1.0, 2.0, 3.0]) == pytest.approx(37.5)
    assert percentile_rank(5.0, []) is None
    assert z_score(1.0, 0.3, 0.4) == pytest.approx(2.0)
    assert z_score(1.0, None) is None and z_score(1.0, 0.0) is None
    assert two_sided_p(1.96) == pytest.approx(0.05, abs=1e-3)


@pytest.mark.parametrize(("number", "text"), [
    (1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"), (13, "13th"),
    (21, "21st"), (22, "22nd"), (23, "23rd"), (33, "33rd"), (71, "71st"), (100, "100th"),
    (101, "101st"), (111, "111th"), (112, "112th"), (0, "0th"),
])
def test_ordinals(number: int, text: str) -> None:
    # the report once printed "71th percentile" and "33th percentile"
    assert ordinal(number) == text


def test_student_t_against_table_values() -> None:
    # two-sided critical values from the t table (95 %): df 1, 5, 10, 30
    for df, critical in ((1, 12.706), (5, 2.571), (10, 2.228), (30, 2.042)):
        assert t_two_sided_p(critical, df) == pytest.approx(0.05, abs=2e-4)
        assert t_quantile(0.95, df) == pytest.approx(critical, abs=2e-3)
    # df = 1 is the Cauchy distribution: P(|T| > t) = 1 - 2 atan(t) / pi
    for t in (0.3, 1.0, 4.0):
        assert t_two_sided_p(t, 1) == pytest.approx(1 - 2 * math.atan(t) / math.pi, rel=1e-9)
    # df = 2 has a closed form: P(|T| > t) = 1 - t / sqrt(2 + t^2)
    for t in (0.5, 2.0, 7.0):
        assert t_two_sided_p(t, 2) == pytest.approx(1 - t / math.sqrt(2 + t * t), rel=1e-9)
    # no degrees of freedom: the normal
    assert t_two_sided_p(1.96, None) == pytest.approx(two_sided_p(1.96))
    assert incomplete_beta(2.0, 3.0, 0.4) == pytest.approx(0.5248, abs=1e-4)


def _bh_by_hand(p_values: list[float]) -> list[float]:
    """Benjamini-Hochberg written out directly: q_i = min over j >= rank_i of p_(j) m / j."""
    m = len(p_values)
    ranked = sorted(p_values)
    return [min(1.0, min(ranked[j] * m / (j + 1) for j in range(ranked.index(p), m)))
            for p in p_values]


def test_benjamini_hochberg() -> None:
    generator = random.Random(5)
    for _ in range(50):
        p_values = [generator.random() ** 2 for _ in range(generator.randint(1, 30))]
        assert benjamini_hochberg(p_values) == pytest.approx(_bh_by_hand(p_values))
    # None (an untested item) stays None and is not counted
    assert benjamini_hochberg([0.01, None, 0.04]) == [0.02, None, 0.04]
    assert benjamini_hochberg([]) == []


def test_benjamini_hochberg_controls_false_discoveries() -> None:
    """All nulls true: the share of runs with any discovery at 5 % stays near 5 % (for true
    nulls BH bounds the family-wise error by the rate)."""
    generator = np.random.default_rng(3)
    runs = 2000
    hits = sum(any(q <= 0.05 for q in benjamini_hochberg(list(generator.random(40))))
               for _ in range(runs))
    assert hits / runs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)


def test_robust_scale() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 100.0]
    centre, spread = robust_scale(values)  # type: ignore[misc]
    assert centre == 3.0 and spread == pytest.approx(1.4826 * 1.0)
    assert robust_scale([1.0, 2.0]) is None


def test_empirical_bayes_shrinkage() -> None:
    # players whose differences are all noise: no spread, everyone is the group's mean
    generator = np.random.default_rng(9)
    values = list(generator.normal(0.0, 0.5, 40))
    prior = estimate_prior(values, [0.5] * 40)
    assert prior is not None and prior.spread < 0.2
    # a real spread of 1 with noise 0.5: the estimate recovers it roughly
    truth = generator.normal(0.0, 1.0, 400)
    noisy = list(truth + generator.normal(0.0, 0.5, 400))
    prior = estimate_prior(noisy, [0.5] * 400)
    assert prior is not None and prior.spread == pytest.approx(1.0, abs=0.15)
    # the normal-normal posterior, written out
    fixed = Prior(mean=0.2, spread=1.0, players=10, mean_se=0.0)
    small = shrink(3.0, 2.0, fixed)
    assert small.weight == pytest.approx(1 / (1 + 4))
    assert small.value == pytest.approx(0.2 + 0.2 * 2.8)
    assert small.se == pytest.approx(math.sqrt(0.2 * 4))
    big = shrink(3.0, 0.1, fixed)
    assert big.value == pytest.approx(3.0, abs=0.05) and big.weight > 0.99
    # shrunk estimates beat raw ones on average (mean squared error)
    shrunk = [shrink(v, 0.5, prior).value for v in noisy]
    assert np.mean((np.array(shrunk) - truth) ** 2) < np.mean((np.array(noisy) - truth) ** 2)
