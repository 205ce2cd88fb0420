"""Benchmark: the coaching report's questions, findings and rendering on a large database.

Not a test. Builds (once, then reuses) the dashboard benchmark's database of ``--hands``
three-player hands (30 players at 20 tables: :func:`bench_dashboard.build_database`), then
times, as wall time (median of ``--repeat`` runs):

* **baseline** - the questions the report asked before reference groups and the balance sheet
  (one pass over the boards for everyone, the pairings by variant and by pair, the player's
  hands), run here in the same process on the same database;
* the report's questions now (:func:`pipeline.report.data.gather_report_data`: adds the board
  states of the player and of everyone, with pairings left out), with the ratio to the baseline;
* building the findings (pure), rendering the HTML, and the comparison pages' questions
  (:func:`pipeline.report.compare.compare_players` for 6 players, ``player_progress``).

Run from the repository root::

    .venv/bin/python tests/benchmarks/bench_report.py [--hands 200000] [--db FILE] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dashboard import build_database  # noqa: E402

from pipeline import read  # noqa: E402
from pipeline.read.scope import Filters  # noqa: E402
from pipeline.report import ReportRequest, create_report  # noqa: E402
from pipeline.report.compare import compare_players, player_progress  # noqa: E402
from pipeline.report.data import gather_report_data  # noqa: E402
from pipeline.report.findings import build_report  # noqa: E402
from pipeline.report.reference import ReferenceSpec  # noqa: E402
from pipeline.report.render import render_html  # noqa: E402

HERO = "p0"


def median_seconds(work: Callable[[], object], repeat: int) -> float:
    """The median wall time of ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def old_questions(database: Path) -> None:
    """What the report read before this change, for the same player and scope."""
    everyone = Filters()
    with read.source.reading(database) as connection:
        read.report.report_own_hands(connection, everyone.with_players((HERO,)))
        read.report.report_player_totals(connection, everyone)
        read.report.report_matchup_totals(connection, everyone)
        read.report.report_pair_totals(connection, everyone)


def main() -> None:
    """Build or reuse the database, time each step, print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200_000)
    parser.add_argument("--db", type=Path, default=Path("/tmp/ofc-bench-report.duckdb"))
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    marker = arguments.db.with_suffix(".hands")
    if not arguments.db.exists() or not marker.exists() or \
            marker.read_text() != str(arguments.hands):
        start = time.perf_counter()
        build_database(arguments.db, arguments.hands)
        marker.write_text(str(arguments.hands))
        print(f"built {arguments.hands:,} hands in {time.perf_counter() - start:.1f} s")
    database = arguments.db
    request = ReportRequest(HERO)
    named = ReportRequest(HERO, reference=ReferenceSpec.parse("named:p1,p2,p3,p4,p5"),
                          change_date=date(2026, 3, 1))
    data = gather_report_data(database, request)
    report = build_report(data, request)
    six = tuple(f"p{i}" for i in range(6))
    rows = [
        ("baseline: the report's questions before", lambda: old_questions(database)),
        ("report's questions now (field)", lambda: gather_report_data(database, request)),
        ("report's questions now (named, before/after)",
         lambda: gather_report_data(database, named)),
        ("findings (pure)", lambda: build_report(data, request)),
        ("render HTML", lambda: render_html(report)),
        ("whole report (questions + findings)", lambda: create_report(database, request)),
        ("compare_players (6 players)",
         lambda: compare_players(database, Filters(), six, ReferenceSpec())),
        ("player_progress (before/after)",
         lambda: player_progress(database, Filters(), HERO, date(2026, 3, 1))),
    ]
    print(f"{arguments.hands:,} hands, player {HERO} ({data.hands.height:,} hands), "
          f"median of {arguments.repeat}")
    print(f"{'step':48} {'seconds':>9} {'× baseline':>11}")
    baseline = None
    for name, work in rows:
        seconds = median_seconds(work, arguments.repeat)
        baseline = baseline or seconds
        print(f"{name:48} {seconds:9.3f} {seconds / baseline:11.2f}")


if __name__ == "__main__":
    main()
