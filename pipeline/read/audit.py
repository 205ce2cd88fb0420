"""The audit: results whose source disagrees with the re-score, and why."""

from __future__ import annotations

import polars as pl

from pipeline.read.scope import (
    Filters,
    hand_scope,
    player_conditions,
    run_scoped,
)
from pipeline.read.source import Database, frame


def audit_disagreements(db: Database, filters: Filters, limit: int = 500) -> pl.DataFrame:
    """Boards where the source's reported points differ from the re-score, most recent first."""
    scope = hand_scope(filters, include_players=False)
    players, params = player_conditions(filters, "r")
    sql = f"""
        WITH found AS (
            SELECT r.hand_key, r.player, r.points, r.reported_points, r.disagreement
            FROM results r WHERE r.disagrees AND {scope.keeps('r')}{players}
        )
        SELECT h.hand_key, h.hand_id, h.site, h.started_at, f.player, f.points AS rescored,
               f.reported_points AS reported, f.disagreement,
               (SELECT count(*) FROM found) AS total
        FROM found f JOIN hands h ON h.hand_key = f.hand_key
        ORDER BY h.started_at DESC NULLS LAST, h.hand_key, f.player
        LIMIT ?
    """
    return run_scoped(db, scope, sql, [*params, limit])


def disagreement_reasons(db: Database, filters: Filters) -> pl.DataFrame:
    """Audit disagreements counted by kind (the text before the first colon: foul, royalty,
    fantasyland, points...)."""
    scope = hand_scope(filters, include_players=False)
    players, params = player_conditions(filters, "r")
    sql = f"""
        SELECT trim(split_part(coalesce(disagreement, 'points'), ':', 1)) AS disagreement,
               count(*) AS boards
        FROM results r WHERE r.disagrees AND {scope.keeps('r')}{players}
        GROUP BY ALL ORDER BY boards DESC, disagreement
    """
    return run_scoped(db, scope, sql, params)


def audit_rows(db: Database) -> pl.DataFrame:
    """Every player result whose source disagrees with the re-score, with the reason; ordered by
    site, hand id and seat order (``ofc audit``). Columns: site, hand_id, source (path:line),
    player, reported_points, points, disagreement."""
    sql = """
    SELECT h.site, h.hand_id, h.source_path || ':' || h.source_line AS source, r.player,
        r.reported_points, r.points, r.disagreement
    FROM results r
    JOIN hands h ON h.hand_key = r.hand_key
    JOIN seats s ON s.hand_key = r.hand_key AND s.player = r.player
    WHERE r.disagrees
    ORDER BY h.site, h.hand_id, s.position
    """
    return frame(db, sql)
