"""Record: keep a live game's history from a phone, hand by hand.

Set up the players (clockwise), the variant, the rules preset and the money per point; then per
hand type each player's board or tap it in on the 52-card picker (used cards are greyed out),
mark Fantasyland, and save. The hand is checked as it is entered (messages under each player's
field), scored at once and saved through ingestion like any file, so every page includes it.
The last hand can be edited (re-scored) or deleted. All game logic is in :mod:`pipeline.live`;
this page only lays it out. Player names are untrusted: they reach the page escaped
(:func:`components.md`, ``html.escape``) or as plain table cells.
"""

from __future__ import annotations

from decimal import Decimal

import polars as pl
import streamlit as st

from dashboard import components
from pipeline import read
from pipeline.ingest.errors import IngestError
from pipeline.live.entry import (
    EntryCheck,
    EntryRejected,
    add_card,
    cards_in_entries,
    check_entry,
    entry_rows,
    open_row,
    remove_last_card,
)
from pipeline.live.session import (
    LiveError,
    LiveSession,
    default_fantasyland_cards,
    delete_last_hand,
    edit_last_hand,
    record_hand,
    start_session,
)
from pipeline.live.storage import LiveStoreError, remove_hand, replace_hand, store_hand
from pipeline.live.text import board_text, format_money, format_points
from pipeline.rules.cards import RANKS, SUITS, CardError, card_text, parse_card
from pipeline.rules.game import ROW_SIZES, ROWS, Row, Variant
from pipeline.rules.ruleset import PRESET_NAMES

SESSION = "rec_session"
MODE = "rec_mode"  # "new" or "edit"
ACTIVE_PLAYER = "rec_player"
ACTIVE_ROW = "rec_row"
NOTICE = "rec_notice"
ATTEMPTED = "rec_attempted"
CONFIRM_DELETE = "rec_confirm_delete"
STASH = "rec_stash"
FRESH = "rec_fresh"
SAVED_NOTICE = "rec_saved_notice"  # (kind, text) under the save button, where the tap was
SETUP_ERROR = "rec_setup_error"

SUIT_COLOURS = {"c": "green", "d": "blue", "h": "red", "s": ""}

# Static CSS (no untrusted value): a narrow column, large tap targets on the picker and actions.
PAGE_CSS = """
<style>
.st-key-rec_page { max-width: 40rem; }
.st-key-rec_picker button { min-height: 2.75rem; min-width: 2.75rem; padding: 0 0.2rem; }
.st-key-rec_picker button p { font-size: 1.15rem; font-weight: 600; }
.st-key-rec_actions button, .st-key-rec_save button, .st-key-rec_hand_actions button,
.st-key-rec_setup button { min-height: 3rem; }
</style>
"""


def board_key(index: int) -> str:
    """Session-state key of player ``index``'s board text."""
    return f"rec_board_{index}"


def fantasyland_key(index: int) -> str:
    """Session-state key of player ``index``'s Fantasyland checkbox."""
    return f"rec_fl_{index}"


def card_key(card: int) -> str:
    """Widget key of a picker card button (``rec_card_Ah``)."""
    return f"rec_card_{card_text(card)}"


# --- state changes (callbacks run before the rerun, so they may set widget values) ------------


def _session() -> LiveSession | None:
    return st.session_state.get(SESSION)


def _entries(session: LiveSession) -> dict[str, str]:
    return {name: st.session_state.get(board_key(index), "")
            for index, name in enumerate(session.players)}


def _marks(session: LiveSession) -> list[str]:
    return [name for index, name in enumerate(session.players)
            if st.session_state.get(fantasyland_key(index))]


def _reset_entry(session: LiveSession, boards: dict[str, str] | None = None,
                 marks: dict[str, int] | None = None) -> None:
    """Fill the fields for a hand: boards (empty by default) and Fantasyland marks."""
    marks = session.fantasyland if marks is None else marks
    for index, name in enumerate(session.players):
        st.session_state[board_key(index)] = (boards or {}).get(name, "")
        st.session_state[fantasyland_key(index)] = name in marks
    first = session.action_order()[0]
    st.session_state[ACTIVE_PLAYER] = session.players.index(first)
    st.session_state[ACTIVE_ROW] = Row.TOP.value
    st.session_state[ATTEMPTED] = False
    st.session_state[CONFIRM_DELETE] = False


def _start() -> None:
    state = st.session_state
    names = [name for name in str(state.get("rec_setup_players", "")).split(",") if name.strip()]
    button = state.get("rec_setup_button") or None
    try:
        session = start_session(
            names, state.get("rec_setup_variant", "pineapple"),
            state.get("rec_setup_rules", "standard"),
            Decimal(str(state.get("rec_setup_stake") or 0)).quantize(Decimal("0.01")),
            button=button if button in [name.strip() for name in names] else None,
        )
    except LiveError as error:
        state[SETUP_ERROR] = str(error)
        return
    state[SETUP_ERROR] = None
    state[SESSION] = session
    state[MODE] = "new"
    state[NOTICE] = None
    state[FRESH] = False
    _reset_entry(session)


def _entry_changed() -> None:
    """A board was typed: an earlier "not saved" message no longer applies."""
    saved = st.session_state.get(SAVED_NOTICE)
    if saved and saved[0] == "error":
        st.session_state[SAVED_NOTICE] = None


def _end_session() -> None:
    for key in list(st.session_state.keys()):
        if str(key).startswith("rec_") and not str(key).startswith("rec_setup"):
            del st.session_state[key]


def _next_open_board(session: LiveSession, index: int) -> int | None:
    """The next player after ``index`` (in action order) whose board has room, or None."""
    state = st.session_state
    order = session.action_order(_hand_button(session))
    start = order.index(session.players[index])
    for name in order[start + 1:] + order[:start]:
        other = session.players.index(name)
        if open_row(state.get(board_key(other), "")) is not None:
            return other
    return None


def _tap(card: int) -> None:
    session = _session()
    if session is None:
        return
    state = st.session_state
    state[SAVED_NOTICE] = None
    index = int(state.get(ACTIVE_PLAYER) or 0)
    row = Row(state.get(ACTIVE_ROW) or Row.TOP.value)
    if open_row(state.get(board_key(index), ""), row) is None:
        # A tap while this board is full goes to the next board with room.
        other = _next_open_board(session, index)
        if other is None:
            state[SAVED_NOTICE] = ("error", "Every board is full: save the hand, or clear a board.")
            return
        index = other
        row = open_row(state.get(board_key(index), "")) or Row.TOP
        state[ACTIVE_PLAYER] = index
    text, next_row = add_card(state.get(board_key(index), ""), card, row)
    state[board_key(index)] = text
    if next_row is not None:
        state[ACTIVE_ROW] = next_row.value
        return
    # This board is now full: go on to the next board with room.
    other = _next_open_board(session, index)
    if other is not None:
        state[ACTIVE_PLAYER] = other
        state[ACTIVE_ROW] = (open_row(state.get(board_key(other), "")) or Row.TOP).value


def _backspace() -> None:
    state = st.session_state
    index = int(state.get(ACTIVE_PLAYER) or 0)
    row = Row(state.get(ACTIVE_ROW) or Row.TOP.value)
    state[board_key(index)] = remove_last_card(state.get(board_key(index), ""), row)


def _clear_board() -> None:
    state = st.session_state
    index = int(state.get(ACTIVE_PLAYER) or 0)
    state[board_key(index)] = ""
    state[ACTIVE_ROW] = Row.TOP.value


def _hand_button(session: LiveSession) -> str:
    """The button of the hand being entered (the edited hand's while editing)."""
    if st.session_state.get(MODE) == "edit" and session.last_hand is not None:
        return session.last_hand.button
    return session.button


def _save() -> None:
    session = _session()
    if session is None:
        return
    state = st.session_state
    editing = state.get(MODE) == "edit"
    entries = _entries(session)
    try:
        if editing:
            new_session, hand = edit_last_hand(session, entries, _marks(session))
        else:
            new_session, hand = record_hand(session, entries, _marks(session))
    except EntryRejected as error:
        state[ATTEMPTED] = True
        count = len({problem.player for problem in error.check.problems})
        state[SAVED_NOTICE] = ("error", f"Not saved: {count} board{'s' if count != 1 else ''} "
                                        "to complete or correct (see the messages under the fields).")
        return
    try:
        with read.source.database_lock():
            if editing:
                replace_hand(components.database_path(), hand, new_session.rules)
            else:
                store_hand(components.database_path(), hand, new_session.rules)
    except (LiveStoreError, IngestError, OSError) as error:
        state[SAVED_NOTICE] = ("error", f"Not saved: {error}")
        return
    state[SESSION] = new_session
    state[MODE] = "new"
    state[FRESH] = True
    verb = "changed and re-scored" if editing else "saved"
    points = ", ".join(f"{name} {format_points(value)}" for name, value in hand.points.items())
    state[NOTICE] = None
    next_marks = ", ".join(f"{name} ({cards} cards)"
                           for name, cards in hand.fantasyland_next.items())
    fantasyland = f" Fantasyland next: {next_marks}." if next_marks else ""
    state[SAVED_NOTICE] = ("success", f"Hand {hand.number} {verb}: {points}.{fantasyland} "
                                      "The result is at the top of the page.")
    stash = state.pop(STASH, None) if editing else None
    if stash is not None:
        _reset_entry(new_session, stash[0])
    else:
        _reset_entry(new_session)


def _edit_last() -> None:
    session = _session()
    if session is None or session.last_hand is None:
        return
    state = st.session_state
    if state.get(MODE) != "edit":
        state[STASH] = (_entries(session), _marks(session))
    last = session.last_hand
    _reset_entry(session, {name: board_text(board) for name, board in last.boards.items()},
                 dict(last.fantasyland))
    state[ACTIVE_PLAYER] = session.players.index(session.action_order(last.button)[0])
    state[MODE] = "edit"
    state[NOTICE] = None
    state[SAVED_NOTICE] = None


def _cancel_edit() -> None:
    session = _session()
    if session is None:
        return
    state = st.session_state
    stash = state.pop(STASH, None)
    _reset_entry(session, stash[0] if stash else None)
    state[MODE] = "new"


def _ask_delete() -> None:
    st.session_state[CONFIRM_DELETE] = True


def _keep() -> None:
    st.session_state[CONFIRM_DELETE] = False


def _delete_last() -> None:
    session = _session()
    state = st.session_state
    state[CONFIRM_DELETE] = False
    if session is None or session.last_hand is None:
        return
    new_session, hand = delete_last_hand(session)
    try:
        with read.source.database_lock():
            remove_hand(components.database_path(), hand)
    except (IngestError, OSError) as error:
        state[NOTICE] = ("error", f"Not deleted: {error}")
        return
    state[SESSION] = new_session
    state[FRESH] = False
    state[SAVED_NOTICE] = None
    state[NOTICE] = ("success", f"Hand {hand.number} deleted.")
    if state.get(MODE) == "edit":
        state.pop(STASH, None)
        state[MODE] = "new"
        _reset_entry(new_session)
    else:
        for index, name in enumerate(new_session.players):
            state[fantasyland_key(index)] = name in new_session.fantasyland


# --- layout ---------------------------------------------------------------------------------


def setup() -> None:
    """The form that starts a session."""
    st.subheader("New live session")
    with st.container(key="rec_setup"):
        st.text_input("Players, clockwise, comma separated", key="rec_setup_players",
                      placeholder="mara, jun, ivo")
        names = [name.strip() for name in
                 str(st.session_state.get("rec_setup_players", "")).split(",") if name.strip()]
        variants = [variant.value for variant in Variant]
        st.selectbox("Variant", variants, index=variants.index("pineapple"),
                     key="rec_setup_variant")
        st.selectbox("Rules", PRESET_NAMES, index=PRESET_NAMES.index("standard"),
                     key="rec_setup_rules")
        st.number_input("Money per point", min_value=0.0, value=0.0, step=0.05, format="%.2f",
                        key="rec_setup_stake")
        if names:
            st.selectbox("Button on the first hand", names, index=len(names) - 1,
                         key="rec_setup_button",
                         help="The player left of the button acts first.")
        st.button("Start recording", type="primary", width="stretch", on_click=_start,
                  key="rec_start")
    if st.session_state.get(SETUP_ERROR):
        st.error(components.md(st.session_state[SETUP_ERROR]))
    st.caption(f"Hands are saved into {components.md(components.database_path())}.")


def totals_frame(session: LiveSession) -> pl.DataFrame:
    """Running totals: player, points, money."""
    money = session.money
    return pl.DataFrame({
        "player": list(session.players),
        "points": [session.totals[name] for name in session.players],
        "money": [format_money(money[name]) for name in session.players],
    })


def show_result(session: LiveSession) -> None:
    """The last hand's scored result, with edit and delete."""
    hand = session.last_hand
    if hand is None:
        return
    fresh = bool(st.session_state.get(FRESH))
    with st.expander(f"Hand {hand.number} result", expanded=fresh):
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
        with st.container(key="rec_hand_actions", horizontal=True):
            st.button("Edit this hand", on_click=_edit_last, key="rec_edit",
                      disabled=st.session_state.get(MODE) == "edit")
            st.button("Delete this hand", on_click=_ask_delete, key="rec_delete")
        if st.session_state.get(CONFIRM_DELETE):
            st.warning(f"Delete hand {hand.number} from the database?")
            with st.container(horizontal=True):
                st.button("Yes, delete", type="primary", on_click=_delete_last,
                          key="rec_delete_yes")
                st.button("Keep it", on_click=_keep, key="rec_delete_no")


def player_field(session: LiveSession, index: int, check: EntryCheck,
                 button: str) -> None:
    """One player's board field, Fantasyland mark and messages."""
    name = session.players[index]
    badges = []
    if name == button:
        badges.append("button")
    label = f"**{components.md(name)}**" + (f" · {', '.join(badges)}" if badges else "")
    st.text_input(label, key=board_key(index), placeholder="top / middle / bottom",
                  on_change=_entry_changed,
                  help="Type the board, e.g. Qs Qh 5d / Kc Kd 4h 3s 2c / Ac Ad Ah 9s 9c, "
                       "or tap the cards below.")
    cards = (session.fantasyland_cards(name) if st.session_state.get(MODE) != "edit"
             else (session.last_hand.fantasyland.get(name, 0) if session.last_hand else 0))
    cards = cards or default_fantasyland_cards(session.variant, session.rules)
    st.checkbox(f"Fantasyland this hand ({cards} cards)", key=fantasyland_key(index))
    # Wrong cards, cards used twice and overfull rows are errors at once; a row still short of
    # cards is progress while entering, and an error once a save was tried.
    attempted = bool(st.session_state.get(ATTEMPTED))
    rows = entry_rows(st.session_state.get(board_key(index), ""))
    errors, pending = [], []
    for problem in check.problems_for(name):
        if problem.kind == "missing":
            if attempted:
                errors.append("No board entered yet.")
            continue
        short = (problem.kind == "size" and problem.row is not None
                 and len(rows[ROWS.index(problem.row)]) < ROW_SIZES[problem.row])
        (pending if short and not attempted else errors).append(components.md(problem.message))
    if errors:
        st.error("  \n".join(errors), icon="✖")
    elif pending:
        st.caption("To go: " + " · ".join(pending))
    elif name in check.boards:
        st.caption("✓ complete")


def picker(session: LiveSession, check: EntryCheck) -> None:
    """The 52-card picker for the chosen player and row; used cards are disabled."""
    state = st.session_state
    entries = _entries(session)

    def player_label(index: int) -> str:
        name = session.players[index]
        mark = "✓ " if name in check.boards else ""
        return mark + components.md(name)

    st.segmented_control("Tap cards for", list(range(len(session.players))),
                         format_func=player_label, key=ACTIVE_PLAYER, required=True,
                         width="stretch")
    index = int(state.get(ACTIVE_PLAYER) or 0)
    rows = entry_rows(entries[session.players[index]])

    def row_label(value: str) -> str:
        row = Row(value)
        return f"{value} {len(rows[ROWS.index(row)])}/{ROW_SIZES[row]}"

    st.segmented_control("Row", [row.value for row in ROWS], format_func=row_label,
                         key=ACTIVE_ROW, required=True, width="stretch",
                         label_visibility="collapsed")
    preview: dict[str, list[str]] = {}
    for row, tokens in zip(ROWS, rows, strict=True):
        shown = []
        for token in tokens:
            try:
                shown.append(card_text(parse_card(token)))
            except CardError:
                shown.append(token)
        preview[row.value] = shown
    components.show_html(components.board_html(preview))
    used = cards_in_entries(entries.values())
    with st.container(key="rec_picker", gap="xxsmall"):
        for suit in reversed(SUITS):
            with st.container(horizontal=True, gap="xxsmall", key=f"rec_suit_{suit}"):
                for rank in reversed(RANKS):
                    card = RANKS.index(rank) * 4 + SUITS.index(suit)
                    symbol = components.SUIT_SYMBOLS[suit]
                    colour = SUIT_COLOURS[suit]
                    text = f"{rank}{symbol}"
                    label = f":{colour}[{text}]" if colour and card not in used else text
                    st.button(label, key=card_key(card), on_click=_tap, args=(card,),
                              disabled=card in used)
    with st.container(key="rec_actions", horizontal=True):
        st.button("⌫ Last card", on_click=_backspace, key="rec_backspace")
        st.button("Clear board", on_click=_clear_board, key="rec_clear")


def recording(session: LiveSession) -> None:
    """The page while a session runs."""
    state = st.session_state
    editing = state.get(MODE) == "edit" and session.last_hand is not None
    stake = f" · {session.stake} per point" if session.stake else ""
    st.caption(
        f"Session {components.md(session.session_id)} · {components.md(session.variant.value)} · "
        f"rules {components.md(session.rules.name)}{stake}"
    )
    notice = state.get(NOTICE)
    if notice:
        kind, text = notice
        (st.success if kind == "success" else st.error)(components.md(text))
    show_result(session)
    if session.hands:
        st.dataframe(totals_frame(session), hide_index=True, key="rec_totals", width="stretch")

    if editing:
        hand = session.last_hand
        number, button = hand.number, hand.button
        st.subheader(f"Editing hand {number}")
    else:
        number, button = session.hand_number, session.button
        st.subheader(f"Hand {number}")
    marks = [f"{components.md(name)} ({cards} cards)"
             for name, cards in session.fantasyland.items()] if not editing else []
    first = session.action_order(button)[0]
    st.markdown(
        f"Button **{components.md(button)}** · {components.md(first)} acts first"
        + (f" · Fantasyland: {', '.join(marks)}" if marks else "")
    )
    check = check_entry(session, _entries(session))
    for index in range(len(session.players)):
        player_field(session, index, check, button)
    picker(session, check)
    label = f"Save changes to hand {number}" if editing else f"Save hand {number}"
    with st.container(key="rec_save"):
        st.button(label, type="primary", width="stretch", on_click=_save, key="rec_save_button")
        saved = state.get(SAVED_NOTICE)
        if saved:
            kind, text = saved
            (st.success if kind == "success" else st.error)(components.md(text))
        if editing:
            st.button("Cancel the edit", width="stretch", on_click=_cancel_edit,
                      key="rec_cancel_edit")
    st.divider()
    st.button("End this session", on_click=_end_session, key="rec_end")
    st.caption("Saved hands stay in the database; ending only clears this page.")


def main() -> None:
    """Draw the Record page."""
    st.html(PAGE_CSS)
    with st.container(key="rec_page"):
        st.title("Record")
        session = _session()
        if session is None:
            setup()
        else:
            recording(session)


main()
