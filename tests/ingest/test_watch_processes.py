"""``ofc watch`` as a real process beside a real writer process: the database ends as one
``ofc ingest`` of the final files, through mid-line pauses, a file replaced by a shorter one, and
a ``kill -9`` in the middle of a burst followed by a restart."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from pipeline import store
from tests.ingest.watch_data import arena_log, canonical_lines, database_contents

REPO = Path(__file__).resolve().parents[2]
OFC = (sys.executable, "-m", "pipeline.cli")
ENVIRONMENT = {**os.environ, "PYTHONPATH": str(REPO)}
SETTLE = 3.0


def start_watch(folder: Path, database: Path, *extra: str) -> subprocess.Popen:
    """``ofc watch FOLDER`` looking every 0.3 s (its output in a file beside the database)."""
    log = open(database.with_suffix(".log"), "ab")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [*OFC, "watch", str(folder), "--db", str(database), "--interval", "0.3",
         "--settle", str(SETTLE), "--idle", "8", *extra],
        stdout=log, stderr=subprocess.STDOUT, env=ENVIRONMENT, cwd=REPO,
    )


def start_writer(folder: Path, *extra: str) -> subprocess.Popen:
    """The writer process of :mod:`tests.ingest.watch_data`."""
    return subprocess.Popen([sys.executable, "-m", "tests.ingest.watch_data", str(folder),
                             *extra], env=ENVIRONMENT, cwd=REPO)


def stop(watch: subprocess.Popen, database: Path) -> str:
    """Ctrl-C: the watcher stops cleanly (exit 0, its last status printed)."""
    watch.send_signal(signal.SIGINT)
    assert watch.wait(timeout=60) == 0, database.with_suffix(".log").read_text()
    output = database.with_suffix(".log").read_text()
    assert "stopped: following" in output, output
    return output


def ask(database: Path, sql: str) -> list[tuple]:
    """A query on a short read-only connection (waits while the watcher writes)."""
    if not database.exists():
        return []
    try:
        connection = store.connect(database, read_only=True, wait_seconds=30)
    except duckdb.Error:
        return []
    try:
        return connection.execute(sql).fetchall()
    except duckdb.CatalogException:
        return []
    finally:
        connection.close()


def wait_for(condition: Callable[[], bool], seconds: float, what: str,
             watch: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        if watch is not None and watch.poll() is not None:
            raise AssertionError(f"the watcher exited while waiting for {what}")
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def recorded(database: Path, folder: Path) -> bool:
    """Every file of the folder has its ingested_files row for its bytes as they are now."""
    hashes = {row[0]: row[1] for row in ask(database,
                                            "SELECT path, content_hash FROM ingested_files")}
    files = [path for path in folder.rglob("*") if path.is_file()]
    return bool(files) and all(
        hashes.get(str(path.resolve())) == hashlib.sha256(path.read_bytes()).hexdigest()
        for path in files)


def ingest(folder: Path, database: Path) -> None:
    subprocess.run([*OFC, "ingest", str(folder), "--db", str(database), "--quiet"],
                   env=ENVIRONMENT, cwd=REPO, check=True, stdout=subprocess.DEVNULL)


def test_a_writer_at_random_moments_ends_as_one_ingest_of_the_final_files(
    tmp_path: Path,
) -> None:
    folder, database = tmp_path / "hands", tmp_path / "watched.duckdb"
    folder.mkdir()
    hold = tmp_path / "go"
    watch = start_watch(folder, database)
    try:
        writer = start_writer(folder, "--seed", "11", "--pause", "0.12", "--hold", str(hold))
        # halfway the writer waits: the watcher must have stored hands by then (however slow
        # the machine), and not all of them
        wait_for(lambda: hold.with_name("go.holding").exists() or writer.poll() is not None,
                 120, "the writer to reach its halfway point")
        assert writer.poll() is None, "the writer ended without holding"
        wait_for(lambda: bool(ask(database, "SELECT count(*) FROM hands")
                              and ask(database, "SELECT count(*) FROM hands")[0][0] > 0),
                 90, "hands stored while the files are half written", watch)
        seen_while_writing = ask(database, "SELECT count(*) FROM hands")[0][0]
        hold.touch()
        assert writer.wait(timeout=120) == 0
        wait_for(lambda: recorded(database, folder), 90, "every file recorded", watch)
    finally:
        if watch.poll() is None:
            stop(watch, database)
    reference = tmp_path / "ingested.duckdb"
    ingest(folder, reference)
    expected = database_contents(reference)
    assert database_contents(database) == expected
    # hands came in while the files were being written, not only at the end
    assert 0 < seen_while_writing < len(expected["hands"])
    assert len(expected["hands"]) > 30 and len(expected["rejects"]) >= 3


def test_kill_9_in_the_middle_of_a_burst_then_a_restart_loses_and_repeats_nothing(
    tmp_path: Path,
) -> None:
    folder, database = tmp_path / "hands", tmp_path / "watched.duckdb"
    folder.mkdir()
    watch = start_watch(folder, database)
    writer = start_writer(folder, "--seed", "12", "--pause", "0.5", "--burst", "1500")
    burst = str((folder / "burst.jsonl").resolve())
    try:
        wait_for(lambda: bool(ask(database, "SELECT 1 FROM file_offsets WHERE path = "
                                            f"'{burst}' AND bytes_read > 0")),
                 60, "part of the burst stored", watch)
        watch.send_signal(signal.SIGKILL)
        watch.wait(timeout=30)
        assert writer.poll() is None, "the burst was over before the kill"
        read_at_kill = ask(database, f"SELECT bytes_read FROM file_offsets WHERE path = '{burst}'")
        assert writer.wait(timeout=120) == 0
        assert 0 < read_at_kill[0][0] < (folder / "burst.jsonl").stat().st_size
        watch = start_watch(folder, database)
        wait_for(lambda: recorded(database, folder), 120, "every file recorded", watch)
    finally:
        if writer.poll() is None:
            writer.kill()
        if watch.poll() is None:
            stop(watch, database)
    reference = tmp_path / "ingested.duckdb"
    ingest(folder, reference)
    # identical tables, ingested_files counts included: a part read twice would count its
    # hands again as duplicates
    assert database_contents(database) == database_contents(reference)


def test_a_file_replaced_by_a_shorter_one_while_watched(tmp_path: Path) -> None:
    folder, database = tmp_path / "arena", tmp_path / "watched.duckdb"
    reference = tmp_path / "ingested.duckdb"  # ofc ingest of each version in turn
    folder.mkdir()
    path = folder / "ofc.jsonl"
    longer = arena_log()
    lines = longer.splitlines(keepends=True)
    headers = [index for index, line in enumerate(lines) if b'"seats"' in line]
    shorter = b"".join(lines[: headers[1]]) + b"".join(lines[headers[2]: headers[3]])
    watch = start_watch(folder, database)
    try:
        path.write_bytes(longer)
        ingest(folder, reference)
        wait_for(lambda: recorded(database, folder), 60, "the first version recorded", watch)
        (folder / ".ofc.jsonl.part").write_bytes(shorter)  # a sync tool's atomic replace
        os.replace(folder / ".ofc.jsonl.part", path)
        ingest(folder, reference)
        wait_for(lambda: recorded(database, folder), 60, "the second version recorded", watch)
    finally:
        if watch.poll() is None:
            output = stop(watch, database)
    assert "was replaced or cut: reading it again" in output
    watched, expected = database_contents(database), database_contents(reference)
    for table in expected:
        if table != "ingested_files":
            assert watched[table] == expected[table], table
    last_run = ask(reference, "SELECT * EXCLUDE (ingested_at) FROM ingested_files "
                              "ORDER BY ingested_at DESC LIMIT 1")
    assert watched["ingested_files"] == last_run  # the file as it is now: one row


def test_file_events_wake_the_watcher_between_its_looks(tmp_path: Path) -> None:
    """With a look only every minute, appended lines and a new file are stored within seconds:
    the watcher is woken by the file system's events (watchdog)."""
    folder, database = tmp_path / "hands", tmp_path / "watched.duckdb"
    folder.mkdir()
    (folder / "hands.jsonl").write_bytes(canonical_lines(21, 2, broken_at=None))
    log = open(database.with_suffix(".log"), "ab")  # noqa: SIM115 - closed with the process
    watch = subprocess.Popen(
        [*OFC, "watch", str(folder), "--db", str(database), "--interval", "60", "--settle",
         "60", "--idle", "120"], stdout=log, stderr=subprocess.STDOUT, env=ENVIRONMENT, cwd=REPO)
    hands = "SELECT count(*) FROM hands"
    try:
        wait_for(lambda: ask(database, hands) == [(2,)], 60, "the first look", watch)
        with open(folder / "hands.jsonl", "ab") as stream:
            stream.write(canonical_lines(22, 1, broken_at=None))
        wait_for(lambda: ask(database, hands) == [(3,)], 15, "the appended hand", watch)
        (folder / "sub").mkdir()
        (folder / "sub" / "new.jsonl").write_bytes(canonical_lines(23, 1, broken_at=None))
        wait_for(lambda: ask(database, hands) == [(4,)], 15, "the new file's hand", watch)
    finally:
        if watch.poll() is None:
            stop(watch, database)


def test_once_ingests_what_is_there_and_exits(tmp_path: Path) -> None:
    folder, database = tmp_path / "arena", tmp_path / "watched.duckdb"
    folder.mkdir()
    (folder / "ofc.jsonl").write_bytes(arena_log())
    old = time.time() - 3600  # written an hour ago: idle, read to its end
    os.utime(folder / "ofc.jsonl", (old, old))
    result = subprocess.run([*OFC, "watch", str(folder), "--db", str(database), "--once"],
                            env=ENVIRONMENT, cwd=REPO, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith("done: following 1 file · 4 hands stored")
    reference = tmp_path / "ingested.duckdb"
    ingest(folder, reference)
    assert database_contents(database) == database_contents(reference)


@pytest.mark.parametrize(("arguments", "code", "message"), [
    (["watch", "/no/such/folder"], 1, "no such file or folder"),
    (["watch", ".", "--interval", "0"], 2, "--interval"),
    (["watch", ".", "--variant", "omaha"], 2, "unknown poker-arena game"),
    (["watch", ".", "--format", "xml"], 2, "unknown --format"),
    (["watch", ".", "--session-gap", "-1"], 2, "--session-gap"),
])
def test_bad_arguments_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   arguments: list[str], code: int, message: str) -> None:
    from pipeline.cli import main

    assert main([*arguments, "--db", str(tmp_path / "x.duckdb")]) == code
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.duckdb").exists()


def test_the_command_defaults_are_the_watcher_defaults() -> None:
    from pipeline.cli import watch as command
    from pipeline.ingest import watch

    assert (command.DEFAULT_INTERVAL, command.DEFAULT_SETTLE, command.DEFAULT_IDLE) == (
        watch.DEFAULT_INTERVAL, watch.DEFAULT_SETTLE_SECONDS, watch.DEFAULT_IDLE_SECONDS)
    assert command.DEFAULT_DATABASE == store.DEFAULT_DATABASE
    from pipeline.cli import build_parser

    parsed = build_parser("watch").parse_args(["watch", "."])
    assert parsed.session_gap == watch.DEFAULT_SESSION_GAP_MINUTES
