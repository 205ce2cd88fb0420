"""Overview questions: is there anything to show, the sidebar's options, totals, hands per day and
the leaderboard."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import polars as pl

from pipeline.read.scope import (
    Filters,
    hand_scope,
    has_hand_filters,
    in_list,
    player_conditions,
    run_scoped,
)
from pipeline.read.source import Database, Source, as_source, reading
from pipeline.read.totals import (
    Route,
    grain_serves,
    totals_conditions,
    totals_tables,
    use_aggregates,
)


@dataclass(frozen=True, slots=True)
class DatabaseStatus:
    """Whether there is anything to show."""

    exists: bool
    has_schema: bool
    hands: int
    rejects: int

    @property
    def empty(self) -> bool:
        """True when the dashboard should show the start page instead of the pages."""
        return not self.exists or not self.has_schema or self.hands == 0


@dataclass(frozen=True, slots=True)
class FilterOptions:
    """Values offered by the sidebar filters."""

    players: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    first_day: date | None = None
    last_day: date | None = None
    sessions: pl.DataFrame = field(default_factory=pl.DataFrame)


def database_status(db: str | Path | Source) -> DatabaseStatus:
    """Does the database exist, carry the schema, and hold any hands (and rejects)?"""
    source = as_source(db)
    if not source.exists():
        return DatabaseStatus(False, False, 0, 0)
    with reading(source) as connection:
        tables = {
            row[0]
            for row in connection.sql(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
            ).fetchall()
        }
        if "hands" not in tables:
            return DatabaseStatus(True, False, 0, 0)
        hands = connection.sql("SELECT count(*) FROM hands").fetchall()[0][0]
        rejects = (
            connection.sql("SELECT count(*) FROM rejects").fetchall()[0][0]
            if "rejects" in tables else 0
        )
    return DatabaseStatus(True, True, int(hands), int(rejects))


def filter_options(db: Database, route: Route = Route.AUTO) -> FilterOptions:
    """Players (most hands first), variants, rules, tables, the date span and the sessions,
    for the sidebar."""
    with reading(db) as connection:
        if use_aggregates(connection, route, True):
            boards = totals_tables(connection, Filters())[0]
            source = (f"SELECT player FROM {boards} GROUP BY player "
                      "ORDER BY sum(boards) DESC, player")
        else:
            source = "SELECT player FROM seats GROUP BY player ORDER BY count(*) DESC, player"
        players = tuple(row[0] for row in connection.sql(source).fetchall())
        hand_values = connection.sql(
            "SELECT list(DISTINCT variant ORDER BY variant), list(DISTINCT rules ORDER BY rules), "
            "list(DISTINCT table_name ORDER BY table_name) FILTER (WHERE table_name IS NOT NULL), "
            "min(started_at)::DATE, max(started_at)::DATE FROM hands"
        ).fetchall()[0]
        sessions = connection.sql(
            "SELECT session_id, player, table_name, started_at, hands, points FROM sessions "
            "ORDER BY started_at DESC NULLS LAST, session_id"
        ).pl()
    variants, rules, tables, first_day, last_day = hand_values
    return FilterOptions(
        players=players,
        variants=tuple(variants or ()),
        rules=tuple(rules or ()),
        tables=tuple(tables or ()),
        first_day=first_day,
        last_day=last_day,
        sessions=sessions,
    )


def overview_totals(db: Database, filters: Filters, route: Route = Route.AUTO) -> pl.DataFrame:
    """One row: hands, players, boards, sessions, date span, fouls, audit disagreements, rejects.

    Hands and the date span count every hand the filters keep (with chosen players: the hands
    where one of them sat). Players, sessions, boards, fouls and disagreements count the chosen
    players' own (everyone's without a choice), so "players" is the number of chosen players
    with hands, and the foul rate theirs, as the leaderboard beside it shows.

    Without any filter, the per-board counts come from the aggregates and the sessions from
    the sessions table."""
    with reading(db) as connection:
        if use_aggregates(connection, route,
                          not has_hand_filters(filters) and not filters.players):
            boards = totals_tables(connection, filters)[0]
            sql = f"""
                SELECT
                    (SELECT count(*) FROM hands h) AS hands,
                    (SELECT min(started_at) FROM hands h) AS first_hand,
                    (SELECT max(started_at) FROM hands h) AS last_hand,
                    (SELECT count(DISTINCT player) FROM {boards}) AS players,
                    (SELECT count(*) FROM sessions) AS sessions,
                    (SELECT coalesce(sum(boards), 0)::BIGINT FROM {boards}) AS boards,
                    (SELECT coalesce(sum(boards) FILTER (WHERE foul), 0)::BIGINT
                     FROM {boards}) AS fouls,
                    (SELECT coalesce(sum(disagreements), 0)::BIGINT FROM {boards})
                        AS disagreements,
                    (SELECT count(*) FROM rejects) AS rejects,
                    (SELECT count(*) FROM ingested_files) AS files
            """
            return connection.sql(sql).pl()
        return _overview_totals_full(connection, filters)


def _overview_totals_full(db: Database, filters: Filters) -> pl.DataFrame:
    scope = hand_scope(filters)
    chosen, params = in_list("player", filters.players)
    sql = f"""
        SELECT
            (SELECT count(*) FROM hands h WHERE {scope.keeps('h')}) AS hands,
            (SELECT min(started_at) FROM hands h WHERE {scope.keeps('h')}) AS first_hand,
            (SELECT max(started_at) FROM hands h WHERE {scope.keeps('h')}) AS last_hand,
            (SELECT count(DISTINCT player) FROM seats s WHERE {scope.keeps('s')}{chosen})
                AS players,
            (SELECT count(DISTINCT session_id) FROM seats s WHERE {scope.keeps('s')}{chosen})
                AS sessions,
            (SELECT count(*) FROM evaluations e WHERE {scope.keeps('e')}{chosen}) AS boards,
            (SELECT count(*) FILTER (WHERE foul) FROM evaluations e
             WHERE {scope.keeps('e')}{chosen}) AS fouls,
            (SELECT count(*) FILTER (WHERE disagrees) FROM results r
             WHERE {scope.keeps('r')}{chosen}) AS disagreements,
            (SELECT count(*) FROM rejects) AS rejects,
            (SELECT count(*) FROM ingested_files) AS files
    """
    return run_scoped(db, scope, sql, [*params, *params, *params, *params, *params])


def hands_by_day(db: Database, filters: Filters) -> pl.DataFrame:
    """Hands played per day and variant."""
    scope = hand_scope(filters)
    sql = f"""
        SELECT started_at::DATE AS day, variant, count(*) AS hands
        FROM hands h WHERE {scope.keeps('h')} AND started_at IS NOT NULL
        GROUP BY ALL ORDER BY day, variant
    """
    return run_scoped(db, scope, sql)


_LEADERBOARD_SELECT = """
        SELECT p.player, p.hands, p.points, p.points / p.hands AS points_per_hand,
               coalesce(f.fouls, 0) / p.hands AS foul_rate
        FROM points p LEFT JOIN fouls f USING (player)
        ORDER BY p.hands DESC, p.player LIMIT ?
"""


def player_leaderboard(db: Database, filters: Filters, limit: int = 50,
                       route: Route = Route.AUTO) -> pl.DataFrame:
    """Players by hands played: hands, points, points per hand, foul rate."""
    with reading(db) as connection:
        if use_aggregates(connection, route, grain_serves(filters)):
            conditions, params = totals_conditions(filters)
            boards = totals_tables(connection, filters)[0]
            sql = f"""
                WITH points AS (
                    SELECT player, sum(boards)::BIGINT AS hands, sum(points)::BIGINT AS points
                    FROM {boards} t WHERE TRUE{conditions} GROUP BY player
                ), fouls AS (
                    SELECT player, coalesce(sum(boards) FILTER (WHERE foul), 0)::BIGINT AS fouls
                    FROM {boards} t WHERE TRUE{conditions} GROUP BY player
                )
                {_LEADERBOARD_SELECT}
            """
            return connection.sql(sql, params=[*params, *params, limit]).pl()
        scope = hand_scope(filters, include_players=False)
        r_players, r_params = player_conditions(filters, "r")
        e_players, e_params = player_conditions(filters, "e")
        sql = f"""
            WITH points AS (
                SELECT player, count(*) AS hands, sum(points)::BIGINT AS points
                FROM results r WHERE {scope.keeps('r')}{r_players} GROUP BY player
            ), fouls AS (
                SELECT player, count(*) FILTER (WHERE foul) AS fouls
                FROM evaluations e WHERE {scope.keeps('e')}{e_players} GROUP BY player
            )
            {_LEADERBOARD_SELECT}
        """
        return run_scoped(connection, scope, sql, [*r_params, *e_params, limit])
