"""Saving, replacing and deleting live hands in the database, always through :mod:`pipeline.ingest.driver`;
keeping the session itself in the ``live_sessions`` table so that it can be resumed.

A live hand is stored exactly like an ingested file's hand (the same tables and keys); the
source is named ``live:{table}``. The steps a front end takes on a :class:`~pipeline.live.state.LiveState`
are here, each writing the hands and then the session's row:
:func:`save_entry` (a new hand, or the edit of the last one), :func:`delete_last`,
:func:`undo_last` (of a save, an edit, a delete or the end of a match), :func:`finish_match` (the
match ends, the next begins), :func:`persist` (the draft hand after a change), :func:`resume` and
:func:`end_session`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from pipeline import read, store
from pipeline.ingest.delete import delete_hand
from pipeline.ingest.driver import ingest_mappings
from pipeline.live.entry import BoardInput
from pipeline.live.session import (
    LIVE_SITE,
    LiveError,
    LiveHand,
    delete_last_hand,
    edit_last_hand,
    end_match,
    record_hand,
    reopen_match,
    replace_last_hand,
    restore_last_hand,
)
from pipeline.live.state import (
    ActionKind,
    Draft,
    LastAction,
    LiveState,
    boards_of,
    state_from_mapping,
    state_mapping,
)
from pipeline.rules.ruleset import RuleSet
from pipeline.store.live_sessions import (
    LiveSessionRow,
    StaleSession,
    end_live_session,
    write_live_session,
)

__all__ = [
    "LiveStoreError",
    "StaleSession",
    "delete_last",
    "end_session",
    "finish_match",
    "load_session",
    "persist",
    "remove_hand",
    "replace_hand",
    "resume",
    "save_entry",
    "store_hand",
    "store_missing_hands",
    "stored_hand_ids",
    "undo_last",
]


class LiveStoreError(RuntimeError):
    """A hand the database did not take; the message says why."""


def _source_name(hand: LiveHand) -> str:
    return f"live:{hand.record['table']}"


def store_hand(database: str | Path, hand: LiveHand, rules: RuleSet) -> None:
    """Write a saved hand to the database through :func:`pipeline.ingest.driver.ingest_mappings`.

    Storing the same hand twice is harmless (a duplicate); a different hand under the same id
    raises :class:`LiveStoreError` (use :func:`replace_hand` for an edit).
    """
    summary = ingest_mappings([hand.record], database, _source_name(hand), rules=rules)
    if summary.stored + summary.duplicates != 1:
        reasons = "; ".join(summary.first_reasons) or "not stored"
        raise LiveStoreError(f"hand {hand.hand_id} was not saved: {reasons}")


def remove_hand(database: str | Path, hand: LiveHand) -> bool:
    """Delete a saved hand from the database; False when it was not stored."""
    return delete_hand(database, LIVE_SITE, hand.hand_id)


def replace_hand(database: str | Path, hand: LiveHand, rules: RuleSet) -> None:
    """Store an edited hand in place of the stored one with the same id (delete, then ingest)."""
    remove_hand(database, hand)
    store_hand(database, hand, rules)


def stored_hand_ids(database: str | Path, session_id: str) -> list[str]:
    """Ids of the hands of a live session already in the database (none without a database).

    Lets a new session refuse an id that would collide with hands saved earlier.
    """
    path = Path(database)
    if not path.exists():
        return []
    with store.open_database(path, read_only=True) as connection:
        try:
            rows = connection.execute(
                "SELECT hand_id FROM hands WHERE site = ? AND starts_with(hand_id, ?) "
                "ORDER BY hand_id",
                [LIVE_SITE, f"{session_id}-"],
            ).fetchall()
        except duckdb.CatalogException:
            return []
    return [row[0] for row in rows]


# --- the session's row in live_sessions -------------------------------------------------------


def _utc_naive(moment: datetime) -> datetime:
    """A time in UTC without a zone (how the database keeps times)."""
    return (moment if moment.tzinfo is None else moment.astimezone(UTC)).replace(tzinfo=None)


def persist(database: str | Path, state: LiveState, writer: str = "") -> LiveState:
    """Write the session's row (session, draft, last action); returns the state at its new revision.

    Raises :class:`StaleSession` when the stored row changed since this copy was read (another
    device recorded meanwhile, or a write of the same ``writer`` whose result was not kept):
    nothing is written.
    """
    session = state.session
    now = _utc_naive(session.clock())
    started_at = (_utc_naive(datetime.fromisoformat(session.hands[0].started_at.replace("Z", "+00:00")))
                  if session.hands else now)
    row = LiveSessionRow(
        session_id=session.session_id, players=", ".join(session.players),
        started_at=started_at, updated_at=now, hands=len(session.hands),
        totals=session.totals, state=state_mapping(state),
    )
    with store.open_database(database) as connection:
        revision = write_live_session(connection, row, state.revision, writer)
    return replace(state, revision=revision)


def load_session(
    database: str | Path, session_id: str, rules: RuleSet | str | None = None,
) -> LiveState:
    """Read a stored session (re-scoring its hands); raises :class:`LiveError` when it cannot be.

    Only reads: a page holding the dashboard's write lock must not call it.
    """
    path = Path(database)
    found = read.live.live_session_state(path, session_id) if path.exists() else None
    if found is None:
        raise LiveError(f"no live session {session_id!r} in {path}")
    mapping, revision, _ended = found
    return state_from_mapping(mapping, revision, rules=rules)


def store_missing_hands(database: str | Path, state: LiveState) -> int:
    """Store again the session's hands missing from the hand tables (a write cut short); returns
    how many were stored."""
    stored = set(stored_hand_ids(database, state.session.session_id))
    missing = [hand for hand in state.session.hands if hand.hand_id not in stored]
    for hand in missing:
        store_hand(database, hand, state.session.rules)
    return len(missing)


def resume(database: str | Path, session_id: str, rules: RuleSet | str | None = None) -> LiveState:
    """Load a stored session (:func:`load_session`) and store any of its hands that are missing."""
    state = load_session(database, session_id, rules)
    store_missing_hands(database, state)
    return state


def end_session(database: str | Path, state: LiveState) -> None:
    """Mark the session ended: it is no longer offered for resume (its hands stay)."""
    with store.open_database(database) as connection:
        end_live_session(connection, state.session.session_id, _utc_naive(state.session.clock()))


# --- steps on a live state ----------------------------------------------------------------------


def save_entry(
    database: str | Path, state: LiveState, entries: Mapping[str, BoardInput],
    fantasyland: Mapping[str, int] | Collection[str] | None = None, writer: str = "",
) -> tuple[LiveState, LiveHand]:
    """Save the hand being entered (or, while editing, the new version of the last hand).

    Raises :class:`~pipeline.live.entry.EntryRejected` when a board is missing or wrong and
    :class:`LiveStoreError` when the database refuses the hand; the state is then unchanged.
    On success the fields are emptied (after an edit: the new hand's boards put aside come
    back), the action can be undone, and the session's row is written.
    """
    session = state.session
    editing = state.draft.editing and session.last_hand is not None
    before = replace(state.draft, boards={name: str(value or "") for name, value in entries.items()})
    if editing:
        earlier = session.last_hand
        new_session, hand = edit_last_hand(session, entries, fantasyland)
        replace_hand(database, hand, new_session.rules)
        action = LastAction(ActionKind.EDITED, hand.number, earlier, before)
        draft = Draft(boards=dict(state.draft.put_aside))
    else:
        new_session, hand = record_hand(session, entries, fantasyland)
        store_hand(database, hand, new_session.rules)
        action = LastAction(ActionKind.SAVED, hand.number, None, before)
        draft = Draft()
    new_state = replace(state, session=new_session, draft=draft, last_action=action)
    return persist(database, new_state, writer), hand


def delete_last(
    database: str | Path, state: LiveState, writer: str = "",
) -> tuple[LiveState, LiveHand]:
    """Delete the last saved hand; its boards come back into the fields (to correct and save
    again), and the delete can be undone (the draft that was there comes back with the undo)."""
    session = state.session
    if session.last_hand is None:
        raise LiveError("no hand to delete yet")
    new_session, hand = delete_last_hand(session)
    remove_hand(database, hand)
    action = LastAction(ActionKind.DELETED, hand.number, hand, state.draft)
    draft = Draft(boards=boards_of(hand), marks=tuple(hand.fantasyland))
    new_state = replace(state, session=new_session, draft=draft, last_action=action)
    return persist(database, new_state, writer), hand


def finish_match(database: str | Path, state: LiveState, writer: str = "") -> LiveState:
    """End the match being played and start the next (:func:`pipeline.live.session.end_match`):
    its hands are stored already, so only the session's row changes. Can be undone while the
    next match has no hand. Raises :class:`LiveError` when the match has no hand yet."""
    session = state.session
    new_session = end_match(session)
    action = LastAction(ActionKind.MATCH_ENDED, session.match_number, None, state.draft)
    return persist(database, replace(state, session=new_session, last_action=action), writer)


def undo_last(database: str | Path, state: LiveState, writer: str = "") -> tuple[LiveState, str]:
    """Undo the last action; returns the new state and what was done (``Hand 3 is back``).

    A save is undone by deleting the hand (its boards go back into the fields), an edit by
    storing the earlier version again, a delete by storing the hand again (and the fields as
    they were), the end of a match by going on with it. Only the last action can be undone,
    once.
    """
    action = state.last_action
    session = state.session
    if action is None:
        raise LiveError("nothing to undo")
    if action.kind is ActionKind.MATCH_ENDED:
        new_session = reopen_match(session)
        new_state = replace(state, session=new_session, last_action=None)
        return (persist(database, new_state, writer),
                f"Match {new_session.match_number} goes on: it is not ended.")
    if action.kind is ActionKind.SAVED:
        last = session.last_hand
        if last is None or last.number != action.number:
            raise LiveError(f"hand {action.number} is no longer the last hand")
        new_session, hand = delete_last_hand(session)
        remove_hand(database, hand)
        draft = Draft(boards=boards_of(hand), marks=tuple(hand.fantasyland))
        message = f"Hand {hand.number} is no longer saved: its boards are back in the fields."
    elif action.kind is ActionKind.EDITED:
        if action.hand is None:
            raise LiveError("the earlier version of the hand is not known")
        new_session = replace_last_hand(session, action.hand)
        replace_hand(database, action.hand, new_session.rules)
        draft = state.draft
        message = f"Hand {action.number} is back as it was before the edit."
    else:
        if action.hand is None:
            raise LiveError("the deleted hand is not known")
        new_session = restore_last_hand(session, action.hand)
        store_hand(database, action.hand, new_session.rules)
        draft = action.draft
        message = f"Hand {action.number} is back."
    new_state = replace(state, session=new_session, draft=draft, last_action=None)
    return persist(database, new_state, writer), message
