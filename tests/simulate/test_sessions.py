"""Session plans and the player pool."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

from pipeline.rules.game import Variant
from pipeline.simulate.players import NAMES, default_pool_size, player_pool
from pipeline.simulate.sessions import SESSION_HANDS, plan_sessions

START = datetime(2026, 1, 5, 19, 0, tzinfo=UTC)


def test_pool_names_and_bots_in_turn() -> None:
    pool = player_pool(10, ("solid", "chaser", "random"))
    assert [player.name for player in pool] == list(NAMES[:10])
    assert [player.bot for player in pool[:4]] == ["solid", "chaser", "random", "solid"]
    big = player_pool(len(NAMES) + 2, ("solid",))
    assert big[-1].name == f"{NAMES[1]}2"
    assert len({player.name for player in big}) == len(big)
    with pytest.raises(ValueError, match="unknown bot"):
        player_pool(4, ("solid", "oracle"))
    assert default_pool_size(1, 3) == 8
    assert default_pool_size(4, 3) >= 12


def test_plans_share_out_every_hand_in_sessions() -> None:
    pool = player_pool(8, ("solid", "chaser"))
    plans = plan_sessions(2000, 2, 3, (Variant.PINEAPPLE,), pool, START, seed=4)
    assert sum(plan.hands for plan in plans) == 2000
    per_table = Counter()
    for plan in plans:
        per_table[plan.table] += plan.hands
        assert plan.hands <= SESSION_HANDS[1] + SESSION_HANDS[0] // 2
        assert len(set(plan.players)) == 3
    assert per_table == {"T1": 1000, "T2": 1000}
    # rounds are evenings days apart, and tables of a round start together
    starts = sorted({plan.round: plan.start for plan in plans}.items())
    for (_, earlier), (_, later) in zip(starts, starts[1:], strict=False):
        assert (later - earlier).total_seconds() >= 20 * 3600
    # numbering runs on per table
    for table in ("T1", "T2"):
        numbers = [(plan.first_hand, plan.hands) for plan in plans if plan.table == table]
        for (first, count), (following, _) in zip(numbers, numbers[1:], strict=False):
            assert following == first + count


def test_small_runs_are_one_session_and_plans_depend_only_on_the_seed() -> None:
    pool = player_pool(8, ("solid",))
    plans = plan_sessions(30, 1, 3, (Variant.CLASSIC,), pool, START, seed=1)
    assert [plan.hands for plan in plans] == [30]
    assert plans == plan_sessions(30, 1, 3, (Variant.CLASSIC,), pool, START, seed=1)
    assert plans != plan_sessions(30, 1, 3, (Variant.CLASSIC,), pool, START, seed=2)
