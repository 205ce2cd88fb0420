"""Benchmark: ``ofc ingest`` against DuckDB's own load of the same file, same run.

Not a test: it prints figures. The fair baseline for ``ofc ingest`` is what a data engineer
would do with DuckDB alone: ``CREATE TABLE raw AS SELECT * FROM read_json(FILE)`` into a fresh
database file — no validation, no scoring, one nested table, every core DuckDB wants.

1. The file: ``ofc simulate --hands N`` (3-player pineapple at ``--tables`` tables, the default
   bots, ``--seed``), written once into ``--cache`` and reused (the same options always give the
   same bytes).
2. Each repeat runs, in fresh processes and alternating (so both see the same load):
   the baseline (``read_json`` into a new database file, its rows counted) and ``ofc ingest``
   into another new database file; with ``--other-tree DIR`` (say the code before a change:
   ``git archive COMMIT | tar -x -C DIR``) also ``ofc ingest`` from that tree's code.
3. It prints, per run and as the median by ratio: hands/s of each, the ratio ingest/read_json
   (the goal: at least 0.5× at 100k hands), wall and CPU seconds (all processes of the run),
   and peak memory: the largest sum of resident sizes over the run's process tree (sampled every
   0.2 s: the ingesting process and its workers) and the largest single process's
   (``getrusage``'s ``ru_maxrss`` of the children; goal: at most 2 GB).

Every child runs with its bytecode cached, as installed (``child_runs.py``)::

    nice -n 15 .venv/bin/python tests/benchmarks/bench_ingest_vs_read_json.py \
        [--hands 100000] [--repeats 3] [--other-tree DIR] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import TreeSampler  # noqa: E402
from child_runs import REPO, installed_environment  # noqa: E402

BASELINE_SCRIPT = """
import sys, duckdb
path, database = sys.argv[1], sys.argv[2]
connection = duckdb.connect(database)
connection.execute("CREATE TABLE raw AS SELECT * FROM read_json(?)", [path])
print(connection.execute("SELECT count(*) FROM raw").fetchone()[0])
connection.close()
"""
"""The baseline: DuckDB alone loads the file into one nested table (``read_json``: types and
nesting inferred, parallel over every core), and counts its rows."""


@dataclass(frozen=True, slots=True)
class Measured:
    """One child run: what it stored, wall and CPU seconds of its process tree, peak memory."""

    hands: int
    wall: float
    cpu: float
    tree_peak_mb: float
    process_peak_mb: float
    database_mb: float

    @property
    def rate(self) -> float:
        """Hands (or rows) per second of wall time."""
        return self.hands / self.wall


def simulated_file(hands: int, tables: int, seed: int, cache: Path, python: str) -> Path:
    """The simulator's file of ``hands`` hands (``ofc simulate``), made once in ``cache``."""
    path = cache / f"simulated-{hands}-t{tables}-s{seed}.jsonl"
    if path.exists():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    subprocess.run(
        [python, "-m", "pipeline.cli", "simulate", "--hands", str(hands), "--tables",
         str(tables), "--seed", str(seed), "--jobs", "0", "--quiet", "--out", str(path)],
        check=True, cwd=REPO, env=installed_environment(cache),
    )
    print(f"simulated {hands:,} hands into {path} ({path.stat().st_size / 1e6:,.0f} MB) in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return path


def measured_run(command: list[str], environment: dict[str, str], database: Path,
                 cwd: Path = REPO) -> tuple[Measured, str]:
    """Run ``command`` (it must succeed) while sampling its process tree's memory; its figures
    (``hands`` left 0 for the caller to fill in) and its standard output."""
    database.unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=environment, stdout=subprocess.PIPE,
                               text=True)
    with TreeSampler(process.pid) as sampler:
        output = process.stdout.read() if process.stdout is not None else ""
        _, status, usage = os.wait4(process.pid, 0)  # this child's own peak, not the run's
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed with status {process.returncode}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = max((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
              sum(sampler.child_cpu.values()))
    return Measured(0, wall, cpu, sampler.peak_mb, usage.ru_maxrss / 1024,
                    database.stat().st_size / 1e6), output


def baseline_run(path: Path, folder: Path, environment: dict[str, str]) -> Measured:
    """``read_json`` into a fresh database file: its rows and figures."""
    database = folder / "read_json.duckdb"
    figures, output = measured_run([sys.executable, "-c", BASELINE_SCRIPT, str(path),
                                    str(database)], environment, database, cwd=folder)
    rows = int(output.strip().splitlines()[-1])
    database.unlink()
    return Measured(rows, *[getattr(figures, name) for name in
                            ("wall", "cpu", "tree_peak_mb", "process_peak_mb", "database_mb")])


def ingest_run(path: Path, folder: Path, environment: dict[str, str], hands: int) -> Measured:
    """``ofc ingest`` into a fresh database file (with the code ``environment`` names): the
    hands it stored and its figures."""
    database = folder / "ingest.duckdb"
    figures, _ = measured_run([sys.executable, "-m", "pipeline.cli", "ingest", "--quiet",
                               "--db", str(database), str(path)], environment, database,
                              cwd=folder)
    import duckdb

    with duckdb.connect(str(database), read_only=True) as connection:
        stored = connection.execute("SELECT count(*) FROM hands").fetchone()[0]
    database.unlink()
    if stored != hands:
        raise SystemExit(f"ofc ingest stored {stored:,} hands of {hands:,}")
    return Measured(stored, *[getattr(figures, name) for name in
                              ("wall", "cpu", "tree_peak_mb", "process_peak_mb", "database_mb")])


def describe(label: str, run: Measured, baseline: Measured) -> str:
    """One line of the table: a run beside its baseline."""
    return (f"{label:34} {run.wall:8.2f} {run.rate:10,.0f} {run.rate / baseline.rate:7.2f}x "
            f"{run.cpu:7.1f} {run.cpu / run.hands * 1e6:8.0f} {run.tree_peak_mb:8,.0f} "
            f"{run.process_peak_mb:8,.0f} {run.database_mb:7,.0f}")


def main() -> None:
    """Simulate (once), then alternate baseline and ingest runs; print every run and the
    median by ratio."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "ofc-bench")
    parser.add_argument("--other-tree", type=lambda text: Path(text).resolve(), metavar="DIR",
                        help="also run ofc ingest with this source tree's code, alternating")
    arguments = parser.parse_args()
    environment = installed_environment(arguments.cache)
    path = simulated_file(arguments.hands, arguments.tables, arguments.seed, arguments.cache,
                          sys.executable)
    other_environment = None
    if arguments.other_tree is not None:
        other_environment = dict(environment, PYTHONPATH=str(arguments.other_tree),
                                 PYTHONPYCACHEPREFIX=str(arguments.cache / "pycache-other"))
    runs: list[tuple[Measured, Measured, Measured | None]] = []
    loads: list[float] = []
    header = (f"{'run':34} {'wall s':>8} {'hands/s':>10} {'vs base':>8} {'CPU s':>7} "
              f"{'CPU-µs/h':>8} {'tree MB':>8} {'proc MB':>8} {'db MB':>7}")
    print(f"{arguments.hands:,} simulated hands ({path.stat().st_size / 1e6:,.0f} MB), "
          f"{arguments.repeats} rounds alternating; peak memory: tree = the run's processes "
          f"summed (sampled), proc = the largest one (ru_maxrss)", flush=True)
    print(header, flush=True)
    with tempfile.TemporaryDirectory(prefix="ofc-bench-rj-") as name:
        folder = Path(name)
        for round_number in range(1, arguments.repeats + 1):
            loads.append(os.getloadavg()[0])
            baseline = baseline_run(path, folder, environment)
            if baseline.hands != arguments.hands:
                raise SystemExit(f"read_json loaded {baseline.hands:,} rows of "
                                 f"{arguments.hands:,}")
            ingest = ingest_run(path, folder, environment, arguments.hands)
            other = (ingest_run(path, folder, other_environment, arguments.hands)
                     if other_environment is not None else None)
            runs.append((baseline, ingest, other))
            print(describe(f"round {round_number}: read_json (baseline)", baseline, baseline))
            print(describe(f"round {round_number}: ofc ingest", ingest, baseline))
            if other is not None:
                print(describe(f"round {round_number}: ofc ingest, other tree", other, baseline))
            print(flush=True)
    ratios = [ingest.rate / baseline.rate for baseline, ingest, _ in runs]
    middle = sorted(range(len(runs)), key=ratios.__getitem__)[len(runs) // 2]
    baseline, ingest, other = runs[middle]
    summary = {
        "hands": arguments.hands, "file_mb": path.stat().st_size / 1e6,
        "ratios": ratios, "median_ratio": ratios[middle],
        "read_json_hands_per_second": baseline.rate, "ingest_hands_per_second": ingest.rate,
        "peak_tree_mb": max(run.tree_peak_mb for _, run, _ in runs),
        "peak_process_mb": max(run.process_peak_mb for _, run, _ in runs),
        "load_average": loads,
    }
    print(f"{arguments.hands:,} hands, median of {len(runs)} rounds by ratio: ofc ingest "
          f"{ingest.rate:,.0f} hands/s against read_json's {baseline.rate:,.0f} = "
          f"{ratios[middle]:.2f}x (rounds: {', '.join(f'{ratio:.2f}x' for ratio in ratios)}); "
          f"ingest's peak memory {summary['peak_tree_mb']:,.0f} MB over its processes "
          f"({summary['peak_process_mb']:,.0f} MB the largest one); load average at each round "
          f"{', '.join(f'{load:.1f}' for load in loads)} on {os.cpu_count()} CPUs")
    if other is not None:
        other_ratios = [run.rate / base.rate for base, _, run in runs if run is not None]
        summary["other_ratios"] = other_ratios
        print(f"the other tree ({arguments.other_tree}), same rounds: "
              f"{', '.join(f'{ratio:.2f}x' for ratio in other_ratios)} (median "
              f"{statistics.median(other_ratios):.2f}x); this tree / other, wall: "
              f"{', '.join(f'{run.wall / mine.wall:.2f}x' for _, mine, run in runs if run)}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
