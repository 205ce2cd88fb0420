"""Read-side summaries the command line prints: per-player totals and the audit list.

Plain SQL over the tables of :mod:`pipeline.store` (schemas/database.md), one function per
question; each takes an open (read-only is enough) connection and returns plain rows.
"""

from __future__ import annotations

from typing import Any

import duckdb

PLAYER_COLUMNS: tuple[str, ...] = (
    "player", "hands", "points", "points_per_hand", "fouls", "foul_rate", "royalties",
    "fantasyland_entries", "fantasyland_hands", "scoops",
)
"""Columns of :func:`player_stats`, in order."""

AUDIT_COLUMNS: tuple[str, ...] = (
    "site", "hand_id", "source", "player", "reported_points", "points", "disagreement",
)
"""Columns of :func:`audit_rows`, in order."""


def _rows(connection: duckdb.DuckDBPyConnection, sql: str, columns: tuple[str, ...]) -> list[dict[str, Any]]:
    return [dict(zip(columns, row, strict=True)) for row in connection.execute(sql).fetchall()]


def player_stats(connection: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """One row per player: hands, re-scored points (total and per hand), fouls and foul rate,
    royalties collected, Fantasyland entries (hands outside Fantasyland that earned it),
    Fantasyland hands played, and scoops won; best total first."""
    sql = """
    WITH scoops AS (
        SELECT player, count(*) FILTER (WHERE scoop > 0) AS scoops FROM matchups GROUP BY player
    )
    SELECT s.player,
        count(*) AS hands,
        coalesce(sum(r.points), 0) AS points,
        round(coalesce(sum(r.points), 0) / count(*), 3) AS points_per_hand,
        count(*) FILTER (WHERE e.foul) AS fouls,
        round(count(*) FILTER (WHERE e.foul) / count(*), 4) AS foul_rate,
        coalesce(sum(e.royalties), 0) AS royalties,
        count(*) FILTER (WHERE e.fantasyland_next AND NOT s.fantasyland) AS fantasyland_entries,
        count(*) FILTER (WHERE s.fantasyland) AS fantasyland_hands,
        coalesce(any_value(sc.scoops), 0) AS scoops
    FROM seats s
    LEFT JOIN results r ON r.hand_key = s.hand_key AND r.player = s.player
    LEFT JOIN evaluations e ON e.hand_key = s.hand_key AND e.player = s.player
    LEFT JOIN scoops sc ON sc.player = s.player
    GROUP BY s.player
    ORDER BY points DESC, s.player
    """
    return _rows(connection, sql, PLAYER_COLUMNS)


def audit_rows(connection: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every player result whose source disagrees with the re-score, with the reason;
    ordered by site, hand id and seat order."""
    sql = """
    SELECT h.site, h.hand_id, h.source_path || ':' || h.source_line AS source, r.player,
        r.reported_points, r.points, r.disagreement
    FROM results r
    JOIN hands h ON h.hand_key = r.hand_key
    JOIN seats s ON s.hand_key = r.hand_key AND s.player = r.player
    WHERE r.disagrees
    ORDER BY h.site, h.hand_id, s.position
    """
    return _rows(connection, sql, AUDIT_COLUMNS)
