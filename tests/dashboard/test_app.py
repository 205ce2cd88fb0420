"""Every page of the Streamlit app, run headless with AppTest on the ingested fixture database.

Shown numbers (metrics, table cells) are checked against values recomputed from the records.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import component_data
from tests.dashboard.conftest import APP
from tests.dashboard.fixture_hands import JUN, MARA, OBRIEN, SCRIPT

PAGES = (
    "views/overview.py", "views/player_review.py", "views/compare_players.py",
    "views/point_flow.py", "views/sessions.py", "views/hand_browser.py", "views/data.py",
)


def app_on(database: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The app pointed at ``database``, run once."""
    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    assert not app.exception, [e.message for e in app.exception]
    return app


def open_page(app: AppTest, page: str) -> AppTest:
    """Switch page and check it ran without an exception box."""
    app.switch_page(page).run()
    assert not app.exception, (page, [e.message for e in app.exception])
    return app


def metrics(app: AppTest) -> dict[str, str]:
    """Shown metric values by label."""
    return {metric.label: metric.value for metric in app.metric}


def number(text: str) -> float:
    """The first number in a shown value (``+1.25 ± 0.3`` -> 1.25, ``12.5 %`` -> 12.5)."""
    match = re.search(r"[-+]?\d[\d,]*(?:\.\d+)?", text)
    assert match, text
    return float(match.group(0).replace(",", ""))


TABLES = {
    "leaderboard": ("player", "hands", "points", "points_per_hand", "foul_rate"),
    "by_variant": ("variant", "hands", "points_se"),
    "by_position": ("seat_label", "hands"),
    "kpi_table": ("player", "fl_stay_rate"),
    "session_table": ("session_id", "ended_at"),
    "net_pairs": ("winner", "payer"),
    "session_hands": ("hand_id", "disagrees"),
    "hand_table": ("hand_id", "max_royalties"),
    "verdicts": ("top_class", "reported_points"),
    "matchups": ("rows_won", "settled"),
    "rejects": ("reason", "raw"),
    "disagreements": ("rescored", "reported"),
    "files": ("stored", "duplicates", "status", "ingested_at"),
}


def frame(app: AppTest, name: str):  # noqa: ANN201
    """The shown table ``name`` (recognised by its columns) as a polars DataFrame."""
    import polars as pl

    wanted = set(TABLES[name])
    for element in app.dataframe:
        value = element.value
        if wanted <= set(value.columns):
            return pl.from_pandas(value)
    raise AssertionError(f"no table {name!r}: {[list(e.value.columns) for e in app.dataframe]}")


# --- start page -------------------------------------------------------------------------------


def test_missing_database_shows_the_start_page(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    app = app_on(tmp_path / "nothing-here.duckdb", monkeypatch)
    assert app.title[0].value == "OFC analytics"
    assert any("no database" in info.value for info in app.info)
    assert [button.label for button in app.button] == ["Load the demo data", "Ingest"]
    assert any("ofc ingest" in code.value for code in app.code)


def test_empty_database_start_page_then_upload(tmp_path, monkeypatch, fixture_source) -> None:  # noqa: ANN001
    from pipeline import store
    database = tmp_path / "empty.duckdb"
    store.connect(database).close()
    app = app_on(database, monkeypatch)
    assert any("holds no hands" in info.value for info in app.info)
    content = fixture_source[0].read_bytes()
    app.file_uploader(key="uploads").set_value(("my-hands.jsonl", content, "application/json"))
    app.run()
    app.button(key="ingest_button").click().run()
    assert not app.exception, [e.message for e in app.exception]
    # the hands are in: the same address now shows the overview
    assert app.title[0].value == "Overview"
    assert metrics(app)["Hands"] == "47"
    assert metrics(app)["Quarantined records"] == "2"
    assert app.session_state["ofc_last_ingest"][0]["stored"] == 47


# --- pages ------------------------------------------------------------------------------------


def test_overview_numbers(fixture_db, expected, monkeypatch) -> None:  # noqa: ANN001
    app = app_on(fixture_db, monkeypatch)
    shown = metrics(app)
    assert shown["Hands"] == str(expected.hands)
    assert shown["Players"] == "4"
    assert shown["Sessions"] == "8"  # two sessions of three at T1, one each of two at T2
    assert (shown["First hand"], shown["Last hand"]) == ("2026-03-01", "2026-03-02")
    assert number(shown["Fouled boards"]) == pytest.approx(
        round(100 * expected.fouls / expected.boards, 1))
    assert shown["Audit disagreements"] == str(expected.disagreements)
    assert shown["Quarantined records"] == "2"
    leaderboard = frame(app, "leaderboard")
    for player, hands, points in leaderboard.select("player", "hands", "points").rows():
        assert hands == expected.players[player].hands
        assert points == expected.players[player].points


@pytest.mark.parametrize("hero", [MARA, SCRIPT])
def test_player_review_kpis(fixture_db, expected, monkeypatch, hero) -> None:  # noqa: ANN001
    app = open_page(app_on(fixture_db, monkeypatch), "views/player_review.py")
    app.selectbox(key="hero").set_value(hero).run()
    assert not app.exception
    totals = expected.players[hero]
    shown = metrics(app)
    mean = totals.points / totals.hands
    se = math.sqrt(sum((p - mean) ** 2 for p in totals.point_list) / (totals.hands - 1)) / math.sqrt(totals.hands)
    per_hand, error = (number(part) for part in shown["Points / hand"].split("±"))
    assert per_hand == pytest.approx(mean, abs=0.005)
    assert error == pytest.approx(se, abs=0.005)
    assert shown["Hands"] == str(totals.hands)
    assert number(shown["Foul rate"]) == pytest.approx(100 * totals.fouls / totals.hands, abs=0.05)
    assert number(shown["Royalties / hand"]) == pytest.approx(totals.royalties / totals.hands, abs=0.005)
    assert number(shown["Scoop rate"]) == pytest.approx(100 * totals.scoops / totals.matchups, abs=0.05)
    normal = totals.hands - totals.fl_hands
    assert number(shown["Fantasyland entry"]) == pytest.approx(100 * totals.fl_entries / normal, abs=0.05)
    assert number(shown["Fantasyland points"]) == totals.fl_points
    # the foul rate's Wilson interval, recomputed here
    n, p, z = totals.hands, totals.fouls / totals.hands, 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    caption = " ".join(c.value for c in app.caption)
    assert f"{max(0, centre - margin) * 100:.1f} % – {(centre + margin) * 100:.1f} %" in caption
    app.session_state["review_tab"] = "By variant and position"
    app.run()
    by_variant = frame(app, "by_variant")
    assert by_variant["hands"].sum() == totals.hands
    assert by_variant["points"].sum() == totals.points
    by_position = frame(app, "by_position")
    assert by_position["hands"].sum() == totals.hands


def test_a_page_view_looks_at_the_aggregates_readiness_once(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    """Every question of a page view goes through the view's one read-only connection, which
    nothing can write while it is open: whether the kept aggregates are current is looked at
    once per view, not once per question (each look is a few queries), and the view's answers
    still come from the aggregates."""
    import streamlit as st

    from pipeline.read import totals

    looked: list[bool] = []
    real = totals._aggregates_ready

    def counting(connection):  # noqa: ANN001, ANN202
        looked.append(real(connection))
        return looked[-1]

    monkeypatch.setattr(totals, "_aggregates_ready", counting)
    st.cache_data.clear()
    app = app_on(fixture_db, monkeypatch)
    looked.clear()
    open_page(app, "views/player_review.py")
    assert looked == [True]  # one view: one look, and the aggregates are current
    looked.clear()
    app.selectbox(key="hero").set_value(SCRIPT).run()  # a second view, new questions
    assert looked == [True]


def test_player_review_fantasyland_numbers(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    app = open_page(app_on(fixture_db, monkeypatch), "views/player_review.py")
    app.selectbox(key="hero").set_value(MARA).run()
    shown = metrics(app)
    assert number(shown["Fantasyland stay"]) == 50.0  # one stay in two Fantasyland hands


def test_compare_players_table(fixture_db, expected, monkeypatch) -> None:  # noqa: ANN001
    app = open_page(app_on(fixture_db, monkeypatch), "views/compare_players.py")
    table = frame(app, "kpi_table")
    assert set(table["player"].to_list()) == {MARA, JUN, SCRIPT, OBRIEN}
    for player, hands, points, foul_rate in table.select(
            "player", "hands", "points", "foul_rate").rows():
        totals = expected.players[player]
        assert (hands, points) == (totals.hands, totals.points)
        assert foul_rate == pytest.approx(totals.fouls / totals.hands)
    app.session_state["compare_tab"] = "Session by session"
    app.run()
    sessions = frame(app, "session_table")
    assert sessions.height == 8


def test_point_flow_pairs(fixture_db, expected, monkeypatch) -> None:  # noqa: ANN001
    app = open_page(app_on(fixture_db, monkeypatch), "views/point_flow.py")
    net = frame(app, "net_pairs")
    want = {(p, o): v for (p, o), v in expected.net.items() if v > 0}
    got = {(w, p): v for w, p, v in net.select("winner", "payer", "points").rows()}
    assert got == want
    assert len(app.get("plotly_chart")) == 2  # heatmap and Sankey; the rest in other tabs
    # one session only: the pairs of that session's hands
    app.selectbox(key="flow_scope").select_index(1).run()
    assert not app.exception
    per_session = frame(app, "net_pairs")
    assert per_session["points"].sum() <= net["points"].sum()


def test_sessions_page(fixture_db, expected, monkeypatch) -> None:  # noqa: ANN001
    app = open_page(app_on(fixture_db, monkeypatch), "views/sessions.py")
    sessions = frame(app, "session_table")
    assert sessions.height == 8
    for player in expected.players:
        mine = sessions.filter(sessions["player"] == player)
        assert mine["points"].sum() == expected.players[player].points
    opened = app.selectbox(key="open_session").value
    hands = frame(app, "session_hands")
    assert hands.height == sessions.filter(sessions["session_id"] == opened)["hands"][0]
    assert metrics(app)["Hands"] == str(hands.height)


def test_hand_browser_filters_and_replay(fixture_db, fixture_source, monkeypatch) -> None:  # noqa: ANN001
    records = {record["hand_id"]: record for record in fixture_source[1]}
    app = open_page(app_on(fixture_db, monkeypatch), "views/hand_browser.py")
    assert any("47 hands match" in caption.value for caption in app.caption)
    app.checkbox(key="hb_disagree").check().run()
    assert any("1 hands match" in caption.value for caption in app.caption)
    table = frame(app, "hand_table")
    assert table["hand_id"].to_list() == ["T1-010"]
    app.checkbox(key="hb_disagree").uncheck().run()
    app.checkbox(key="hb_fl").check().run()
    hand_ids = frame(app, "hand_table")["hand_id"].to_list()
    assert {"T1-005", "T1-006", "T1-007"} <= set(hand_ids)
    # replay mara's stay hand: trips on top dealt in Fantasyland
    position = frame(app, "hand_table")["hand_id"].to_list().index("T1-006")
    assert app.selectbox(key="hb_hand").options[position].startswith("T1-006")
    app.selectbox(key="hb_hand").select_index(position).run()
    assert not app.exception
    replay = component_data(app, "hb_replay_streets")
    mara = next(player for player in replay["players"] if player["name"] == MARA)
    assert {"3s", "3h", "3d"} <= set(mara["final"]["top"])
    assert "Fantasyland (14 cards)" in mara["badges"]
    verdicts = frame(app, "verdicts")
    record = records["T1-006"]
    from tests.dashboard.fixture_hands import score_record

    want = score_record(record)
    assert dict(verdicts.select("player", "points").rows()) == want
    matchups = frame(app, "matchups")
    assert matchups.height == 6
    # every street is in the page at once (the browser steps through them): a Fantasyland hand
    # has one street for mara, set at once, and the others' streets add up to their boards
    assert replay["last_street"] >= 2 and replay["street"] == replay["last_street"]
    for player in replay["players"]:
        placed = [card["card"] for street in player["streets"] for card in street
                  if card["row"] != "discard"]
        assert sorted(placed) == sorted(card for row in ("top", "middle", "bottom")
                                        for card in player["final"][row]), player["name"]
    assert len([street for street in mara["streets"] if street]) == 1


def test_data_page(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    app = open_page(app_on(fixture_db, monkeypatch), "views/data.py")
    rejects = frame(app, "rejects")
    reasons = " | ".join(rejects["reason"].to_list())
    assert rejects.height == 2
    assert "invalid JSON" in reasons
    assert "appears twice" in reasons
    disagreements = frame(app, "disagreements")
    row = disagreements.row(0, named=True)
    assert (row["hand_id"], row["player"]) == ("T1-010", JUN)
    assert row["reported"] == row["rescored"] + 5
    files = frame(app, "files")
    assert files["stored"].to_list() == [47]


# --- untrusted names ----------------------------------------------------------------------------


def test_player_names_render_as_text_on_every_page(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    app = app_on(fixture_db, monkeypatch)
    app.multiselect(key="f_players").set_value([SCRIPT, OBRIEN]).run()
    for page in PAGES:
        open_page(app, page)
        if page == "views/player_review.py":
            app.selectbox(key="hero").set_value(SCRIPT).run()
        for element in [*app.markdown, *app.caption, *app.get("html")]:
            body = getattr(element, "value", None) or element.proto.body
            assert "<script" not in body, (page, body)
        markdown_bodies = " ".join(e.value for e in [*app.markdown, *app.caption])
        if page == "views/player_review.py":
            assert "&lt;script\\>alert\\(1\\)&lt;/script\\>" in markdown_bodies
    # table cells carry the raw names as plain text
    open_page(app, "views/compare_players.py")
    assert {SCRIPT, OBRIEN} <= set(frame(app, "kpi_table")["player"].to_list())


def test_sidebar_filters_narrow_the_overview(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    app = app_on(fixture_db, monkeypatch)
    app.multiselect(key="f_variants").set_value(["classic"]).run()
    assert metrics(app)["Hands"] == "12"
    assert metrics(app)["Players"] == "2"
    app.multiselect(key="f_variants").set_value([]).run()
    app.multiselect(key="f_players").set_value([JUN]).run()
    sessions = app.multiselect(key="f_sessions")
    assert len(sessions.options) == 2  # jun's two sessions at T1
    sessions.select(sessions.options[0]).run()
    assert int(metrics(app)["Hands"]) in (20, 15)
    # choosing another player drops the session that is no longer offered, without an error
    app.multiselect(key="f_players").set_value([OBRIEN]).run()
    assert not app.exception
    assert app.multiselect(key="f_sessions").value == []
    assert metrics(app)["Hands"] == "12"


def in_order(node):  # noqa: ANN001, ANN201
    """Every element under ``node`` in page order."""
    children = getattr(node, "children", None)
    if children is None:
        yield node
        return
    for index in sorted(children):
        yield from in_order(children[index])


def test_overview_with_a_player_counts_that_player(fixture_db, expected, monkeypatch) -> None:  # noqa: ANN001
    """Players and fouls of the chosen player, as the table beside them shows; fouls are play,
    not data health."""
    app = app_on(fixture_db, monkeypatch)
    app.multiselect(key="f_players").set_value([JUN]).run()
    shown = metrics(app)
    leaderboard = frame(app, "leaderboard")
    assert leaderboard["player"].to_list() == [JUN]
    assert shown["Players"] == "1"
    totals = expected.players[JUN]
    assert number(shown["Fouled boards"]) == pytest.approx(
        round(100 * totals.fouls / totals.hands, 1))
    assert leaderboard["foul_rate"][0] == pytest.approx(totals.fouls / totals.hands)
    order = [element.label if element.type == "metric" else
             element.value if element.type in ("subheader", "header", "title") else None
             for element in in_order(app.main)]
    assert order.index("Fouled boards") < order.index("Data health")


def test_coaching_report_draws_its_other_charts_when_asked(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    """The report page draws the ranked list's chart and the two rolling charts; the report's
    other charts are behind a lazy expander (ten Plotly charts at once cost the page most of
    its time in the browser), all of them there once it is opened."""
    app = open_page(app_on(fixture_db, monkeypatch), "views/report.py")
    first = len(app.get("plotly_chart"))
    panel = [expander for expander in app.expander if expander.key == "report_charts"]
    assert len(panel) == 1 and panel[0].label.startswith("The other ")
    others = int(panel[0].label.split()[2])
    assert others >= 3 and 1 <= first <= 3
    app.session_state["report_charts"] = True
    app.run()
    assert not app.exception, [e.message for e in app.exception]
    assert len(app.get("plotly_chart")) == first + others


def test_player_review_opens_one_tab_with_one_rolling_window(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    """The headline and the open tab only (the rest is one click away), and one rolling-window
    slider whichever tab is open (there were two: 100 for the foul chart, 200 for progress)."""
    app = open_page(app_on(fixture_db, monkeypatch), "views/player_review.py")
    assert [tab.label for tab in app.tabs][:1] == ["Results"]
    assert len(app.get("plotly_chart")) == 1  # the cumulative points, not nine charts
    sliders = 0
    for label in [tab.label for tab in app.tabs]:
        app.session_state["review_tab"] = label
        app.run()
        assert not app.exception, (label, [e.message for e in app.exception])
        sliders += sum(1 for slider in app.select_slider if "Rolling window" in slider.label)
    assert sliders == 1


def test_point_flow_names_games_by_table_and_time_once_per_pair(fixture_db, expected,
                                                               monkeypatch) -> None:  # noqa: ANN001
    """Game by game: no session hashes, one name per game for everyone at the table, each pair
    once per game, and the games' points add up to the pairs' net points."""
    app = open_page(app_on(fixture_db, monkeypatch), "views/point_flow.py")
    app.session_state["flow_tab"] = "Game by game"
    app.run()
    assert not app.exception
    element = next(e for e in app.dataframe if "game" in e.value.columns)
    import polars as pl

    games = pl.from_pandas(element.value)
    shown = [column for column in json.loads(element.proto.columns)]
    assert "session_id" not in games.columns
    for value in games["game"].to_list():
        assert re.fullmatch(r"T\d+ · 2026-03-0\d \d\d:\d\d", value), value
    # each pair once per game, whoever's side
    keys = [(game, frozenset((winner, payer)))
            for game, winner, payer in games.select("game", "winner", "payer").rows()]
    assert len(keys) == len(set(keys))
    # everyone at a table in one run of hands shares the game's name: T1 had two games of three
    assert games.filter(pl.col("game").str.starts_with("T1"))["game"].n_unique() == 2
    assert all((games["points"] >= 0).to_list())
    net = {}
    for winner, payer, points in games.select("winner", "payer", "points").rows():
        net[(winner, payer)] = net.get((winner, payer), 0) + points
        net[(payer, winner)] = net.get((payer, winner), 0) - points
    assert net == {pair: value for pair, value in expected.net.items() if pair in net}
    assert shown  # the table carries its own column settings (labels in words)


MY_PAGES = {
    "views/overview.py": (None, ()),
    "views/player_review.py": ("review_tab", ("Results", "Royalties and Fantasyland",
                                              "By variant and position")),
    "views/compare_players.py": ("compare_tab", ("Cumulative points", "Session by session")),
    "views/point_flow.py": ("flow_tab", ("Who paid whom", "Over time", "Game by game")),
    "views/sessions.py": ("sessions_tab", ("Open a session",)),
    "views/hand_browser.py": (None, ()),
    "views/data.py": (None, ()),
}
"""The pages (and tabs) whose tables this dashboard names itself; the comparison tables and the
report's are the coaching report's (their own tests)."""


def shown_labels(element) -> dict[str, str]:  # noqa: ANN001
    """Each column a table shows, with the label it shows it under."""
    config = json.loads(element.proto.columns or "{}")
    order = list(element.proto.column_order) or list(element.value.columns)
    labels = {}
    for name in order:
        settings = config.get(f"col:name:{name}") or config.get(name) or {}
        if settings.get("hidden"):
            continue
        labels[name] = settings.get("label") or name
    return labels


def test_tables_speak_in_words(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    """No table shows a code name (points_per_hand, is_chosen): every column it shows has a
    label in words; hashes (session ids, hand keys) are not shown."""
    app = app_on(fixture_db, monkeypatch)
    seen = 0
    for page, (key, tabs) in MY_PAGES.items():
        open_page(app, page)
        for tab in tabs or (None,):
            if tab is not None:
                app.session_state[key] = tab
                app.run()
                assert not app.exception, (page, tab)
            for element in app.dataframe:
                labels = shown_labels(element)
                seen += 1
                assert not [label for label in labels.values() if "_" in label], (page, tab, labels)
                assert not {"session_id", "hand_key", "total"} & set(labels), (page, tab, labels)
    assert seen >= 12


def test_a_rolling_window_cut_short_says_why(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    """The slider says 200, the player has fewer hands: the titles say the window used, and a
    line under them says why it is not the one chosen."""
    app = open_page(app_on(fixture_db, monkeypatch), "views/sessions.py")
    app.session_state["sessions_tab"] = "Progress of a player"
    app.run()
    assert app.select_slider(key="sessions_progress_window").value == 200
    titles = [chart.proto.spec for chart in app.get("plotly_chart")]
    used = re.search(r"rolling (\d+) hands", " ".join(titles))
    assert used and int(used.group(1)) < 200
    why = [caption.value for caption in app.caption if "not the 200 chosen" in caption.value]
    assert why and f"Rolling {used.group(1)} hands" in why[0]
