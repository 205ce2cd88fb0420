"""Benchmark: the grader's CPU time per decision with each rollout policy, side by side.

Not a test. It simulates one three-handed table of ``solid``, ``chaser`` and ``random``
(``--hands`` hands of ``--variant``, seed ``--seed``), then grades every decision at the
grader's defaults once per rollout policy (``--policies``, the baseline first), alternating
the policies decision by decision so that the machine's load falls on both alike, and prints
the CPU seconds per decision of each and the ratio to the baseline::

    .venv/bin/python tests/benchmarks/bench_policy_speed.py [--hands 4] [--variant pineapple]
        [--policies expert,learned] [--seed 7]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_grading import simulated_views  # noqa: E402

from pipeline.analysis.decisions import decision_at  # noqa: E402
from pipeline.analysis.grade import GradeSettings, grade_decision  # noqa: E402
from pipeline.rules.game import Variant  # noqa: E402
from pipeline.rules.ruleset import STANDARD  # noqa: E402
from pipeline.simulate.simulation import SimulationConfig  # noqa: E402


def main() -> None:
    """Grade one table's decisions with each policy and print the CPU time per decision."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=4)
    parser.add_argument("--variant", default="pineapple")
    parser.add_argument("--policies", default="expert,learned")
    parser.add_argument("--seed", type=int, default=7)
    arguments = parser.parse_args()
    variant = Variant.parse(arguments.variant)
    policies = arguments.policies.split(",")
    config = SimulationConfig(hands=arguments.hands, seed=arguments.seed, variants=(variant,),
                              players=3, pool_size=3, bots=("solid", "chaser", "random"))
    views = simulated_views(config, prefix="bench-policy-speed-")
    decisions = [decision_at(view, seat, street) for view in views
                 for seat, play in enumerate(view.seats) if not play.fantasyland
                 for street in range(len(play.streets))]
    seconds = dict.fromkeys(policies, 0.0)
    for count, decision in enumerate(decisions, 1):
        for policy in policies:
            started = time.process_time()
            grade_decision(decision, STANDARD, GradeSettings(policy=policy))
            seconds[policy] += time.process_time() - started
        print(f"  {count}/{len(decisions)} decisions", file=sys.stderr, flush=True)
    baseline = policies[0]
    print(f"{len(decisions)} decisions of {arguments.hands} three-handed {variant.value} hands "
          f"(solid, chaser, random), graded at the defaults with each rollout policy:")
    for policy in policies:
        per_decision = seconds[policy] / max(len(decisions), 1)
        print(f"  {policy:>8}: {seconds[policy]:.1f} CPU-s, {per_decision:.3f} CPU-s per decision,"
              f" {seconds[policy] / max(seconds[baseline], 1e-9):.2f}× {baseline}'s time")


if __name__ == "__main__":
    main()
