"""Worker processes parse canonical files for speed; the database is the sequential one."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from multiprocessing import forkserver
from pathlib import Path

from pipeline.cli.ingest import forks_workers
from pipeline.formats.source import read_raw_batches
from pipeline.ingest.defaults import PARALLEL_MIN_BYTES, WORKER_PRELOAD
from pipeline.ingest.driver import ingest_paths
from pipeline.ingest.lifetime import start_forkserver
from pipeline.ingest.workers import prepare_spilled, worker_pool
from pipeline.records.rules_file import RulesResolver
from tests.ingest.conftest import HAND_TABLES, REPO, count, deal_hand, table_rows


def test_parallel_ingest_gives_the_sequential_database(tmp_path: Path) -> None:
    lines: list[str] = []
    for seed in range(90):
        lines.append(json.dumps(deal_hand(seed, table=f"T{seed % 2}",
                                          started_at=f"2026-11-01T20:{seed % 60:02d}:00Z")))
        if seed % 17 == 3:
            lines.append("")  # blank lines are skipped, not rejected
            lines.append('{"hand_id": "bad", "players": [')
        if seed % 23 == 4:
            lines.append(json.dumps(deal_hand(seed - 2, table=f"T{(seed - 2) % 2}",
                                              started_at=f"2026-11-01T20:{(seed - 2) % 60:02d}:00Z")))
        if seed % 29 == 5:
            lines.append(json.dumps(deal_hand(seed - 1)))  # same key, other content
    source = tmp_path / "mixed.jsonl"
    source.write_bytes(
        "\n".join(lines).encode() + b"\n" + b'{"hand_id": "\xff"}\n' + lines[0].encode()[:99]
    )

    sequential = ingest_paths([source], tmp_path / "one.duckdb", batch_size=16, workers=1)
    parallel = ingest_paths([source], tmp_path / "two.duckdb", batch_size=16, workers=2)

    counts = [(s.records, s.stored, s.duplicates, s.rejected, s.reasons) for s in
              (sequential.files[0], parallel.files[0])]
    assert counts[0] == counts[1]
    assert sequential.stored == 90 and sequential.duplicates > 0 and sequential.rejected > 6
    for table in HAND_TABLES:
        assert table_rows(tmp_path / "one.duckdb", table) == table_rows(
            tmp_path / "two.duckdb", table), table
    assert table_rows(tmp_path / "one.duckdb", "rejects", exclude=("rejected_at", "resolved_at")) == table_rows(
        tmp_path / "two.duckdb", "rejects", exclude=("rejected_at", "resolved_at"))


def test_the_command_starts_the_workers_server_only_for_a_file_they_will_parse(
        tmp_path: Path) -> None:
    """``ofc ingest`` starts the workers' forkserver before its own heavy imports when a file
    given by name is large enough for workers: not for a small file, one worker, another
    format or a folder."""
    large = tmp_path / "large.jsonl"
    with large.open("wb") as handle:  # sparse: the size is what counts
        handle.truncate(PARALLEL_MIN_BYTES)
    small = tmp_path / "small.jsonl"
    small.write_text("{}\n")
    cores = os.cpu_count() or 1

    assert forks_workers([str(small), str(large)], None, None) == (cores > 1)
    assert forks_workers([str(large)], "canonical", None) == (cores > 1)
    assert forks_workers([str(small)], None, 2)  # workers asked for: any canonical file
    assert not forks_workers([str(small)], None, None)
    assert not forks_workers([str(large)], None, 1)
    assert not forks_workers([str(large)], "poker-arena", None)
    assert not forks_workers([str(tmp_path), str(tmp_path / "missing.jsonl")], None, 2)


def test_the_pool_forks_from_the_server_started_early() -> None:
    """Started early (:func:`start_forkserver`), the server is the one the pool's workers are
    forked from: the pool does not start another and wait for its imports."""
    assert WORKER_PRELOAD[0] == worker_pool.__module__  # the server imports the pool's module
    start_forkserver(WORKER_PRELOAD)
    server = forkserver._forkserver._forkserver_pid
    assert server is not None
    pool = worker_pool(2)
    try:
        parents = {pool.submit(os.getppid).result(timeout=60) for _ in range(4)}
    finally:
        pool.shutdown()
    assert parents == {server}
    assert forkserver._forkserver._forkserver_pid == server


EARLY_START = r"""
import sys
import pipeline.ingest.lifetime as lifetime
calls = []
started = lifetime.start_forkserver
def spy(preload):
    calls.append(("pipeline.ingest.driver" in sys.modules, "pyarrow" in sys.modules, preload))
    started(preload)
lifetime.start_forkserver = spy
from pipeline.cli import main
status = main(sys.argv[1:])
print(repr((status, calls)))
"""


def test_the_command_starts_the_server_before_its_heavy_imports(tmp_path: Path) -> None:
    """``ofc ingest`` with workers calls :func:`start_forkserver` (with the workers' module)
    before it has imported the ingest or pyarrow (the pool calls it again, finding the server
    running), and the ingest then stores every hand; with one worker nothing starts it."""
    source = tmp_path / "hands.jsonl"
    source.write_text("".join(json.dumps(deal_hand(seed)) + "\n" for seed in range(6)))
    runs = {}
    for workers in ("2", "1"):
        database = tmp_path / f"w{workers}.duckdb"
        done = subprocess.run(
            [sys.executable, "-c", EARLY_START, "ingest", str(source), "--db", str(database),
             "--workers", workers, "--quiet"],
            capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
        assert done.returncode == 0, done.stderr
        runs[workers] = ast.literal_eval(done.stdout.strip().splitlines()[-1])
        assert count(database, "hands") == 6
    status, calls = runs["2"]
    assert status == 0
    assert calls[0] == (False, False, WORKER_PRELOAD)  # the command's own call, first
    assert calls[1:] == [(True, True, WORKER_PRELOAD)]  # the pool's
    assert runs["1"] == (0, [])


PANDAS_FREE = """
import sys
from pipeline.ingest.driver import ingest_paths
summary = ingest_paths([sys.argv[1]], sys.argv[2], batch_size=16, workers=2)
print(repr((summary.stored, summary.rejected, "pandas" in sys.modules)))
"""


def test_the_writer_of_a_parallel_load_never_imports_pandas(tmp_path: Path) -> None:
    """pyarrow imports pandas on a process's first array (about 0.2 s): the writing process,
    which only inserts the workers' batches and works out sessions and aggregates in DuckDB,
    builds no array and never imports it (the workers tell pyarrow it is absent: the next
    test)."""
    source = tmp_path / "hands.jsonl"
    source.write_text("".join(
        json.dumps(deal_hand(seed, table=f"T{seed % 2}",
                             started_at=f"2026-11-01T20:{seed % 60:02d}:00Z")) + "\n"
        for seed in range(40)))
    done = subprocess.run(
        [sys.executable, "-c", PANDAS_FREE, str(source), str(tmp_path / "load.duckdb")],
        capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert ast.literal_eval(done.stdout.strip().splitlines()[-1]) == (40, 0, False)
    assert count(tmp_path / "load.duckdb", "sessions") > 0


def test_a_worker_builds_its_batch_without_pandas(tmp_path: Path) -> None:
    """A worker tells pyarrow pandas is absent before its first array (the server does not
    import pandas either): it prepares and spills a batch, and pandas is not imported in it."""
    source = tmp_path / "hands.jsonl"
    source.write_text("".join(json.dumps(deal_hand(seed)) + "\n" for seed in range(12)))
    batch = next(read_raw_batches(source, iter([100])))
    pool = worker_pool(1)
    try:
        prepared = pool.submit(prepare_spilled, str(source), batch, RulesResolver(),
                               str(tmp_path / "spill")).result(timeout=120)
        imported = pool.submit(eval, "'pandas' in __import__('sys').modules").result(timeout=60)
    finally:
        pool.shutdown()
    assert prepared.records == 12 and not prepared.rejects
    assert imported is False
