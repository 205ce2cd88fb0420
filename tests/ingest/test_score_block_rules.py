"""Every check the columnar path makes over a whole block gives, in place, the per-record error.

``ofc score`` validates a block of lines column-wise (pipeline/ingest/fast_canonical.py: names,
sites and rules once per block, seats, repeated names, the button, street counts with numpy,
the cards of the whole block at once) and sends only the lines that fail to the per-record
path (``parse_hand``), which gives the error. For each rule: take a valid record the columnar
path accepts, break exactly that rule, put it in the middle of a block of valid hands and
check that

* the per-record path really rejects it (the break is real),
* the columnar path does not accept it (it is sent back),
* the block's output is byte for byte the per-record path's, line by line (the same error,
  in its place; its neighbours scored as before).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

import pytest

from pipeline.ingest.fast_canonical import parse_canonical_batch
from pipeline.ingest.score_lines import scalar_output, score_blocks
from pipeline.records.rules_file import RulesResolver
from tests.ingest.conftest import deal_hand

Break = Callable[[dict], None]


def _first_street(record: dict, player: int = 0) -> dict:
    return record["players"][player]["streets"][0]


def _swap_first_cards(record: dict) -> None:
    """Deal the second player's first card to the first player too (a card twice in a hand)."""
    card = _first_street(record, 1)["dealt"][0]
    street = _first_street(record, 0)
    old = street["dealt"][0]
    street["dealt"][0] = card
    for cards in [*street["placed"].values(), street["discarded"]]:
        cards[:] = [card if value == old else value for value in cards]


def _move_placed_card(record: dict) -> None:
    """A row of 4 cards and one of 6 (each street still places what it was dealt)."""
    streets = record["players"][0]["streets"]
    for street in streets:
        if street["placed"].get("top"):
            card = street["placed"]["top"].pop()
            street["placed"].setdefault("bottom", []).append(card)
            if not street["placed"]["top"]:
                del street["placed"]["top"]
            return
    raise AssertionError("no top card placed")


def _board_disagrees(record: dict) -> None:
    """A board given beside the streets, with one card not the one the streets placed."""
    player = record["players"][0]
    rows: dict[str, list[str]] = {"top": [], "middle": [], "bottom": []}
    for street in player["streets"]:
        for row, cards in street["placed"].items():
            rows[row] += cards
    rows["bottom"][0], rows["middle"][0] = rows["middle"][0], rows["bottom"][0]
    player["board"] = rows


def _set(path: tuple, value: object) -> Break:
    def apply(record: dict) -> None:
        target = record
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return apply


def _call(function: Callable[[dict], object]) -> Break:
    def apply(record: dict) -> None:
        function(record)
    return apply


RULES: dict[str, Break] = {
    # the hand
    "unknown variant": _set(("variant",), "omaha"),
    "too many players for the variant": _call(
        lambda record: record["players"].append(
            copy.deepcopy(record["players"][2]) | {"name": "dee", "seat": 4})),
    "one player": _call(lambda record: record["players"].__delitem__(slice(1, None))),
    "hand_id empty": _set(("hand_id",), ""),
    "hand_id too long": _set(("hand_id",), "h" * 129),
    "hand_id with a control character": _set(("hand_id",), "h\u00071"),
    "site with a control character": _set(("site",), "home\u0001"),
    "table too long": _set(("table",), "t" * 129),
    "rules name empty": _set(("rules",), ""),
    "button not a player": _set(("button",), "nobody"),
    "button with a control character": _set(("button",), "ann\u0000"),
    "started_at not a date": _set(("started_at",), "yesterday"),
    "started_at February 30th": _set(("started_at",), "2026-02-30T10:00:00Z"),
    "started_at out of range": _set(("started_at",), "2300-01-01T00:00:00Z"),
    "started_at hour 25": _set(("started_at",), "2026-11-01T25:00:00Z"),
    "started_at with a full-width digit": _set(("started_at",), "2026-11-0\uff11T20:00:00Z"),
    "started_at with a slash": _set(("started_at",), "2026/11-01T20:00:00Z"),
    "started_at out of range, with a zone": _set(("started_at",), "1899-12-31T23:00:00-05:00"),
    # the players
    "seat negative": _set(("players", 1, "seat"), -1),
    "seat too high": _set(("players", 1, "seat"), 1000),
    "seat huge": _set(("players", 1, "seat"), 2**70),
    "two players in one seat": _set(("players", 1, "seat"), 1),
    "two players of one name": _set(("players", 2, "name"), "ann"),
    "name empty": _set(("players", 1, "name"), ""),
    "name too long": _set(("players", 1, "name"), "n" * 65),
    "name with a newline": _set(("players", 1, "name"), "bo\nb"),
    "reported points out of range": _set(("players", 0, "reported_points"), 10**7),
    "no streets and no board": _call(lambda record: record["players"][1].pop("streets")),
    "streets null and no board": _set(("players", 1, "streets"), None),
    "no streets at all": _set(("players", 1, "streets"), []),
    "a street missing": _call(lambda record: record["players"][1]["streets"].pop()),
    "a street too many": _call(lambda record: record["players"][1]["streets"].append(
        copy.deepcopy(record["players"][1]["streets"][-1]))),
    "Fantasyland with five streets": _set(("players", 1, "fantasyland"), True),
    # the cards
    "a card that is no card": _call(lambda record: _first_street(record)["dealt"].__setitem__(
        0, "Xx")),
    "a card twice in a hand": _call(_swap_first_cards),
    "a card dealt but not placed or discarded": _call(
        lambda record: _first_street(record)["dealt"].__setitem__(0, "2c")
        if "2c" not in json.dumps(record) else _first_street(record)["dealt"].__setitem__(
            0, "3c")),
    "no discard on a pineapple street": _call(
        lambda record: record["players"][0]["streets"][1].__setitem__("discarded", [])),
    "a row of six cards": _call(_move_placed_card),
    "a board that disagrees with the streets": _call(_board_disagrees),
}


UNUSUAL_BUT_VALID: dict[str, Break] = {
    "site with a surrounding space": _set(("site",), "home "),
    "name not in NFC": _set(("players", 1, "name"), "Zoe\u0301"),
    "started_at with a zone": _set(("started_at",), "2026-11-01T20:00:00+05:30"),
    "started_at with a lower-case t": _set(("started_at",), "2026-11-01t20:00:00Z"),
    "started_at in the last year of the range": _set(("started_at",), "2198-12-31T23:59:59Z"),
    "hand_id a number": _set(("hand_id",), 12345),
    "hand_id with a leading space": _set(("hand_id",), " H20"),
    "hand_id not ASCII": _set(("hand_id",), "Hand\u00e9-20"),
    "seat 0 and seat 999": _call(lambda record: (_set(("players", 0, "seat"), 0)(record),
                                                 _set(("players", 1, "seat"), 999)(record))),
}
"""Changes the columnar path may leave to the per-record path (or take itself): the output
must not change either way."""


def _lines(records: list[dict]) -> list[tuple[int, bytes, bool]]:
    return [(number, json.dumps(record).encode(), True)
            for number, record in enumerate(records, 1)]


def _valid_block() -> list[dict]:
    names = ("ann", "bob", "cy")
    return [deal_hand(seed, names=names) for seed in range(40)]


def test_the_valid_block_takes_the_columnar_path() -> None:
    """The records the rules below break are plain: the columnar path accepts every one."""
    lines = _lines(_valid_block())
    _, accepted, rest = parse_canonical_batch([line[:2] for line in lines], "",
                                              identity=False)
    assert rest == [] and len(accepted) == len(lines)


@pytest.mark.parametrize("rule", list(RULES))
def test_a_line_breaking_one_rule_gets_the_per_record_error_in_its_place(rule: str) -> None:
    records = _valid_block()
    broken = copy.deepcopy(records[20])
    RULES[rule](broken)
    records[20] = broken
    lines = _lines(records)
    resolver = RulesResolver()
    expected = [scalar_output(line, resolver)[0] for line in lines]
    error = json.loads(expected[20])
    assert "error" in error and error["line"] == 21, (rule, error)  # the break is real
    assert all('"error"' not in text for index, text in enumerate(expected) if index != 20)

    _, accepted, rest = parse_canonical_batch([line[:2] for line in lines], "",
                                              identity=False)
    assert rest == [20] and 20 not in accepted.tolist()

    for block_lines in (2048, 7):  # one block; several, the broken line inside one of them
        text = "".join(block.text for block in score_blocks(
            iter(lines), resolver, workers=1, block_lines=block_lines))
        assert text.splitlines() == expected, rule


@pytest.mark.parametrize("change", list(UNUSUAL_BUT_VALID))
def test_an_unusual_valid_line_is_scored_the_same_in_its_place(change: str) -> None:
    records = _valid_block()
    UNUSUAL_BUT_VALID[change](records[20])
    lines = _lines(records)
    resolver = RulesResolver()
    expected = [scalar_output(line, resolver)[0] for line in lines]
    assert all('"error"' not in text for text in expected)
    text = "".join(block.text for block in score_blocks(iter(lines), resolver, workers=1))
    assert text.splitlines() == expected, change
