"""Benchmark: grading one player's decisions (``ofc analyze``) in simulated pineapple hands.

Not a test. Simulates ``--hands`` 3-player pineapple hands with the simulator's bots (a pool of
three players, so one player sits in every hand), ingests them into a fresh database, then times
:func:`pipeline.analysis.runner.analyze_database` for one player and prints decisions graded per
second, wall and CPU time, and rollouts per second::

    .venv/bin/python tests/benchmarks/bench_analysis.py [--hands 1000] [--rollouts 600] [--jobs 2]

Target (issue 7): one player's decisions in 1,000 pineapple hands, 100 rollouts per
alternative, in <= 10 minutes on the 2-core machine. Since issue 16 the defaults are 600
selection and 1,000 evaluation rollouts with the expert policy (docs/grading.md); ``--rollouts
100`` measures the old setting. ``--hands 100`` gives a quick estimate
(the time grows linearly with the hands). The machine is shared: CPU seconds of the workers are
printed next to the wall time.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from pipeline.analysis.grade import GradeSettings  # noqa: E402
from pipeline.analysis.runner import analyze_database  # noqa: E402
from pipeline.ingest.driver import ingest_paths  # noqa: E402
from pipeline.rules.game import Variant  # noqa: E402
from pipeline.simulate.simulation import SimulationConfig, simulate  # noqa: E402


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def build(folder: Path, hands: int, seed: int) -> Path:
    """Simulate and ingest; returns the database path."""
    source = folder / "hands.jsonl"
    config = SimulationConfig(hands=hands, seed=seed, variants=(Variant.PINEAPPLE,), players=3,
                              pool_size=3)
    with open(source, "wb") as stream:
        for output in simulate(config):
            stream.write(output.lines)
    database = folder / "bench.duckdb"
    summary = ingest_paths([source], database)
    assert summary.stored == hands, summary.first_reasons
    return database


def main() -> None:
    """Build the database, grade one player, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=1000)
    parser.add_argument("--rollouts", type=int, default=GradeSettings().rollouts)
    parser.add_argument("--screen", type=int, default=GradeSettings().screen)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", metavar="DIR", help="build the database in DIR and keep it")
    arguments = parser.parse_args()
    folder = Path(arguments.keep or tempfile.mkdtemp(prefix="bench-analysis-"))
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    database = build(folder, arguments.hands, arguments.seed)
    print(f"simulated and ingested {arguments.hands:,} hands in {time.perf_counter() - started:.1f} s")
    import duckdb

    connection = duckdb.connect(str(database), read_only=True)
    player = connection.execute("SELECT player FROM seats GROUP BY player "
                                "ORDER BY count(*) DESC, player LIMIT 1").fetchone()[0]
    fantasyland = connection.execute("SELECT count(*) FROM seats WHERE player = ? AND fantasyland",
                                     [player]).fetchone()[0]
    connection.close()
    settings = GradeSettings(rollouts=arguments.rollouts, screen=arguments.screen,
                             seed=arguments.seed)
    cpu = _cpu_seconds()
    started = time.perf_counter()
    summary = analyze_database(database, player=player, settings=settings, jobs=arguments.jobs)
    wall = time.perf_counter() - started
    cpu = _cpu_seconds() - cpu
    connection = duckdb.connect(str(database), read_only=True)
    by_street = Counter(dict(connection.execute(
        "SELECT street, count(*) FROM decision_grades GROUP BY street").fetchall()))
    alternatives = connection.execute(
        "SELECT street, avg(alternatives), avg(legal_placements) FROM decision_grades "
        "GROUP BY street ORDER BY street").fetchall()
    connection.close()
    report = {
        "player": player, "hands": summary.hands, "fantasyland_hands": fantasyland,
        "decisions": summary.decisions, "forced": summary.forced, "rollouts": arguments.rollouts,
        "screen": arguments.screen, "jobs": arguments.jobs, "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu, 1), "decisions_per_second": round(summary.decisions / wall, 2),
        "samples": summary.samples, "samples_per_cpu_second": round(summary.samples / cpu),
        "decisions_by_street": dict(sorted(by_street.items())),
        "alternatives_by_street": {street: [round(a, 1), round(b, 1)]
                                   for street, a, b in alternatives},
        "target_seconds_for_1000_hands": 600,
        "projected_wall_seconds_for_1000_hands": round(wall * 1000 / max(1, arguments.hands), 1),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
