"""Benchmark: a day's append to a Parquet lake, against what the engine costs anyway, same run.

Not a test: it prints figures. A data team appends every day; an append should cost what is new,
not what the lake already holds. It writes (once, cached under ``--cache``) a canonical JSON
Lines file of ``--lake-hands`` random pineapple hands (bench_ingest.py's dealer: 20 tables, nine
players, a hand every 2.5 s) and the next ``--new-hands`` hands of the same tables and players
(the following minutes: they extend the stored sessions, as a daily append does); it builds the
lake of the first file once with the local engine (cached: say how long it took) and then
times, in fresh processes, R rounds alternating:

* the **Spark baseline**: a bare SparkSession on ``--master`` (``local[2]``): start, one query
  (``spark.range(1).count()``), stop;
* ``ofc lake build NEW --engine spark --master local[2]`` into an **empty** lake and into a
  hard-linked copy of the **big** lake (the build only adds files and replaces the manifest, so
  the cached lake stays as it was);
* the same with ``--engine local``: the local engine's baseline is its own append into an empty
  lake;
* ``ofc ingest NEW --db`` into an empty database and into a copy of a database of the first
  file's hands (made once with ``ofc ingest``, cached; the copy is not timed): its baseline is
  its own empty-database append.

A commit of at most 50,000 records runs its units on Spark and its statements in the driver
(DuckDB; ``--driver-records``), so a 1,000-hand append takes that path; with ``--spark-sql``
the bench also times the same appends with every statement in Spark SQL (``--driver-records
0``: the path a large commit takes).

With each Spark append it prints the Spark jobs it ran (``ofc lake build`` counts them from
Spark's status tracker: Spark's fixed cost is per job, so that count is what an append's
overhead is made of).

Each ``ofc lake build`` runs as the command a user runs (a fresh process, start-up included).
It prints wall seconds, the ratio to the baseline of the same round, the peak resident memory of
the process tree (JVM and Python workers included) and the load average, then checks that the
big lake holds every hand once::

    .venv/bin/python tests/benchmarks/bench_lake_append.py [--lake-hands 1000000]
        [--new-hands 1000] [--rounds 2] [--engines spark,local,ingest] [--spark-sql]

Targets (issue 33): Spark into an empty lake within 2x the bare session, into 1 M hands within
2.5x; the local engine into 1 M within 2.5x its empty-lake append; ``ofc ingest`` is held to
the local engine's (into 1 M within 2.5x its empty-database append).
"""

from __future__ import annotations

import argparse
import json
import os
import re
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

from bench_ingest import TreeSampler, deal_record, hands_file  # noqa: E402

BARE_SPARK = """
import sys, time
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master(sys.argv[1]).appName("bare")
         .config("spark.ui.enabled", "false").getOrCreate())
spark.range(1).count()
spark.stop()
"""


def new_hands_file(lake_hands: int, new_hands: int, cache: Path) -> Path:
    """The ``new_hands`` hands dealt after the lake's (cached)."""
    path = cache / f"pineapple-{new_hands}-after-{lake_hands}.jsonl"
    if not path.exists():
        with open(f"{path}.tmp", "w", encoding="utf-8") as stream:
            for number in range(lake_hands, lake_hands + new_hands):
                stream.write(json.dumps(deal_record(number), separators=(",", ":")) + "\n")
        os.replace(f"{path}.tmp", path)
    return path


def big_lake(lake_hands: int, cache: Path) -> Path:
    """The lake of the first ``lake_hands`` hands, built once with the local engine (cached)."""
    folder = cache / f"lake-{lake_hands}"
    if (folder / "_lake.json").exists():
        if _current_layout(folder):
            return folder
        print(f"the cached lake {folder} has other columns than this checkout's tables: "
              "built again", file=sys.stderr, flush=True)
    source = hands_file(lake_hands, cache)
    shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()
    with TreeSampler() as sampler:
        subprocess.run([sys.executable, "-m", "pipeline.cli", "lake", "build", str(source),
                        "--lake", str(folder), "--quiet"], check=True,
                       env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.DEVNULL)
    print(f"built the {lake_hands:,}-hand lake once with the local engine in "
          f"{time.perf_counter() - started:,.0f} s (peak {sampler.peak_mb / 1024:.2f} GB); "
          f"cached at {folder}", file=sys.stderr, flush=True)
    return folder


def _current_layout(folder: Path) -> bool:
    """Whether every table of the lake at ``folder`` has the columns this checkout writes (a
    lake cached by an older checkout may not: the local engine then refuses to read it)."""
    import pyarrow.parquet as pq

    from pipeline.lake.tables import file_schema

    manifest = json.loads((folder / "_lake.json").read_text(encoding="utf-8"))
    for table, files in manifest["tables"].items():
        if files and pq.read_schema(folder / files[0]).names != file_schema(table).names:
            return False
    return True


def big_database(lake_hands: int, cache: Path) -> Path:
    """A DuckDB database of the first ``lake_hands`` hands, made once by ``ofc ingest``
    (cached; delete it to make it again, e.g. after a schema change)."""
    path = cache / f"database-{lake_hands}.duckdb"
    if path.exists():
        return path
    source = hands_file(lake_hands, cache)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pipeline.cli", "ingest", str(source), "--db",
                    f"{path}.tmp", "--quiet"], check=True,
                   env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.DEVNULL)
    os.replace(f"{path}.tmp", path)
    print(f"made the {lake_hands:,}-hand database once with ofc ingest in "
          f"{time.perf_counter() - started:,.0f} s; cached at {path}", file=sys.stderr,
          flush=True)
    return path


def ingest(new: Path, database: Path) -> dict:
    """``ofc ingest NEW --db DATABASE``, timed."""
    return timed([sys.executable, "-m", "pipeline.cli", "ingest", str(new), "--db",
                  str(database), "--quiet"])


def database_hands(database: Path) -> int:
    """Hands the database holds."""
    import duckdb

    with duckdb.connect(str(database), read_only=True) as connection:
        return connection.execute("SELECT count(*) FROM hands").fetchall()[0][0]


def linked_copy(source: Path, target: Path) -> Path:
    """A copy of a lake whose files are hard links (an append adds files, never edits one)."""
    shutil.copytree(source, target, copy_function=os.link)
    return target


def timed(command: list[str]) -> dict:
    """Run a command; its wall seconds, the tree's peak memory and the load average."""
    load = os.getloadavg()[0]
    started = time.perf_counter()
    with TreeSampler() as sampler:
        completed = subprocess.run(command, capture_output=True, text=True,
                                   env=dict(os.environ, PYTHONPATH=str(REPO)))
    seconds = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{completed.stdout}\n{completed.stderr}")
    jobs = re.search(r"Spark jobs: (\d+)", completed.stdout)
    return {"seconds": seconds, "peak_gb": sampler.peak_mb / 1024,
            "load": (load + os.getloadavg()[0]) / 2,
            "jobs": int(jobs.group(1)) if jobs else None}


def build(engine: str, master: str, new: Path, lake: Path, spark_sql: bool = False) -> dict:
    """``ofc lake build NEW --lake LAKE`` on ``engine``, timed; ``spark_sql``: with every
    statement in Spark SQL (``--driver-records 0``, the path of a large commit)."""
    command = [sys.executable, "-m", "pipeline.cli", "lake", "build", str(new), "--lake",
               str(lake), "--engine", engine, "--quiet"]
    if engine == "spark":
        command += ["--master", master]
    if spark_sql:
        command += ["--driver-records", "0"]
    return timed(command)


def stored_hands(lake: Path) -> int:
    """Hands the lake holds (and that no hand key is there twice)."""
    import duckdb

    manifest = json.loads((lake / "_lake.json").read_text(encoding="utf-8"))
    files = [str(lake / relative) for relative in manifest["tables"]["hands"]]
    count, distinct = duckdb.sql(
        f"SELECT count(*), count(DISTINCT hand_key) FROM read_parquet({files!r})").fetchall()[0]
    assert count == distinct, "a hand is stored twice"
    return count


def _jobs(values: list[dict]) -> str:
    """The Spark jobs of each round's run (``ofc lake build`` prints them), or ``-``."""
    jobs = [value["jobs"] for value in values]
    return " / ".join(str(count) for count in jobs) if any(jobs) else "-"


def main() -> None:
    """Prepare the cached inputs, then time every path, round after round."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lake-hands", type=int, default=1_000_000)
    parser.add_argument("--new-hands", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--engines", default="spark,local,ingest",
                        help="of spark, local (lake builds) and ingest (ofc ingest into a "
                             "DuckDB database)")
    parser.add_argument("--spark-sql", action="store_true",
                        help="also time Spark with every statement in Spark SQL "
                             "(--driver-records 0: the path of a large commit)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "ofc-bench")
    arguments = parser.parse_args()
    engines = arguments.engines.split(",")
    arguments.cache.mkdir(parents=True, exist_ok=True)
    new = new_hands_file(arguments.lake_hands, arguments.new_hands, arguments.cache)
    lake = (big_lake(arguments.lake_hands, arguments.cache)
            if {"spark", "local"} & set(engines) else None)
    database = (big_database(arguments.lake_hands, arguments.cache)
                if "ingest" in engines else None)
    big = f"{arguments.lake_hands:,}"
    rows: dict[str, list[dict]] = {}
    folder = Path(tempfile.mkdtemp(prefix="ofc-bench-append-"))
    try:
        for round_number in range(arguments.rounds):
            figures: dict[str, dict] = {}
            if "spark" in engines:
                figures["bare"] = timed([sys.executable, "-c", BARE_SPARK, arguments.master])
                figures["spark empty"] = build("spark", arguments.master, new,
                                               folder / f"spark-empty-{round_number}")
                target = linked_copy(lake, folder / f"spark-big-{round_number}")
                figures["spark big"] = build("spark", arguments.master, new, target)
                assert stored_hands(target) == arguments.lake_hands + arguments.new_hands
                shutil.rmtree(target)
                if arguments.spark_sql:
                    figures["spark sql empty"] = build(
                        "spark", arguments.master, new,
                        folder / f"spark-sql-empty-{round_number}", spark_sql=True)
                    target = linked_copy(lake, folder / f"spark-sql-big-{round_number}")
                    figures["spark sql big"] = build("spark", arguments.master, new, target,
                                                     spark_sql=True)
                    assert stored_hands(target) == arguments.lake_hands + arguments.new_hands
                    shutil.rmtree(target)
            if "local" in engines:
                figures["local empty"] = build("local", "", new,
                                               folder / f"local-empty-{round_number}")
                target = linked_copy(lake, folder / f"local-big-{round_number}")
                figures["local big"] = build("local", "", new, target)
                assert stored_hands(target) == arguments.lake_hands + arguments.new_hands
                shutil.rmtree(target)
            if "ingest" in engines:
                figures["ingest empty"] = ingest(new, folder / f"ingest-empty-{round_number}.db")
                target = folder / f"ingest-big-{round_number}.db"
                shutil.copyfile(database, target)  # not timed
                figures["ingest big"] = ingest(new, target)
                assert database_hands(target) == arguments.lake_hands + arguments.new_hands
                target.unlink()
            for name, value in figures.items():
                rows.setdefault(name, []).append(value)
            print(f"round {round_number + 1}: " + ", ".join(
                f"{name} {value['seconds']:.1f} s" for name, value in figures.items()),
                file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    labels = {
        "bare": (f"bare SparkSession {arguments.master}: start, one query, stop (baseline)",
                 "bare"),
        "spark empty": (f"Spark {arguments.master}, into an empty lake", "bare"),
        "spark big": (f"Spark {arguments.master}, into a lake of {big} hands", "bare"),
        "spark sql empty": (f"Spark {arguments.master}, all in Spark SQL, empty lake", "bare"),
        "spark sql big": (f"Spark {arguments.master}, all in Spark SQL, {big} hands", "bare"),
        "local empty": ("local engine, into an empty lake (baseline)", "local empty"),
        "local big": (f"local engine, into a lake of {big} hands", "local empty"),
        "ingest empty": ("ofc ingest, into an empty database (baseline)", "ingest empty"),
        "ingest big": (f"ofc ingest, into a database of {big} hands", "ingest empty"),
    }
    print(f"\n{arguments.new_hands:,} new hands appended; {arguments.rounds} round(s), each a "
          "fresh process (start-up included); ratios per round against the baseline of the "
          "same round")
    print(f"{'path':58} {'wall s (each round)':>22} {'vs baseline':>14} {'peak GB':>8} "
          f"{'load':>5} {'Spark jobs':>10}")
    for name, values in rows.items():
        label, baseline = labels[name]
        walls = [value["seconds"] for value in values]
        ratios = [value["seconds"] / base["seconds"]
                  for value, base in zip(values, rows[baseline], strict=True)]
        print(f"{label:58} {' / '.join(f'{wall:.1f}' for wall in walls):>22} "
              f"{' / '.join(f'{ratio:.2f}x' for ratio in ratios):>14} "
              f"{max(value['peak_gb'] for value in values):8.2f} "
              f"{statistics.mean(value['load'] for value in values):5.1f} "
              f"{_jobs(values):>10}")
    print("(Spark jobs: the jobs one append ran, as `ofc lake build` counts them from Spark's "
          "status tracker)")
    print("(vs baseline: this path's wall time over its baseline's, lower is better; targets: "
          "Spark into an empty lake within 2x the bare session, into the big lake within 2.5x; "
          "the local engine into the big lake within 2.5x its empty-lake append, and ofc ingest "
          "into the big database within 2.5x its empty-database append)")


if __name__ == "__main__":
    main()
