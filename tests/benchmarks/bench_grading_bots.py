"""Benchmark: what the grades say about the simulated players, the rollout policy included.

Not a test. For each variant it simulates three-handed tables of the ``expert``, ``solid``, ``chaser``
and ``random`` bots, every line-up of three (``--hands`` each: every bot sits out once, so each
faces the same mix of opponents), grades every decision of every player with the
grader (:class:`~pipeline.analysis.grade.GradeSettings` at its defaults unless ``--rollouts``)
and prints the mean EV loss per decision of each bot, ± its standard error.

Why the expert bot: the grader's rollout policy *is* the expert bot, so the loss of a play is
measured against a one-step improvement over that policy (the best play now, then the policy).
The expert's own loss is the gain of that one-step lookahead over the policy itself: a **floor**
every player is measured from. The table therefore also gives, per variant,

* ``random / solid``: the plain ratio of the mean losses (the issue's target: ≥ 3);
* ``above floor``: ``(random − expert) / (solid − expert)``, the ratio of the losses above the
  floor, with its standard error (delta method, the bots' decisions taken as independent).

and a second table: each bot's **gap to the policy's own play** per decision (the rollout
policy's play in the same spot against the play made, :attr:`DecisionGrade.policy_gap`; no
floor: the expert's own plays score 0) and ``random / solid`` of those gaps.

Every decision is graded on its own seeds: the figures depend only on ``--seed`` and the
settings, not on the load of the machine (CPU seconds are printed for information)::

    .venv/bin/python tests/benchmarks/bench_grading_bots.py [--hands 20] [--seed 31]
        [--variants pineapple,2-7-pineapple,classic] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_grading import simulated_views  # noqa: E402

from pipeline.analysis.decisions import decision_at  # noqa: E402
from pipeline.analysis.grade import GradeSettings, grade_decision  # noqa: E402
from pipeline.rules.game import Variant  # noqa: E402
from pipeline.rules.ruleset import STANDARD  # noqa: E402
from pipeline.simulate.players import player_pool  # noqa: E402
from pipeline.simulate.simulation import SimulationConfig  # noqa: E402

BOTS = ("expert", "solid", "chaser", "random")


@dataclass(slots=True)
class Losses:
    """The graded losses of one bot in one variant."""

    values: list[float] = field(default_factory=list)
    gaps: list[float] = field(default_factory=list)  # to the policy's own play
    gaps_by_street: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    mistakes: int = 0
    by_street: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    mistakes_by_street: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    mistake_types: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def mean_se(self) -> tuple[float, float]:
        """Mean loss per decision and its standard error."""
        count = len(self.values)
        if count < 2:
            return (math.nan, math.nan)
        mean = sum(self.values) / count
        spread = math.sqrt(sum((value - mean) ** 2 for value in self.values) / (count - 1))
        return mean, spread / math.sqrt(count)


def ratio(numerator: tuple[float, float], denominator: tuple[float, float]) -> tuple[float, float]:
    """``a / b`` and its standard error by the delta method (independent estimates)."""
    (a, a_se), (b, b_se) = numerator, denominator
    if b <= 0:
        return (math.nan, math.nan)
    value = a / b
    return value, abs(value) * math.hypot(a_se / a if a else 0.0, b_se / b)


def tables(bots: tuple[str, ...] = BOTS) -> list[tuple[str, ...]]:
    """The three-handed line-ups: every bot sits out once, so each faces the same mix."""
    return [tuple(bot for bot in bots if bot != out) for out in reversed(bots)]


def grade_variant(variant: Variant, hands: int, seed: int, settings: GradeSettings,
                  bots: tuple[str, ...] = BOTS) -> tuple[dict[str, Losses], float]:
    """Simulate and grade one variant (``hands`` per line-up of three of ``bots``): losses per
    bot and the CPU seconds spent grading."""
    losses: dict[str, Losses] = defaultdict(Losses)
    seconds = 0.0
    for number, line_up in enumerate(tables(bots)):
        config = SimulationConfig(hands=hands, seed=seed + number, variants=(variant,),
                                  players=3, pool_size=3, bots=line_up)
        bot_of = {player.name: player.bot for player in player_pool(3, line_up)}
        views = simulated_views(config, prefix="bench-grading-bots-")
        decisions = [decision_at(view, seat, street) for view in views
                     for seat, play in enumerate(view.seats) if not play.fantasyland
                     for street in range(len(play.streets))]
        started = time.process_time()
        wall = time.perf_counter()
        for count, decision in enumerate(decisions, 1):
            grade = grade_decision(decision, STANDARD, settings)
            if grade is not None:
                entry = losses[bot_of[decision.player]]
                entry.values.append(grade.ev_loss)
                if grade.policy_gap is not None:
                    entry.gaps.append(grade.policy_gap)
                    entry.gaps_by_street[decision.street_number].append(grade.policy_gap)
                entry.mistakes += grade.mistake
                if grade.mistake:
                    entry.mistakes_by_street[decision.street_number] += 1
                    entry.mistake_types[grade.mistake_type or "?"] += 1
                entry.by_street[decision.street_number].append(grade.ev_loss)
            if count % 100 == 0 or count == len(decisions):
                print(f"  {variant.value} {'/'.join(line_up)}: {count}/{len(decisions)} decisions "
                      f"({time.perf_counter() - wall:.0f} s, load {os.getloadavg()[0]:.1f})",
                      file=sys.stderr, flush=True)
        seconds += time.process_time() - started
    return losses, seconds


def main() -> None:
    """Grade each variant's simulated hands and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=20, help="hands per line-up")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--variants", default="pineapple,2-7-pineapple,classic")
    parser.add_argument("--rollouts", type=int, default=None)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    arguments = parser.parse_args()
    settings = GradeSettings()
    if arguments.rollouts is not None:
        settings = replace(settings, rollouts=arguments.rollouts)
    print(f"grader: policy {settings.policy}, {settings.rollouts} selection + "
          f"{settings.evaluation_samples} evaluation rollouts; {arguments.hands} three-handed "
          f"hands per line-up of three of {', '.join(BOTS)}, seed {arguments.seed}")
    print("\n| variant | expert (the policy: floor) | solid | chaser | random | random / solid | "
          "above floor: (random − expert) / (solid − expert) |\n"
          "|---|---:|---:|---:|---:|---:|---:|")
    figures: dict[str, dict] = {}
    rows = []
    for name in arguments.variants.split(","):
        variant = Variant(name.strip())
        losses, seconds = grade_variant(variant, arguments.hands, arguments.seed, settings)
        estimates = {bot: losses[bot].mean_se() for bot in BOTS}
        plain = ratio(estimates["random"], estimates["solid"])
        floor = estimates["expert"]
        above_random = (estimates["random"][0] - floor[0],
                        math.hypot(estimates["random"][1], floor[1]))
        above_solid = (estimates["solid"][0] - floor[0], math.hypot(estimates["solid"][1], floor[1]))
        above = ratio(above_random, above_solid)
        cells = " | ".join(f"{mean:.2f} ± {se:.2f} ({len(losses[bot].values)})"
                           for bot, (mean, se) in estimates.items())
        row = (f"| {variant.value} | {cells} | {plain[0]:.1f}× ± {plain[1]:.1f} | "
               f"{above[0]:.1f}× ± {above[1]:.1f} |")
        rows.append(row)
        print(row, flush=True)
        streets = sorted({street for bot in BOTS for street in losses[bot].by_street})
        for street in streets:
            cells = " | ".join(
                "{:.2f} ± {:.2f} ({})".format(*Losses(losses[bot].by_street[street]).mean_se(),
                                              len(losses[bot].by_street[street]))
                for bot in BOTS)
            row = f"| {variant.value}, street {street} | {cells} | | |"
            rows.append(row)
            print(row, flush=True)
        figures[variant.value] = {
            "bots": {bot: {"mean": mean, "se": se, "decisions": len(losses[bot].values),
                           "mistakes": losses[bot].mistakes}
                     for bot, (mean, se) in estimates.items()},
            "by_street": {bot: {street: Losses(values).mean_se()
                                for street, values in losses[bot].by_street.items()}
                          for bot in BOTS},
            "random_over_solid": plain, "above_floor": above, "cpu_seconds": seconds,
        }
        gap_estimates = {bot: Losses(losses[bot].gaps).mean_se() for bot in BOTS}
        figures[variant.value]["gaps"] = {
            bot: (*gap_estimates[bot], len(losses[bot].gaps)) for bot in BOTS}
        figures[variant.value]["gap_random_over_solid"] = ratio(gap_estimates["random"],
                                                                gap_estimates["solid"])
        streets = sorted({street for bot in BOTS for street in losses[bot].gaps_by_street})
        figures[variant.value]["gaps_by_street"] = {
            street: {bot: (*Losses(losses[bot].gaps_by_street[street]).mean_se(),
                           len(losses[bot].gaps_by_street[street])) for bot in BOTS}
            for street in streets}
    print("\n" + "\n".join(rows))
    print("\n| variant | gap to the policy's play: expert | solid | chaser | random | "
          "random / solid |\n|---|---:|---:|---:|---:|---:|")
    for name, entry in figures.items():
        gaps = entry["gaps"]
        cells = " | ".join(f"{mean:.2f} ± {se:.2f} ({count})"
                           for mean, se, count in (gaps[bot] for bot in BOTS))
        value, error = entry["gap_random_over_solid"]
        print(f"| {name} | {cells} | {value:.1f}× ± {error:.1f} |")
        for street, by_bot in sorted(entry["gaps_by_street"].items()):
            cells = " | ".join("{:.2f} ± {:.2f} ({})".format(*by_bot[bot]) for bot in BOTS)
            print(f"| {name}, street {street} | {cells} | |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    if arguments.json:
        arguments.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
