"""Benchmark: two rollout policies head to head in every variant (points per hand ± SE).

Not a test. Each policy is a bot name (``learned``, ``expert``, ...) or ``NAME=FILE``: the
learned bot with the weights in FILE (for instance a round of expert iteration before it
ships). Heads-up tables of the first policy against the second (the seats rotate), the
rules core scoring every hand, the exact solver setting Fantasyland hands::

    .venv/bin/python tests/benchmarks/bench_policy_rounds.py learned round1=old.json \
        [--hands 20000] [--variants pineapple,2-7-pineapple,classic] [--seed 9] [--jobs 2]

Prints the first policy's points per hand against the second with its standard error (the
second wins exactly the opposite heads-up) and the hands per second of each match.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from pipeline.analysis.training import head_to_head, register  # noqa: E402
from pipeline.rules.game import Variant  # noqa: E402
from pipeline.simulate.learned import load_weights  # noqa: E402


def policy_name(text: str) -> str:
    """A bot name; ``NAME=FILE`` registers the learned bot with FILE's weights as NAME."""
    if "=" not in text:
        return text
    name, path = text.split("=", 1)
    return register(name, load_weights(Path(path)))


def main() -> None:
    """Play the matches and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--variants", default="pineapple,2-7-pineapple,classic")
    arguments = parser.parse_args()
    first, second = policy_name(arguments.first), policy_name(arguments.second)
    print(f"| variant | {first} against {second}, heads-up: points / hand | hands | hands/s |")
    print("|---|---:|---:|---:|")
    for index, name in enumerate(arguments.variants.split(",")):
        variant = Variant.parse(name)
        started = time.perf_counter()
        mean, error = head_to_head(first, second, variant, arguments.hands,
                                   seed=arguments.seed * 100 + index, jobs=arguments.jobs)
        seconds = time.perf_counter() - started
        print(f"| {variant.value} | {mean:+.2f} ± {error:.2f} | {arguments.hands:,} | "
              f"{arguments.hands / seconds:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
