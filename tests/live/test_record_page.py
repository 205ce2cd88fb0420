"""The Record page run headless with AppTest: a whole live session through the real app.

The session (tests/live/scenario.py) has a foul, a Fantasyland entry and a stay, a typo that is
rejected, boards tapped in on the card picker, an edit and a delete. The database and the totals
the page shows are checked against numbers worked out by hand (and re-derived independently).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from pipeline.store import hand_key
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


def start(app: AppTest, players: str, stake: float = 0.1) -> None:
    app.text_input(key="rec_setup_players").input(players).run()
    app.number_input(key="rec_setup_stake").set_value(stake).run()
    app.button(key="rec_start").click().run()
    assert not app.exception, app.exception


def type_board(app: AppTest, index: int, text: str) -> None:
    app.text_input(key=f"rec_board_{index}").input(text).run()
    assert not app.exception, app.exception


def tap_board(app: AppTest, index: int, text: str) -> None:
    """Enter a board by tapping its cards on the picker (rows fill top, middle, bottom)."""
    app.segmented_control(key="rec_player").set_value(index).run()
    for token in text.replace("/", " ").split():
        app.button(key=f"rec_card_{token}").click().run()
        assert not app.exception, app.exception


def save(app: AppTest) -> None:
    app.button(key="rec_save_button").click().run()
    assert not app.exception, app.exception


def texts(elements) -> list[str]:  # noqa: ANN001
    return [element.value for element in elements]


def shown_totals(app: AppTest) -> dict[str, tuple[int, str]]:
    frame = app.dataframe[0].value
    return {row["player"]: (int(row["points"]), row["money"]) for row in frame.to_dict("records")}


def stored_points(database: Path) -> dict[str, dict[str, int]]:
    with duckdb.connect(str(database), read_only=True) as connection:
        rows = connection.execute(
            "SELECT h.hand_id, r.player, r.points FROM results r JOIN hands h USING (hand_key)"
        ).fetchall()
    points: dict[str, dict[str, int]] = {}
    for hand_id, player, value in rows:
        points.setdefault(hand_id[-4:], {})[player] = value
    return points


def test_a_live_session_on_the_record_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database = tmp_path / "live.duckdb"
    app = record_page(database, monkeypatch)
    assert app.title[0].value == "Record"
    start(app, "mara, jun, ivo")
    assert [field.label for field in app.text_input] == ["**mara**", "**jun**", "**ivo** · button"]

    # Hand 1: mara typed, jun typed with a typo (rejected), ivo tapped in on the picker.
    type_board(app, 0, sc.HAND_1["mara"])
    type_board(app, 1, sc.HAND_1_TYPO)
    assert r"bottom\: 'Qx' is not a card" in " ".join(texts(app.error))
    tap_board(app, 2, sc.HAND_1["ivo"])
    assert app.text_input(key="rec_board_2").value == sc.HAND_1["ivo"]
    assert app.button(key="rec_card_Qs").disabled      # mara's card: greyed out
    assert app.button(key="rec_card_8d").disabled      # ivo's card
    assert not app.button(key="rec_card_Ks").disabled  # still in the deck
    save(app)                                          # refused: jun's board has the typo
    assert any(text.startswith(r"Not saved\: 1 board") for text in texts(app.error))
    assert texts(app.success) == []
    assert not database.exists() or stored_points(database) == {}
    type_board(app, 1, sc.HAND_1["jun"])
    save(app)
    assert texts(app.success) == [r"Hand 1 saved\: mara \+23, jun \+12, ivo \-35\. "
                                  r"Fantasyland next\: mara \(14 cards\)\. "
                                  r"The result is at the top of the page\."]
    result = " ".join(texts(app.markdown))
    assert "**mara** +23 points · royalties 7/0/6 · **enters Fantasyland** (14 cards)" in result
    assert ("**ivo** -35 points · :red[**foul**] — middle \\(full house, eights full of fives\\) "
            "beats bottom \\(seven high\\)") in result
    assert "Button **mara** · jun acts first · Fantasyland: mara (14 cards)" in result
    assert shown_totals(app) == {"mara": (23, "+2.30"), "jun": (12, "+1.20"), "ivo": (-35, "-3.50")}
    # The fields are empty again, mara is pre-marked for Fantasyland.
    assert texts(app.text_input) == ["", "", ""]
    assert texts(app.checkbox) == [True, False, False]
    assert app.checkbox[0].label == "Fantasyland this hand (14 cards)"

    # Hand 2: mara in Fantasyland stays (trips on top); jun's board tapped in.
    type_board(app, 0, sc.HAND_2["mara"])
    tap_board(app, 1, sc.HAND_2["jun"])
    type_board(app, 2, sc.HAND_2["ivo"])
    save(app)
    assert "**stays in Fantasyland** (14 cards)" in " ".join(texts(app.markdown))
    assert "Button **mara** · jun acts first" in " ".join(texts(app.markdown))  # button stays
    assert texts(app.checkbox) == [True, False, False]

    # Hand 3: mara in Fantasyland again, no stay.
    for index, name in enumerate(sc.PLAYERS):
        type_board(app, index, sc.HAND_3[name])
    save(app)
    assert texts(app.checkbox) == [False, False, False]
    assert shown_totals(app)["mara"] == (23 + 39 + 13, "+7.50")

    # Edit hand 3: ivo's middle and bottom swapped -> a foul; re-scored in place.
    app.button(key="rec_edit").click().run()
    assert app.subheader[0].value == "Editing hand 3"
    assert app.text_input(key="rec_board_2").value == sc.HAND_3["ivo"]
    assert texts(app.checkbox) == [True, False, False]
    type_board(app, 2, sc.HAND_3_EDITED_IVO)
    save(app)
    assert texts(app.success)[0].startswith(
        r"Hand 3 changed and re\-scored\: mara \+24, jun \-6, ivo \-18\.")
    assert app.subheader[0].value == "Hand 4"

    # Hand 4, then delete it (asked to confirm).
    for index, name in enumerate(sc.PLAYERS):
        type_board(app, index, sc.HAND_4[name])
    save(app)
    assert sorted(stored_points(database)) == ["0001", "0002", "0003", "0004"]
    app.button(key="rec_delete").click().run()
    assert texts(app.warning) == ["Delete hand 4 from the database?"]
    app.button(key="rec_delete_yes").click().run()
    assert texts(app.success) == [r"Hand 4 deleted\."]
    assert app.subheader[0].value == "Hand 4"

    # The page's totals and the database agree with the hand-worked session.
    expected_money = {name: f"{amount:+.2f}" for name, amount in sc.FINAL_MONEY.items()}
    assert shown_totals(app) == {name: (sc.FINAL_TOTALS[name], expected_money[name])
                                 for name in sc.PLAYERS}
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

    # Once the database has hands, the whole app is there and Record is still one of its pages.
    app.switch_page("views/overview.py").run()
    assert not app.exception, app.exception
    app.switch_page(PAGE).run()
    assert app.title[0].value == "Record"


def test_player_names_are_shown_as_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = record_page(tmp_path / "live.duckdb", monkeypatch)
    start(app, "<script>alert(1)</script>, **bold**")
    labels = [field.label for field in app.text_input]
    escaped = "&lt;script\\>alert\\(1\\)&lt;/script\\>"
    assert labels == [f"**{escaped}**", "**\\*\\*bold\\*\\*** · button"]
    assert app.segmented_control(key="rec_player").options == [escaped, "\\*\\*bold\\*\\*"]
    everything = " ".join(texts(app.markdown) + texts(app.caption) + labels)
    assert "<script>" not in everything


def test_setup_problems_are_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = record_page(tmp_path / "live.duckdb", monkeypatch)
    start(app, "mara, MARA")
    assert texts(app.error) == [r"player 'MARA' is listed twice \(also as 'mara'\)"]
    assert app.button(key="rec_start")  # still on the setup form
