"""Live sessions and player names, for the Record page and ``ofc record``.

* :func:`open_live_sessions` — the sessions being recorded and not ended (offered for resume);
* :func:`live_session_state` — one session's stored state, with its revision;
* :func:`players_like` — stored players whose name matches a new one (ignoring case), with
  their hand counts, so a new name can be asked about ("same person as ana (793 hands)?");
* :func:`live_match_stakes` — the money per point each recorded match was played for (the
  session's own stake, which may differ from its rules').

A database without the ``live_sessions`` table (older, or a lake) has no open session.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import duckdb

from pipeline.read.source import Database, reading

__all__ = [
    "LIVE_SITE",
    "OpenSession",
    "StoredRevision",
    "live_session_revision",
    "live_match_stakes",
    "live_session_state",
    "open_live_sessions",
    "players_like",
]


LIVE_SITE = "live"
"""The site of recorded hands (:data:`pipeline.live.session.LIVE_SITE`, written out here: the
read model does not import the live recorder; a test checks they agree)."""


def live_match_stakes(db: Database) -> dict[tuple[str, str], Decimal]:
    """(site, match id) → the money per point of every match recorded live: its session's
    stake (set up at the table; the rules' own stake is only its default). Each session's
    matches are those its kept hands name (the first match has the session's id, the next
    ``{session_id}-m{number}``), and the match being played."""
    with reading(db) as connection:
        try:
            rows = connection.execute("SELECT session_id, state FROM live_sessions").fetchall()
        except duckdb.CatalogException:
            return {}
    stakes: dict[tuple[str, str], Decimal] = {}
    for session_id, state in rows:
        try:
            session = json.loads(state)["session"]
            stake = Decimal(str(session["stake"]))
            numbers = {int(hand.get("match", 1)) for hand in session.get("hands") or ()}
            numbers.add(int(session.get("match", 1)))
        except (ValueError, TypeError, KeyError, ArithmeticError):
            continue  # an unreadable kept session: its matches settle at their rules' stake
        if not stake.is_finite() or stake < 0:
            continue
        for number in numbers:
            match_id = session_id if number == 1 else f"{session_id}-m{number}"
            stakes[(LIVE_SITE, match_id)] = stake
    return stakes


@dataclass(frozen=True, slots=True)
class OpenSession:
    """A live session not ended: who plays, how far it is, the running totals."""

    session_id: str
    players: str
    started_at: datetime
    updated_at: datetime
    hands: int
    totals: dict[str, int]
    revision: int


def open_live_sessions(db: Database) -> tuple[OpenSession, ...]:
    """Live sessions not ended, the most recently changed first."""
    with reading(db) as connection:
        try:
            rows = connection.execute(
                "SELECT session_id, players, started_at, updated_at, hands, totals, revision "
                "FROM live_sessions WHERE ended_at IS NULL ORDER BY updated_at DESC, session_id"
            ).fetchall()
        except duckdb.CatalogException:
            return ()
    return tuple(
        OpenSession(session_id, players, started, updated, int(hands),
                    {str(name): int(points) for name, points in json.loads(totals).items()},
                    int(revision))
        for session_id, players, started, updated, hands, totals, revision in rows
    )


@dataclass(frozen=True, slots=True)
class StoredRevision:
    """Where a stored session stands: its revision, who wrote it, whether it was ended."""

    revision: int
    writer: str
    ended: bool


def _stored_session(db: Database, session_id: str, first: str) -> tuple[Any, int, bool] | None:
    """(``first`` column, revision, ended) of a stored session; None when it is not stored (or
    the database predates live sessions)."""
    with reading(db) as connection:
        try:
            rows = connection.execute(
                f"SELECT {first}, revision, ended_at IS NOT NULL FROM live_sessions "
                "WHERE session_id = ?", [session_id]
            ).fetchall()
        except duckdb.CatalogException:
            return None
    if not rows:
        return None
    value, revision, ended = rows[0]
    return value, int(revision), bool(ended)


def live_session_revision(db: Database, session_id: str) -> StoredRevision | None:
    """A stored session's revision and writer (cheap: the state is not read); None if absent."""
    stored = _stored_session(db, session_id, "coalesce(writer, '')")
    if stored is None:
        return None
    writer, revision, ended = stored
    return StoredRevision(revision, str(writer), ended)


def live_session_state(db: Database, session_id: str) -> tuple[dict[str, Any], int, bool] | None:
    """A session's stored state, its revision and whether it was ended; None when not stored."""
    stored = _stored_session(db, session_id, "state")
    if stored is None:
        return None
    state, revision, ended = stored
    return json.loads(state), revision, ended


def _key(name: str) -> str:
    return unicodedata.normalize("NFC", name).strip().casefold()


def players_like(db: Database, names: Iterable[str]) -> dict[str, tuple[str, int]]:
    """For each name, the stored player it matches ignoring case (``Ana`` -> ``ana``), with the
    number of hands stored for them; names without a match are left out."""
    wanted = {_key(name): name for name in names if name.strip()}
    if not wanted:
        return {}
    with reading(db) as connection:
        try:
            rows = connection.execute(
                "SELECT player, count(*) AS hands FROM seats "
                "WHERE lower(player) IN (SELECT unnest(?::VARCHAR[])) "
                "GROUP BY player ORDER BY hands DESC, player",
                [sorted({name.strip().lower() for name in wanted.values()})],
            ).fetchall()
        except duckdb.CatalogException:
            return {}
    found: dict[str, tuple[str, int]] = {}
    for player, hands in rows:
        name = wanted.get(_key(player))
        if name is not None and name not in found:
            found[name] = (player, int(hands))
    return found
