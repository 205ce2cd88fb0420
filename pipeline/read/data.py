"""Data health: rejected records (by reason and one by one) and the files ingest has read."""

from __future__ import annotations

import polars as pl

from pipeline.read.source import Database, frame


def data_health(db: Database) -> pl.DataFrame:
    """Rejected records by reason (most frequent first), for the overview's data health."""
    sql = """
        SELECT reason, count(*) AS records, count(DISTINCT path) AS files
        FROM rejects GROUP BY reason ORDER BY records DESC, reason LIMIT 20
    """
    return frame(db, sql)


def ingested_files(db: Database, limit: int = 200) -> pl.DataFrame:
    """Files read by ingest runs, most recent first."""
    sql = """
        SELECT path, format, size_bytes, ingested_at, records, stored, duplicates, rejected, status
        FROM ingested_files ORDER BY ingested_at DESC LIMIT ?
    """
    return frame(db, sql, [limit])


def rejected_records(db: Database, limit: int = 500) -> pl.DataFrame:
    """Quarantined records with their reasons, most recent first."""
    sql = """
        SELECT path, line, hand_id, reason, left(raw, 400) AS raw, rejected_at
        FROM rejects ORDER BY rejected_at DESC, path, line LIMIT ?
    """
    return frame(db, sql, [limit])
