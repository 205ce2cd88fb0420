"""pipeline.live.state and the session's row in live_sessions (pipeline.live.storage,
pipeline.store.live_sessions, pipeline.read.live): a session survives a reload, undo of save /
edit / delete, stale copies refused, names matched against stored players; live verdicts and
entry parsing (13 cards without separators, extra cards previewed)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from pipeline import read
from pipeline.live.entry import check_entry, preview_rows, split_tokens
from pipeline.live.session import (
    LiveError,
    board_verdicts,
    record_hand,
    session_from_mapping,
    session_mapping,
    start_session,
)
from pipeline.live.state import ActionKind, Draft, LiveState, state_from_mapping, state_mapping
from pipeline.live.storage import (
    StaleSession,
    delete_last,
    end_session,
    load_session,
    persist,
    resume,
    save_entry,
    stored_hand_ids,
    undo_last,
)
from pipeline.live.text import verdict_text
from tests.live import scenario as sc
from tests.live.test_live import ticking_clock


def new_state() -> LiveState:
    return LiveState(start_session(sc.PLAYERS, stake="0.10", clock=ticking_clock()))


def stored_points(database: Path) -> dict[str, dict[str, int]]:
    with duckdb.connect(str(database), read_only=True) as connection:
        rows = connection.execute(
            "SELECT h.hand_id, r.player, r.points FROM results r JOIN hands h USING (hand_key)"
        ).fetchall()
    points: dict[str, dict[str, int]] = {}
    for hand_id, player, value in rows:
        points.setdefault(hand_id[-4:], {})[player] = value
    return points


# --- typing and previewing --------------------------------------------------------------------


def test_thirteen_cards_without_separators_fill_top_middle_bottom() -> None:
    spaced = sc.HAND_1["mara"].replace(" / ", " ")
    packed = spaced.replace(" ", "")
    for text in (spaced, packed, spaced.replace(" ", ",")):
        check = check_entry(["mara"], {"mara": text})
        assert check.ok, check.summary
        assert check.boards["mara"] == check_entry(["mara"], sc.HAND_1).boards["mara"]
    assert split_tokens("AhKd10c Qx") == ["Ah", "Kd", "10c", "Qx"]
    # Twelve cards are not a board: the message says how to type one.
    check = check_entry(["mara"], {"mara": spaced.rsplit(" ", 1)[0]})
    assert check.messages_for("mara") == [
        'type 13 cards (they fill top 3, middle 5, bottom 5 in order) or separate the rows '
        'with "/"; got 12 cards']


def test_the_preview_shows_every_card_and_marks_the_extra_ones() -> None:
    rows = preview_rows("Qs Qh 5d 2c / Kc Qx / ")
    assert [(card.text, card.valid, card.extra) for card in rows[0]] == [
        ("Qs", True, False), ("Qh", True, False), ("5d", True, False), ("2c", True, True)]
    assert [(card.text, card.valid) for card in rows[1]] == [("Kc", True), ("Qx", False)]
    # Fourteen cards typed without "/": the fourteenth is an extra bottom card.
    rows = preview_rows(sc.HAND_1["mara"].replace(" / ", " ") + " 2d")
    assert [card.text for card in rows[2] if card.extra] == ["2d"]


# --- live verdicts ------------------------------------------------------------------------------


def test_boards_are_judged_while_they_are_entered() -> None:
    session = start_session(sc.PLAYERS)
    check = check_entry(session, {"mara": sc.HAND_1["mara"], "ivo": sc.HAND_1["ivo"],
                                  "jun": "Jd Jh"})
    verdicts = board_verdicts(session, check)
    assert sorted(verdicts) == ["ivo", "mara"]  # jun's board is not complete: no verdict
    assert verdict_text(verdicts["ivo"]) == (
        "Foul: middle (full house, eights full of fives) beats bottom (seven high)")
    assert verdict_text(verdicts["mara"]) == "royalties 7/0/6 = 13 · enters Fantasyland (14 cards)"
    assert verdicts["mara"].royalties == sc.HAND_1_ROYALTIES["mara"]
    # In Fantasyland, trips on top stay.
    check = check_entry(session, {"mara": sc.HAND_2["mara"]})
    verdict = board_verdicts(session, check, ["mara"])["mara"]
    assert verdict_text(verdict, in_fantasyland=True).endswith("stays in Fantasyland (14 cards)")


# --- a session as JSON --------------------------------------------------------------------------


def test_a_session_is_rebuilt_from_its_mapping() -> None:
    session = new_state().session
    session, _ = record_hand(session, sc.HAND_1)
    session, _ = record_hand(session, sc.HAND_2, ["mara"])
    mapping = json.loads(json.dumps(session_mapping(session)))
    rebuilt = session_from_mapping(mapping)
    assert rebuilt.totals == session.totals
    assert [hand.record for hand in rebuilt.hands] == [hand.record for hand in session.hands]
    assert (rebuilt.button, dict(rebuilt.fantasyland)) == ("mara", {"mara": 14})
    mapping["hands"][1]["boards"]["jun"] = "Td 9c"
    with pytest.raises(LiveError):
        session_from_mapping(mapping)


def test_the_state_keeps_the_draft_and_the_last_action() -> None:
    state = LiveState(new_state().session, draft=Draft({"mara": "Qs Qh"}, ("mara",)),
                      confirmed=("ana",))
    rebuilt = state_from_mapping(json.loads(json.dumps(state_mapping(state))), 7)
    assert rebuilt.draft == state.draft
    assert rebuilt.confirmed == ("ana",)
    assert rebuilt.revision == 7
    assert Draft({"mara": "Qs Qh / 5d"}).cards == 3


# --- the live_sessions table --------------------------------------------------------------------


def test_save_delete_undo_and_resume(tmp_path: Path) -> None:
    database = tmp_path / "live.duckdb"
    state = persist(database, new_state())
    session_id = state.session.session_id
    state, _ = save_entry(database, state.with_draft(Draft(dict(sc.HAND_1))), sc.HAND_1)
    assert state.last_action.kind is ActionKind.SAVED
    state = persist(database, state.with_draft(Draft({"jun": "Td 9c 4d"})))
    state, hand = delete_last(database, state)
    assert hand.number == 1
    assert state.draft.boards == sc.HAND_1  # the deleted hand's boards come back
    assert stored_points(database) == {}
    state, message = undo_last(database, state)
    assert message == "Hand 1 is back."
    assert stored_points(database) == {"0001": sc.HAND_1_POINTS}
    assert state.draft.boards == {"jun": "Td 9c 4d"}  # the entries before the delete

    # A reload: the open session is offered with its totals, and resumes where it was.
    offered = read.live.open_live_sessions(database)
    assert [(item.session_id, item.players, item.hands, item.totals) for item in offered] == [
        (session_id, "mara, jun, ivo", 1, sc.HAND_1_POINTS)]
    resumed = resume(database, session_id)
    assert resumed.session.totals == sc.HAND_1_POINTS
    assert resumed.draft.boards == {"jun": "Td 9c 4d"}
    assert resumed.revision == state.revision
    assert (resumed.session.button, dict(resumed.session.fantasyland)) == ("mara", {"mara": 14})

    # Undo of a save takes the hand back and puts its boards into the fields.
    resumed, _ = save_entry(database, resumed, sc.HAND_2, ["mara"])
    resumed, message = undo_last(database, resumed)
    assert message.startswith("Hand 2 is no longer saved")
    assert resumed.draft.boards == sc.HAND_2
    assert stored_hand_ids(database, session_id) == [f"{session_id}-0001"]

    end_session(database, resumed)
    assert read.live.open_live_sessions(database) == ()


def test_an_edit_is_undone(tmp_path: Path) -> None:
    database = tmp_path / "live.duckdb"
    state = persist(database, new_state())
    for hand in (sc.HAND_1, sc.HAND_2, sc.HAND_3):
        state, _ = save_entry(database, state, hand)
    editing = state.with_draft(Draft(dict(sc.HAND_3), editing=True, put_aside={"mara": "2c"}))
    edited = {**sc.HAND_3, "ivo": sc.HAND_3_EDITED_IVO}
    state, hand = save_entry(database, editing, edited)
    assert hand.points == sc.HAND_3_EDITED_POINTS
    assert state.draft.boards == {"mara": "2c"}  # the new hand's entries come back
    assert stored_points(database)["0003"] == sc.HAND_3_EDITED_POINTS
    state, message = undo_last(database, state)
    assert message == "Hand 3 is back as it was before the edit."
    assert stored_points(database)["0003"] == sc.HAND_3_POINTS
    assert state.session.last_hand.points == sc.HAND_3_POINTS
    with pytest.raises(LiveError):
        undo_last(database, state)  # one step only


def test_a_stale_copy_is_refused(tmp_path: Path) -> None:
    database = tmp_path / "live.duckdb"
    first = persist(database, new_state(), writer="phone")
    ahead = persist(database, first.with_draft(Draft({"mara": "Qs"})), writer="tablet")
    with pytest.raises(StaleSession) as refused:
        persist(database, first.with_draft(Draft({"mara": "Kd"})), writer="phone")
    assert (refused.value.stored, refused.value.writer) == (ahead.revision, "tablet")
    assert load_session(database, first.session.session_id).draft.boards == {"mara": "Qs"}
    stored = read.live.live_session_revision(database, first.session.session_id)
    assert (stored.revision, stored.writer, stored.ended) == (2, "tablet", False)


def test_names_are_matched_against_stored_players(tmp_path: Path) -> None:
    database = tmp_path / "live.duckdb"
    state = persist(database, new_state())
    for hand in (sc.HAND_1, sc.HAND_2):
        state, _ = save_entry(database, state, hand)
    assert read.live.players_like(database, ["MARA", "Jun ", "zed"]) == {
        "MARA": ("mara", 2), "Jun ": ("jun", 2)}
    assert read.live.players_like(database, []) == {}
