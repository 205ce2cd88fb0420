"""A build killed with SIGKILL midway, then run again, leaves the lake an uninterrupted build
leaves: the same rows in every table, no stray file in any table folder.

The build runs as a real ``ofc lake build`` process over six files of 500 hands, one commit
each (``--commit-mb 1``); the test kills it at two moments: while the first commit is being
staged (nothing committed yet) and right after a commit (the next one half-staged). Only the
``ingested_files`` rows of the re-run differ, as they do for ``ofc ingest``: the files the
killed run had committed are recorded again, as ``unchanged``.
"""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.lake.build import build_lake
from pipeline.lake.engine import LocalEngine
from pipeline.lake.storage import STAGING_NAME, Lake
from pipeline.lake.tables import LAKE_TABLES
from tests.lake.conftest import SAMPLES, lake_tables

REPO = Path(__file__).resolve().parents[2]
FILES = 6
HANDS_PER_FILE = 500


@pytest.fixture(scope="module")
def hand_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six plain canonical files of 500 demo hands each (about 1.5 MB: one commit each)."""
    folder = tmp_path_factory.mktemp("kill-input")
    with gzip.open(SAMPLES / "demo-hands.jsonl.gz", "rt", encoding="utf-8") as stream:
        lines = stream.readlines()
    for number in range(FILES):
        part = lines[number * HANDS_PER_FILE:(number + 1) * HANDS_PER_FILE]
        (folder / f"part-{number}.jsonl").write_text("".join(part), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def uninterrupted(hand_files: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lake an uninterrupted build gives."""
    lake = tmp_path_factory.mktemp("kill-reference") / "lake"
    summary = build_lake([hand_files], lake, LocalEngine(), commit_bytes=1 << 20)
    assert summary.commits == FILES
    return lake


def _build_command(hand_files: Path, lake: Path) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", "lake", "build", str(hand_files), "--lake",
            str(lake), "--commit-mb", "1", "--quiet"]


def _kill_when(command: list[str], condition: Callable[[], bool], seconds: float = 120) -> None:
    environment = dict(os.environ, PYTHONPATH=str(REPO))
    process = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + seconds
    try:
        while not condition():
            assert process.poll() is None, "the build ended before the moment to kill it"
            assert time.monotonic() < deadline, "the moment to kill the build never came"
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _stray_files(lake: Path) -> list[Path]:
    """Files in table folders that the manifest does not name."""
    store = Lake(lake)
    live = {path for table in LAKE_TABLES for path in store.files(table)}
    return [path for table in LAKE_TABLES for path in (lake / table).rglob("*")
            if path.is_file() and path not in live]


def _assert_like(reference: Path, lake: Path) -> None:
    expected, actual = lake_tables(reference), lake_tables(lake)
    for table in expected:
        if table == "ingested_files":
            # the re-run also records the files the killed run committed, as unchanged
            assert sorted(row for row in actual[table] if row[-1] != "unchanged") == \
                expected[table]
        else:
            assert actual[table] == expected[table], table
    assert _stray_files(lake) == []
    assert not (lake / STAGING_NAME).exists()


def _staging_has_frames(lake: Path) -> bool:
    try:
        return any((lake / STAGING_NAME).glob("*/frames/*/*.parquet"))
    except OSError:  # a staged folder was moved or removed during the look: look again
        return False


def test_killed_while_staging_the_first_commit(hand_files: Path, uninterrupted: Path,
                                               tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    _kill_when(_build_command(hand_files, lake), lambda: _staging_has_frames(lake))
    assert Lake(lake).manifest().version == 0  # nothing was committed
    build_lake([hand_files], lake, LocalEngine(), commit_bytes=1 << 20)
    _assert_like(uninterrupted, lake)


def test_killed_after_a_commit(hand_files: Path, uninterrupted: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"

    def committed_and_staging_the_next() -> bool:
        try:
            version = Lake(lake).manifest().version
        except Exception:  # noqa: BLE001 - the manifest is being replaced; look again
            return False
        return version >= 2 and _staging_has_frames(lake)

    _kill_when(_build_command(hand_files, lake), committed_and_staging_the_next)
    version = Lake(lake).manifest().version
    assert 2 <= version < FILES  # killed midway
    summary = build_lake([hand_files], lake, LocalEngine(), commit_bytes=1 << 20)
    assert [item.status for item in summary.files].count("unchanged") == version
    _assert_like(uninterrupted, lake)
