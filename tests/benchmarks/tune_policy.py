"""How the ``expert`` bot's weights were found: a coordinate search by simulation.

Not a test. Starting from given weights (a :class:`~pipeline.simulate.bots.Style`), each weight
in turn is multiplied by 0.5, 0.75, 1.33 and 2; a change is kept when the candidate's points per
hand at a three-handed table (candidate, solid, chaser; ``--hands`` hands, one seed for every
candidate: common random numbers) beat the best so far by more than ``--margin``. Rounds repeat
until none improves (at most ``--rounds``). The winner is then checked on a fresh seed over
20,000 hands (a search picks its best on noise: only the fresh figure counts; see
bench_policy.py)::

    .venv/bin/python tests/benchmarks/tune_policy.py pineapple --start 8 150 0.04 0.4 0.3
    .venv/bin/python tests/benchmarks/tune_policy.py classic --start 10 120 0.04 0 0.3

Weights: foul_penalty, fantasyland_bonus, strength_weight, steer, middle_patience.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from pipeline.rules.game import Variant  # noqa: E402
from pipeline.simulate.bots import BOTS, HeuristicBot, Style  # noqa: E402
from pipeline.simulate.simulation import SimulationConfig, simulate  # noqa: E402

FIELDS = ("foul_penalty", "fantasyland_bonus", "strength_weight", "steer", "middle_patience")


def table_points(style: Style, variant: Variant, hands: int, seed: int) -> tuple[float, float]:
    """The candidate's points per hand (± SE) at a table with solid and chaser."""
    BOTS["candidate"] = HeuristicBot("candidate", "a weight set being tuned", style)
    config = SimulationConfig(hands=hands, seed=seed, variants=(variant,), players=3,
                              pool_size=3, bots=("candidate", "solid", "chaser"))
    values: list[int] = []
    for output in simulate(config):
        for line in output.lines.splitlines():
            record = json.loads(line)
            values.extend(seat["reported_points"] for seat in record["players"]
                          if seat["name"] == "mara")  # the pool's first player: the candidate
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((value - mean) ** 2 for value in values) / (len(values) - 1))
    return mean, spread / math.sqrt(len(values))


def main() -> None:
    """Search, then validate on a fresh seed."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variant")
    parser.add_argument("--start", type=float, nargs=5, required=True, metavar="W")
    parser.add_argument("--hands", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--margin", type=float, default=0.25)
    parser.add_argument("--rounds", type=int, default=2)
    arguments = parser.parse_args()
    variant = Variant(arguments.variant)
    best = Style(*arguments.start)
    best_points = table_points(best, variant, arguments.hands, arguments.seed)[0]
    print(f"start {best}: {best_points:+.3f}", flush=True)
    for number in range(arguments.rounds):
        improved = False
        for name in FIELDS:
            for factor in (0.5, 0.75, 1.33, 2.0):
                value = getattr(best, name) * factor if getattr(best, name) else 0.1 * factor
                candidate = replace(best, **{name: value})
                points, error = table_points(candidate, variant, arguments.hands, arguments.seed)
                kept = points > best_points + arguments.margin
                if kept:
                    best, best_points, improved = candidate, points, True
                print(f"round {number + 1} {name}={value:.4g}: {points:+.3f} ± {error:.3f}"
                      f"{' kept' if kept else ''}", flush=True)
        if not improved:
            break
    fresh = table_points(best, variant, 20_000, arguments.seed + 1)
    print(f"best {best}: {fresh[0]:+.3f} ± {fresh[1]:.3f} per hand on a fresh seed (20,000 hands)")


if __name__ == "__main__":
    main()
