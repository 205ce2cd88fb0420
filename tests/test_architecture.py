"""The house rules of the code, checked on every test run: the layer contract (import-linter,
configured in pyproject.toml and described in docs/architecture.md) and ruff."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def tool(name: str) -> str:
    """A console script of the running environment (the venv the tests run in)."""
    path = Path(sys.executable).parent / name
    found = str(path) if path.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return found


def test_the_layer_contract_holds() -> None:
    done = subprocess.run([tool("lint-imports"), "--no-cache"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_ruff_is_clean() -> None:
    done = subprocess.run([tool("ruff"), "check", "pipeline", "dashboard", "tests", "sample_data"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
