"""Benchmark: the exact Fantasyland solver (``ofc solve-fl``) on random deals, one core.

Not a test. Times :func:`pipeline.analysis.fantasyland.solve_deal` on random deals of each size
(13 classic; 14 pineapple; 15-17 progressive pineapple) and on "rich" deals that are hard for
the bound (many pairs, trips and suited cards), and prints mean, median and worst seconds::

    .venv/bin/python tests/benchmarks/bench_solve_fl.py [--deals 50]

Targets (issue 7): 14 cards <= 1 s, 17 cards <= 10 s on one core (every deal, not the mean).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from pipeline.analysis.fantasyland import solve_deal  # noqa: E402
from pipeline.rules.game import Variant  # noqa: E402
from pipeline.rules.ruleset import STANDARD, preset  # noqa: E402

TARGETS = {14: 1.0, 17: 10.0}


def rich_deal(rng: random.Random, size: int) -> list[int]:
    """A deal with many paired ranks and one long suit (many scoring rows to search)."""
    ranks = rng.sample(range(13), 6)
    cards: list[int] = []
    for rank in ranks:
        suits = rng.sample(range(4), rng.choice((2, 3)))
        cards.extend(rank * 4 + suit for suit in suits)
    suit = rng.randrange(4)
    cards.extend(rank * 4 + suit for rank in rng.sample(range(13), 8))
    unique = list(dict.fromkeys(cards))
    rest = [card for card in range(52) if card not in unique]
    rng.shuffle(rest)
    return (unique + rest)[:size]


def time_deals(deals: list[list[int]], variant: Variant, rules) -> list[float]:  # noqa: ANN001
    """Seconds per deal."""
    times = []
    for cards in deals:
        started = time.perf_counter()
        solve_deal(cards, variant, rules, 10.0)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    """Time each size and print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deals", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    rng = random.Random(arguments.seed)
    solve_deal(rng.sample(range(52), 14), Variant.PINEAPPLE, STANDARD)  # warm the caches
    report = {}
    for size in (13, 14, 15, 16, 17):
        variant = Variant.CLASSIC if size == 13 else Variant.PINEAPPLE
        rules = STANDARD if size <= 14 else preset("progressive")
        for kind in ("random", "rich"):
            deals = [rng.sample(range(52), size) if kind == "random" else rich_deal(rng, size)
                     for _ in range(arguments.deals)]
            times = time_deals(deals, variant, rules)
            entry = {
                "deals": len(times), "mean_s": round(statistics.mean(times), 4),
                "median_s": round(statistics.median(times), 4), "max_s": round(max(times), 4),
            }
            if size in TARGETS:
                entry["target_s"] = TARGETS[size]
                entry["within_target"] = max(times) <= TARGETS[size]
            report[f"{size} {kind}"] = entry
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
