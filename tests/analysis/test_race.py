"""The contender race: after ``rollouts`` samples the plays still within reach of the leader get
more selection samples (up to ``race_samples``), the rest stop; the evaluation stream is left
alone, so the loss stays unbiased."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from pipeline.analysis.decisions import Decision
from pipeline.analysis.grade import DecisionGrade, GradeSettings, grade_decision
from pipeline.analysis.rollout import EVALUATION, SELECTION, Rollouts
from pipeline.rules.ruleset import STANDARD

RACE = GradeSettings(rollouts=32, contenders=3, race_to=128, race_limit=0, exact_limit=0,
                     evaluation_se=0.0)
NO_RACE = replace(RACE, contenders=0)


@pytest.fixture(scope="module")
def later_streets(simulated_source: list[dict], tmp_path_factory: pytest.TempPathFactory,
                  ) -> list[Decision]:
    """The third and fourth streets of the simulated hands (every seat not in Fantasyland)."""
    from tests.analysis.hands import build_database, database_decisions

    database = build_database(tmp_path_factory.mktemp("race"), simulated_source, name="race")
    return database_decisions(database, streets=(2, 3))


@pytest.fixture(scope="module")
def raced(later_streets: list[Decision]) -> list[DecisionGrade]:
    """The grades (settings :data:`RACE`) of the decisions where some plays raced on."""
    grades = [grade_decision(decision, STANDARD, RACE) for decision in later_streets]
    return [grade for grade in grades
            if grade is not None and grade.tallies[grade.chosen].samples > RACE.rollouts]


def test_only_the_plays_in_contention_race_on(later_streets: list[Decision],
                                              raced: list[DecisionGrade]) -> None:
    assert len(raced) >= 3, "no decision of the set had plays within reach of each other"
    for grade in raced:
        counts = [tally.samples for tally in grade.tallies]
        full = counts[grade.chosen]
        assert full in (64, 128)  # the count doubles from rollouts up to race_to
        assert max(counts) == full
        racing = [index for index, count in enumerate(counts)
                  if count > RACE.rollouts and index != grade.chosen]
        assert 1 <= len(racing) <= RACE.contenders
        # the best play is one that raced the full count, the largest mean difference there
        assert grade.best == grade.chosen or counts[grade.best] == full
        finishers = [index for index, count in enumerate(counts) if count == full]
        assert grade.best == max(finishers, key=lambda index: (
            grade.tallies[index].diff if index != grade.chosen else 0.0, index == grade.chosen))
    # without the race every play stops at rollouts
    for decision in later_streets[:6]:
        plain = grade_decision(decision, STANDARD, NO_RACE)
        assert plain is None or max(tally.samples for tally in plain.tallies) == 32


def test_raced_sums_are_those_of_the_first_samples(later_streets: list[Decision],
                                                    raced: list[DecisionGrade]) -> None:
    """Every play's sums, racing or not, are the sums over samples 0 .. n-1 of the selection
    stream (computed here directly), its differences paired with the chosen play's."""
    grade = raced[0]
    decision = _decision_of(later_streets, grade)
    full = grade.tallies[grade.chosen].samples
    values = Rollouts(decision, STANDARD, 0, full, RACE.seed, RACE.policy,
                      RACE.fantasyland_value, stream=SELECTION).values(grade.alternatives)
    chosen = values[grade.chosen]
    for index, tally in enumerate(grade.tallies):
        count = tally.samples
        assert tally.total == pytest.approx(values[index, :count].sum())
        assert tally.diff_total == pytest.approx((values[index, :count] - chosen[:count]).sum(),
                                                 abs=1e-9)


def test_the_race_is_fixed_by_the_seed(later_streets: list[Decision],
                                       raced: list[DecisionGrade]) -> None:
    decision = _decision_of(later_streets, raced[0])
    runs = [grade_decision(decision, STANDARD, replace(RACE, seed=seed)) for seed in (3, 3, 4)]
    assert all(run is not None for run in runs)
    signature = [[(tally.samples, tally.total, tally.diff_total) for tally in run.tallies]
                 for run in runs]
    assert signature[0] == signature[1]
    assert signature[0] != signature[2]
    assert (runs[0].best, runs[0].ev_loss) == (runs[1].best, runs[1].ev_loss)


def test_the_race_leaves_the_evaluation_stream_alone(later_streets: list[Decision]) -> None:
    """The loss is measured on the evaluation stream, which the race never touches: where the
    race and no race select the same play, the samples behind the loss are the very same, and
    they are that stream's first samples (so the selection cannot have shaped them)."""
    same = 0
    for decision in later_streets[:30]:
        raced = grade_decision(decision, STANDARD, RACE)
        plain = grade_decision(decision, STANDARD, NO_RACE)
        if raced is None or plain is None or raced.best != plain.best or raced.best == raced.chosen:
            continue
        same += 1
        best = raced.best
        mine, theirs = raced.evaluations[best], plain.evaluations[best]
        assert (mine.samples, mine.total, mine.diff_total) == (
            theirs.samples, theirs.total, theirs.diff_total)
        fresh = Rollouts(decision, STANDARD, 0, RACE.evaluation_samples, RACE.seed, RACE.policy,
                         RACE.fantasyland_value, stream=EVALUATION).values(
            [raced.alternatives[best], raced.alternatives[raced.chosen]])
        assert raced.ev_loss == pytest.approx(float(np.mean(fresh[0] - fresh[1])))
    assert same >= 3


def test_the_race_finds_the_reference_best_more_often(later_streets: list[Decision]) -> None:
    """Against a reference with 16× the samples (another seed, every play to the full count),
    the race picks the reference's best play more often, and its picks give up less by the
    reference's values, than the same grader without the race (64 decisions: 43 against 37
    agreements, 10.9 against 23.0 points given up in all)."""
    reference = replace(NO_RACE, rollouts=512, seed=99, screen=0)
    regret = {"race": 0.0, "none": 0.0}
    agree = {"race": 0, "none": 0}
    for decision in later_streets:
        truth = grade_decision(decision, STANDARD, reference)
        if truth is None:
            continue
        top = truth.tallies[truth.best].diff if truth.best != truth.chosen else 0.0
        for name, settings in (("race", RACE), ("none", NO_RACE)):
            grade = grade_decision(decision, STANDARD, settings)
            assert grade is not None
            picked = truth.tallies[grade.best].diff if grade.best != truth.chosen else 0.0
            regret[name] += top - picked
            agree[name] += grade.best == truth.best
    assert agree["race"] > agree["none"], agree
    assert regret["race"] < regret["none"], regret


def _decision_of(decisions: list[Decision], grade: DecisionGrade) -> Decision:
    return next(decision for decision in decisions
                if decision.hand.hand_key == grade.hand_key and decision.player == grade.player
                and decision.street_number == grade.street)


def test_settings_refuse_a_bad_race() -> None:
    for bad in ({"contenders": -1}, {"race_to": 1}, {"contender_z": 0.0}, {"evaluation_se": -1.0},
                {"race_limit": -1}):
        with pytest.raises(ValueError):
            replace(GradeSettings(), **bad).check()
    assert GradeSettings(rollouts=600, race_to=100).race_samples == 600
    assert GradeSettings(rollouts=600).race_samples == 2400


def test_the_evaluation_count_follows_the_selection_spread(later_streets: list[Decision]) -> None:
    """With an SE target the evaluation draws more samples where the loss is noisy; how many is
    read off the selection stream only, and the loss is the mean over that many fresh samples
    of the evaluation stream (the count cannot depend on what they say: unbiased)."""
    settings = replace(RACE, evaluation=40, evaluation_se=0.5)
    counts = []
    for decision in later_streets[:30]:
        grade = grade_decision(decision, STANDARD, settings)
        if grade is None or grade.best == grade.chosen:
            continue
        selected = grade.tallies[grade.best]
        count = grade.evaluations[grade.best].samples
        assert count == settings.evaluation_for(selected.diff_se * selected.samples ** 0.5)
        assert 40 <= count <= 160
        fresh = Rollouts(decision, STANDARD, 0, count, settings.seed, settings.policy,
                         settings.fantasyland_value, stream=EVALUATION).values(
            [grade.alternatives[grade.best], grade.alternatives[grade.chosen]])
        assert grade.ev_loss == pytest.approx(float(np.mean(fresh[0] - fresh[1])))
        counts.append(count)
    assert len(counts) >= 3 and max(counts) > 40 and min(counts) < 160
    assert GradeSettings(evaluation=1000, evaluation_se=0.25).evaluation_for(5.0) == 1000
    assert GradeSettings(evaluation=1000, evaluation_se=0.25).evaluation_for(10.0) == 1600
    assert GradeSettings(evaluation=1000, evaluation_se=0.25).evaluation_for(50.0) == 4000
    assert GradeSettings(evaluation=1000, evaluation_se=0.0).evaluation_for(50.0) == 1000


def test_the_race_runs_only_where_the_plays_are_few_enough(later_streets: list[Decision],
                                                         raced: list[DecisionGrade]) -> None:
    grade = raced[0]
    decision = _decision_of(later_streets, grade)
    plays = len(grade.alternatives)
    within = grade_decision(decision, STANDARD, replace(RACE, race_limit=plays))
    beyond = grade_decision(decision, STANDARD, replace(RACE, race_limit=plays - 1))
    assert within is not None and beyond is not None
    assert [tally.samples for tally in within.tallies] == [tally.samples for tally in grade.tallies]
    assert max(tally.samples for tally in beyond.tallies) == RACE.rollouts


def test_a_later_run_refines_raced_sums(later_streets: list[Decision],
                                        raced: list[DecisionGrade]) -> None:
    """Stored raced sums are extended, never recomputed: a run with more rollouts adds samples
    after the stored ones, and every play's sums are still those of its first samples."""
    grade = raced[0]
    decision = _decision_of(later_streets, grade)
    prior = {alternative.describe(): (tally, evaluated) for alternative, tally, evaluated
             in zip(grade.alternatives, grade.tallies, grade.evaluations, strict=True)}
    more = replace(RACE, rollouts=64, race_to=256)
    refined = grade_decision(decision, STANDARD, more, prior)
    assert refined is not None
    for before, after in zip(grade.tallies, refined.tallies, strict=True):
        assert after.samples >= before.samples
    full = refined.tallies[refined.chosen].samples
    assert full > grade.tallies[grade.chosen].samples
    values = Rollouts(decision, STANDARD, 0, full, RACE.seed, RACE.policy,
                      RACE.fantasyland_value, stream=SELECTION).values(refined.alternatives)
    for index, tally in enumerate(refined.tallies):
        assert tally.total == pytest.approx(values[index, :tally.samples].sum())
    assert refined.new_samples == sum(
        after.samples - before.samples for after, before in zip(
            refined.tallies + refined.evaluations, grade.tallies + grade.evaluations, strict=True))
