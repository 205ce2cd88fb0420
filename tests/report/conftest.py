"""Fixtures for the coaching-report tests: the hand-made hands, ingested by pipeline.ingest."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.ingest.driver import ingest_mappings
from pipeline.report import ReportSettings
from tests.report.hands import Expected, expected_rows, records

SETTINGS = ReportSettings(min_sample=10, min_sessions=3, percentile_min_hands=15,
                          notable_hands=2, max_opponents=8)
"""Thresholds small enough for the hand-made hands (the defaults need hundreds of hands)."""


@pytest.fixture(scope="session")
def hand_records() -> list[dict]:
    """The canonical records."""
    return records()


@pytest.fixture(scope="session")
def report_db(tmp_path_factory: pytest.TempPathFactory, hand_records: list[dict]) -> Path:
    """A database holding the hand-made hands, written by the real ingest path."""
    database = tmp_path_factory.mktemp("report") / "hands.duckdb"
    summary = ingest_mappings(hand_records, database, "handmade.jsonl")
    assert summary.stored == len(hand_records), summary
    assert summary.rejected == 0, summary
    return database


@pytest.fixture(scope="session")
def expected(hand_records: list[dict]) -> Expected:
    """Every board and pairing, derived from the records alone."""
    return expected_rows(hand_records)


# --- simulated players of known style (the simulator's bots) ------------------------------------

PROOF_BOTS = ("solid", "chaser", "solid", "random", "drifter", "solid", "chaser", "solid")
"""Dealt in turn to the pool: mara, lee, priya and sven play solid; jun and kofi chase
Fantasyland; ana plays at random; tomas drifts (solid, then careless from halfway)."""
SOLIDS = ("mara", "lee", "priya", "sven")
CHASERS = ("jun", "kofi")
RANDOM = "ana"
DRIFTER = "tomas"


@dataclass(frozen=True)
class Simulated:
    """A database of simulated hands and what the simulation knows about it."""

    database: Path
    switch: datetime  # when the drifter's second half starts


@pytest.fixture(scope="session")
def proof_db(tmp_path_factory: pytest.TempPathFactory) -> Simulated:
    """3,000 simulated 3-player hands at two tables, Pineapple and Classic in turn."""
    from pipeline.ingest.driver import ingest_paths
    from pipeline.rules.game import Variant
    from pipeline.simulate.simulation import SimulationConfig
    from pipeline.simulate.writer import write_simulation

    folder = tmp_path_factory.mktemp("proof")
    config = SimulationConfig(hands=3000, tables=2, players=3,
                              variants=(Variant.PINEAPPLE, Variant.CLASSIC), bots=PROOF_BOTS,
                              seed=11, pool_size=len(PROOF_BOTS))
    write_simulation(config, folder / "hands.jsonl")
    database = folder / "hands.duckdb"
    summary = ingest_paths([folder / "hands.jsonl"], database)
    assert summary.stored == 3000 and summary.rejected == 0
    switch = min(plan.start for plan in config.plan() if plan.progress >= 0.5)
    return Simulated(database, switch.replace(tzinfo=None))


@pytest.fixture(scope="session")
def mix_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Fixed-strategy bots whose games change: 1,200 hands of Classic in October, then 1,200
    of Pineapple from December (the same players, solid and chaser in turn)."""
    from pipeline.ingest.driver import ingest_paths
    from pipeline.rules.game import Variant
    from pipeline.simulate.simulation import SimulationConfig
    from pipeline.simulate.writer import write_simulation

    folder = tmp_path_factory.mktemp("mix")
    files = []
    for seed, variant, start in ((21, Variant.CLASSIC, datetime(2026, 10, 5, 19, tzinfo=UTC)),
                                 (22, Variant.PINEAPPLE, datetime(2026, 12, 1, 19, tzinfo=UTC))):
        config = SimulationConfig(hands=1200, tables=2, players=3, variants=(variant,),
                                  bots=("solid", "chaser"), seed=seed, start=start,
                                  pool_size=8)
        files.append(folder / f"{variant.value}.jsonl")
        write_simulation(config, files[-1])
    database = folder / "hands.duckdb"
    summary = ingest_paths(files, database)
    assert summary.stored == 2400 and summary.rejected == 0
    return database


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo database (``ofc demo``'s hands, built by the same function)."""
    from pipeline.ingest.demo import build_demo_database

    database = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    summary = build_demo_database(database)
    assert summary.stored == 3000
    return database
