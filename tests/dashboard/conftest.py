"""Fixtures for the dashboard tests: one database built through the real ingest path."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.ingest.driver import ingest_paths
from tests.dashboard.fixture_hands import Expected, expected_totals, write_fixture

APP = Path(__file__).parents[2] / "dashboard" / "app.py"


@pytest.fixture(scope="session")
def fixture_source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """The fixture hands as a JSON Lines file (47 good records, 2 bad lines)."""
    path = tmp_path_factory.mktemp("hands") / "fixture-hands.jsonl"
    return path, write_fixture(path)


@pytest.fixture(scope="session")
def fixture_db(tmp_path_factory: pytest.TempPathFactory, fixture_source) -> Path:  # noqa: ANN001
    """A database holding the fixture hands, ingested by pipeline.ingest."""
    database = tmp_path_factory.mktemp("db") / "fixture.duckdb"
    summary = ingest_paths([fixture_source[0]], database)
    assert summary.stored == len(fixture_source[1])
    assert summary.rejected == 2
    return database


@pytest.fixture(scope="session")
def expected(fixture_source) -> Expected:  # noqa: ANN001
    """Every number the pages should show, recomputed from the records."""
    return expected_totals(fixture_source[1])
