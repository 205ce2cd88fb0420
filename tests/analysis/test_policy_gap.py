"""The gap to the rollout policy's own play: 0 for the policy's own plays, unbiased, and it
tells simulated players of known style apart.

Ground truth from the simulator: hands where every seat is the ``expert`` bot (the grader's
rollout policy) must show no gap at all (a fixed bot that "loses" to itself would be a bug);
at a table of solid, chaser and random the random bot's gap per decision must be several times
the others' (the issue's "random ≥ 3× solid", which the EV loss cannot show: docs/grading.md).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pipeline.analysis.alternatives import canonical_key
from pipeline.analysis.decisions import Decision
from pipeline.analysis.exact import enumerate_deals
from pipeline.analysis.grade import GradeSettings, grade_decision, policy_choice
from pipeline.analysis.policy import BoardBatch
from pipeline.analysis.rollout import DEFAULT_POLICY, column_policy
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD
from pipeline.simulate.simulation import SimulationConfig, simulate
from tests.analysis.hands import build_database, database_decisions

CHEAP = GradeSettings(rollouts=24, evaluation=300, contenders=0, evaluation_se=0)
"""Few selection samples (the best play does not matter here), 300 evaluation samples."""

ONE_SIDED_Z = 1.645
BOT_OF = {"mara": "solid", "jun": "chaser", "lee": "random"}  # simulate.players: bots in turn


def _decisions(folder: Path, hands: int, bots: tuple[str, ...], seed: int) -> list[Decision]:
    config = SimulationConfig(hands=hands, seed=seed, variants=(Variant.PINEAPPLE,), players=3,
                              pool_size=3, bots=bots)
    records = [json.loads(line) for output in simulate(config)
               for line in output.lines.decode().splitlines()]
    return database_decisions(build_database(folder, records, name="-".join(bots)))


def _mean_se(values: list[float]) -> tuple[float, float]:
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((value - mean) ** 2 for value in values) / (len(values) - 1))
    return mean, spread / math.sqrt(len(values))


def test_the_policy_choice_is_the_bots_own_placement(tmp_path: Path) -> None:
    """The alternative named as the policy's play holds exactly the rows the bot makes."""
    decisions = _decisions(tmp_path, 3, ("solid", "chaser", "random"), seed=41)
    checked = 0
    for decision in decisions:
        options = decision.alternatives()
        if len(options.alternatives) < 2:
            continue
        index = policy_choice(decision, options, "expert", STANDARD)
        assert index is not None
        boards = BoardBatch.from_rows([decision.rows])
        column_policy("expert", decision.hand.variant, STANDARD).play_street(
            boards, np.asarray([decision.dealt]), decision.discards)
        made = tuple(tuple(cards) for cards in boards.rows(0))
        group = decision.symmetry()
        assert canonical_key(options.alternatives[index].rows_after, group) == canonical_key(
            made, group)
        checked += 1
    assert checked >= 30
    # a bot that plays by chance has no single play to compare with
    assert policy_choice(decisions[0], decisions[0].alternatives(), "random", STANDARD) is None


def test_the_policys_own_plays_have_no_gap(tmp_path: Path) -> None:
    """Every seat played by the rollout policy: the gap is exactly 0 in every decision."""
    decisions = _decisions(tmp_path, 6, (DEFAULT_POLICY,), seed=43)
    gaps = []
    for decision in decisions:
        grade = grade_decision(decision, STANDARD, CHEAP)
        if grade is None:
            continue
        assert grade.policy_gap == 0.0, (decision.player, decision.street_number,
                                         grade.policy_choice, grade.chosen)
        assert grade.policy_gap_se == 0.0
        gaps.append(grade.policy_gap)
    assert len(gaps) >= 60


def test_an_exact_gap_is_the_difference_of_exact_values(tmp_path: Path) -> None:
    """On an enumerated decision the gap is the policy play's exact value minus the play
    made's (every deal played once), with no error."""
    decisions = _decisions(tmp_path, 8, ("solid", "chaser", "random"), seed=47)
    exact = [decision for decision in decisions if decision.street == 4
             and enumerate_deals(decision, 40_000) is not None]
    found = 0
    for decision in exact:
        grade = grade_decision(decision, STANDARD, GradeSettings())
        if grade is None or grade.policy_choice in (None, grade.chosen):
            continue
        assert grade.exact
        expected = grade.tallies[grade.policy_choice].ev - grade.tallies[grade.chosen].ev
        assert grade.policy_gap == pytest.approx(expected, abs=1e-9)
        assert grade.policy_gap_se == 0.0
        found += 1
    assert found >= 3


GAP_ONLY = GradeSettings(rollouts=4, screen=0, evaluation=400, contenders=0, evaluation_se=0,
                         exact_limit=0, policy="expert")
"""Next to no selection (the best play does not matter here): the gap's 400 evaluation samples
are most of the work. The expert policy, as these figures were measured: against the learned
policy (the default) the heuristic bots' gap is larger (solid 1.45 a decision at seed 53)."""


def test_the_gap_tells_random_play_from_sound_play(tmp_path: Path) -> None:
    """Solid, chaser and random at one table (48 hands, about 700 graded decisions): the
    random bot's gap per decision is more than 3× each heuristic bot's (``random − 3 × other``
    above zero by a one-sided 5 % test; measured at this seed: solid 0.32 ± 0.14, chaser
    0.21 ± 0.07, random 1.93 ± 0.21), and each heuristic bot's gap is small (under a
    point a decision) while random's is well over one."""
    decisions = _decisions(tmp_path, 48, ("solid", "chaser", "random"), seed=53)
    gaps: dict[str, list[float]] = {"solid": [], "chaser": [], "random": []}
    for decision in decisions:
        grade = grade_decision(decision, STANDARD, GAP_ONLY)
        if grade is None or grade.policy_gap is None:
            continue
        gaps[BOT_OF[decision.player]].append(grade.policy_gap)
    chaos, chaos_se = _mean_se(gaps["random"])
    assert chaos > 1.0, chaos
    for bot in ("solid", "chaser"):
        mean, error = _mean_se(gaps[bot])
        assert len(gaps[bot]) >= 150
        assert mean < 1.0, (bot, mean)
        # one-sided: random − 3 × other > 0 at the 5 % level
        assert chaos - 3 * mean > ONE_SIDED_Z * math.hypot(chaos_se, 3 * error), (
            bot, mean, error, chaos, chaos_se)
