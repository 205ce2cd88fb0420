"""Grading one decision: estimates for every alternative, the best one, the EV loss, the verdict.

For each alternative the grader keeps running sums over its samples: the value ``x`` and the
*paired difference* ``d = x − x_chosen`` against the chosen placement on the same sample (common
random numbers). Estimates are means, standard errors ``sd / √n``. Sums add up, so a later run
with more rollouts refines a stored grade (same settings) instead of starting over.

**Racing (pruning dominated alternatives):** every alternative first gets ``screen`` samples,
then the count doubles (2·screen, 4·screen, ...) up to ``rollouts``. At each step an alternative
more than ``screen_z`` standard errors behind the leader stops: the SE of their paired
difference on the samples both got in this run, or, without enough of those (stored sums from
an earlier run), the sum of both SEs (a bound whatever their correlation). The chosen one always
goes on. ``screen`` 0 gives every alternative the full count.

**Verdict:** the best alternative is the one with the largest mean difference among those that
ran the full count (the chosen one when none is positive; one that stopped early was clearly
worse than one that went on); the EV loss is that difference, its SE the paired SE. The decision is a
*mistake* only when the loss is beyond ``z`` standard errors, ``z = max(2, Φ⁻¹(1 − α/m))``
with ``m`` the number of other alternatives (a Bonferroni bound: with many alternatives one of
them looks better than the chosen one by chance; ``α`` = 0.025 keeps false mistakes rare).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from statistics import NormalDist

import numpy as np

from pipeline.analysis.alternatives import Alternative, AlternativeSet
from pipeline.analysis.decisions import Decision
from pipeline.analysis.rollout import DEFAULT_FANTASYLAND_VALUE, DEFAULT_POLICY, Rollouts
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import RuleSet

SITUATIONS = ("fantasyland_made", "fantasyland_draw", "standard")
"""Decision situations: the top already qualifies for Fantasyland; the chosen or the best
placement goes for it (a card of the entry rank or better on a top that can still pair it, or
a top completed to qualify); anything else."""


@dataclass(frozen=True, slots=True)
class GradeSettings:
    """Everything that decides a grade's numbers."""

    rollouts: int = 100
    screen: int = 16
    screen_z: float = 3.0
    policy: str = DEFAULT_POLICY
    fantasyland_value: float = DEFAULT_FANTASYLAND_VALUE
    seed: int = 1
    alpha: float = 0.025

    def fingerprint(self, rules: str) -> str:
        """What samples depend on: stored sums are refined only under the same fingerprint."""
        return (f"policy={self.policy};fantasyland_value={self.fantasyland_value:g};"
                f"seed={self.seed};rules={rules}")

    def check(self) -> None:
        """Raise ValueError for unusable settings."""
        if self.rollouts < 2:
            raise ValueError(f"rollouts must be at least 2, got {self.rollouts}")
        if self.screen < 0:
            raise ValueError(f"screen must be ≥ 0, got {self.screen}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")


@dataclass(slots=True)
class Tally:
    """Running sums of one alternative: samples, value and paired difference to the chosen one."""

    samples: int = 0
    total: float = 0.0
    total_sq: float = 0.0
    diff_total: float = 0.0
    diff_total_sq: float = 0.0

    def add(self, values: np.ndarray, differences: np.ndarray) -> None:
        """Add samples."""
        self.samples += len(values)
        self.total += float(values.sum())
        self.total_sq += float(np.square(values).sum())
        self.diff_total += float(differences.sum())
        self.diff_total_sq += float(np.square(differences).sum())

    @staticmethod
    def _mean_se(count: int, total: float, total_sq: float) -> tuple[float, float]:
        if count == 0:
            return (0.0, math.inf)
        mean = total / count
        if count < 2:
            return (mean, math.inf)
        variance = max(0.0, (total_sq - count * mean * mean) / (count - 1))
        return (mean, math.sqrt(variance / count))

    @property
    def ev(self) -> float:
        """Mean value (points, Fantasyland value included)."""
        return self._mean_se(self.samples, self.total, self.total_sq)[0]

    @property
    def se(self) -> float:
        """Standard error of :attr:`ev`."""
        return self._mean_se(self.samples, self.total, self.total_sq)[1]

    @property
    def diff(self) -> float:
        """Mean paired difference to the chosen placement."""
        return self._mean_se(self.samples, self.diff_total, self.diff_total_sq)[0]

    @property
    def diff_se(self) -> float:
        """Standard error of :attr:`diff`."""
        return self._mean_se(self.samples, self.diff_total, self.diff_total_sq)[1]


@dataclass(slots=True)
class DecisionGrade:
    """The grade of one decision (rows of ``decision_grades`` and ``decision_alternatives``)."""

    hand_key: int
    player: str
    street: int  # 1-based
    variant: str
    ruleset: str
    fingerprint: str
    alternatives: list[Alternative]
    tallies: list[Tally]
    chosen: int
    legal: int
    settings: GradeSettings
    situation: str = "standard"
    best: int = 0
    ev_loss: float = 0.0
    loss_se: float = 0.0
    z: float = 2.0
    mistake: bool = False
    new_samples: int = 0
    extra: dict = field(default_factory=dict)

    def decide(self) -> None:
        """Work out best, loss, threshold and verdict from the tallies."""
        chosen = self.chosen
        best = chosen
        best_diff = 0.0
        full = self.tallies[chosen].samples
        for index, tally in enumerate(self.tallies):
            # placements that stopped early were clearly worse than one that went on
            if index != chosen and tally.samples >= full and tally.diff > best_diff:
                best, best_diff = index, tally.diff
        self.best = best
        self.ev_loss = best_diff
        self.loss_se = self.tallies[best].diff_se if best != chosen else 0.0
        others = max(1, len(self.alternatives) - 1)
        self.z = max(2.0, NormalDist().inv_cdf(1.0 - self.settings.alpha / others))
        self.mistake = best != chosen and self.ev_loss > self.z * self.loss_se


def entry_rank(variant: Variant, rules: RuleSet) -> int:
    """The rank index of the smallest top pair that enters Fantasyland."""
    fl = rules.fantasyland
    return fl.lowball_entry_top_pair if variant is Variant.LOWBALL_PINEAPPLE else fl.entry_top_pair


def _top_qualifies(top: tuple[int, ...], entry: int) -> bool:
    ranks = [card >> 2 for card in top]
    return any(ranks.count(rank) >= 2 and (rank >= entry or ranks.count(rank) == 3)
               for rank in set(ranks))


def _goes_for_it(top: tuple[int, ...], entry: int) -> bool:
    if _top_qualifies(top, entry):
        return True
    return len(top) < 3 and any(card >> 2 >= entry for card in top)


def situation_of(decision: Decision, alternatives: list[Alternative], chosen: int, best: int,
                 rules: RuleSet) -> str:
    """One of :data:`SITUATIONS` for a graded decision."""
    entry = entry_rank(decision.hand.variant, rules)
    if not rules.fantasyland.enabled:
        return "standard"
    if _top_qualifies(decision.rows[0], entry):
        return "fantasyland_made"
    for index in {chosen, best}:
        if _goes_for_it(alternatives[index].rows_after[0], entry):
            return "fantasyland_draw"
    return "standard"


def prior_tallies(
    alternatives: AlternativeSet, prior: Mapping[str, Tally] | None
) -> list[Tally]:
    """Stored sums matched to the alternatives by placement (fresh tallies when they do not fit)."""
    if not prior or alternatives.alternatives[alternatives.chosen].describe() not in prior:
        return [Tally() for _ in alternatives.alternatives]
    chosen = prior[alternatives.alternatives[alternatives.chosen].describe()]
    tallies = []
    for alternative in alternatives.alternatives:
        stored = prior.get(alternative.describe())
        if stored is None or stored.samples > chosen.samples:
            tallies.append(Tally())
        else:
            tallies.append(replace(stored))
    return tallies


def grade_decision(
    decision: Decision,
    rules: RuleSet,
    settings: GradeSettings,
    prior: Mapping[str, Tally] | None = None,
    alternatives: AlternativeSet | None = None,
) -> DecisionGrade | None:
    """Grade one decision (see the module docstring); None when there is nothing to choose.

    ``prior`` holds stored sums by placement text (from a run with the same fingerprint); they
    are extended to ``settings.rollouts`` samples, never recomputed.
    """
    options = alternatives or decision.alternatives()
    if len(options.alternatives) < 2:
        return None
    items = list(options.alternatives)
    chosen = options.chosen
    tallies = prior_tallies(options, prior)
    target = settings.rollouts
    screen = min(settings.screen, target) if settings.screen else target
    start = min(tally.samples for tally in tallies)
    grade = DecisionGrade(
        hand_key=decision.hand.hand_key, player=decision.player, street=decision.street_number,
        variant=decision.hand.variant.value, ruleset=rules.name,
        fingerprint=settings.fingerprint(rules.name), alternatives=items, tallies=tallies,
        chosen=chosen, legal=options.legal, settings=settings,
    )
    if start < target:
        rollouts = Rollouts(decision, rules, start, target, settings.seed, settings.policy,
                            settings.fantasyland_value)
        seen: dict[int, tuple[int, np.ndarray]] = {}
        active = list(range(len(items)))
        for checkpoint in _checkpoints(screen, target):
            needed = [index for index in active if tallies[index].samples < checkpoint]
            grade.new_samples += _extend(rollouts, items, tallies, chosen, needed, checkpoint, seen)
            if checkpoint < target:
                active = _survivors(active, tallies, chosen, settings.screen_z, seen)
    grade.decide()
    grade.situation = situation_of(decision, items, chosen, grade.best, rules)
    return grade


def _checkpoints(screen: int, target: int) -> list[int]:
    """Sample counts after which clearly worse alternatives stop: screen, 2·screen, ... target."""
    if screen <= 0 or screen >= target:
        return [target]
    points = []
    count = screen
    while count < target:
        points.append(count)
        count *= 2
    return [*points, target]


def _extend(
    rollouts: Rollouts,
    items: list[Alternative],
    tallies: list[Tally],
    chosen: int,
    needed: list[int],
    upto: int,
    seen: dict[int, tuple[int, np.ndarray]],
) -> int:
    """Bring the ``needed`` alternatives (and the chosen one) to ``upto`` samples; ``seen``
    keeps this run's values per alternative (first sample, values) for paired comparisons."""
    if not needed:
        return 0
    lo = min(tallies[index].samples for index in needed)
    if lo >= upto:
        return 0
    group = sorted(set(needed) | {chosen})
    values = rollouts.values([items[index] for index in group], lo, upto)
    chosen_values = values[group.index(chosen)]
    added = 0
    for row, index in enumerate(group):
        tally = tallies[index]
        first = max(tally.samples, lo) - lo
        if first >= upto - lo:
            continue
        own = values[row, first:]
        tally.add(own, own - chosen_values[first:])
        added += len(own)
        begin = lo + first
        if index in seen:
            seen_start, seen_values = seen[index]
            if seen_start + len(seen_values) == begin:
                seen[index] = (seen_start, np.concatenate([seen_values, own]))
                continue
        seen[index] = (begin, own.copy())
    return added


MIN_PAIRED = 8
"""Common samples needed before two alternatives are compared by their paired difference."""


def _paired_gap(first: int, second: int, seen: dict[int, tuple[int, np.ndarray]]) -> tuple[float, float] | None:
    """Mean and SE of ``x_first − x_second`` on the samples both got in this run, if enough."""
    if first not in seen or second not in seen:
        return None
    first_start, first_values = seen[first]
    second_start, second_values = seen[second]
    lo = max(first_start, second_start)
    hi = min(first_start + len(first_values), second_start + len(second_values))
    if hi - lo < MIN_PAIRED:
        return None
    gaps = first_values[lo - first_start:hi - first_start] - second_values[lo - second_start:hi - second_start]
    return float(gaps.mean()), float(gaps.std(ddof=1) / np.sqrt(len(gaps)))


def _survivors(
    active: list[int],
    tallies: list[Tally],
    chosen: int,
    screen_z: float,
    seen: dict[int, tuple[int, np.ndarray]],
) -> list[int]:
    """Alternatives not clearly worse than the best so far (the chosen one always survives).

    Clearly worse: the gap to the best is beyond ``screen_z`` standard errors of the paired
    difference on common samples; without enough common samples, of the sum of both SEs (a
    bound on the SE of a difference whatever the correlation)."""
    def score(index: int) -> float:
        return tallies[index].diff if index != chosen else 0.0

    best = max(active, key=lambda index: (score(index), index == chosen))
    keep = []
    for index in active:
        tally = tallies[index]
        if index in (chosen, best) or tally.samples < 2:
            keep.append(index)
            continue
        paired = _paired_gap(best, index, seen)
        if paired is not None:
            gap, se = paired
        else:
            gap = score(best) - score(index)
            se = tally.diff_se + (tallies[best].diff_se if best != chosen else 0.0)
        if not gap > screen_z * se:
            keep.append(index)
    return keep
