"""Benchmark: grading speed of this code against a named baseline commit, side by side.

Not a test. Simulates ``--hands`` three-handed Pineapple hands (a pool of three players, so one
player sits in every hand: "a session" is that player's decisions in those hands), ingests them,
then grades that player's decisions with :func:`pipeline.analysis.runner.analyze_database`
(``--jobs`` processes, each grader at its own defaults unless ``--args`` are given) twice per
round: once with the code of ``--baseline`` (a commit, exported with ``git archive`` into a
temporary folder and run in a child process) and once with this working tree, alternately, on
fresh copies of the same database. It prints, per round and as the median over ``--rounds``:
decisions per second of each, wall and CPU seconds, and the ratio, both figures beside it::

    .venv/bin/python tests/benchmarks/bench_grading_speed.py [--hands 60] [--jobs 2]
        [--rounds 2] [--baseline 8e472eb] [--player-hands 1000]

Each child readies the tree's compiled code (``prepare_policy``, where the tree has it) before
its clock starts: a first compile after an install is not grading. The machine is shared and
noisy: only the ratio of two runs measured in the same run means much. ``--player-hands`` projects the wall time of a session of that many hands from the rate.
"""

from __future__ import annotations

import argparse
import json
import os
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

from bench_analysis import build as build_session  # noqa: E402

BASELINE = "8e472eb"
"""The code of main when issue 29 started (the grader before its speed work)."""

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from pipeline.analysis.grade import GradeSettings
from pipeline.analysis.runner import analyze_database
options = json.loads(sys.argv[4])
settings = GradeSettings(**options)
try:  # compiled code compiled (once per tree) or loaded before the clock, where the tree has it
    from pipeline.analysis.rollout import prepare_policy
    from pipeline.rules.ruleset import STANDARD
    prepare_policy(settings.policy, STANDARD)
except ImportError:
    pass
def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
started, used = time.perf_counter(), cpu()
summary = analyze_database(sys.argv[2], player=sys.argv[3], settings=settings,
                           jobs=int(sys.argv[5]))
print(json.dumps({"decisions": summary.decisions, "wall": time.perf_counter() - started,
                  "cpu": cpu() - used, "samples": summary.samples,
                  "mistakes": sum(totals.mistakes for totals in summary.players.values())}))
"""


def export(commit: str, folder: Path) -> Path:
    """The baseline's source tree (``git archive``), in ``folder``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def build(folder: Path, hands: int, seed: int) -> tuple[Path, str]:
    """Simulate and ingest the session (:func:`bench_analysis.build`); the database and the
    player sitting in every hand."""
    import duckdb

    database = build_session(folder, hands, seed)
    connection = duckdb.connect(str(database), read_only=True)
    player = connection.execute("SELECT player FROM seats GROUP BY player "
                                "ORDER BY count(*) DESC, player LIMIT 1").fetchone()[0]
    connection.close()
    return database, player


def grade(code: Path, database: Path, player: str, options: dict, jobs: int,
          folder: Path) -> dict:
    """One grading run of ``code`` on a fresh copy of the database, in a child process."""
    copy = folder / f"run-{time.monotonic_ns()}.duckdb"
    shutil.copyfile(database, copy)
    try:
        environment = {**os.environ, "PYTHONPATH": str(code)}
        output = subprocess.run(
            [sys.executable, "-c", CHILD, str(code), str(copy), player, json.dumps(options),
             str(jobs)], check=True, capture_output=True, text=True, env=environment,
            cwd=str(code)).stdout
        return json.loads(output.strip().splitlines()[-1])
    finally:
        copy.unlink(missing_ok=True)


def main() -> None:
    """Grade the session with both codes, alternately; print the rates and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare against")
    parser.add_argument("--this", default=None, metavar="COMMIT",
                        help="measure this commit instead of the working tree (exported like "
                             "the baseline: edits made while the benchmark runs do not count)")
    parser.add_argument("--args", default="{}", metavar="JSON",
                        help="GradeSettings fields for this code (default: its defaults)")
    parser.add_argument("--baseline-args", default="{}", metavar="JSON",
                        help="GradeSettings fields for the baseline (default: its defaults)")
    parser.add_argument("--player-hands", type=int, default=1000,
                        help="project the wall time of a session of this many hands")
    arguments = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-grading-speed-"))
    try:
        (folder / "baseline").mkdir()
        baseline = export(arguments.baseline, folder / "baseline")
        this = REPO
        if arguments.this:
            (folder / "this").mkdir()
            this = export(arguments.this, folder / "this")
        database, player = build(folder, arguments.hands, arguments.seed)
        print(f"session: {player}'s decisions in {arguments.hands} three-handed Pineapple hands "
              f"(seed {arguments.seed}); {arguments.jobs} jobs; baseline {arguments.baseline}; "
              f"load average {' '.join(f'{load:.1f}' for load in os.getloadavg())}")
        runs: dict[str, list[dict]] = {"baseline": [], "this code": []}
        for number in range(arguments.rounds):
            order = [("baseline", baseline, arguments.baseline_args),
                     ("this code", this, arguments.args)]
            if number % 2:
                order.reverse()
            for name, code, options in order:
                result = grade(code, database, player, json.loads(options), arguments.jobs,
                               folder)
                runs[name].append(result)
                print(f"round {number + 1}, {name}: {result['decisions']} decisions in "
                      f"{result['wall']:.1f} s wall ({result['decisions'] / result['wall']:.2f} "
                      f"decisions/s), {result['cpu']:.1f} CPU-s, {result['mistakes']} mistakes, "
                      f"{result['samples']:,} rollouts", flush=True)
        rates = {name: [run["decisions"] / run["wall"] for run in found]
                 for name, found in runs.items()}
        cpu = {name: [run["cpu"] / run["decisions"] for run in found]
               for name, found in runs.items()}
        old, new = statistics.median(rates["baseline"]), statistics.median(rates["this code"])
        ratios = [mine / theirs for mine, theirs in
                  zip(rates["this code"], rates["baseline"], strict=True)]
        print(f"\ndecisions/s (median of {arguments.rounds}): this code {new:.2f}, baseline "
              f"{old:.2f}: {new / old:.2f}x (per round: "
              f"{', '.join(f'{ratio:.2f}x' for ratio in ratios)})")
        print(f"CPU-s per decision: this code {statistics.median(cpu['this code']):.3f}, "
              f"baseline {statistics.median(cpu['baseline']):.3f}: "
              f"{statistics.median(cpu['baseline']) / statistics.median(cpu['this code']):.2f}x")
        per_hand = statistics.median(run["wall"] for run in runs["this code"]) / arguments.hands
        print(f"projected: {arguments.player_hands:,} hands in {per_hand * arguments.player_hands:.0f} s "
              f"wall with this code, "
              f"{statistics.median(run['wall'] for run in runs['baseline']) / arguments.hands * arguments.player_hands:.0f} s "
              f"with the baseline (load average now "
              f"{' '.join(f'{load:.1f}' for load in os.getloadavg())})")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
