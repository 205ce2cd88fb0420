"""Fixtures for the coaching-report tests: the hand-made hands, ingested by pipeline.ingest."""

from __future__ import annotations

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
