"""Shared helpers for the format reader tests: paths to the real poker-arena logs."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parents[2]


@pytest.fixture
def classic_log() -> Path:
    """The real Classic OFC poker-arena log (4 hands)."""
    return DATA / "ofc.jsonl"


@pytest.fixture
def pineapple_log() -> Path:
    """The real Pineapple poker-arena log (3 hands)."""
    return DATA / "ofc-pineapple.jsonl"


@pytest.fixture
def sample_boards() -> Path:
    """The hand-checked live boards CSV in sample_data/."""
    return REPO / "sample_data" / "live-boards.csv"
