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


def _sessions_frame(variant: str, player_count: int, state: np.ndarray, value: np.ndarray,
                    royalty: np.ndarray, sessions: int) -> pl.DataFrame:
    """The sessions' sums (as :func:`pipeline.read.report.session_states` gives them) of boards
    dealt in turn to ``sessions`` consecutive sessions."""
    session = np.arange(state.size) * sessions // state.size
    rows = []
    for number in range(sessions):
        for index, name in enumerate(balance.STATES):
            mask = (session == number) & (state == index)
            if mask.any():
                rows.append({"variant": variant, "player_count": player_count,
                             "session": f"S{number}", "state": name,
                             "boards": int(mask.sum()), "value": float(value[mask].sum()),
                             "royalty": float(royalty[mask].sum())})
    return pl.DataFrame(rows)


def _combined(mine, theirs, sessions: tuple[int, int] | None = (4, 40)):  # noqa: ANN001, ANN202
    player_rows = state_frame("p", "pineapple", 3, *mine)
    reference_rows = state_frame("r", "pineapple", 3, *theirs)
    if sessions is None:
        return balance.combine(balance.strata_balances(player_rows, reference_rows))
    return balance.combine(balance.strata_balances(
        player_rows, reference_rows, _sessions_frame("pineapple", 3, *mine, sessions[0]),
        _sessions_frame("pineapple", 3, *theirs, sessions[1])))


def test_a_player_whose_hands_spread_little_is_judged_like_the_group() -> None:
    """A player of the group's style whose hands happen to spread far less than the group's
    (every board's value near its state's mean) and sit a little above it: on his own spread
    (boards or his four sessions) the rows cause looks certain; with the floor (the variance his
    figure would have with the group's covariance per hand) it is luck-sized, not clear."""
    generator = np.random.default_rng(11)
    theirs = boards(STYLE_SOLID, 4000, generator)
    quiet = {state: (share, mean + 0.8, royalty, 0.3)
             for state, (share, mean, royalty, _) in STYLE_SOLID.items()}
    mine = boards(quiet, 300, generator)
    for sessions in ((4, 40), None):
        combined = _combined(mine, theirs, sessions)
        assert combined is not None
        rows = [0, 0, 0, 1]
        test = combined.test(rows)
        [stratum] = combined.strata
        own = float(np.array(rows) @ stratum.player_part @ np.array(rows))
        floor = float(np.array(rows) @ stratum.like_group @ np.array(rows))
        assert floor > 10 * own  # the player's own hands hardly spread
        assert test.p_value is not None and test.p_value > 0.05, sessions
        assert test.se ** 2 >= floor
    # the floor is the group's covariance per hand times the player's hands
    player = balance.side_of(state_frame("p", "pineapple", 3, *mine))
    group = balance.side_of(state_frame("r", "pineapple", 3, *theirs))
    assert np.allclose(balance.like_group_covariance(player, group),
                       group.covariance * 300 / 4000)


def test_the_floor_keeps_real_differences_and_barely_moves_a_typical_player() -> None:
    generator = np.random.default_rng(12)
    theirs = boards(STYLE_SOLID, 4000, generator)
    careless = boards(STYLE_RANDOM, 300, generator)
    combined = _combined(careless, theirs, (12, 40))
    assert combined is not None
    fouls = combined.test([1, 0, 0, 0])
    assert fouls.value < 0 and fouls.p_value is not None and fouls.p_value < 1e-6
    # a player of the group's own style: his own spread and the floor agree within 25 %
    alike = _combined(boards(STYLE_SOLID, 1200, generator), theirs, None)
    assert alike is not None
    [stratum] = alike.strata
    for cause in range(4):
        own = stratum.player_part[cause, cause]
        assert stratum.like_group[cause, cause] == pytest.approx(own, rel=0.25), cause
