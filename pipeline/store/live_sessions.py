"""The ``live_sessions`` table: live sessions being recorded, kept so that they can be resumed.

One row per session (schemas/database.md), rewritten after every change by
:mod:`pipeline.live.storage`. Each write carries the revision it was based on: a device holding
an older copy of the session is refused (:class:`StaleSession`) instead of overwriting newer
hands. The hands themselves are stored like any other hand (:mod:`pipeline.ingest`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

__all__ = ["LiveSessionRow", "StaleSession", "end_live_session", "write_live_session"]


class StaleSession(RuntimeError):
    """The stored session is newer than the copy being written (changed on another device)."""

    def __init__(self, session_id: str, stored: int, expected: int | None,
                 writer: str | None = None) -> None:
        super().__init__(
            f"session {session_id} was changed elsewhere (revision {stored}, this copy "
            f"{expected if expected is not None else 'new'})"
        )
        self.session_id = session_id
        self.stored = stored
        self.writer = writer


@dataclass(frozen=True, slots=True)
class LiveSessionRow:
    """One row of ``live_sessions`` as written (``revision`` is assigned by the write)."""

    session_id: str
    players: str
    started_at: datetime
    updated_at: datetime
    hands: int
    totals: dict[str, int]
    state: dict[str, Any]


def write_live_session(
    connection: duckdb.DuckDBPyConnection, row: LiveSessionRow, expected_revision: int | None,
    writer: str = "",
) -> int:
    """Insert or update a session's row; returns its new revision.

    ``expected_revision`` is the revision this copy was read at (None for a new session). When
    the stored row has another revision, nothing is written and :class:`StaleSession` is raised
    (saying who wrote the stored one). ``writer`` names who writes (a page view, a terminal).
    An ended session is reopened by a write.
    """
    connection.execute("BEGIN TRANSACTION")
    try:
        stored = connection.execute(
            "SELECT revision, writer FROM live_sessions WHERE session_id = ?", [row.session_id]
        ).fetchall()
        current = stored[0][0] if stored else None
        if current != expected_revision:
            raise StaleSession(row.session_id, current or 0, expected_revision,
                               stored[0][1] if stored else None)
        revision = (current or 0) + 1
        values = [row.players, row.started_at, row.updated_at, row.hands,
                  json.dumps(row.totals), revision, writer, json.dumps(row.state)]
        if current is None:
            connection.execute(
                "INSERT INTO live_sessions (session_id, players, started_at, updated_at, hands, "
                "totals, revision, writer, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [row.session_id, *values],
            )
        else:
            connection.execute(
                "UPDATE live_sessions SET players = ?, started_at = ?, updated_at = ?, "
                "hands = ?, totals = ?, revision = ?, writer = ?, state = ?, ended_at = NULL "
                "WHERE session_id = ?",
                [*values, row.session_id],
            )
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    return revision


def end_live_session(
    connection: duckdb.DuckDBPyConnection, session_id: str, ended_at: datetime,
) -> bool:
    """Mark a session ended (no longer offered for resume); False when it is not stored."""
    rows = connection.execute(
        "UPDATE live_sessions SET ended_at = ?, revision = revision + 1 "
        "WHERE session_id = ? RETURNING session_id",
        [ended_at, session_id],
    ).fetchall()
    return bool(rows)
