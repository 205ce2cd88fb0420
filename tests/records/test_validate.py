"""Tests for pipeline.records.validate: legal records pass, every rule has a failing case with a precise
reason, extras are kept, spellings are normalised and records round-trip."""

from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path

import pytest

from pipeline.records import validate
from pipeline.records.record import FinalBoard, HandRecord
from pipeline.records.validate import InvalidHand, hand_to_mapping, parse_hand
from pipeline.rules.cards import RANKS, SUITS, parse_card, parse_cards
from pipeline.rules.game import Row, Variant

PLAYER_NAMES = ("mara", "jun", "lee", "ola")
ROW_NAMES = ("top", "middle", "bottom")


def deal_record(
    variant: str = "pineapple",
    player_count: int = 3,
    seed: int = 0,
    fantasyland_cards: dict[int, int] | None = None,
    with_board: bool = False,
) -> dict:
    """A legal canonical record dealt from a deck shuffled with ``seed``.

    ``fantasyland_cards`` maps a player index to the number of cards that player is dealt in
    Fantasyland (13 placed, the rest discarded). ``with_board`` adds each player's final
    board too (rows in reverse placement order), as readers that know both do.
    """
    rng = random.Random(seed)
    deck = [rank + suit for rank in RANKS for suit in SUITS]
    rng.shuffle(deck)
    fantasyland_cards = fantasyland_cards or {}
    players = []
    for index in range(player_count):
        player: dict = {"name": PLAYER_NAMES[index], "seat": index + 1}
        if index in fantasyland_cards:
            dealt = [deck.pop() for _ in range(fantasyland_cards[index])]
            player["fantasyland"] = True
            player["streets"] = [
                {
                    "dealt": dealt,
                    "placed": {"top": dealt[:3], "middle": dealt[3:8], "bottom": dealt[8:13]},
                    "discarded": dealt[13:],
                }
            ]
        else:
            player["fantasyland"] = False
            room = {"top": 3, "middle": 5, "bottom": 5}
            streets = []
            for shape in Variant(variant).streets:
                dealt = [deck.pop() for _ in range(shape.dealt)]
                discarded = rng.sample(dealt, shape.discarded)
                placed: dict[str, list[str]] = {}
                for card in dealt:
                    if card in discarded:
                        continue
                    row = rng.choice([name for name in ROW_NAMES if room[name] > 0])
                    room[row] -= 1
                    placed.setdefault(row, []).append(card)
                streets.append({"dealt": dealt, "placed": placed, "discarded": discarded})
            player["streets"] = streets
        if with_board:
            player["board"] = {
                row: [card for street in player["streets"]
                      for card in street["placed"].get(row, [])][::-1]
                for row in ROW_NAMES
            }
        if index % 2 == 0:
            player["reported_points"] = index - 1
        players.append(player)
    return {
        "hand_id": f"H{seed}",
        "site": "test",
        "table": "T1",
        "started_at": "2026-11-01T20:15:03Z",
        "variant": variant,
        "rules": "standard",
        "button": PLAYER_NAMES[0],
        "players": players,
    }


def fixed_pineapple_hand() -> dict:
    """A hand-written legal two-player pineapple record (mara, jun), in the spec's shape."""
    return {
        "hand_id": "T7-00042",
        "site": "homegame",
        "table": "T7",
        "started_at": "2026-11-01T20:15:03Z",
        "variant": "pineapple",
        "rules": "standard",
        "button": "mara",
        "players": [
            {
                "name": "mara",
                "seat": 1,
                "fantasyland": False,
                "streets": [
                    {
                        "dealt": ["Ah", "Kd", "7c", "7s", "2h"],
                        "placed": {"top": ["Ah"], "middle": ["7c", "7s"], "bottom": ["Kd", "2h"]},
                        "discarded": [],
                    },
                    {"dealt": ["Jc", "Jd", "4s"], "placed": {"middle": ["Jc", "Jd"]},
                     "discarded": ["4s"]},
                    {"dealt": ["9h", "9d", "5c"], "placed": {"bottom": ["9h", "9d"]},
                     "discarded": ["5c"]},
                    {"dealt": ["Ac", "8s", "6d"], "placed": {"top": ["Ac"], "middle": ["8s"]},
                     "discarded": ["6d"]},
                    {"dealt": ["Kc", "2d", "3s"], "placed": {"top": ["Kc"], "bottom": ["2d"]},
                     "discarded": ["3s"]},
                ],
                "reported_points": 7,
            },
            {
                "name": "jun",
                "seat": 2,
                "fantasyland": False,
                "streets": [
                    {
                        "dealt": ["Th", "Td", "6c", "6h", "4c"],
                        "placed": {"top": ["Th"], "middle": ["6c", "6h", "4c"], "bottom": ["Td"]},
                        "discarded": [],
                    },
                    {"dealt": ["8c", "8d", "5s"], "placed": {"bottom": ["8c", "8d"]},
                     "discarded": ["5s"]},
                    {"dealt": ["Qs", "Qh", "3c"], "placed": {"bottom": ["Qs", "Qh"]},
                     "discarded": ["3c"]},
                    {"dealt": ["Jh", "Js", "2c"], "placed": {"top": ["Jh", "Js"]},
                     "discarded": ["2c"]},
                    {"dealt": ["7d", "7h", "5d"], "placed": {"middle": ["7d", "7h"]},
                     "discarded": ["5d"]},
                ],
                "reported_points": -7,
            },
        ],
    }


SPEC_EXAMPLE = """
{"hand_id": "T7-00042", "site": "homegame", "table": "T7",
 "started_at": "2026-11-01T20:15:03Z", "variant": "pineapple", "rules": "standard",
 "button": "mara",
 "players": [
  {"name": "mara", "seat": 1, "fantasyland": false,
   "streets": [
     {"dealt": ["Ah","Kd","7c","7s","2h"],
      "placed": {"top": ["Ah"], "middle": ["7c","7s"], "bottom": ["Kd","2h"]},
      "discarded": []},
     {"dealt": ["Qs","Qh","3d"], "placed": {"bottom": ["Qs","Qh"]}, "discarded": ["3d"]},
     {"dealt": ["Jc","Jd","4s"], "placed": {"middle": ["Jc","Jd"]}, "discarded": ["4s"]},
     {"dealt": ["Ac","8s","6d"], "placed": {"top": ["Ac"], "middle": ["8s"]}, "discarded": ["6d"]},
     {"dealt": ["Kc","9d","5c"], "placed": {"top": ["Kc"], "bottom": ["9d"]}, "discarded": ["5c"]}
   ],
   "reported_points": 7},
  {"name": "jun", "seat": 2, "fantasyland": true,
   "streets": [
     {"dealt": ["As","Ad","Kh","Ks","Qc","Qd","9c","9s","Tc","Ts","8h","4d","4h","3c"],
      "placed": {"top": ["As","Ad","Kh"], "middle": ["Ks","Qc","Qd","9c","9s"],
                 "bottom": ["Tc","Ts","8h","4d","4h"]},
      "discarded": ["3c"]}
   ]}
 ]}
"""


def spec_example_hand() -> dict:
    """The example of docs/hand-format.md, completed to five streets for mara; jun plays a
    14-card Fantasyland."""
    return json.loads(SPEC_EXAMPLE)


def reason(mapping: dict) -> str:
    """The InvalidHand reason parse_hand gives for ``mapping`` (fails if it passes)."""
    with pytest.raises(InvalidHand) as caught:
        parse_hand(mapping)
    return str(caught.value)


# --- valid records --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "player_count"),
    [
        ("classic", 2),
        ("classic", 3),
        ("classic", 4),
        ("pineapple", 2),
        ("pineapple", 3),
        ("2-7-pineapple", 2),
        ("2-7-pineapple", 3),
    ],
)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_dealt_hands_pass(variant: str, player_count: int, seed: int) -> None:
    record = deal_record(variant, player_count, seed)
    hand = parse_hand(record)
    assert isinstance(hand, HandRecord)
    assert hand.variant is Variant(variant)
    assert hand.hand_id == f"H{seed}"
    assert len(hand.players) == player_count
    seen = 13 if variant == "classic" else 17
    for player, raw in zip(hand.players, record["players"], strict=True):
        assert player.name == raw["name"]
        assert player.cards_dealt == seen
        assert len(player.streets) == len(Variant(variant).streets)
        assert len(player.board.top) == 3
        assert len(player.board.middle) == 5
        assert len(player.board.bottom) == 5
        assert len(player.discards) == seen - 13


@pytest.mark.parametrize(
    ("variant", "cards"),
    [
        ("classic", 13),
        ("pineapple", 14),
        ("pineapple", 15),
        ("pineapple", 16),
        ("pineapple", 17),
        ("2-7-pineapple", 14),
        ("2-7-pineapple", 15),
    ],
)
def test_fantasyland_hands_pass(variant: str, cards: int) -> None:
    player_count = 4 if variant == "classic" else 3
    hand = parse_hand(deal_record(variant, player_count, seed=5, fantasyland_cards={1: cards}))
    player = hand.players[1]
    assert player.fantasyland is True
    assert len(player.streets) == 1
    assert player.cards_dealt == cards
    assert len(player.discards) == cards - 13
    assert len(player.board.cards) == 13
    assert hand.players[0].fantasyland is False


def test_fixed_hand_values() -> None:
    hand = parse_hand(fixed_pineapple_hand())
    mara, jun = hand.players
    assert hand.key == ("homegame", "T7-00042")
    assert hand.table == "T7"
    assert hand.started_at == "2026-11-01T20:15:03Z"
    assert hand.button == "mara"
    assert hand.rules == "standard"
    assert mara.reported_points == 7
    assert jun.reported_points == -7
    # Rows keep placement order: street order, then order within the street.
    assert mara.board == FinalBoard(
        top=parse_cards("Ah Ac Kc"),
        middle=parse_cards("7c 7s Jc Jd 8s"),
        bottom=parse_cards("Kd 2h 9h 9d 2d"),
    )
    assert mara.streets[1].dealt == parse_cards("Jc Jd 4s")
    assert mara.streets[1].placed == ((parse_card("Jc"), Row.MIDDLE), (parse_card("Jd"), Row.MIDDLE))
    assert mara.streets[1].discarded == (parse_card("4s"),)
    assert mara.discards == parse_cards("4s 5c 6d 3s")


def test_spec_example_shape_passes() -> None:
    hand = parse_hand(spec_example_hand())
    jun = hand.players[1]
    assert jun.fantasyland is True
    assert jun.cards_dealt == 14
    assert jun.discards == (parse_card("3c"),)
    assert jun.board.top == parse_cards("As Ad Kh")
    assert hand.players[0].board.bottom == parse_cards("Kd 2h Qs Qh 9d")
    assert hand.players[0].reported_points == 7
    assert jun.reported_points is None


def test_defaults() -> None:
    record = deal_record("classic", 2, seed=9)
    for key in ("site", "rules", "table", "started_at", "button"):
        del record[key]
    for player in record["players"]:
        del player["fantasyland"]
        player.pop("reported_points", None)
    hand = parse_hand(record)
    assert hand.site == "local"
    assert hand.rules == "standard"
    assert hand.table is None
    assert hand.started_at is None
    assert hand.button is None
    assert hand.extra == {}
    assert all(player.fantasyland is False for player in hand.players)
    assert all(player.reported_points is None for player in hand.players)
    assert all(player.extra == {} for player in hand.players)


def test_nulls_mean_absent_for_optional_fields() -> None:
    record = deal_record("pineapple", 2, seed=4)
    record.update(table=None, started_at=None, button=None)
    record["players"][0]["reported_points"] = None
    record["players"][0]["board"] = None
    hand = parse_hand(record)
    assert (hand.table, hand.started_at, hand.button) == (None, None, None)
    assert hand.players[0].reported_points is None


def test_integer_ids_are_stringified() -> None:
    record = deal_record("pineapple", 2, seed=4)
    record["hand_id"] = 42
    record["table"] = 7
    hand = parse_hand(record)
    assert hand.hand_id == "42"
    assert hand.table == "7"


def test_match_id_is_read_normalised_and_kept_out_of_the_extras() -> None:
    record = deal_record("pineapple", 2, seed=4)
    assert parse_hand(record).match_id is None
    record["match_id"] = " friday-m1 "
    hand = parse_hand(record)
    assert hand.match_id == "friday-m1"
    assert "match_id" not in hand.extra
    assert hand_to_mapping(hand)["match_id"] == "friday-m1"
    assert parse_hand(hand_to_mapping(hand)) == hand
    record["match_id"] = 17
    assert parse_hand(record).match_id == "17"
    record["match_id"] = None
    assert parse_hand(record).match_id is None


@pytest.mark.parametrize(("value", "expected"), [
    (["m1"], "match_id must be a non-empty string, an integer or null, got ['m1']"),
    ("", "match_id must be a non-empty string, an integer or null, got ''"),
    (1.5, "match_id must be a non-empty string, an integer or null, got 1.5"),
    ("m" * 129, "match_id is 129 characters long, the limit is 128"),
    ("m\x1b1", "match_id 'm\\x1b1' contains the control character U+001B"),
])
def test_a_bad_match_id_is_refused_with_its_reason(value: object, expected: str) -> None:
    record = deal_record("pineapple", 2, seed=4)
    record["match_id"] = value
    assert reason(record) == expected


def test_variant_member_is_accepted() -> None:
    record = deal_record("pineapple", 2, seed=4)
    record["variant"] = Variant.PINEAPPLE
    assert parse_hand(record).variant is Variant.PINEAPPLE


def test_integral_float_seat_counts_as_integer() -> None:
    record = deal_record("pineapple", 2, seed=4)
    record["players"][1]["seat"] = 5.0
    assert parse_hand(record).players[1].seat == 5


def test_reported_points_float() -> None:
    record = deal_record("pineapple", 2, seed=4)
    record["players"][0]["reported_points"] = 2.5
    assert parse_hand(record).players[0].reported_points == 2.5


def test_board_only_player() -> None:
    record = fixed_pineapple_hand()
    mara = record["players"][0]
    del mara["streets"]
    mara["board"] = {"top": ["Ah", "Ac", "Kc"], "middle": ["7c", "7s", "Jc", "Jd", "8s"],
                     "bottom": ["Kd", "2h", "9h", "9d", "2d"]}
    hand = parse_hand(record)
    player = hand.players[0]
    assert player.streets is None
    assert player.cards_dealt is None
    assert player.discards == ()
    assert player.board.top == parse_cards("Ah Ac Kc")
    assert player.board.bottom == parse_cards("Kd 2h 9h 9d 2d")


def test_board_and_streets_that_agree_keep_placement_order() -> None:
    record = fixed_pineapple_hand()
    record["players"][0]["board"] = {
        "top": ["Kc", "Ac", "Ah"],
        "middle": ["8s", "Jd", "Jc", "7s", "7c"],
        "bottom": ["2d", "9d", "9h", "2h", "Kd"],
    }
    player = parse_hand(record).players[0]
    assert player.streets is not None
    assert player.board.top == parse_cards("Ah Ac Kc")
    assert player.board.middle == parse_cards("7c 7s Jc Jd 8s")


def test_discarded_may_be_omitted_in_classic() -> None:
    record = deal_record("classic", 3, seed=11)
    for player in record["players"]:
        for street in player["streets"]:
            del street["discarded"]
    hand = parse_hand(record)
    assert all(player.discards == () for player in hand.players)


def test_players_may_be_in_any_seat_order_and_button_moves() -> None:
    record = deal_record("pineapple", 3, seed=2)
    record["players"][0]["seat"] = 9
    record["button"] = "jun"
    hand = parse_hand(record)
    assert [player.name for player in hand.action_order()] == ["lee", "mara", "jun"]


# --- extras and spellings -------------------------------------------------------------------


def test_unknown_fields_are_kept() -> None:
    record = deal_record("pineapple", 3, seed=6)
    record["source_file"] = "x.txt"
    record["stakes"] = {"point": 0.1}
    record["players"][0]["source_showdown"] = "Ah Kd ..."
    record["players"][2]["game"] = {"id": 7}
    record["players"][1]["streets"][2]["time_ms"] = 350
    record["players"][1]["streets"][2]["placed"]["note"] = "ignored"
    hand = parse_hand(record)
    assert hand.extra == {"source_file": "x.txt", "stakes": {"point": 0.1}}
    assert hand.players[0].extra == {"source_showdown": "Ah Kd ..."}
    assert hand.players[1].extra == {}
    assert hand.players[2].extra == {"game": {"id": 7}}
    written = hand_to_mapping(hand)
    assert written["source_file"] == "x.txt"
    assert written["players"][0]["source_showdown"] == "Ah Kd ..."
    assert written["players"][2]["game"] == {"id": 7}


def test_card_spellings_are_normalised() -> None:
    record = fixed_pineapple_hand()
    mara = record["players"][0]
    mara["streets"][0] = {
        "dealt": ["ah", "K♦", "7♣", " 7s ", "2H"],
        "placed": {"top": ["A♥"], "middle": ["7c", "7S"], "bottom": ["kd", "2♡"]},
        "discarded": [],
    }
    jun = record["players"][1]
    jun["streets"][0] = {
        "dealt": ["10h", "td", "6c", "6h", "4c"],
        "placed": {"top": ["Th"], "middle": ["6c", "6h", "4c"], "bottom": ["10d"]},
        "discarded": [],
    }
    hand = parse_hand(record)
    assert hand == parse_hand(fixed_pineapple_hand())
    written = hand_to_mapping(hand)
    assert written["players"][0]["streets"][0]["dealt"] == ["Ah", "Kd", "7c", "7s", "2h"]
    assert written["players"][1]["streets"][0]["placed"]["bottom"] == ["Td"]


# --- round trip -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_round_trip(seed: int) -> None:
    variant = ("classic", "pineapple", "2-7-pineapple")[seed % 3]
    record = deal_record(variant, 3, seed, fantasyland_cards={2: 13 if seed % 3 == 0 else 14})
    record["extra_field"] = [1, 2]
    record["players"][1]["source_showdown"] = "x"
    hand = parse_hand(record)
    written = hand_to_mapping(hand)
    assert parse_hand(written) == hand
    assert hand_to_mapping(parse_hand(written)) == written


def test_round_trip_board_only_and_include_board() -> None:
    record = fixed_pineapple_hand()
    del record["players"][0]["streets"]
    record["players"][0]["board"] = {"top": ["Ah", "Ac", "Kc"],
                                     "middle": ["7c", "7s", "Jc", "Jd", "8s"],
                                     "bottom": ["Kd", "2h", "9h", "9d", "2d"]}
    hand = parse_hand(record)
    written = hand_to_mapping(hand)
    assert "streets" not in written["players"][0]
    assert "board" not in written["players"][1]
    assert parse_hand(written) == hand
    with_board = hand_to_mapping(hand, include_board=True)
    assert with_board["players"][1]["board"]["bottom"] == ["Td", "8c", "8d", "Qs", "Qh"]
    assert parse_hand(with_board) == hand


def test_round_trip_writes_the_canonical_shape() -> None:
    written = hand_to_mapping(parse_hand(fixed_pineapple_hand()))
    assert written == fixed_pineapple_hand()


# --- failing cases: hand level --------------------------------------------------------------


def test_not_an_object() -> None:
    assert reason(["hand"]) == "a hand record must be a JSON object, got ['hand']"


@pytest.mark.parametrize("field", ["hand_id", "variant", "players"])
def test_missing_required_field(field: str) -> None:
    record = deal_record("pineapple", 2, seed=1)
    del record[field]
    assert reason(record) == f"missing field '{field}'"


def test_bad_variant() -> None:
    record = deal_record("pineapple", 2, seed=1)
    record["variant"] = "holdem"
    assert reason(record) == "variant 'holdem' is not one of classic, pineapple, 2-7-pineapple"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("hand_id", ["x"], "hand_id must be a non-empty string or an integer, got ['x']"),
        ("hand_id", True, "hand_id must be a non-empty string or an integer, got True"),
        ("hand_id", "", "hand_id must be a non-empty string or an integer, got ''"),
        ("hand_id", 1.5, "hand_id must be a non-empty string or an integer, got 1.5"),
        ("variant", 3, "variant 3 is not one of classic, pineapple, 2-7-pineapple"),
        ("site", None, "site must be a non-empty string, got null"),
        ("site", 5, "site must be a non-empty string, got 5"),
        ("rules", "", "rules must be a non-empty string, got ''"),
        ("table", ["T7"], "table must be a non-empty string, an integer or null, got ['T7']"),
        ("button", 1, "button must be a non-empty string or null, got 1"),
        ("started_at", 1700000000,
         "started_at must be an ISO 8601 date-time string, got 1700000000"),
        ("started_at", "yesterday",
         "started_at 'yesterday' is not an ISO 8601 date-time (like 2026-11-01T20:15:03Z)"),
        ("started_at", "2026-13-01T20:15:03Z",
         "started_at '2026-13-01T20:15:03Z' is not an ISO 8601 date-time "
         "(like 2026-11-01T20:15:03Z)"),
        ("players", {"mara": {}}, "players must be a list of player objects, got {'mara': {}}"),
    ],
)
def test_hand_field_types(field: str, value: object, expected: str) -> None:
    record = deal_record("pineapple", 2, seed=1)
    record[field] = value
    assert reason(record) == expected


@pytest.mark.parametrize(
    "started_at",
    ["2026-11-01T20:15:03Z", "2026-11-01 20:15:03", "2026-11-01T20:15:03.250+01:00",
     "2026-11-01T20:15", "2026-11-01T20:15:03-0500"],
)
def test_started_at_spellings_pass(started_at: str) -> None:
    record = deal_record("pineapple", 2, seed=1)
    record["started_at"] = started_at
    assert parse_hand(record).started_at == started_at


@pytest.mark.parametrize(
    ("variant", "player_count", "expected"),
    [
        ("pineapple", 4, "pineapple allows 2-3 players, got 4"),
        ("2-7-pineapple", 4, "2-7-pineapple allows 2-3 players, got 4"),
        ("classic", 1, "classic allows 2-4 players, got 1"),
    ],
)
def test_player_count_by_variant(variant: str, player_count: int, expected: str) -> None:
    record = deal_record("classic", max(player_count, 2), seed=1)
    record["variant"] = variant
    record["players"] = record["players"][:player_count]
    assert reason(record) == expected


def test_five_classic_players() -> None:
    record = deal_record("classic", 4, seed=1)
    extra = copy.deepcopy(record["players"][0])
    extra.update(name="zoe", seat=9)
    record["players"].append(extra)
    assert reason(record) == "classic allows 2-4 players, got 5"


def test_duplicate_player_names() -> None:
    record = deal_record("pineapple", 3, seed=1)
    record["players"][2]["name"] = "mara"
    assert reason(record) == "player name 'mara' appears twice (players[0], players[2])"


def test_duplicate_seats() -> None:
    record = deal_record("pineapple", 3, seed=1)
    record["players"][1]["seat"] = 1
    assert reason(record) == "seat 1 appears twice (players[0] ('mara'), players[1] ('jun'))"


def test_button_must_be_a_player() -> None:
    record = deal_record("pineapple", 3, seed=1)
    record["button"] = "zoe"
    assert reason(record) == "button 'zoe' is not one of the players (mara, jun, lee)"


def test_error_carries_hand_id() -> None:
    record = deal_record("pineapple", 3, seed=1)
    record["button"] = "zoe"
    with pytest.raises(InvalidHand) as caught:
        parse_hand(record)
    assert caught.value.hand_id == "H1"
    assert caught.value.reason == str(caught.value)
    assert isinstance(caught.value, ValueError)


# --- failing cases: player level ------------------------------------------------------------


@pytest.mark.parametrize("field", ["name", "seat"])
def test_missing_player_field(field: str) -> None:
    record = deal_record("pineapple", 2, seed=1)
    del record["players"][1][field]
    where = "players[1]" if field == "name" else "players[1] ('jun')"
    assert reason(record) == f"{where}: missing field '{field}'"


def test_player_needs_streets_or_board() -> None:
    record = deal_record("pineapple", 2, seed=1)
    del record["players"][1]["streets"]
    assert reason(record) == "players[1] ('jun'): needs 'streets' or 'board' (or both)"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("name", "", "players[0]: name must be a non-empty string, got ''"),
        ("name", 7, "players[0]: name must be a non-empty string, got 7"),
        ("seat", "1", "players[0] ('mara'): seat must be an integer from 0 to 999, got '1'"),
        ("seat", True, "players[0] ('mara'): seat must be an integer from 0 to 999, got True"),
        ("seat", -1, "players[0] ('mara'): seat must be an integer from 0 to 999, got -1"),
        ("seat", 1000, "players[0] ('mara'): seat must be an integer from 0 to 999, got 1000"),
        ("fantasyland", "yes", "players[0] ('mara'): fantasyland must be true or false, got 'yes'"),
        ("fantasyland", 1, "players[0] ('mara'): fantasyland must be true or false, got 1"),
        ("reported_points", "7",
         "players[0] ('mara'): reported_points must be a number or null, got '7'"),
        ("reported_points", True,
         "players[0] ('mara'): reported_points must be a number or null, got True"),
        ("reported_points", math.nan,
         "players[0] ('mara'): reported_points must be a number or null, got nan"),
        ("streets", "Ah Kd",
         "players[0] ('mara'): streets must be a list of streets, got 'Ah Kd'"),
        ("board", ["Ah"], "players[0] ('mara'): board must be an object of rows, got ['Ah']"),
    ],
)
def test_player_field_types(field: str, value: object, expected: str) -> None:
    record = deal_record("pineapple", 2, seed=1)
    record["players"][0][field] = value
    assert reason(record) == expected


def test_player_not_an_object() -> None:
    record = deal_record("pineapple", 2, seed=1)
    record["players"][1] = "jun"
    assert reason(record) == "players[1] must be an object, got 'jun'"


def test_not_a_card() -> None:
    record = fixed_pineapple_hand()
    record["players"][0]["streets"][1]["dealt"][2] = "Zx"
    assert reason(record) == (
        "players[0] ('mara') street 2 dealt: not a card: 'Zx' "
        "(ranks 23456789TJQKA or 10, suits cdhs or ♣♦♥♠)"
    )


def test_not_a_card_in_placed_row_and_board() -> None:
    record = fixed_pineapple_hand()
    record["players"][1]["streets"][3]["placed"]["top"] = ["Jh", 11]
    assert reason(record).startswith("players[1] ('jun') street 4 placed top: not a card: 11")
    record = fixed_pineapple_hand()
    record["players"][1]["board"] = {"top": ["Th", "Jh", "J?"], "middle": [], "bottom": []}
    assert reason(record).startswith("players[1] ('jun') board top: not a card: 'J?'")


def test_street_shapes_of_the_fields() -> None:
    record = fixed_pineapple_hand()
    record["players"][0]["streets"][2] = ["9h", "9d", "5c"]
    assert reason(record) == (
        "players[0] ('mara') street 3: must be an object, got ['9h', '9d', '5c']"
    )
    record = fixed_pineapple_hand()
    del record["players"][0]["streets"][2]["placed"]
    assert reason(record) == "players[0] ('mara') street 3: missing field 'placed'"
    record = fixed_pineapple_hand()
    del record["players"][0]["streets"][2]["dealt"]
    assert reason(record) == "players[0] ('mara') street 3: missing field 'dealt'"
    record = fixed_pineapple_hand()
    record["players"][0]["streets"][2]["dealt"] = "9h 9d 5c"
    assert reason(record) == (
        "players[0] ('mara') street 3: dealt must be a list of cards, got '9h 9d 5c'"
    )
    record = fixed_pineapple_hand()
    record["players"][0]["streets"][2]["placed"] = ["9h", "9d"]
    assert reason(record) == (
        "players[0] ('mara') street 3: placed must be an object of rows, got ['9h', '9d']"
    )


def test_placed_and_discarded_must_be_the_dealt_cards() -> None:
    record = fixed_pineapple_hand()
    record["players"][1]["streets"][2]["discarded"] = ["3d"]
    assert reason(record) == (
        "players[1] ('jun') street 3: placed + discarded [Qs Qh 3d] differ from dealt [Qs Qh 3c]"
    )


def test_a_reason_quoting_the_record_stays_short() -> None:
    """A reason shows at most 20 cards of a list and at most 2,000 characters: a street dealt
    150,000 cards (a line under 1 MiB) gave a 450 KB reason, stored and printed whole."""
    record = fixed_pineapple_hand()
    record["players"][1]["streets"][2]["dealt"] = ["Ah"] * 150_000
    text = reason(record)
    assert text.startswith("players[1] ('jun') street 3: placed + discarded [Qs Qh 3c] differ "
                           "from dealt [Ah Ah Ah")
    assert text.endswith("Ah … (150,000 cards)]") and len(text) < 300
    long_name = "k" * 5000
    record = fixed_pineapple_hand()
    nested: list = []
    for _ in range(40):  # deeper than an extra field may be: the reason names the field
        nested = [nested]
    record[long_name] = nested
    text = reason(record)
    assert len(text) <= validate.MAX_REASON_CHARACTERS + 40 and text.endswith("more characters]")
    assert str(InvalidHand("x" * 10_000)) == InvalidHand("x" * 10_000).reason
    assert len(InvalidHand("x" * 10_000).reason) < 2_100


def test_a_dealt_card_left_unplaced() -> None:
    record = fixed_pineapple_hand()
    record["players"][0]["streets"][0]["placed"]["bottom"] = ["Kd"]
    assert reason(record) == (
        "players[0] ('mara') street 1: placed + discarded [Ah 7c 7s Kd] differ from "
        "dealt [Ah Kd 7c 7s 2h]"
    )


def test_wrong_number_of_streets() -> None:
    record = fixed_pineapple_hand()
    del record["players"][0]["streets"][4]
    assert reason(record) == (
        "players[0] ('mara'): 4 streets, pineapple has 5 (5 cards, then 4 streets of 3)"
    )
    record = deal_record("classic", 2, seed=3)
    record["players"][1]["streets"].append(record["players"][1]["streets"][-1])
    assert reason(record) == (
        "players[1] ('jun'): 10 streets, classic has 9 (5 cards, then 8 streets of 1)"
    )
    record = deal_record("classic", 2, seed=3)
    record["players"][1]["streets"] = []
    assert reason(record) == (
        "players[1] ('jun'): 0 streets, classic has 9 (5 cards, then 8 streets of 1)"
    )


def test_wrong_number_of_cards_dealt_on_a_street() -> None:
    record = deal_record("classic", 2, seed=3)
    streets = record["players"][0]["streets"]
    # Move the second street's card into the first street: 6 cards, then 0.
    moved = streets[1]["dealt"][0]
    row = next(iter(streets[1]["placed"]))
    streets[0]["dealt"].append(moved)
    streets[0]["placed"].setdefault(row, []).append(moved)
    streets[1] = {"dealt": [], "placed": {}, "discarded": []}
    assert reason(record) == (
        "players[0] ('mara') street 1: dealt 6 cards, classic deals 5 on street 1"
    )


def test_pineapple_street_must_discard_exactly_one() -> None:
    record = fixed_pineapple_hand()
    street = record["players"][0]["streets"][4]
    street["placed"] = {"top": ["Kc"], "bottom": ["2d", "3s"]}
    street["discarded"] = []
    assert reason(record) == (
        "players[0] ('mara') street 5: discarded 0 cards, pineapple discards 1 on street 5"
    )


def test_classic_street_must_not_discard() -> None:
    record = deal_record("classic", 2, seed=3)
    street = record["players"][1]["streets"][6]
    street["discarded"] = street["dealt"]
    street["placed"] = {}
    assert reason(record) == (
        "players[1] ('jun') street 7: discarded 1 card, classic discards 0 on street 7"
    )


def test_row_overflows_on_a_street() -> None:
    record = fixed_pineapple_hand()
    # jun already has Th on top; street 2 puts 8c 8d there, street 4 puts Jh Js: 5 on top.
    record["players"][1]["streets"][1]["placed"] = {"top": ["8c", "8d"]}
    assert reason(record) == (
        "players[1] ('jun') street 4: top overflows (5 cards, a row holds 3)"
    )


def test_board_row_sizes() -> None:
    record = fixed_pineapple_hand()
    mara = record["players"][0]
    del mara["streets"]
    mara["board"] = {"top": ["Ah", "Ac", "Kc", "7c", "7s", "Jc"], "middle": ["Jd", "8s"],
                     "bottom": ["Kd", "2h", "9h", "9d", "2d"]}
    assert reason(record) == "players[0] ('mara'): 6 cards in top (a row holds 3)"
    mara["board"] = {"top": ["Ah", "Ac"], "middle": ["Kc", "7c", "7s", "Jc", "Jd", "8s"],
                     "bottom": ["Kd", "2h", "9h", "9d", "2d"]}
    assert reason(record) == "players[0] ('mara'): 2 cards in top (a row holds 3)"
    mara["board"] = {"top": ["Ah", "Ac", "Kc"], "middle": ["7c", "7s", "Jc", "Jd", "8s"]}
    assert reason(record) == "players[0] ('mara') board: missing field 'bottom'"


def test_board_must_agree_with_streets() -> None:
    record = fixed_pineapple_hand()
    record["players"][0]["board"] = {
        "top": ["Ah", "Ac", "Kc"],
        "middle": ["7c", "7s", "Jc", "Jd", "8s"],
        "bottom": ["Kd", "2h", "9h", "9d", "6d"],
    }
    assert reason(record) == (
        "players[0] ('mara'): board bottom [Kd 2h 9h 9d 6d] differs from the cards placed in "
        "bottom on the streets [Kd 2h 9h 9d 2d]"
    )


# --- failing cases: Fantasyland -------------------------------------------------------------


def test_fantasyland_must_be_one_street() -> None:
    record = deal_record("classic", 3, seed=8)
    record["players"][2]["fantasyland"] = True
    record["players"][2]["streets"] = record["players"][2]["streets"][:2]
    assert reason(record) == (
        "players[2] ('lee'): Fantasyland hand must be one street of 13 cards in classic, "
        "got 2 streets"
    )


@pytest.mark.parametrize(
    ("variant", "cards", "allowed"),
    [
        ("pineapple", 13, "14-17"),
        ("2-7-pineapple", 16, "14 or 15"),
        ("2-7-pineapple", 13, "14 or 15"),
        ("classic", 14, "13"),
    ],
)
def test_fantasyland_card_count(variant: str, cards: int, allowed: str) -> None:
    record = deal_record(variant, 2, seed=8, fantasyland_cards={1: cards})
    assert reason(record) == (
        f"players[1] ('jun'): Fantasyland hand must be one street of {allowed} cards in "
        f"{variant}, got {cards} cards"
    )


def test_fantasyland_places_thirteen() -> None:
    record = deal_record("pineapple", 2, seed=8, fantasyland_cards={0: 15})
    street = record["players"][0]["streets"][0]
    street["placed"]["top"] = street["placed"]["top"][:2]
    street["discarded"] = [street["dealt"][2]] + street["discarded"]
    assert reason(record) == (
        "players[0] ('mara') street 1: Fantasyland places 13 cards and discards the rest, "
        "got 12 placed and 3 discarded"
    )


# --- failing cases: duplicate cards ---------------------------------------------------------


def test_card_twice_between_a_board_and_a_street() -> None:
    record = fixed_pineapple_hand()
    mara = record["players"][0]
    del mara["streets"]
    mara["board"] = {"top": ["Qs", "Ac", "Kc"], "middle": ["7c", "7s", "Jc", "Jd", "8s"],
                     "bottom": ["Kd", "2h", "9h", "9d", "2d"]}
    record["players"][1]["streets"][1] = {
        "dealt": ["8c", "8d", "Qs"], "placed": {"bottom": ["8c", "8d"]}, "discarded": ["Qs"],
    }
    assert reason(record) == "card Qs appears twice (mara top, jun street 2 dealt)"


def test_card_twice_between_players_streets() -> None:
    record = fixed_pineapple_hand()
    # jun's discarded 5d on street 5 becomes mara's 5c.
    street = record["players"][1]["streets"][4]
    street["dealt"][2] = "5c"
    street["discarded"] = ["5c"]
    assert reason(record) == "card 5c appears twice (mara street 3 dealt, jun street 5 dealt)"


def test_card_twice_in_one_players_streets() -> None:
    record = fixed_pineapple_hand()
    street = record["players"][0]["streets"][3]
    street["dealt"][2] = "4s"
    street["discarded"] = ["4s"]
    assert reason(record) == "card 4s appears twice (mara street 2 dealt, mara street 4 dealt)"


def test_card_twice_in_one_street() -> None:
    record = fixed_pineapple_hand()
    record["players"][0]["streets"][1] = {
        "dealt": ["Jc", "Jc", "4s"], "placed": {"middle": ["Jc", "Jc"]}, "discarded": ["4s"],
    }
    assert reason(record) == "card Jc appears twice in mara street 2 dealt"


def test_card_twice_in_a_board() -> None:
    record = fixed_pineapple_hand()
    mara = record["players"][0]
    del mara["streets"]
    mara["board"] = {"top": ["Ah", "Ac", "Kc"], "middle": ["7c", "7s", "Jc", "Jd", "Ah"],
                     "bottom": ["Kd", "2h", "9h", "9d", "2d"]}
    assert reason(record) == "card Ah appears twice (mara top, mara middle)"


def test_input_is_not_modified() -> None:
    record = deal_record("pineapple", 3, seed=12)
    record["players"][0]["note"] = "x"
    before = copy.deepcopy(record)
    parse_hand(record)
    assert record == before


# --- the fast path agrees with the checking path --------------------------------------------

MUTANT_VALUES: tuple[object, ...] = (
    None, 0, 1, -1, 2.0, 2.5, True, False, "", " ", "Ah", "ah", "10h", "A♥", "Zx", "mara",
    [], {}, ["Ah"], ["Ah", "Ah"], ("Ah",), {"Ah": 1}, math.nan, "2026-11-01T20:15:03Z",
)


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys and indexes) into a nested record."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, prefix + (index,))
    return found


def _mutate(record: dict, rng: random.Random) -> dict:
    """A copy of ``record`` with one or two random changes."""
    record = copy.deepcopy(record)
    for _ in range(rng.choice((1, 1, 2))):
        path = rng.choice(_paths(record)[1:])
        parent = record
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        action = rng.random()
        if action < 0.05 and isinstance(parent, dict):
            parent[f"x_{rng.randrange(3)}"] = rng.choice(MUTANT_VALUES)
        elif action < 0.15 and isinstance(parent, dict):
            del parent[last]
        elif action < 0.25 and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
        elif action < 0.35 and isinstance(parent, list):
            del parent[last]
        elif action < 0.5:
            other = rng.choice(_paths(record)[1:])
            source = record
            for key in other:
                source = source[key]
            parent[last] = copy.deepcopy(source)
        else:
            parent[last] = copy.deepcopy(rng.choice(MUTANT_VALUES))
    return record


def _fast(mapping: object) -> HandRecord | None:
    """What the fast path makes of a mapping (None when it hands over)."""
    try:
        return validate._parse_fast(mapping)
    except validate._FAST_PATH_SURPRISES:
        return None


def test_fast_path_takes_the_plain_records() -> None:
    for seed in range(20):
        for variant, count in (("classic", 4), ("pineapple", 3), ("2-7-pineapple", 2)):
            record = deal_record(variant, count, seed, fantasyland_cards={1: 13 if
                                 variant == "classic" else 14 + seed % 2})
            fast = _fast(record)
            assert fast is not None
            assert fast == validate._parse_precise(record)
    for seed in range(5):
        record = deal_record("pineapple", 3, seed, with_board=True)
        fast = _fast(record)
        assert fast is not None
        assert fast == validate._parse_precise(record)
        assert fast == parse_hand(deal_record("pineapple", 3, seed))
    board_only = fixed_pineapple_hand()
    del board_only["players"][0]["streets"]
    board_only["players"][0]["board"] = {"top": ["Ah", "Ac", "Kc"],
                                         "middle": ["7c", "7s", "Jc", "Jd", "8s"],
                                         "bottom": ["Kd", "2h", "9h", "9d", "2d"]}
    assert _fast(board_only) == validate._parse_precise(board_only)


@pytest.mark.parametrize("seed", range(8))
def test_fast_path_never_accepts_what_the_checking_path_rejects(seed: int) -> None:
    rng = random.Random(seed)
    bases = [
        deal_record("pineapple", 3, seed),
        deal_record("classic", 2, seed, fantasyland_cards={1: 13}),
        deal_record("2-7-pineapple", 2, seed, fantasyland_cards={0: 15}),
        deal_record("pineapple", 2, seed, with_board=True),
        fixed_pineapple_hand(),
    ]
    for attempt in range(400):
        mutant = _mutate(bases[attempt % len(bases)], rng)
        fast = _fast(mutant)
        try:
            precise = validate._parse_precise(mutant)
        except InvalidHand:
            assert fast is None, mutant
            continue
        if fast is not None:
            assert fast == precise, mutant
        assert parse_hand(mutant) == precise


# --- the record files in tests/data/records -------------------------------------------------

RECORDS = Path(__file__).resolve().parents[1] / "data" / "records"


def read_records(name: str) -> list[dict]:
    """The records of one JSON Lines file in tests/data/records."""
    lines = (RECORDS / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_valid_record_file() -> None:
    records = read_records("valid.jsonl")
    assert len(records) >= 6
    for record in records:
        hand = parse_hand(record)
        assert parse_hand(hand_to_mapping(hand)) == hand
        assert parse_hand(json.loads(json.dumps(hand_to_mapping(hand)))) == hand


def test_invalid_record_file() -> None:
    records = read_records("invalid.jsonl")
    assert len(records) >= 10
    for record in records:
        with pytest.raises(InvalidHand) as caught:
            parse_hand(record)
        assert str(caught.value) == record["expect_error"], record["hand_id"]
        assert caught.value.hand_id == record["hand_id"]


def test_extra_fields_keep_their_input_order() -> None:
    """Extras are stored as JSON text: their order must come from the input, never from a set
    (whose order changes with Python's string hashing from run to run)."""
    names = [f"note_{letter}" for letter in "qwertyuiopzxcv"]
    record = deal_record()
    for name in names:
        record[name] = name.upper()
        record["players"][0][name] = name
    hand = parse_hand(record)
    assert list(hand.extra) == names
    assert list(hand.players[0].extra) == names
