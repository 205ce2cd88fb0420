"""The Record page run headless with AppTest: whole live sessions through the real app.

The session (tests/live/scenario.py) has a foul, a Fantasyland entry and a stay, a typo that is
rejected, boards tapped in on the card pad, an edit, a delete and its undo. The database and
the totals the page shows are checked against numbers worked out by hand (and re-derived
independently). Taps on the card pad are sent as the browser sends them: the pad's whole state
as a widget value (:func:`tap_board`); the JavaScript itself is driven in test_record_browser.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import UnknownElement

from pipeline.live.entry import entry_rows
from pipeline.rules.game import ROW_SIZES, ROWS
from pipeline.store import hand_key
from tests.apptest import component_data, component_element
from tests.live import scenario as sc

APP = Path(__file__).parents[2] / "dashboard" / "app.py"
PAGE = "views/record.py"


def record_page(database: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The app on ``database``, switched to the Record page."""
    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    app.switch_page(PAGE).run()
    assert not app.exception, app.exception
    return app


def start(app: AppTest, players: str, stake: str = "0.10") -> None:
    app.text_input(key="rec_setup_players").input(players).run()
    app.text_input(key="rec_setup_stake").input(stake).run()
    app.button(key="rec_start").click().run()
    assert not app.exception, app.exception


def type_board(app: AppTest, index: int, text: str) -> None:
    """Type a board into its field and press Enter (the fields are a form: Enter applies)."""
    app.text_input(key=f"rec_type_{index}").input(text)
    app.button(key="rec_apply_typed").click().run()
    assert not app.exception, app.exception


def pad_element(app: AppTest) -> UnknownElement:
    """The card pad component in the last run's page."""
    return component_element(app, "rec_pad")


def pad_data(app: AppTest) -> dict[str, Any]:
    """What the page sent to the card pad (boards, notes, epoch, ...)."""
    return component_data(app, "rec_pad")


def tap_board(app: AppTest, index: int, text: str) -> None:
    """Tap a board in on the card pad, as the browser reports it: after every tap the pad's
    whole state (boards, board and row the next tap goes to, sequence number) is the component's
    widget value. Cards fill top, middle, bottom in order, as the JavaScript does."""
    data = pad_data(app)
    boards = [[list(row) for row in rows] for rows in data["boards"]]
    seq = int(data["seq"])
    for card in text.replace("/", " ").split():
        rows = boards[index]
        row = next(position for position, name in enumerate(ROWS)
                   if len(rows[position]) < ROW_SIZES[name])
        rows[row].append(card)
        seq += 1
        element = pad_element(app)
        states: WidgetStates = app._tree.get_widget_states()
        widget = states.widgets.add()
        widget.id = element.proto.id
        widget.json_value = json.dumps({"entry": {
            "epoch": data["epoch"], "seq": seq, "boards": boards, "player": index, "row": row}})
        app._run(states)
        assert not app.exception, app.exception


def save(app: AppTest) -> None:
    app.button(key="rec_save_button").click().run()
    assert not app.exception, app.exception


def tap_as_sent(app: AppTest, key: str) -> None:
    """A tap on button ``key`` as the browser sends it, a trigger on the button as the last run
    drew it (a second tap made before the page was redrawn)."""
    states: WidgetStates = app._tree.get_widget_states()
    widget = states.widgets.add()
    widget.id = app.button(key=key).id
    widget.trigger_value = True
    app._run(states)
    assert not app.exception, app.exception


def texts(elements) -> list[str]:  # noqa: ANN001
    return [element.value for element in elements]


def shown_totals(app: AppTest) -> str:
    """The totals table as the page shows it."""
    return " ".join(str(element.proto.body) for element in app.get("html"))


def stored_points(database: Path) -> dict[str, dict[str, int]]:
    if not database.exists():
        return {}
    with duckdb.connect(str(database), read_only=True) as connection:
        rows = connection.execute(
            "SELECT h.hand_id, r.player, r.points FROM results r JOIN hands h USING (hand_key)"
        ).fetchall()
    points: dict[str, dict[str, int]] = {}
    for hand_id, player, value in rows:
        points.setdefault(hand_id[-4:], {})[player] = value
    return points


def result_panel(app: AppTest) -> Any:
    """The expander with the last saved hand's result."""
    return next(panel for panel in app.expander if panel.label.startswith("Last saved"))


def board_fields(app: AppTest) -> list[str]:
    return [app.text_input(key=f"rec_type_{index}").value for index in range(3)]


def saved_hand_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[AppTest, Path]:
    database = tmp_path / "live.duckdb"
    app = record_page(database, monkeypatch)
    start(app, "mara, jun, ivo")
    for index, name in enumerate(sc.PLAYERS):
        type_board(app, index, sc.HAND_1[name])
    save(app)
    return app, database


def test_a_live_session_on_the_record_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database = tmp_path / "live.duckdb"
    app = record_page(database, monkeypatch)
    assert app.title[0].value == "Record"
    start(app, "mara, jun, ivo")
    assert app.subheader[0].value == "Hand 1"
    assert [field.label for field in app.text_input] == ["**mara**", "**jun**", "**ivo** · button"]
    assert [player["name"] for player in pad_data(app)["players"]] == ["mara", "jun", "ivo"]

    # Hand 1: mara typed, jun typed with a typo (shown at once), ivo tapped in on the pad.
    type_board(app, 0, sc.HAND_1["mara"])
    type_board(app, 1, sc.HAND_1_TYPO)
    assert r"bottom\: 'Qx' is not a card" in " ".join(texts(app.error))
    tap_board(app, 2, sc.HAND_1["ivo"])
    assert app.text_input(key="rec_type_2").value == sc.HAND_1["ivo"]
    # Live verdicts before saving: ivo's foul with its reason, mara's royalties and Fantasyland.
    notes = pad_data(app)["notes"]
    assert notes[2] == {"kind": "foul", "text": "Foul: middle (full house, eights full of fives) "
                                                "beats bottom (seven high)"}
    assert notes[0] == {"kind": "ok", "text": "royalties 7/0/6 = 13 · enters Fantasyland (14 cards)"}
    assert notes[1]["kind"] == "error"
    assert stored_points(database) == {}
    save(app)  # refused: jun's board has the typo; the message names him
    assert texts(app.error)[0].startswith(r"Not saved\: 1 board to complete or correct — jun "
                                          r"\(bottom\: 'Qx' is not a card")
    assert stored_points(database) == {}
    type_board(app, 1, sc.HAND_1["jun"])
    save(app)
    assert texts(app.success) == [r"Hand 1 saved\: mara \+23, jun \+12, ivo \-35\. "
                                  r"Fantasyland next\: mara \(14 cards\)\."]
    result = " ".join(texts(app.markdown))
    assert "**mara** +23 points · royalties 7/0/6 · **enters Fantasyland** (14 cards)" in result
    assert ("**ivo** -35 points · :red[**foul**] — middle \\(full house, eights full of fives\\) "
            "beats bottom \\(seven high\\)") in result
    assert app.subheader[0].value == "Hand 2"
    assert "Button mara · jun acts first" in " ".join(texts(app.caption))
    totals = shown_totals(app)
    for name, points, money in (("mara", "+23", "+2.30"), ("jun", "+12", "+1.20"),
                                ("ivo", "-35", "-3.50")):
        assert f"<td>{name}</td><td style='text-align:right'>{points}</td>" \
               f"<td style='text-align:right'>{money}</td>" in totals
    # The fields are empty again; mara's Fantasyland toggle is shown (pre-marked), on.
    assert board_fields(app) == ["", "", ""]
    assert [(toggle.label, toggle.value) for toggle in app.toggle][0] == \
        ("mara plays Fantasyland (14 cards)", True)
    assert texts(app.toggle) == [True, False, False]
    assert pad_data(app)["players"][0]["badge"] == "BTN FL"

    # Hand 2: mara in Fantasyland stays (trips on top); jun's board tapped in.
    type_board(app, 0, sc.HAND_2["mara"])
    tap_board(app, 1, sc.HAND_2["jun"])
    type_board(app, 2, sc.HAND_2["ivo"])
    assert pad_data(app)["notes"][0]["text"].endswith("stays in Fantasyland (14 cards)")
    save(app)
    assert "**stays in Fantasyland** (14 cards)" in " ".join(texts(app.markdown))
    assert "Button mara · jun acts first" in " ".join(texts(app.caption))  # button stays
    assert texts(app.toggle) == [True, False, False]

    # Hand 3: mara in Fantasyland again, no stay (13 cards typed without separators for jun).
    for index, name in enumerate(sc.PLAYERS):
        type_board(app, index, sc.HAND_3[name].replace(" / ", " ") if index == 1
                   else sc.HAND_3[name])
    save(app)
    assert texts(app.toggle) == [False, False, False]
    assert "+7.50" in shown_totals(app)  # mara: 23 + 39 + 13 points

    # Edit hand 3: ivo's middle and bottom swapped -> a foul; re-scored in place; then undone
    # and done again.
    app.button(key="rec_edit").click().run()
    assert app.subheader[0].value == "Editing hand 3"
    assert app.text_input(key="rec_type_2").value == sc.HAND_3["ivo"]
    type_board(app, 2, sc.HAND_3_EDITED_IVO)
    assert pad_data(app)["notes"][2]["kind"] == "foul"
    save(app)
    assert texts(app.success)[0].startswith(
        r"Hand 3 changed and re\-scored\: mara \+24, jun \-6, ivo \-18\.")
    assert stored_points(database)["0003"] == sc.HAND_3_EDITED_POINTS
    app.button(key="rec_undo").click().run()
    assert texts(app.success) == [r"Hand 3 is back as it was before the edit\."]
    assert stored_points(database)["0003"] == sc.HAND_3_POINTS
    app.button(key="rec_edit").click().run()
    type_board(app, 2, sc.HAND_3_EDITED_IVO)
    save(app)
    assert app.subheader[0].value == "Hand 4"

    # Hand 4, then delete it: its boards come back into the fields; undo puts it back; delete
    # again for good.
    for index, name in enumerate(sc.PLAYERS):
        type_board(app, index, sc.HAND_4[name])
    save(app)
    assert sorted(stored_points(database)) == ["0001", "0002", "0003", "0004"]
    app.button(key="rec_delete").click().run()
    assert texts(app.info)[0].startswith(r"Hand 4 deleted\: its boards are back in the fields")
    assert board_fields(app) == [sc.HAND_4[name] for name in sc.PLAYERS]
    assert app.subheader[0].value == "Hand 4"
    assert sorted(stored_points(database)) == ["0001", "0002", "0003"]
    app.button(key="rec_undo").click().run()
    assert texts(app.success) == [r"Hand 4 is back\."]
    assert sorted(stored_points(database)) == ["0001", "0002", "0003", "0004"]
    assert board_fields(app) == ["", "", ""]
    app.button(key="rec_delete").click().run()
    assert app.button(key="rec_undo").label == "Undo: hand 4 deleted"

    # The page's totals and the database agree with the hand-worked session.
    totals = shown_totals(app)
    for name in sc.PLAYERS:
        assert f"{sc.FINAL_TOTALS[name]:+d}</td><td style='text-align:right'>" \
               f"{sc.FINAL_MONEY[name]:+.2f}" in totals
    assert stored_points(database) == {
        "0001": sc.HAND_1_POINTS, "0002": sc.HAND_2_POINTS, "0003": sc.HAND_3_EDITED_POINTS,
    }
    assert stored_points(database)["0002"] == sc.independent_points(sc.HAND_2, {"mara"})
    with duckdb.connect(str(database), read_only=True) as connection:
        hands = connection.execute(
            "SELECT hand_id, site, button, any_fantasyland, rules, variant FROM hands ORDER BY hand_id"
        ).fetchall()
        assert [row[1:] for row in hands] == [
            ("live", "ivo", False, "standard", "pineapple"),
            ("live", "mara", True, "standard", "pineapple"),
            ("live", "mara", True, "standard", "pineapple"),
        ]
        third = hand_key("live", hands[2][0])
        assert connection.execute(
            "SELECT player, fantasyland FROM seats WHERE hand_key = ? ORDER BY seat", [third]
        ).fetchall() == [("mara", True), ("jun", False), ("ivo", False)]
        assert connection.execute(
            "SELECT player, foul FROM evaluations WHERE hand_key = ? AND foul", [third]
        ).fetchall() == [("ivo", True)]
        assert dict(connection.execute("SELECT player, points FROM sessions").fetchall()) \
            == sc.FINAL_TOTALS
        assert connection.execute("SELECT count(*) FROM rejects").fetchall() == [(0,)]
        assert connection.execute(
            "SELECT hands, ended_at IS NULL FROM live_sessions").fetchall() == [(3, True)]

    # Ending with cards entered asks first (hand 4's boards are back in the fields).
    app.button(key="rec_end").click().run()
    assert texts(app.warning) == ["Hand 4 has 39 cards entered and not saved: ending the "
                                  "session loses them."]
    app.button(key="rec_end_no").click().run()
    assert app.subheader[0].value == "Hand 4"
    app.button(key="rec_end").click().run()
    app.button(key="rec_end_yes").click().run()
    assert app.subheader[0].value == "New live session"
    assert not [button for button in app.button if button.key.startswith("rec_resume")]

    # Once the database has hands, the whole app is there and Record is still one of its pages.
    app.switch_page("views/overview.py").run()
    assert not app.exception, app.exception
    app.switch_page(PAGE).run()
    assert app.title[0].value == "Record"


def test_after_a_failed_save_delete_names_the_saved_hand_and_can_be_undone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bug of issue 19: a save failed unnoticed, "Delete this hand" (still on the earlier,
    saved hand) was confirmed, and that hand was lost with its boards."""
    app, database = saved_hand_1(tmp_path, monkeypatch)
    assert result_panel(app).proto.expanded  # the result of the hand just saved
    # Hand 2 with a card used twice: not saved, and the message says who.
    type_board(app, 0, sc.HAND_2["mara"])
    type_board(app, 1, sc.HAND_2["jun"])
    type_board(app, 2, sc.HAND_2["ivo"].replace("4h", "3h"))  # mara's 3h
    save(app)
    assert texts(app.error)[0].startswith(r"Not saved\: 2 boards to complete or correct — "
                                          r"mara \(3h is used twice\: mara top and ivo bottom\)")
    # The saved hand's panel is not presented as the hand being entered any more, and its
    # delete button names it.
    assert not result_panel(app).proto.expanded
    assert result_panel(app).label == "Last saved: hand 1 result"
    assert app.button(key="rec_delete").label == "Delete hand 1"
    assert app.button(key="rec_save_button").label == "Save hand 2"
    failed = board_fields(app)
    app.button(key="rec_delete").click().run()
    assert board_fields(app) == [sc.HAND_1[name] for name in sc.PLAYERS]  # boards come back
    assert "39 cards entered before are kept for Undo" in texts(app.info)[0]
    assert stored_points(database) == {}
    app.button(key="rec_undo").click().run()
    assert stored_points(database) == {"0001": sc.HAND_1_POINTS}
    assert board_fields(app) == failed  # and hand 2's entries are back too
    assert app.subheader[0].value == "Hand 2"


def test_a_session_resumes_in_a_new_page_view(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    app, database = saved_hand_1(tmp_path, monkeypatch)
    tap_board(app, 1, "Td 9c 4d Qs")  # part of hand 2 (jun acts first)
    with duckdb.connect(str(database), read_only=True) as connection:
        session_id = connection.execute("SELECT session_id FROM live_sessions").fetchall()[0][0]

    # A reload (or another phone) is a new page view: it offers the session with its totals.
    other = record_page(database, monkeypatch)
    assert other.title[0].value == "Record"
    offer = " ".join(texts(other.markdown))
    assert "mara, jun, ivo" in offer and "1 hand · mara \\+23, jun \\+12, ivo \\-35" in offer
    assert other.button(key="rec_resume_0").label == f"Resume session {session_id}"
    other.button(key="rec_resume_0").click().run()
    assert not other.exception, other.exception
    assert other.subheader[0].value == "Hand 2"
    assert texts(other.success) == [f"Resumed session {session_id} at hand 2\\.".replace("-", "\\-")]
    assert other.text_input(key="rec_type_1").value == "Td 9c 4d / Qs /"
    assert entry_rows(pad_data(other)["boards"][1]) == [["Td", "9c", "4d"], ["Qs"], []]
    assert texts(other.toggle) == [True, False, False]  # mara's Fantasyland mark
    assert "+2.30" in shown_totals(other)
    for index, name in enumerate(sc.PLAYERS):
        type_board(other, index, sc.HAND_2[name])
    save(other)
    assert stored_points(database)["0002"] == sc.HAND_2_POINTS

    # The first page view is now behind: it is told so instead of overwriting the newer hand.
    type_board(app, 0, sc.HAND_2["mara"])
    assert any("was changed on another device" in text for text in texts(app.error))
    app.button(key="rec_reload").click().run()
    assert app.subheader[0].value == "Hand 3"


def test_a_name_already_stored_is_asked_about_once(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    database = tmp_path / "live.duckdb"
    app = record_page(database, monkeypatch)
    start(app, "ana, bo")
    type_board(app, 0, sc.HAND_1["mara"])
    type_board(app, 1, sc.HAND_1["jun"])
    save(app)
    app.button(key="rec_end").click().run()

    app = record_page(database, monkeypatch)
    start(app, "Ana, cy")
    assert texts(app.markdown)[-1] == "**Ana**: same person as **ana** (1 hand)?"
    app.button(key="rec_same_no_0").click().run()
    assert texts(app.error) == ["Ana is not ana\\: type another name for them \\(for example "
                                "“Ana 2”\\), so their hands stay apart from ana's\\."]
    app.button(key="rec_start").click().run()  # asked again: nothing was decided
    app.button(key="rec_same_yes_0").click().run()
    assert not app.exception, app.exception
    assert app.subheader[0].value == "Hand 1"
    assert [field.label for field in app.text_input] == ["**ana**", "**cy** · button"]


def test_extra_cards_are_shown_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = record_page(tmp_path / "live.duckdb", monkeypatch)
    start(app, "mara, jun")
    type_board(app, 0, "Qs Qh 5d 2c / Kc Kd 4h 3s / Ac Ad Ah 9s 9c")
    assert pad_data(app)["boards"][0][0] == ["Qs", "Qh", "5d", "2c"]  # all four, one extra
    assert pad_data(app)["notes"][0] == {
        "kind": "error", "text": "top needs 3 cards, has 4"}  # a short middle is still to go


def test_player_names_are_shown_as_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = record_page(tmp_path / "live.duckdb", monkeypatch)
    start(app, "<script>alert(1)</script>, **bold**")
    labels = [field.label for field in app.text_input]
    escaped = "&lt;script\\>alert\\(1\\)&lt;/script\\>"
    assert labels == [f"**{escaped}**", "**\\*\\*bold\\*\\*** · button"]
    # The pad gets the names as data; its JavaScript only sets them as textContent.
    assert [player["name"] for player in pad_data(app)["players"]] == \
        ["<script>alert(1)</script>", "**bold**"]
    everything = " ".join(texts(app.markdown) + texts(app.caption) + labels
                          + [str(element.proto.body) for element in app.get("html")])
    assert "<script>" not in everything


def test_setup_problems_are_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = record_page(tmp_path / "live.duckdb", monkeypatch)
    start(app, "mara, MARA")
    assert texts(app.error) == [r"player 'MARA' is listed twice \(also as 'mara'\)"]
    assert app.button(key="rec_start")  # still on the setup form
    start(app, "mara, jun", stake="ten")
    assert texts(app.error) == [r"Money per point 'ten' is not a number \(e\.g\. 0\.10\)\."]


def test_the_page_script_shows_no_stray_text() -> None:
    """Streamlit's magic draws a bare string of a page script as Markdown: only the module
    docstring may be one (a constant's docstring once showed at the top of the page)."""
    import ast

    tree = ast.parse((APP.parent / "views" / "record.py").read_text(encoding="utf-8"))
    bare = [node.lineno for node in tree.body[1:]
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)]
    assert bare == []


# --- the recorder forgives (issue 30) -----------------------------------------------------------


def test_a_second_tap_on_save_saves_nothing_more(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A double tap: the second tap reaches the server after the first saved. It neither saves
    nor reports the empty next hand as "not saved"; the first message stays."""
    app, database = saved_hand_1(tmp_path, monkeypatch)
    saved = texts(app.success)
    assert any(text.startswith("Hand 1 saved") for text in saved)
    # the second tap, as the browser sends it: the button now stands for hand 2 with nothing
    # entered (the page shows it disabled, but the tap was made before it was redrawn)
    tap_as_sent(app, "rec_save_button")
    assert texts(app.error) == []
    assert texts(app.success) == saved
    assert stored_points(database) == {"0001": sc.HAND_1_POINTS}
    assert [note["kind"] for note in pad_data(app)["notes"]] == ["missing"] * 3  # no red tab
    assert app.button(key="rec_save_button").disabled  # nothing entered: nothing to save


def test_a_save_whose_run_was_interrupted_still_says_so(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A double tap under load: the first tap's run writes hand 1 and is interrupted before it
    shows anything; the second tap's run takes the stored state over. The page is then on hand
    2 with hand 1's message under the button, as if the first run had finished."""
    from pipeline.live.storage import save_entry

    database = tmp_path / "live.duckdb"
    app = record_page(database, monkeypatch)
    start(app, "mara, jun, ivo")
    for index, name in enumerate(sc.PLAYERS):
        type_board(app, index, sc.HAND_1[name])
    # the interrupted run: the hand is stored by this page view, its session state untouched
    state = app.session_state["rec_state"]
    save_entry(database, state, dict(sc.HAND_1), [], app.session_state["rec_writer"])
    tap_as_sent(app, "rec_save_button")
    assert stored_points(database) == {"0001": sc.HAND_1_POINTS}
    assert app.subheader[0].value == "Hand 2"
    expected = "Hand 1 saved: " + ", ".join(f"{name} {points:+d}"
                                            for name, points in sc.HAND_1_POINTS.items()) + "."
    shown = [text.replace("\\", "") for text in texts(app.success)]  # markdown escapes off
    assert len([text for text in shown if text.startswith(expected)]) == 1, shown
    assert texts(app.error) == []
    assert board_fields(app) == ["", "", ""]


def test_a_delete_whose_run_was_interrupted_still_says_so(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for a delete: its run removed hand 1 and stopped; the next run (a second tap
    on Delete, which now has no hand to delete) shows hand 1's boards back in the fields, the
    delete's message, and no "saved" message of the hand that is gone."""
    from pipeline.live.storage import delete_last

    app, database = saved_hand_1(tmp_path, monkeypatch)
    delete_last(database, app.session_state["rec_state"], app.session_state["rec_writer"])
    tap_as_sent(app, "rec_delete")
    assert stored_points(database) == {}
    assert app.subheader[0].value == "Hand 1"
    shown = [text.replace("\\", "") for text in texts(app.info)]
    assert [text for text in shown if text.startswith(
        "Hand 1 deleted: its boards are back in the fields")] != [], shown
    assert not [text for text in texts(app.success) if "saved" in text]
    assert board_fields(app) == [sc.HAND_1[name] for name in sc.PLAYERS]


def test_edit_and_delete_stay_in_reach_at_the_top(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Undo, Edit and Delete sit together at the top of the hand, outside the result panel,
    after a save, a delete, its undo and a resume alike."""
    app, database = saved_hand_1(tmp_path, monkeypatch)

    def top_buttons(page: AppTest) -> list[str]:
        keys = [button.key for button in page.button]
        return [key for key in ("rec_undo", "rec_edit", "rec_delete") if key in keys]

    assert top_buttons(app) == ["rec_undo", "rec_edit", "rec_delete"]
    def keys_under(node: Any) -> set[str]:
        found = {getattr(node, "key", None)}
        for child in getattr(node, "children", {}).values():
            found |= keys_under(child)
        return found

    # not in the result panel, which closes after an undo, a delete or a resume
    assert not keys_under(result_panel(app)) & {"rec_edit", "rec_delete"}
    app.button(key="rec_delete").click().run()
    assert top_buttons(app) == ["rec_undo"]  # hand 1 is being re-entered: nothing saved
    app.button(key="rec_undo").click().run()
    assert top_buttons(app) == ["rec_edit", "rec_delete"]  # an undo is not undone
    other = record_page(database, monkeypatch)
    other.button(key="rec_resume_0").click().run()
    assert {"rec_edit", "rec_delete"} <= {button.key for button in other.button}
    assert other.button(key="rec_delete").label == "Delete hand 1"


def test_messages_describe_the_hand_being_entered(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """"Resumed session … at hand 2" is gone once hand 2 is saved."""
    _app, database = saved_hand_1(tmp_path, monkeypatch)
    other = record_page(database, monkeypatch)
    other.button(key="rec_resume_0").click().run()
    assert any("Resumed session" in text for text in texts(other.success))
    for index, name in enumerate(sc.PLAYERS):
        type_board(other, index, sc.HAND_2[name])
    save(other)
    assert other.subheader[0].value == "Hand 3"
    assert not any("Resumed session" in text for text in texts(other.success))


def test_running_totals_sit_on_the_pad_and_the_top_comes_back_after_each_action(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, _database = saved_hand_1(tmp_path, monkeypatch)
    data = pad_data(app)
    assert data["summary"] == ("After hand 1: mara +23 (+2.30) · jun +12 (+1.20) · "
                               "ivo -35 (-3.50)")
    assert data["scroll_to"] == ".st-key-rec_top"
    scrolls = [data["scroll"]]
    app.button(key="rec_delete").click().run()
    scrolls.append(pad_data(app)["scroll"])
    app.button(key="rec_undo").click().run()
    scrolls.append(pad_data(app)["scroll"])
    assert scrolls == sorted(set(scrolls))  # every action raises it: the pad scrolls the top in
    # the draft the browser keeps taps under: this session's hand being entered
    session_id = pad_data(app)["draft"].split(":")[0]
    assert pad_data(app)["draft"] == f"{session_id}:2"


def test_why_the_button_stays_after_a_fantasyland_hand(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    app, _database = saved_hand_1(tmp_path, monkeypatch)
    assert "stays" not in " ".join(texts(app.caption)[:1])  # hand 1 moved it to mara
    for index, name in enumerate(sc.PLAYERS):
        type_board(app, index, sc.HAND_2[name])
    save(app)  # mara played Fantasyland: the button stays with her
    caption = texts(app.caption)[0].replace("\\", "")  # as shown: Markdown escapes removed
    assert caption.startswith("Button mara")
    assert "the button stays with mara: hand 2 was played with Fantasyland" in caption


def test_the_button_picker_is_there_before_names_are_applied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = record_page(tmp_path / "live.duckdb", monkeypatch)
    picker = app.selectbox(key="rec_setup_button")
    assert picker.options == ["the last player named"]
    app.text_input(key="rec_setup_players").input("mara, jun, ivo").run()
    assert app.selectbox(key="rec_setup_button").options == ["mara", "jun", "ivo"]
    assert app.selectbox(key="rec_setup_button").value == "ivo"
    app.selectbox(key="rec_setup_button").set_value("jun").run()
    app.button(key="rec_start").click().run()
    assert texts(app.caption)[0].startswith("Button jun · ivo acts first")
