"""Grading one decision: estimates for every alternative, the best one, the EV loss, the verdict.

**Two independent sets of samples (no winner's curse).** Picking the best of many noisy
estimates and reading its margin from the same samples inflates the margin: the play that wins
on noise is, on average, less good than it looked. So the grader

1. *selects* the best play on one stream of samples (:data:`~pipeline.analysis.rollout.SELECTION`,
   ``rollouts`` per alternative, with racing below), then
2. *evaluates* only that play and the chosen one on a second, independent stream
   (:data:`~pipeline.analysis.rollout.EVALUATION`, ``evaluation`` samples each): the EV loss is
   the mean paired difference ``x_best − x_chosen`` there, its SE the paired SE.

Given the selection samples the selected play is fixed, and the evaluation samples are fresh:
the loss is an unbiased estimate of how much better the selected play is than the play made
(zero exactly when the selection keeps the play made). It can come out negative (the selected
play did no better on fresh cards); averages keep the sign, so a player whose plays are the
best ones averages zero within noise. Against the (unknown) truly best play it is, if anything,
an underestimate: it never inflates a loss.

For each alternative the grader keeps running sums over its samples in each stream: the value
``x`` and the *paired difference* ``d = x − x_chosen`` against the chosen placement on the same
sample (common random numbers). Estimates are means, standard errors ``sd / √n``. Sums add up,
so a later run with more rollouts refines a stored grade (same settings) instead of starting
over.

**Racing (pruning dominated alternatives, selection stream only):** every alternative first gets
``screen`` samples, then the count doubles (2·screen, 4·screen, ...) up to ``rollouts``. At each
step an alternative more than ``screen_z`` standard errors behind the leader stops: the SE of
their paired difference on the samples both got in this run, or, without enough of those (stored
sums from an earlier run), the sum of both SEs (a bound whatever their correlation). The chosen
one always goes on. ``screen`` 0 gives every alternative the full count.

**The contender race (selection stream only):** after ``rollouts`` samples, the plays still
within ``contender_z`` paired SEs of the leader (at most ``contenders``, the leader included)
race on, the count doubling up to ``race_samples`` (4 × ``rollouts``), a play dropping out when
it falls ``contender_z`` SEs behind; the chosen one goes on with them. Near-ties among the top
plays are where 600 samples pick the wrong play (tests/benchmarks/bench_grading.py): the race
spends samples there instead of everywhere. In every decision by default; ``race_limit`` N
keeps it to decisions of at most N plays (60 leaves the opening's 200 plays out: less CPU, and
against a reference at 50× the rollouts fewer agreements there). The selected play is the one with the
largest mean difference among those that ran the full count (the chosen one when none is
positive).

**Evaluation count:** ``evaluation`` samples, or more where the paired difference of the
selected and the chosen play spreads widely *on the selection stream*: enough for an SE of
``evaluation_se``, up to 4 × ``evaluation`` (:meth:`GradeSettings.evaluation_for`). The count
is fixed before any evaluation sample is drawn, so the loss stays an unbiased mean.

**Verdict:** a *mistake* when the evaluated loss is beyond ``z`` standard errors,
``z = Φ⁻¹(1 − α)`` (one pre-selected comparison: no correction for the number of alternatives
is needed; ``α`` = 0.025 gives z ≈ 1.96), and at least ``min_loss`` points (default 0.25: a
certain loss of a few hundredths is not worth a lesson).

**The rollout policy's own play (the policy gap):** the play the rollout policy itself would
make in the player's spot (:func:`policy_choice`) is measured against the play made on the
evaluation stream too (exact when enumerated): ``policy_gap = x_policy − x_chosen``, what the
grader's own bot would have kept. The loss against the best play includes what a one-step
lookahead finds beyond that bot's own judgement, which every player pays (the rollout policy
itself about 2 points per Pineapple decision: docs/grading.md); the gap leaves that out, so it
tells a careless player from a sound one (0 for the policy's own plays). It never decides a
verdict. The policy's choice depends on no sample, and the evaluation samples are fresh: the
gap is unbiased. Not measured for a policy that uses chance (``random``).

**Exact endgames** (:mod:`pipeline.analysis.exact`): when the unseen cards allow at most
``exact_limit`` distinct deals, every alternative is played out on every deal instead; values
are exact expectations (SE 0), the best play is the largest, the loss exact (``exact`` true) and a
mistake is any loss of at least ``min_loss``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from statistics import NormalDist

import numpy as np

from pipeline.analysis.alternatives import (
    Alternative,
    AlternativeSet,
    apply_pattern,
    canonical_key,
    street_patterns,
)
from pipeline.analysis.decisions import Decision
from pipeline.analysis.exact import DEFAULT_EXACT_LIMIT, enumerate_deals
from pipeline.analysis.policy import BoardBatch
from pipeline.analysis.rollout import (
    DEFAULT_FANTASYLAND_VALUE,
    DEFAULT_POLICY,
    EVALUATION,
    SELECTION,
    Rollouts,
    column_policy,
)
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import RuleSet
from pipeline.simulate.bots import BOTS

SITUATIONS = ("fantasyland_made", "fantasyland_draw", "standard")
"""Decision situations: the top already qualifies for Fantasyland; the chosen or the best
placement goes for it (a card of the entry rank or better on a top that can still pair it, or
a top completed to qualify); anything else."""

EVALUATION_RATIO = 5 / 3
"""Evaluation samples per selection sample when not set (1,000 for the default 600): the loss's
error shrinks with them, at the cost of two plays only."""

EXACT_TOLERANCE = 1e-9
"""An exact loss above this is a mistake (values are exact up to float rounding)."""

EVALUATION_CAP = 4
"""The most evaluation samples, as a multiple of ``evaluation``, when ``evaluation_se`` asks for
more."""

CONTENDER_FACTOR = 4
"""Selection samples of a play still in contention over ``rollouts``, when ``race_to`` is unset."""

MAX_SAMPLES = 100_000
"""Most samples a setting may ask for per play (``rollouts``, ``evaluation``, ``second_samples``;
``race_to`` up to :data:`CONTENDER_FACTOR` times it): the 50x reference of docs/grading.md takes
30,000 and 50,000. An opening's 200 plays of this many samples hold about 160 MB; ``--rollouts
1000000000000`` used to stop with numpy's "Unable to allocate 342. TiB"."""

MAX_EXACT_LIMIT = 1_000_000
"""Most deals a decision may be enumerated over (``exact_limit``; 25 times the default)."""

SECOND_POLICY = "solid"
"""The second continuation: the bot that plays the rest of the hand in the second look at a
mistake (:func:`second_look`). Another deterministic heuristic than the rollout policy."""

SECOND_STAGES = (4, 2, 1)
"""The second look draws its samples in stages: a quarter of ``second_count``, half, all of
it (:func:`second_look`), and stops at the first stage whose verdict is clear."""

PRUNE_ABOVE = 60
"""Decisions with more plays than this (the opening's 200) may be pruned (``prune``)."""

ESTIMATOR = "split-v2"
"""Names the way samples are drawn and used (selection and evaluation streams): part of the
fingerprint, so sums stored by an older grader are never mixed with these."""


@dataclass(frozen=True, slots=True)
class GradeSettings:
    """Everything that decides a grade's numbers.

    ``rollouts``: selection samples per alternative (racing); ``evaluation``: independent samples
    of the selected and the chosen play (None: :data:`EVALUATION_RATIO` × ``rollouts``). The
    defaults (policy ``expert``, 600 and 1,000, 3 contenders racing on to 2,400 in every
    decision, evaluation for an SE of 0.45 points) are what tests/benchmarks/bench_grading.py
    measured against a reference at 50× the samples: 90 % agreement and 0.20 points of error
    for about 1.5-1.6× the CPU of 600 and 1,000 alone (docs/grading.md); ``exact_limit``: the most
    deals a decision may have to be enumerated instead (0: never); ``min_loss``: the smallest
    loss (points) called a mistake, however certain (an exact 0.03 is not worth a lesson).
    """

    rollouts: int = 600
    screen: int = 16
    screen_z: float = 3.0
    policy: str = DEFAULT_POLICY
    fantasyland_value: float = DEFAULT_FANTASYLAND_VALUE
    seed: int = 1
    alpha: float = 0.025
    evaluation: int | None = None
    exact_limit: int = DEFAULT_EXACT_LIMIT
    min_loss: float = 0.25
    contenders: int = 3
    race_to: int | None = None
    contender_z: float = 2.0
    race_limit: int = 0
    evaluation_se: float = 0.45
    prune: int = 0
    prune_above: int = PRUNE_ABOVE
    second_policy: str | None = SECOND_POLICY
    second_samples: int | None = None
    second_z: float = 3.0

    @property
    def race_samples(self) -> int:
        """The most selection samples a play still in contention gets (``race_to``, default
        4 × ``rollouts``; never fewer than ``rollouts``)."""
        if self.race_to is not None:
            return max(self.rollouts, self.race_to)
        return CONTENDER_FACTOR * self.rollouts

    @property
    def evaluation_samples(self) -> int:
        """Samples of the evaluation stream per evaluated play."""
        if self.evaluation is not None:
            return self.evaluation
        return max(2, round(self.rollouts * EVALUATION_RATIO))

    def evaluation_for(self, spread: float) -> int:
        """Evaluation samples for a loss whose paired differences spread ``spread`` points (one
        standard deviation, measured on the *selection* stream): enough for an SE of
        ``evaluation_se``, between :attr:`evaluation_samples` and 4× that; always
        :attr:`evaluation_samples` when ``evaluation_se`` is 0. The count depends on the
        selection samples only, never on the evaluation samples it draws: the loss stays
        unbiased."""
        base = self.evaluation_samples
        if self.evaluation_se <= 0 or not math.isfinite(spread):
            return base
        wanted = math.ceil((spread / self.evaluation_se) ** 2)
        return min(EVALUATION_CAP * base, max(base, wanted))

    @property
    def z(self) -> float:
        """The mistake threshold in standard errors of the evaluated loss."""
        return NormalDist().inv_cdf(1.0 - self.alpha)

    def fingerprint(self, rules: str) -> str:
        """What samples depend on: stored sums are refined only under the same fingerprint."""
        return (f"estimator={ESTIMATOR};policy={self.policy};"
                f"fantasyland_value={self.fantasyland_value:g};seed={self.seed};rules={rules}")

    def check(self) -> None:
        """Raise ValueError for unusable settings."""
        if not 2 <= self.rollouts <= MAX_SAMPLES:
            raise ValueError(f"rollouts must be from 2 to {MAX_SAMPLES:,}, got {self.rollouts:,}")
        if not 2 <= self.evaluation_samples <= MAX_SAMPLES:
            raise ValueError(f"evaluation samples must be from 2 to {MAX_SAMPLES:,}, got "
                             f"{self.evaluation_samples:,}")
        if not -(2**63) <= self.seed < 2**63:
            raise ValueError(f"seed must be a whole number that fits in 64 bits, got {self.seed}")
        if self.screen < 0:
            raise ValueError(f"screen must be ≥ 0, got {self.screen}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")
        if not 0 <= self.min_loss < math.inf:  # also false for nan
            raise ValueError(f"min_loss must be a finite number ≥ 0, got {self.min_loss}")
        if not 0 <= self.exact_limit <= MAX_EXACT_LIMIT:
            raise ValueError(f"exact limit must be from 0 to {MAX_EXACT_LIMIT:,}, got "
                             f"{self.exact_limit:,}")
        if self.contenders < 0:
            raise ValueError(f"contenders must be ≥ 0, got {self.contenders}")
        if self.race_to is not None and not 2 <= self.race_to <= CONTENDER_FACTOR * MAX_SAMPLES:
            raise ValueError(f"race_to must be from 2 to {CONTENDER_FACTOR * MAX_SAMPLES:,}, got "
                             f"{self.race_to:,}")
        if not 0 < self.contender_z < math.inf:
            raise ValueError(f"contender_z must be a finite number > 0, got {self.contender_z}")
        if not 0 < self.screen_z < math.inf:
            raise ValueError(f"screen_z must be a finite number > 0, got {self.screen_z}")
        if self.race_limit < 0:
            raise ValueError(f"race_limit must be ≥ 0, got {self.race_limit}")
        if not 0 <= self.evaluation_se < math.inf:
            raise ValueError(f"evaluation_se must be a finite number ≥ 0, got {self.evaluation_se}")
        if self.prune < 0:
            raise ValueError(f"prune must be ≥ 0, got {self.prune}")
        if self.policy not in BOTS:
            raise ValueError(f"unknown rollout policy {self.policy!r} (bots: {', '.join(BOTS)})")
        if self.second_policy is not None and self.second_policy not in BOTS:
            raise ValueError(f"unknown second policy {self.second_policy!r} "
                             f"(bots: {', '.join(BOTS)})")
        if self.second_samples is not None and not 2 <= self.second_samples <= MAX_SAMPLES:
            raise ValueError(f"second samples must be from 2 to {MAX_SAMPLES:,}, got "
                             f"{self.second_samples:,}")
        if not 0 <= self.second_z < math.inf:
            raise ValueError(f"second_z must be a finite number ≥ 0, got {self.second_z}")
        if not 0 <= self.fantasyland_value < math.inf:
            # the points a board earning Fantasyland adds, and the Fantasyland setter's stay
            # value: a negative one stopped the setter in a worker, nan made every comparison false
            raise ValueError(f"fantasyland_value must be a finite number ≥ 0, got "
                             f"{self.fantasyland_value}")

    @property
    def second_count(self) -> int:
        """Samples of the second look (``second_samples``, default :attr:`evaluation_samples`)."""
        return self.second_samples or self.evaluation_samples


@dataclass(slots=True)
class Tally:
    """Running sums of one alternative: samples, value and paired difference to the chosen one.

    ``exact``: the samples are every possible deal, each once (the means are exact, SE 0)."""

    samples: int = 0
    total: float = 0.0
    total_sq: float = 0.0
    diff_total: float = 0.0
    diff_total_sq: float = 0.0
    exact: bool = False

    def add(self, values: np.ndarray, differences: np.ndarray) -> None:
        """Add samples."""
        self.samples += len(values)
        self.total += float(values.sum())
        self.total_sq += float(np.square(values).sum())
        self.diff_total += float(differences.sum())
        self.diff_total_sq += float(np.square(differences).sum())

    def _mean_se(self, count: int, total: float, total_sq: float) -> tuple[float, float]:
        if count == 0:
            return (0.0, math.inf)
        mean = total / count
        if self.exact:
            return (mean, 0.0)
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
    """The grade of one decision (rows of ``decision_grades`` and ``decision_alternatives``).

    ``tallies``: the selection stream per alternative (every deal, when ``exact``);
    ``evaluations``: the evaluation stream (only the selected and the chosen play get samples).
    """

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
    evaluations: list[Tally] = field(default_factory=list)
    exact: bool = False
    situation: str = "standard"
    mistake_type: str | None = None
    best: int = 0
    ev_loss: float = 0.0
    loss_se: float = 0.0
    z: float = 2.0
    mistake: bool = False
    new_samples: int = 0
    extra: dict = field(default_factory=dict)
    policy_choice: int | None = None  # the alternative the rollout policy itself plays
    policy_gap: float | None = None  # x_policy − x_chosen (evaluation stream, or exact)
    policy_gap_se: float | None = None
    uncertain: bool = False  # a mistake by the rollout policy that the second look does not confirm
    second_loss: float | None = None  # the loss under the second continuation (null: not looked)
    second_loss_se: float | None = None
    second_samples: int = 0  # samples of the second look (not in the tallies)

    def selected(self) -> int:
        """The best play on the selection stream: the largest mean difference among the plays
        that ran the full count (the chosen one when none is above it)."""
        chosen = self.chosen
        best, best_diff = chosen, 0.0
        full = self.tallies[chosen].samples
        margin = EXACT_TOLERANCE if self.exact else 0.0
        for index, tally in enumerate(self.tallies):
            # placements that stopped early were clearly worse than one that went on
            if index != chosen and tally.samples >= full and tally.diff > best_diff + margin:
                best, best_diff = index, tally.diff
        return best

    def decide(self) -> None:
        """Work out best, loss, threshold and verdict from the tallies."""
        chosen = self.chosen
        best = self.selected()
        self.best = best
        self.z = self.settings.z
        if self.exact:
            self.ev_loss = self.tallies[best].diff if best != chosen else 0.0
            self.loss_se = 0.0
            self.mistake = self.ev_loss > max(EXACT_TOLERANCE, self.settings.min_loss)
            return
        if best == chosen:
            self.ev_loss, self.loss_se, self.mistake = 0.0, 0.0, False
            return
        evaluated = self.evaluations[best]
        if evaluated.samples < 2:
            raise ValueError("the selected play has no evaluation samples")
        self.ev_loss = evaluated.diff
        self.loss_se = evaluated.diff_se
        self.mistake = self.ev_loss > max(self.z * self.loss_se, self.settings.min_loss)

    def value(self, index: int) -> Tally:
        """The unbiased estimate of an alternative's value: its evaluation samples when it has
        some (the selected play's selection estimate is inflated), else its selection ones."""
        if self.evaluations and self.evaluations[index].samples >= 2:
            return self.evaluations[index]
        return self.tallies[index]

    @property
    def evaluation_samples(self) -> int:
        """Samples behind the loss: every deal when exact, the evaluation stream's otherwise
        (0 when the selected play is the chosen one)."""
        if self.exact:
            return self.tallies[self.chosen].samples
        return self.evaluations[self.best].samples if self.best != self.chosen else 0


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


MISTAKE_TYPES = ("chased Fantasyland", "passed on Fantasyland", "top too strong", "top too weak",
                 "discard", "middle or bottom")
"""What the best play changes against the play made (the first that applies):

* *chased Fantasyland*: the play made goes for Fantasyland on the top, the best one does not;
* *passed on Fantasyland*: the reverse;
* *top too strong* / *too weak*: the top the play made leaves is higher / lower (its ranks,
  highest first) than the best play's;
* *discard*: the plays keep the same top but throw away different ranks;
* *middle or bottom*: they differ only in what goes to the middle and the bottom.
"""


def mistake_type_of(decision: Decision, chosen: Alternative, best: Alternative,
                    rules: RuleSet) -> str:
    """One of :data:`MISTAKE_TYPES` for a decision whose best play is not the one made."""
    entry = entry_rank(decision.hand.variant, rules)
    chosen_top, best_top = chosen.rows_after[0], best.rows_after[0]
    if rules.fantasyland.enabled:
        chases, best_chases = _goes_for_it(chosen_top, entry), _goes_for_it(best_top, entry)
        if chases and not best_chases:
            return "chased Fantasyland"
        if best_chases and not chases:
            return "passed on Fantasyland"

    def strength(top: tuple[int, ...]) -> tuple[int, ...]:
        ranks = sorted((card >> 2 for card in top), reverse=True)
        pairs = sorted({rank for rank in ranks if ranks.count(rank) >= 2}, reverse=True)
        return (len(pairs) and max(ranks.count(rank) for rank in pairs), *pairs, *ranks)

    if strength(chosen_top) > strength(best_top):
        return "top too strong"
    if strength(chosen_top) < strength(best_top):
        return "top too weak"
    if sorted(card >> 2 for card in chosen.discards) != sorted(card >> 2 for card in best.discards):
        return "discard"
    return "middle or bottom"


Prior = Mapping[str, tuple[Tally, Tally]]
"""Stored sums of a decision by placement text: (selection, evaluation) tallies."""


def prior_tallies(
    alternatives: AlternativeSet, prior: Prior | None
) -> tuple[list[Tally], list[Tally]]:
    """Stored sums matched to the alternatives by placement (fresh tallies when they do not fit):
    the selection and the evaluation tallies."""
    count = len(alternatives.alternatives)
    chosen_text = alternatives.alternatives[alternatives.chosen].describe()
    if not prior or chosen_text not in prior:
        return [Tally() for _ in range(count)], [Tally() for _ in range(count)]
    streams = []
    for stream in (0, 1):
        chosen = prior[chosen_text][stream]
        tallies = []
        for alternative in alternatives.alternatives:
            stored = prior.get(alternative.describe())
            if stored is None or stored[stream].exact or stored[stream].samples > chosen.samples:
                tallies.append(Tally())
            else:
                tallies.append(replace(stored[stream]))
        streams.append(tallies)
    return streams[0], streams[1]


def grade_decision(
    decision: Decision,
    rules: RuleSet,
    settings: GradeSettings,
    prior: Prior | None = None,
    alternatives: AlternativeSet | None = None,
) -> DecisionGrade | None:
    """Grade one decision (see the module docstring); None when there is nothing to choose.

    ``prior`` holds stored sums by placement text (from a run with the same fingerprint); they
    are extended to ``settings.rollouts`` (and ``evaluation``) samples, never recomputed.
    """
    options = alternatives or decision.alternatives()
    if len(options.alternatives) < 2:
        return None
    items = list(options.alternatives)
    chosen = options.chosen
    grade = DecisionGrade(
        hand_key=decision.hand.hand_key, player=decision.player, street=decision.street_number,
        variant=decision.hand.variant.value, ruleset=rules.name,
        fingerprint=settings.fingerprint(rules.name), alternatives=items, tallies=[],
        chosen=chosen, legal=options.legal, settings=settings,
    )
    deals = None
    if settings.exact_limit and not BOTS[settings.policy].uses_chance:
        deals = enumerate_deals(decision, settings.exact_limit)
    futures = Futures(decision, rules, settings)
    if deals is not None:
        _enumerate(grade, decision, rules, settings, deals)
    else:
        grade.tallies, grade.evaluations = prior_tallies(options, prior)
        _select(grade, futures, settings)
        best = grade.selected()
        if best != chosen:
            _evaluate(grade, futures, settings, best)
    grade.decide()
    if grade.mistake:
        second_look(grade, decision, rules, settings)
    _measure_policy_gap(grade, decision, rules, settings, alternatives=options, futures=futures)
    grade.situation = situation_of(decision, items, chosen, grade.best, rules)
    if grade.best != chosen:
        grade.mistake_type = mistake_type_of(decision, items[chosen], items[grade.best], rules)
    return grade


SECOND = 2
"""The sample stream of the second look (independent of selection and evaluation)."""


def second_look(grade: DecisionGrade, decision: Decision, rules: RuleSet,
                settings: GradeSettings) -> None:
    """Model error, beyond sampling: a mistake's loss measured again with every seat finishing
    under the second continuation (``second_policy``) instead of the rollout policy, on fresh
    samples (exact when the decision was enumerated). When the picked play no longer beats the
    play made by ``min_loss`` there, the verdict depends on the continuation: the grade is
    *uncertain*, never a mistake (the trainer leaves it out). The loss stays the rollout
    policy's (unbiased for that continuation); only the verdict changes.

    Sampled, the second look goes in stages (:data:`SECOND_STAGES`: a quarter of
    ``second_count``, half, all): it stops at the first stage where the second loss is at least
    ``second_z`` standard errors from ``min_loss`` (a verdict more samples would not turn; 0:
    always every sample; never on an SE of 0, where every sample so far was alike). Each
    stage's samples are the first ones of the stream, so a stage is what a second look of that
    many samples would have measured."""
    second = settings.second_policy
    if second is None or not grade.mistake:
        return
    pair = [grade.alternatives[grade.best], grade.alternatives[grade.chosen]]
    deals = None
    if grade.exact and not BOTS[second].uses_chance:
        deals = enumerate_deals(decision, settings.exact_limit)
    if deals is not None:
        values = Rollouts.enumerated(decision, rules, deals, second,
                                     settings.fantasyland_value).values(pair)
        grade.second_loss, grade.second_loss_se = float((values[0] - values[1]).mean()), 0.0
    else:
        count = settings.second_count
        stages = (sorted({max(2, count // part) for part in SECOND_STAGES}) if settings.second_z
                  else [count])
        rollouts = Rollouts(decision, rules, 0, stages[0], settings.seed, second,
                            settings.fantasyland_value, stream=SECOND)
        for stage in stages:
            rollouts.grow(stage)
            values = rollouts.values(pair, 0, stage)
            differences = values[0] - values[1]
            grade.second_loss = float(differences.mean())
            grade.second_loss_se = float(differences.std(ddof=1) / math.sqrt(stage))
            margin = abs(grade.second_loss - settings.min_loss)
            if 0 < settings.second_z * grade.second_loss_se <= margin:
                break  # the verdict is clear: more samples would not change it
    grade.second_samples = int(values.size)
    if grade.second_loss < settings.min_loss:
        grade.uncertain, grade.mistake = True, False


def policy_choice(decision: Decision, alternatives: AlternativeSet, policy: str,
                  rules: RuleSet) -> int | None:
    """The alternative (index into ``alternatives``) the rollout ``policy`` itself plays at the
    decision: the bot's placement of the dealt cards on the player's rows, matched to its class
    of equivalent placements. None for a bot that uses chance (its play is not one play)."""
    if BOTS[policy].uses_chance:
        return None
    column = column_policy(policy, decision.hand.variant, rules)
    index = column.play_street(BoardBatch.from_rows([decision.rows], [decision.known]),
                               np.asarray([decision.dealt], dtype=np.int64), decision.discards)
    pattern = street_patterns(len(decision.dealt), decision.discards)[int(index[0])]
    items = alternatives.alternatives
    for position, alternative in enumerate(items):  # the placement itself represents a class
        if alternative.pattern == pattern:
            return position
    group = decision.symmetry()
    key = canonical_key(apply_pattern(decision.rows, decision.dealt, pattern)[0], group)
    for position, alternative in enumerate(items):
        if canonical_key(alternative.rows_after, group) == key:
            return position
    raise ValueError(f"the policy's placement {pattern} is not among the alternatives")


def _measure_policy_gap(grade: DecisionGrade, decision: Decision, rules: RuleSet,
                        settings: GradeSettings, alternatives: AlternativeSet,
                        futures: Futures | None = None) -> None:
    """:attr:`DecisionGrade.policy_gap`: the rollout policy's own play against the play made,
    exact when the decision was enumerated, else on the evaluation stream (``evaluation``
    samples; more when the policy's play is the selected one, which has them already)."""
    policy = policy_choice(decision, alternatives, settings.policy, rules)
    grade.policy_choice = policy
    if policy is None:
        return
    chosen = grade.chosen
    if policy == chosen:
        grade.policy_gap, grade.policy_gap_se = 0.0, 0.0
        return
    if grade.exact:
        grade.policy_gap, grade.policy_gap_se = grade.tallies[policy].diff, 0.0
        return
    evaluations = grade.evaluations
    target = settings.evaluation_samples
    start = min(evaluations[policy].samples, evaluations[chosen].samples)
    if start < target:
        futures = futures or Futures(decision, rules, settings)
        rollouts = futures.samples(EVALUATION, start, target)
        grade.new_samples += _extend(rollouts, grade.alternatives, evaluations, chosen, [policy],
                                     target, {})
    measured = evaluations[policy]
    grade.policy_gap = measured.diff
    grade.policy_gap_se = measured.diff_se if math.isfinite(measured.diff_se) else None


def _enumerate(grade: DecisionGrade, decision: Decision, rules: RuleSet,
               settings: GradeSettings, deals: np.ndarray) -> None:
    """Every alternative on every deal: exact values."""
    rollouts = Rollouts.enumerated(decision, rules, deals, settings.policy,
                                   settings.fantasyland_value)
    values = rollouts.values(grade.alternatives)
    chosen_values = values[grade.chosen]
    grade.tallies = []
    for row in values:
        tally = Tally(exact=True)
        tally.add(row, row - chosen_values)
        grade.tallies.append(tally)
    grade.evaluations = [Tally() for _ in grade.alternatives]
    grade.exact = True
    grade.new_samples = int(values.size)


def _select(grade: DecisionGrade, futures: Futures, settings: GradeSettings) -> None:
    """The selection stream: racing up to ``rollouts`` samples per alternative."""
    tallies = grade.tallies
    target = settings.rollouts
    start = min(tally.samples for tally in tallies)
    if start >= target:
        return
    screen = min(settings.screen, target) if settings.screen else target
    rollouts = futures.samples(SELECTION, start, target)
    seen: dict[int, tuple[int, np.ndarray]] = {}
    active = list(range(len(grade.alternatives)))
    kept = _pruned(grade, futures, settings)
    for checkpoint in _checkpoints(screen, target):
        needed = [index for index in active if tallies[index].samples < checkpoint]
        grade.new_samples += _extend(rollouts, grade.alternatives, tallies, grade.chosen, needed,
                                     checkpoint, seen)
        if checkpoint < target:
            active = _survivors(active, tallies, grade.chosen, settings.screen_z, seen)
            if kept is not None:  # past the first screen, only the plays the policy ranks high
                active = [index for index in active if index in kept]
                kept = None
    _race_contenders(grade, futures, settings, active, seen)


def _pruned(grade: DecisionGrade, futures: Futures, settings: GradeSettings) -> set[int] | None:
    """The plays that go on past the first screen in a decision of more than
    ``prune_above`` plays: the play made, the rollout policy's own play and the ``prune`` plays
    the policy scores highest (None: no pruning: ``prune`` 0, few plays, or a policy without
    scores). Every play still gets the screen's samples (an estimate for the trainer); the
    policy's scores depend on no sample, so the loss stays unbiased."""
    if not settings.prune or len(grade.alternatives) <= settings.prune_above:
        return None
    decision = futures.decision
    scores = policy_scores(decision, grade.alternatives, settings.policy, futures.rules)
    if scores is None:
        return None
    order = np.argsort(-scores, kind="stable")[:settings.prune]
    kept = {int(index) for index in order if np.isfinite(scores[index])}
    kept.add(grade.chosen)
    choice = policy_choice(decision, AlternativeSet(tuple(grade.alternatives), grade.chosen,
                                                    grade.legal), settings.policy, futures.rules)
    if choice is not None:
        kept.add(choice)
    grade.extra["pruned_to"] = len(kept)
    return kept


def policy_scores(decision: Decision, alternatives: list[Alternative], policy: str,
                  rules: RuleSet) -> np.ndarray | None:
    """The rollout policy's own score of each alternative (its representative placement; -inf
    for a placement the bot never plays), or None for a policy that does not score."""
    column = column_policy(policy, decision.hand.variant, rules)
    scores = column.scores(BoardBatch.from_rows([decision.rows], [decision.known]),
                           np.asarray([decision.dealt], dtype=np.int64), decision.discards)
    if scores is None:
        return None
    index = {pattern: position for position, pattern in
             enumerate(street_patterns(len(decision.dealt), decision.discards))}
    return np.asarray([scores[0, index[alternative.pattern]] for alternative in alternatives],
                      dtype=np.float64)


def _race_contenders(grade: DecisionGrade, futures: Futures, settings: GradeSettings,
                     active: list[int],
                     seen: dict[int, tuple[int, np.ndarray]]) -> None:
    """After ``rollouts`` samples: the plays still within reach of the leader (at most
    ``contenders`` of them, the leader included) race on, the count doubling up to
    ``race_samples``; at each step a play more than ``contender_z`` paired SEs behind the leader
    stops, and the race ends when one play is left. Only in decisions with at most
    ``race_limit`` plays (0, the default: every decision; docs/grading.md measures both).
    Selection stream only: the evaluation
    stream stays independent of everything decided here."""
    if settings.contenders < 2:
        return
    if settings.race_limit and len(grade.alternatives) > settings.race_limit:
        return
    tallies = grade.tallies
    chosen = grade.chosen
    count = settings.rollouts
    cap = settings.race_samples
    full = [index for index in active if tallies[index].samples >= count]
    racing = _contenders(full, tallies, chosen, settings.contender_z, seen, settings.contenders)
    while len(racing) > 1 and count < cap:
        step = min(cap, 2 * count)
        rollouts = futures.samples(SELECTION, count, step)
        needed = [index for index in racing if tallies[index].samples < step]
        grade.new_samples += _extend(rollouts, grade.alternatives, tallies, chosen, needed, step,
                                     seen)
        count = step
        racing = _contenders(racing, tallies, chosen, settings.contender_z, seen,
                             settings.contenders)


def _contenders(candidates: list[int], tallies: list[Tally], chosen: int, z: float,
                seen: dict[int, tuple[int, np.ndarray]], most: int) -> list[int]:
    """The plays among ``candidates`` within ``z`` paired SEs of the leader (the largest mean
    difference), leader first, at most ``most`` of them, the closest to the leader first."""
    if not candidates:
        return []

    def score(index: int) -> float:
        return tallies[index].diff if index != chosen else 0.0

    leader = max(candidates, key=lambda index: (score(index), index == chosen))
    within: list[tuple[float, int]] = []
    for index in candidates:
        if index == leader:
            continue
        paired = _paired_gap(leader, index, seen)
        if paired is None:
            gap = score(leader) - score(index)
            se = tallies[index].diff_se + (tallies[leader].diff_se if leader != chosen else 0.0)
        else:
            gap, se = paired
        if gap < z * se:
            within.append((gap / se if se > 0 else 0.0, index))
    within.sort()
    return [leader, *(index for _, index in within[:most - 1])]


def _evaluate(grade: DecisionGrade, futures: Futures, settings: GradeSettings,
              best: int) -> None:
    """The evaluation stream: the selected and the chosen play on fresh samples (how many:
    :meth:`GradeSettings.evaluation_for` the spread of their difference on the selection
    stream)."""
    selected = grade.tallies[best]
    target = settings.evaluation_for(selected.diff_se * math.sqrt(selected.samples))
    evaluations = grade.evaluations
    start = min(evaluations[best].samples, evaluations[grade.chosen].samples)
    if start >= target:
        return
    rollouts = futures.samples(EVALUATION, start, target)
    grade.new_samples += _extend(rollouts, grade.alternatives, evaluations, grade.chosen, [best],
                                 target, {})


class Futures:
    """A decision's sampled futures, one :class:`~pipeline.analysis.rollout.Rollouts` per
    stream, grown as racing and evaluation ask for more: every sample is dealt, played by the
    opponents and judged once, and every play's values on it are worked out once."""

    def __init__(self, decision: Decision, rules: RuleSet, settings: GradeSettings) -> None:
        self.decision = decision
        self.rules = rules
        self.settings = settings
        self._streams: dict[int, Rollouts] = {}

    def samples(self, stream: int, lo: int, hi: int) -> Rollouts:
        """The stream's samples, holding at least ``lo .. hi - 1``."""
        held = self._streams.get(stream)
        if held is None or held.lo > lo:
            settings = self.settings
            held = Rollouts(self.decision, self.rules, lo, hi, settings.seed, settings.policy,
                            settings.fantasyland_value, stream=stream)
            self._streams[stream] = held
        held.grow(hi)
        return held


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
    group = sorted(set(needed) | {chosen})
    lo = min(tallies[index].samples for index in group)
    if lo >= upto:
        return 0
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
