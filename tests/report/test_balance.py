"""The balance sheet's decomposition: exact, never overlapping, with honest standard errors."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from pipeline.report import balance
from tests.report.synthetic import STYLE_RANDOM, STYLE_SOLID, boards, state_frame


def _difference(player, reference) -> float:  # noqa: ANN001
    return float(player[1].mean() - reference[1].mean())


def test_the_causes_add_up_to_the_difference_exactly() -> None:
    generator = np.random.default_rng(1)
    for size in (40, 400, 4000):
        mine = boards(STYLE_RANDOM, size, generator)
        theirs = boards(STYLE_SOLID, 3 * size, generator)
        strata = balance.strata_balances(state_frame("p", "pineapple", 3, *mine),
                                         state_frame("r", "pineapple", 3, *theirs))
        assert len(strata) == 1
        terms = strata[0].terms
        assert terms.sum() == pytest.approx(_difference(mine, theirs), abs=1e-9)
        # the random style loses most by fouling
        assert int(np.argmin(terms)) == balance.CAUSES.index("fouls")


def test_a_state_one_side_never_reaches_keeps_the_split_exact() -> None:
    generator = np.random.default_rng(2)
    state, value, royalty = boards(STYLE_RANDOM, 300, generator)
    keep = state != 0  # this player never plays Fantasyland
    mine = (state[keep], value[keep], royalty[keep])
    theirs = boards(STYLE_SOLID, 900, generator)
    [stratum] = balance.strata_balances(state_frame("p", "classic", 2, *mine),
                                        state_frame("r", "classic", 2, *theirs))
    assert stratum.terms.sum() == pytest.approx(_difference(mine, theirs), abs=1e-9)
    assert stratum.terms[balance.CAUSES.index("fantasyland")] < 0  # the group's FL is missed


def test_strata_are_weighted_by_the_players_hands() -> None:
    generator = np.random.default_rng(3)
    frames_mine, frames_theirs, expected, hands = [], [], 0.0, 0
    for variant, count, size in (("pineapple", 3, 600), ("classic", 2, 200)):
        mine = boards(STYLE_SOLID, size, generator)
        theirs = boards(STYLE_SOLID, 2000, generator)
        frames_mine.append(state_frame("p", variant, count, *mine))
        frames_theirs.append(state_frame("r", variant, count, *theirs))
        expected += size * _difference(mine, theirs)
        hands += size
    combined = balance.combine(balance.strata_balances(pl.concat(frames_mine),
                                                       pl.concat(frames_theirs)))
    assert combined is not None and combined.hands == hands
    assert combined.terms.sum() == pytest.approx(expected / hands, abs=1e-9)
    value, se = combined.estimate([1, 1, 1, 1])
    assert value == pytest.approx(expected / hands, abs=1e-9) and se > 0


def test_delta_method_errors_match_the_spread_over_repeated_samples() -> None:
    """Draw the same two styles 400 times: the spread of each cause across draws matches the
    standard error the delta method gives from one draw (within 20 %)."""
    generator = np.random.default_rng(4)
    terms, errors = [], []
    for _ in range(400):
        mine = boards(STYLE_RANDOM, 300, generator)
        theirs = boards(STYLE_SOLID, 900, generator)
        [stratum] = balance.strata_balances(state_frame("p", "pineapple", 3, *mine),
                                            state_frame("r", "pineapple", 3, *theirs))
        terms.append(stratum.terms)
        errors.append(np.sqrt(np.diag(stratum.covariance)))
    spread = np.std(np.array(terms), axis=0, ddof=1)
    typical = np.mean(np.array(errors), axis=0)
    for cause, observed, estimated in zip(balance.CAUSES, spread, typical, strict=True):
        assert estimated == pytest.approx(observed, rel=0.2), cause
