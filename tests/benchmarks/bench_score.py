"""Benchmark: ``ofc score`` of random pineapple hands against a treys-based script, same run.

Not a test: it prints figures. It writes (once, cached) a file of random legal 3-player
pineapple hands (the dealer of bench_ingest.py), then times, alternating, R times each:

* the **baseline**: a script a user could write with the ``bench`` extra's treys — parse each
  line with ``json``, treys for the 5-card rows, plain Python for the top row, the foul,
  royalties, Fantasyland and the 1-6 points, one ``json.dumps`` line per hand
  (:func:`baseline_score`, run as ``python bench_score.py --baseline FILE``);
* ``ofc score FILE`` (the default: a worker per idle CPU, by the load average),
  ``ofc score --jobs 2 FILE`` (two workers whatever the load) and ``ofc score --jobs 1 FILE``
  (one process);
* the scalar path alone (every line through ``parse_hand`` and the scalar rules core, what
  ``ofc score`` did before it used the batch core), once (it is slow).

Each is a fresh process writing to a file, so start-up counts for every one of them; each runs
with its bytecode cached, as installed (``child_runs.py``). It prints the median wall time and
CPU seconds of each, their ratios to the baseline's and the load average, and checks that
the baseline's fouls and points agree with ``ofc score``'s (so it is doing the same job)::

    .venv/bin/python tests/benchmarks/bench_score.py [--hands 20000] [--repeats 3]

``--parsers ROUNDS`` times instead, in this process, ``score_block`` over the same file with the
columnar parser and with the streets-as-raw-text parser, alternating (CPU seconds, medians).

Goal (issue 14): ``ofc score`` at least 3x the baseline (aim 10x).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from itertools import islice
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

RANK_ORDER = "23456789TJQKA"
TOP_PAIR_ROYALTY = {"6": 1, "7": 2, "8": 3, "9": 4, "T": 5, "J": 6, "Q": 7, "K": 8, "A": 9}
MIDDLE_ROYALTY = {"Three of a Kind": 2, "Straight": 4, "Flush": 8, "Full House": 12,
                  "Four of a Kind": 20, "Straight Flush": 30, "Royal Flush": 50}
BOTTOM_ROYALTY = {"Straight": 2, "Flush": 4, "Full House": 6, "Four of a Kind": 10,
                  "Straight Flush": 15, "Royal Flush": 25}
TREYS_CLASS = {1: 8, 2: 7, 3: 6, 4: 5, 5: 4, 6: 3, 7: 2, 8: 1, 9: 0}
"""treys rank class (1 straight flush ... 9 high card) → a strength order (higher is better)."""


def baseline_score(path: str, output: str) -> None:
    """The treys baseline: score every hand of ``path`` (standard rules) into ``output``."""
    from treys import Card, Evaluator

    evaluator = Evaluator()
    new_card = Card.new

    def top_key(cards: list[str]) -> tuple:
        ranks = sorted((RANK_ORDER.index(card[0]) for card in cards), reverse=True)
        if ranks[0] == ranks[2]:
            return (3, ranks[0])  # trips (treys class 7 -> strength 3)
        if ranks[0] == ranks[1] or ranks[1] == ranks[2]:
            pair = ranks[1]
            kicker = ranks[2] if ranks[0] == ranks[1] else ranks[0]
            return (1, pair, kicker)
        return (0, *ranks)

    def five_key(cards: list[str], strength: int) -> tuple:
        ranks = sorted((RANK_ORDER.index(card[0]) for card in cards), reverse=True)
        counts = {rank: ranks.count(rank) for rank in ranks}
        ordered = sorted(counts, key=lambda rank: (counts[rank], rank), reverse=True)
        return (strength, *ordered)

    with open(path, encoding="utf-8") as source, open(output, "w", encoding="utf-8") as sink:
        for line in source:
            record = json.loads(line)
            boards = []
            for player in record["players"]:
                rows: dict[str, list[str]] = {"top": [], "middle": [], "bottom": []}
                if player.get("board"):
                    rows = {row: list(cards) for row, cards in player["board"].items()}
                else:
                    for street in player["streets"]:
                        for row, cards in street["placed"].items():
                            rows[row] += cards
                middle = evaluator.evaluate([], [new_card(card) for card in rows["middle"]])
                bottom = evaluator.evaluate([], [new_card(card) for card in rows["bottom"]])
                middle_class = evaluator.get_rank_class(middle)
                bottom_class = evaluator.get_rank_class(bottom)
                top = top_key(rows["top"])
                middle_key = five_key(rows["middle"], TREYS_CLASS[middle_class])
                foul = bottom > middle or top > middle_key[: len(top)]
                names = ["", "", ""]
                royalties = [0, 0, 0]
                if not foul:
                    if top[0] == 3:
                        royalties[0] = 10 + top[1]
                    elif top[0] == 1:
                        royalties[0] = TOP_PAIR_ROYALTY.get(RANK_ORDER[top[1]], 0)
                    names[1] = evaluator.class_to_string(middle_class)
                    names[2] = evaluator.class_to_string(bottom_class)
                    if names[1] == "Straight Flush" and middle == 1:
                        names[1] = "Royal Flush"
                    if names[2] == "Straight Flush" and bottom == 1:
                        names[2] = "Royal Flush"
                    royalties[1] = MIDDLE_ROYALTY.get(names[1], 0)
                    royalties[2] = BOTTOM_ROYALTY.get(names[2], 0)
                if player.get("fantasyland"):
                    stays = not foul and (top[0] == 3 or middle_class <= 3 or bottom_class <= 2)
                    fantasyland = 14 if stays else 0
                else:
                    fantasyland = 14 if not foul and (
                        top[0] == 3 or (top[0] == 1 and top[1] >= RANK_ORDER.index("Q"))) else 0
                boards.append((player["name"], foul, royalties, (top, -middle, -bottom),
                               fantasyland, top, middle_class, bottom_class))
            points = [0] * len(boards)
            for first in range(len(boards)):
                for second in range(first + 1, len(boards)):
                    a, b = boards[first], boards[second]
                    if a[1] and b[1]:
                        continue
                    if a[1] or b[1]:
                        value = 6 + sum(b[2] if a[1] else a[2])
                        value = -value if a[1] else value
                    else:
                        wins = sum((x > y) - (x < y) for x, y in zip(a[3], b[3], strict=True))
                        value = wins + (3 if abs(wins) == 3 else 0) + sum(a[2]) - sum(b[2])
                    points[first] += value
                    points[second] -= value
            sink.write(json.dumps({"hand_id": record["hand_id"], "players": [
                {"name": name, "foul": foul, "royalties": dict(zip(("top", "middle", "bottom"),
                                                                   royalties, strict=True)),
                 "points": points[index], "fantasyland_next": fantasyland > 0,
                 "fantasyland_cards": fantasyland,
                 "classes": {"top": ("high_card", "pair", "", "trips")[top[0]],
                             "middle": evaluator.class_to_string(middle_class),
                             "bottom": evaluator.class_to_string(bottom_class)}}
                for index, (name, foul, royalties, _, fantasyland, top, middle_class,
                            bottom_class) in enumerate(boards)
            ]}) + "\n")


def scalar_score(path: str, output: str) -> None:
    """The per-record path alone: what ``ofc score`` printed for every line before."""
    from pipeline.formats.source import read_raw_lines
    from pipeline.ingest.score_lines import scalar_output
    from pipeline.records.rules_file import RulesResolver

    resolver = RulesResolver(search_directories=[Path(path).parent])
    with open(output, "w", encoding="utf-8") as sink:
        for line in read_raw_lines(path):
            sink.write(scalar_output(line, resolver)[0] + "\n")


def parsers_in_process(path: Path, rounds: int) -> None:
    """``score_block`` over every block of ``path`` in this process, CPU seconds, rounds
    alternating between the two parsers of the block path: the columnar parser
    (``parse_canonical_batch``, the one ingest uses) and the streets-as-raw-text parser
    (``parse_canonical_block``, ``ofc score``'s). Prints each one's median and ratio, and
    checks that both print the same bytes."""
    import gc
    import time

    from pipeline.formats.source import read_raw_lines
    from pipeline.ingest import fast_canonical, fast_streets, score_lines
    from pipeline.records.rules_file import RulesResolver

    resolver = RulesResolver(search_directories=[path.parent])
    lines = list(read_raw_lines(path))
    blocks = [lines[start:start + score_lines.BLOCK_LINES]
              for start in range(0, len(lines), score_lines.BLOCK_LINES)]
    arms = {"columnar parser (before)": fast_canonical.parse_canonical_batch,
            "streets as raw text (now)": fast_streets.parse_canonical_block}
    seconds: dict[str, list[float]] = {name: [] for name in arms}
    texts: dict[str, str] = {}
    gc.freeze()
    gc.disable()
    chosen = score_lines.parse_canonical_block
    try:
        for _ in range(rounds):
            for name, parse in arms.items():
                score_lines.parse_canonical_block = parse
                start = time.process_time()
                texts[name] = "".join(score_lines.score_block(block, resolver).text
                                      for block in blocks)
                seconds[name].append(time.process_time() - start)
    finally:
        score_lines.parse_canonical_block = chosen
    baseline = statistics.median(seconds["columnar parser (before)"])
    print(f"score_block in one process over {len(lines):,} lines, CPU, median of {rounds} "
          f"alternating rounds, load average {os.getloadavg()[0]:.1f}:")
    for name, values in seconds.items():
        median = statistics.median(values)
        print(f"  {name:26} {median * 1000:7.0f} ms ({median / len(lines) * 1e6:5.1f} us a "
              f"line) {baseline / median:5.2f}x the columnar parser")
    print(f"  same output: {len(set(texts.values())) == 1}")


def hands_file(count: int, cache: Path) -> Path:
    """The cached JSON Lines file of ``count`` random pineapple hands."""
    from bench_ingest import deal_record

    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"score-pineapple-{count}.jsonl"
    if not path.exists():
        with open(f"{path}.tmp", "w", encoding="utf-8") as stream:
            for number in range(count):
                stream.write(json.dumps(deal_record(number), separators=(",", ":")) + "\n")
        os.replace(f"{path}.tmp", path)
    return path


def agreement(ours: Path, theirs: Path) -> tuple[int, int]:
    """Players whose foul and points agree between two outputs, and players compared."""
    agree = total = 0
    with open(ours, encoding="utf-8") as first, open(theirs, encoding="utf-8") as second:
        for left, right in zip(first, second, strict=True):
            for a, b in zip(json.loads(left)["players"], json.loads(right)["players"],
                            strict=True):
                total += 1
                agree += (a["foul"], a["points"], a["royalties"], a["fantasyland_cards"]) == (
                    b["foul"], b["points"], b["royalties"], b["fantasyland_cards"])
    return agree, total


def main() -> None:
    """Time every path, print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "ofc-bench")
    parser.add_argument("--no-scalar", action="store_true", help="skip the (slow) scalar path")
    parser.add_argument("--other-tree", type=lambda text: Path(text).resolve(), metavar="DIR",
                        help="also time `ofc score --jobs 1` and `--jobs 2` from another source "
                             "tree (say the code before a change: git archive COMMIT | tar -x -C "
                             "DIR)")
    parser.add_argument("--parsers", type=int, metavar="ROUNDS",
                        help="instead: time score_block in this process with each of the two "
                             "parsers, alternating, ROUNDS rounds")
    parser.add_argument("--baseline", nargs=2, metavar=("FILE", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--scalar", nargs=2, metavar=("FILE", "OUT"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.baseline:
        baseline_score(*arguments.baseline)
        return
    if arguments.scalar:
        scalar_score(*arguments.scalar)
        return
    from child_runs import Run, installed_environment, timed_run

    path = hands_file(arguments.hands, arguments.cache)
    if arguments.parsers:
        parsers_in_process(path, arguments.parsers)
        return
    environment = installed_environment(arguments.cache)
    python = sys.executable
    with tempfile.TemporaryDirectory() as folder:
        outputs = {name: str(Path(folder) / f"{name}.jsonl")
                   for name in ("baseline", "score", "score2", "score1", "other", "other2",
                                "scalar")}
        other_environment = None
        if arguments.other_tree is not None:
            other_environment = dict(environment, PYTHONPATH=str(arguments.other_tree))

        def commands_for(source: Path, out: dict[str, str]) -> dict[str, list[str]]:
            return {
                "baseline": [python, __file__, "--baseline", str(source), out["baseline"]],
                "score": [python, "-c", "import sys; from pipeline.cli import main; "
                          f"sys.stdout = open({out['score']!r}, 'w'); sys.exit(main())",
                          "score", str(source)],
                "score2": [python, "-c", "import sys; from pipeline.cli import main; "
                           f"sys.stdout = open({out['score2']!r}, 'w'); sys.exit(main())",
                           "score", "--jobs", "2", str(source)],
                "score1": [python, "-c", "import sys; from pipeline.cli import main; "
                           f"sys.stdout = open({out['score1']!r}, 'w'); sys.exit(main())",
                           "score", "--jobs", "1", str(source)],
            }

        # Warm-up on a few lines: the bytecode cache is written, the file cache filled.
        small = Path(folder) / "small.jsonl"
        with open(path, "rb") as stream:
            small.write_bytes(b"".join(islice(stream, 10)))
        path.read_bytes()
        def other_command(source: Path, jobs: int = 1) -> list[str]:
            name = "other" if jobs == 1 else "other2"
            return [python, "-c", "import sys; from pipeline.cli import main; "
                    f"sys.stdout = open({outputs[name]!r}, 'w'); sys.exit(main())",
                    "score", "--jobs", str(jobs), str(source)]

        for command in commands_for(small, outputs).values():
            timed_run(command, environment)
        if other_environment is not None:
            timed_run(other_command(small), other_environment, arguments.other_tree)
        commands = commands_for(path, outputs)
        runs: dict[str, list[Run]] = {name: [] for name in commands}
        if other_environment is not None:
            runs["other"] = []
            runs["other2"] = []
        loads = []
        for _ in range(arguments.repeats):
            for name, command in commands.items():
                runs[name].append(timed_run(command, environment))
            if other_environment is not None:
                runs["other"].append(timed_run(other_command(path), other_environment,
                                               arguments.other_tree))
                runs["other2"].append(timed_run(other_command(path, 2), other_environment,
                                                arguments.other_tree))
            loads.append(os.getloadavg()[0])
        if not arguments.no_scalar:
            runs["scalar"] = [timed_run([python, __file__, "--scalar", str(path),
                                         outputs["scalar"]], environment)]
        same = (Path(outputs["score"]).read_bytes() == Path(outputs["score1"]).read_bytes()
                == Path(outputs["score2"]).read_bytes())
        if other_environment is not None:
            same = same and Path(outputs["score"]).read_bytes() == Path(
                outputs["other"]).read_bytes() == Path(outputs["other2"]).read_bytes()
        if not arguments.no_scalar:
            same = same and Path(outputs["score"]).read_bytes() == Path(
                outputs["scalar"]).read_bytes()
        agree, total = agreement(Path(outputs["score"]), Path(outputs["baseline"]))
    baseline = statistics.median(run.wall for run in runs["baseline"])
    baseline_cpu = statistics.median(run.cpu for run in runs["baseline"])
    labels = {
        "baseline": "treys script (json + treys + Python)",
        "score": "ofc score (workers by idle CPUs)",
        "score2": "ofc score --jobs 2",
        "score1": "ofc score --jobs 1",
        "scalar": "scalar path (before; one run)",
        "other": "ofc score --jobs 1, other tree",
        "other2": "ofc score --jobs 2, other tree",
    }
    print(f"{arguments.hands:,} random pineapple hands ({path.stat().st_size / 1e6:.0f} MB), "
          f"median of {arguments.repeats}, load average {min(loads):.1f}-{max(loads):.1f} "
          f"on {os.cpu_count()} CPUs; every run a fresh process with its bytecode cached")
    print(f"{'path':38} {'wall s':>7} {'hands/s':>8} {'vs baseline':>11} {'per round':>9} "
          f"{'CPU s':>6} {'CPU vs baseline':>15}")
    for name, values in runs.items():
        seconds = statistics.median(run.wall for run in values)
        cpu = statistics.median(run.cpu for run in values)
        rounds = statistics.median(
            first.wall / run.wall for first, run in zip(runs["baseline"], values, strict=False))
        print(f"{labels[name]:38} {seconds:7.2f} {arguments.hands / seconds:8,.0f} "
              f"{baseline / seconds:10.2f}x {rounds:8.2f}x {cpu:6.2f} {baseline_cpu / cpu:14.2f}x")
    print("(vs baseline: the baseline's median wall time over this path's, higher is faster; "
          "per round: the median of the ratios of the runs made one after the other; "
          "CPU vs baseline: the same for CPU seconds of every process)")
    print(f"outputs identical (score, --jobs 2, --jobs 1"
          f"{', other tree --jobs 1 and 2' if arguments.other_tree else ''}"
          f"{', scalar' if not arguments.no_scalar else ''}): "
          f"{same}; baseline agrees with ofc score on foul, points, royalties and Fantasyland "
          f"for {agree:,} of {total:,} players")


if __name__ == "__main__":
    main()
