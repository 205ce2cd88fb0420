"""``kill -9`` of a parallel ingest leaves no process behind.

Before: the forkserver, the workers and the resource tracker (about 220 MB) stayed alive after
the ingesting process was killed, waiting for work forever. Now each worker ends itself when the
ingesting process dies, and the forkserver and the tracker follow.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ingest.conftest import deal_hand

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from pipeline.ingest.driver import ingest_paths
if __name__ == "__main__":
    ingest_paths([sys.argv[1]], sys.argv[2], workers=2, batch_size=40)
"""


def group_members(group: int) -> dict[int, int]:
    """Live processes of a process group: pid → parent pid (zombies are not alive)."""
    members = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
        state, parent, process_group = fields[0], int(fields[1]), int(fields[2])
        if process_group == group and state != "Z":
            members[int(entry.name)] = parent
    return members


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_killing_a_parallel_ingest_ends_its_workers_forkserver_and_tracker(tmp_path: Path) -> None:
    source = tmp_path / "hands.jsonl"
    with open(source, "w", encoding="utf-8") as stream:
        for seed in range(4000):
            stream.write(json.dumps(deal_hand(seed)) + "\n")
    script = tmp_path / "ingest.py"
    script.write_text(SCRIPT, encoding="utf-8")
    environment = dict(os.environ, PYTHONPATH=str(REPO))
    process = subprocess.Popen(
        [sys.executable, str(script), str(source), str(tmp_path / "hands.duckdb")],
        start_new_session=True, env=environment, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    group = process.pid  # a new session: its process group is its own pid
    try:
        deadline = time.monotonic() + 60
        while True:  # until the worker processes run (children of the forkserver)
            members = group_members(group)
            workers = [pid for pid, parent in members.items()
                       if parent not in (process.pid, 1) and pid != process.pid]
            if len(workers) >= 2:
                break
            assert process.poll() is None, "the ingest ended before its workers were seen"
            assert time.monotonic() < deadline, f"no workers started: {members}"
            time.sleep(0.05)
        helpers = set(members) - {process.pid}
        assert len(helpers) >= 4  # forkserver, resource tracker and the two workers
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        deadline = time.monotonic() + 15
        while group_members(group) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert group_members(group) == {}, "processes outlived the killed ingest"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)  # only this test's own processes
        process.wait()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_killing_ofc_score_ends_its_workers(tmp_path: Path) -> None:
    """``ofc score`` reading a pipe that stays open: its forked workers end with it."""
    lines = "".join(json.dumps(deal_hand(seed)) + "\n" for seed in range(300)) * 16
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "score", "-", "--jobs", "3"],  # two workers
        start_new_session=True, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)),
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    group = process.pid
    try:
        assert process.stdin is not None
        process.stdin.write(lines.encode())  # more than two blocks; the pipe stays open
        process.stdin.flush()
        deadline = time.monotonic() + 60
        while True:
            workers = [pid for pid, parent in group_members(group).items()
                       if parent == process.pid]
            if len(workers) >= 2:
                break
            assert process.poll() is None, "ofc score ended before its workers were seen"
            assert time.monotonic() < deadline, "no workers started"
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        deadline = time.monotonic() + 15
        while group_members(group) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert group_members(group) == {}, "workers outlived the killed ofc score"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)  # only this test's own processes
        with contextlib.suppress(OSError):
            process.stdin.close()
        process.wait()
