"""Benchmark: the rollout policy graded by itself (self-consistency) and the bots it separates.

Not a test. For each variant and each rollout policy (``--policies``, the baseline ``expert``
first), it simulates three-handed tables of every line-up of three of the policy, ``solid``,
``chaser`` and ``random`` (``--hands`` hands each, the same seeds for every policy: the same
deals), grades every decision of every player at the grader's defaults *with that policy as
the rollout policy* (bench_grading_bots.py's ``grade_variant``) and prints per bot:

* decisions, the **mistake share** (± its binomial standard error) and the **EV loss per
  decision** (± its standard error): the policy's own figures are its *self-consistency*
  (how often the grader calls its own rollout policy wrong, and what that costs);
* the **separation**: random's loss and mistake share over the policy's (the issue asks ≥ 3×),
  and whether solid lies between;
* the gap to the policy's own play per decision, and the chaser's mistakes by type (its real
  leaks: chasing Fantasyland, too strong a top);
* the policy's own figures by street.

Each (variant, policy) is graded in its own process (``--jobs``); the figures depend only on
the seeds and the settings, never on the load::

    .venv/bin/python tests/benchmarks/bench_policy_grading.py [--hands 20] [--seed 41]
        [--variants pineapple,2-7-pineapple,classic] [--policies expert,learned] [--jobs 2]
        (a policy NAME=FILE: the learned bot with the weights in FILE)
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_grading_bots import Losses, grade_variant, ratio  # noqa: E402
from bench_policy_rounds import policy_name  # noqa: E402

from pipeline.analysis.grade import GradeSettings  # noqa: E402
from pipeline.rules.game import Variant  # noqa: E402

OTHERS = ("solid", "chaser", "random")


def share(count: int, total: int) -> tuple[float, float]:
    """A share and its binomial standard error."""
    if not total:
        return (math.nan, math.nan)
    value = count / total
    return value, math.sqrt(max(value * (1 - value), 1e-12) / total)


def _grade(job: tuple[str, str, int, int]) -> tuple[str, str, dict, float]:
    variant_name, policy, hands, seed = job
    settings = GradeSettings(policy=policy)
    losses, seconds = grade_variant(Variant(variant_name), hands, seed, settings,
                                    bots=(policy, *OTHERS))
    figures = {}
    for bot, entry in losses.items():
        figures[bot] = {
            "decisions": len(entry.values), "loss": entry.mean_se(),
            "mistakes": entry.mistakes, "mistake_share": share(entry.mistakes, len(entry.values)),
            "gap": Losses(entry.gaps).mean_se(),
            "by_street": {street: {"decisions": len(values), "loss": Losses(values).mean_se(),
                                   "mistakes": entry.mistakes_by_street.get(street, 0)}
                          for street, values in sorted(entry.by_street.items())},
            "mistake_types": dict(entry.mistake_types),
        }
    return variant_name, policy, figures, seconds


def main() -> None:
    """Grade every (variant, policy) and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=20, help="hands per line-up")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--variants", default="pineapple,2-7-pineapple,classic")
    parser.add_argument("--policies", default="expert,learned",
                        help="bot names, or NAME=FILE: the learned bot with FILE's weights")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    arguments = parser.parse_args()
    policies = [policy_name(text) for text in arguments.policies.split(",")]
    variants = [Variant.parse(name).value for name in arguments.variants.split(",")]
    jobs = [(variant, policy, arguments.hands, arguments.seed)
            for variant in variants for policy in policies]
    started = time.perf_counter()
    context = multiprocessing.get_context("fork")
    with context.Pool(max(1, min(arguments.jobs, len(jobs)))) as pool:
        results = pool.map(_grade, jobs, chunksize=1)
    figures: dict[str, dict[str, dict]] = {}
    cpu = 0.0
    for variant, policy, by_bot, seconds in results:
        figures.setdefault(variant, {})[policy] = by_bot
        cpu += seconds
    print(f"grader at its defaults ({GradeSettings().rollouts} selection + "
          f"{GradeSettings().evaluation_samples} evaluation rollouts, contender race), each "
          f"policy grading its own table; {arguments.hands} three-handed hands per line-up, "
          f"seed {arguments.seed}; {cpu:.0f} CPU-s of grading, "
          f"{time.perf_counter() - started:.0f} s wall")

    def cell(entry: dict) -> str:
        (loss, loss_se), (part, part_se) = entry["loss"], entry["mistake_share"]
        return (f"{part:.0%} ± {part_se:.0%}, {loss:.2f} ± {loss_se:.2f} "
                f"({entry['decisions']})")

    print("\nMistake share and EV loss per decision (decisions), each bot graded with the "
          "policy of its row as the rollout policy:\n")
    print("| variant | rollout policy | the policy itself | solid | chaser | random | "
          "random / policy: loss | random / policy: mistakes | solid between |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for variant, by_policy in figures.items():
        for policy, by_bot in by_policy.items():
            own, solid, random_bot = by_bot[policy], by_bot["solid"], by_bot["random"]
            loss_ratio = ratio(random_bot["loss"], own["loss"])
            mistake_ratio = ratio(random_bot["mistake_share"], own["mistake_share"])
            between = all(own[key][0] <= solid[key][0] <= random_bot[key][0]
                          for key in ("loss", "mistake_share"))
            print(f"| {variant} | {policy} | {cell(own)} | {cell(solid)} | "
                  f"{cell(by_bot['chaser'])} | {cell(random_bot)} | "
                  f"{loss_ratio[0]:.1f}× ± {loss_ratio[1]:.1f} | "
                  f"{mistake_ratio[0]:.1f}× ± {mistake_ratio[1]:.1f} | "
                  f"{'yes' if between else 'no'} |")
    print("\nThe policy's own decisions by street: mistake share, EV loss per decision:\n")
    print("| variant | rollout policy | street | decisions | mistakes | EV loss / decision |")
    print("|---|---|---:|---:|---:|---:|")
    for variant, by_policy in figures.items():
        for policy, by_bot in by_policy.items():
            for street, entry in by_bot[policy]["by_street"].items():
                loss, loss_se = entry["loss"]
                print(f"| {variant} | {policy} | {street} | {entry['decisions']} | "
                      f"{entry['mistakes'] / max(entry['decisions'], 1):.0%} | "
                      f"{loss:.2f} ± {loss_se:.2f} |")
    print("\nGap to the rollout policy's own play per decision, and the chaser's mistakes by "
          "type:\n")
    print("| variant | rollout policy | solid | chaser | random | chaser's mistakes by type |")
    print("|---|---|---:|---:|---:|---|")
    for variant, by_policy in figures.items():
        for policy, by_bot in by_policy.items():
            gaps = " | ".join("{:.2f} ± {:.2f}".format(*by_bot[bot]["gap"]) for bot in OTHERS)
            types = ", ".join(f"{name} {count}" for name, count in sorted(
                by_bot["chaser"]["mistake_types"].items(), key=lambda item: -item[1]))
            print(f"| {variant} | {policy} | {gaps} | {types or '–'} |")
    if arguments.json:
        arguments.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
