"""Benchmark: how many hands per second ``ofc simulate`` plays and writes. Not a test.

Run from the repository root::

    .venv/bin/python tests/benchmarks/bench_simulate.py [--hands 10000] [--rounds 3] [--jobs 1]

The headline case is the issue's: 3-player Pineapple with the default bots (solid, chaser) on
one core, written to a gzip file. Each figure is the best of several rounds (CPU time of this
process, so other work on the machine disturbs it less; with ``--jobs`` > 1 wall time is used).
The calibration line times ``sum(range(1000))`` so figures from different machines can be
compared; a second table splits one round into its parts (Fantasyland setter, bots and
dealing, settling and writing).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pipeline.rules.game import Variant  # noqa: E402
from pipeline.rules.ruleset import preset  # noqa: E402
from pipeline.simulate import dealer  # noqa: E402
from pipeline.simulate.outlook import row_outlooks  # noqa: E402
from pipeline.simulate.simulation import SimulationConfig  # noqa: E402
from pipeline.simulate.writer import write_simulation  # noqa: E402


def best_rate(config: SimulationConfig, rounds: int, jobs: int) -> tuple[float, int]:
    """Hands per second of the fastest round, and the file size of that run."""
    best = float("inf")
    size = 0
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "hands.jsonl.gz"
        for _ in range(rounds):
            clock = time.process_time if jobs == 1 else time.perf_counter
            start = clock()
            write_simulation(config, target, jobs)
            best = min(best, clock() - start)
            size = target.stat().st_size
    return config.hands / best, size


def split(config: SimulationConfig) -> dict[str, float]:
    """CPU seconds of one run spent in the Fantasyland setter, the streets and the settling."""
    spent = {"Fantasyland setter": 0.0, "streets (bots, dealing)": 0.0, "judging, settling": 0.0}
    originals = (dealer.solve_fantasyland, dealer._play_streets, dealer._finish_hands)

    def timed(name: str, function):  # noqa: ANN001, ANN202
        """``function``, adding its CPU time to ``spent[name]``."""
        def wrapper(*arguments, **keywords):  # noqa: ANN002, ANN003, ANN202
            """Call through, timing."""
            start = time.process_time()
            try:
                return function(*arguments, **keywords)
            finally:
                spent[name] += time.process_time() - start
        return wrapper

    dealer.solve_fantasyland = timed("Fantasyland setter", originals[0])
    dealer._play_streets = timed("streets (bots, dealing)", originals[1])
    dealer._finish_hands = timed("judging, settling", originals[2])
    try:
        with tempfile.TemporaryDirectory() as folder:
            start = time.process_time()
            write_simulation(config, Path(folder) / "hands.jsonl.gz")
            spent["total"] = time.process_time() - start
    finally:
        dealer.solve_fantasyland, dealer._play_streets, dealer._finish_hands = originals
    return spent


def main() -> None:
    """Time the headline case and a few others."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=10_000, help="hands per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs per case; the best counts")
    parser.add_argument("--jobs", type=int, default=1, help="processes (1 = one core)")
    arguments = parser.parse_args()

    calibration = min(timeit.repeat("sum(range(1000))", number=2000, repeat=5)) / 2000
    print(f"calibration: sum(range(1000)) takes {calibration * 1e6:.1f} µs")
    for variant in Variant:  # build the outlook tables outside the timings
        row_outlooks(variant, preset("standard"))

    hands = arguments.hands
    cases = [
        ("3-player pineapple, default bots (solid, chaser)",
         SimulationConfig(hands=hands, players=3, variants=(Variant.PINEAPPLE,))),
        ("3-player pineapple, solid/chaser/random",
         SimulationConfig(hands=hands, players=3, variants=(Variant.PINEAPPLE,),
                          bots=("solid", "chaser", "random"))),
        ("4-player classic, default bots",
         SimulationConfig(hands=hands // 2, players=4, variants=(Variant.CLASSIC,))),
        ("3-player 2-7 pineapple, default bots",
         SimulationConfig(hands=hands // 2, players=3, variants=(Variant.LOWBALL_PINEAPPLE,))),
    ]
    for label, config in cases:
        rate, size = best_rate(config, arguments.rounds, arguments.jobs)
        print(f"{label}: {rate:,.0f} hands/s ({config.hands:,} hands, jobs={arguments.jobs}, "
              f"{size / config.hands:,.0f} bytes/hand gzipped)")

    parts = split(cases[0][1])
    total = parts.pop("total")
    print(f"where the time goes (headline case, one run, {total:.2f} s CPU):")
    for name, seconds in parts.items():
        print(f"  {name}: {seconds:.2f} s ({seconds / total:.0%})")
    rest = total - sum(parts.values())
    print(f"  the rest (shuffling, planning, writing): {rest:.2f} s ({rest / total:.0%})")


if __name__ == "__main__":
    main()
