"""Benchmark: how far off are the grades? The grader at its settings against a reference.

Not a test. Over a fixed set of decisions from simulated hands (3-player Pineapple by default,
players solid, chaser and random so that every street and situation comes up), it grades every
decision twice:

* the **grader under test**: :class:`~pipeline.analysis.grade.GradeSettings` at its defaults
  (``--policy`` and ``--rollouts`` change them);
* the **reference**: the same decisions with 50× the rollouts (selection and evaluation) and the
  stronger rollout policy (``--reference-policy``, default ``expert``).

and prints, by street and by situation (the reference's):

* **agreement**: the grader's best play is the reference's best play (and, looser, is within
  0.25 points of it by the reference's values);
* **MAE**: the mean absolute difference of the EV loss of the play made;
* **false mistakes**: called a mistake but not one by the reference (share of the grader's
  mistakes), and **missed mistakes**: a reference mistake the grader did not call (share of the
  reference's mistakes);
* **CPU-s per decision** of the grader (process time, one process);
* the same figures for the **old estimator** (the loss read off the same samples that chose the
  best play, the winner's curse: the named baseline, measured in the same run);
* **reference ties**: of the disagreements, how many the reference cannot separate (its best
  play and the grader's measured afresh on the reference's evaluation samples, paired, differ
  by less than 1.96 SEs): an extra column beside the strict agreement, never instead of it;
  ``--show-disagreements`` lists every disagreement (the reference's top two plays with SEs,
  the fresh gap, the grader's values and sample counts);
* with ``--cpu-baseline``, the CPU of the grader against 600 + 1,000 rollouts without the
  contender race (the defaults before it), each decision graded both ways in turn so that both
  see the same load.

The reference is the expensive part (minutes per street on the 2-core machine); it is kept in
``--cache`` (JSON, keyed by the decision set and the reference settings), so comparing grader
settings reruns only the grader::

    .venv/bin/python tests/benchmarks/bench_grading.py [--per-street 30] [--policy solid]
        [--reference-policy expert] [--cache /tmp/bench-grading-reference.json]
        [--contenders 3] [--race-to 2400] [--evaluation-se 0.45] [--cpu-baseline]
        [--show-disagreements] [--seed 17]

Goals (issue 16): agreement ≥ 90 % on streets 3-5 and ≥ 75 % on streets 1-2; MAE ≤ 0.25
points; false-mistake rate ≤ 5 %.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import NormalDist

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from pipeline import store  # noqa: E402
from pipeline.analysis import grade as grade_module  # noqa: E402
from pipeline.analysis.decisions import (  # noqa: E402
    Decision,
    HandView,
    decision_at,
    load_hands,
    select_hands,
)
from pipeline.analysis.grade import DecisionGrade, GradeSettings, grade_decision  # noqa: E402
from pipeline.analysis.rollout import EVALUATION, Rollouts  # noqa: E402
from pipeline.ingest.driver import ingest_paths  # noqa: E402
from pipeline.rules.game import Variant  # noqa: E402
from pipeline.rules.ruleset import STANDARD  # noqa: E402
from pipeline.simulate.simulation import SimulationConfig, simulate  # noqa: E402

NEAR = 0.25
"""Points within which a best play counts as agreeing with the reference's (looser figure)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one grading run says about one decision."""

    best: int
    loss: float
    mistake: bool
    exact: bool
    situation: str
    values: tuple[float, ...]  # per alternative: diff against the play made (selection samples)
    ses: tuple[float, ...]  # their standard errors (-1: undefined)
    samples: tuple[int, ...]  # selection samples per alternative (fewer: stopped by racing)
    seconds: float
    old_best: int
    old_loss: float
    old_mistake: bool


def simulated_views(config: SimulationConfig, prefix: str = "bench-grading-") -> list[HandView]:
    """Simulate ``config``'s hands, ingest them into a new database in a temporary folder and
    read every hand back as the grader sees it."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    source = folder / "hands.jsonl"
    with open(source, "wb") as stream:
        for output in simulate(config):
            stream.write(output.lines)
    database = folder / "hands.duckdb"
    ingest_paths([source], database)
    connection = store.connect(database, read_only=True)
    try:
        return load_hands(connection, select_hands(connection))
    finally:
        connection.close()


def decisions(hands: int, seed: int, per_street: int, variant: Variant) -> list[Decision]:
    """A fixed set of decisions: simulated hands (solid, chaser, random), ``per_street`` per street."""
    views = simulated_views(SimulationConfig(hands=hands, seed=seed, variants=(variant,), players=3,
                                             pool_size=3, bots=("solid", "chaser", "random")))
    by_street: dict[int, list[Decision]] = defaultdict(list)
    for view in views:
        for seat, play in enumerate(view.seats):
            if play.fantasyland:
                continue
            for street in range(len(play.streets)):
                by_street[street].append(decision_at(view, seat, street))
    chosen: list[Decision] = []
    pick = random.Random(seed)
    for street in sorted(by_street):
        pool = by_street[street]
        pick.shuffle(pool)
        kept = [decision for decision in pool if len(decision.alternatives().alternatives) > 1]
        chosen.extend(kept[:per_street])
    return chosen


def verdict(decision: Decision, settings: GradeSettings) -> Verdict | None:
    """Grade one decision; the old estimator's verdict read off the same selection samples."""
    started = time.process_time()
    grade = grade_decision(decision, STANDARD, settings)
    seconds = time.process_time() - started
    if grade is None:
        return None
    return Verdict(grade.best, grade.ev_loss, grade.mistake, grade.exact, grade.situation,
                   tuple(tally.diff for tally in grade.tallies),
                   tuple(tally.diff_se if math.isfinite(tally.diff_se) else -1.0
                         for tally in grade.tallies),
                   tuple(tally.samples for tally in grade.tallies), seconds, *_old(grade))


def _old(grade: DecisionGrade) -> tuple[int, float, bool]:
    """The estimator before issue 16: the largest mean difference on the selection samples, its
    SE from the same samples, a Bonferroni threshold over the alternatives."""
    chosen = grade.chosen
    full = grade.tallies[chosen].samples
    best, loss = chosen, 0.0
    for index, tally in enumerate(grade.tallies):
        if index != chosen and tally.samples >= full and tally.diff > loss:
            best, loss = index, tally.diff
    if grade.exact:
        return best, loss, loss > 1e-9
    se = grade.tallies[best].diff_se if best != chosen else 0.0
    z = max(2.0, NormalDist().inv_cdf(1 - grade.settings.alpha / max(1, len(grade.tallies) - 1)))
    return best, loss, best != chosen and loss > z * se


def _key(decision: Decision) -> str:
    return f"{decision.hand.hand_id}|{decision.player}|{decision.street_number}"


def reference_verdicts(chosen: list[Decision], settings: GradeSettings, cache: Path,
                       tag: str) -> dict[str, dict]:
    """The reference's verdicts, from the cache when it has them."""
    stored: dict[str, dict] = {}
    if cache.exists():
        stored = json.loads(cache.read_text()).get(tag, {})
    missing = [decision for decision in chosen if _key(decision) not in stored]
    started = time.perf_counter()
    for number, decision in enumerate(missing, 1):
        result = verdict(decision, settings)
        if result is not None:
            stored[_key(decision)] = {
                "best": result.best, "loss": result.loss, "mistake": result.mistake,
                "exact": result.exact, "situation": result.situation,
                "values": list(result.values), "ses": list(result.ses),
                "samples": list(result.samples), "seconds": result.seconds,
            }
        if number % 10 == 0 or number == len(missing):
            print(f"  reference {number}/{len(missing)} ({time.perf_counter() - started:.0f} s)",
                  file=sys.stderr, flush=True)
            everything = json.loads(cache.read_text()) if cache.exists() else {}
            everything[tag] = stored
            cache.write_text(json.dumps(everything))
    return stored


def reference_gap(decision: Decision, reference: GradeSettings, entry: dict, first: int,
                  second: int, cache: dict[str, list[float]]) -> tuple[float, float]:
    """``x_first − x_second`` by the reference and its SE: exact when the reference enumerated the
    decision, else on the reference's *evaluation* stream (``reference.evaluation_samples``
    fresh samples, paired; independent of both selections, so no winner's curse)."""
    if entry["exact"]:
        return entry["values"][first] - entry["values"][second], 0.0
    key = f"{_key(decision)}|{first}|{second}"
    if key not in cache:
        items = decision.alternatives().alternatives
        rollouts = Rollouts(decision, STANDARD, 0, reference.evaluation_samples, reference.seed,
                            reference.policy, reference.fantasyland_value, stream=EVALUATION)
        values = rollouts.values([items[first], items[second]])
        gaps = values[0] - values[1]
        cache[key] = [float(gaps.mean()), float(gaps.std(ddof=1) / math.sqrt(len(gaps)))]
    mean, se = cache[key]
    return mean, se


DISAGREEMENT_HEADER = (
    "| street | situation | plays | reference: best, 2nd (diff ± SE vs the play made) | "
    "reference: best − grader's (fresh samples) | tie? | grader: its best, the reference's "
    "(diff ± SE, samples) |\n|---|---|---:|---|---|---|---|")


def _disagreement(decision: Decision, mine: Verdict, ref: dict, gap: float, gap_se: float,
                  verdict_text: str) -> str:
    """One row of the disagreement listing."""
    values, ses = ref["values"], ref.get("ses", [math.nan] * len(ref["values"]))
    order = sorted(range(len(values)), key=lambda index: -values[index])
    second = next((index for index in order if index != ref["best"]), ref["best"])

    def cell(index: int, diffs: list[float] | tuple[float, ...], errors, counts=None) -> str:
        text = f"#{index} {diffs[index]:+.2f} ± {errors[index]:.2f}"
        return text + (f" ({counts[index]})" if counts is not None else "")

    return (f"| {decision.street_number} | {ref['situation']} | {len(values)} | "
            f"{cell(ref['best'], values, ses)}, {cell(second, values, ses)} | "
            f"{gap:+.2f} ± {gap_se:.2f} | {verdict_text} | "
            f"{cell(mine.best, mine.values, mine.ses, mine.samples)}, "
            f"{cell(ref['best'], mine.values, mine.ses, mine.samples)} |")


def tie_z() -> float:
    """A disagreement is a statistical tie of the reference when the reference's two plays are
    within this many standard errors of each other (two-sided 95 %)."""
    return NormalDist().inv_cdf(0.975)


@dataclass(slots=True)
class Tally:
    """Figures of one group of decisions."""

    decisions: int = 0
    agree: int = 0
    near: int = 0
    error: float = 0.0
    grader_mistakes: int = 0
    false_mistakes: int = 0
    reference_mistakes: int = 0
    missed: int = 0
    seconds: float = 0.0
    old_agree: int = 0
    old_error: float = 0.0
    old_mistakes: int = 0
    old_false: int = 0
    old_missed: int = 0
    ties: int = 0
    better: int = 0

    def add(self, mine: Verdict, reference: dict, tie: bool = False,
            better: bool = False) -> None:
        """Count one decision (``tie``: a disagreement the reference cannot separate;
        ``better``: one where the grader's play is clearly better on fresh samples)."""
        self.decisions += 1
        self.ties += tie
        self.better += better
        values = reference["values"]
        top = values[reference["best"]] if reference["best"] < len(values) else 0.0
        self.agree += mine.best == reference["best"]
        self.near += top - values[mine.best] <= NEAR
        self.error += abs(mine.loss - reference["loss"])
        self.grader_mistakes += mine.mistake
        self.false_mistakes += mine.mistake and not reference["mistake"]
        self.reference_mistakes += reference["mistake"]
        self.missed += reference["mistake"] and not mine.mistake
        self.seconds += mine.seconds
        self.old_agree += mine.old_best == reference["best"]
        self.old_error += abs(mine.old_loss - reference["loss"])
        self.old_mistakes += mine.old_mistake
        self.old_false += mine.old_mistake and not reference["mistake"]
        self.old_missed += reference["mistake"] and not mine.old_mistake

    def row(self, name: str) -> str:
        """A Markdown table row."""
        def share(part: int, whole: int) -> str:
            return f"{100 * part / whole:.0f} %" if whole else "–"

        n = self.decisions
        return (f"| {name} | {n} | {share(self.agree, n)} | {share(self.near, n)} | "
                f"{self.error / n:.2f} | {share(self.false_mistakes, self.grader_mistakes)} "
                f"({self.false_mistakes}/{self.grader_mistakes}) | "
                f"{share(self.missed, self.reference_mistakes)} "
                f"({self.missed}/{self.reference_mistakes}) | {self.seconds / n:.3f} | "
                f"{self.ties}/{n - self.agree} | {self.better}/{n - self.agree} | "
                f"{share(self.old_agree, n)} | {self.old_error / n:.2f} | "
                f"{share(self.old_false, self.old_mistakes)} | "
                f"{share(self.old_missed, self.reference_mistakes)} |")


HEADER = ("| group | decisions | agreement | within 0.25 | MAE (points) | false mistakes | "
          "missed mistakes | CPU-s / decision | disagreements: reference ties | disagreements: "
          "grader's play better | old: agreement | old: MAE | old: false | old: missed |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def main() -> None:
    """Build the decision set, grade it both ways, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=400)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--per-street", type=int, default=30)
    parser.add_argument("--variant", default="pineapple")
    parser.add_argument("--policy", default=None, help="the grader's policy (default: its default)")
    parser.add_argument("--rollouts", type=int, default=None)
    parser.add_argument("--evaluation", type=int, default=None)
    parser.add_argument("--contenders", type=int, default=None,
                        help="plays that race on past --rollouts (0: none)")
    parser.add_argument("--race-to", type=int, default=None,
                        help="the most selection samples of a play in contention")
    parser.add_argument("--contender-z", type=float, default=None)
    parser.add_argument("--race-limit", type=int, default=None,
                        help="race only in decisions with at most this many plays (0: all)")
    parser.add_argument("--evaluation-se", type=float, default=None,
                        help="evaluation samples for this SE of the loss (0: a fixed count)")
    parser.add_argument("--prune", type=int, default=None,
                        help="past the first screen, keep only the play made, the policy's play "
                             "and the PRUNE plays the rollout policy scores highest, in decisions "
                             "of more than 60 plays (the openings; 0: no pruning)")
    parser.add_argument("--screen", type=int, default=None,
                        help="samples of every play before the first racing cut")
    parser.add_argument("--streets", default=None,
                        help="only these streets (comma-separated, 1 = the opening)")
    parser.add_argument("--cpu-baseline", action="store_true",
                        help="also grade every decision with the issue-16 defaults before the "
                             "race (600 + 1,000, no contenders), right after the grader: the "
                             "CPU ratio against it, measured under the same load")
    parser.add_argument("--reference-policy", default="expert")
    parser.add_argument("--reference-factor", type=int, default=50,
                        help="the reference's rollouts over the grader's defaults")
    parser.add_argument("--reference-rollouts", type=int, default=None,
                        help="the reference's selection samples (instead of the factor)")
    parser.add_argument("--reference-evaluation", type=int, default=None,
                        help="the reference's evaluation samples (instead of the factor)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir())
                        / "bench-grading-reference.json")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--show-disagreements", action="store_true",
                        help="list every decision whose best play differs from the reference's")
    arguments = parser.parse_args()
    variant = Variant(arguments.variant)
    defaults = GradeSettings()
    grader = replace(defaults,
                     **{name: value for name, value in (
                         ("policy", arguments.policy), ("rollouts", arguments.rollouts),
                         ("evaluation", arguments.evaluation),
                         ("contenders", arguments.contenders), ("race_to", arguments.race_to),
                         ("contender_z", arguments.contender_z),
                         ("race_limit", arguments.race_limit),
                         ("evaluation_se", arguments.evaluation_se),
                         ("prune", arguments.prune), ("screen", arguments.screen))
                        if value is not None})
    baseline = replace(defaults, rollouts=600, evaluation=1000, contenders=0, evaluation_se=0.0)
    reference = replace(
        defaults, policy=arguments.reference_policy, seed=defaults.seed + 1000, contenders=0,
        evaluation_se=0.0,
        rollouts=arguments.reference_rollouts or defaults.rollouts * arguments.reference_factor,
        evaluation=(arguments.reference_evaluation
                    or defaults.evaluation_samples * arguments.reference_factor))
    chosen = decisions(arguments.hands, arguments.seed, arguments.per_street, variant)
    if arguments.streets:
        streets = {int(part) for part in arguments.streets.split(",")}
        chosen = [decision for decision in chosen if decision.street_number in streets]
    # keyed by the hands (not the number per street: a larger set reuses a smaller one's work)
    tag = (f"hands={arguments.hands};seed={arguments.seed};{variant.value};"
           f"policy={reference.policy};rollouts={reference.rollouts};"
           f"evaluation={reference.evaluation};seed={reference.seed};"
           f"fantasyland_value={reference.fantasyland_value:g}")
    print(f"{len(chosen)} decisions ({arguments.per_street} per street) from {arguments.hands} "
          f"simulated {variant.value} hands, seed {arguments.seed}")
    print(f"grader: policy {grader.policy}, {grader.rollouts} selection + "
          f"{grader.evaluation_samples} evaluation rollouts, exact up to {grader.exact_limit:,} deals"
          f"; up to {grader.contenders} contenders race on to {grader.race_samples} samples "
          f"(z {grader.contender_z:g}, decisions of at most {grader.race_limit} plays, 0: all)"
          f"; evaluation SE target {grader.evaluation_se:g}")
    print(f"reference: policy {reference.policy}, {reference.rollouts} + "
          f"{reference.evaluation_samples} rollouts (cache {arguments.cache})")
    references = reference_verdicts(chosen, reference, arguments.cache, tag)
    by_street: dict[str, Tally] = defaultdict(Tally)
    by_situation: dict[str, Tally] = defaultdict(Tally)
    total = Tally()
    matching: list[float] = []
    gaps_file = arguments.cache.with_name(arguments.cache.stem + "-gaps.json")
    everything = json.loads(gaps_file.read_text()) if gaps_file.exists() else {}
    gaps = everything.setdefault(tag, {})
    disagreements: list[str] = []
    cpu = {"grader": 0.0, "baseline": 0.0, "gap": 0.0}
    measure_gap = grade_module._measure_policy_gap

    def timed_gap(grade: DecisionGrade, *arguments_, **keywords) -> None:  # noqa: ANN003
        started = time.process_time()
        measure_gap(grade, *arguments_, **keywords)
        if grade.settings == grader:  # the grader's share: the gap to the policy's own play
            cpu["gap"] += time.process_time() - started

    grade_module._measure_policy_gap = timed_gap
    pruned = 0  # the reference's best stopped early by the grader's racing
    for decision in chosen:
        ref = references.get(_key(decision))
        mine = verdict(decision, grader)
        if mine is not None:
            cpu["grader"] += mine.seconds
        if arguments.cpu_baseline:
            theirs = verdict(decision, baseline)
            cpu["baseline"] += theirs.seconds if theirs is not None else 0.0
        if ref is None or mine is None:
            continue
        tie = better = False
        pruned += mine.samples[ref["best"]] < mine.samples[decision.alternatives().chosen]
        if mine.best != ref["best"]:
            gap, gap_se = reference_gap(decision, reference, ref, ref["best"], mine.best, gaps)
            tie = abs(gap) <= tie_z() * gap_se
            better = gap < -tie_z() * gap_se
            disagreements.append(_disagreement(decision, mine, ref, gap, gap_se,
                                               "tie" if tie else "grader's" if better else "no"))
        for group in (by_street[f"street {decision.street_number}"],
                      by_situation[ref["situation"]], total):
            group.add(mine, ref, tie, better)
        if decision.alternatives().chosen == ref["best"]:
            matching.append(mine.loss)
    gaps_file.write_text(json.dumps(everything))
    if arguments.show_disagreements:
        print("\n" + DISAGREEMENT_HEADER)
        print("\n".join(disagreements))
    print()
    print(HEADER)
    for name in sorted(by_street):
        print(by_street[name].row(name))
    for name in sorted(by_situation):
        print(by_situation[name].row(name))
    print(total.row("all"))
    if matching:
        mean = sum(matching) / len(matching)
        spread = math.sqrt(sum((x - mean) ** 2 for x in matching) / max(1, len(matching) - 1))
        print(f"\nloss on the {len(matching)} decisions whose play is the reference's best: "
              f"{mean:+.3f} ± {spread / math.sqrt(len(matching)):.3f} points (unbiased: 0 within "
              f"noise)")
    print(f"\nthe reference's best play stopped early by the grader's racing (--screen, 3 SEs "
          f"behind): {pruned} of {total.decisions} decisions")
    if arguments.cpu_baseline:
        print(f"\nCPU-s, all {len(chosen)} decisions: grader {cpu['grader']:.1f}, baseline (600 + "
              f"1,000, no race) {cpu['baseline']:.1f}, ratio "
              f"{cpu['grader'] / max(cpu['baseline'], 1e-9):.2f}× (each decision graded both "
              "ways in turn)")
    print(f"\nof the grader's {cpu['grader']:.1f} CPU-s, the gap to the policy's own play took "
          f"{cpu['gap']:.1f} ({cpu['gap'] / max(cpu['grader'], 1e-9):.1%})")
    reference_seconds = sum(entry["seconds"] for entry in references.values()) / max(1, len(references))
    print(f"reference CPU-s / decision: {reference_seconds:.2f}; load average "
          f"{' '.join(f'{load:.1f}' for load in os.getloadavg())}")
    if arguments.json:
        arguments.json.write_text(json.dumps({
            "grader": {"policy": grader.policy, "rollouts": grader.rollouts,
                       "evaluation": grader.evaluation_samples,
                       "contenders": grader.contenders, "race_to": grader.race_samples},
            "load_average": os.getloadavg(), "cpu": cpu,
            "reference": tag,
            "all": vars_of(total), "streets": {k: vars_of(v) for k, v in by_street.items()},
            "situations": {k: vars_of(v) for k, v in by_situation.items()},
        }, indent=1))


def vars_of(tally: Tally) -> dict:
    """A tally as plain data."""
    return {name: getattr(tally, name) for name in Tally.__dataclass_fields__}


if __name__ == "__main__":
    main()
