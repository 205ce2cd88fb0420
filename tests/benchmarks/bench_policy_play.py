"""Benchmark: the rollout policy's fast path against its plain path, on a grading run's own calls.

Not a test. Simulates ``--hands`` three-handed Pineapple hands (:func:`bench_analysis.build`),
grades the player sitting in every hand in this process (one job) while recording every street
the rollout policy plays (:meth:`pipeline.analysis.policy.ColumnPolicy.play_street`: the boards,
the dealt cards), then decides each recorded street twice, alternately, in the same run: with
the plain path (every option built by :meth:`StreetRows.options`, scored by
:meth:`HeuristicBot.choose`) and with the fast path (:meth:`HeuristicBot.choose_street`: only
the options the bot considers, gathered from packed tables). It checks that both pick the same
pattern on every board and prints CPU seconds of each, per street (by cards already placed)
and in total, with the ratio::

    .venv/bin/python tests/benchmarks/bench_policy_play.py [--hands 8] [--repeat 3]

Only the choice is timed (the rows' states after the street are the same code in both paths).
A bot with a compiled whole-street player (the learned policy's
:meth:`LearnedBot.play_boards`, what the rollouts run) has no separate fast path: that player
is timed instead (``whole``), rows after the street included, and must pick as the plain path.
The machine is shared and noisy: the figures are medians of ``--repeat`` passes, both paths
measured in each pass. A policy that reads the live cards (the learned one) gets each board's
cards and the cards its player has seen, as in the grader.

With ``--baseline COMMIT`` it compares the fast path of two codes instead (for a bot with a
whole-street player, that player, rows after the street included): the recorded streets are
decided by the code of ``COMMIT`` (exported with ``git archive``) and by this working tree,
each in a child process, alternately for ``--repeat`` passes; it counts the boards on which
their picks differ and prints each code's CPU seconds (medians) and the ratio::

    .venv/bin/python tests/benchmarks/bench_policy_play.py --hands 4 --baseline 9dbedfe
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_grading_speed import build, export  # noqa: E402

from pipeline.analysis import policy as policy_module  # noqa: E402
from pipeline.analysis.grade import GradeSettings  # noqa: E402
from pipeline.analysis.policy import BoardBatch  # noqa: E402
from pipeline.analysis.runner import analyze_database  # noqa: E402
from pipeline.simulate.bots import pattern_subsets, street_patterns  # noqa: E402
from pipeline.simulate.dealer import StreetRows  # noqa: E402


def record(hands: int, seed: int) -> list[tuple]:
    """Every street the policy plays while one player's decisions are graded: (policy, keys,
    counts, suits, dealt, discards, cards, seen) copies, in order."""
    calls: list[tuple] = []
    original = policy_module.ColumnPolicy.play_street

    def spy(self, boards, dealt, discards, uniforms=None):  # noqa: ANN001, ANN202
        calls.append((self, boards.keys.copy(), boards.counts.copy(), boards.suits.copy(),
                      np.ascontiguousarray(dealt, dtype=np.int64), discards,
                      boards.cards.copy(), boards.seen.copy()))
        return original(self, boards, dealt, discards, uniforms)

    with tempfile.TemporaryDirectory(prefix="bench-policy-play-") as folder:
        database, player = build(Path(folder), hands, seed)
        policy_module.ColumnPolicy.play_street = spy
        try:
            analyze_database(str(database), player=player, settings=GradeSettings(), jobs=1)
        finally:
            policy_module.ColumnPolicy.play_street = original
    return calls


def decide(call: tuple, fast: bool) -> tuple[np.ndarray, float]:
    """One recorded street decided in chunks as the policy does; the picks and CPU seconds."""
    policy, keys, counts, suits, dealt, discards, cards, seen = call
    size = dealt.shape[1]
    patterns, subsets = street_patterns(size, discards), pattern_subsets(size, discards)
    chunk = max(1, policy_module.OPTIONS_PER_CHUNK // len(patterns))
    picks = []
    started = time.process_time()
    for start in range(0, len(dealt), chunk):
        part = slice(start, start + chunk)
        street = StreetRows(dealt[part], keys[part], counts[part], suits[part],
                            cards[part] if policy.live else None, seen[part])
        if fast:
            picks.append(policy.bot.choose_street(street, policy.variant, patterns, subsets,
                                                  policy.outlooks))
        else:
            options = street.options(policy.variant, patterns, subsets, policy.outlooks)
            picks.append(policy.bot.choose(options, np.zeros(part.stop - part.start)))
    return np.concatenate(picks), time.process_time() - started


def play_whole(call: tuple) -> tuple[np.ndarray, float]:
    """One recorded street played by the bot's compiled whole-street player
    (:meth:`LearnedBot.play_boards`, what the rollouts run for the learned policy: rows,
    live fields, pick and the boards after it) on copies of the boards; the picks and CPU
    seconds."""
    policy, keys, counts, suits, dealt, discards, cards, seen = call
    boards = BoardBatch(cards.copy(), counts.copy(), keys.copy(), suits.copy(), seen.copy())
    started = time.process_time()
    picks = policy.bot.play_boards(boards, dealt, discards, policy.variant, policy.outlooks,
                                   policy.live)
    return picks, time.process_time() - started


CHILD = r"""
import json, pickle, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
from pipeline.analysis import policy as policy_module
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD
from pipeline.simulate.bots import pattern_subsets, street_patterns
from pipeline.simulate.dealer import StreetRows
with open(sys.argv[2], "rb") as stream:
    calls = pickle.load(stream)
policies = {}
spent = {}
picked = []
for name, variant, keys, counts, suits, dealt, discards, cards, seen in calls[:1]:
    # warm-up, not timed: a compiled policy loads (or compiles) its machine code on first use
    warm = policy_module.ColumnPolicy(name, Variant(variant), STANDARD)
    warm.play_street(policy_module.BoardBatch(cards[:1].copy(), counts[:1].copy(),
                                              keys[:1].copy(), suits[:1].copy(),
                                              seen[:1].copy()), dealt[:1], discards)
for name, variant, keys, counts, suits, dealt, discards, cards, seen in calls:
    policy = policies.get((name, variant))
    if policy is None:
        policy = policies[name, variant] = policy_module.ColumnPolicy(name, Variant(variant),
                                                                      STANDARD)
    size = dealt.shape[1]
    patterns, subsets = street_patterns(size, discards), pattern_subsets(size, discards)
    chunk = max(1, policy_module.OPTIONS_PER_CHUNK // len(patterns))
    if hasattr(policy.bot, "play_boards"):  # a compiled whole-street player (rows after too)
        boards = policy_module.BoardBatch(cards.copy(), counts.copy(), keys.copy(),
                                          suits.copy(), seen.copy())
        started = time.process_time()
        picks = policy.bot.play_boards(boards, dealt, discards, policy.variant,
                                       policy.outlooks, policy.live)
        picked.append(np.asarray(picks, dtype=np.int64))
    else:
        started = time.process_time()
        for start in range(0, len(dealt), chunk):
            part = slice(start, start + chunk)
            street = StreetRows(dealt[part], keys[part], counts[part], suits[part],
                                cards[part] if policy.live else None, seen[part])
            picks = policy.bot.choose_street(street, policy.variant, patterns, subsets,
                                             policy.outlooks)
            picked.append(np.asarray(picks, dtype=np.int64))
    placed = str(int(counts[0].sum()))
    spent[placed] = spent.get(placed, 0.0) + time.process_time() - started
np.save(sys.argv[3], np.concatenate(picked))
print(json.dumps({"spent": spent}))
"""


def against_baseline(calls: list[tuple], commit: str, repeat: int) -> None:
    """Decide the recorded streets with the fast path of ``commit`` and of this working tree,
    each in a child process, alternately; print each code's CPU seconds and the ratio."""
    folder = Path(tempfile.mkdtemp(prefix="bench-policy-play-"))
    try:
        (folder / "baseline").mkdir()
        codes = {"baseline": export(commit, folder / "baseline"), "this code": REPO}
        streets = folder / "streets.pickle"
        with open(streets, "wb") as stream:
            pickle.dump([(policy.name, policy.variant.value, *rest) for policy, *rest in calls],
                        stream)
        times: dict[str, list[dict[str, float]]] = {name: [] for name in codes}
        picks: dict[str, np.ndarray] = {}
        for number in range(repeat):
            order = list(codes.items()) if number % 2 == 0 else list(codes.items())[::-1]
            for name, code in order:
                saved = folder / f"picks-{name.replace(' ', '-')}.npy"
                output = subprocess.run(
                    [sys.executable, "-c", CHILD, str(code), str(streets), str(saved)],
                    check=True, capture_output=True, text=True, cwd=str(code),
                    env={**os.environ, "PYTHONPATH": str(code)}).stdout
                result = json.loads(output.strip().splitlines()[-1])
                times[name].append(result["spent"])
                picks[name] = np.load(saved)
        differ = int((picks["baseline"] != picks["this code"]).sum())
        print(f"picks differ on {differ:,} of {len(picks['baseline']):,} boards "
              f"({differ / len(picks['baseline']):.4%}); CPU seconds of the fast path, median of "
              f"{repeat} passes (baseline {commit}, measured alternately with this code):")
        for placed in sorted(times["baseline"][0], key=int):
            old = statistics.median(run[placed] for run in times["baseline"])
            new = statistics.median(run[placed] for run in times["this code"])
            print(f"  {int(placed):2d} cards placed: baseline {old:6.3f} s, this code "
                  f"{new:6.3f} s: {old / new:.2f}x")
        old = statistics.median(sum(run.values()) for run in times["baseline"])
        new = statistics.median(sum(run.values()) for run in times["this code"])
        print(f"total: baseline {old:.3f} s, this code {new:.3f} s: {old / new:.2f}x "
              f"(load average now {' '.join(f'{load:.1f}' for load in os.getloadavg())})")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    """Record a grading run's streets, decide them both ways, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", metavar="COMMIT", default=None,
                        help="compare this code's fast path with that commit's")
    arguments = parser.parse_args()
    calls = [call for call in record(arguments.hands, arguments.seed)
             if hasattr(call[0].bot, "choose_street") or hasattr(call[0].bot, "play_boards")]
    boards = sum(len(call[4]) for call in calls)
    print(f"{len(calls):,} streets played by the policy ({boards:,} boards) while grading one "
          f"player's decisions in {arguments.hands} hands (seed {arguments.seed}; policies "
          f"{', '.join(sorted({call[0].name for call in calls}))}; load average "
          f"{' '.join(f'{load:.1f}' for load in os.getloadavg())})")
    if arguments.baseline:
        against_baseline(calls, arguments.baseline, arguments.repeat)
        return
    times: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for _ in range(arguments.repeat):
        spent: dict[tuple[str, str, int], float] = defaultdict(float)
        for call in calls:
            name, placed = call[0].name, int(call[2][0].sum())
            plain, plain_seconds = decide(call, fast=False)
            spent[("plain", name, placed)] += plain_seconds
            if hasattr(call[0].bot, "choose_street"):
                fast, fast_seconds = decide(call, fast=True)
                if not (plain == fast).all():
                    raise SystemExit(f"the fast path picked differently on a street with "
                                     f"{placed} cards placed")
                spent[("fast", name, placed)] += fast_seconds
            if hasattr(call[0].bot, "play_boards"):
                played, whole_seconds = play_whole(call)
                if not (played == plain).all():
                    raise SystemExit("the whole-street player picked differently on a street "
                                     f"with {placed} cards placed")
                spent[("whole", name, placed)] += whole_seconds
        for key, seconds in spent.items():
            times[key].append(seconds)
    print("same picks on every board; CPU seconds, median of "
          f"{arguments.repeat} passes, per policy (plain path = the baseline, measured beside "
          "it; whole: the compiled whole-street player the rollouts run, rows after the street "
          "included):")
    for name in sorted({policy for _, policy, _ in times}):
        paths = [path for path in ("plain", "fast", "whole") if (path, name) in
                 {(key[0], key[1]) for key in times}]
        print(f"{name}:")
        for placed in sorted({placed for _, policy, placed in times if policy == name}):
            medians = {path: statistics.median(times[(path, name, placed)]) for path in paths}
            print(f"  {placed:2d} cards placed: " + ", ".join(
                f"{path} {seconds:6.3f} s ({medians['plain'] / seconds:.2f}x)"
                for path, seconds in medians.items()))
        totals = {path: statistics.median([
            sum(seconds[index] for (kind, policy, _), seconds in times.items()
                if kind == path and policy == name) for index in range(arguments.repeat)])
            for path in paths}
        print("  total: " + ", ".join(f"{path} {seconds:.3f} s ({totals['plain'] / seconds:.2f}x)"
                                      for path, seconds in totals.items()))


if __name__ == "__main__":
    main()
