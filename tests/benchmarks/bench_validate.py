"""Benchmark: how many pineapple 3-player hands per second ``parse_hand`` validates on one core.

Not a test. Run from the repository root::

    .venv/bin/python tests/benchmarks/bench_validate.py [--hands 5000] [--seconds 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pipeline.validate import hand_to_mapping, parse_hand  # noqa: E402
from tests.test_validate import deal_record  # noqa: E402


def measure(function, records: list[dict], seconds: float) -> float:
    """Call ``function`` on every record, repeatedly, for about ``seconds``; return calls/s."""
    done = 0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds:
        for record in records:
            function(record)
        done += len(records)
        elapsed = time.perf_counter() - start
    return done / elapsed


def main() -> None:
    """Deal distinct legal hands, then time validation and writing back."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=5000, help="distinct hands to deal")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    arguments = parser.parse_args()

    records = [
        deal_record("pineapple", 3, seed=seed) for seed in range(arguments.hands)
    ]
    parse_rate = measure(parse_hand, records, arguments.seconds)
    print(f"parse_hand, pineapple 3 players: {parse_rate:,.0f} hands/s")

    classic = [deal_record("classic", 4, seed=seed) for seed in range(arguments.hands)]
    classic_rate = measure(parse_hand, classic, arguments.seconds)
    print(f"parse_hand, classic 4 players:   {classic_rate:,.0f} hands/s")

    parsed = [parse_hand(record) for record in records]
    write_rate = measure(hand_to_mapping, parsed, arguments.seconds)
    print(f"hand_to_mapping, pineapple 3 players: {write_rate:,.0f} hands/s")


if __name__ == "__main__":
    main()
