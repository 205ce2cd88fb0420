"""Record: keep a live game's history from a phone, hand by hand.

Set up the players (clockwise), the variant, the rules preset and the money per point; then per
hand tap each player's board in on the card pad (:mod:`dashboard.card_pad`: a tap answers at
once, in the browser) or type it, and save. Every board shows its verdict while it is entered
(foul and why, royalties, Fantasyland next hand). Saving scores the hand and stores it through
ingestion like any file, so every page includes it.

The session is kept in the database as it goes (the ``live_sessions`` table, with the hand being
entered): a reload, or the page on another device, offers "Resume session …" with its totals.
Ending a session is explicit. A session is played in matches (the first has the session's id):
"End match" settles the match being played and starts the next; each match's settlement and the
running money of the one being played show under the totals. The last action (save, edit,
delete, the end of a match) can be undone; a deleted hand's boards come back into the fields.

All game logic is in :mod:`pipeline.live`; this page only lays it out. Player names are
untrusted: they reach the page escaped (:func:`components.md`, ``html.escape``), as plain widget
labels, or as ``textContent`` in the card pad.
"""

from __future__ import annotations

import contextlib
import functools
import html
import threading
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path

import duckdb
import streamlit as st

from dashboard import components
from dashboard.card_pad import PadNote, PadPlayer, card_pad, pad_entry
from dashboard.matches import show_live_matches
from pipeline import read
from pipeline.ingest.errors import IngestError
from pipeline.live.entry import EntryCheck, EntryRejected, check_entry, entry_rows, entry_text
from pipeline.live.session import (
    LiveError,
    LiveHand,
    LiveSession,
    board_verdicts,
    default_fantasyland_cards,
    session_mapping,
    start_session,
)
from pipeline.live.state import ActionKind, Draft, LiveState, boards_of, state_from_mapping
from pipeline.live.storage import (
    LiveStoreError,
    StaleSession,
    delete_last,
    end_session,
    finish_match,
    load_session,
    persist,
    save_entry,
    store_missing_hands,
    undo_last,
)
from pipeline.live.text import format_money, format_points, verdict_text
from pipeline.rules.cards import card_text
from pipeline.rules.game import ROW_SIZES, ROWS, Variant
from pipeline.rules.ruleset import PRESET_NAMES

# What a busy or unreadable database raises: shown as a message, never a crash. (A page script
# shows a bare string as Markdown, so no docstrings for constants here.)
DATABASE_TROUBLE = (OSError, duckdb.Error, read.source.DatabaseBusy)

STATE = "rec_state"  # the LiveState of the session being recorded
EPOCH = "rec_epoch"  # raised whenever the page (not the pad) changes the boards
PAD = "rec_pad"  # the card pad component's key
PAD_SEQ = "rec_pad_seq"  # the last pad report applied
ACTIVE_PLAYER = "rec_player"
ACTIVE_ROW = "rec_row"
NOTICE = "rec_notice"  # (kind, text) at the top: deletes, undos, resumes
SAVED_NOTICE = "rec_saved_notice"  # (kind, text) under the save button, where the tap was
ATTEMPTED = "rec_attempted"
FRESH = "rec_fresh"
CONFIRM_END = "rec_confirm_end"
SETUP_ERROR = "rec_setup_error"
NAME_QUESTIONS = "rec_setup_questions"  # {typed name: (stored name, hands)} still to answer
CONFIRMED = "rec_setup_confirmed"  # stored names the user said are the same person
STALE = "rec_stale"
SCROLL = "rec_scroll"  # raised by every action that changes the hand: the top comes into view
WRITER = "rec_writer"  # who this page view is, in the live_sessions table
LOCK = "rec_lock"

# Static CSS (no untrusted value): a narrow column, a compact header, every control >= 44 px.
PAGE_CSS = """
<style>
.st-key-rec_page { max-width: 40rem; }
[data-testid="stMainBlockContainer"]:has(.st-key-rec_page) { padding-top: 4.5rem; padding-bottom: 2rem; }
.st-key-rec_top { scroll-margin-top: 4rem; }
.st-key-rec_page h1 { font-size: 1.35rem; padding: 0; margin: 0; }
.st-key-rec_page h3 { font-size: 1.1rem; padding: 0.25rem 0 0; }
.st-key-rec_page button { min-height: 44px; }
.st-key-rec_page [data-testid="stTextInputRootElement"], .st-key-rec_page input[type="text"],
.st-key-rec_page [data-testid="stSelectbox"] [role="group"] { min-height: 44px; }
.st-key-rec_page [data-testid="stNumberInputContainer"], .st-key-rec_page input[type="number"],
.st-key-rec_page [data-testid="stNumberInput"] button { min-height: 44px; }
.st-key-rec_page [data-testid="stCheckbox"] label { min-height: 44px; align-items: center; }
.st-key-rec_page details summary { min-height: 44px; display: flex; align-items: center; }
.st-key-rec_page [data-testid="stElementToolbar"] { display: none; }
.st-key-rec_page table { width: 100%; }
</style>
"""


def board_key(index: int) -> str:
    """Session-state key of player ``index``'s board as entered (tapped or typed)."""
    return f"rec_board_{index}"


def typed_key(index: int) -> str:
    """Widget key of player ``index``'s text field (in a form: it applies on Enter)."""
    return f"rec_type_{index}"


def fantasyland_key(index: int) -> str:
    """Session-state key of player ``index``'s Fantasyland toggle."""
    return f"rec_fl_{index}"


def _database() -> Path:
    return components.database_path()


# --- the state behind the widgets ---------------------------------------------------------------


def _writer() -> str:
    """This page view's name in the live_sessions table (a new one per browser session)."""
    return st.session_state.setdefault(WRITER, uuid.uuid4().hex)


@contextlib.contextmanager
def _exclusive() -> Iterator[None]:
    """This page view's lock around changes of the stored state.

    With fast reruns, the run being interrupted may still be writing when the next one starts;
    the lock makes them take turns. This thread's read connection is closed first: a run that
    waits here while holding one would keep the other from writing (a deadlock).
    """
    components.release_connection()
    lock = st.session_state.setdefault(LOCK, threading.RLock())
    with lock:
        yield


def locked(callback: Callable[..., None]) -> Callable[..., None]:
    """Run a callback under the page view's lock (see :func:`_exclusive`)."""

    @functools.wraps(callback)
    def run(*arguments: object) -> None:
        with _exclusive():
            callback(*arguments)

    return run


def _state() -> LiveState | None:
    """The newest state of the session being recorded.

    With fast reruns Streamlit starts a new run while the one it interrupts is still finishing,
    and an interrupted run can write the database and then stop before it keeps the result. So
    the stored revision is the truth: a newer one written by this page view is taken over (its
    fields too, when hands changed); one written elsewhere stops the page with an offer to load it.
    """
    state: LiveState | None = st.session_state.get(STATE)
    if state is None or state.revision is None:
        return state
    database = _database()
    try:
        stored = read.live.live_session_revision(database, state.session.session_id)
    except DATABASE_TROUBLE:
        return state
    if stored is None or stored.revision <= state.revision:
        return state
    if stored.writer != _writer():
        st.session_state[STALE] = (f"Session {state.session.session_id} was changed on another "
                                   f"device or tab (revision {stored.revision}, this page has "
                                   f"{state.revision})")
        return state
    try:
        found = read.live.live_session_state(database, state.session.session_id)
        if found is None:
            return state
        newest = state_from_mapping(found[0], found[1])
    except (LiveError, *DATABASE_TROUBLE):
        return state
    same_hands = (session_mapping(newest.session) == session_mapping(state.session)
                  and newest.last_action == state.last_action)
    if same_hands:
        newest = newest.with_draft(state.draft)
        st.session_state[STATE] = newest
    else:
        _load_fields(newest)
        _report_taken_over(newest)
    return newest


def _report_taken_over(newest: LiveState) -> None:
    """The message of an action this page view took in a run that was interrupted before it
    could show it (a double tap under load): the hand is saved (or deleted, or the match
    ended), so the page says so as if that run had finished."""
    action = newest.last_action
    last = newest.session.last_hand
    st.session_state[SAVED_NOTICE] = None
    if action is None:
        return
    if (action.kind in (ActionKind.SAVED, ActionKind.EDITED) and last is not None
            and last.number == action.number):
        _show_saved(last, action.kind is ActionKind.EDITED)
    elif action.kind is ActionKind.DELETED:
        st.session_state[FRESH] = False
        _notice("info", _deleted_text(action.number, action.draft.cards), newest)
    elif action.kind is ActionKind.MATCH_ENDED:
        st.session_state[FRESH] = False
        _notice("success", _match_ended_text(action.number, newest.session.match_number),
                newest)


def _deleted_text(number: int, kept_cards: int) -> str:
    """``Hand 3 deleted: its boards are back in the fields, ...`` (and the cards entered before,
    kept for Undo)."""
    kept = f" The {kept_cards} cards entered before are kept for Undo." if kept_cards else ""
    return (f"Hand {number} deleted: its boards are back in the fields, to correct and save "
            f"again.{kept}")


def _match_ended_text(ended: int, next_match: int) -> str:
    """``Match 1 ended and settled; match 2 starts now.``"""
    return f"Match {ended} ended and settled; match {next_match} starts now."


def _entries(session: LiveSession) -> dict[str, str]:
    return {name: str(st.session_state.get(board_key(index)) or "")
            for index, name in enumerate(session.players)}


def _marks(session: LiveSession) -> list[str]:
    return [name for index, name in enumerate(session.players)
            if st.session_state.get(fantasyland_key(index))]


def _current_draft(state: LiveState) -> Draft:
    """The draft as the fields hold it now."""
    session = state.session
    boards = {name: text for name, text in _entries(session).items() if text.strip()}
    return Draft(boards=boards, marks=tuple(_marks(session)), editing=state.draft.editing,
                 put_aside=state.draft.put_aside)


def _hand_button(state: LiveState) -> str:
    """The button of the hand being entered (the edited hand's while editing)."""
    session = state.session
    if state.draft.editing and session.last_hand is not None:
        return session.last_hand.button
    return session.button


def _first_open(state: LiveState) -> tuple[int, int]:
    """The board and row the next tap goes to: the first board in action order with room."""
    session = state.session
    for name in session.action_order(_hand_button(state)):
        index = session.players.index(name)
        rows = entry_rows(st.session_state.get(board_key(index), ""))
        for row_index, row in enumerate(ROWS):
            if len(rows[row_index]) < ROW_SIZES[row]:
                return index, row_index
    return session.players.index(session.action_order(_hand_button(state))[0]), 0


def _load_fields(state: LiveState) -> None:
    """Show a state: its draft in the fields and on the pad, its Fantasyland marks."""
    session = state.session
    draft = state.draft
    if draft.marks is not None:
        marks = set(draft.marks)
    elif draft.editing and session.last_hand is not None:
        marks = set(session.last_hand.fantasyland)
    else:
        marks = set(session.fantasyland)
    for index, name in enumerate(session.players):
        st.session_state[board_key(index)] = draft.boards.get(name, "")
        st.session_state[typed_key(index)] = draft.boards.get(name, "")
        st.session_state[fantasyland_key(index)] = name in marks
    st.session_state[STATE] = state
    st.session_state[ACTIVE_PLAYER], st.session_state[ACTIVE_ROW] = _first_open(state)
    st.session_state[EPOCH] = int(st.session_state.get(EPOCH, 0)) + 1
    st.session_state[ATTEMPTED] = False
    st.session_state[CONFIRM_END] = False
    st.session_state[SCROLL] = int(st.session_state.get(SCROLL, 0)) + 1


def _notice(kind: str, text: str, state: LiveState) -> None:
    """A message at the top about the hand ``state`` is on: shown while that hand is the one
    being entered, gone once it is saved (a message never describes an earlier hand as if it
    were the current one)."""
    st.session_state[NOTICE] = (kind, text, _hand_number(state))


def _hand_number(state: LiveState) -> int:
    """The number of the hand being entered (the edited hand's while editing)."""
    session = state.session
    if state.draft.editing and session.last_hand is not None:
        return session.last_hand.number
    return session.hand_number


def _write(state: LiveState) -> LiveState | None:
    """Persist a state; on a newer stored copy say so and return None."""
    try:
        with read.source.database_lock():
            return persist(_database(), state, _writer())
    except StaleSession as error:
        st.session_state[STALE] = str(error)
        return None
    except DATABASE_TROUBLE as error:
        _notice("error", f"The session could not be kept in the database just now (it is "
                         f"tried again with the next change): {error}", state)
        return None


def _sync_draft() -> None:
    """Write the fields' draft to the database when it changed (the newest state, under the lock)."""
    with _exclusive():
        state = _state()
        if state is None:
            return
        draft = _current_draft(state)
        if draft == state.draft and state.revision is not None:
            return
        written = _write(state.with_draft(draft))
        if written is not None:
            st.session_state[STATE] = written


# --- callbacks (they run before the rerun, so they may set widget values) -----------------------


def _apply_pad() -> None:
    """Copy the card pad's latest report into the fields, if it is newer than the last applied.

    Called by the pad's callback and again before anything reads the fields (a save, a delete,
    each run): Streamlit may skip a component's callback when runs interrupt each other, but the
    report itself is always in the session state.
    """
    state = st.session_state.get(STATE)
    if state is None:
        return
    entry = pad_entry(PAD, int(st.session_state.get(EPOCH, 0)))
    if entry is None or entry.seq <= int(st.session_state.get(PAD_SEQ, 0)):
        return
    for index, rows in enumerate(entry.boards[: len(state.session.players)]):
        st.session_state[board_key(index)] = entry_text(rows)
        st.session_state[typed_key(index)] = entry_text(rows)
    st.session_state[ACTIVE_PLAYER] = entry.player
    st.session_state[ACTIVE_ROW] = entry.row
    st.session_state[PAD_SEQ] = entry.seq
    saved = st.session_state.get(SAVED_NOTICE)
    if saved and saved[0] == "error":
        st.session_state[SAVED_NOTICE] = None


@locked
def _pad_changed() -> None:
    """The card pad reported taps."""
    _apply_pad()


@locked
def _typed() -> None:
    """Typed boards were applied (Enter in a field): they replace the boards, the pad takes them,
    and an old "not saved" no longer applies."""
    state = _state()
    if state is None:
        return
    for index in range(len(state.session.players)):
        st.session_state[board_key(index)] = str(st.session_state.get(typed_key(index)) or "")
    st.session_state[ACTIVE_PLAYER], st.session_state[ACTIVE_ROW] = _first_open(state)
    st.session_state[EPOCH] = int(st.session_state.get(EPOCH, 0)) + 1
    saved = st.session_state.get(SAVED_NOTICE)
    if saved and saved[0] == "error":
        st.session_state[SAVED_NOTICE] = None


def _not_saved_text(check: EntryCheck) -> str:
    """``Not saved: 2 boards to complete or correct — jun (…), ivo (…).`` naming each player."""
    parts = []
    for name in check.players:
        problems = check.problems_for(name)
        if not problems:
            continue
        first = problems[0]
        reason = "no board yet" if first.kind == "missing" else first.message
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        parts.append(f"{name} ({reason}{more})")
    count = len(parts)
    return (f"Not saved: {count} board{'s' if count != 1 else ''} to complete or correct — "
            + "; ".join(parts) + ".")


@locked
def _save(number: int | None = None, editing_wanted: bool | None = None) -> None:
    """Save the hand ``number`` (the button's hand). Idempotent: a second tap that reaches the
    server after the first saved (the button then stands for the next hand, or for nothing yet)
    does nothing, so a double tap saves once and keeps its message."""
    _apply_pad()
    state = _state()
    if state is None or st.session_state.get(STALE):
        return
    session = state.session
    editing = state.draft.editing and session.last_hand is not None
    if number is not None and (number != _hand_number(state) or editing != editing_wanted):
        return  # this tap was for a hand already saved
    entries = _entries(session)
    if not _current_draft(state).cards:
        return  # nothing entered (the button is disabled then): no "not saved" for no hand
    state = state.with_draft(_current_draft(state))
    try:
        with read.source.database_lock():
            new_state, hand = save_entry(_database(), state, entries, _marks(session),
                                          _writer())
    except EntryRejected as error:
        st.session_state[ATTEMPTED] = True
        st.session_state[FRESH] = False  # the last saved hand is not the one being entered
        st.session_state[SAVED_NOTICE] = ("error", _not_saved_text(error.check))
        return
    except StaleSession as error:
        st.session_state[STALE] = str(error)
        return
    except (LiveStoreError, IngestError, *DATABASE_TROUBLE) as error:
        st.session_state[FRESH] = False
        st.session_state[SAVED_NOTICE] = ("error", f"Not saved: {error}")
        return
    _load_fields(new_state)
    _show_saved(hand, editing)


def _show_saved(hand: LiveHand, editing: bool) -> None:
    """``Hand 1 saved: mara +23, jun +12, ivo -35.`` under the save button, the result open."""
    st.session_state[FRESH] = True
    st.session_state[NOTICE] = None
    verb = "changed and re-scored" if editing else "saved"
    points = ", ".join(f"{name} {format_points(value)}" for name, value in hand.points.items())
    next_marks = ", ".join(f"{name} ({cards} cards)"
                           for name, cards in hand.fantasyland_next.items())
    fantasyland = f" Fantasyland next: {next_marks}." if next_marks else ""
    st.session_state[SAVED_NOTICE] = ("success", f"Hand {hand.number} {verb}: {points}.{fantasyland}")


@locked
def _edit_last() -> None:
    _apply_pad()
    state = _state()
    if (state is None or st.session_state.get(STALE) or state.session.last_hand is None
            or state.draft.editing):
        return
    last = state.session.last_hand
    current = _current_draft(state)
    draft = Draft(boards=boards_of(last), marks=tuple(last.fantasyland), editing=True,
                  put_aside=current.boards)
    _load_fields(state.with_draft(draft))
    st.session_state[NOTICE] = None
    st.session_state[SAVED_NOTICE] = None


@locked
def _cancel_edit() -> None:
    state = _state()
    if state is None:
        return
    _load_fields(state.with_draft(Draft(boards=dict(state.draft.put_aside))))


@locked
def _delete_last() -> None:
    _apply_pad()
    state = _state()
    if state is None or st.session_state.get(STALE) or state.session.last_hand is None:
        return
    state = state.with_draft(_current_draft(state))
    try:
        with read.source.database_lock():
            new_state, hand = delete_last(_database(), state, _writer())
    except StaleSession as error:
        st.session_state[STALE] = str(error)
        return
    except (LiveError, IngestError, *DATABASE_TROUBLE) as error:
        _notice("error", f"Not deleted: {error}", state)
        return
    _load_fields(new_state)
    st.session_state[FRESH] = False
    st.session_state[SAVED_NOTICE] = None
    _notice("info", _deleted_text(hand.number, state.draft.cards), new_state)


@locked
def _undo() -> None:
    _apply_pad()
    state = _state()
    if state is None or st.session_state.get(STALE) or state.last_action is None:
        return
    state = state.with_draft(_current_draft(state))
    try:
        with read.source.database_lock():
            new_state, message = undo_last(_database(), state, _writer())
    except StaleSession as error:
        st.session_state[STALE] = str(error)
        return
    except (LiveError, LiveStoreError, IngestError, *DATABASE_TROUBLE) as error:
        _notice("error", f"Not undone: {error}", state)
        return
    _load_fields(new_state)
    st.session_state[FRESH] = False
    st.session_state[SAVED_NOTICE] = None
    _notice("success", message, new_state)


@locked
def _end_match() -> None:
    _apply_pad()
    state = _state()
    if state is None or st.session_state.get(STALE):
        return
    ended = state.session.match_number
    try:
        with read.source.database_lock():
            new_state = finish_match(_database(), state.with_draft(_current_draft(state)),
                                     _writer())
    except StaleSession as error:
        st.session_state[STALE] = str(error)
        return
    except (LiveError, *DATABASE_TROUBLE) as error:
        _notice("error", f"The match was not ended: {error}", state)
        return
    _load_fields(new_state)
    st.session_state[FRESH] = False
    st.session_state[SAVED_NOTICE] = None
    _notice("success", _match_ended_text(ended, new_state.session.match_number), new_state)


@locked
def _ask_end() -> None:
    _apply_pad()
    state = _state()
    if state is not None and _current_draft(state).cards:
        st.session_state[CONFIRM_END] = True
        return
    _end()


def _keep_going() -> None:
    st.session_state[CONFIRM_END] = False


def _forget_page_state() -> None:
    for key in list(st.session_state.keys()):
        if (str(key).startswith("rec_") and not str(key).startswith("rec_setup")
                and key not in (EPOCH, WRITER, LOCK)):  # epochs only ever grow
            del st.session_state[key]


@locked
def _end() -> None:
    state = _state()
    if state is not None:
        try:
            with read.source.database_lock():
                end_session(_database(), state)
        except DATABASE_TROUBLE as error:
            _notice("error", f"Not ended: {error}", state)
            return
    _forget_page_state()
    st.session_state[SETUP_ERROR] = None


@locked
def _reload_stored() -> None:
    """Take the stored (newer) copy of the session after a stale write."""
    state = _state()
    st.session_state[STALE] = None
    if state is not None:
        _resume(state.session.session_id)


@locked
def _resume(session_id: str) -> None:
    try:
        state = load_session(_database(), session_id)
        with read.source.database_lock():
            store_missing_hands(_database(), state)
    except (LiveError, LiveStoreError, IngestError, *DATABASE_TROUBLE) as error:
        st.session_state[SETUP_ERROR] = f"Session {session_id} cannot be resumed: {error}"
        return
    _forget_page_state()
    _load_fields(state)
    _notice("success", f"Resumed session {session_id} at hand {state.session.hand_number}.",
            state)


def _setup_names() -> list[str]:
    return [name.strip() for name in str(st.session_state.get("rec_setup_players", "")).split(",")
            if name.strip()]


@locked
def _start() -> None:
    state = st.session_state
    names = _setup_names()
    confirmed = list(state.get(CONFIRMED) or [])
    database = _database()
    try:
        matches = read.live.players_like(database, names) if database.exists() else {}
    except DATABASE_TROUBLE:
        matches = {}
    pending = {name: match for name, match in matches.items() if match[0] not in confirmed}
    if pending:
        state[NAME_QUESTIONS] = pending
        state[SETUP_ERROR] = None
        return
    stake_text = str(state.get("rec_setup_stake") or "0").strip().replace(",", ".")
    try:
        stake = Decimal(stake_text or "0")
    except InvalidOperation:
        state[SETUP_ERROR] = f"Money per point {stake_text!r} is not a number (e.g. 0.10)."
        return
    button = state.get("rec_setup_button") or None
    try:
        session = start_session(
            names, state.get("rec_setup_variant", "pineapple"),
            state.get("rec_setup_rules", "standard"), stake,
            button=button if button in names else None,
            match_cap=int(state.get("rec_setup_match_cap") or 0),
        )
    except LiveError as error:
        state[SETUP_ERROR] = str(error)
        return
    written = _write(LiveState(session=session, confirmed=tuple(confirmed)))
    if written is None:
        state[SETUP_ERROR] = f"A session {session.session_id} is already stored: start again."
        return
    state[SETUP_ERROR] = None
    state[NAME_QUESTIONS] = None
    state[NOTICE] = None
    state[FRESH] = False
    _load_fields(written)


@locked
def _answer_name(typed: str, same: bool) -> None:
    state = st.session_state
    questions = dict(state.get(NAME_QUESTIONS) or {})
    stored, _hands = questions.pop(typed, (typed, 0))
    state[NAME_QUESTIONS] = questions
    if same:
        names = [stored if name == typed else name for name in _setup_names()]
        state["rec_setup_players"] = ", ".join(names)
        state[CONFIRMED] = [*list(state.get(CONFIRMED) or []), stored]
        if not questions:
            _start()
        return
    state[SETUP_ERROR] = (f"{typed} is not {stored}: type another name for them (for example "
                          f"“{typed} 2”), so their hands stay apart from {stored}'s.")
    state[NAME_QUESTIONS] = None


# --- layout -------------------------------------------------------------------------------------


def resume_offers() -> None:
    """The sessions still open in the database, each with its totals and a Resume button."""
    database = _database()
    if not database.exists():
        return
    try:
        sessions = read.live.open_live_sessions(database)
    except DATABASE_TROUBLE:
        return
    for number, offered in enumerate(sessions[:5]):
        totals = ", ".join(f"{name} {format_points(points)}"
                           for name, points in offered.totals.items())
        when = offered.updated_at.strftime("%Y-%m-%d %H:%M")
        with st.container(border=True, key=f"rec_offer_{number}"):
            st.markdown(f"**Session {components.md(offered.session_id)}** · "
                        f"{components.md(offered.players)}  \n"
                        f"{offered.hands} hand{'s' if offered.hands != 1 else ''}"
                        + (f" · {components.md(totals)}" if offered.hands else "")
                        + f" · last change {when} UTC")
            st.button(f"Resume session {offered.session_id}", type="primary", width="stretch",
                      on_click=_resume, args=(offered.session_id,), key=f"rec_resume_{number}")


def name_questions() -> None:
    """Ask once per session whether a name is a player already stored."""
    questions = st.session_state.get(NAME_QUESTIONS) or {}
    for number, (typed, (stored, hands)) in enumerate(questions.items()):
        with st.container(border=True, key=f"rec_same_{number}"):
            st.markdown(f"**{components.md(typed)}**: same person as **{components.md(stored)}** "
                        f"({hands:,} hand{'s' if hands != 1 else ''})?")
            with st.container(horizontal=True):
                st.button("No, another player", on_click=_answer_name, args=(typed, False),
                          key=f"rec_same_no_{number}", width="stretch")
                st.button("Yes, same person", type="primary", on_click=_answer_name,
                          args=(typed, True), key=f"rec_same_yes_{number}", width="stretch")


def setup() -> None:
    """Resume a stored session, or start one."""
    resume_offers()
    st.subheader("New live session", anchor=False)
    with st.container(key="rec_setup"):
        st.text_input("Players, clockwise, comma separated", key="rec_setup_players",
                      placeholder="mara, jun, ivo")
        names = _setup_names()
        variants = [variant.value for variant in Variant]
        st.selectbox("Variant", variants, index=variants.index("pineapple"),
                     key="rec_setup_variant")
        st.selectbox("Rules", PRESET_NAMES, index=PRESET_NAMES.index("standard"),
                     key="rec_setup_rules")
        st.text_input("Money per point", value="0.00", key="rec_setup_stake")
        st.number_input("Match cap: the most a player can lose over a match, in points (0: "
                        "none)", min_value=0, max_value=1_000_000, value=0, step=1,
                        key="rec_setup_match_cap")
        # shown from the start (the names field applies when it loses focus, not on every
        # key): until names are there, the button goes to the last player named
        last_named = "the last player named"
        st.selectbox("Button on the first hand (the player left of it acts first)",
                     names or [last_named], index=len(names) - 1 if names else 0,
                     key="rec_setup_button",
                     help="Type the players first; without a choice the last one has it.")
        name_questions()
        st.button("Start recording", type="primary", width="stretch", on_click=_start,
                  key="rec_start")
    if st.session_state.get(SETUP_ERROR):
        st.error(components.md(st.session_state[SETUP_ERROR]))
    st.caption(f"Hands are saved into {components.md(_database())}.")


def totals_table(session: LiveSession) -> str:
    """Running totals as a small HTML table (names escaped)."""
    money = session.money
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td style='text-align:right'>"
        f"{format_points(session.totals[name])}</td><td style='text-align:right'>"
        f"{html.escape(format_money(money[name]))}</td></tr>"
        for name in session.players
    )
    return ("<table class='rec-totals'><thead><tr><th>player</th><th style='text-align:right'>"
            "points</th><th style='text-align:right'>money</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def action_bar(state: LiveState) -> None:
    """The top of the hand: the message about it, then Undo (the last action), Edit and Delete
    (the last saved hand), always in reach."""
    notice = st.session_state.get(NOTICE)
    if notice and (len(notice) < 3 or notice[2] == _hand_number(state)):
        kind, text = notice[0], notice[1]
        {"success": st.success, "info": st.info}.get(kind, st.error)(components.md(text))
    action = state.last_action
    hand = state.session.last_hand
    if action is None and hand is None:
        return
    with st.container(key="rec_actions", horizontal=True):
        if action is not None:
            with st.container(key="rec_undo_bar"):
                st.button(f"Undo: {action.text.lower()}", key="rec_undo", on_click=_undo,
                          icon=":material/undo:")
        if hand is not None:
            st.button(f"Edit hand {hand.number}", on_click=_edit_last, key="rec_edit",
                      disabled=state.draft.editing)
            st.button(f"Delete hand {hand.number}", on_click=_delete_last, key="rec_delete")


def show_result(state: LiveState) -> None:
    """The last saved hand's result (its Edit and Delete are at the top: :func:`action_bar`)."""
    session = state.session
    hand = session.last_hand
    if hand is None:
        return
    fresh = bool(st.session_state.get(FRESH))
    with st.expander(f"Last saved: hand {hand.number} result", expanded=fresh):
        for player in hand.scored.players:
            name = components.md(player.name)
            played = " · played Fantasyland" if player.name in hand.fantasyland else ""
            if player.foul:
                verdict = f":red[**foul**] — {components.md(hand.foul_reasons.get(player.name, ''))}"
            else:
                verdict = "royalties " + "/".join(str(value) for value in player.royalties)
            line = f"**{name}** {format_points(player.points)} points · {verdict}{played}"
            if player.fantasyland_cards:
                verb = "stays in" if player.name in hand.fantasyland else "enters"
                line += f" · **{verb} Fantasyland** ({player.fantasyland_cards} cards)"
            st.markdown(line)
            components.show_html(components.board_html(
                {row.value: [card_text(card) for card in hand.boards[player.name].row(row)]
                 for row in ROWS}
            ))
        pairs = [
            f"{components.md(pair.first)} vs {components.md(pair.second)}: "
            f"{format_points(pair.settled)}"
            for pair in hand.scored.pairs
        ]
        st.caption("Pairs (first player's view): " + " · ".join(pairs))


def totals_line(session: LiveSession) -> str:
    """The running totals in one line for the top of the pad (money too when a point has one)."""
    if not session.hands:
        return ""
    money = session.money
    parts = []
    for name in session.players:
        part = f"{name} {format_points(session.totals[name])}"
        if session.stake:
            part += f" ({format_money(money[name])})"
        parts.append(part)
    return f"After hand {session.hands[-1].number}: " + " · ".join(parts)


def button_note(state: LiveState, button: str) -> str:
    """Who has the button, and why it did not move when a Fantasyland hand kept it."""
    session = state.session
    last = session.last_hand
    if state.draft.editing or last is None or last.button != button or len(session.players) < 2:
        return ""
    if last.played_fantasyland:
        return (f" · the button stays with {button}: hand {last.number} was played with "
                "Fantasyland, and a Fantasyland hand does not move it")
    return ""


def notes_for(state: LiveState, check: EntryCheck) -> list[PadNote]:
    """The line under each board: its problems, what is left, or its verdict (foul and why,
    royalties, Fantasyland next hand) as soon as it is complete."""
    session = state.session
    marks = _marks(session)
    verdicts = board_verdicts(session, check, marks)
    attempted = bool(st.session_state.get(ATTEMPTED))
    notes = []
    for index, name in enumerate(session.players):
        rows = entry_rows(st.session_state.get(board_key(index), ""))
        errors, short = [], []
        for problem in check.problems_for(name):
            if problem.kind == "missing":
                continue
            is_short = (problem.kind == "size" and problem.row is not None
                        and len(rows[ROWS.index(problem.row)]) < ROW_SIZES[problem.row])
            if is_short and not attempted:
                missing = ROW_SIZES[problem.row] - len(rows[ROWS.index(problem.row)])
                short.append(f"{problem.row.value} {missing} more")
            else:
                errors.append(problem.message)
        if errors:
            notes.append(PadNote("error", " · ".join(errors)))
        elif name in verdicts:
            verdict = verdicts[name]
            notes.append(PadNote("foul" if verdict.foul else "ok",
                                 verdict_text(verdict, name in marks)))
        elif short:
            notes.append(PadNote("pending", "To go: " + ", ".join(short)))
        elif attempted:
            notes.append(PadNote("error", "No board entered yet."))
        else:
            notes.append(PadNote("missing", "No cards yet."))
    return notes


def pad(state: LiveState, notes: list[PadNote], button: str) -> None:
    """The card pad for the hand being entered."""
    session = state.session
    players = []
    marks = set(_marks(session))
    for name in session.players:
        badges = []
        if name == button:
            badges.append("BTN")
        if name in marks:
            badges.append("FL")
        players.append(PadPlayer(name, " ".join(badges)))
    boards = [entry_rows(st.session_state.get(board_key(index), ""))
              for index in range(len(session.players))]
    order = [session.players.index(name) for name in session.action_order(button)]
    with st.container(key="rec_pad_box"):
        card_pad(PAD, players, boards, epoch=int(st.session_state.get(EPOCH, 0)),
                 seq=int(st.session_state.get(PAD_SEQ, 0)), order=order,
                 player=int(st.session_state.get(ACTIVE_PLAYER) or 0),
                 row=int(st.session_state.get(ACTIVE_ROW) or 0), notes=notes,
                 summary=totals_line(session),
                 draft=f"{session.session_id}:{_hand_number(state)}"
                       f"{':edit' if state.draft.editing else ''}",
                 scroll=int(st.session_state.get(SCROLL, 0)), scroll_to=".st-key-rec_top",
                 on_change=_pad_changed)


def fantasyland_toggles(state: LiveState) -> None:
    """Fantasyland this hand: shown for the pre-marked players, the others behind "More"."""
    session = state.session
    if state.draft.editing and session.last_hand is not None:
        expected = dict(session.last_hand.fantasyland)
    else:
        expected = dict(session.fantasyland)
    default_cards = default_fantasyland_cards(session.variant, session.rules)

    def toggle(index: int) -> None:
        name = session.players[index]
        cards = expected.get(name) or default_cards
        st.toggle(f"{name} plays Fantasyland ({cards} cards)", key=fantasyland_key(index))

    others = [index for index, name in enumerate(session.players) if name not in expected]
    for index, name in enumerate(session.players):
        if name in expected:
            toggle(index)
    if others:
        with st.expander("More: Fantasyland for another player", key="rec_more"):
            for index in others:
                toggle(index)


def typed_fields(state: LiveState, check: EntryCheck, notes: list[PadNote], button: str) -> None:
    """One text field per player (13 cards in order, or rows with "/"), with its note."""
    session = state.session
    with st.form("rec_typed", border=False, enter_to_submit=True):
        st.caption("Or type the boards: 13 cards in order (top 3, middle 5, bottom 5), with or "
                   "without spaces, or rows separated by “/”. Enter applies them.")
        for index, name in enumerate(session.players):
            label = f"**{components.md(name)}**" + (" · button" if name == button else "")
            st.text_input(label, key=typed_key(index),
                          placeholder="Qs Qh 5d / Kc Kd 4h 3s 2c / …")
            note = notes[index]
            if note.kind in ("error", "foul"):
                st.error(components.md(note.text), icon="✖")
            elif note.kind != "missing":
                st.caption(components.md(note.text))
        st.form_submit_button("Apply typed boards", on_click=_typed, key="rec_apply_typed",
                              width="stretch")


def recording(state: LiveState) -> None:
    """The page while a session runs."""
    session = state.session
    editing = state.draft.editing and session.last_hand is not None
    _apply_pad()
    if st.session_state.get(STALE):
        st.error(components.md(st.session_state[STALE]) + " — your last change was not kept.")
        st.button("Load the newer copy", type="primary", on_click=_reload_stored,
                  key="rec_reload")
        return
    button = _hand_button(state)
    number = _hand_number(state)
    first = session.action_order(button)[0]
    title = f"Editing hand {number}" if editing else f"Hand {number}"
    stake = f" · {session.stake} per point" if session.stake else ""
    with st.container(key="rec_top"):
        st.subheader(title, anchor=False)
        st.caption(f"Button {components.md(button)} · {components.md(first)} acts first"
                   + components.md(button_note(state, button)))
        action_bar(state)
    check = check_entry(session, _entries(session))
    notes = notes_for(state, check)
    pad(state, notes, button)
    label = f"Save changes to hand {number}" if editing else f"Save hand {number}"
    entered = _current_draft(state).cards
    with st.container(key="rec_save", horizontal=True):
        if editing:
            st.button("Cancel the edit", on_click=_cancel_edit, key="rec_cancel_edit",
                      width="stretch")
        st.button(label, type="primary", width="stretch", on_click=_save, key="rec_save_button",
                  args=(number, editing), disabled=not entered)
    saved = st.session_state.get(SAVED_NOTICE)
    if saved:
        kind, text = saved
        (st.success if kind == "success" else st.error)(components.md(text))
    fantasyland_toggles(state)
    show_result(state)
    if session.hands:
        components.show_html(totals_table(session))
        show_live_matches(session)
    typed_fields(state, check, notes, button)
    st.divider()
    if st.session_state.get(CONFIRM_END):
        cards = _current_draft(state).cards
        st.warning(f"Hand {number} has {cards} card{'s' if cards != 1 else ''} entered and not "
                   "saved: ending the session loses them.")
        with st.container(horizontal=True):
            st.button("End and lose them", on_click=_end, key="rec_end_yes", width="stretch")
            st.button("Keep recording", type="primary", on_click=_keep_going, key="rec_end_no",
                      width="stretch")
    else:
        with st.container(horizontal=True):
            st.button(f"End match {session.match_number}", on_click=_end_match,
                      key="rec_end_match", disabled=not session.match_hands or editing,
                      help="Settle this match (the match cap, money) and start the next one")
            st.button("End this session", on_click=_ask_end, key="rec_end")
    st.caption(f"Session {components.md(session.session_id)} · "
               f"{components.md(session.variant.value)} · rules {components.md(session.rules.name)}"
               f"{stake}. Saved hands stay in the database; until the session is ended, a reload "
               "or another device can resume it.")
    _sync_draft()


def main() -> None:
    """Draw the Record page."""
    st.html(PAGE_CSS)
    with st.container(key="rec_page"):
        with _exclusive():
            state = _state()
        if state is None:
            st.title("Record", anchor=False)
            setup()
        else:
            recording(state)


main()
