"""Taking a stored hand back out of the database (for correcting a hand entered live).

A correction is a delete followed by an ingest of the corrected record
(:func:`pipeline.ingest.driver.ingest_mappings`).
"""

from __future__ import annotations

import contextlib
import os

import duckdb

from pipeline import store
from pipeline.ingest.aggregates import remove_hands
from pipeline.ingest.sessions import (
    DEFAULT_SESSION_GAP_MINUTES,
    SESSION_GAP_META_KEY,
    update_sessions,
)
from pipeline.ingest.writer import Writer

__all__ = ["delete_hand"]


def delete_hand(database: str | os.PathLike[str], site: str, hand_id: str) -> bool:
    """Remove one stored hand (every hand-data table, its decision grades and its part of the
    aggregates) and recompute its table's sessions.

    For taking back or correcting a hand entered live: delete it, then ingest the corrected
    record. One transaction. Returns False when no such hand is stored.
    """
    key = store.hand_key(site, hand_id)
    connection = Writer(database).connect()
    try:
        connection.execute("BEGIN TRANSACTION")
        rows = connection.execute(
            "SELECT site, table_name FROM hands WHERE hand_key = ?", [key]
        ).fetchall()
        row = rows[0] if rows else None
        if row is None:
            connection.execute("ROLLBACK")
            return False
        remove_hands(connection, [key])
        for name in (*store.HAND_DATA_TABLES, *store.GRADE_TABLES):
            if name != "sessions":
                connection.execute(f"DELETE FROM {name} WHERE hand_key = ?", [key])
        gap = store.get_meta(connection, SESSION_GAP_META_KEY)
        update_sessions(connection, [(row[0], row[1])],
                        float(gap) if gap is not None else DEFAULT_SESSION_GAP_MINUTES)
        connection.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            connection.execute("ROLLBACK")
        raise
    finally:
        connection.close()
    return True
