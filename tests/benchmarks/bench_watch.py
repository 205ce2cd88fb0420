"""Benchmark: ``ofc watch`` following a growing file, against ``ofc ingest`` doing the same job.

Not a test. Simulates ``--hands`` pineapple hands as canonical JSON Lines, then measures, in one
run, on one machine:

* **catch-up**: the watcher reading the whole file (parts of 32 MiB or 20,000 lines, one transaction each) against
  one ``ofc ingest`` of it with one process (the baseline: the same validation, scoring and
  writes, in batches of 20,000);
* **following**: the file grows by ``--tick`` hands at a time, ``--ticks`` times. After each
  growth the watcher stores the new hands (one pass); the baseline is what one would do without
  it, ``ofc ingest`` of the grown file (its bytes changed, so it is read whole again: the
  earlier hands come back as duplicates). The time from the growth to the hands being committed
  is printed for both, and the ratio.

::

    .venv/bin/python tests/benchmarks/bench_watch.py [--hands 5000] [--tick 5] [--ticks 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from pipeline.ingest.driver import ingest_paths  # noqa: E402
from pipeline.ingest.watch import Watcher, WatchOptions  # noqa: E402
from pipeline.rules.game import Variant  # noqa: E402
from pipeline.simulate.simulation import SimulationConfig, simulate  # noqa: E402


def hand_lines(hands: int, seed: int) -> list[bytes]:
    """Simulated pineapple hands, one canonical line each."""
    config = SimulationConfig(hands=hands, seed=seed, variants=(Variant.PINEAPPLE,), players=3)
    lines: list[bytes] = []
    for output in simulate(config):
        lines.extend(output.lines.splitlines(keepends=True))
    return lines


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=5000)
    parser.add_argument("--tick", type=int, default=5, help="hands added at a time")
    parser.add_argument("--ticks", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-watch-"))
    lines = hand_lines(arguments.hands + arguments.tick * arguments.ticks, arguments.seed)
    first, later = lines[: arguments.hands], lines[arguments.hands:]
    for name in ("watched", "ingested"):
        (folder / name).mkdir()
        (folder / name / "hands.jsonl").write_bytes(b"".join(first))
    size = (folder / "watched" / "hands.jsonl").stat().st_size
    print(f"{arguments.hands:,} hands, {size / 1e6:.1f} MB of canonical JSON Lines")

    started = time.perf_counter()
    summary = ingest_paths([folder / "ingested"], folder / "ingested.duckdb", workers=1)
    baseline = time.perf_counter() - started
    assert summary.stored == arguments.hands
    watcher = Watcher([folder / "watched"], folder / "watched.duckdb",
                      WatchOptions(settle=1e9, idle=1e9))
    watcher.start()
    started = time.perf_counter()
    watcher.step()
    caught_up = time.perf_counter() - started
    assert watcher.status.new_hands == arguments.hands
    print(f"catch-up   ofc ingest (1 process, baseline) {baseline:6.2f} s "
          f"({arguments.hands / baseline:,.0f} hands/s) · ofc watch {caught_up:6.2f} s "
          f"({arguments.hands / caught_up:,.0f} hands/s) · ratio {baseline / caught_up:.2f}x")

    watch_times, ingest_times = [], []
    for tick in range(arguments.ticks):
        chunk = b"".join(later[tick * arguments.tick: (tick + 1) * arguments.tick])
        for name in ("watched", "ingested"):
            with open(folder / name / "hands.jsonl", "ab") as stream:
                stream.write(chunk)
        started = time.perf_counter()
        watcher.step()
        watch_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        ingest_paths([folder / "ingested"], folder / "ingested.duckdb", workers=1)
        ingest_times.append(time.perf_counter() - started)
    assert watcher.status.new_hands == arguments.hands + arguments.tick * arguments.ticks
    watch_median, ingest_median = statistics.median(watch_times), statistics.median(ingest_times)
    print(f"following  {arguments.tick} new hands at a time, {arguments.ticks} times, "
          f"{arguments.hands:,}+ hands in the file: ofc ingest of the grown file (baseline) "
          f"{ingest_median * 1000:,.0f} ms · ofc watch {watch_median * 1000:,.0f} ms "
          f"(median from growth to commit) · ratio {ingest_median / watch_median:.1f}x")


if __name__ == "__main__":
    main()
