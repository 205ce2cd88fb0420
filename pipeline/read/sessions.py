"""Sessions: results per session and the hands of one session."""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl

from pipeline import store
from pipeline.read.scope import (
    Filters,
    hand_scope,
    placeholders,
    run_scoped,
)
from pipeline.read.source import Database, frame, reading
from pipeline.read.totals import Route, use_aggregates


def session_results(db: Database, filters: Filters, limit: int = 500,
                    route: Route = Route.AUTO) -> pl.DataFrame:
    """The most recent sessions (per player) matching the filters, with their results.

    Only hands matching the filters count. Columns: session_id, player, table_name, started_at,
    ended_at, hands, points, points_per_hand, fouls, foul_rate, royalties. Without a filter on
    dates, variants, rules, tables or opponents every hand of a session counts: the sessions
    table (kept with the hands) answers.
    """
    picked = ["TRUE"]
    picked_params: list[Any] = []
    if filters.players:
        picked.append(f"x.player IN ({placeholders(filters.players)})")
        picked_params.extend(filters.players)
    if filters.sessions:
        picked.append(f"x.session_id IN ({placeholders(filters.sessions)})")
        picked_params.extend(filters.sessions)
    whole = not (filters.date_from or filters.date_to or filters.variants or filters.rules
                 or filters.tables or filters.opponents)
    with reading(db) as connection:
        if use_aggregates(connection, route, whole):
            sql = f"""
                SELECT x.session_id, x.player, x.table_name, x.started_at, x.ended_at,
                       x.hands::BIGINT AS hands, x.points::BIGINT AS points,
                       x.points / x.hands AS points_per_hand, x.fouls::BIGINT AS fouls,
                       x.fouls / x.hands AS foul_rate, x.royalties::BIGINT AS royalties
                FROM sessions x WHERE {' AND '.join(picked)}
                ORDER BY x.started_at DESC NULLS LAST, x.session_id LIMIT ?
            """
            return connection.sql(sql, params=[*picked_params, limit]).pl()
        return _session_results_full(connection, filters, picked, picked_params, limit)


def _session_results_full(db: Database, filters: Filters, picked: list[str],
                          picked_params: list[Any], limit: int) -> pl.DataFrame:
    scope = hand_scope(filters, include_players=False)
    if scope.cte:
        picked.append(f"x.session_id IN (SELECT session_id FROM seats s WHERE {scope.keeps('s')})")
    sql = f"""
        WITH picked AS (
            SELECT session_id FROM sessions x WHERE {' AND '.join(picked)}
            ORDER BY x.started_at DESC NULLS LAST, x.session_id LIMIT ?
        ), rows AS (
            SELECT s.session_id, s.hand_key, s.player FROM seats s
            WHERE s.session_id IN (SELECT session_id FROM picked) AND {scope.keeps('s')}
        ), boards AS (
            SELECT w.session_id, count(*) AS hands, count(*) FILTER (WHERE e.foul) AS fouls,
                   sum(e.royalties)::BIGINT AS royalties
            FROM rows w JOIN evaluations e USING (hand_key, player) GROUP BY w.session_id
        ), points AS (
            SELECT w.session_id, sum(r.points)::BIGINT AS points
            FROM rows w JOIN results r USING (hand_key, player) GROUP BY w.session_id
        )
        SELECT b.session_id, x.player, x.table_name, x.started_at, x.ended_at, b.hands,
               coalesce(q.points, 0) AS points,
               coalesce(q.points, 0) / b.hands AS points_per_hand,
               b.fouls, b.fouls / b.hands AS foul_rate, b.royalties
        FROM boards b
        LEFT JOIN points q USING (session_id)
        JOIN sessions x USING (session_id)
        ORDER BY x.started_at DESC NULLS LAST, b.session_id
    """
    return run_scoped(db, scope, sql, [*picked_params, limit])


def session_hands(db: Database, session_id: str) -> pl.DataFrame:
    """The hands of one session from its player's seat: time, id, points, foul, royalties."""
    sql = """
        WITH mine AS (SELECT hand_key, player, position, fantasyland FROM seats
                      WHERE session_id = ?)
        SELECT h.hand_key, h.hand_id, h.started_at, h.table_name, h.variant,
               h.player_count AS players, m.player, m.position, m.fantasyland,
               r.points, e.foul, e.royalties, e.fantasyland_next, r.disagrees
        FROM mine m
        JOIN hands h ON h.hand_key = m.hand_key
        JOIN results r ON r.hand_key = m.hand_key AND r.player = m.player
        JOIN evaluations e ON e.hand_key = m.hand_key AND e.player = m.player
        ORDER BY h.started_at NULLS FIRST, h.hand_key
    """
    return frame(db, sql, [session_id])


def hands_waiting_for_sessions(db: Database) -> int:
    """How many stored hands (with a start time) have no session yet because a run of many
    files works their sessions out after its last file (:data:`~pipeline.store.
    SESSIONS_PENDING_META_KEY` set: the run is still going, or died before its end and the
    next write will finish them); 0 otherwise, and for a source without the mark (a lake)."""
    with reading(db) as connection:
        try:
            if store.get_meta(connection, store.SESSIONS_PENDING_META_KEY) is None:
                return 0
            rows = connection.sql(
                f"SELECT count(DISTINCT se.hand_key) FROM {store.SEATS_WAITING_FOR_SESSIONS}"
            ).fetchall()
        except duckdb.CatalogException:  # no meta table: a lake
            return 0
    return int(rows[0][0])
