"""Benchmark: what the aggregates buy (``ofc report`` at scale) and what they cost (ingest).

Not a test. Two measurements, each against a baseline measured in the same run:

* **``ofc report``** — wall time of the command as a user runs it (a fresh process:
  ``python -m pipeline.cli report p0 --db FILE --out FILE.html``) on the dashboard benchmark's
  database of ``--hands`` hands (:func:`bench_dashboard.build_database`, built once and reused),
  against the same command on a copy of that database without the aggregates (the meta key
  that vouches for them taken out, so every question takes the full pass over the boards,
  exactly as a database made before them is read). The two alternate; medians are printed.
* **ingest cost** — ``ingest_paths`` of ``--ingest-hands`` canonical pineapple hands (the file
  of ``bench_ingest.py``) into a fresh database, in a fresh process per run, with the
  aggregates kept (as shipped) against the same ingest with the writer's
  :func:`pipeline.ingest.aggregates.add_hands` replaced by a no-op (the baseline), alternating;
  then the one-off build of the aggregates of a database made before them
  (:func:`pipeline.ingest.aggregates.rebuild`) on the large database.

With ``--baseline-code DIR`` (the source tree of an earlier commit, e.g. ``git archive COMMIT |
tar -x -C DIR``) ``ofc report`` is also timed with that code on the same database, alternating,
and the two HTML files are compared byte for byte. With ``--bytecode`` the children keep their
compiled modules (in a temporary folder), as an installed package does; without it they run as
the environment says (with ``PYTHONDONTWRITEBYTECODE`` set, every module of the source tree is
compiled again at every start).

Run from the repository root::

    .venv/bin/python tests/benchmarks/bench_aggregates.py [--hands 1000000] [--db FILE]
        [--ingest-hands 100000] [--repeat 3] [--skip-report] [--skip-ingest]
        [--baseline-code DIR] [--bytecode]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dashboard import build_database  # noqa: E402
from bench_ingest import hands_file  # noqa: E402

from pipeline import read, store  # noqa: E402
from pipeline.ingest import aggregates  # noqa: E402
from pipeline.read.totals import aggregates_ready  # noqa: E402
from pipeline.store.aggregates import AGGREGATES_META_KEY  # noqa: E402

HERO = "p0"


def load_average() -> str:
    """The machine's load averages (1, 5, 15 minutes): the machine is shared."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def without_aggregates(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` with its aggregates emptied and not vouched for (a
    database as made before them: every question takes the full pass)."""
    shutil.copyfile(source, target)
    with store.open_database(target) as connection:
        connection.execute("DELETE FROM meta WHERE key = ?", [AGGREGATES_META_KEY])
        for table in store.AGGREGATE_TABLES:
            connection.execute(f"DELETE FROM {table}")
        connection.execute("CHECKPOINT")


BYTECODE_FOLDER: Path | None = None
"""With ``--bytecode``: where the children keep compiled modules (as an installed package has
them), instead of compiling every module of the source tree at every start."""


def child_environment(code: Path = REPO) -> dict[str, str]:
    """The environment of a child ``ofc`` run on the source tree ``code``."""
    environment = {**os.environ, "PYTHONPATH": str(code)}
    if BYTECODE_FOLDER is not None:
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
        environment["PYTHONPYCACHEPREFIX"] = str(BYTECODE_FOLDER / code.name)
    return environment


def report_seconds(database: Path, output: Path, code: Path = REPO) -> float:
    """Wall seconds of ``ofc report`` for :data:`HERO` in a fresh process (fails loudly), with
    the code of the source tree ``code`` (this one unless a baseline's is asked for)."""
    command = [sys.executable, "-m", "pipeline.cli", "report", HERO, "--db", str(database),
               "--out", str(output)]
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=code, env=child_environment(code),
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def report_run(database: Path, output: Path, code: Path = REPO) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one :func:`report_seconds` run: the child's CPU time
    (user and system, every thread) rises less than its wall time when other work shares
    the cores."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = report_seconds(database, output, code)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure_report(database: Path, repeat: int, baseline_code: Path | None = None) -> None:
    """``ofc report`` with the aggregates against the same database without them; with
    ``baseline_code`` (a source tree of an earlier commit) also against that code on the same
    database, all alternating."""
    with tempfile.TemporaryDirectory(prefix="bench-aggregates-") as folder:
        baseline_database = Path(folder) / "without-aggregates.duckdb"
        without_aggregates(database, baseline_database)
        with read.source.reading(baseline_database) as connection:
            assert not aggregates_ready(connection)
        with read.source.reading(database) as connection:
            assert aggregates_ready(connection)
        kept_html, full_html = Path(folder) / "kept.html", Path(folder) / "full.html"
        earlier_html = Path(folder) / "earlier.html"
        report_seconds(database, kept_html)  # warm the OS cache, as a second run would
        report_seconds(baseline_database, full_html)
        if baseline_code is not None:
            report_seconds(database, earlier_html, baseline_code)
        runs: dict[str, list[tuple[float, float]]] = {"kept": [], "full": [], "earlier": []}
        for _ in range(repeat):
            runs["kept"].append(report_run(database, kept_html))
            runs["full"].append(report_run(baseline_database, full_html))
            if baseline_code is not None:
                runs["earlier"].append(report_run(database, earlier_html, baseline_code))
        kept = [wall for wall, _ in runs["kept"]]
        full = [wall for wall, _ in runs["full"]]
        earlier = [wall for wall, _ in runs["earlier"]]
        cpu = {name: statistics.median(c for _, c in values) if values else 0.0
               for name, values in runs.items()}
        median, baseline = statistics.median(kept), statistics.median(full)
        same = _report_json(database) == _report_json(baseline_database)
        same_html = (kept_html.read_bytes() == earlier_html.read_bytes()
                     if baseline_code is not None else None)
    compiled = ("modules compiled once and kept (as installed)" if BYTECODE_FOLDER else
                "modules as the environment has them")
    print(f"ofc report {HERO} (HTML), median of {repeat}, alternating; {compiled}:")
    print(f"  {'with the aggregates':<44} {median:8.2f} s  (max {max(kept):.2f}; "
          f"CPU {cpu['kept']:.2f} s)")
    print(f"  {'baseline: same database without them':<44} {baseline:8.2f} s  "
          f"(max {max(full):.2f}; CPU {cpu['full']:.2f} s)")
    print(f"  ratio {baseline / median:.2f}× faster; goal <= 2 s: "
          f"{'met' if median <= 2.0 else 'NOT met'}; JSON reports identical: {same}")
    if baseline_code is not None:
        before = statistics.median(earlier)
        print(f"  {'baseline: code of ' + str(baseline_code):<44} {before:8.2f} s  "
              f"(max {max(earlier):.2f}; CPU {cpu['earlier']:.2f} s)")
        print(f"  ratio {before / median:.2f}× faster than that code (CPU "
              f"{cpu['earlier'] / cpu['kept']:.2f}×); HTML reports byte-identical: {same_html}")


def _report_json(database: Path) -> dict:
    """The JSON report of :data:`HERO`, for comparing."""
    command = [sys.executable, "-m", "pipeline.cli", "report", HERO, "--db", str(database),
               "--format", "json", "--out", "-"]
    done = subprocess.run(command, check=True, cwd=REPO, env=child_environment(),
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def _ingest_child(path: str, database: str, keep: bool) -> None:
    """In a fresh process: ingest ``path`` into ``database``, print the wall seconds (not CPU:
    the ingest's workers are not this process's children, so their CPU time is not seen)."""
    from pipeline.ingest import writer
    from pipeline.ingest.driver import ingest_paths

    if not keep:
        writer.add_hands = lambda connection, frames, skip=(): None
    started = time.perf_counter()
    summary = ingest_paths([Path(path)], Path(database))
    print(json.dumps({"seconds": time.perf_counter() - started, "stored": summary.stored}))


def ingest_run(path: Path, keep: bool) -> dict:
    """One ingest of ``path`` into a fresh database in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="bench-aggregates-") as folder:
        database = Path(folder) / "ingest.duckdb"
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(path), str(database), str(int(keep))],
            check=True, capture_output=True, text=True, cwd=REPO)
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        if keep:
            with read.source.reading(database) as connection:
                assert aggregates_ready(connection)
        return figures


def measure_ingest(size: int, repeat: int, large: Path | None) -> None:
    """Ingest with and without keeping the aggregates; then a full build on ``large``."""
    path = hands_file(size, Path(tempfile.gettempdir()) / "ofc-bench")
    runs: dict[bool, list[dict]] = {True: [], False: []}
    for _ in range(repeat):
        for keep in (False, True):
            runs[keep].append(ingest_run(path, keep))
    kept = statistics.median(run["seconds"] for run in runs[True])
    bare = statistics.median(run["seconds"] for run in runs[False])
    stored = runs[True][0]["stored"]
    print(f"ingest of {stored:,} pineapple hands into a fresh database, median of {repeat}, "
          f"alternating, a fresh process each:")
    print(f"  {'baseline: aggregates not kept':<44} {bare:8.2f} s  {stored / bare:9,.0f} hands/s")
    print(f"  {'aggregates kept (as shipped)':<44} {kept:8.2f} s  {stored / kept:9,.0f} hands/s")
    print(f"  cost: {kept / bare:.3f}× the wall time ({(kept - bare) / stored * 1e6:+.0f} µs "
          f"per hand)")
    if large is not None:
        with tempfile.TemporaryDirectory(prefix="bench-aggregates-") as folder:
            copy = Path(folder) / "rebuild.duckdb"
            shutil.copyfile(large, copy)
            with store.open_database(copy) as connection:
                hands = connection.sql("SELECT count(*) FROM hands").fetchall()[0][0]
                started = time.perf_counter()
                connection.execute("BEGIN TRANSACTION")
                aggregates.rebuild(connection)
                connection.execute("COMMIT")
                seconds = time.perf_counter() - started
        print(f"  one-off build of the aggregates of a {hands:,}-hand database made before "
              f"them: {seconds:.1f} s")


def main() -> None:
    """Parse the arguments, run the two measurements, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=1_000_000)
    parser.add_argument("--db", type=Path, default=Path("/tmp/ofc-bench-dashboard.duckdb"))
    parser.add_argument("--ingest-hands", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-report", action="store_true")
    parser.add_argument("--skip-ingest", action="store_true")
    parser.add_argument("--baseline-code", type=Path, metavar="DIR",
                        help="also time ofc report with the source tree DIR (an earlier "
                             "commit, e.g. from git archive) on the same database")
    parser.add_argument("--bytecode", action="store_true",
                        help="let the children keep compiled modules (as an installed package "
                             "does), in a temporary folder, instead of compiling the source "
                             "tree at every start (PYTHONDONTWRITEBYTECODE)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        path, database, keep = arguments.child
        _ingest_child(path, database, keep == "1")
        return
    existing = read.overview.database_status(arguments.db)
    if existing.hands != arguments.hands:
        started = time.perf_counter()
        build_database(arguments.db, arguments.hands)
        print(f"built {arguments.hands:,} hands in {time.perf_counter() - started:.1f} s")
    print(f"load average at start {load_average()} (2 cores, shared)")
    if not arguments.skip_report:
        global BYTECODE_FOLDER
        with tempfile.TemporaryDirectory(prefix="bench-bytecode-") as bytecode:
            BYTECODE_FOLDER = Path(bytecode) if arguments.bytecode else None
            measure_report(arguments.db, arguments.repeat, arguments.baseline_code)
            BYTECODE_FOLDER = None
    if not arguments.skip_ingest:
        measure_ingest(arguments.ingest_hands, arguments.repeat, arguments.db)
    print(f"load average at the end {load_average()}")


if __name__ == "__main__":
    main()
