"""Benchmark: start-up of the ``ofc`` command line against ``python -c "import numpy"``, same run.

Not a test: it prints figures. It runs each command as a fresh process (like a user typing
it), alternating with the baseline, R times each, and prints the median wall time, its ratio
to the baseline (goal, issue 14: at most 2x) and the load average::

    .venv/bin/python tests/benchmarks/bench_cli.py [--repeats 9]

Every run is a fresh process with its bytecode cached, as installed (``child_runs.py``; the
first run of each command warms the cache). Commands: ``ofc --help``, ``ofc board "..."``, ``ofc score`` of a one-hand file (start-up of
the scoring path: numpy, msgspec, the rules tables), and ``python -c pass`` (the interpreter
alone).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BOARD = "Qs Qh 5d / Kc Kd 4h 3s 2c / Ac Ad Ah 9s 9c"


def main() -> None:
    """Time every command, print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=9)
    arguments = parser.parse_args()
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from child_runs import installed_environment, timed_run

    from tests.ingest.conftest import deal_hand

    environment = installed_environment(Path(tempfile.gettempdir()) / "ofc-bench")

    def timed(command: list[str]) -> float:
        return timed_run(command, environment).wall

    python = sys.executable
    with tempfile.TemporaryDirectory() as folder:
        one_hand = Path(folder) / "one.jsonl"
        one_hand.write_text(json.dumps(deal_hand(1)) + "\n", encoding="utf-8")
        commands = {
            'python -c "import numpy" (baseline)': [python, "-c", "import numpy"],
            "ofc --help": [python, "-m", "pipeline.cli", "--help"],
            "ofc board": [python, "-m", "pipeline.cli", "board", BOARD],
            "ofc score (one hand)": [python, "-m", "pipeline.cli", "score", str(one_hand)],
            'python -c "pass"': [python, "-c", "pass"],
        }
        for command in commands.values():  # warm the file cache once
            timed(command)
        times: dict[str, list[float]] = {name: [] for name in commands}
        loads = []
        for _ in range(arguments.repeats):
            for name, command in commands.items():
                times[name].append(timed(command))
            loads.append(os.getloadavg()[0])
    baseline = statistics.median(times['python -c "import numpy" (baseline)'])
    print(f"start-up, median of {arguments.repeats} runs each, alternating; load average "
          f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    print(f"{'command':38} {'wall s':>8} {'x numpy':>9}")
    for name, values in times.items():
        seconds = statistics.median(values)
        print(f"{name:38} {seconds:8.3f} {seconds / baseline:8.2f}x")


if __name__ == "__main__":
    main()
