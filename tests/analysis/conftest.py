"""Fixtures for the grading tests: databases built through pipeline.ingest."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.analysis.hands import build_database, certain_hand, fantasyland_hand, simulated_records


@pytest.fixture(scope="session")
def certain_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Hand A: ann's last street fouls for sure; hand B: she plays it safe; hand F: Fantasyland."""
    folder = tmp_path_factory.mktemp("certain")
    return build_database(folder, [
        certain_hand("A", fouls=True, started_at="2026-11-01T20:00:00Z"),
        certain_hand("B", fouls=False, started_at="2026-11-01T20:05:00Z"),
        fantasyland_hand("F", started_at="2026-11-01T20:10:00Z"),
    ])


@pytest.fixture(scope="session")
def simulated_source() -> list[dict]:
    """Twelve pineapple hands played by the simulator's bots (three players)."""
    return simulated_records(12, seed=5)


@pytest.fixture()
def simulated_db(tmp_path: Path, simulated_source: list[dict]) -> Path:
    """A fresh database holding the simulated hands."""
    return build_database(tmp_path, simulated_source, name="simulated")
