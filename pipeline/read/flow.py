"""Point flow: net points between pairs of players, overall and per session."""

from __future__ import annotations

from typing import Any

import polars as pl

from pipeline.read.scope import (
    Filters,
    both,
    hand_scope,
    in_list,
    run_scoped,
)
from pipeline.read.source import Database, reading
from pipeline.read.totals import (
    Route,
    grain_serves,
    totals_conditions,
    totals_tables,
    use_aggregates,
)


def _pair_conditions(filters: Filters) -> tuple[str, list[Any]]:
    """Matchup conditions: the heroes against the chosen opponents."""
    return both(in_list("m.player", filters.players), in_list("m.opponent", filters.opponents))


def pair_net_points(db: Database, filters: Filters, route: Route = Route.AUTO) -> pl.DataFrame:
    """Net points between every pair, from ``player``'s side: hands together, points won.

    Rows are ordered pairs (both directions, so ``points`` of (a, b) is minus that of (b, a)).
    With heroes chosen, ``player`` is one of them; with opponents chosen, ``opponent`` is one of
    them. From the aggregates unless tables or sessions are filtered (an opponent filter keeps
    exactly the pairs with one of them, which the aggregates can pick).
    """
    with reading(db) as connection:
        if use_aggregates(connection, route, grain_serves(filters, opponents=True)):
            conditions, params = totals_conditions(filters)
            pairs = totals_tables(connection, filters)[1]
            opponents, opponent_params = in_list("t.opponent", filters.opponents)
            sql = f"""
                SELECT player, opponent, sum(hands)::BIGINT AS hands,
                       sum(points)::BIGINT AS points, sum(scoops)::BIGINT AS scoops
                FROM {pairs} t WHERE TRUE{conditions}{opponents}
                GROUP BY player, opponent ORDER BY player, opponent
            """
            return connection.sql(sql, params=[*params, *opponent_params]).pl()
        scope = hand_scope(filters, include_players=False)
        pairs, params = _pair_conditions(filters)
        sql = f"""
            SELECT player, opponent, count(*) AS hands, sum(settled)::BIGINT AS points,
                   count(*) FILTER (WHERE scoop > 0) AS scoops
            FROM matchups m WHERE {scope.keeps('m')}{pairs}
            GROUP BY player, opponent ORDER BY player, opponent
        """
        return run_scoped(connection, scope, sql, params)


def points_by_session_pair(db: Database, filters: Filters, limit: int = 2000) -> pl.DataFrame:
    """Net points between pairs per session (sessions of ``player``), most recent first."""
    scope = hand_scope(filters, include_players=False)
    pairs, params = _pair_conditions(filters)
    sql = f"""
        SELECT s.session_id, x.started_at, m.player, m.opponent, count(*) AS hands,
               sum(m.settled)::BIGINT AS points
        FROM matchups m
        JOIN seats s ON s.hand_key = m.hand_key AND s.player = m.player
        LEFT JOIN sessions x ON x.session_id = s.session_id
        WHERE {scope.keeps('m')}{pairs}
        GROUP BY ALL ORDER BY x.started_at DESC NULLS LAST, s.session_id, m.player, m.opponent
        LIMIT ?
    """
    return run_scoped(db, scope, sql, [*params, limit])
