"""Benchmark: the rollout policies head to head in the simulator (points per hand ± SE).

Not a test. Plays simulated hands with ``ofc simulate``'s engine (the rules core scores every
hand, Fantasyland hands are set by the exact solver) and prints each bot's points per hand with
its standard error:

* **three-handed**: one ``expert``, one ``solid`` and one ``chaser`` at every table (a pool of
  three players, so the seats rotate);
* **heads-up**: ``expert`` against ``solid``, and against ``chaser``;
* **baseline, same run and seeds**: ``solid`` in the expert's seat (what the expert's seat wins
  without the tuned weights).

::

    .venv/bin/python tests/benchmarks/bench_policy.py [--hands 20000] [--variants pineapple,classic]

The hands are the same deals for every line with the same seed (common random numbers), so
differences between lines carry less noise than the lines themselves.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from pipeline.rules.game import Variant  # noqa: E402
from pipeline.simulate.players import player_pool  # noqa: E402
from pipeline.simulate.simulation import SimulationConfig, simulate  # noqa: E402


def points_by_seat(variant: Variant, bots: tuple[str, ...], hands: int, seed: int,
                   jobs: int) -> list[tuple[str, float, float]]:
    """(bot, points per hand, standard error) for each player of the pool, in pool order."""
    config = SimulationConfig(hands=hands, seed=seed, variants=(variant,), players=len(bots),
                              pool_size=len(bots), bots=bots)
    pool = player_pool(len(bots), bots)
    points: dict[str, list[int]] = {player.name: [] for player in pool}
    for output in simulate(config, jobs=jobs):
        for line in output.lines.splitlines():
            for seat in json.loads(line)["players"]:
                points[seat["name"]].append(seat["reported_points"])
    rows = []
    for player in pool:
        values = points[player.name]
        mean = sum(values) / len(values)
        spread = math.sqrt(sum((value - mean) ** 2 for value in values) / (len(values) - 1))
        rows.append((player.bot, mean, spread / math.sqrt(len(values))))
    return rows


def main() -> None:
    """Play the matches and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--variants", default="pineapple,classic,2-7-pineapple")
    arguments = parser.parse_args()
    print("| variant | table | bot | points / hand |\n|---|---|---|---:|")
    for name in arguments.variants.split(","):
        variant = Variant(name)
        for table, bots in (
            ("three-handed", ("expert", "solid", "chaser")),
            ("three-handed, baseline", ("solid", "solid", "chaser")),
            ("heads-up", ("expert", "solid")),
            ("heads-up, baseline", ("solid", "solid")),
            ("heads-up", ("expert", "chaser")),
            ("heads-up, baseline", ("solid", "chaser")),
        ):
            started = time.perf_counter()
            rows = points_by_seat(variant, bots, arguments.hands, arguments.seed, arguments.jobs)
            for index, (bot, mean, error) in enumerate(rows):
                seat = " (the expert's seat)" if index == 0 and "baseline" in table else ""
                print(f"| {variant.value} | {table} | {bot}{seat} | {mean:+.2f} ± {error:.2f} |",
                      flush=True)
            print(f"  ({arguments.hands:,} hands in {time.perf_counter() - started:.0f} s)",
                  file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
