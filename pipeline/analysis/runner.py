"""Grading a database: pick hands, grade every decision (in parallel), store the grades.

:func:`analyze_database` reads the chosen hands (the most recent ones with streets, of one
player or of everybody), grades each non-Fantasyland street of the chosen players and compares
their Fantasyland hands with the solver, then writes the results in batches (one short write
transaction each, so a dashboard can read in between). Work is split by (hand, player) over
``jobs`` processes; every number depends only on the seeds, never on the split.
"""

from __future__ import annotations

import gc
import math
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pipeline import store
from pipeline.analysis import results
from pipeline.analysis.decisions import HandView, decision_at, load_hands, select_hands
from pipeline.analysis.fantasyland import grade_fantasyland
from pipeline.analysis.grade import DecisionGrade, GradeSettings, Tally, grade_decision
from pipeline.analysis.rollout import prepare_policy
from pipeline.formats.source import forked_pool
from pipeline.records.rules_file import RulesResolver
from pipeline.rules.ruleset import RulesError, RuleSet

WRITE_EVERY = 500
"""Decisions per write transaction."""


@dataclass(slots=True)
class PlayerTotals:
    """What one run graded for one player in one variant.

    ``hand_losses``: the summed EV loss of each hand with graded decisions (hand key -> points),
    so that the loss per hand gets its own standard error (the spread of the hands' sums)."""

    hands: set[int] = field(default_factory=set)
    decisions: int = 0
    mistakes: int = 0
    uncertain: int = 0  # mistakes by the rollout policy the second look does not confirm
    exact: int = 0
    ev_loss: float = 0.0
    ev_loss_squares: float = 0.0
    hand_losses: dict[int, float] = field(default_factory=dict)
    fantasyland_hands: int = 0
    fantasyland_given_up: float = 0.0
    gap_decisions: int = 0  # decisions whose gap to the rollout policy's own play was measured
    policy_gap: float = 0.0
    policy_gap_squares: float = 0.0

    @property
    def loss_per_decision(self) -> tuple[float, float] | None:
        """Mean EV loss per graded decision and its standard error (None: nothing graded)."""
        return _mean_se(self.decisions, self.ev_loss, self.ev_loss_squares)

    @property
    def gap_per_decision(self) -> tuple[float, float] | None:
        """Mean gap to the rollout policy's own play per decision and its standard error."""
        return _mean_se(self.gap_decisions, self.policy_gap, self.policy_gap_squares)

    @property
    def loss_per_hand(self) -> tuple[float, float] | None:
        """Mean EV loss per hand with graded decisions and its standard error."""
        values = list(self.hand_losses.values())
        return _mean_se(len(values), sum(values), sum(value * value for value in values))


def _mean_se(count: int, total: float, squares: float) -> tuple[float, float] | None:
    if count == 0:
        return None
    mean = total / count
    if count < 2:
        return (mean, math.nan)
    variance = max(0.0, (squares - count * mean * mean) / (count - 1))
    return (mean, math.sqrt(variance / count))


@dataclass(slots=True)
class AnalysisSummary:
    """The outcome of one :func:`analyze_database` run."""

    hands: int = 0
    decisions: int = 0
    forced: int = 0  # streets with a single distinct placement (nothing to grade)
    samples: int = 0
    seconds: float = 0.0
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> hands
    players: dict[tuple[str, str], PlayerTotals] = field(default_factory=dict)  # (player, variant)
    variants: dict[str, int] = field(default_factory=dict)  # variant -> hands graded
    newest: str | None = None  # started_at of the most recent hand graded (ISO, UTC)
    oldest: str | None = None

    @property
    def decisions_per_second(self) -> float:
        """Graded decisions per wall-clock second."""
        return self.decisions / self.seconds if self.seconds else 0.0


@dataclass(frozen=True, slots=True)
class _Task:
    hand: HandView
    seat: int
    rules: RuleSet
    settings: GradeSettings
    prior: dict[int, dict[str, tuple[Tally, Tally]]]  # street (1-based) -> stored sums


@dataclass(slots=True)
class _TaskResult:
    player: str
    variant: str
    hand_key: int
    grades: list[DecisionGrade]
    forced: int
    fantasyland: dict | None
    fantasyland_given_up: float = 0.0


def _run_task(task: _Task) -> _TaskResult:
    """Grade one player's hand, with the garbage collector paused (:func:`_paused_collector`)."""
    with _paused_collector():
        return _grade_task(task)


@contextmanager
def _paused_collector() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a hand's grading: the rollouts make and drop
    many small objects (arrays' wrappers, tuples), none of them in cycles, and the collector's
    passes over everything alive were about 7 % of a grade's CPU (perf, 8 hands). Reference
    counting still frees every object at once; the collector runs again afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _grade_task(task: _Task) -> _TaskResult:
    hand = task.hand
    seat = hand.seats[task.seat]
    if seat.fantasyland:
        graded = grade_fantasyland(hand, task.seat, task.rules, task.settings.fantasyland_value)
        return _TaskResult(seat.name, hand.variant.value, hand.hand_key, [], 0,
                           graded.row() if graded else None,
                           graded.points_given_up if graded else 0.0)
    grades = []
    forced = 0
    for street in hand.decision_streets(seat.name):
        decision = decision_at(hand, task.seat, street)
        grade = grade_decision(decision, task.rules, task.settings, task.prior.get(street + 1))
        if grade is None:
            forced += 1
        else:
            grades.append(grade)
    return _TaskResult(seat.name, hand.variant.value, hand.hand_key, grades, forced, None)


def _search_directories(database: Path, connection) -> list[Path]:  # noqa: ANN001
    directories = [Path.cwd(), database.resolve().parent]
    for (path,) in connection.execute(
        "SELECT DISTINCT source_path FROM hands WHERE source_path IS NOT NULL"
    ).fetchall():
        directories.append(Path(path).parent)
    return list(dict.fromkeys(directories))


def plan_tasks(
    database: str | os.PathLike[str],
    player: str | None = None,
    hands: int | None = None,
    settings: GradeSettings | None = None,
    rules: RuleSet | None = None,
    decisions: bool = True,
    variant: str | None = None,
    outdated: bool = False,
) -> tuple[list[_Task], AnalysisSummary]:
    """Read the chosen hands and stored sums; one task per (hand, graded player).

    ``decisions`` false keeps only the Fantasyland hands (compared with the solver); ``variant``
    keeps only that variant's hands; ``outdated`` only the hands holding an outdated grade
    (older grader or another rollout policy: regraded now)."""
    settings = settings or GradeSettings()
    settings.check()
    summary = AnalysisSummary()
    path = Path(database)
    connection = store.connect(path, read_only=True)
    try:
        keys = select_hands(connection, player, hands, variant, outdated)
        views = load_hands(connection, keys)
        resolver = RulesResolver(override=rules,
                                 search_directories=_search_directories(path, connection))
        wanted: list[tuple[HandView, int, RuleSet]] = []
        for view in views:
            try:
                rule_set = resolver(view.rules)
            except RulesError:
                summary.skipped[f"unknown rules {view.rules!r}"] = (
                    summary.skipped.get(f"unknown rules {view.rules!r}", 0) + 1)
                continue
            summary.hands += 1
            if view.started_at is not None:
                summary.oldest = min(summary.oldest or view.started_at, view.started_at)
                summary.newest = max(summary.newest or view.started_at, view.started_at)
            summary.variants[view.variant.value] = summary.variants.get(view.variant.value, 0) + 1
            for index, seat in enumerate(view.seats):
                if (player is None or seat.name == player) and (decisions or seat.fantasyland):
                    wanted.append((view, index, rule_set))
        decision_keys = [
            (view.hand_key, view.seats[index].name, street + 1)
            for view, index, _ in wanted
            for street in view.decision_streets(view.seats[index].name)
        ]
        prior = results.load_prior(connection, decision_keys)
    finally:
        connection.close()
    grouped: dict[tuple[int, str], dict[int, tuple[str, dict[str, tuple[Tally, Tally]]]]] = {}
    for (key, who, street), entry in prior.items():
        grouped.setdefault((key, who), {})[street] = entry
    tasks = []
    for view, index, rule_set in wanted:
        name = view.seats[index].name
        fingerprint = settings.fingerprint(rule_set.name)
        stored = {
            street: tallies
            for street, (stored_fingerprint, tallies) in grouped.get((view.hand_key, name), {}).items()
            if stored_fingerprint == fingerprint
        }
        tasks.append(_Task(view, index, rule_set, settings, stored))
    return tasks, summary


def analyze_database(
    database: str | os.PathLike[str],
    player: str | None = None,
    hands: int | None = None,
    settings: GradeSettings | None = None,
    jobs: int = 1,
    rules: RuleSet | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    decisions: bool = True,
    variant: str | None = None,
    outdated: bool = False,
) -> AnalysisSummary:
    """Grade the decisions of the ``hands`` most recent hands with streets (of ``player``, or of
    everyone) and store them. ``on_progress(done, total)`` is called as players' hands finish
    (counts are decisions, Fantasyland hands counting one). ``decisions`` false compares only
    the Fantasyland hands with the solver (fast: milliseconds a hand); ``variant`` grades only
    that variant's hands; ``outdated`` only the hands holding an outdated grade.

    Raises ValueError for unusable settings, FileNotFoundError for a missing database.
    """
    started = time.perf_counter()
    settings = settings or GradeSettings()
    tasks, summary = plan_tasks(database, player, hands, settings, rules, decisions, variant,
                                outdated)
    total = sum(_task_size(task) for task in tasks)
    done = 0
    if on_progress:
        on_progress(0, total)
    pending_grades: list[DecisionGrade] = []
    pending_fantasyland: list[dict] = []

    def flush() -> None:
        if not pending_grades and not pending_fantasyland:
            return
        connection = store.connect(database)
        try:
            results.write_grades(connection, pending_grades)
            results.write_fantasyland(connection, pending_fantasyland)
        finally:
            connection.close()
        pending_grades.clear()
        pending_fantasyland.clear()

    for outcome in _results(tasks, jobs):
        totals = summary.players.setdefault((outcome.player, outcome.variant), PlayerTotals())
        totals.hands.add(outcome.hand_key)
        summary.forced += outcome.forced
        if outcome.grades:
            totals.hand_losses[outcome.hand_key] = sum(grade.ev_loss for grade in outcome.grades)
        for grade in outcome.grades:
            summary.decisions += 1
            summary.samples += grade.new_samples + grade.second_samples
            totals.decisions += 1
            totals.mistakes += grade.mistake
            totals.uncertain += grade.uncertain
            totals.exact += grade.exact
            totals.ev_loss += grade.ev_loss
            totals.ev_loss_squares += grade.ev_loss * grade.ev_loss
            if grade.policy_gap is not None:
                totals.gap_decisions += 1
                totals.policy_gap += grade.policy_gap
                totals.policy_gap_squares += grade.policy_gap * grade.policy_gap
        if outcome.fantasyland is not None:
            totals.fantasyland_hands += 1
            totals.fantasyland_given_up += outcome.fantasyland_given_up
            pending_fantasyland.append(outcome.fantasyland)
        pending_grades.extend(outcome.grades)
        done += max(1, len(outcome.grades) + outcome.forced)
        if len(pending_grades) >= WRITE_EVERY:
            flush()
        if on_progress:
            on_progress(done, total)
    flush()
    summary.seconds = time.perf_counter() - started
    return summary


def _task_size(task: _Task) -> int:
    seat = task.hand.seats[task.seat]
    return 1 if seat.fantasyland else max(1, len(seat.streets))


def _results(tasks: Sequence[_Task], jobs: int):  # noqa: ANN202
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield _run_task(task)
        return
    if "fork" in multiprocessing.get_all_start_methods():  # the workers inherit it compiled
        first = tasks[0]
        prepare_policy(first.settings.policy, first.rules, first.hand.variant)
    with forked_pool(min(jobs, len(tasks))) as pool:  # never more workers than the work
        yield from pool.imap_unordered(_run_task, tasks, chunksize=1)
