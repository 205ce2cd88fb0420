"""The coaching report's totals.

The report compares one player (several screen names merged) with everyone else, so these
questions return per-player totals for every player in scope (dates and variants only; the
heroes are picked out in :mod:`pipeline.report`). Totals are integer sums (and sums of squares
for standard errors): exact, so the same database always gives the same report.

The field's totals come from the aggregates the writers keep (``board_totals``, ``pair_totals``;
:mod:`pipeline.read.totals` decides, ``route`` forces a way) unless a table filter is set; the
player's own hands are read from that player's rows. Both ways give the same frames.
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import polars as pl

from pipeline.read.scope import (
    Filters,
    day_bounds,
    in_list,
    placeholders,
)
from pipeline.read.source import Database, frame, reading
from pipeline.read.totals import (
    AggregatesUnavailable,
    Route,
    checked_once,
    grain_serves,
    totals_conditions,
    totals_tables,
    use_aggregates,
    use_play_order,
)
from pipeline.store.aggregates import FANTASYLAND_CARD_RANKS, fantasyland_top_value


def _report_conditions(filters: Filters) -> tuple[str, list[Any]]:
    """Conditions on hands ``h`` for the report's scope: dates, variants, rules and tables.

    Never the players, opponents or sessions: a comparison needs everyone's hands in scope.
    """
    conditions = ["TRUE"]
    params: list[Any] = []
    start, end = day_bounds(filters)
    if start is not None:
        conditions.append("h.started_at >= ?")
        params.append(start)
    if end is not None:
        conditions.append("h.started_at < ?")
        params.append(end)
    for column, values in (("variant", filters.variants), ("rules", filters.rules),
                           ("table_name", filters.tables)):
        if values:
            conditions.append(f"h.{column} IN ({placeholders(values)})")
            params.extend(values)
    return " AND ".join(conditions), params


__all__ = [
    "BOARD_STATES", "report_pair_sessions", "report_session_sums", "session_states",
    "state_totals_of_sessions", "FANTASYLAND_CARD_RANKS", "fantasyland_top_value", "report_hand_grades",
    "report_matchup_totals", "report_own_hands", "report_pair_totals",
    "report_player_totals", "report_progress_hands", "report_progress_series",
    "report_session_cells", "session_cells_kept",
    "report_state_totals",
]


def _report_seats_cte(filters: Filters) -> tuple[str, list[Any]]:
    """``report_seats``: one row per board in scope with its verdict, result and chasing flag.

    With ``filters.players`` only their boards. ``chasing`` (a hand outside Fantasyland only):
    the final top row qualifies for Fantasyland under the standard rule (a pair of queens or
    better, or trips), or, when the streets are known, a queen, king or ace was placed on the
    top row with the first five cards. Joins use ON (not USING) and the row value instead of
    the board text: on a million hands that halves the time.
    """
    where, params = _report_conditions(filters)
    scoped = where != "TRUE"
    players = ""
    player_params: list[Any] = []
    if filters.players:
        players = f" AND {{alias}}.player IN ({placeholders(filters.players)})"
        player_params = list(filters.players)
    ranks = " OR ".join("prefix(p.card, ?)" for _ in FANTASYLAND_CARD_RANKS)
    early = f"""
            SELECT DISTINCT p.hand_key, p.player FROM placements p
            {"SEMI JOIN report_hands k ON k.hand_key = p.hand_key" if scoped else ""}
            WHERE p.street = 1 AND p.row_name = 'top' AND ({ranks}){players.format(alias="p")}"""
    cte = f"""
        report_hands AS MATERIALIZED (
            SELECT h.hand_key, h.variant, h.player_count, h.has_streets, h.rules
            FROM hands h WHERE {where}
        ), report_early AS ({early}
        ), report_seats AS (
            SELECT s.hand_key, s.player, k.variant, k.player_count, k.rules, k.has_streets,
                   s.position,
                   s.is_button, s.fantasyland, e.foul, e.royalty_top, e.royalty_middle,
                   e.royalty_bottom, e.fantasyland_next, r.points::BIGINT AS points,
                   NOT s.fantasyland AND (e.top_value >= ? OR x.player IS NOT NULL) AS chasing
            FROM seats s
            JOIN report_hands k ON k.hand_key = s.hand_key
            JOIN evaluations e ON e.hand_key = s.hand_key AND e.player = s.player
            JOIN results r ON r.hand_key = s.hand_key AND r.player = s.player
            LEFT JOIN report_early x ON x.hand_key = s.hand_key AND x.player = s.player
            WHERE TRUE{players.format(alias="s")}
        )"""
    return cte, [*params, *FANTASYLAND_CARD_RANKS, *player_params, fantasyland_top_value(),
                 *player_params]


PLAYER_TOTALS_COLUMNS = (
    "player", "variant", "player_count", "position", "rules", "is_button", "hands", "points",
    "points_sq", "fouls", "foul_points", "normal_hands", "normal_fouls", "chasing_hands",
    "chasing_fouls", "normal_points", "normal_with_streets", "fl_hands", "fl_entries",
    "fl_stays", "fl_points", "fl_points_sq", "royalty_top", "royalty_top_sq", "royalty_middle",
    "royalty_middle_sq", "royalty_bottom", "royalty_bottom_sq", "opponents",
)
"""The columns of :func:`report_player_totals`, in order."""


def report_player_totals(db: Database, filters: Filters,
                         route: Route = Route.AUTO) -> pl.DataFrame:
    """Per player, variant, table size, position and rules, every total the coaching report compares.

    Integer sums, so that adding rows up (per variant, per player) stays exact; one pass over
    the boards (or the aggregates) serves the player, the reference group and the seats.
    Columns: player, variant,
    player_count, position (0 acts first), rules (the rules the hands were played under: a
    game's stake and house rules), is_button, hands, points, points_sq, fouls,
    foul_points (points won in fouled hands), normal_hands (outside Fantasyland), normal_fouls,
    chasing_hands, chasing_fouls, normal_points, normal_with_streets, fl_hands, fl_entries,
    fl_stays, fl_points, fl_points_sq, royalty_top, royalty_top_sq, royalty_middle,
    royalty_middle_sq, royalty_bottom, royalty_bottom_sq, opponents (sum over hands of the other
    players at the table).
    """
    with reading(db) as connection:
        if use_aggregates(connection, route, grain_serves(filters, sessions=True,
                                                          opponents=True)):
            return _player_totals_from_aggregates(connection, filters)
        return _player_totals_full(connection, filters)


def _player_totals_full(connection: duckdb.DuckDBPyConnection,
                        filters: Filters) -> pl.DataFrame:
    cte, params = _report_seats_cte(filters)
    sql = f"""
        WITH {cte}
        SELECT player, variant, player_count, position, rules, bool_or(is_button) AS is_button,
            count(*) AS hands,
            sum(points)::BIGINT AS points, sum(points * points)::BIGINT AS points_sq,
            count(*) FILTER (WHERE foul) AS fouls,
            coalesce(sum(points) FILTER (WHERE foul), 0)::BIGINT AS foul_points,
            count(*) FILTER (WHERE NOT fantasyland) AS normal_hands,
            count(*) FILTER (WHERE NOT fantasyland AND foul) AS normal_fouls,
            count(*) FILTER (WHERE chasing) AS chasing_hands,
            count(*) FILTER (WHERE chasing AND foul) AS chasing_fouls,
            coalesce(sum(points) FILTER (WHERE NOT fantasyland), 0)::BIGINT AS normal_points,
            count(*) FILTER (WHERE NOT fantasyland AND has_streets) AS normal_with_streets,
            count(*) FILTER (WHERE fantasyland) AS fl_hands,
            count(*) FILTER (WHERE NOT fantasyland AND fantasyland_next) AS fl_entries,
            count(*) FILTER (WHERE fantasyland AND fantasyland_next) AS fl_stays,
            coalesce(sum(points) FILTER (WHERE fantasyland), 0)::BIGINT AS fl_points,
            coalesce(sum(points * points) FILTER (WHERE fantasyland), 0)::BIGINT AS fl_points_sq,
            sum(royalty_top)::BIGINT AS royalty_top,
            sum(royalty_top * royalty_top)::BIGINT AS royalty_top_sq,
            sum(royalty_middle)::BIGINT AS royalty_middle,
            sum(royalty_middle * royalty_middle)::BIGINT AS royalty_middle_sq,
            sum(royalty_bottom)::BIGINT AS royalty_bottom,
            sum(royalty_bottom * royalty_bottom)::BIGINT AS royalty_bottom_sq,
            sum(player_count - 1)::BIGINT AS opponents
        FROM report_seats GROUP BY player, variant, player_count, position, rules
        ORDER BY player, variant, player_count, position, rules
    """
    return connection.sql(sql, params=params).pl()


_PLAYER_TOTAL_KEYS = ("player", "variant", "player_count", "position", "rules")
_KEPT_BOARD_SUMS = ("buttons", "boards", "points", "points_sq", "chasing", "with_streets",
                    "fantasyland_next", "royalty_top", "royalty_top_sq", "royalty_middle",
                    "royalty_middle_sq", "royalty_bottom", "royalty_bottom_sq")


def _player_totals_from_aggregates(connection: duckdb.DuckDBPyConnection,
                                   filters: Filters) -> pl.DataFrame:
    """:func:`report_player_totals` from the kept board totals. From their day-free rollup (a
    few dozen rows a player): its rows in scope read as they are and summed here, since
    DuckDB's grouping of so few rows into two dozen filtered sums cost five times the read (24
    against 4.5 ms at 1 M hands)."""
    conditions, params = totals_conditions(filters)
    boards = totals_tables(connection, filters)[0]
    if boards != "board_totals_all":
        return _player_totals_summed_in_sql(connection, boards, conditions, params)
    rows = connection.sql(
        f"SELECT {', '.join(_PLAYER_TOTAL_KEYS)}, foul, fantasyland, "
        f"{', '.join(_KEPT_BOARD_SUMS)} FROM {boards} t WHERE TRUE{conditions}",
        params=params).pl()
    foul, fantasyland = pl.col("foul"), pl.col("fantasyland")

    def total(column: str, condition: pl.Expr | None = None) -> pl.Expr:
        value = pl.col(column) if condition is None else (
            pl.when(condition).then(pl.col(column)).otherwise(0))
        return value.sum().cast(pl.Int64)

    return rows.group_by(_PLAYER_TOTAL_KEYS).agg(
        (pl.col("buttons").sum() > 0).alias("is_button"),
        total("boards").alias("hands"), total("points").alias("points"),
        total("points_sq").alias("points_sq"),
        total("boards", foul).alias("fouls"),
        total("points", foul).alias("foul_points"),
        total("boards", ~fantasyland).alias("normal_hands"),
        total("boards", ~fantasyland & foul).alias("normal_fouls"),
        total("chasing").alias("chasing_hands"),
        total("chasing", foul).alias("chasing_fouls"),
        total("points", ~fantasyland).alias("normal_points"),
        total("with_streets", ~fantasyland).alias("normal_with_streets"),
        total("boards", fantasyland).alias("fl_hands"),
        total("fantasyland_next", ~fantasyland).alias("fl_entries"),
        total("fantasyland_next", fantasyland).alias("fl_stays"),
        total("points", fantasyland).alias("fl_points"),
        total("points_sq", fantasyland).alias("fl_points_sq"),
        *(total(column).alias(column) for column in (
            "royalty_top", "royalty_top_sq", "royalty_middle", "royalty_middle_sq",
            "royalty_bottom", "royalty_bottom_sq")),
        (pl.col("boards") * (pl.col("player_count").cast(pl.Int64) - 1)).sum()
        .cast(pl.Int64).alias("opponents"),
    ).sort(_PLAYER_TOTAL_KEYS).select(PLAYER_TOTALS_COLUMNS)


def _player_totals_summed_in_sql(connection: duckdb.DuckDBPyConnection, boards: str,
                                 conditions: str, params: list[Any]) -> pl.DataFrame:
    """:func:`report_player_totals` from many kept rows (the per-day totals, when dates are
    filtered): summed by DuckDB, which there beats reading the rows out."""

    def total(column: str, condition: str = "") -> str:
        only = f" FILTER (WHERE {condition})" if condition else ""
        return f"coalesce(sum({column}){only}, 0)::BIGINT"

    sql = f"""
        SELECT player, variant, player_count, position, rules, sum(buttons) > 0 AS is_button,
            {total('boards')} AS hands, {total('points')} AS points,
            {total('points_sq')} AS points_sq,
            {total('boards', 'foul')} AS fouls,
            {total('points', 'foul')} AS foul_points,
            {total('boards', 'NOT fantasyland')} AS normal_hands,
            {total('boards', 'NOT fantasyland AND foul')} AS normal_fouls,
            {total('chasing')} AS chasing_hands,
            {total('chasing', 'foul')} AS chasing_fouls,
            {total('points', 'NOT fantasyland')} AS normal_points,
            {total('with_streets', 'NOT fantasyland')} AS normal_with_streets,
            {total('boards', 'fantasyland')} AS fl_hands,
            {total('fantasyland_next', 'NOT fantasyland')} AS fl_entries,
            {total('fantasyland_next', 'fantasyland')} AS fl_stays,
            {total('points', 'fantasyland')} AS fl_points,
            {total('points_sq', 'fantasyland')} AS fl_points_sq,
            {total('royalty_top')} AS royalty_top, {total('royalty_top_sq')} AS royalty_top_sq,
            {total('royalty_middle')} AS royalty_middle,
            {total('royalty_middle_sq')} AS royalty_middle_sq,
            {total('royalty_bottom')} AS royalty_bottom,
            {total('royalty_bottom_sq')} AS royalty_bottom_sq,
            {total('boards * (player_count - 1)')} AS opponents
        FROM {boards} t WHERE TRUE{conditions}
        GROUP BY player, variant, player_count, position, rules
        ORDER BY player, variant, player_count, position, rules
    """
    return connection.sql(sql, params=params).pl()


def report_matchup_totals(db: Database, filters: Filters, leave_out: tuple[str, ...] = (),
                          route: Route = Route.AUTO) -> pl.DataFrame:
    """Per player, variant and rules, their pairings with opponents: counts and settled points by
    scoop.

    Pairings against the players in ``leave_out`` are not counted; with ``filters.players``,
    only their pairings. Columns: player, variant,
    rules, matchups, scoops (player scooped the opponent, fouls included), scooped,
    scoop_points, scooped_points, neither_points (settled points in each kind).
    """
    with reading(db) as connection:
        if use_aggregates(connection, route, grain_serves(filters, sessions=True,
                                                          opponents=True)):
            conditions, params = totals_conditions(filters)
            pairs = totals_tables(connection, filters)[1]
            left_out, left_params = in_list("t.opponent", leave_out, negate=True)
            sql = f"""
                SELECT player, variant, rules, sum(hands)::BIGINT AS matchups,
                    sum(scoops)::BIGINT AS scoops, sum(scooped)::BIGINT AS scooped,
                    sum(scoop_points)::BIGINT AS scoop_points,
                    sum(scooped_points)::BIGINT AS scooped_points,
                    sum(neither_points)::BIGINT AS neither_points
                FROM {pairs} t WHERE TRUE{conditions}{left_out}
                GROUP BY player, variant, rules ORDER BY player, variant, rules
            """
            return connection.sql(sql, params=[*params, *left_params]).pl()
        where, params = _report_conditions(filters)
        left_out, left_params = in_list("m.opponent", leave_out, negate=True)
        players, player_params = in_list("m.player", filters.players)
        sql = f"""
            SELECT m.player, h.variant, h.rules, count(*) AS matchups,
                count(*) FILTER (WHERE m.scoop > 0) AS scoops,
                count(*) FILTER (WHERE m.scoop < 0) AS scooped,
                coalesce(sum(m.settled) FILTER (WHERE m.scoop > 0), 0)::BIGINT AS scoop_points,
                coalesce(sum(m.settled) FILTER (WHERE m.scoop < 0), 0)::BIGINT AS scooped_points,
                coalesce(sum(m.settled) FILTER (WHERE m.scoop = 0), 0)::BIGINT AS neither_points
            FROM matchups m JOIN hands h ON h.hand_key = m.hand_key
            WHERE {where}{left_out}{players}
            GROUP BY m.player, h.variant, h.rules ORDER BY m.player, h.variant, h.rules
        """
        return connection.sql(sql, params=[*params, *left_params, *player_params]).pl()


def report_pair_totals(db: Database, filters: Filters,
                       route: Route = Route.AUTO) -> pl.DataFrame:
    """Per ordered pair (player, opponent) and rules: hands together and the player's settled
    points.

    Columns: player, opponent, rules, hands, points, points_sq, scoops, scooped.
    """
    with reading(db) as connection:
        if use_aggregates(connection, route, grain_serves(filters, sessions=True,
                                                          opponents=True)):
            conditions, params = totals_conditions(filters, players=False)
            pairs = totals_tables(connection, filters)[1]
            sql = f"""
                SELECT player, opponent, rules, sum(hands)::BIGINT AS hands,
                    sum(points)::BIGINT AS points, sum(points_sq)::BIGINT AS points_sq,
                    sum(scoops)::BIGINT AS scoops, sum(scooped)::BIGINT AS scooped
                FROM {pairs} t WHERE TRUE{conditions}
                GROUP BY player, opponent, rules ORDER BY player, opponent, rules
            """
            return connection.sql(sql, params=params).pl()
        where, params = _report_conditions(filters)
        sql = f"""
            SELECT m.player, m.opponent, h.rules, count(*) AS hands,
                sum(m.settled)::BIGINT AS points,
                sum(m.settled * m.settled)::BIGINT AS points_sq,
                count(*) FILTER (WHERE m.scoop > 0) AS scoops,
                count(*) FILTER (WHERE m.scoop < 0) AS scooped
            FROM matchups m JOIN hands h ON h.hand_key = m.hand_key
            WHERE {where}
            GROUP BY m.player, m.opponent, h.rules ORDER BY m.player, m.opponent, h.rules
        """
        return connection.sql(sql, params=params).pl()


REPORT_HAND_COLUMNS = ("hand_key", "started_at", "variant", "player_count", "player",
                       "position", "is_button", "fantasyland", "session_id", "foul",
                       "royalties", "fantasyland_next", "points")
"""The columns of :func:`report_own_hands`: what the report reads of every hand of the player."""


def report_own_hands(db: Database, filters: Filters) -> pl.DataFrame:
    """Every hand of the heroes (``filters.players``, required) in scope, in play order, with
    the columns the report reads of every hand (:data:`REPORT_HAND_COLUMNS`).

    Each table is filtered on the heroes' names before it is joined. No text a hand's header or
    board shows: :func:`pipeline.read.hands.headers_of_hands` and
    :func:`pipeline.read.hands.players_of_hands` give them for the hands shown."""
    if not filters.players:
        raise ValueError("report_own_hands needs the heroes in filters.players")
    where, params = _report_conditions(filters)
    heroes = placeholders(filters.players)
    names = list(filters.players)
    sql = f"""
        WITH mine AS MATERIALIZED (
            SELECT hand_key, player, position, is_button, fantasyland, session_id
            FROM seats WHERE player IN ({heroes})
        )
        SELECT h.hand_key, h.started_at, h.variant, h.player_count, x.player, x.position,
            x.is_button, x.fantasyland, x.session_id, e.foul, e.royalties, e.fantasyland_next,
            r.points::BIGINT AS points
        FROM mine x
        JOIN hands h ON h.hand_key = x.hand_key
        JOIN evaluations e ON e.hand_key = x.hand_key AND e.player = x.player
        JOIN results r ON r.hand_key = x.hand_key AND r.player = x.player
        WHERE {where} AND e.player IN ({heroes}) AND r.player IN ({heroes})
        ORDER BY h.started_at NULLS FIRST, h.hand_key, x.player
    """
    return frame(db, sql, [*names, *params, *names, *names])


BOARD_STATES = ("fantasyland", "foul", "standing")
"""A board's state in the balance sheet: played in Fantasyland; fouled outside it; standing
(a legal board outside Fantasyland)."""

_STATE_SQL = ("CASE WHEN {alias}fantasyland THEN 'fantasyland' WHEN {alias}foul THEN 'foul' "
              "ELSE 'standing' END")

STATE_KEYS = ("player", "variant", "player_count", "position", "rules", "state")
"""The grain of :func:`report_state_totals`."""

STATE_COLUMNS: dict[str, type[pl.DataType]] = {
    "player": pl.String, "variant": pl.String, "player_count": pl.Int8, "position": pl.Int8,
    "rules": pl.String, "state": pl.String, "boards": pl.Int64, "value": pl.Float64,
    "value_sq": pl.Float64, "royalty": pl.Float64, "royalty_sq": pl.Float64,
    "value_royalty": pl.Float64, "fantasyland_next": pl.Int64, "pairings": pl.Int64,
    "settled": pl.Int64,
}
"""The columns of :func:`report_state_totals`, with their types."""


def report_state_totals(db: Database, filters: Filters, leave_out: tuple[str, ...] = (),
                        route: Route = Route.AUTO) -> pl.DataFrame:
    """Per player, variant, table size, position, rules and board state: each board's result
    against the opponents who count, as a whole-table figure.

    A board's *value* is the points it settled against the opponents not in ``leave_out``,
    scaled to the whole table: ``(player_count - 1) × settled / opponents counted`` (its points
    in the hand when nobody is left out). Its *royalty part* is the same for the royalty points
    settled (``matchups.royalty_points``); the rest is rows and scoops. Boards with no opponent
    left to count are not included. With ``filters.players``, only their boards.

    Columns: player, variant, player_count, position, rules, state (:data:`BOARD_STATES`),
    boards, value, value_sq, royalty, royalty_sq, value_royalty (sums over boards of v, v², u,
    u², u·v), fantasyland_next (boards that earn or keep Fantasyland), pairings (opponents
    counted, summed), settled (their settled points, summed).

    The sums are exact: boards are summed as integers per number of opponents counted, then
    scaled (:func:`_scaled_states`). From the aggregates, the boards that share a hand with a
    player left out are taken out and counted again without those pairings (a read of the
    hands of the players left out, not of every board).
    """
    with reading(db) as connection:
        if use_aggregates(connection, route, grain_serves(filters, sessions=True,
                                                          opponents=True)):
            sums = _state_sums_from_aggregates(connection, filters, leave_out)
            if sums is not None:
                return _scaled_states(sums)
            if route is Route.AGGREGATES:
                raise AggregatesUnavailable("some boards have fewer pairings than opponents")
        return _scaled_states(_state_sums_full(connection, filters, leave_out))


_STATE_SUMS = """
    SELECT player, variant, player_count, position, rules, state, pairings,
           count(*) AS boards, sum(settled)::BIGINT AS settled,
           sum(settled * settled)::BIGINT AS settled_sq,
           sum(royalty_points)::BIGINT AS royalty,
           sum(royalty_points * royalty_points)::BIGINT AS royalty_sq,
           sum(royalty_points * settled)::BIGINT AS royalty_settled,
           count(*) FILTER (WHERE fantasyland_next) AS fantasyland_next
    FROM {boards} GROUP BY ALL
"""
"""Integer sums of boards per state and number of opponents counted (``pairings``)."""


def _pass_conditions(filters: Filters, leave_out: tuple[str, ...]
                     ) -> tuple[tuple[str, list[Any]], ...]:
    """The conditions of a pass over the pairings in scope, each with its parameters: on the
    hands (:func:`_report_conditions`), leaving out the opponents ``leave_out`` (``m``), and the
    players of ``filters`` on the pairings (``m``) and on the seats (``s``)."""
    return (_report_conditions(filters), in_list("m.opponent", leave_out, negate=True),
            in_list("m.player", filters.players), in_list("s.player", filters.players))


def _state_sums_full(connection: duckdb.DuckDBPyConnection, filters: Filters,
                     leave_out: tuple[str, ...]) -> pl.DataFrame:
    """State sums (:data:`_STATE_SUMS`) by a pass over every pairing in scope."""
    (where, params), (left_out, left_params), (players, player_params), \
        (seat_players, seat_params) = _pass_conditions(filters, leave_out)
    sql = f"""
        WITH report_hands AS MATERIALIZED (
            SELECT h.hand_key, h.variant, h.player_count, h.rules FROM hands h WHERE {where}
        ), counted AS (
            SELECT m.hand_key, m.player, count(*) AS pairings,
                   sum(m.settled)::BIGINT AS settled,
                   sum(m.royalty_points)::BIGINT AS royalty_points
            FROM matchups m SEMI JOIN report_hands k ON k.hand_key = m.hand_key
            WHERE TRUE{left_out}{players}
            GROUP BY m.hand_key, m.player
        ), boards AS (
            SELECT s.player, k.variant, k.player_count, s.position, k.rules,
                   {_STATE_SQL.format(alias='')} AS state,
                   e.fantasyland_next, c.pairings, c.settled, c.royalty_points
            FROM counted c
            JOIN report_hands k ON k.hand_key = c.hand_key
            JOIN seats s ON s.hand_key = c.hand_key AND s.player = c.player
            JOIN evaluations e ON e.hand_key = c.hand_key AND e.player = c.player
            WHERE TRUE{seat_players}
        )
        {_STATE_SUMS.format(boards='boards')}
    """
    return connection.sql(sql, params=[*params, *left_params, *player_params,
                                       *seat_params]).pl()


def _state_sums_from_aggregates(connection: duckdb.DuckDBPyConnection, filters: Filters,
                                leave_out: tuple[str, ...]) -> pl.DataFrame | None:
    """State sums from the aggregates: every board with all its opponents counted
    (``board_totals``); for each player left out, the boards that met them taken out and
    counted again without that pairing (``pair_totals`` keeps the products this needs); and
    for a board that met two or more players left out, the difference made good from that
    hand's pairings (a read of those hands only). None when some board in scope lacks a
    pairing with one of its opponents (then only the full pass is exact)."""
    conditions, params = totals_conditions(filters)
    boards, pairs = totals_tables(connection, filters)
    complete_sql = (f"SELECT coalesce(bool_and(paired_boards = boards "
                    f"AND matchups = boards * (player_count - 1)), TRUE) FROM {boards} t "
                    f"WHERE TRUE{conditions}")
    if not checked_once(connection, f"complete pairings: {complete_sql} {params!r}",
                        lambda c: bool(c.sql(complete_sql, params=params).fetchall()[0][0])):
        return None
    keys = "player, variant, player_count, position, rules"
    state = _STATE_SQL.format(alias="")
    parts = [f"""
        SELECT {keys}, {state} AS state, player_count - 1 AS pairings,
               sum(paired_boards) AS boards, sum(settled) AS settled,
               sum(settled_sq) AS settled_sq, sum(royalty_points) AS royalty,
               sum(royalty_points_sq) AS royalty_sq, sum(royalty_settled) AS royalty_settled,
               sum(fantasyland_next) AS fantasyland_next
        FROM {boards} t WHERE TRUE{conditions} GROUP BY ALL"""]
    part_params: list[Any] = list(params)
    if leave_out:
        out = placeholders(leave_out)
        met = f"""
            SELECT {keys}, {state} AS state, sum(hands) AS n, sum(points) AS s,
                   sum(points_sq) AS ss, sum(royalty) AS u, sum(royalty_sq) AS uu,
                   sum(royalty_points) AS us, sum(board_points) AS big_s,
                   sum(board_points_sq) AS big_ss, sum(board_royalty) AS big_u,
                   sum(board_royalty_sq) AS big_uu, sum(board_royalty_points) AS big_us,
                   sum(cross_points) AS cross_s, sum(cross_royalty) AS cross_u,
                   sum(cross_royalty_points) AS cross_us, sum(cross_points_royalty) AS cross_su,
                   sum(fantasyland_next) AS fl
            FROM {pairs} t WHERE TRUE{conditions} AND t.opponent IN ({out}) GROUP BY ALL"""
        parts.append(f"""
            SELECT {keys}, state, player_count - 1 AS pairings, -n AS boards,
                   -big_s AS settled, -big_ss AS settled_sq, -big_u AS royalty,
                   -big_uu AS royalty_sq, -big_us AS royalty_settled, -fl AS fantasyland_next
            FROM ({met})""")
        parts.append(f"""
            SELECT {keys}, state, player_count - 2 AS pairings, n AS boards,
                   big_s - s AS settled, big_ss - 2 * cross_s + ss AS settled_sq,
                   big_u - u AS royalty, big_uu - 2 * cross_u + uu AS royalty_sq,
                   big_us - cross_us - cross_su + us AS royalty_settled, fl AS fantasyland_next
            FROM ({met}) WHERE player_count > 2""")
        part_params += [*params, *leave_out, *params, *leave_out]
        if len(leave_out) > 1:
            fix, fix_params = _met_twice_sql(filters, leave_out)
            parts.append(fix)
            part_params += fix_params
    union = " UNION ALL ".join(f"SELECT * FROM ({part})" for part in parts)
    sums = ", ".join(f"sum({column})::BIGINT AS {column}" for column in (
        "boards", "settled", "settled_sq", "royalty", "royalty_sq", "royalty_settled",
        "fantasyland_next"))
    sql = f"""
        SELECT player, variant, player_count, position, rules, state,
               pairings::BIGINT AS pairings, {sums}
        FROM ({union}) GROUP BY ALL HAVING sum(boards) <> 0
        ORDER BY player, variant, player_count, position, rules, state, pairings
    """
    return connection.sql(sql, params=part_params).pl()


def _met_twice_sql(filters: Filters, leave_out: tuple[str, ...]) -> tuple[str, list[Any]]:
    """For boards that met two or more players left out, what the per-opponent correction
    got wrong: it took the board out once per such opponent and counted it again without
    each one alone; the right count leaves them all out together. Read from those hands'
    pairings only."""
    where, hand_params = _report_conditions(filters)
    out = placeholders(leave_out)
    players, player_params = in_list("m.player", filters.players)
    seat_players, seat_params = in_list("s.player", filters.players)
    keys = "f.player, f.variant, f.player_count, f.position, f.rules, f.state"
    sql = f"""
        WITH met_hands AS MATERIALIZED (
            SELECT h.hand_key, h.variant, h.player_count, h.rules FROM hands h
            WHERE {where} AND h.hand_key IN (
                SELECT hand_key FROM seats WHERE player IN ({out})
                GROUP BY hand_key HAVING count(*) >= 2)
        ), met_rows AS (
            SELECT m.hand_key, m.player, m.settled::BIGINT AS settled,
                   m.royalty_points::BIGINT AS royalty, m.opponent IN ({out}) AS left_out
            FROM matchups m SEMI JOIN met_hands k ON k.hand_key = m.hand_key
            WHERE TRUE{players}
        ), met_boards AS (
            SELECT hand_key, player, count(*) AS k0, sum(settled) AS big_s,
                   sum(royalty) AS big_u, count(*) FILTER (WHERE left_out) AS met,
                   sum(settled) FILTER (WHERE left_out) AS s_out,
                   sum(royalty) FILTER (WHERE left_out) AS u_out
            FROM met_rows GROUP BY hand_key, player
            HAVING count(*) FILTER (WHERE left_out) >= 2
        ), f AS (
            SELECT b.*, s.position, k.variant, k.player_count, k.rules,
                   {_STATE_SQL.format(alias='')} AS state, e.fantasyland_next
            FROM met_boards b
            JOIN met_hands k ON k.hand_key = b.hand_key
            JOIN seats s ON s.hand_key = b.hand_key AND s.player = b.player
            JOIN evaluations e ON e.hand_key = b.hand_key AND e.player = b.player
            WHERE TRUE{seat_players}
        )
        SELECT {keys}, f.k0 AS pairings, sum(f.met - 1) AS boards,
               sum((f.met - 1) * f.big_s) AS settled,
               sum((f.met - 1) * f.big_s * f.big_s) AS settled_sq,
               sum((f.met - 1) * f.big_u) AS royalty,
               sum((f.met - 1) * f.big_u * f.big_u) AS royalty_sq,
               sum((f.met - 1) * f.big_u * f.big_s) AS royalty_settled,
               sum(CASE WHEN f.fantasyland_next THEN f.met - 1 ELSE 0 END) AS fantasyland_next
        FROM f GROUP BY ALL
        UNION ALL
        SELECT {keys}, f.k0 - f.met, count(*), sum(f.big_s - f.s_out),
               sum((f.big_s - f.s_out) * (f.big_s - f.s_out)), sum(f.big_u - f.u_out),
               sum((f.big_u - f.u_out) * (f.big_u - f.u_out)),
               sum((f.big_u - f.u_out) * (f.big_s - f.s_out)),
               count(*) FILTER (WHERE f.fantasyland_next)
        FROM f WHERE f.k0 > f.met GROUP BY ALL
        UNION ALL
        SELECT {keys}, f.k0 - 1, -count(*), -sum(f.big_s - r.settled),
               -sum((f.big_s - r.settled) * (f.big_s - r.settled)), -sum(f.big_u - r.royalty),
               -sum((f.big_u - r.royalty) * (f.big_u - r.royalty)),
               -sum((f.big_u - r.royalty) * (f.big_s - r.settled)),
               -count(*) FILTER (WHERE f.fantasyland_next)
        FROM f JOIN met_rows r ON r.hand_key = f.hand_key AND r.player = f.player
        WHERE r.left_out GROUP BY ALL
    """
    return sql, [*hand_params, *leave_out, *leave_out, *player_params, *seat_params]


def _scaled_states(sums: pl.DataFrame) -> pl.DataFrame:
    """:func:`report_state_totals` from integer state sums per number of opponents counted.

    A board of a ``player_count`` table with ``k`` opponents counted weighs ``(player_count -
    1) / k``: each sum is scaled per ``k`` (exact integers, one rounding) and the parts are added
    in order of ``k``. The same sums always give the same figures, whichever way they were
    read. Vectorised over the groups (one addition per part, in order of ``k``: the same
    roundings as a loop over the rows) while every scaled integer is exact in a float; else
    the loop, with Python's exact integers.
    """
    if sums.is_empty():
        return pl.DataFrame(schema=STATE_COLUMNS)
    ordered = sums.sort([*STATE_KEYS, "pairings"])
    column = {name: ordered[name].cast(pl.Int64).to_numpy() for name in (
        "player_count", "pairings", "boards", "settled", "settled_sq", "royalty", "royalty_sq",
        "royalty_settled", "fantasyland_next")}
    scale, each = column["player_count"] - 1, column["pairings"]
    squares = ("settled_sq", "royalty_sq", "royalty_settled")
    largest = max(int(np.abs(scale * scale * column[name]).max())
                  for name in ("settled", "royalty", *squares))
    if largest >= 2 ** 53 or int(each.max()) ** 2 >= 2 ** 53:
        return _scaled_states_by_rows(ordered)
    group = ordered.select(pl.any_horizontal(
        [pl.col(key).ne_missing(pl.col(key).shift()) for key in STATE_KEYS])
        .cum_sum().cast(pl.Int64) - 1).to_series().to_numpy()
    groups = int(group[-1]) + 1
    first = np.searchsorted(group, np.arange(groups))
    part = np.arange(group.size) - first[group]
    parts = {
        "value": (scale * column["settled"]) / each,
        "value_sq": (scale * scale * column["settled_sq"]) / (each * each),
        "royalty": (scale * column["royalty"]) / each,
        "royalty_sq": (scale * scale * column["royalty_sq"]) / (each * each),
        "value_royalty": (scale * scale * column["royalty_settled"]) / (each * each),
    }
    scaled = {name: np.zeros(groups) for name in parts}
    for index in range(int(part.max()) + 1):
        rows = part == index
        for name, values in parts.items():
            scaled[name][group[rows]] += values[rows]
    counted = {name: np.zeros(groups, dtype=np.int64) for name in (
        "boards", "fantasyland_next", "pairings", "settled")}
    np.add.at(counted["boards"], group, column["boards"])
    np.add.at(counted["fantasyland_next"], group, column["fantasyland_next"])
    np.add.at(counted["pairings"], group, each * column["boards"])
    np.add.at(counted["settled"], group, column["settled"])
    keys = ordered.select(STATE_KEYS)[first]
    return keys.with_columns(
        *(pl.Series(name, counted[name] if name in counted else scaled[name])
          for name in STATE_COLUMNS if name not in STATE_KEYS)).cast(
        STATE_COLUMNS)  # type: ignore[arg-type]


def _scaled_states_by_rows(ordered: pl.DataFrame) -> pl.DataFrame:
    """:func:`_scaled_states` of sums sorted by group and ``pairings``, a row at a time."""
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for row in ordered.iter_rows(named=True):
        key = tuple(row[column] for column in STATE_KEYS)
        scale = row["player_count"] - 1
        each = row["pairings"]
        boards = int(row["boards"])
        entry = groups.setdefault(key, [0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0])
        entry[0] += boards
        entry[1] += (scale * int(row["settled"])) / each
        entry[2] += (scale * scale * int(row["settled_sq"])) / (each * each)
        entry[3] += (scale * int(row["royalty"])) / each
        entry[4] += (scale * scale * int(row["royalty_sq"])) / (each * each)
        entry[5] += (scale * scale * int(row["royalty_settled"])) / (each * each)
        entry[6] += int(row["fantasyland_next"])
        entry[7] += each * boards
        entry[8] += int(row["settled"])
    rows = [(*key, *values) for key, values in groups.items()]
    return pl.DataFrame(rows, schema=STATE_COLUMNS, orient="row")


def report_hand_grades(db: Database, hand_keys: tuple[int, ...],
                       players: tuple[str, ...]) -> pl.DataFrame:
    """The graded decisions (``ofc analyze``) of ``players`` in the hands ``hand_keys``.

    Empty before any grading (also when the grading tables do not exist yet). Columns: hand_key,
    player, street, situation, chosen_placement, best_placement, ev_loss, loss_se, mistake.
    """
    columns = {"hand_key": pl.Int64, "player": pl.String, "street": pl.Int64,
               "situation": pl.String, "chosen_placement": pl.String,
               "best_placement": pl.String, "ev_loss": pl.Float64, "loss_se": pl.Float64,
               "mistake": pl.Boolean}
    if not hand_keys or not players:
        return pl.DataFrame(schema=columns)
    exists = frame(db, "SELECT count(*) AS n FROM information_schema.tables "
                       "WHERE table_schema = 'main' AND table_name = 'decision_grades'")
    if not exists["n"][0]:
        return pl.DataFrame(schema=columns)
    sql = f"""
        SELECT hand_key, player, street::BIGINT AS street, situation, chosen_placement,
               best_placement, ev_loss, loss_se, mistake
        FROM decision_grades
        WHERE hand_key IN ({placeholders(hand_keys)}) AND player IN ({placeholders(players)})
        ORDER BY hand_key, player, street
    """
    return frame(db, sql, [*hand_keys, *players]).cast(columns)  # type: ignore[arg-type]


SESSION_CELL_COLUMNS: dict[str, type[pl.DataType]] = {
    "player": pl.String, "session_id": pl.String, "variant": pl.String,
    "player_count": pl.Int8, "hands": pl.Int64, "points": pl.Int64, "points_sq": pl.Int64,
    "fouls": pl.Int64, "first_started_at": pl.Datetime("us"), "first_hand_key": pl.Int64,
}
"""The columns of :func:`report_session_cells`, with their types."""


def report_session_cells(db: Database, filters: Filters,
                         route: Route = Route.AUTO) -> pl.DataFrame:
    """Per player of ``filters.players`` (required), session and game (variant, table size):
    the hands in scope that a trend across sessions pools together — hands, points, points²,
    fouls, and the first of them (start, then key), in no particular order.

    From ``session_totals`` (kept with the sessions) unless dates or tables are filtered (a
    session may straddle the edge of a date range); else from the players' hands.
    """
    if not filters.players:
        raise ValueError("report_session_cells needs the players in filters.players")
    heroes = placeholders(filters.players)
    with reading(db) as connection:
        served = not (filters.date_from or filters.date_to or filters.tables)
        if use_aggregates(connection, route, served) and _session_totals_ready(connection):
            conditions, params = totals_conditions(Filters(
                players=filters.players, variants=filters.variants, rules=filters.rules))
            source = f"""
                SELECT player, session_id, variant, player_count, hands, points, points_sq,
                       fouls, first_started_at AS started_at, first_hand_key AS hand_key
                FROM session_totals t WHERE TRUE{conditions}"""
        else:
            if route is Route.AGGREGATES and served:
                raise AggregatesUnavailable("the session totals do not count every session")
            where, hand_params = _report_conditions(filters)
            source = f"""
                SELECT s.player, s.session_id, h.variant, h.player_count, 1 AS hands,
                       coalesce(r.points, 0)::BIGINT AS points,
                       coalesce(r.points, 0)::BIGINT * coalesce(r.points, 0) AS points_sq,
                       CASE WHEN e.foul THEN 1 ELSE 0 END AS fouls, h.started_at, h.hand_key
                FROM seats s
                JOIN hands h ON h.hand_key = s.hand_key
                LEFT JOIN results r ON r.hand_key = s.hand_key AND r.player = s.player
                LEFT JOIN evaluations e ON e.hand_key = s.hand_key AND e.player = s.player
                WHERE s.player IN ({heroes}) AND s.session_id IS NOT NULL AND {where}"""
            params = [*filters.players, *hand_params]
        # in no order: sorting the texts would cost as much as the rest (the trend sorts the
        # few integer columns it needs)
        sql = f"""
            SELECT player, session_id, variant, player_count, sum(hands)::BIGINT AS hands,
                   sum(points)::BIGINT AS points, sum(points_sq)::BIGINT AS points_sq,
                   sum(fouls)::BIGINT AS fouls, min(started_at) AS first_started_at,
                   arg_min(hand_key, (started_at, hand_key)) AS first_hand_key
            FROM ({source}) GROUP BY player, session_id, variant, player_count
        """
        return connection.sql(sql, params=params).pl().cast(
            SESSION_CELL_COLUMNS)  # type: ignore[arg-type]


def session_cells_kept(db: Database, filters: Filters, route: Route = Route.AUTO) -> bool:
    """True when :func:`report_session_cells` with these filters (and ``route``) reads the totals
    kept per session, not the hands."""
    with reading(db) as connection:
        served = not (filters.date_from or filters.date_to or filters.tables)
        return (use_aggregates(connection, route, served)
                and _session_totals_ready(connection))


def _session_totals_ready(connection: duckdb.DuckDBPyConnection) -> bool:
    """``session_totals`` counts every hand of every session (looked at once per connection
    within :func:`~pipeline.read.totals.readiness_checked_once`)."""
    return checked_once(connection, "session totals", _session_totals_count_agrees)


def _session_totals_count_agrees(connection: duckdb.DuckDBPyConnection) -> bool:
    try:
        kept, sessions = connection.sql(
            "SELECT (SELECT coalesce(sum(hands), 0) FROM session_totals), "
            "(SELECT coalesce(sum(hands), 0) FROM sessions)").fetchall()[0]
    except duckdb.Error:
        return False
    return int(kept) == int(sessions)


def report_progress_hands(db: Database, filters: Filters) -> pl.DataFrame:
    """Every hand of ``filters.players`` (required) in scope, in play order, with what a trend
    needs and nothing more.

    Columns: hand_key, started_at, session_id, variant, player_count, player, points, foul.
    """
    if not filters.players:
        raise ValueError("report_progress_hands needs the players in filters.players")
    where, params = _report_conditions(filters)
    sql = f"""
        SELECT h.hand_key, h.started_at, s.session_id, h.variant, h.player_count, s.player,
               r.points, e.foul
        FROM seats s
        JOIN hands h ON h.hand_key = s.hand_key
        JOIN results r ON r.hand_key = s.hand_key AND r.player = s.player
        JOIN evaluations e ON e.hand_key = s.hand_key AND e.player = s.player
        WHERE s.player IN ({placeholders(filters.players)}) AND {where}
        ORDER BY h.started_at NULLS FIRST, h.hand_key, s.player
    """
    return frame(db, sql, [*filters.players, *params])


def report_progress_series(db: Database, filters: Filters,
                           route: Route = Route.AUTO) -> pl.DataFrame:
    """:func:`report_progress_hands` without the seats (no session): what rolling windows
    need, the same rows in the same order, a narrower read (the trend across sessions then
    comes from :func:`report_session_cells`).

    From the kept play order (``play_order``: each row holds its hand's game, points and foul)
    when no date, variant, rules or table filter keeps only some of the players' hands; else
    from the hand tables.

    Columns: hand_key, started_at, variant, player_count, player, points, foul.
    """
    if not filters.players:
        raise ValueError("report_progress_series needs the players in filters.players")
    heroes = placeholders(filters.players)
    served = not (filters.date_from or filters.date_to or filters.variants or filters.rules
                  or filters.tables)
    with reading(db) as connection:
        if use_play_order(connection, route, served):
            sql = f"""
                SELECT hand_key, started_at, variant, player_count, player, points, foul
                FROM play_order WHERE player IN ({heroes})
                ORDER BY started_at NULLS FIRST, hand_key, player
            """
            return connection.sql(sql, params=list(filters.players)).pl()
        where, params = _report_conditions(filters)
        sql = f"""
            SELECT h.hand_key, h.started_at, h.variant, h.player_count, r.player, r.points, e.foul
            FROM results r
            JOIN hands h ON h.hand_key = r.hand_key
            JOIN evaluations e ON e.hand_key = r.hand_key AND e.player = r.player
            WHERE r.player IN ({heroes}) AND e.player IN ({heroes}) AND {where}
            ORDER BY h.started_at NULLS FIRST, h.hand_key, r.player
        """
        return connection.sql(sql, params=[*filters.players, *filters.players, *params]).pl()


# --- per session: what the report's errors are clustered by ----------------------------------

SESSION_SUM_KEYS = ("player", "session", "variant", "player_count", "position", "rules", "state",
                    "pairings")
"""The grain of :func:`report_session_sums`."""

SESSION_SUM_COLUMNS: dict[str, type[pl.DataType]] = {
    "player": pl.String, "session": pl.String, "variant": pl.String, "player_count": pl.Int8,
    "position": pl.Int8, "rules": pl.String, "state": pl.String, "pairings": pl.Int64,
    "boards": pl.Int64, "settled": pl.Int64, "settled_sq": pl.Int64, "royalty": pl.Int64,
    "royalty_sq": pl.Int64, "royalty_settled": pl.Int64, "fantasyland_next": pl.Int64,
    "chasing": pl.Int64, "fouls": pl.Int64, "chasing_fouls": pl.Int64, "royalty_top": pl.Int64, "royalty_top_sq": pl.Int64,
    "royalty_middle": pl.Int64, "royalty_middle_sq": pl.Int64, "royalty_bottom": pl.Int64,
    "royalty_bottom_sq": pl.Int64, "matchups": pl.Int64, "scoops": pl.Int64,
    "scooped": pl.Int64,
}
"""The columns of :func:`report_session_sums`, with their types."""

DRAW_RANKS = ("Q", "K", "A")
"""A lone card of these ranks on the top row is a Fantasyland draw (K and A in 2-7 Pineapple,
where queens do not enter)."""

LOWBALL = "2-7-pineapple"


def fantasyland_top_values() -> tuple[int, int]:
    """The weakest top rows that enter Fantasyland: QQ2 (Classic, Pineapple) and KK2 (2-7
    Pineapple), as row values (``evaluations.top_value``)."""
    from pipeline.rules.cards import parse_cards
    from pipeline.rules.values import evaluate_row

    return fantasyland_top_value(), evaluate_row(parse_cards("Kc Kd 2h"))


def _last_street_sql(alias: str) -> str:
    """SQL for the number of a hand's last street (from its variant's streets)."""
    from pipeline.rules.game import Variant

    cases = " ".join(f"WHEN '{variant.value}' THEN {len(variant.streets)}" for variant in Variant)
    return f"CASE {alias}.variant {cases} END"


def _draws_sql(players: str) -> str:
    """``report_draws``: the boards (outside Fantasyland, streets known) whose top row held a
    live Fantasyland draw when the last street's cards were dealt: a slot left on top and
    either one queen, king or ace (king or ace in 2-7 Pineapple, where queens do not enter) or a
    pair (trips qualify), with a card of that rank the player had not seen yet - not on his own
    board or in his discards, not on an opponent's board as it stood before that street (a
    Fantasyland opponent's cards are face down)."""
    last = _last_street_sql("k")
    return f"""
        report_top AS (
            SELECT p.hand_key, p.player, any_value(k.variant) AS variant,
                   any_value({last}) AS last_street, count(*) AS top_cards,
                   min(left(p.card, 1)) AS first_rank, max(left(p.card, 1)) AS second_rank
            FROM placements p JOIN report_hands k ON k.hand_key = p.hand_key
            WHERE p.row_name = 'top' AND p.street < {last}{players.format(alias="p")}
            GROUP BY p.hand_key, p.player
            HAVING count(*) < 3
        ), report_candidates AS (
            SELECT hand_key, player, first_rank AS rank, last_street FROM report_top
            WHERE (top_cards = 2 AND first_rank = second_rank)
               OR ((top_cards = 1 OR first_rank <> second_rank)
                   AND (first_rank IN ('K', 'A') OR (first_rank = 'Q' AND variant <> '{LOWBALL}')))
            UNION ALL
            SELECT hand_key, player, second_rank, last_street FROM report_top
            WHERE top_cards = 2 AND first_rank <> second_rank
              AND (second_rank IN ('K', 'A') OR (second_rank = 'Q' AND variant <> '{LOWBALL}'))
        ), report_face_down AS (
            SELECT hand_key, player FROM seats
            WHERE fantasyland AND hand_key IN (SELECT hand_key FROM report_candidates)
        ), report_seen AS (
            SELECT c.hand_key, c.player, c.rank, count(*) AS seen
            FROM report_candidates c
            JOIN (SELECT hand_key, player, street, card FROM placements
                  UNION ALL SELECT hand_key, player, street, card FROM discards) x
              ON x.hand_key = c.hand_key AND x.street < c.last_street
                 AND left(x.card, 1) = c.rank
            ANTI JOIN report_face_down f ON f.hand_key = x.hand_key AND f.player = x.player
            GROUP BY ALL
        ), report_draws AS (
            SELECT DISTINCT c.hand_key, c.player
            FROM report_candidates c
            LEFT JOIN report_seen v ON v.hand_key = c.hand_key AND v.player = c.player
                 AND v.rank = c.rank
            WHERE coalesce(v.seen, 0) < 4
        )"""


def report_session_sums(db: Database, filters: Filters,
                        leave_out: tuple[str, ...] = ()) -> pl.DataFrame:
    """Per player, session, variant, table size, position, rules, board state and number of
    opponents counted: integer sums of the boards, for the report's comparisons and for errors
    clustered by session (hands of one session share a table, opponents and a mood).

    ``session``: the seat's session, or ``hand:<key>`` for an undated hand (a session of its
    own). Every board in scope is here (with ``filters.players``, only theirs), also one whose
    opponents are all in ``leave_out`` (``pairings`` 0: it counts in the rates, not in results).
    Per board: its pairings with the opponents not in ``leave_out`` (``pairings``, their
    ``settled`` points and ``royalty`` points, ``scoops`` and ``scooped`` among them), its
    royalties per row, whether it earns or keeps Fantasyland and whether it *chases*
    Fantasyland (outside it: the final top qualifies - QQ or better, KK or better in 2-7
    Pineapple, or trips - or, with streets known, the top held a live draw when the last
    street's cards were dealt: see :func:`_draws_sql`). Columns: :data:`SESSION_SUM_COLUMNS`
    (sums of each value, its square, and the products the delta method needs).

    One pass over the hands in scope (the aggregates keep no sessions); summing the sessions
    with ``pairings`` > 0 gives :func:`report_state_totals` exactly.
    """
    (where, params), (left_out, left_params), (players, player_params), \
        (seat_players, seat_params) = _pass_conditions(filters, leave_out)
    draw_players = ""
    draw_params: list[Any] = []
    if filters.players:
        draw_players = f" AND {{alias}}.player IN ({placeholders(filters.players)})"
        draw_params = list(filters.players)
    queens, kings = fantasyland_top_values()
    sql = f"""
        WITH report_hands AS MATERIALIZED (
            SELECT h.hand_key, h.variant, h.player_count, h.rules, h.has_streets
            FROM hands h WHERE {where}
        ), counted AS (
            SELECT m.hand_key, m.player, count(*) AS pairings,
                   sum(m.settled)::BIGINT AS settled,
                   sum(m.royalty_points)::BIGINT AS royalty_points,
                   count(*) FILTER (WHERE m.scoop > 0) AS scoops,
                   count(*) FILTER (WHERE m.scoop < 0) AS scooped
            FROM matchups m SEMI JOIN report_hands k ON k.hand_key = m.hand_key
            WHERE TRUE{left_out}{players}
            GROUP BY m.hand_key, m.player
        ), {_draws_sql(draw_players)}, boards AS (
            SELECT s.player, coalesce(s.session_id, 'hand:' || s.hand_key::VARCHAR) AS session,
                   k.variant, k.player_count, s.position, k.rules,
                   CASE WHEN s.fantasyland THEN 'fantasyland' WHEN e.foul THEN 'foul'
                        ELSE 'standing' END AS state,
                   coalesce(c.pairings, 0) AS pairings, coalesce(c.settled, 0) AS settled,
                   coalesce(c.royalty_points, 0) AS royalty_points,
                   coalesce(c.scoops, 0) AS scoops, coalesce(c.scooped, 0) AS scooped,
                   e.fantasyland_next, e.foul, e.royalty_top, e.royalty_middle,
                   e.royalty_bottom, NOT s.fantasyland AND (
                       e.top_value >= CASE WHEN k.variant = '{LOWBALL}' THEN ? ELSE ? END
                       OR d.player IS NOT NULL) AS chasing
            FROM seats s
            JOIN report_hands k ON k.hand_key = s.hand_key
            JOIN evaluations e ON e.hand_key = s.hand_key AND e.player = s.player
            LEFT JOIN counted c ON c.hand_key = s.hand_key AND c.player = s.player
            LEFT JOIN report_draws d ON d.hand_key = s.hand_key AND d.player = s.player
            WHERE TRUE{seat_players}
        )
        SELECT player, session, variant, player_count, position, rules, state, pairings,
               count(*) AS boards, sum(settled) AS settled, sum(settled * settled) AS settled_sq,
               sum(royalty_points) AS royalty, sum(royalty_points * royalty_points) AS royalty_sq,
               sum(royalty_points * settled) AS royalty_settled,
               count(*) FILTER (WHERE fantasyland_next) AS fantasyland_next,
               count(*) FILTER (WHERE chasing) AS chasing,
               count(*) FILTER (WHERE foul) AS fouls,
               count(*) FILTER (WHERE chasing AND foul) AS chasing_fouls,
               sum(royalty_top) AS royalty_top, sum(royalty_top * royalty_top) AS royalty_top_sq,
               sum(royalty_middle) AS royalty_middle,
               sum(royalty_middle * royalty_middle) AS royalty_middle_sq,
               sum(royalty_bottom) AS royalty_bottom,
               sum(royalty_bottom * royalty_bottom) AS royalty_bottom_sq,
               sum(pairings) AS matchups, sum(scoops) AS scoops, sum(scooped) AS scooped
        FROM boards GROUP BY ALL
        ORDER BY player, session, variant, player_count, position, rules, state, pairings
    """
    with reading(db) as connection:
        return connection.sql(sql, params=[
            *params, *left_params, *player_params, *draw_params, kings, queens,
            *seat_params]).pl().cast(SESSION_SUM_COLUMNS)  # type: ignore[arg-type]


def state_totals_of_sessions(sums: pl.DataFrame) -> pl.DataFrame:
    """:func:`report_state_totals` from :func:`report_session_sums` (of the same scope and
    ``leave_out``): the boards with an opponent who counts, summed over sessions as integers and
    scaled the same way, so the figures are the same to the last bit."""
    counted = sums.filter(pl.col("pairings") > 0)
    if counted.is_empty():
        return pl.DataFrame(schema=STATE_COLUMNS)
    integers = ("boards", "settled", "settled_sq", "royalty", "royalty_sq", "royalty_settled",
                "fantasyland_next")
    regrouped = counted.group_by([*STATE_KEYS, "pairings"]).agg(
        [pl.col(column).sum() for column in integers])
    return _scaled_states(regrouped)


SESSION_STATE_COLUMNS: dict[str, type[pl.DataType]] = {
    "player": pl.String, "session": pl.String, "variant": pl.String, "player_count": pl.Int8,
    "rules": pl.String, "state": pl.String, "boards": pl.Int64, "value": pl.Float64,
    "royalty": pl.Float64,
}
"""The columns of :func:`session_states`."""


def session_states(sums: pl.DataFrame) -> pl.DataFrame:
    """Each session's boards, values and royalty parts per state (the boards with an opponent
    who counts, scaled to the whole table as in :func:`report_state_totals`), from
    :func:`report_session_sums`: what errors clustered by session need."""
    counted = sums.filter(pl.col("pairings") > 0)
    if counted.is_empty():
        return pl.DataFrame(schema=SESSION_STATE_COLUMNS)
    scale = (pl.col("player_count").cast(pl.Float64) - 1) / pl.col("pairings")
    return (counted.group_by("player", "session", "variant", "player_count", "rules", "state")
            .agg(pl.col("boards").sum(), (pl.col("settled") * scale).sum().alias("value"),
                 (pl.col("royalty") * scale).sum().alias("royalty"))
            .sort("player", "session", "variant", "player_count", "rules", "state")
            .cast(SESSION_STATE_COLUMNS))  # type: ignore[arg-type]


PAIR_SESSION_COLUMNS: dict[str, type[pl.DataType]] = {
    "player": pl.String, "opponent": pl.String, "session": pl.String, "variant": pl.String,
    "player_count": pl.Int8, "rules": pl.String, "hands": pl.Int64, "points": pl.Int64,
    "points_sq": pl.Int64,
}
"""The columns of :func:`report_pair_sessions`."""


def report_pair_sessions(db: Database, filters: Filters,
                         opponents: tuple[str, ...]) -> pl.DataFrame:
    """Every player's pairings with each of ``opponents`` in scope, per session, variant, table
    size and rules: hands together and the player's settled points against that opponent (and
    their squares). ``session``: the player's session, ``hand:<key>`` for an undated hand.
    Head-to-head compares within variant and table size and clusters errors by session."""
    if not opponents:
        return pl.DataFrame(schema=PAIR_SESSION_COLUMNS)
    where, params = _report_conditions(filters)
    sql = f"""
        SELECT m.player, m.opponent,
               coalesce(s.session_id, 'hand:' || m.hand_key::VARCHAR) AS session,
               h.variant, h.player_count, h.rules, count(*) AS hands,
               sum(m.settled)::BIGINT AS points, sum(m.settled * m.settled)::BIGINT AS points_sq
        FROM matchups m
        JOIN hands h ON h.hand_key = m.hand_key
        JOIN seats s ON s.hand_key = m.hand_key AND s.player = m.player
        WHERE {where} AND m.opponent IN ({placeholders(opponents)})
        GROUP BY ALL
        ORDER BY m.player, m.opponent, session, h.variant, h.player_count, h.rules
    """
    return frame(db, sql, [*params, *opponents]).cast(
        PAIR_SESSION_COLUMNS)  # type: ignore[arg-type]


SEAT_BLOCK_HANDS = 12
"""Hands per block of :func:`report_seat_blocks`: four turns of the button at a 3-handed table."""

SEAT_BLOCK_COLUMNS: dict[str, type[pl.DataType]] = {
    "player": pl.String, "block": pl.String, "variant": pl.String, "player_count": pl.Int8,
    "rules": pl.String, "position": pl.Int8, "boards": pl.Int64, "value": pl.Float64, "value_sq": pl.Float64,
}
"""The columns of :func:`report_seat_blocks`."""


def report_seat_blocks(db: Database, filters: Filters, leave_out: tuple[str, ...] = (),
                       block_hands: int = SEAT_BLOCK_HANDS) -> pl.DataFrame:
    """Per player, block of consecutive hands, variant, table size, rules and position: the boards and
    their results (settled against the opponents not in ``leave_out``, scaled to the whole table
    as in :func:`report_state_totals`) with the sum of squares, for the seat test's errors.

    A block is ``block_hands`` consecutive hands of one session (counted boards only, in play
    order; ``block``: ``session#n``). Neighbouring hands hang together at the seats: the button
    stays put after a Fantasyland hand, so a run of Fantasyland hands (the player's or an
    opponent's) falls on one seat; blocks as units keep that in the errors. With
    ``filters.players``, only theirs."""
    (where, params), (left_out, left_params), (players, player_params), \
        (seat_players, seat_params) = _pass_conditions(filters, leave_out)
    sql = f"""
        WITH report_hands AS MATERIALIZED (
            SELECT h.hand_key, h.variant, h.player_count, h.rules, h.started_at
            FROM hands h WHERE {where}
        ), counted AS (
            SELECT m.hand_key, m.player, count(*) AS pairings, sum(m.settled) AS settled
            FROM matchups m SEMI JOIN report_hands k ON k.hand_key = m.hand_key
            WHERE TRUE{left_out}{players}
            GROUP BY m.hand_key, m.player
        ), boards AS (
            SELECT s.player, coalesce(s.session_id, 'hand:' || s.hand_key::VARCHAR) AS session,
                   k.variant, k.player_count, k.rules, s.position,
                   c.settled::DOUBLE * (k.player_count - 1) / c.pairings AS value,
                   row_number() OVER (
                       PARTITION BY s.player, coalesce(s.session_id, 'hand:' || s.hand_key::VARCHAR)
                       ORDER BY k.started_at NULLS FIRST, s.hand_key) - 1 AS place
            FROM seats s
            JOIN report_hands k ON k.hand_key = s.hand_key
            JOIN counted c ON c.hand_key = s.hand_key AND c.player = s.player
            WHERE TRUE{seat_players}
        )
        SELECT player, session || '#' || (place // ?)::VARCHAR AS block, variant, player_count,
               rules, position, count(*) AS boards, sum(value) AS value, sum(value * value) AS value_sq
        FROM boards GROUP BY ALL
        ORDER BY player, block, variant, player_count, rules, position
    """
    return frame(db, sql, [*params, *left_params, *player_params, *seat_params,
                           int(block_hands)]).cast(SEAT_BLOCK_COLUMNS)  # type: ignore[arg-type]
