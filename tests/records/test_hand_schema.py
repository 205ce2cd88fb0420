"""schemas/hand.schema.json: a valid draft 2020-12 schema that accepts the canonical records,
rejects type errors, keeps unknown fields, and agrees with pipeline.records.validate on those cases."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from pipeline.records.validate import InvalidHand, parse_hand
from tests.records.test_validate import (
    _mutate,
    deal_record,
    fixed_pineapple_hand,
    read_records,
    spec_example_hand,
)

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "hand.schema.json"


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def validate_accepts(record: dict) -> bool:
    """True when pipeline.records.validate accepts the record."""
    try:
        parse_hand(record)
    except InvalidHand:
        return False
    return True


def board_only_hand() -> dict:
    """The fixed hand with mara given only as a final board."""
    record = fixed_pineapple_hand()
    del record["players"][0]["streets"]
    record["players"][0]["board"] = {
        "top": ["Ah", "Ac", "Kc"],
        "middle": ["7c", "7s", "Jc", "Jd", "8s"],
        "bottom": ["Kd", "2h", "9h", "9d", "2d"],
    }
    return record


def valid_records() -> list[tuple[str, dict]]:
    """Named valid records of every kind."""
    records = [
        (f"{variant}-{count}", deal_record(variant, count, seed=count))
        for variant, counts in (("classic", (2, 3, 4)), ("pineapple", (2, 3)),
                                ("2-7-pineapple", (2, 3)))
        for count in counts
    ]
    records += [
        ("classic-fantasyland-13", deal_record("classic", 3, 1, fantasyland_cards={0: 13})),
        ("pineapple-fantasyland-14", deal_record("pineapple", 3, 1, fantasyland_cards={1: 14})),
        ("pineapple-fantasyland-17", deal_record("pineapple", 3, 1, fantasyland_cards={2: 17})),
        ("lowball-fantasyland-15", deal_record("2-7-pineapple", 2, 1, fantasyland_cards={0: 15})),
        ("fixed", fixed_pineapple_hand()),
        ("spec-example", spec_example_hand()),
        ("board-only", board_only_hand()),
    ]
    minimal = deal_record("classic", 2, seed=7)
    for key in ("site", "table", "started_at", "rules", "button"):
        del minimal[key]
    for player in minimal["players"]:
        del player["fantasyland"]
        player.pop("reported_points", None)
    records.append(("minimal", minimal))
    return records


VALID = valid_records()


@pytest.mark.parametrize(("name", "record"), VALID, ids=[name for name, _ in VALID])
def test_schema_accepts_valid_records(
    validator: Draft202012Validator, name: str, record: dict
) -> None:
    assert list(validator.iter_errors(record)) == []
    assert validate_accepts(record)


def test_schema_accepts_the_spec_example_as_written(validator: Draft202012Validator) -> None:
    """The shortened example of docs/hand-format.md (jun's placeholder cards replaced)."""
    record = spec_example_hand()
    record["players"][0]["streets"] = record["players"][0]["streets"][:2]
    assert validator.is_valid(record)
    # The shortened example has only two streets for mara, which validate rejects.
    with pytest.raises(InvalidHand, match="2 streets, pineapple has 5"):
        parse_hand(record)


def test_schema_accepts_unknown_fields(validator: Draft202012Validator) -> None:
    record = deal_record("pineapple", 3, seed=3)
    record["source_file"] = "a.log"
    record["players"][0]["source_showdown"] = "..."
    record["players"][1]["game"] = {"id": 1}
    record["players"][1]["streets"][1]["time_ms"] = 200
    record["players"][1]["streets"][1]["placed"]["note"] = "x"
    assert validator.is_valid(record)
    assert validate_accepts(record)


def test_schema_accepts_card_spellings(validator: Draft202012Validator) -> None:
    schema = validator.schema
    card_validator = Draft202012Validator(
        {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/card"}
    )
    for token in ("Ah", "ah", "AH", "10h", "Td", "td", "A♥", "k♠", "2♣", " 7s "):
        assert card_validator.is_valid(token), token
    for token in ("Zx", "1h", "A", "Ahh", "11h", "", "A h", "Ax"):
        assert not card_validator.is_valid(token), token


def _set(path: tuple, value: object) -> Callable[[dict], None]:
    """A change that sets the value at ``path``."""

    def change(record: dict) -> None:
        target = record
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _delete(path: tuple) -> Callable[[dict], None]:
    """A change that deletes the key at ``path``."""

    def change(record: dict) -> None:
        target = record
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


def _five_players(record: dict) -> None:
    extra = copy.deepcopy(record["players"][0])
    extra.update(name="zoe", seat=9)
    record["players"] += [extra, copy.deepcopy(extra)]


# Type and shape errors: both the schema and validate must reject each of these.
TYPE_ERRORS: list[tuple[str, Callable[[dict], None]]] = [
    ("missing players", _delete(("players",))),
    ("missing hand_id", _delete(("hand_id",))),
    ("missing variant", _delete(("variant",))),
    ("bad variant", _set(("variant",), "holdem")),
    ("variant not a string", _set(("variant",), 3)),
    ("hand_id list", _set(("hand_id",), ["x"])),
    ("hand_id empty", _set(("hand_id",), "")),
    ("hand_id boolean", _set(("hand_id",), True)),
    ("hand_id fraction", _set(("hand_id",), 1.5)),
    ("site null", _set(("site",), None)),
    ("site number", _set(("site",), 4)),
    ("rules empty", _set(("rules",), "")),
    ("table list", _set(("table",), ["T"])),
    ("started_at number", _set(("started_at",), 1700000000)),
    ("started_at words", _set(("started_at",), "yesterday")),
    ("button number", _set(("button",), 1)),
    ("players object", _set(("players",), {"mara": {}})),
    ("one player", lambda record: record.update(players=record["players"][:1])),
    ("five players", _five_players),
    ("four pineapple players", lambda record: record.update(variant="pineapple")),
    ("player not object", _set(("players", 1), "jun")),
    ("missing name", _delete(("players", 0, "name"))),
    ("empty name", _set(("players", 0, "name"), "")),
    ("blank name", _set(("players", 0, "name"), "  ")),
    ("missing seat", _delete(("players", 0, "seat"))),
    ("seat string", _set(("players", 0, "seat"), "1")),
    ("seat boolean", _set(("players", 0, "seat"), True)),
    ("seat negative", _set(("players", 0, "seat"), -1)),
    ("seat too large", _set(("players", 0, "seat"), 1000)),
    ("fantasyland string", _set(("players", 0, "fantasyland"), "yes")),
    ("reported_points string", _set(("players", 0, "reported_points"), "7")),
    ("reported_points boolean", _set(("players", 0, "reported_points"), True)),
    ("no streets or board", _delete(("players", 1, "streets"))),
    ("streets null, no board", _set(("players", 1, "streets"), None)),
    ("streets string", _set(("players", 1, "streets"), "Ah Kd")),
    ("streets empty", _set(("players", 1, "streets"), [])),
    ("street not object", _set(("players", 1, "streets", 0), ["Ah"])),
    ("street missing dealt", _delete(("players", 1, "streets", 0, "dealt"))),
    ("street missing placed", _delete(("players", 1, "streets", 0, "placed"))),
    ("dealt string", _set(("players", 1, "streets", 0, "dealt"), "Ah Kd")),
    ("placed list", _set(("players", 1, "streets", 0, "placed"), ["Ah"])),
    ("placed top null", _set(("players", 1, "streets", 0, "placed", "top"), None)),
    ("discarded null", _set(("players", 1, "streets", 0, "discarded"), None)),
    ("not a card", _set(("players", 1, "streets", 0, "dealt", 0), "Zx")),
    ("card number", _set(("players", 1, "streets", 0, "dealt", 0), 14)),
    ("board list", _set(("players", 1, "board"), ["Ah"])),
    ("board missing row", _set(("players", 1, "board"), {"top": [], "middle": []})),
    ("board top of 6", _set(("players", 1, "board"), {
        "top": ["Ah", "Ac", "Kc", "7c", "7s", "Jc"], "middle": ["Jd", "8s"],
        "bottom": ["Kd", "2h", "9h", "9d", "2d"]})),
]


@pytest.mark.parametrize(("name", "change"), TYPE_ERRORS, ids=[name for name, _ in TYPE_ERRORS])
def test_schema_and_validate_both_reject_type_errors(
    validator: Draft202012Validator, name: str, change: Callable[[dict], None]
) -> None:
    record = deal_record("classic", 4, seed=2)
    change(record)
    assert not validator.is_valid(record), name
    assert not validate_accepts(record), name


def _card_twice(record: dict) -> None:
    street = record["players"][1]["streets"][4]
    street["dealt"] = ["7d", "7h", "5c"]
    street["discarded"] = ["5c"]


# Rule errors beyond types: the schema accepts them, validate rejects them.
RULE_ERRORS: list[tuple[str, Callable[[dict], None]]] = [
    ("placed differs from dealt", _set(("players", 0, "streets", 2, "discarded"), ["3d"])),
    ("card twice", _card_twice),
    ("button not a player", _set(("button",), "zoe")),
    ("duplicate name", _set(("players", 1, "name"), "mara")),
    ("duplicate seat", _set(("players", 1, "seat"), 1)),
    ("wrong street count", lambda record: record["players"][0]["streets"].pop()),
    ("fantasyland with five streets", _set(("players", 0, "fantasyland"), True)),
]


@pytest.mark.parametrize(("name", "change"), RULE_ERRORS, ids=[name for name, _ in RULE_ERRORS])
def test_rule_errors_are_left_to_validate(
    validator: Draft202012Validator, name: str, change: Callable[[dict], None]
) -> None:
    record = fixed_pineapple_hand()
    change(record)
    assert validator.is_valid(record), name
    assert not validate_accepts(record), name


@pytest.mark.parametrize("seed", range(4))
def test_schema_accepts_everything_validate_accepts(
    validator: Draft202012Validator, seed: int
) -> None:
    """Random damage: whatever validate still accepts, the schema accepts too; and every
    schema rejection is a validate rejection."""
    rng = random.Random(1000 + seed)
    bases = [record for _, record in VALID]
    for attempt in range(300):
        # Through JSON, as records arrive (tuples become arrays).
        mutant = json.loads(json.dumps(_mutate(bases[attempt % len(bases)], rng)))
        if validate_accepts(mutant):
            assert validator.is_valid(mutant), mutant


def test_schema_accepts_the_valid_record_file(validator: Draft202012Validator) -> None:
    for record in read_records("valid.jsonl"):
        assert validator.is_valid(record), record["hand_id"]
