"""pipeline.live (entry, session, text, storage): entry checks, canonical live records, scoring,
the button and Fantasyland, edit and delete, and storing through ingestion — against hand-derived
expectations."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import duckdb
import pytest

from pipeline.ingest.driver import ingest_paths
from pipeline.live.entry import (
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
    delete_last_hand,
    edit_last_hand,
    record_hand,
    start_session,
)
from pipeline.live.storage import (
    LiveStoreError,
    remove_hand,
    replace_hand,
    store_hand,
    stored_hand_ids,
)
from pipeline.live.text import board_text, format_money, format_points
from pipeline.records.validate import parse_hand
from pipeline.rules.cards import parse_cards
from pipeline.rules.game import Row, Variant
from pipeline.rules.ruleset import preset
from pipeline.store import hand_key
from tests.live import scenario as sc

START = datetime(2026, 11, 1, 20, 15, 3, tzinfo=UTC)


def ticking_clock(start: datetime = START, step: timedelta = timedelta(minutes=2)):  # noqa: ANN201
    """A clock that returns start, start + step, ... (one tick per call)."""
    ticks = iter(start + step * number for number in range(1000))
    return lambda: next(ticks)


def new_session(**options) -> LiveSession:  # noqa: ANN003
    options.setdefault("stake", "0.10")
    options.setdefault("clock", ticking_clock())
    return start_session(sc.PLAYERS, **options)


# --- setting up ---------------------------------------------------------------------------------


def test_start_session_defaults() -> None:
    session = new_session()
    assert session.session_id == "live-20261101-201503"
    assert session.table == session.session_id
    assert session.players == ("mara", "jun", "ivo")
    assert session.variant is Variant.PINEAPPLE
    assert session.rules.name == "standard"
    assert session.stake == Decimal("0.10")
    assert session.button == "ivo"
    assert session.action_order() == ("mara", "jun", "ivo")
    assert session.hand_number == 1
    assert session.fantasyland == {}
    assert session.totals == {"mara": 0, "jun": 0, "ivo": 0}


def test_start_session_options() -> None:
    session = start_session([" mara ", "jun"], "classic", "progressive", 1, button="mara",
                                 session_id="home-7", table="kitchen", fantasyland={"jun": 13})
    assert session.players == ("mara", "jun")
    assert session.variant is Variant.CLASSIC
    assert session.rules.name == "progressive"
    assert session.stake == Decimal("1")
    assert session.button == "mara"
    assert session.action_order() == ("jun", "mara")
    assert (session.session_id, session.table) == ("home-7", "kitchen")
    assert session.fantasyland == {"jun": 13}


def test_stake_defaults_to_the_rules_stake() -> None:
    assert new_session(stake=None).stake == Decimal("0.0")


@pytest.mark.parametrize(
    ("players", "options", "message"),
    [
        (["mara", "Mara"], {}, "listed twice"),
        (["mara", ""], {}, "empty"),
        (["mara"], {}, "2-3 players, got 1"),
        (["a", "b", "c", "d"], {}, "2-3 players, got 4"),
        (["mara", "jun"], {"variant": "omaha"}, "unknown variant"),
        (["mara", "jun"], {"rules": "nope"}, "unknown rules"),
        (["mara", "jun"], {"stake": "ten"}, "not a number"),
        (["mara", "jun"], {"stake": "-1"}, "≥ 0"),
        (["mara", "jun"], {"stake": "1e400"}, "1,000,000"),
        (["mara", "jun"], {"stake": "0.0000000000001"}, "decimals"),
        (["mara", "jun"], {"button": "ivo"}, "not one of the players"),
        (["mara", "jun"], {"fantasyland": {"ivo": 14}}, "not playing"),
        (["mara", "x" * 41], {}, "longer than 40"),
        (["mara", "ju\nn"], {}, "control characters"),
    ],
)
def test_start_session_refuses(players: list[str], options: dict, message: str) -> None:
    with pytest.raises(LiveError, match=message):
        start_session(players, **options)


def test_classic_takes_four_players() -> None:
    session = start_session(["a", "b", "c", "d"], "classic")
    assert len(session.players) == 4


# --- checking an entry --------------------------------------------------------------------------


def test_a_complete_hand_checks_ok() -> None:
    check = check_entry(new_session(), sc.HAND_1)
    assert check.ok
    assert check.problems == ()
    assert set(check.boards) == set(sc.PLAYERS)
    assert check.boards["mara"].top == parse_cards("Qs Qh 5d")
    assert board_text(check.boards["ivo"]) == sc.HAND_1["ivo"]


def test_unknown_card_is_named_with_its_row() -> None:
    check = check_entry(new_session(), {**sc.HAND_1, "jun": sc.HAND_1_TYPO})
    assert not check.ok
    assert [(p.player, p.row, p.kind) for p in check.problems] == [("jun", Row.BOTTOM, "card")]
    assert check.messages_for("jun") == [
        "bottom: 'Qx' is not a card (ranks 23456789TJQKA or 10, suits cdhs or ♣♦♥♠)"
    ]
    assert "jun" not in check.boards
    assert {"mara", "ivo"} <= set(check.boards)


def test_card_used_twice_names_both_places_on_both_fields() -> None:
    check = check_entry(new_session(), {**sc.HAND_1, "ivo": sc.HAND_1_DUPLICATE})
    message = "Ah is used twice: mara bottom and ivo bottom"
    assert check.messages_for("mara") == [message]
    assert check.messages_for("ivo") == [message]
    assert check.messages_for("jun") == []
    assert [p.kind for p in check.problems] == ["duplicate", "duplicate"]


def test_card_used_twice_on_one_board() -> None:
    check = check_entry(["a", "b"], {"a": "As Ks As / 2c 3c 4c 5c 6c / 7d 8d 9d Td Jd"})
    assert check.messages_for("a") == ["As is used twice in a top"]
    check = check_entry(["a", "b"], {"a": "As Ks Qs / 2c 3c 4c 5c 6c / 7d 8d 9d Td As"})
    assert check.messages_for("a") == ["As is used twice: a top and a bottom"] * 2


def test_wrong_row_sizes_and_format() -> None:
    check = check_entry(["a", "b"], {"a": "As Ks / 2c 3c 4c 5c 6c 7c / 7d 8d 9d Td Jd",
                                          "b": "As Ks Qs 2c 3c"})
    assert check.messages_for("a") == ["top needs 3 cards, has 2", "middle needs 5 cards, has 6"]
    assert [p.kind for p in check.problems_for("b")] == ["format"]
    assert check.messages_for("b") == [
        'type 13 cards (they fill top 3, middle 5, bottom 5 in order) or separate the rows '
        'with "/"; got 5 cards']
    check = check_entry(["a", "b"], {"a": "As Ks Qs / 2c 3c 4c 5c 6c 7d 8d 9d Td Jd"})
    assert check.messages_for("a")[0].startswith('a board is three rows separated by "/"')
    assert check.messages_for("a")[0].endswith("got 2 rows")
    check = check_entry(["a", "b"], {"a": "As 3h 4x"})
    assert [(p.row, p.kind) for p in check.problems_for("a")] == [(None, "format"), (None, "card")]
    assert check.messages_for("a")[1] == (
        "'4x' is not a card (ranks 23456789TJQKA or 10, suits cdhs or ♣♦♥♠)")


def test_missing_boards_are_reported_but_can_be_hidden() -> None:
    check = check_entry(new_session(), {"mara": sc.HAND_1["mara"], "jun": "  /  / "})
    assert [(p.player, p.kind) for p in check.problems] == [("jun", "missing"), ("ivo", "missing")]
    assert check.messages_for("jun", include_missing=False) == []
    assert not check.ok


def test_other_spellings_are_read_as_cards() -> None:
    check = check_entry(["a", "b"], {
        "a": "q♠ qh 5D / kc Kd 4♥ 3s 2c / 10c 10d 10h 9s 9c",
        "b": [["As", "Ks", "Js"], "2d 3d 4d 7d 8d", ["8h", "8s", "6c", "6d", "6h"]],
    })
    assert check.ok
    assert board_text(check.boards["a"]) == "Qs Qh 5d / Kc Kd 4h 3s 2c / Tc Td Th 9s 9c"


def test_problems_come_in_player_and_row_order() -> None:
    check = check_entry(new_session(), {
        "mara": "Qs Qh / Kc Kd 4h 3s 2c / Ac Ad Ah 9s 9x",
        "jun": None,
        "ivo": "As 3h 4d / 5h 5s 8h 8s 8d / 2h 3d 4s Ah 7d",
    })
    assert [(p.player, p.row.value if p.row else None, p.kind) for p in check.problems] == [
        ("mara", "top", "size"),
        ("mara", "bottom", "card"),
        ("mara", "bottom", "duplicate"),
        ("jun", None, "missing"),
        ("ivo", "bottom", "duplicate"),
    ]


# --- the record -------------------------------------------------------------------------------


def test_record_hand_builds_the_canonical_record() -> None:
    session, hand = record_hand(new_session(), sc.HAND_1)
    assert hand.record == {
        "hand_id": "live-20261101-201503-0001",
        "site": "live",
        "table": "live-20261101-201503",
        "match_id": "live-20261101-201503",  # a session is one match, of the session's id
        "started_at": "2026-11-01T20:17:03Z",  # the clock's second tick (the first named the session)
        "variant": "pineapple",
        "rules": "standard",
        "button": "ivo",
        "players": [
            {"name": "mara", "seat": 1, "fantasyland": False, "board": {
                "top": ["Qs", "Qh", "5d"], "middle": ["Kc", "Kd", "4h", "3s", "2c"],
                "bottom": ["Ac", "Ad", "Ah", "9s", "9c"]}},
            {"name": "jun", "seat": 2, "fantasyland": False, "board": {
                "top": ["Jd", "Jh", "2d"], "middle": ["6c", "6d", "7h", "7s", "8c"],
                "bottom": ["Tc", "Jc", "Qc", "4c", "5c"]}},
            {"name": "ivo", "seat": 3, "fantasyland": False, "board": {
                "top": ["As", "3h", "4d"], "middle": ["5h", "5s", "8h", "8s", "8d"],
                "bottom": ["2h", "3d", "4s", "6h", "7d"]}},
        ],
    }
    parsed = parse_hand(json.loads(json.dumps(hand.record)))
    assert parsed.key == ("live", "live-20261101-201503-0001")
    assert session.hand_number == 2


def test_naive_clock_times_are_taken_as_utc() -> None:
    session = start_session(sc.PLAYERS, session_id="s", clock=lambda: datetime(2026, 1, 2, 3, 4, 5))
    _, hand = record_hand(session, sc.HAND_1)
    assert hand.started_at == "2026-01-02T03:04:05Z"


def test_hand_one_scores_as_worked_out_by_hand() -> None:
    session, hand = record_hand(new_session(), sc.HAND_1)
    assert hand.points == sc.HAND_1_POINTS == sc.independent_points(sc.HAND_1)
    by_name = {player.name: player for player in hand.scored.players}
    assert {name: by_name[name].royalties for name in by_name} == sc.HAND_1_ROYALTIES
    assert [name for name in by_name if by_name[name].foul] == ["ivo"]
    assert hand.foul_reasons == {
        "ivo": "middle (full house, eights full of fives) beats bottom (seven high)"
    }
    assert {(pair.first, pair.second): pair.settled for pair in hand.scored.pairs} == sc.HAND_1_PAIRS
    assert hand.fantasyland_next == {"mara": 14}
    # Nobody played Fantasyland: the button moves one seat left, marks come from the boards.
    assert session.button == "mara"
    assert session.action_order() == ("jun", "ivo", "mara")
    assert session.fantasyland == {"mara": 14}
    assert session.totals == sc.HAND_1_POINTS
    assert session.money == {"mara": Decimal("2.30"), "jun": Decimal("1.20"), "ivo": Decimal("-3.50")}


def test_the_whole_session() -> None:
    session = new_session()
    session, first = record_hand(session, sc.HAND_1)
    # Hand 2: mara is pre-marked (14 cards) and stays with trips on top.
    session, second = record_hand(session, sc.HAND_2)
    assert second.fantasyland == {"mara": 14}
    assert second.record["button"] == "mara"
    assert [p["fantasyland"] for p in second.record["players"]] == [True, False, False]
    assert second.points == sc.HAND_2_POINTS == sc.independent_points(sc.HAND_2, {"mara"})
    assert {(p.first, p.second): p.settled for p in second.scored.pairs} == sc.HAND_2_PAIRS
    assert second.fantasyland_next == {"mara": 14}
    assert session.button == "mara"  # Fantasyland was played: the button stays
    assert session.fantasyland == {"mara": 14}
    # Hand 3: mara in Fantasyland again, does not stay.
    session, third = record_hand(session, sc.HAND_3)
    assert third.points == sc.HAND_3_POINTS
    assert session.button == "mara"
    assert session.fantasyland == {}
    assert [hand.hand_id[-4:] for hand in session.hands] == ["0001", "0002", "0003"]
    assert session.totals == {"mara": 23 + 39 + 13, "jun": 12 - 37 - 22, "ivo": -35 - 2 + 9}
    # Hand 4: nobody in Fantasyland, the button finally moves.
    session, fourth = record_hand(session, sc.HAND_4)
    assert fourth.record["button"] == "mara"
    assert session.button == "jun"
    assert session.fantasyland == {"mara": 14}
    assert first.hand_id != fourth.hand_id


def test_fantasyland_marks_can_be_changed_for_a_hand() -> None:
    session = new_session()
    _, hand = record_hand(session, sc.HAND_1, fantasyland=["jun"])
    assert hand.fantasyland == {"jun": 14}
    assert [p["fantasyland"] for p in hand.record["players"]] == [False, True, False]
    next_session, _ = record_hand(session, sc.HAND_1, fantasyland={"jun": 16})
    assert next_session.button == "ivo"  # jun played Fantasyland: the button stays
    assert next_session.hands[0].fantasyland == {"jun": 16}
    with pytest.raises(LiveError, match="13-17"):
        record_hand(session, sc.HAND_1, fantasyland={"jun": 20})


def test_progressive_fantasyland_card_counts() -> None:
    session = start_session(sc.PLAYERS, rules="progressive", clock=ticking_clock())
    boards = {**sc.HAND_1, "mara": "Ks Kh 5d / Ac Ad 4h 3s 2c / Qs Qd Qh 9s 9c"}
    session, hand = record_hand(session, boards)
    assert hand.fantasyland_next == {"mara": 15}  # KK: 15 cards
    assert session.fantasyland == {"mara": 15}


def test_a_rejected_hand_changes_nothing() -> None:
    session = new_session()
    with pytest.raises(EntryRejected) as caught:
        record_hand(session, {**sc.HAND_1, "jun": sc.HAND_1_TYPO})
    assert caught.value.check.messages_for("jun")[0].startswith("bottom: 'Qx' is not a card")
    assert "jun: bottom: 'Qx' is not a card" in str(caught.value)
    assert session.hands == ()
    assert session.hand_number == 1


# --- edit and delete ------------------------------------------------------------------------------


def test_edit_last_hand_rescores_and_keeps_its_identity() -> None:
    session = new_session()
    for boards in (sc.HAND_1, sc.HAND_2, sc.HAND_3):
        session, _ = record_hand(session, boards)
    before = session.hands[-1]
    session, edited = edit_last_hand(session, {**sc.HAND_3, "ivo": sc.HAND_3_EDITED_IVO})
    assert (edited.hand_id, edited.started_at, edited.button) == (
        before.hand_id, before.started_at, before.button)
    assert edited.fantasyland == {"mara": 14}
    assert edited.points == sc.HAND_3_EDITED_POINTS
    assert sc.independent_points({**sc.HAND_3, "ivo": sc.HAND_3_EDITED_IVO}, {"mara"}) == edited.points
    assert edited.foul_reasons["ivo"] == "middle (king-high straight) beats bottom (two pair, aces and fours)"
    assert len(session.hands) == 3
    assert session.totals == sc.FINAL_TOTALS
    assert session.money == sc.FINAL_MONEY


def test_an_edit_that_loses_fantasyland_updates_the_marks() -> None:
    session, _ = record_hand(new_session(), sc.HAND_1)
    session, edited = edit_last_hand(
        session, {**sc.HAND_1, "mara": "Qs 2s 5d / Kc Kd 4h 3s 2c / Ac Ad Ah 9s 9c"}
    )
    assert session.fantasyland == {}
    # mara vs jun: rows 1-2, royalties 6-10 -> -5; mara vs ivo (foul): 6 + 6 -> +12.
    assert edited.points == {"mara": 7, "jun": 21, "ivo": -28}


def test_delete_last_hand_restores_the_session() -> None:
    session = new_session()
    session, _ = record_hand(session, sc.HAND_1)
    after_one = session
    session, _ = record_hand(session, sc.HAND_2)
    session, deleted = delete_last_hand(session)
    assert deleted.number == 2
    assert session.hands == after_one.hands
    assert (session.button, dict(session.fantasyland)) == ("mara", {"mara": 14})
    assert session.totals == sc.HAND_1_POINTS
    assert session.hand_number == 2
    session, again = record_hand(session, sc.HAND_2)
    assert again.hand_id == deleted.hand_id


def test_edit_or_delete_without_a_hand() -> None:
    with pytest.raises(LiveError, match="no hand to edit"):
        edit_last_hand(new_session(), sc.HAND_1)
    with pytest.raises(LiveError, match="no hand to delete"):
        delete_last_hand(new_session())


# --- entering cards one tap at a time -------------------------------------------------------------


def test_tapped_cards_fill_rows_in_order() -> None:
    text, row = "", Row.TOP
    rows_seen = []
    for card in ["As", "3h", "4d", "5h", "5s", "8h", "8s", "8d", "2h", "3d", "4s", "6h", "7d"]:
        text, row = add_card(text, card, row)
        rows_seen.append(row)
    assert text == sc.HAND_1["ivo"]
    assert rows_seen[:3] == [Row.TOP, Row.TOP, Row.MIDDLE]
    assert rows_seen[-1] is None
    assert add_card(text, "Kc", Row.TOP) == (text, None)


def test_a_tap_into_a_full_row_goes_to_the_first_row_with_room() -> None:
    assert add_card("As 3h 4d / 5h / ", "Kc", Row.TOP) == ("As 3h 4d / 5h Kc /", Row.MIDDLE)
    assert add_card("", 51, Row.BOTTOM) == ("/ / As", Row.BOTTOM)


def test_taking_cards_back() -> None:
    assert remove_last_card("As 3h 4d / 5h 5s / 2h", Row.MIDDLE) == "As 3h 4d / 5h / 2h"
    assert remove_last_card("As 3h 4d / / ", Row.BOTTOM) == "As 3h / /"
    assert remove_last_card("", None) == "/ /"


def test_cards_in_entries_skips_bad_tokens() -> None:
    used = cards_in_entries(["As Qx / 10h", None, [["2c"], [], []]])
    assert used == {51, 34, 0}


def test_entry_rows_is_forgiving() -> None:
    assert entry_rows("As Kd / 2c / 3c / 4c") == [["As", "Kd"], ["2c"], ["3c", "4c"]]
    assert entry_rows("As, Kd") == [["As", "Kd"], [], []]
    assert open_row(sc.HAND_1["mara"]) is None
    assert open_row("As 3h 4d / / ", Row.TOP) is Row.MIDDLE


def test_formatting() -> None:
    assert [format_points(value) for value in (7, -9, 0)] == ["+7", "-9", "0"]
    assert [format_money(Decimal(value)) for value in ("0.7", "-0.9", "0")] == [
        "+0.70", "-0.90", "0.00"]


# --- the database ---------------------------------------------------------------------------------


def _fetch(database, sql: str, params: list | None = None) -> list[tuple]:  # noqa: ANN001
    with duckdb.connect(str(database), read_only=True) as connection:
        return connection.execute(sql, params or []).fetchall()


def test_store_replace_and_remove(tmp_path) -> None:  # noqa: ANN001
    database = tmp_path / "live.duckdb"
    session = new_session()
    rules = session.rules
    session, first = record_hand(session, sc.HAND_1)
    store_hand(database, first, rules)
    store_hand(database, first, rules)  # saving twice is a harmless duplicate
    session, second = record_hand(session, sc.HAND_2)
    store_hand(database, second, rules)
    key = hand_key("live", second.hand_id)
    assert _fetch(database, "SELECT hand_key, site, hand_id, table_name, button, any_fantasyland "
                            "FROM hands ORDER BY started_at") == [
        (hand_key("live", first.hand_id), "live", first.hand_id, session.table, "ivo", False),
        (key, "live", second.hand_id, session.table, "mara", True),
    ]
    assert dict(_fetch(database, "SELECT player, points FROM results WHERE hand_key = ?", [key])) \
        == sc.HAND_2_POINTS
    assert dict(_fetch(database, "SELECT player, points FROM sessions")) == {
        name: sc.HAND_1_POINTS[name] + sc.HAND_2_POINTS[name] for name in sc.PLAYERS}

    session, edited = edit_last_hand(session, {**sc.HAND_2, "jun": sc.HAND_2["ivo"],
                                                    "ivo": sc.HAND_2["jun"]})
    replace_hand(database, edited, rules)
    assert dict(_fetch(database, "SELECT player, points FROM results WHERE hand_key = ?", [key])) \
        == {"mara": 39, "jun": -2, "ivo": -37}
    assert _fetch(database, "SELECT top FROM boards WHERE hand_key = ? AND player = 'jun'",
                  [key]) == [("5s 5h Jc",)]
    assert _fetch(database, "SELECT count(*) FROM rejects") == [(0,)]

    session, deleted = delete_last_hand(session)
    assert remove_hand(database, deleted) is True
    assert remove_hand(database, deleted) is False
    for table in ("hands", "seats", "boards", "evaluations", "results"):
        assert _fetch(database, f"SELECT count(*) FROM {table} WHERE hand_key = ?", [key]) == [(0,)]
    assert _fetch(database, "SELECT count(*) FROM matchups WHERE hand_key = ?", [key]) == [(0,)]
    assert dict(_fetch(database, "SELECT player, points FROM sessions")) == sc.HAND_1_POINTS


def test_a_different_hand_under_a_stored_id_is_refused(tmp_path) -> None:  # noqa: ANN001
    database = tmp_path / "live.duckdb"
    session = new_session()
    _, hand = record_hand(session, sc.HAND_1)
    store_hand(database, hand, session.rules)
    _, other = record_hand(session, sc.HAND_2)
    assert other.hand_id == hand.hand_id
    with pytest.raises(LiveStoreError, match="was not saved: .*conflict"):
        store_hand(database, other, session.rules)


def test_live_hands_are_the_hands_a_file_would_give(tmp_path) -> None:  # noqa: ANN001
    """Same path, same keys, same content: ingesting the records from a file finds duplicates."""
    database = tmp_path / "live.duckdb"
    session = new_session()
    records = []
    for boards in (sc.HAND_1, sc.HAND_2):
        session, hand = record_hand(session, boards)
        store_hand(database, hand, session.rules)
        records.append(hand.record)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    summary = ingest_paths([path], database)
    assert (summary.stored, summary.duplicates, summary.rejected) == (0, 2, 0)


def test_rules_from_a_file_are_used_for_storing(tmp_path) -> None:  # noqa: ANN001
    rules_file = tmp_path / "house.toml"
    rules_file.write_text('extends = "standard"\n[scoring]\nscoop_bonus = 6\n', encoding="utf-8")
    database = tmp_path / "live.duckdb"
    session = start_session(sc.PLAYERS, rules=str(rules_file), clock=ticking_clock())
    assert session.rules.name == "house"
    session, hand = record_hand(session, sc.HAND_1)
    # Scoop bonus 6: mara vs ivo 19 + 3, jun vs ivo 16 + 3.
    assert hand.points == {"mara": 26, "jun": 15, "ivo": -41}
    store_hand(database, hand, session.rules)
    assert dict(_fetch(database, "SELECT player, points FROM results")) == hand.points
    assert preset("standard").scoring.scoop_bonus == 3


def test_stored_hand_ids(tmp_path) -> None:  # noqa: ANN001
    database = tmp_path / "live.duckdb"
    assert stored_hand_ids(database, "S") == []
    session = start_session(sc.PLAYERS, session_id="S", clock=ticking_clock())
    for boards in (sc.HAND_1, sc.HAND_2):
        session, hand = record_hand(session, boards)
        store_hand(database, hand, session.rules)
    assert stored_hand_ids(database, "S") == ["S-0001", "S-0002"]
    assert stored_hand_ids(database, "S-0") == []
