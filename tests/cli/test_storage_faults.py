"""A full disk and a read-only place, met by real commands (hardening round 2, items 6 and 7).

The faults are real: a small tmpfs mounted for the test (CI runs as root), filled by the command
itself, then grown so the same command can be run again; a read-only tmpfs with the database
file bind-mounted into it writable (DuckDB can open the file but not create its ``.wal`` beside
it). Where mounting is not allowed, the disk-full case is injected with ``RLIMIT_FSIZE`` (writes
past a size fail with ``EFBIG``) and the rest is skipped, saying why.

Each time: the command says what happened (no traceback) and exits 1; the database is
consistent (it opens, each stored hand whole; a rescore is all or nothing); running the command
again once there is room ends with what an undisturbed run writes. Before: tracebacks from
ingest, rescore, export and lake build; ``ofc watch --once`` printed "3,000 new" and exited 0
with nothing stored; ``ofc analyze`` on a database in a read-only folder did all its grading
work and crashed when storing it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.ingest.watch_data import canonical_lines, database_contents

REPO = Path(__file__).resolve().parents[2]
OFC = (sys.executable, "-m", "pipeline.cli")
ENVIRONMENT = {**os.environ, "PYTHONPATH": str(REPO)}


def ofc(*arguments: str, limit_bytes: int | None = None) -> subprocess.CompletedProcess:
    """Run ``ofc ARGUMENTS`` (with ``limit_bytes``: no file it writes may grow past that)."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run([*OFC, *arguments], capture_output=True, text=True, cwd=REPO,
                          env=ENVIRONMENT, timeout=600,
                          preexec_fn=limit if limit_bytes is not None else None)


@functools.cache
def can_mount() -> bool:
    """True when this process may mount a tmpfs (root, with the capability)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", folder],
                              capture_output=True)
        if done.returncode != 0:
            return False
        subprocess.run(["umount", folder], check=True)
    return True


needs_mount = pytest.mark.skipif(
    not can_mount(), reason="needs root and permission to mount a tmpfs (CI has both)")


class SmallDisk:
    """A tmpfs of a given size at ``folder``; :meth:`grow` gives it room."""

    def __init__(self, folder: Path, kilobytes: int) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kilobytes}k", "tmpfs",
                        str(folder)], check=True)

    def grow(self, megabytes: int = 256) -> None:
        subprocess.run(["mount", "-o", f"remount,size={megabytes}m", str(self.folder)],
                       check=True)

    def fill(self, leave_kilobytes: int) -> None:
        """Take all but ``leave_kilobytes`` of the free room."""
        free = shutil.disk_usage(self.folder).free
        (self.folder / "filler").write_bytes(b"\0" * max(0, free - leave_kilobytes * 1024))

    def unmount(self) -> None:
        for _ in range(20):
            if subprocess.run(["umount", str(self.folder)], capture_output=True).returncode == 0:
                return
            time.sleep(0.2)


@contextlib.contextmanager
def small_disk(folder: Path, kilobytes: int) -> Iterator[SmallDisk]:
    disk = SmallDisk(folder, kilobytes)
    try:
        yield disk
    finally:
        disk.unmount()


@pytest.fixture(scope="module")
def hands(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("faults") / "hands"
    folder.mkdir()
    for index in range(2):
        path = folder / f"hands{index}.jsonl"
        path.write_bytes(canonical_lines(300 + index, 1000, broken_at=None))
        old = time.time() - 3600  # quiet for an hour: ofc watch reads them to their end
        os.utime(path, (old, old))
    return folder


@pytest.fixture(scope="module")
def reference(hands: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What an undisturbed ``ofc ingest`` of the hands writes."""
    database = tmp_path_factory.mktemp("reference") / "reference.duckdb"
    assert ofc("ingest", str(hands), "--db", str(database), "--quiet").returncode == 0
    return database


def said_the_disk_is_full(result: subprocess.CompletedProcess, command: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    assert f"ofc {command}: the disk is full" in result.stderr, result.stderr
    assert "run the command again" in result.stderr


def whole_hands_only(database: Path) -> int:
    """The database opens, and every stored hand has its seats and results: the count."""
    connection = duckdb.connect(str(database), read_only=True)
    try:
        hands, seated, scored = connection.execute(
            "SELECT (SELECT count(*) FROM hands), (SELECT count(DISTINCT hand_key) FROM seats), "
            "(SELECT count(DISTINCT hand_key) FROM results)").fetchall()[0]
    finally:
        connection.close()
    assert hands == seated == scored
    return hands


# --- a full disk -----------------------------------------------------------------------------


@needs_mount
@pytest.mark.parametrize("command", ["ingest", "watch"])
def test_a_full_disk_while_storing_hands(command: str, hands: Path, reference: Path,
                                         tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", 3 * 1024) as disk:
        database = disk.folder / "hands.duckdb"
        extra = ["--once"] if command == "watch" else ["--quiet"]
        failed = ofc(command, str(hands), "--db", str(database), *extra)
        if command == "ingest":
            said_the_disk_is_full(failed, command)
        else:  # the status says so, and the exit status
            assert failed.returncode == 1, failed.stdout + failed.stderr
            assert "NOT stored (read again next time)" in failed.stdout
            assert "could not be stored" in failed.stderr
            assert "Traceback" not in failed.stdout + failed.stderr
            assert " 0 new" in failed.stdout.splitlines()[-1]  # before: "2,000 new"
        assert whole_hands_only(database) < 2000
        disk.grow()
        again = ofc(command, str(hands), "--db", str(database), *extra)
        assert again.returncode == 0, again.stderr
        assert database_contents(database) == database_contents(reference)


def test_a_full_disk_injected_with_a_file_size_limit(hands: Path, reference: Path,
                                                     tmp_path: Path) -> None:
    """The same without mounting: no file may grow past 2 MB (EFBIG, "File too large")."""
    database = tmp_path / "hands.duckdb"
    failed = ofc("ingest", str(hands), "--db", str(database), "--quiet",
                 limit_bytes=2 << 20)
    said_the_disk_is_full(failed, "ingest")
    assert whole_hands_only(database) < 2000
    again = ofc("ingest", str(hands), "--db", str(database), "--quiet")
    assert again.returncode == 0, again.stderr
    assert database_contents(database) == database_contents(reference)


@needs_mount
def test_a_full_disk_during_rescore_leaves_the_old_scores(reference: Path,
                                                          tmp_path: Path) -> None:
    expected = tmp_path / "expected.duckdb"
    shutil.copy(reference, expected)
    assert ofc("rescore", "--rules", "flat-trips", "--db", str(expected),
               "--quiet").returncode == 0
    with small_disk(tmp_path / "disk", reference.stat().st_size // 1024 + 600) as disk:
        database = disk.folder / "hands.duckdb"
        shutil.copy(reference, database)
        disk.fill(leave_kilobytes=150)
        failed = ofc("rescore", "--rules", "flat-trips", "--db", str(database), "--quiet")
        said_the_disk_is_full(failed, "rescore")
        assert database_contents(database) == database_contents(reference)  # all or nothing
        disk.grow()
        again = ofc("rescore", "--rules", "flat-trips", "--db", str(database), "--quiet")
        assert again.returncode == 0, again.stderr
        assert database_contents(database) == database_contents(expected)


def _exported(folder: Path) -> dict[str, list[tuple]]:
    connection = duckdb.connect()
    try:
        return {path.name: sorted(connection.execute(
            "SELECT * FROM read_parquet(?, hive_partitioning = true)",
            [str(path / "**" / "*.parquet") if path.is_dir() else str(path)]).fetchall(),
            key=repr)
            for path in sorted(folder.iterdir()) if not path.name.startswith(".")}
    finally:
        connection.close()


@needs_mount
@pytest.mark.parametrize("command", ["export", "lake"])
def test_a_full_disk_while_exporting(command: str, hands: Path, reference: Path,
                                     tmp_path: Path) -> None:
    def run(target: Path) -> subprocess.CompletedProcess:
        if command == "export":
            return ofc("export", "--parquet", str(target), "--db", str(reference))
        return ofc("lake", "build", str(hands), "--lake", str(target))

    expected = tmp_path / "expected"
    assert run(expected).returncode == 0
    with small_disk(tmp_path / "disk", 600) as disk:
        target = disk.folder / "out"
        failed = run(target)
        said_the_disk_is_full(failed, command)
        disk.grow()
        again = run(target)
        assert again.returncode == 0, again.stderr
        if command == "export":
            assert _exported(target) == _exported(expected)
        else:
            players = [ofc("players", "--lake", str(folder), "--format", "csv").stdout
                       for folder in (target, expected)]
            assert players[0] == players[1] and players[0].count("\n") > 3


# --- a read-only place -----------------------------------------------------------------------


@contextlib.contextmanager
def read_only_folder(tmp_path: Path, database: Path) -> Iterator[Path]:
    """The database, writable, in a folder that is not: returns its path there."""
    if can_mount():
        folder = tmp_path / "read-only"
        folder.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
                       check=True)
        inside = folder / database.name
        inside.touch()
        subprocess.run(["mount", "--bind", str(database), str(inside)], check=True)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        try:
            yield inside
        finally:
            subprocess.run(["umount", str(inside)], check=True)
            subprocess.run(["umount", str(folder)], check=True)
    elif os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        inside = folder / database.name
        shutil.copy(database, inside)
        folder.chmod(0o555)
        try:
            yield inside
        finally:
            folder.chmod(0o755)
    else:
        pytest.skip("root without permission to mount: no folder can be made read-only")


@pytest.mark.parametrize("command", [
    ["ingest", "{hands}"], ["rescore", "--rules", "flat-trips"],
    ["watch", "{hands}", "--once"],
    ["analyze", "--hands", "400", "--rollouts", "64", "--quiet"],
])
def test_a_database_in_a_read_only_folder_is_refused_before_any_work(
    command: list[str], hands: Path, reference: Path, tmp_path: Path
) -> None:
    database = tmp_path / "hands.duckdb"
    shutil.copy(reference, database)
    before = database_contents(database)
    arguments = [part.replace("{hands}", str(hands)) for part in command]
    with read_only_folder(tmp_path, database) as inside:
        started = time.monotonic()
        result = ofc(*arguments, "--db", str(inside))
        seconds = time.monotonic() - started
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    assert f"ofc {command[0]}: cannot write {inside}.wal: the place is read-only" in result.stderr
    assert "graded" not in result.stdout  # nothing was worked on
    assert seconds < 60, seconds
    assert database_contents(database) == before
