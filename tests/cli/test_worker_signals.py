"""A pool's workers end on SIGTERM whatever they were doing, under the ``ofc`` command's own
SIGTERM handler.

``ofc`` turns SIGTERM into an exception so a command stops cleanly; a worker forked from the
command inherited that handler, and code in the worker could catch the exception (DuckDB takes
it for an interrupted query) and go on. A pool that ends by sending its workers SIGTERM
(``terminate()``: the end of a ``with`` block, on an error or Ctrl-C) then waited for such a
worker forever: ``ofc analyze --jobs 2`` hung so once in the test suite. Each case runs in a
fresh process, so the handlers it installs are its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
from pipeline.cli import _raise_terminated
from pipeline.formats.source import forked_pool

def dispositions(_):
    return (signal.getsignal(signal.SIGTERM) is signal.SIG_DFL,
            signal.getsignal(signal.SIGINT) is signal.SIG_IGN)

def swallowing(_):
    # a task that takes any exception for an error of its own and goes on, as DuckDB may
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            time.sleep(0.02)
        except BaseException:
            pass

def remember(path):
    with open(path, "w") as stream:
        stream.write("started")

def finish_late(path):
    time.sleep(0.5)
    with open(path, "w") as stream:
        stream.write("finished")

if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _raise_terminated)  # as ofc's main does
    with forked_pool(2, remember, (sys.argv[2],)) as pool:
        print(pool.map(dispositions, range(4), chunksize=1))
        pool.apply_async(finish_late, (sys.argv[3],))  # not waited for here
    print(open(sys.argv[3]).read())  # a normal end lets the work finish (closed, not stopped)
    try:
        with forked_pool(2) as pool:
            running = [pool.apply_async(swallowing, (number,)) for number in range(2)]
            time.sleep(0.5)
            started = time.monotonic()
            raise RuntimeError("stopped")  # an error in the block: the workers are stopped
    except RuntimeError:
        pass
    print(f"ended in {time.monotonic() - started:.1f} s")
    print(signal.getsignal(signal.SIGTERM) is _raise_terminated)  # the parent's own is kept
"""


def test_a_pools_busy_workers_end_on_sigterm_under_the_commands_handler(tmp_path: Path) -> None:
    """Every worker of :func:`~pipeline.formats.source.forked_pool` has SIGTERM's default
    action and ignores SIGINT (left to the parent), and runs the pool's own initializer too;
    a block that ends normally closes the pool and its workers leave by themselves; a pool
    whose workers swallow every exception still ends at once when its block raises. Before, the workers kept the command's handler and the pool waited for them (here
    for two minutes: the run's timeout fails the test)."""
    marker, late = tmp_path / "initialized", tmp_path / "late"
    run = subprocess.run([sys.executable, "-c", PROBE, str(REPO), str(marker), str(late)],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == str([(True, True)] * 4)
    assert lines[1] == "finished"  # closed and joined: a stopped pool would have killed it
    seconds = float(lines[2].split()[2])
    assert seconds < 10, lines
    assert lines[3] == "True"
    assert marker.read_text() == "started"
