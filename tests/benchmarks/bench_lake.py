"""Benchmark: a Parquet lake built on Spark (local[1], local[2]) against the single-process
``ofc ingest`` of the same file, in the same run.

Not a test. It writes (once, cached) a canonical JSON Lines file of random legal 3-player
Pineapple hands (bench_ingest.py's dealer), then runs each measurement in a fresh child process
and prints:

* the baseline: ``ofc ingest`` in one process (``workers=1``) into a fresh database: wall time,
  hands/s and CPU-µs per hand;
* ``ofc lake build --engine local`` on the same file (the in-process reference);
* the fixed overhead of Spark: starting the SparkSession (a JVM and its Python workers) and a
  build of a five-hand file (every step of a commit as Spark jobs, almost no data: the driver
  path of small commits is switched off here, ``driver_records=0``);
* ``ofc lake build --engine spark`` on ``local[1]`` and on ``local[2]``: wall time, hands/s,
  the marginal rate once the fixed overhead of a build is taken off, CPU-µs per hand of the whole
  process tree (driver, JVM, Python workers), and the scaling ratio local[2] / local[1];
* what 100 M and 1 B hands would cost on N executors, from the measured marginal CPU-µs per hand
  (linear scaling assumed: the local[2]/local[1] ratio says how far this machine bears it out).

    .venv/bin/python tests/benchmarks/bench_lake.py [--hands 100000] [--split-mb 8]

The machine has 2 cores, shared: the load average is printed with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ingest import TreeSampler, hands_file  # noqa: E402

SAMPLE = REPO / "sample_data" / "canonical-example.jsonl"


def _child(kind: str, path: Path, target: Path, master: str, split_mb: int) -> dict:
    """One measurement in this (fresh) process."""
    if kind == "ingest":
        from pipeline.ingest.driver import ingest_paths

        with TreeSampler() as sampler:
            started = time.perf_counter()
            summary = ingest_paths([path], target, workers=1)
            seconds = time.perf_counter() - started
        return {"hands": summary.stored, "seconds": seconds, "cpu": sampler.cpu_seconds}
    from pipeline.lake.build import build_lake

    if kind == "local":
        from pipeline.lake.engine import LocalEngine

        with TreeSampler() as sampler:
            started = time.perf_counter()
            summary = build_lake([path], target, LocalEngine(), split_bytes=split_mb << 20)
            seconds = time.perf_counter() - started
        return {"hands": summary.stored, "seconds": seconds, "cpu": sampler.cpu_seconds}
    from pipeline.lake.spark import SparkEngine, spark_session

    with TreeSampler() as sampler:
        started = time.perf_counter()
        session = spark_session(master)
        session.range(1).count()  # the Python side and the JVM both answer
        start_seconds = time.perf_counter() - started
        start_cpu = sampler.cpu_seconds
        # the bulk path throughout (a large commit's: every step a Spark job), also for the
        # five-hand builds; a small commit's driver path is bench_lake_append.py's to measure
        engine = SparkEngine(spark=session, driver_records=0)
        # a first five-hand build warms the JVM up (its code generation, its Python workers)
        started = time.perf_counter()
        build_lake([SAMPLE], target.with_name(target.name + "-warm-up"), engine)
        warm_up_seconds = time.perf_counter() - started
        before = sampler.cpu_seconds
        started = time.perf_counter()
        summary = build_lake([path], target, engine, split_bytes=split_mb << 20)
        seconds = time.perf_counter() - started
        cpu = sampler.cpu_seconds - before
        # the fixed overhead of a build: every step of a commit, with almost no data
        before = sampler.cpu_seconds
        started = time.perf_counter()
        small = build_lake([SAMPLE], target.with_name(target.name + "-small"), engine)
        small_seconds = time.perf_counter() - started
        small_cpu = sampler.cpu_seconds - before
    steps = {label: (stages, partitions, round(step_seconds, 1))
             for label, _jobs, stages, partitions, step_seconds in engine.stage_summary()}
    return {"hands": summary.stored, "seconds": seconds, "cpu": cpu,
            "start_seconds": start_seconds, "start_cpu": start_cpu,
            "warm_up_seconds": warm_up_seconds, "small_hands": small.stored, "small_seconds": small_seconds, "small_cpu": small_cpu,
            "steps": steps}


def _run(kind: str, path: Path, folder: Path, master: str = "", split_mb: int = 8) -> dict:
    target = folder / (f"{kind}-{master.replace('[', '').replace(']', '')}" if master else kind)
    if kind == "ingest":
        target = target.with_suffix(".duckdb")
    child = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path), str(target), master,
         str(split_mb)],
        capture_output=True, text=True, check=True, env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    figures = json.loads(child.stdout.strip().splitlines()[-1])
    figures["load_average"] = os.getloadavg()[0]
    return figures


def _dashboard_questions(database: Path, lake: Path, rounds: int = 3) -> None:
    """The dashboard's heaviest questions on the database and on the lake of the same hands
    (the lake read in place by DuckDB), median of ``rounds`` milliseconds each."""
    import statistics

    from pipeline import read
    from pipeline.read.lake import ParquetLake, player_summary_from_totals
    from pipeline.read.scope import EVERYTHING

    questions = {
        "open a connection": None,
        "player_kpis": lambda db: read.players.player_kpis(db, EVERYTHING),
        "overview_totals": lambda db: read.overview.overview_totals(db, EVERYTHING),
        "session_results": lambda db: read.sessions.session_results(db, EVERYTHING),
        "hand_list": lambda db: read.hands.hand_list(db, EVERYTHING),
        "cumulative_points": lambda db: read.players.cumulative_points(db, EVERYTHING),
        "ofc players (lake: player_totals)": None,
    }
    sources = {"database": read.source.DatabaseFile(database), "lake": ParquetLake(lake)}
    print("dashboard questions, median ms (database | lake read in place):")
    for name, question in questions.items():
        times = {}
        for label, source in sources.items():
            samples = []
            for _ in range(rounds):
                started = time.perf_counter()
                if name == "open a connection":
                    source.open().close()
                elif question is None:
                    connection = source.open()
                    if label == "lake":
                        player_summary_from_totals(connection)
                    else:
                        read.players.player_summary(connection)
                    connection.close()
                else:
                    connection = source.open()
                    question(connection)
                    connection.close()
                samples.append((time.perf_counter() - started) * 1000)
            times[label] = statistics.median(samples)
        print(f"  {name:36} {times['database']:8.0f} | {times['lake']:8.0f}", flush=True)


def _per_hand(figures: dict) -> float:
    return figures["cpu"] / figures["hands"] * 1e6


def main() -> None:
    """Run every measurement in a child process and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=100_000)
    parser.add_argument("--split-mb", type=int, default=8,
                        help="part size of the file: partitions of the Spark job")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "ofc-bench")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        kind, path, target, master, split_mb = arguments.child
        print(json.dumps(_child(kind, Path(path), Path(target), master, int(split_mb))))
        return
    path = hands_file(arguments.hands, arguments.cache)
    size_mb = path.stat().st_size / 1e6
    print(f"{arguments.hands:,} hands, {size_mb:,.0f} MB, parts of {arguments.split_mb} MB "
          f"({-(-int(size_mb) // arguments.split_mb)} partitions)", flush=True)
    folder = Path(tempfile.mkdtemp(prefix="ofc-bench-lake-"))
    try:
        results = {}
        for kind, master in (("ingest", ""), ("local", ""), ("spark", "local[1]"),
                             ("spark", "local[2]")):
            figures = _run(kind, path, folder, master, arguments.split_mb)
            results[f"{kind} {master}".strip()] = figures
            name = {"ingest": "ofc ingest, one process (baseline)",
                    "local": "lake build --engine local"}.get(kind, f"lake build on {master}")
            line = (f"{name:40} {figures['seconds']:7.1f} s  "
                    f"{figures['hands'] / figures['seconds']:8,.0f} hands/s  "
                    f"{_per_hand(figures):6.0f} CPU-µs/hand")
            if kind == "spark":
                marginal = figures["seconds"] - figures["small_seconds"]
                figures["marginal_rate"] = figures["hands"] / marginal if marginal > 0 else 0
                figures["marginal_cpu"] = (figures["cpu"] - figures["small_cpu"]) / (
                    figures["hands"] - figures["small_hands"]) * 1e6
                line += (f"  | start {figures['start_seconds']:.1f} s, five-hand build "
                         f"{figures['small_seconds']:.1f} s (first one "
                         f"{figures['warm_up_seconds']:.1f} s), marginal "
                         f"{figures['marginal_rate']:,.0f} hands/s, "
                         f"{figures['marginal_cpu']:.0f} CPU-µs/hand")
            print(f"{line}  (load {figures['load_average']:.1f})", flush=True)
        _dashboard_questions(folder / "ingest.duckdb", folder / "local")
        baseline = results["ingest"]
        one, two = results["spark local[1]"], results["spark local[2]"]
        marginal_ratio = (two["marginal_rate"] / one["marginal_rate"]
                          if one["marginal_rate"] else float("nan"))
        print(f"scaling local[2] / local[1]: "
              f"{two['hands'] / two['seconds'] / (one['hands'] / one['seconds']):.2f}× "
              f"(marginal rate {marginal_ratio:.2f}×)")
        print(f"CPU-µs per hand: ingest {_per_hand(baseline):.0f}, lake local "
              f"{_per_hand(results['local']):.0f}, Spark local[1] {_per_hand(one):.0f}, "
              f"local[2] {_per_hand(two):.0f} (Spark / ingest "
              f"{_per_hand(one) / _per_hand(baseline):.2f}×)")
        print(f"fixed overhead: Spark start {one['start_seconds']:.1f} s "
              f"({one['start_cpu']:.1f} CPU-s); a build of five hands {one['small_seconds']:.1f} s "
              f"on local[1], {two['small_seconds']:.1f} s on local[2]")
        print("Spark steps of the local[2] build (stages, partitions, seconds):")
        for label, (stages, partitions, seconds) in two["steps"].items():
            print(f"  {label:42} {stages:3} {partitions:5} {seconds:7.1f}")
        micro = min(one["marginal_cpu"], two["marginal_cpu"])
        print(f"on paper, at the marginal {micro:.0f} CPU-µs per hand (this machine's cores), "
              "plus the fixed overhead per commit:")
        for hands in (100_000_000, 1_000_000_000):
            core_hours = hands * micro / 1e6 / 3600
            spread = ", ".join(f"{executors} executors × 4 cores ≈ "
                               f"{core_hours / (executors * 4) * 60:,.0f} min"
                               for executors in (8, 32, 128))
            print(f"  {hands:>13,} hands: {core_hours:,.0f} core-hours; {spread}")
        print(json.dumps(results, indent=1))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
