"""Write ``demo-grades/``: decision grades of the most recent demo hands of each variant.

Run from the repository root (after making ``demo-hands.jsonl.gz``, see README.md)::

    .venv/bin/python sample_data/make_demo_grades.py [--hands-per-variant 100] [--jobs 2]

Ingests ``demo-hands.jsonl.gz`` into a scratch database, grades every player's decisions in
the most recent hands of each variant with ``ofc analyze``'s defaults (and compares their
Fantasyland hands with the solver), and writes the three grading tables as zstd Parquet files,
one per table. ``ofc demo`` copies them into its database (:mod:`pipeline.ingest.demo`), so the
Decision grading and Trainer pages of a new demo are populated without grading on first start.
The grades depend only on the hands and the grader's settings: the same command writes the
same rows (``graded_at`` aside).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pipeline import store  # noqa: E402
from pipeline.analysis.grade import GradeSettings  # noqa: E402
from pipeline.analysis.runner import analyze_database  # noqa: E402
from pipeline.ingest.demo import (  # noqa: E402
    GRADE_FILES,
    SAMPLE_GRADES,
    SAMPLE_HANDS,
    SHIPPED_COLUMNS,
)
from pipeline.ingest.driver import ingest_paths  # noqa: E402


def main() -> None:
    """Grade the demo hands and write the Parquet files."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands-per-variant", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=SAMPLE_GRADES)
    arguments = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="demo-grades-"))
    database = folder / "demo.duckdb"
    ingest_paths([SAMPLE_HANDS], database)
    with store.open_database(database, read_only=True) as connection:
        variants = [row[0] for row in connection.execute(
            "SELECT DISTINCT variant FROM hands WHERE has_streets ORDER BY variant").fetchall()]
    settings = GradeSettings()
    if settings.fantasyland_value != round(settings.fantasyland_value):
        raise SystemExit("the shipped sums are whole numbers: the Fantasyland value must be one")
    for variant in variants:
        started = time.perf_counter()
        summary = analyze_database(database, hands=arguments.hands_per_variant, settings=settings,
                                   jobs=arguments.jobs, variant=variant)
        print(f"{variant}: {summary.decisions:,} decisions in {summary.hands:,} hands "
              f"({time.perf_counter() - started:.0f} s)", flush=True)
    arguments.out.mkdir(parents=True, exist_ok=True)
    with store.open_database(database, read_only=True) as connection:
        for table in GRADE_FILES:
            target = arguments.out / f"{table}.parquet"
            columns = SHIPPED_COLUMNS.get(table, "*")
            connection.execute(
                f"COPY (SELECT {columns} FROM {table} ORDER BY ALL) TO '{target}' "
                "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 19)")
            rows = connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            print(f"{target.name}: {rows:,} rows, {target.stat().st_size / 1024:,.0f} KiB")


if __name__ == "__main__":
    main()
