"""Each player's hands in play order, numbered, with running totals (kept with the aggregates).

The dashboard draws a player's cumulative points and rolling foul rate over the player's hands
in play order (``started_at``, undated hands first, then ``hand_key``). Numbering every hand of
the players shown takes a sort of all their results at every page view: at a million hands,
more than a tenth of a second. The writers keep the numbering in ``play_order`` instead, one row
per result: the hand's number among the player's hands, its game (variant, table size), points
and foul, and the player's points and fouls up to and including it. A page then reads only the
rows it draws; a rolling window over the mix of games (a player's progress) reads the player's
rows, not the hand tables.

Kept in the writer's transaction by :mod:`pipeline.ingest.aggregates`:

* a batch of new hands (:func:`add_rows`): for a player whose new hands all come after the
  player's last numbered hand (hands ingested in the order they were played), the new rows are
  numbered on from there, from the batch alone; for a player with a new hand among older ones,
  the player's rows from that hand on are numbered again from the stored tables;
* a hand taken out (:func:`remove_rows`): its players' rows from that hand on, again;
* a re-score or a database made before the table (:func:`rebuild`): everything.

The meta key :data:`PLAY_ORDER_META_KEY` marks a database whose ``play_order`` is kept; a reader
trusts it only then and only when it holds one row per result (:func:`pipeline.store.aggregates.play_order_ready`). Both
live in :mod:`pipeline.store.aggregates`, below the writer and the read model.
"""

from __future__ import annotations

import duckdb

from pipeline import store
from pipeline.store.aggregates import PLAY_ORDER_META_KEY, PLAY_ORDER_VERSION

__all__ = ["add_rows", "rebuild", "remove_rows"]

_BOUNDS = "_play_order_bounds"
_BASE = "_play_order_base"


def order_key(started_at: str, hand_key: str) -> str:
    """SQL: the play-order key of a row (compares like ``ORDER BY started_at NULLS FIRST,
    hand_key``; no stored time is minus infinity)."""
    return (f"struct_pack(t := coalesce({started_at}, '-infinity'::TIMESTAMP), "
            f"k := {hand_key})")


_BASE_COLUMNS = ("coalesce(max(p.hand_number), 0)::BIGINT AS base_number, "
                 "coalesce(arg_max(p.cumulative, p.hand_number), 0)::BIGINT AS base_points, "
                 "coalesce(arg_max(p.fouls, p.hand_number), 0)::BIGINT AS base_fouls")
"""Where a player's numbering goes on from, over the player's kept rows ``p`` (0 without)."""

_WINDOW = ("WINDOW w AS (PARTITION BY r.player ORDER BY h.started_at NULLS FIRST, r.hand_key "
           "ROWS UNBOUNDED PRECEDING)")


def _numbered_sql(results: str, hands: str, evaluations: str, base: str | None,
                  where: str) -> str:
    """``play_order`` rows of ``results`` (joined to ``hands`` and ``evaluations``) passing
    ``where``, numbered on from ``base`` (player, base_number, base_points, base_fouls) when
    given, from 1 otherwise."""
    if base is None:
        offsets, join = "0", ""
        points_base = fouls_base = "0"
    else:
        offsets, join = "b.base_number", f"JOIN {base} b ON b.player = r.player"
        points_base, fouls_base = "b.base_points", "b.base_fouls"
    keep = f"WHERE {where}" if where else ""
    return f"""
        SELECT r.player, ({offsets} + row_number() OVER w)::BIGINT AS hand_number, r.hand_key,
               h.started_at, h.variant, h.player_count, r.points,
               coalesce(e.foul, FALSE) AS foul,
               ({points_base} + sum(r.points) OVER w)::BIGINT AS cumulative,
               ({fouls_base} + sum(coalesce(e.foul, FALSE)::INTEGER) OVER w)::BIGINT AS fouls
        FROM {results} r {join}
        JOIN {hands} h ON h.hand_key = r.hand_key
        LEFT JOIN {evaluations} e ON e.hand_key = r.hand_key AND e.player = r.player
        {keep}
        {_WINDOW}
    """


def rebuild(connection: duckdb.DuckDBPyConnection) -> None:
    """Number every player's hands again from the stored tables (in the caller's transaction)."""
    connection.execute("DELETE FROM play_order")
    connection.execute("INSERT INTO play_order BY NAME "
                       + _numbered_sql("results", "hands", "evaluations", None, ""))
    store.set_meta(connection, PLAY_ORDER_META_KEY, PLAY_ORDER_VERSION)


def _renumber_from_bounds(connection: duckdb.DuckDBPyConnection, exclude: str = "") -> None:
    """Number again, from the stored tables, every row of each player of ``_BOUNDS`` (player,
    bound) at or after the player's bound; rows whose hand_key passes ``exclude`` (SQL on
    ``r``) are left out (hands being deleted)."""
    connection.execute(f"""
        CREATE OR REPLACE TEMP TABLE {_BASE} AS
        SELECT b.player, b.bound, {_BASE_COLUMNS}
        FROM {_BOUNDS} b
        LEFT JOIN play_order p ON p.player = b.player
             AND {order_key('p.started_at', 'p.hand_key')} < b.bound
        GROUP BY b.player, b.bound
    """)
    connection.execute(f"""
        DELETE FROM play_order WHERE EXISTS (
            SELECT 1 FROM {_BOUNDS} b WHERE b.player = play_order.player
            AND {order_key('play_order.started_at', 'play_order.hand_key')} >= b.bound)
    """)
    where = f"{order_key('h.started_at', 'r.hand_key')} >= b.bound"
    if exclude:
        where += f" AND NOT ({exclude})"
    connection.execute("INSERT INTO play_order BY NAME "
                       + _numbered_sql("results", "hands", "evaluations", _BASE, where))
    connection.execute(f"DROP TABLE {_BASE}")


def add_rows(connection: duckdb.DuckDBPyConnection, results: str, hands: str,
             evaluations: str, where: str = "") -> None:
    """Number a batch's new results (relations ``results``, ``hands``, ``evaluations`` of the
    batch, rows passing ``where``; already inserted in the stored tables), in the writer's
    transaction."""
    keep = f" WHERE {where}" if where else ""
    connection.execute(f"""
        CREATE OR REPLACE TEMP TABLE {_BOUNDS} AS
        SELECT r.player, min({order_key('h.started_at', 'r.hand_key')}) AS bound
        FROM (SELECT hand_key, player FROM {results}{keep}) r
        JOIN {hands} h ON h.hand_key = r.hand_key
        GROUP BY r.player
    """)
    try:
        # Each player's last numbered hand; a player with one at or after the player's first
        # new hand (a hand played before others already stored) is numbered again from there.
        connection.execute(f"""
            CREATE OR REPLACE TEMP TABLE _play_order_last AS
            SELECT b.player, b.bound, {_BASE_COLUMNS},
                   max({order_key('p.started_at', 'p.hand_key')}) AS last_key
            FROM {_BOUNDS} b LEFT JOIN play_order p ON p.player = b.player
            GROUP BY b.player, b.bound
        """)
        # The others (the usual case): the batch's rows, numbered on from the last stored one.
        connection.execute(f"CREATE OR REPLACE TEMP TABLE {_BASE} AS SELECT * FROM "
                           "_play_order_last WHERE last_key IS NULL OR last_key < bound")
        connection.execute("INSERT INTO play_order BY NAME "
                           + _numbered_sql(f"(SELECT * FROM {results}{keep})", hands,
                                           evaluations, _BASE, ""))
        connection.execute(f"DROP TABLE {_BASE}")
        connection.execute(f"CREATE OR REPLACE TEMP TABLE {_BOUNDS} AS SELECT player, bound "
                           "FROM _play_order_last WHERE last_key >= bound")
        if connection.sql(f"SELECT count(*) FROM {_BOUNDS}").fetchall()[0][0]:
            _renumber_from_bounds(connection)
    finally:
        connection.execute("DROP TABLE IF EXISTS _play_order_last")
        connection.execute(f"DROP TABLE IF EXISTS {_BOUNDS}")


def remove_rows(connection: duckdb.DuckDBPyConnection, keys: str) -> None:
    """Take the hands of relation ``keys`` (one column, hand_key) out of the numbering, before
    their rows are deleted (in the caller's transaction): their players' later hands are
    numbered again."""
    connection.execute(f"""
        CREATE OR REPLACE TEMP TABLE {_BOUNDS} AS
        SELECT player, min({order_key('started_at', 'hand_key')}) AS bound
        FROM play_order WHERE hand_key IN (SELECT hand_key FROM {keys}) GROUP BY player
    """)
    try:
        _renumber_from_bounds(connection, f"r.hand_key IN (SELECT hand_key FROM {keys})")
    finally:
        connection.execute(f"DROP TABLE IF EXISTS {_BOUNDS}")
