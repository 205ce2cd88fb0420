"""Sessions: a player's run of hands at one table (site + table) without a long break.

Hands of one player at one table whose start times are less than ``gap`` minutes apart belong to
one session; a gap of ``gap`` minutes or more starts a new one. Hands without a start time belong
to no session (``seats.session_id`` stays null). A session's id is deterministic: a hash of the
player, the site, the table and the start of the session's first hand, so the same hands always
give the same ids, whatever order files were ingested in.

After a write, :func:`add_sessions` merges the new seats into the stored sessions near them, each
stored session taken whole as one block (its start, end and sums), so following a folder costs
what the new hands cost, not the table's history nor the length of its sessions (the lake's
appends do the same: :func:`pipeline.lake.queries.merged_sessions`); :func:`update_sessions`
recomputes whole tables from their seats (another gap, a deleted hand).

Everything here runs as SQL window functions inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Iterable

import duckdb

from pipeline import store
from pipeline.ingest.defaults import DEFAULT_SESSION_GAP_MINUTES
from pipeline.store import SEATS_WAITING_FOR_SESSIONS, SESSIONS_PENDING_META_KEY

__all__ = ["DEFAULT_SESSION_GAP_MINUTES", "SESSIONS_PENDING_META_KEY", "SESSION_GAP_META_KEY",
           "add_sessions", "defer_sessions", "finish_waiting_sessions", "refresh_sessions",
           "update_session_points", "update_sessions"]

SESSION_GAP_META_KEY = "session_gap_minutes"
"""meta key holding the gap the stored sessions were computed with."""

_SCOPE = "_session_scope"


def _gap_microseconds(gap_minutes: float) -> int:
    return int(round(gap_minutes * 60_000_000))


def _register_scope(connection: duckdb.DuckDBPyConnection,
                    tables: Iterable[tuple[str, str | None]]) -> bool:
    """Make the (site, table) pairs the temporary table :data:`_SCOPE`; False (nothing made)
    when there are none. (Built by DuckDB from two list parameters: an Arrow table built here
    would make pyarrow import pandas, about 0.17 s, in a writer that otherwise never needs
    it.)"""
    pairs = sorted(set(tables), key=lambda pair: (pair[0], pair[1] or ""))
    if not pairs:
        return False
    connection.execute(
        f"CREATE OR REPLACE TEMP TABLE {_SCOPE} AS SELECT unnest($sites::VARCHAR[]) AS site, "
        "unnest($tables::VARCHAR[]) AS table_name",
        {"sites": [site for site, _ in pairs], "tables": [table for _, table in pairs]})
    return True


def _drop_scope(connection: duckdb.DuckDBPyConnection) -> None:
    """Drop the temporary table :func:`_register_scope` made."""
    connection.execute(f"DROP TABLE IF EXISTS {_SCOPE}")


def _session_id_sql(start: str) -> str:
    """The session id of a row (``player``, ``site``, ``table_name``) whose session starts at
    ``start``: a hash of the four (the same ids whatever order hands arrive in)."""
    return ("'S' || substr(md5(player || chr(31) || site || chr(31) || coalesce(table_name, '') "
            f"|| chr(31) || strftime({start}, '%Y-%m-%dT%H:%M:%S.%f')), 1, 15)")


def _session_rows_sql(gap_minutes: float, within: str = "all") -> str:
    """``_session_rows`` of every table (``within`` "all") or of the (site, table) pairs of
    :data:`_SCOPE` ("tables")."""
    gap_microseconds = _gap_microseconds(gap_minutes)
    scope_join = ""
    if within == "tables":
        scope_join = (
            f"SEMI JOIN {_SCOPE} sc ON h.site = sc.site "
            "AND h.table_name IS NOT DISTINCT FROM sc.table_name"
        )
    return f"""
    CREATE OR REPLACE TEMP TABLE _session_rows AS
    WITH seated AS (
        SELECT se.hand_key, se.player, h.site, h.table_name, h.started_at, h.variant, h.rules,
               h.player_count
        FROM seats se
        JOIN hands h ON h.hand_key = se.hand_key
        {scope_join}
        WHERE h.started_at IS NOT NULL
    ),
    s AS (
        SELECT seated.*, coalesce(r.points, 0) AS points, e.foul, e.royalties
        FROM seated
        LEFT JOIN results r
            ON r.hand_key = seated.hand_key AND r.player = seated.player
        LEFT JOIN evaluations e
            ON e.hand_key = seated.hand_key AND e.player = seated.player
    ),
    g AS (
        -- the id of each session on its first seat only (hashed once a session, not per seat)
        SELECT *,
            CASE WHEN lag(started_at) OVER w IS NULL
                   OR epoch_us(started_at) - epoch_us(lag(started_at) OVER w) >= {gap_microseconds}
                 THEN {_session_id_sql('started_at')} END AS starting_id
        FROM s
        WINDOW w AS (PARTITION BY player, site, table_name ORDER BY started_at, hand_key)
    )
    -- every seat takes the id of the last session start at or before it
    SELECT hand_key, player, site, table_name, started_at, variant, rules, player_count,
           points, foul, royalties,
           last_value(starting_id IGNORE NULLS) OVER (
               PARTITION BY player, site, table_name ORDER BY started_at, hand_key
               ROWS UNBOUNDED PRECEDING
           ) AS session_id
    FROM g
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
    if scoped and not _register_scope(connection, tables):
        return 0
    try:
        connection.execute(_session_rows_sql(gap_minutes, "tables" if scoped else "all"))
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
        rows = _write_session_rows(connection)
    finally:
        if scoped:
            _drop_scope(connection)
    return rows


def _write_session_rows(connection: duckdb.DuckDBPyConnection) -> int:
    """Insert the sessions and session totals of ``_session_rows``, set their seats' session
    ids, drop it; the number of sessions."""
    connection.execute("INSERT INTO sessions BY NAME "
                       + _sessions_of_parts_sql(f"({_seat_parts_sql('_session_rows')})"))
    connection.execute(f"INSERT INTO session_totals BY NAME {_session_totals_sql('_session_rows')}")
    connection.execute(
        """UPDATE seats SET session_id = r.session_id FROM _session_rows r
           WHERE seats.hand_key = r.hand_key AND seats.player = r.player
             AND seats.session_id IS DISTINCT FROM r.session_id"""
    )
    rows = connection.execute("SELECT count(DISTINCT session_id) FROM _session_rows").fetchall()
    connection.execute("DROP TABLE _session_rows")
    return int(rows[0][0]) if rows else 0


def add_sessions(
    connection: duckdb.DuckDBPyConnection,
    tables: Iterable[tuple[str, str | None]],
    gap_minutes: float = DEFAULT_SESSION_GAP_MINUTES,
) -> int:
    """The sessions of the seats at the given (site, table) pairs that have none yet (new
    hands with a start time), worked out from the stored *sessions* near them, not their seats:
    what it costs follows the new hands, however long the stored sessions are.

    Sessions are runs of hands split by breaks of the gap or more. The stored sessions of a
    player's table within ``gap_minutes`` of the new hands there (the only ones they can join,
    extend or merge: every other one is separated from them by such a break) each become one
    block (its start, end and sums), every new seat a block of its own. In order of their
    starts, a block starts a session when it starts the gap or more after the latest end of the
    blocks before it, and joins that session otherwise: the sessions, and their ids (the hash of
    the player, the table and the session's first start), that :func:`update_sessions` gives
    from every seat of the table. Those sessions' rows in ``sessions`` and ``session_totals``
    are replaced by the sums of their parts (the stored sessions and totals rows whole, the new
    seats one by one: the same sums the full recompute takes over seats); the new seats get their session ids, and the stored seats
    of a session whose id changed (a new hand before its first, or one joining two) get the new
    one. The stored sessions must have been computed with ``gap_minutes``
    (:func:`refresh_sessions` sees to that), which must be positive. Runs in the caller's
    transaction; returns the number of sessions written.
    """
    if gap_minutes <= 0:
        raise ValueError("add_sessions needs a positive gap")
    if not _register_scope(connection, tables):
        return 0
    gap_microseconds = _gap_microseconds(gap_minutes)
    try:
        connection.execute(f"""
            CREATE OR REPLACE TEMP TABLE _session_new_seats AS
            SELECT se.hand_key, se.player, h.site, h.table_name, h.started_at, h.variant,
                   h.rules, h.player_count
            FROM seats se JOIN hands h ON h.hand_key = se.hand_key
            SEMI JOIN {_SCOPE} sc ON h.site = sc.site
                AND h.table_name IS NOT DISTINCT FROM sc.table_name
            WHERE se.session_id IS NULL AND h.started_at IS NOT NULL""")
        # their points and verdicts (the results and evaluations of the new hands only)
        connection.execute("""
            CREATE OR REPLACE TEMP TABLE _session_new AS
            SELECT n.*, coalesce(r.points, 0) AS points, e.foul, e.royalties
            FROM _session_new_seats n
            LEFT JOIN (SELECT hand_key, player, points FROM results WHERE hand_key IN
                       (SELECT hand_key FROM _session_new_seats)) r
                ON r.hand_key = n.hand_key AND r.player = n.player
            LEFT JOIN (SELECT hand_key, player, foul, royalties FROM evaluations WHERE hand_key IN
                       (SELECT hand_key FROM _session_new_seats)) e
                ON e.hand_key = n.hand_key AND e.player = n.player""")
        # the stored sessions that the new hands can join, extend or merge
        connection.execute(f"""
            CREATE OR REPLACE TEMP TABLE _session_old AS
            SELECT s.* FROM sessions s JOIN (
                SELECT player, site, table_name, min(started_at) AS first_start,
                       max(started_at) AS last_start
                FROM _session_new GROUP BY ALL
            ) n ON s.player = n.player AND s.site = n.site
                AND s.table_name IS NOT DISTINCT FROM n.table_name
            WHERE epoch_us(s.ended_at) >= epoch_us(n.first_start) - {gap_microseconds}
              AND epoch_us(s.started_at) <= epoch_us(n.last_start) + {gap_microseconds}""")
        # every block (a stored session, a new seat) with the id of the session it is in now
        order = ("PARTITION BY player, site, table_name "
                 "ORDER BY started_at, is_new, hand_key, old_id")
        before = f"{order} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING"
        connection.execute(f"""
            CREATE OR REPLACE TEMP TABLE _session_blocks AS
            WITH b AS (
                SELECT 0 AS is_new, session_id AS old_id, CAST(NULL AS BIGINT) AS hand_key,
                       player, site, table_name, started_at, ended_at
                FROM _session_old
                UNION ALL
                SELECT 1, CAST(NULL AS VARCHAR), hand_key, player, site, table_name,
                       started_at, started_at
                FROM _session_new
            ), g AS (
                SELECT b.*,
                    CASE WHEN max(epoch_us(ended_at)) OVER ({before}) IS NULL
                           OR epoch_us(started_at) - max(epoch_us(ended_at)) OVER ({before})
                              >= {gap_microseconds}
                         THEN 1 ELSE 0 END AS starts_session
                FROM b
            ), n AS (
                SELECT g.*, sum(starts_session) OVER ({order} ROWS UNBOUNDED PRECEDING)
                    AS number
                FROM g
            ), k AS (
                SELECT n.*, min(started_at) OVER (PARTITION BY player, site, table_name, number)
                    AS session_start
                FROM n
            )
            SELECT is_new, old_id, hand_key, player, {_session_id_sql('session_start')}
                AS session_id
            FROM k""")
        connection.execute("""
            CREATE OR REPLACE TEMP TABLE _session_new_rows AS
            SELECT n.*, b.session_id FROM _session_new n JOIN _session_blocks b
                ON b.is_new = 1 AND b.hand_key = n.hand_key AND b.player = n.player""")
        stored_ids = "(SELECT old_id, session_id FROM _session_blocks WHERE is_new = 0)"
        # the parts of each session now: the stored sessions (and their totals) whole, under
        # their new ids, and the new seats
        connection.execute(f"""
            CREATE OR REPLACE TEMP TABLE _session_parts AS
            SELECT b.session_id, o.player, o.site, o.table_name, o.started_at, o.ended_at,
                   o.hands, o.points, coalesce(o.fouls, 0) AS fouls,
                   coalesce(o.royalties, 0) AS royalties
            FROM _session_old o JOIN {stored_ids} b ON b.old_id = o.session_id
            UNION ALL {_seat_parts_sql('_session_new_rows')}""")
        connection.execute(f"""
            CREATE OR REPLACE TEMP TABLE _session_totals_parts AS
            SELECT b.session_id, t.player, t.variant, t.rules, t.player_count, t.hands,
                   t.points, t.points_sq, t.fouls,
                   struct_pack(started_at := t.first_started_at,
                               hand_key := t.first_hand_key) AS first
            FROM session_totals t JOIN {stored_ids} b ON b.old_id = t.session_id
            UNION ALL {_seat_totals_parts_sql('_session_new_rows')}""")
        connection.execute("DELETE FROM session_totals WHERE session_id IN "
                           "(SELECT session_id FROM _session_old)")
        connection.execute("DELETE FROM sessions WHERE session_id IN "
                           "(SELECT session_id FROM _session_old)")
        connection.execute("INSERT INTO sessions BY NAME "
                           + _sessions_of_parts_sql("_session_parts"))
        connection.execute("INSERT INTO session_totals BY NAME "
                           + _totals_of_parts_sql("_session_totals_parts"))
        # the new seats, then the stored seats of a session whose id changed
        connection.execute("""
            UPDATE seats SET session_id = r.session_id FROM _session_new_rows r
            WHERE seats.hand_key = r.hand_key AND seats.player = r.player""")
        connection.execute(f"""
            UPDATE seats SET session_id = b.session_id FROM {stored_ids} b
            WHERE b.old_id <> b.session_id AND seats.session_id = b.old_id""")
        rows = connection.execute(
            "SELECT count(DISTINCT session_id) FROM _session_blocks").fetchall()
        for table in ("_session_new_seats", "_session_new", "_session_old", "_session_blocks",
                      "_session_new_rows", "_session_parts", "_session_totals_parts"):
            connection.execute(f"DROP TABLE {table}")
    finally:
        _drop_scope(connection)
    return int(rows[0][0]) if rows else 0


def refresh_sessions(
    connection: duckdb.DuckDBPyConnection, touched: Iterable[tuple[str, str | None]],
    gap_minutes: float,
) -> None:
    """The sessions after a write, in the caller's transaction: at the ``touched`` (site,
    table) pairs, those the new hands change (:func:`add_sessions`), or every table's when the
    database's stored gap is another one; the touched tables' whole sessions when no gap is
    stored yet (the first write, or a database from before the gap was kept) or the gap is not
    positive. Then ``gap_minutes`` is stored as the database's gap (``ofc ingest`` and ``ofc
    watch``). While :data:`SESSIONS_PENDING_META_KEY` is set (:func:`defer_sessions`), the
    tables of every seat still waiting for its session are touched too, and the key goes."""
    pending = store.get_meta(connection, SESSIONS_PENDING_META_KEY) is not None
    if pending:  # a run that deferred its sessions (and may have died before it caught up)
        touched = set(touched) | _waiting_tables(connection)
        connection.execute("DELETE FROM meta WHERE key = ?", [SESSIONS_PENDING_META_KEY])
    stored_gap = store.get_meta(connection, SESSION_GAP_META_KEY)
    if stored_gap is not None and float(stored_gap) != gap_minutes:
        update_sessions(connection, None, gap_minutes)
    elif touched and gap_minutes > 0 and stored_gap is not None:
        add_sessions(connection, touched, gap_minutes)
    elif touched:
        update_sessions(connection, touched, gap_minutes)
    store.set_meta(connection, SESSION_GAP_META_KEY, repr(float(gap_minutes)))


def finish_waiting_sessions(connection: duckdb.DuckDBPyConnection, gap_minutes: float) -> bool:
    """Work out the sessions of seats a run left waiting (:data:`SESSIONS_PENDING_META_KEY`
    set: it died before its end), in the caller's transaction, for a caller that may write
    nothing else (``ofc watch`` starting over files read to their end already). True when
    there were any."""
    if store.get_meta(connection, SESSIONS_PENDING_META_KEY) is None:
        return False
    refresh_sessions(connection, (), gap_minutes)
    return True


def defer_sessions(connection: duckdb.DuckDBPyConnection,
                   touched: Iterable[tuple[str, str | None]]) -> None:
    """Leave the sessions of a source's new hands (at the ``touched`` (site, table) pairs) to
    one :func:`refresh_sessions` after the last source of a run, in the caller's transaction.

    Working them out per source cost about 30 ms a file, half the time of a folder of
    one-hand files; once for the run, its new seats are merged into the stored sessions
    together (the same sessions and ids: :func:`add_sessions` takes any number of new seats).
    Until then those seats have no session (readers see the run's hands, not yet its
    sessions). :data:`SESSIONS_PENDING_META_KEY` is set in the same transaction, so should the
    run die before its end, the next :func:`refresh_sessions` (any later write) finds the
    waiting seats itself."""
    if not touched:
        return
    if store.get_meta(connection, SESSIONS_PENDING_META_KEY) is None:
        store.set_meta(connection, SESSIONS_PENDING_META_KEY, "1")


def _waiting_tables(connection: duckdb.DuckDBPyConnection) -> set[tuple[str, str | None]]:
    """The (site, table) pairs of stored seats that have a start time and no session yet."""
    rows = connection.execute(
        f"SELECT DISTINCT h.site, h.table_name FROM {SEATS_WAITING_FOR_SESSIONS}").fetchall()
    return {(site, table) for site, table in rows}


def _seat_parts_sql(rows: str) -> str:
    """One part of a session per seat of ``rows`` (session_id, player, site, table_name,
    started_at, points, foul, royalties), in the columns :func:`_sessions_of_parts_sql` sums."""
    return f"""
        SELECT session_id, player, site, table_name, started_at, started_at AS ended_at,
               1 AS hands, points, CASE WHEN foul THEN 1 ELSE 0 END AS fouls,
               coalesce(royalties, 0) AS royalties
        FROM {rows}
    """


def _sessions_of_parts_sql(parts: str) -> str:
    """``sessions`` rows from ``parts`` (seats, or stored sessions taken whole): the first
    start, the last end and the sums of each session's parts."""
    return f"""
        SELECT session_id, any_value(player) AS player, any_value(site) AS site,
               any_value(table_name) AS table_name, min(started_at) AS started_at,
               max(ended_at) AS ended_at, sum(hands) AS hands, sum(points) AS points,
               sum(fouls) AS fouls, sum(royalties) AS royalties
        FROM {parts} GROUP BY session_id
    """


def _seat_totals_parts_sql(rows: str) -> str:
    """One part of a session's totals per seat of ``rows`` (session_id, player, hand_key,
    started_at, variant, rules, player_count, points, foul), in the columns
    :func:`_totals_of_parts_sql` sums."""
    return f"""
        SELECT session_id, player, variant, rules, player_count, 1 AS hands,
               points::BIGINT AS points, points::BIGINT * points AS points_sq,
               CASE WHEN foul THEN 1 ELSE 0 END AS fouls,
               struct_pack(started_at := started_at, hand_key := hand_key) AS first
        FROM {rows}
    """


def _totals_of_parts_sql(parts: str) -> str:
    """``session_totals`` rows from ``parts`` (seats, or stored totals rows): per session and
    game the sums of its parts and the first hand (start, then key)."""
    return f"""
        SELECT session_id, player, variant, rules, player_count, hands, points, points_sq,
               fouls, first.started_at AS first_started_at, first.hand_key AS first_hand_key
        FROM (
            SELECT session_id, any_value(player) AS player, variant, rules, player_count,
                   sum(hands) AS hands, sum(points)::BIGINT AS points,
                   sum(points_sq)::BIGINT AS points_sq, sum(fouls) AS fouls,
                   min(first) AS first
            FROM {parts} GROUP BY session_id, variant, rules, player_count
        )
    """


def _session_totals_sql(rows: str) -> str:
    """``session_totals`` rows from ``rows`` (one per seat: session_id, player, hand_key,
    started_at, variant, rules, player_count, points, foul)."""
    return _totals_of_parts_sql(f"({_seat_totals_parts_sql(rows)})")


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
