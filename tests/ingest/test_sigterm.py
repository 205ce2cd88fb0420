"""SIGTERM (what ``timeout``, systemd and container runtimes send) stops ``ofc ingest`` and ``ofc
watch`` at once, wherever they are, and leaves the database consistent: running the command again
ends with the database an uninterrupted run writes (hardening round 2, item 5).

Before, ``ofc watch`` only asked itself to stop after the part it was storing, so while it was
stuck sampling a file (a .gz of blank lines) it ignored SIGTERM; and the sampling of such a file
read it up to five times.
"""

from __future__ import annotations

import gzip
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.ingest.test_watch_processes import ENVIRONMENT, OFC, REPO, ask
from tests.ingest.watch_data import canonical_lines, database_contents

TERMINATED = 128 + signal.SIGTERM


def _hands_folder(folder: Path, files: int = 2, hands: int = 1500) -> Path:
    folder.mkdir()
    old = time.time() - 3600  # quiet for an hour: ofc watch reads them whole and records them
    for index in range(files):
        path = folder / f"hands{index}.jsonl"
        path.write_bytes(canonical_lines(100 + index, hands, broken_at=None))
        os.utime(path, (old, old))
    return folder


def _run(*arguments: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*OFC, *arguments], capture_output=True, text=True, env=ENVIRONMENT,
                          cwd=REPO, timeout=timeout)


def _terminate_after(command: list[str], delay: float) -> tuple[int, str, float]:
    """Start ``ofc COMMAND``, send SIGTERM after ``delay`` seconds; (exit status, stderr,
    seconds from the signal to the exit)."""
    process = subprocess.Popen([*OFC, *command], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, env=ENVIRONMENT, cwd=REPO)
    time.sleep(delay)
    signalled = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        _, error = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"ofc {command[0]} ignored SIGTERM for 30 s") from None
    return process.returncode, error, time.monotonic() - signalled


def test_watch_stops_on_sigterm_beside_a_blank_line_bomb(tmp_path: Path) -> None:
    """A .gz of 40 million blank lines (39 KB): the old sampling read it for minutes, deaf to
    SIGTERM; now it is judged from its first 8 MiB and the watcher answers at once."""
    folder = tmp_path / "logs"
    folder.mkdir()
    with gzip.open(folder / "blank.jsonl.gz", "wb") as stream:
        block = b"\n" * (1 << 22)
        for _ in range(10):
            stream.write(block)
    database = tmp_path / "db.duckdb"
    status, error, seconds = _terminate_after(
        ["watch", str(folder), "--db", str(database), "--interval", "0.2"], delay=4.0)
    assert status == TERMINATED, error
    assert "stopped by SIGTERM" in error
    assert seconds < 10


@pytest.mark.parametrize(("command", "moment"), [
    ("ingest", 0.35), ("ingest", 0.8), ("watch", 0.35), ("watch", 0.8),
    ("watch", 1.6),  # after its first pass: the watcher waiting for more
])
def test_sigterm_at_any_point_keeps_the_database_consistent(
    tmp_path: Path, command: str, moment: float
) -> None:
    """SIGTERM at ``moment`` × the time an uninterrupted ``ofc ingest`` of the same files just
    took (so the signal comes while the command works on any machine; a fixed delay came after
    the end of a fast machine's ingest, and the test then checked nothing)."""
    _check_terminated_run(tmp_path, command, moment)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_sigterm_at_random_points(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    command = rng.choice(["ingest", "watch"])
    _check_terminated_run(tmp_path, command, rng.uniform(0.1, 1.0 if command == "ingest" else 1.6))


def _check_terminated_run(tmp_path: Path, command: str, moment: float) -> None:
    """``ofc COMMAND`` of two files of hands, SIGTERM at ``moment`` × the wall time of an
    uninterrupted ``ofc ingest`` of them; the database must then be consistent, and running the
    command again must give the uninterrupted database."""
    folder = _hands_folder(tmp_path / "hands")
    expected = tmp_path / "expected.duckdb"
    started = time.monotonic()
    assert _run("ingest", str(folder), "--db", str(expected), "--quiet").returncode == 0
    delay = moment * (time.monotonic() - started)

    database = tmp_path / "db.duckdb"
    arguments = [command, str(folder), "--db", str(database)]
    if command == "watch":
        arguments += ["--interval", "0.2"]
    status, error, seconds = _terminate_after(arguments, delay)
    if status == 0 and command == "ingest":  # it finished before the signal: nothing to see
        pytest.skip("the ingest ended before SIGTERM was sent")
    if status == -signal.SIGTERM:
        # ended by the signal itself: it came before ofc set its handler (Python still starting,
        # a loaded machine; the handler is set before anything is opened): nothing written; or
        # after ofc put the default handler back (the command done, the process exiting: on a
        # fast machine the ingest can end just then): everything written
        if database.exists():
            assert "Traceback" not in error
            assert _contents(database) == _contents(expected), error
        return
    assert status == TERMINATED, error
    assert "Traceback" not in error and "stopped by SIGTERM" in error
    assert seconds < 10, f"stopped {seconds:.1f} s after SIGTERM"
    # consistent: the database opens and holds whole hands only (each with its seats)
    stored = ask(database, "SELECT count(*) FROM hands")
    seats = ask(database, "SELECT count(DISTINCT hand_key) FROM seats")
    assert stored == seats or (not stored and not seats)

    again = _run(command, str(folder), "--db", str(database),
                 *(["--once"] if command == "watch" else []), "--quiet"
                 if command == "ingest" else "--interval=0.2")
    assert again.returncode == 0, again.stderr
    assert _contents(database) == _contents(expected)


def _contents(database: Path) -> dict[str, list[tuple]]:
    """The database's contents; a file's row in ingested_files counts its hands as stored or
    duplicates together (a second run finds the hands the first one stored as duplicates), and
    the rows of a second run that found a file read completely already (``unchanged``: SIGTERM
    came after the first run's last file) are left out."""
    contents = database_contents(database)
    contents["ingested_files"] = sorted((
        (path, digest, form, size, records, stored + duplicates, rejected, status)
        for path, digest, form, size, records, stored, duplicates, rejected, status, _message
        in contents["ingested_files"] if status != "unchanged"),
        key=repr)
    return contents
