"""Planning a simulation: which sessions are played, when, at which table, by whom.

The plan is made up front from the seed alone, so that sessions can then be played in any
order or in parallel and still give the same hands. Tables play in *rounds* (an evening's
play): each round every table with hands left plays one session of 40-120 hands; rounds are one
to four days apart and start in the evening. The players of a round are drawn from the pool
without repeats while the pool lasts, so nobody sits at two tables at once when the pool is big
enough (:func:`~pipeline.simulate.players.default_pool_size` makes it so). The variant of a
session rotates through the requested variants by table and round.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pipeline.rules.game import Variant
from pipeline.simulate.players import Player

DEFAULT_START = datetime(2026, 10, 5, 19, 0, tzinfo=UTC)
"""When the first session starts unless told otherwise (fixed, so runs are reproducible)."""

SESSION_HANDS = (40, 120)
"""Fewest and most hands in a planned session."""


@dataclass(frozen=True, slots=True)
class SessionPlan:
    """One session: a table, a round, its hands and seats, and the seed that plays it.

    Hand ids are ``{hand_prefix}-{number:06d}`` with numbers running on per table.
    """

    index: int
    table: str
    hand_prefix: str
    round: int
    variant: Variant
    first_hand: int
    hands: int
    start: datetime
    players: tuple[Player, ...]
    seed: str
    progress: float = 0.0
    """How far into the run its round is: round / rounds, from 0 (first round) to below 1.
    A bot that changes style part-way (:class:`~pipeline.simulate.bots.DriftingBot`) reads it."""


def table_names(tables: int) -> tuple[str, ...]:
    """``T1``, ``T2``, ... ."""
    return tuple(f"T{number}" for number in range(1, tables + 1))


def plan_sessions(
    hands: int,
    tables: int,
    players_per_table: int,
    variants: Sequence[Variant],
    pool: Sequence[Player],
    start: datetime,
    seed: int,
) -> list[SessionPlan]:
    """The sessions of a run, in playing order (round by round, table by table).

    Hands are shared out evenly between tables; each table's hands are cut into sessions.
    """
    if hands < 1 or tables < 1:
        raise ValueError("a simulation needs at least one hand and one table")
    if players_per_table > len(pool):
        raise ValueError(
            f"{players_per_table} players per table need a pool of at least as many players"
        )
    planner = random.Random(f"{seed}:plan")
    names = table_names(tables)
    lengths: list[list[int]] = []
    for table in range(tables):
        left = hands // tables + (table < hands % tables)
        table_lengths = []
        while left > 0:
            length = planner.randint(*SESSION_HANDS)
            if left - length < SESSION_HANDS[0] // 2:
                length = left
            table_lengths.append(min(length, left))
            left -= table_lengths[-1]
        lengths.append(table_lengths)

    plans: list[SessionPlan] = []
    next_hand = [1] * tables
    round_start = start
    rounds = max((len(table_lengths) for table_lengths in lengths), default=0)
    for round_number in range(rounds):
        if round_number:
            days = planner.choice((1, 1, 2, 2, 3, 4))
            evening = round_start.replace(hour=18, minute=0, second=0, microsecond=0)
            round_start = evening + timedelta(days=days, minutes=planner.randint(-60, 150))
        seated = list(pool)
        planner.shuffle(seated)
        seat_cursor = 0
        for table in range(tables):
            if round_number >= len(lengths[table]):
                continue
            if seat_cursor + players_per_table > len(seated):
                more = list(pool)
                planner.shuffle(more)
                seated += more
            players = tuple(seated[seat_cursor:seat_cursor + players_per_table])
            seat_cursor += players_per_table
            if len(set(players)) < players_per_table:  # a reshuffle repeated someone: redraw
                others = [player for player in pool if player not in players]
                planner.shuffle(others)
                unique = list(dict.fromkeys(players))
                players = tuple(unique + others[:players_per_table - len(unique)])
            count = lengths[table][round_number]
            plans.append(
                SessionPlan(
                    index=len(plans),
                    table=names[table],
                    hand_prefix=f"s{seed}-{names[table]}",
                    round=round_number,
                    variant=variants[(table + round_number) % len(variants)],
                    first_hand=next_hand[table],
                    hands=count,
                    start=round_start + timedelta(minutes=planner.randint(0, 25)),
                    players=players,
                    seed=f"{seed}:{names[table]}:{round_number}",
                    progress=round_number / rounds,
                )
            )
            next_hand[table] += count
    return plans
