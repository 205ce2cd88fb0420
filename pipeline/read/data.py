"""Data health: rejected records (by reason and one by one) and the files ingest has read."""

from __future__ import annotations

import duckdb
import polars as pl

from pipeline.read.source import Database, frame, reading

_RESOLVED_COLUMNS = ("resolved_at", "resolved_by")


def _rejects(connection: duckdb.DuckDBPyConnection) -> str:
    """The rejects table as a relation with ``resolved_at`` and ``resolved_by``: a database
    written before rejects could be resolved (and opened read-only, so not migrated yet) has
    every reject open."""
    present = {name for (name,) in connection.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'rejects'"
    ).fetchall()}
    if all(column in present for column in _RESOLVED_COLUMNS):
        return "rejects"
    return ("(SELECT *, CAST(NULL AS TIMESTAMP) AS resolved_at, "
            "CAST(NULL AS VARCHAR) AS resolved_by FROM rejects)")


def data_health(db: Database) -> pl.DataFrame:
    """Open rejected records by reason (most frequent first), for the overview's data health.
    Rejects whose hand was stored later (resolved) are not counted."""
    with reading(db) as connection:
        return frame(connection, f"""
            SELECT reason, count(*) AS records, count(DISTINCT path) AS files
            FROM {_rejects(connection)} r WHERE resolved_at IS NULL
            GROUP BY reason ORDER BY records DESC, reason LIMIT 20
        """)


def ingested_files(db: Database, limit: int = 200) -> pl.DataFrame:
    """Files read by ingest runs, most recent first."""
    sql = """
        SELECT path, format, size_bytes, ingested_at, records, stored, duplicates, rejected, status
        FROM ingested_files ORDER BY ingested_at DESC LIMIT ?
    """
    return frame(db, sql, [limit])


def rejected_records(db: Database, limit: int = 500) -> pl.DataFrame:
    """Quarantined records with their reasons, open ones first, most recent first. ``status`` is
    ``open``, or ``resolved`` once a hand of the same id was stored (``resolved_by`` says where
    from: a fixed file ingested again)."""
    with reading(db) as connection:
        return frame(connection, f"""
            SELECT CASE WHEN resolved_at IS NULL THEN 'open' ELSE 'resolved' END AS status,
                   path, line, hand_id, reason, left(raw, 400) AS raw, rejected_at, resolved_by
            FROM {_rejects(connection)} r
            ORDER BY resolved_at IS NOT NULL, rejected_at DESC, path, line LIMIT ?
        """, [limit])


def reject_counts(db: Database) -> tuple[int, int]:
    """(open, resolved) rejected records."""
    with reading(db) as connection:
        open_count, resolved = connection.execute(f"""
            SELECT count(*) FILTER (WHERE resolved_at IS NULL),
                   count(*) FILTER (WHERE resolved_at IS NOT NULL)
            FROM {_rejects(connection)} r
        """).fetchall()[0]
    return int(open_count or 0), int(resolved or 0)
