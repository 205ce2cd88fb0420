"""The report invents nothing: on fields of identical bots (every difference is luck) it calls
something clear in very few reports, and never more than one item - the small, fixed-seed
version of ``tests/benchmarks/bench_findings.py`` (which runs 648 null reports and prints the
rate with its interval, and the power on fields with known differences).

And the statistics underneath: errors clustered by session hold their promised rate where hands
of one session hang together, while errors that treat every hand as independent do not.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest

from pipeline.report import ReportRequest, create_report
from pipeline.report.inference import (
    RatioCell,
    chi_square_p,
    clustered_covariance,
    ratio_contrast,
    sums_of,
    welch_df,
)
from pipeline.report.reference import ReferenceSpec

NULL_FIELDS = ((2, ("pineapple",), 11), (3, ("classic", "pineapple"), 12), (4, ("classic",), 13))
"""(players per table, variants, seed) of each null field: six solid bots, 1,500 hands."""


@pytest.fixture(scope="session")
def null_fields(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three small fields of six identical solid bots (built once per test session)."""
    from pipeline.ingest.driver import ingest_paths
    from pipeline.rules.game import Variant
    from pipeline.simulate.simulation import SimulationConfig
    from pipeline.simulate.writer import write_simulation

    folder = tmp_path_factory.mktemp("null-fields")
    databases = []
    for players, variants, seed in NULL_FIELDS:
        hands = folder / f"{players}-{seed}.jsonl"
        config = SimulationConfig(hands=1500, tables=6 // players, players=players,
                                  variants=tuple(Variant(v) for v in variants),
                                  bots=("solid",), seed=seed, pool_size=6)
        write_simulation(config, hands)
        database = folder / f"{players}-{seed}.duckdb"
        assert ingest_paths([hands], database, workers=1).stored == 1500
        databases.append(database)
    return databases


def _players(database: Path) -> list[str]:
    connection = duckdb.connect(str(database), read_only=True)
    try:
        return [row[0] for row in connection.execute(
            "SELECT DISTINCT player FROM seats ORDER BY player").fetchall()]
    finally:
        connection.close()


def test_identical_bots_get_almost_no_clear_item_and_never_two(null_fields: list[Path]) -> None:
    """36 reports (every player against the field and against four named regulars): the code
    before format 3 called something clear in 10 of them on these very fields (one report
    three items: a foul rate, the scooped rate, a head-to-head), all luck."""
    reports = 0
    calling: list[tuple[str, str, list[str]]] = []
    for database in null_fields:
        players = _players(database)
        assert len(players) == 6
        for player in players:
            others = [name for name in players if name != player]
            for spec in (ReferenceSpec(), ReferenceSpec.parse("named:" + ",".join(others[:4]))):
                report = create_report(database, ReportRequest(player, reference=spec))
                reports += 1
                items = [item.key for item in report.summary]
                assert len(items) <= 1, (database.name, player, items)
                if items:
                    calling.append((database.name, player, items))
                # a component is never a test of its own
                assert all(f.p_value is None for f in report.findings if f.cause)
    assert reports == 36
    assert len(calling) <= 3, calling  # about 5 % expected at most; 10 before


def _sessions(generator: np.random.Generator, count: int, effect_sd: float,
              rate: float) -> tuple[np.ndarray, np.ndarray]:
    """(fouls, hands) per session: 40-120 hands each, the session's own foul rate drawn around
    ``rate`` (a mood, a table: hands of one session hang together)."""
    hands = generator.integers(40, 121, size=count)
    logit = np.log(rate / (1 - rate)) + generator.normal(0.0, effect_sd, size=count)
    rates = 1 / (1 + np.exp(-logit))
    return generator.binomial(hands, rates).astype(float), hands.astype(float)


def _cell(fouls: np.ndarray, hands: np.ndarray, clustered: bool) -> RatioCell:
    per_session = np.column_stack([fouls, hands])
    a, b = fouls.sum(), hands.sum()
    sums = sums_of(per_session, np.array([[a, a], [a, b]]), int(b))
    if not clustered:  # every hand its own unit: no session clusters
        sums = type(sums)(sums.totals, sums.independent, np.zeros((2, 2)), sums.units,
                          int(b))
    return RatioCell(sums, sums, 1.0)


@pytest.mark.parametrize(("effect_sd", "clustered", "low", "high"), [
    (0.5, True, 0.02, 0.085),   # sessions as units: the promised 5 %
    (0.5, False, 0.12, 1.0),    # hands as units, sessions hanging together: far more
    (0.0, True, 0.02, 0.085),   # no session effect: still 5 % (the floor is the hands')
])
def test_clustered_errors_hold_their_rate(effect_sd: float, clustered: bool, low: float,
                                          high: float) -> None:
    """Two players with the same true foul rate, 15 sessions each, sessions with a mood of
    their own: how often the difference is called at 5 %, over 600 draws."""
    generator = np.random.default_rng(7)
    rejected = 0
    draws = 600
    for _ in range(draws):
        mine = _sessions(generator, 15, effect_sd, 0.2)
        theirs = _sessions(generator, 15, effect_sd, 0.2)
        cell_mine = _cell(*mine, clustered)
        cell_theirs = _cell(*theirs, clustered)
        test = ratio_contrast([RatioCell(cell_mine.player, cell_theirs.player, 1.0)])
        assert test is not None and test.p_value is not None
        rejected += test.p_value < 0.05
    assert low <= rejected / draws <= high, rejected / draws


def test_clustered_covariance_by_hand() -> None:
    # three sessions' totals (fouls, hands): (1, 10), (3, 10), (5, 20)
    rows = np.array([[1.0, 10.0], [3.0, 10.0], [5.0, 20.0]])
    mean = rows.mean(axis=0)  # (3, 40/3)
    expected = 3 / 2 * sum(np.outer(row - mean, row - mean) for row in rows)
    assert np.allclose(clustered_covariance(rows), expected)
    assert clustered_covariance(rows[:1]).tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_welch_degrees_of_freedom_and_chi_square() -> None:
    # equal variances from 11 sessions each: 20 degrees of freedom
    assert welch_df([1.0, 1.0], [11, 11]) == pytest.approx(20.0)
    # one side dominates: its own sessions count
    assert welch_df([1.0, 1e-9], [6, 500]) == pytest.approx(5.0, rel=1e-6)
    assert chi_square_p(0.0, 3) == 1.0
    assert chi_square_p(7.815, 3) == pytest.approx(0.05, abs=1e-4)
    assert chi_square_p(30.0, 2) == pytest.approx(np.exp(-15.0), rel=1e-9)
