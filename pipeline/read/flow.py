"""Point flow: net points between pairs of players, overall and per game."""

from __future__ import annotations

from typing import Any

import polars as pl

from pipeline.read.scope import (
    Filters,
    both,
    hand_scope,
    in_list,
    placeholders,
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


RECENT_SESSIONS = 300
"""How many of the most recent sessions :func:`points_by_game_pair` reads the games of."""


def points_by_game_pair(db: Database, filters: Filters, sessions: int = RECENT_SESSIONS,
                        limit: int = 2000) -> pl.DataFrame:
    """Net points between each pair of players in each recent game, most recent game first.

    A *game* is a table's run of hands that its players shared: it is named by its table and
    by when the first of its players' sessions began, so the players who sat together share one
    game (their sessions, one per player, have as many ids). Each pair appears once per game,
    from the winner's side. With heroes chosen, only their pairs (and their games); with
    opponents, only pairs with one of them. The games of the ``sessions`` most recent sessions
    are read (a page shows the latest; a full pass over a million hands would take seconds).

    Columns: table_name, game_start, winner, payer, hands, points (won by ``winner``, >= 0).
    """
    scope = hand_scope(filters, include_players=False)
    pairs, params = _pair_conditions(filters)
    heroes, hero_params = in_list("x.player", filters.players)
    in_scope = (f" AND x.session_id IN (SELECT session_id FROM seats s WHERE {scope.keeps('s')})"
                if scope.cte else "")
    # the other side of a pair is left out, unless it is not asked for (an opponent not chosen)
    other_side, other_params = (
        (f" OR m.opponent NOT IN ({placeholders(filters.players)})", list(filters.players))
        if filters.players else ("", []))
    sql = f"""
        WITH picked AS (
            SELECT x.session_id FROM sessions x WHERE TRUE{heroes}{in_scope}
            ORDER BY x.started_at DESC NULLS LAST, x.session_id LIMIT ?
        ), kept AS (
            SELECT DISTINCT s.hand_key FROM seats s
            WHERE s.session_id IN (SELECT session_id FROM picked) AND {scope.keeps('s')}
        ), games AS (
            SELECT s.hand_key, min(x.started_at) AS game_start
            FROM seats s JOIN sessions x USING (session_id)
            WHERE s.hand_key IN (SELECT hand_key FROM kept)
            GROUP BY s.hand_key
        ), one_side AS (
            -- each pair once: a hero's side, else the first name's side
            SELECT m.hand_key, m.player, m.opponent, m.settled FROM matchups m
            WHERE m.hand_key IN (SELECT hand_key FROM kept){pairs}
              AND (m.player < m.opponent{other_side})
        ), totals AS (
            SELECT h.table_name, g.game_start, o.player, o.opponent, count(*) AS hands,
                   sum(o.settled)::BIGINT AS points
            FROM one_side o JOIN hands h USING (hand_key) JOIN games g USING (hand_key)
            GROUP BY ALL
        )
        SELECT table_name, game_start,
               CASE WHEN points >= 0 THEN player ELSE opponent END AS winner,
               CASE WHEN points >= 0 THEN opponent ELSE player END AS payer,
               hands, abs(points)::BIGINT AS points
        FROM totals
        ORDER BY game_start DESC NULLS LAST, table_name, points DESC, winner, payer
        LIMIT ?
    """
    return run_scoped(db, scope, sql, [*hero_params, sessions, *params, *other_params, limit])
