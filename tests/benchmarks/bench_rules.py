"""Benchmark of the rules core: boards per second, scalar vs batch vs a treys baseline.

Run: ``python tests/benchmarks/bench_rules.py [--boards N]``. Not a test: it prints figures.
The machine is shared and noisy, so every figure is printed next to its ratio against the
baseline measured in the same run. The treys baseline (``pip install treys``, the ``bench``
extra) evaluates only the two 5-card rows of each board, so it does less work than ours.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pipeline.rules.batch import evaluate_boards, score_pairs
from pipeline.rules.board import evaluate_board
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD


def random_boards(count: int, seed: int = 7) -> np.ndarray:
    """(count, 13) distinct-card boards from a seeded generator."""
    generator = np.random.default_rng(seed)
    return np.argsort(generator.random((count, 52)), axis=1)[:, :13].astype(np.int8)


def best_of(repeats: int, function) -> float:  # noqa: ANN001
    """Best wall time of ``repeats`` calls (seconds)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    """Measure and print boards/s for each path."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--boards", type=int, default=2_000_000)
    parser.add_argument("--scalar-boards", type=int, default=20_000)
    arguments = parser.parse_args()
    boards = random_boards(arguments.boards)
    small = boards[: arguments.scalar_boards]
    rows: list[tuple[str, float]] = []

    try:
        from treys import Card as TreysCard
        from treys import Evaluator

        evaluator = Evaluator()
        text = [TreysCard.new("23456789TJQKA"[card >> 2] + "cdhs"[card & 3]) for card in range(52)]
        treys_rows = [[text[card] for card in board] for board in small.tolist()]

        def treys_run() -> None:
            for row in treys_rows:
                middle = evaluator.evaluate(row[3:5], row[5:8])
                bottom = evaluator.evaluate(row[8:10], row[10:13])
                _ = middle < bottom  # treys: lower is stronger

        seconds = best_of(3, treys_run)
        rows.append(("treys baseline (middle+bottom rows only)", len(small) / seconds))
    except ImportError:
        print("treys not installed (pip install treys): baseline skipped")

    tuples = [(board[:3], board[3:8], board[8:]) for board in small.tolist()]

    def scalar_run() -> None:
        for top, middle, bottom in tuples:
            evaluate_board(top, middle, bottom, Variant.PINEAPPLE, STANDARD)

    rows.append(("scalar evaluate_board", len(small) / best_of(3, scalar_run)))
    evaluate_boards(boards[:1000], Variant.PINEAPPLE, STANDARD)  # build tables outside the timing
    batch_seconds = best_of(3, lambda: evaluate_boards(boards, Variant.PINEAPPLE, STANDARD))
    rows.append(("batch evaluate_boards (pineapple)", len(boards) / batch_seconds))
    low_seconds = best_of(3, lambda: evaluate_boards(boards, Variant.LOWBALL_PINEAPPLE, STANDARD))
    rows.append(("batch evaluate_boards (2-7 pineapple)", len(boards) / low_seconds))
    columns = evaluate_boards(boards, Variant.PINEAPPLE, STANDARD)
    half = len(boards) // 2
    first = np.arange(half)
    second = np.arange(half, 2 * half)
    pair_seconds = best_of(3, lambda: score_pairs(columns, first, second, STANDARD))
    rows.append(("batch score_pairs (pairs/s)", half / pair_seconds))

    baseline = rows[0][1] if rows[0][0].startswith("treys") else None
    print(f"{'path':45} {'per second':>14} {'vs treys':>10}")
    for name, rate in rows:
        ratio = f"{rate / baseline:9.1f}x" if baseline else "       n/a"
        print(f"{name:45} {rate:14,.0f} {ratio}")


if __name__ == "__main__":
    main()
