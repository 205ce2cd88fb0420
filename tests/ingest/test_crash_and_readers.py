"""Batches commit atomically (SIGKILL mid-ingest, then re-run = uninterrupted run) and ingest
succeeds while another process keeps reading the database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pipeline.ingest.driver import ingest_paths
from tests.ingest.conftest import HAND_TABLES, REPO, count, deal_hand, table_rows, write_jsonl

BATCH = 25
OFC = [sys.executable, "-c", "import sys; from pipeline.cli import main; sys.exit(main())"]
HANDS = 200


def _history(path: Path) -> Path:
    """A file with valid hands over several tables and sessions, rejects, duplicates and a
    conflict spread over many batches."""
    lines: list[dict | str] = []
    for seed in range(HANDS):
        minutes = seed * 7 + (90 if seed > HANDS // 2 else 0)
        started = f"2026-11-0{1 + minutes // 1440}T{(minutes // 60) % 24:02d}:{minutes % 60:02d}:00Z"
        lines.append(deal_hand(seed, table=f"T{seed % 3}", started_at=started))
        if seed % 37 == 5:
            lines.append("{broken json")
        if seed % 53 == 7:
            lines.append(deal_hand(seed - 3, table=f"T{(seed - 3) % 3}", started_at=None))
        if seed % 61 == 9:
            lines.append(deal_hand(max(seed - 1, 0), table=f"T{(seed - 1) % 3}",
                                   started_at=lines[-2]["started_at"] if isinstance(lines[-2], dict) else None))
    return write_jsonl(path, lines)


_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {repo!r})
    from pipeline.ingest import driver as ingest, writer
    from pipeline import store
    mode, argument = sys.argv[1], int(sys.argv[2])
    calls = 0

    if mode == "mid-transaction":
        # Die after inserting some tables of batch N, before its commit.
        original = store.insert_frame
        def insert_then_die(*args, **kwargs):
            global calls
            original(*args, **kwargs)
            calls += 1
            if calls == argument:
                os.kill(os.getpid(), signal.SIGKILL)
        store.insert_frame = insert_then_die
    elif mode == "in-sessions":
        # Die after the sessions of the file were recomputed, before the file is recorded.
        original = writer.refresh_sessions
        def sessions_then_die(*args, **kwargs):
            original(*args, **kwargs)
            os.kill(os.getpid(), signal.SIGKILL)
        writer.refresh_sessions = sessions_then_die

    def report(batch):
        print("committed", batch.batch, flush=True)

    ingest.ingest_paths([sys.argv[3]], sys.argv[4], batch_size={batch}, on_batch=report)
    print("done", flush=True)
    """
)


def _run_child(tmp_path: Path, mode: str, argument: int, source: Path, database: Path,
               kill_after_lines: int | None = None) -> subprocess.CompletedProcess | int:
    script = tmp_path / "child.py"
    script.write_text(_CHILD.format(repo=str(REPO), batch=BATCH), encoding="utf-8")
    command = [sys.executable, str(script), mode, str(argument), str(source), str(database)]
    if kill_after_lines is None:
        return subprocess.run(command, capture_output=True, text=True, timeout=120)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    for _ in range(kill_after_lines):
        line = process.stdout.readline()
        assert line.startswith("committed"), line
    time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    process.stdout.close()
    return process.returncode


def _everything(database: Path) -> dict[str, list[tuple]]:
    tables = {table: table_rows(database, table) for table in HAND_TABLES}
    tables["rejects"] = table_rows(database, "rejects", exclude=("rejected_at", "resolved_at"))
    tables["files"] = [
        row for row in table_rows(database, "ingested_files", exclude=(
            "ingested_at", "records", "stored", "duplicates", "rejected"))
    ]
    return tables


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[tuple]]]:
    """The source file and the database an uninterrupted run gives."""
    folder = tmp_path_factory.mktemp("reference")
    source = _history(folder / "history.jsonl")
    database = folder / "reference.duckdb"
    summary = ingest_paths([source], database, batch_size=BATCH)
    assert summary.rejected > 0 and summary.duplicates > 0 and summary.stored > 0
    assert count(database, "rejects", "kind = 'conflict'") > 0
    assert count(database, "sessions") > 3
    return source, _everything(database)


@pytest.mark.parametrize(
    ("mode", "argument"),
    [
        ("mid-transaction", 8 * 3 + 2),  # inside the 4th batch: some tables written
        ("in-sessions", 0),
    ],
)
def test_sigkill_then_rerun_equals_an_uninterrupted_run(
    tmp_path: Path, reference: tuple[Path, dict], mode: str, argument: int
) -> None:
    source, expected = reference
    database = tmp_path / "killed.duckdb"

    killed = _run_child(tmp_path, mode, argument, source, database)

    assert killed.returncode == -signal.SIGKILL
    assert "done" not in killed.stdout
    if mode == "mid-transaction":
        # Exactly the batches reported as committed are there, nothing of the one killed.
        committed = killed.stdout.count("committed")
        assert committed == 3
        stored_keys = {row[0] for row in table_rows(database, "hands")}
        assert 0 < len(stored_keys) < len(expected["hands"])
        assert count(database, "seats") == sum(
            1 for row in expected["seats"] if row[0] in stored_keys
        )
    rerun = _run_child(tmp_path, "plain", 0, source, database)
    assert rerun.returncode == 0, rerun.stderr

    assert _everything(database) == expected


def test_external_sigkill_at_a_random_moment_then_rerun(
    tmp_path: Path, reference: tuple[Path, dict]
) -> None:
    source, expected = reference
    database = tmp_path / "killed.duckdb"

    returncode = _run_child(tmp_path, "plain", 0, source, database, kill_after_lines=5)

    assert returncode == -signal.SIGKILL
    assert 0 < count(database, "hands") < len(expected["hands"])
    rerun = _run_child(tmp_path, "plain", 0, source, database)
    assert rerun.returncode == 0, rerun.stderr
    assert _everything(database) == expected


_READER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    from pathlib import Path
    from pipeline.store import connect

    database, stop, out = sys.argv[1], Path(sys.argv[2]), open(sys.argv[3], "w")
    while not stop.exists():
        connection = connect(database, read_only=True, wait_seconds=60)
        hands = connection.execute("SELECT count(*) FROM hands").fetchall()[0][0]
        connection.close()
        out.write(f"{{hands}}\\n")
        out.flush()
        time.sleep(0.01)
    """
)


_WRITER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    from pipeline.ingest.driver import ingest_paths

    summary = ingest_paths([sys.argv[1]], sys.argv[2], batch_size=20,
                           on_batch=lambda batch: time.sleep(0.5))
    assert summary.stored == 200, summary
    """
)


def test_ingest_succeeds_while_another_process_reads(tmp_path: Path) -> None:
    database = tmp_path / "shared.duckdb"
    ingest_paths([write_jsonl(tmp_path / "seed.jsonl", [deal_hand(10_000)])], database)
    source = write_jsonl(tmp_path / "big.jsonl", [deal_hand(seed) for seed in range(200)])
    reader_script = tmp_path / "reader.py"
    reader_script.write_text(_READER.format(repo=str(REPO)), encoding="utf-8")
    stop = tmp_path / "stop"
    counts_file = tmp_path / "counts.txt"
    reader = subprocess.Popen(
        [sys.executable, str(reader_script), str(database), str(stop), str(counts_file)]
    )
    try:
        deadline = time.monotonic() + 30
        while not (counts_file.exists() and counts_file.read_text().strip()):
            assert time.monotonic() < deadline, "the reader never read"
            time.sleep(0.02)
        # The writer spends time between batches (as a real batch does while it parses and
        # scores) and lets go of the database every HOLD_SECONDS, when the reader gets in.
        writer = subprocess.run(
            [sys.executable, "-c", _WRITER.format(repo=str(REPO)), str(source), str(database)],
            capture_output=True, text=True, timeout=120, cwd=REPO,
        )
    finally:
        stop.touch()
        reader.wait(timeout=60)

    assert writer.returncode == 0, writer.stderr
    assert reader.returncode == 0
    assert count(database, "hands") == 201
    seen = [int(line) for line in counts_file.read_text().split()]
    assert seen == sorted(seen)  # each read saw a committed state, never a partial one
    assert any(1 < hands < 201 for hands in seen), "no read happened between two batches"
    assert all((hands - 1) % 20 == 0 for hands in seen)
