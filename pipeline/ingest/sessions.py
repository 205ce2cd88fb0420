"""Sessions: a player's run of hands at one table (site + table) without a long break.

Hands of one player at one table whose start times are less than ``gap`` minutes apart belong to
one session; a gap of ``gap`` minutes or more starts a new one. Hands without a start time belong
to no session (``seats.session_id`` stays null). A session's id is deterministic: a hash of the
player, the site, the table and the start of the session's first hand, so the same hands always
give the same ids, whatever order files were ingested in.

Everything here runs as SQL window functions inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Iterable

import duckdb
import pyarrow as pa

from pipeline import store
from pipeline.ingest.defaults import DEFAULT_SESSION_GAP_MINUTES

__all__ = ["DEFAULT_SESSION_GAP_MINUTES", "SESSION_GAP_META_KEY", "refresh_sessions", "update_session_points",
           "update_sessions"]

SESSION_GAP_META_KEY = "session_gap_minutes"
"""meta key holding the gap the stored sessions were computed with."""

_SCOPE = "_session_scope"


def _session_rows_sql(gap_minutes: float, scoped: bool) -> str:
    gap_microseconds = int(round(gap_minutes * 60_000_000))
    scope_join = (
        f"SEMI JOIN {_SCOPE} sc ON h.site = sc.site "
        "AND h.table_name IS NOT DISTINCT FROM sc.table_name"
        if scoped
        else ""
    )
    return f"""
    CREATE OR REPLACE TEMP TABLE _session_rows AS
    WITH s AS (
        SELECT se.hand_key, se.player, h.site, h.table_name, h.started_at, h.variant, h.rules,
               h.player_count, coalesce(r.points, 0) AS points, e.foul, e.royalties
        FROM seats se
        JOIN hands h ON h.hand_key = se.hand_key
        {scope_join}
        LEFT JOIN results r ON r.hand_key = se.hand_key AND r.player = se.player
        LEFT JOIN evaluations e ON e.hand_key = se.hand_key AND e.player = se.player
        WHERE h.started_at IS NOT NULL
    ),
    g AS (
        SELECT *,
            CASE WHEN lag(started_at) OVER w IS NULL
                   OR epoch_us(started_at) - epoch_us(lag(started_at) OVER w) >= {gap_microseconds}
                 THEN 1 ELSE 0 END AS starts_session
        FROM s
        WINDOW w AS (PARTITION BY player, site, table_name ORDER BY started_at, hand_key)
    ),
    n AS (
        SELECT *,
            sum(starts_session) OVER (
                PARTITION BY player, site, table_name ORDER BY started_at, hand_key
                ROWS UNBOUNDED PRECEDING
            ) AS session_number
        FROM g
    ),
    k AS (
        -- one id per session (hashing per seat cost most of the query)
        SELECT player, site, table_name, session_number,
            'S' || substr(md5(player || chr(31) || site || chr(31) || coalesce(table_name, '')
                || chr(31) || strftime(min(started_at), '%Y-%m-%dT%H:%M:%S.%f')), 1, 15)
                AS session_id
        FROM n
        GROUP BY player, site, table_name, session_number
    )
    SELECT n.hand_key, n.player, n.site, n.table_name, n.started_at, n.variant, n.rules,
           n.player_count, n.points, n.foul, n.royalties, k.session_id
    FROM n JOIN k ON n.player = k.player AND n.site = k.site
        AND n.table_name IS NOT DISTINCT FROM k.table_name
        AND n.session_number = k.session_number
    """


def update_sessions(
    connection: duckdb.DuckDBPyConnection,
    tables: Iterable[tuple[str, str | None]] | None,
    gap_minutes: float = DEFAULT_SESSION_GAP_MINUTES,
) -> int:
    """Recompute the sessions of every player at the given (site, table) pairs; all when None.

    Replaces those tables' rows in ``sessions`` and ``session_totals`` and sets
    ``seats.session_id``. Runs in the caller's transaction. Returns the number of sessions
    written.
    """
    scoped = tables is not None
    if scoped:
        pairs = sorted(set(tables), key=lambda pair: (pair[0], pair[1] or ""))
        if not pairs:
            return 0
        scope = pa.table(
            {
                "site": pa.array([site for site, _ in pairs], pa.string()),
                "table_name": pa.array([table for _, table in pairs], pa.string()),
            }
        )
        connection.register(_SCOPE, scope)
    try:
        connection.execute(_session_rows_sql(gap_minutes, scoped))
        if scoped:
            connection.execute(
                f"DELETE FROM session_totals WHERE session_id IN (SELECT session_id FROM "
                f"sessions WHERE EXISTS (SELECT 1 FROM {_SCOPE} sc WHERE sc.site = sessions.site "
                "AND sc.table_name IS NOT DISTINCT FROM sessions.table_name))"
            )
            connection.execute(
                f"DELETE FROM sessions WHERE EXISTS (SELECT 1 FROM {_SCOPE} sc "
                "WHERE sc.site = sessions.site "
                "AND sc.table_name IS NOT DISTINCT FROM sessions.table_name)"
            )
            connection.execute(
                f"UPDATE seats SET session_id = NULL WHERE session_id IS NOT NULL AND hand_key IN "
                f"(SELECT h.hand_key FROM hands h SEMI JOIN {_SCOPE} sc ON h.site = sc.site "
                "AND h.table_name IS NOT DISTINCT FROM sc.table_name)"
            )
        else:
            connection.execute("DELETE FROM session_totals")
            connection.execute("DELETE FROM sessions")
            connection.execute("UPDATE seats SET session_id = NULL WHERE session_id IS NOT NULL")
        connection.execute(
            """INSERT INTO sessions BY NAME
               SELECT session_id, any_value(player) AS player, any_value(site) AS site,
                      any_value(table_name) AS table_name, min(started_at) AS started_at,
                      max(started_at) AS ended_at, count(*) AS hands, sum(points) AS points,
                      count(*) FILTER (WHERE foul) AS fouls,
                      coalesce(sum(royalties), 0) AS royalties
               FROM _session_rows GROUP BY session_id"""
        )
        connection.execute(f"INSERT INTO session_totals BY NAME {_session_totals_sql('_session_rows')}")
        connection.execute(
            """UPDATE seats SET session_id = r.session_id FROM _session_rows r
               WHERE seats.hand_key = r.hand_key AND seats.player = r.player"""
        )
        rows = connection.execute(
            "SELECT count(DISTINCT session_id) FROM _session_rows"
        ).fetchall()
        connection.execute("DROP TABLE _session_rows")
    finally:
        if scoped:
            connection.unregister(_SCOPE)
    return int(rows[0][0]) if rows else 0


def refresh_sessions(
    connection: duckdb.DuckDBPyConnection, touched: Iterable[tuple[str, str | None]],
    gap_minutes: float,
) -> None:
    """The sessions after a write, in the caller's transaction: those of the ``touched``
    (site, table) pairs, or of every table when the database's stored gap is another one; then
    ``gap_minutes`` is stored as the database's gap (``ofc ingest`` and ``ofc watch``)."""
    stored_gap = store.get_meta(connection, SESSION_GAP_META_KEY)
    if stored_gap is not None and float(stored_gap) != gap_minutes:
        update_sessions(connection, None, gap_minutes)
    elif touched:
        update_sessions(connection, touched, gap_minutes)
    store.set_meta(connection, SESSION_GAP_META_KEY, repr(float(gap_minutes)))


def _session_totals_sql(rows: str) -> str:
    """``session_totals`` rows from ``rows`` (one per seat: session_id, player, hand_key,
    started_at, variant, rules, player_count, points, foul)."""
    return f"""
        SELECT session_id, player, variant, rules, player_count, hands, points, points_sq,
               fouls, first.started_at AS first_started_at, first.hand_key AS first_hand_key
        FROM (
            SELECT session_id, any_value(player) AS player, variant, rules, player_count,
                   count(*) AS hands, sum(points)::BIGINT AS points,
                   sum(points::BIGINT * points)::BIGINT AS points_sq,
                   count(*) FILTER (WHERE foul) AS fouls,
                   min(struct_pack(started_at := started_at, hand_key := hand_key)) AS first
            FROM {rows} GROUP BY session_id, variant, rules, player_count
        )
    """


def update_session_points(connection: duckdb.DuckDBPyConnection) -> None:
    """Recompute every session's points, fouls and royalties from ``results`` and
    ``evaluations``, and ``session_totals`` (after a re-score: which hands form a session depends
    on times only, not on the rules; also fills them in a database made before they existed).
    Runs in the caller's transaction."""
    connection.execute(
        """UPDATE sessions SET points = t.points, fouls = t.fouls, royalties = t.royalties FROM (
               SELECT se.session_id, sum(coalesce(r.points, 0)) AS points,
                      count(*) FILTER (WHERE e.foul) AS fouls,
                      coalesce(sum(e.royalties), 0) AS royalties
               FROM seats se
               LEFT JOIN results r ON r.hand_key = se.hand_key AND r.player = se.player
               LEFT JOIN evaluations e ON e.hand_key = se.hand_key AND e.player = se.player
               WHERE se.session_id IS NOT NULL
               GROUP BY se.session_id
           ) t
           WHERE sessions.session_id = t.session_id
             AND (sessions.points IS DISTINCT FROM t.points
                  OR sessions.fouls IS DISTINCT FROM t.fouls
                  OR sessions.royalties IS DISTINCT FROM t.royalties)"""
    )
    connection.execute("DELETE FROM session_totals")
    connection.execute(
        "INSERT INTO session_totals BY NAME " + _session_totals_sql(
            """(SELECT se.session_id, se.player, se.hand_key, h.started_at, h.variant, h.rules,
                       h.player_count, coalesce(r.points, 0) AS points, e.foul
                FROM seats se
                JOIN hands h ON h.hand_key = se.hand_key
                LEFT JOIN results r ON r.hand_key = se.hand_key AND r.player = se.player
                LEFT JOIN evaluations e ON e.hand_key = se.hand_key AND e.player = se.player
                WHERE se.session_id IS NOT NULL)""")
    )
