"""Benchmark: how many hands per second ``parse_hand`` validates on one core.

Not a test. Run from the repository root::

    .venv/bin/python tests/benchmarks/bench_validate.py [--hands 5000] [--rounds 7]

Each figure is the best of several rounds over the same distinct, freshly dealt hands (the
best round is the one least disturbed by other work on the machine). The calibration line
times ``sum(range(1000))`` so figures from different machines can be compared.
"""

from __future__ import annotations

import argparse
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pipeline.records.validate import hand_to_mapping, parse_hand  # noqa: E402
from tests.records.test_validate import deal_record  # noqa: E402


def best_rate(function: Callable[[object], object], items: list, rounds: int) -> float:
    """Items per second of the fastest of ``rounds`` passes of ``function`` over ``items``."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for item in items:
            function(item)
        best = min(best, time.perf_counter() - start)
    return len(items) / best


def main() -> None:
    """Deal distinct legal hands, then time validation and writing back."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=5000, help="distinct hands to deal")
    parser.add_argument("--rounds", type=int, default=7, help="passes; the best one counts")
    arguments = parser.parse_args()

    calibration = min(timeit.repeat("sum(range(1000))", number=2000, repeat=5)) / 2000
    print(f"calibration: sum(range(1000)) takes {calibration * 1e6:.1f} µs")

    cases = [
        ("pineapple, 3 players", "pineapple", 3, None, False),
        ("pineapple, 3 players, streets and boards", "pineapple", 3, None, True),
        ("pineapple, 3 players, one in 15-card Fantasyland", "pineapple", 3, {1: 15}, False),
        ("classic, 4 players", "classic", 4, None, False),
    ]
    for label, variant, players, fantasyland, with_board in cases:
        records = [
            deal_record(variant, players, seed, fantasyland_cards=fantasyland,
                        with_board=with_board)
            for seed in range(arguments.hands)
        ]
        rate = best_rate(parse_hand, records, arguments.rounds)
        print(f"parse_hand, {label}: {rate:,.0f} hands/s")
        if label == "pineapple, 3 players":
            parsed = [parse_hand(record) for record in records]
            write_rate = best_rate(hand_to_mapping, parsed, arguments.rounds)
            print(f"hand_to_mapping, {label}: {write_rate:,.0f} hands/s")


if __name__ == "__main__":
    main()
