"""The columnar canonical path accepts only what the per-record path accepts, with the same rows.

Every line of a batch goes through ``prepare_canonical`` twice: once with the columnar fast
path (pipeline.ingest.fast_canonical) and once with every line forced through the canonical reader and
``parse_hand``. The rejects (line, reason), the candidates (key, content hash, line) and every
table's rows must be the same. The records are the demo sample's (three variants, Fantasyland
hands), hand-made shapes the simulator never writes, and thousands of random mutations of both.
"""

from __future__ import annotations

import copy
import gzip
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from pipeline.ingest.batches import prepare_canonical
from pipeline.ingest.fast_canonical import parse_canonical_batch
from pipeline.records.rules_file import RulesResolver
from pipeline.records.validate import parse_hand
from tests.ingest.conftest import deal_hand

DEMO = Path(__file__).resolve().parents[2] / "sample_data" / "demo-hands.jsonl.gz"


def demo_records(count: int) -> list[dict[str, Any]]:
    with gzip.open(DEMO, "rt", encoding="utf-8") as stream:
        return [json.loads(next(stream)) for _ in range(count)]


def board_of(player: dict[str, Any]) -> dict[str, list[str]]:
    board: dict[str, list[str]] = {"top": [], "middle": [], "bottom": []}
    for street in player["streets"]:
        for row in ("top", "middle", "bottom"):
            board[row] += street["placed"].get(row, [])
    return board


def special_records() -> list[dict[str, Any]]:
    """Valid shapes beyond the simulator's: boards, reported points, ids, times, no button."""
    records = []
    both = deal_hand(1, hand_id="both")
    for player in both["players"]:
        board = board_of(player)
        player["board"] = {row: list(reversed(cards)) for row, cards in board.items()}
    records.append(both)
    only_boards = deal_hand(2, hand_id="boards", players=2)
    for player in only_boards["players"]:
        player["board"] = board_of(player)
        del player["streets"]
        player["reported_points"] = 3 if player["seat"] == 1 else -3.5
    records.append(only_boards)
    mixed = deal_hand(3, hand_id="mixed")
    mixed["players"][1]["board"] = board_of(mixed["players"][1])
    mixed["players"][1]["streets"] = None
    records.append(mixed)
    numbered = deal_hand(4)
    numbered["hand_id"] = 12345
    numbered.pop("button")
    numbered.pop("table")
    numbered["started_at"] = "2026-11-01 21:30:15,25+02:00"
    records.append(numbered)
    for seed, stamp in enumerate(("2026-11-01T20:00", "2026-11-01t20:00:00-0330",
                                  "2026-11-01T20:00:00.123456Z"), 5):
        record = deal_hand(seed, hand_id=f"time{seed}")
        record["started_at"] = stamp
        records.append(record)
    reported = deal_hand(9, hand_id="reported")
    for player, points in zip(reported["players"], (7, -2, -5), strict=True):
        player["reported_points"] = points
    records.append(reported)
    seats = deal_hand(10, hand_id="seats")
    for player, seat in zip(seats["players"], (9, 0, 4), strict=True):
        player["seat"] = seat
    seats["button"] = seats["players"][2]["name"]
    records.append(seats)
    for seed, match in ((11, "friday-m1"), (12, "friday-m1"), (13, None)):
        record = deal_hand(seed, hand_id=f"match{seed}")
        record["match_id"] = match
        records.append(record)
    return records


def mutate(record: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One random change that may or may not keep the record valid."""
    record = copy.deepcopy(record)
    player = rng.choice(record["players"])
    streets = player.get("streets") or []
    street = rng.choice(streets) if streets else None
    choice = rng.randrange(31)
    if choice == 0:
        record["extra_field"] = rng.choice([1, "x", None])
    elif choice == 1:
        player["seat"] = rng.choice(["1", 1.0, -1, True, None, 2**70])
    elif choice == 2:
        player["name"] = rng.choice(["", "  ", "x\u00e9", 5, record["players"][0]["name"]])
    elif choice == 3:
        record["button"] = rng.choice(["nobody", "", None, 7])
    elif choice == 4:
        record["started_at"] = rng.choice(["yesterday", "2026-13-01T00:00:00Z", "", 5,
                                           "2026-02-30T10:00:00Z", "2026-11-01T20:00:00+05:30"])
    elif choice == 5 and street is not None:
        token = rng.choice(street["dealt"])
        spelling = rng.choice([token.lower(), token.upper(), " " + token, "10" + token[1]
                               if token[0] == "T" else token + "x", "A\u2665", "Zz", ""])
        street["dealt"] = [spelling if card == token else card for card in street["dealt"]]
        if rng.random() < 0.7:
            for cards in [*street["placed"].values(), street.get("discarded", [])]:
                cards[:] = [spelling if card == token else card for card in cards]
    elif choice == 6 and street is not None:
        other = rng.choice(rng.choice(record["players"]).get("streets") or [street])
        card = rng.choice(other["dealt"])
        street["dealt"][0] = card  # maybe a duplicate, maybe a mismatch
    elif choice == 7 and street is not None:
        street["discarded"] = street["discarded"][:-1] if street["discarded"] else ["2c"]
    elif choice == 8 and street is not None:
        rows = [row for row, cards in street["placed"].items() if cards]
        if rows:
            source = rng.choice(rows)
            target = rng.choice(["top", "middle", "bottom"])
            card = street["placed"][source].pop()
            street["placed"].setdefault(target, []).append(card)
    elif choice == 9:
        if streets:
            player["streets"] = streets[:-1] if rng.random() < 0.5 else streets + [streets[-1]]
    elif choice == 10:
        player["fantasyland"] = rng.choice([True, "yes", None, 1])
    elif choice == 11:
        player["reported_points"] = rng.choice([1.5, -3, "4", float("nan"), 1e400, True, None])
    elif choice == 12:
        record["variant"] = rng.choice(["classic", "pineapple", "2-7-pineapple", "progressive", ""])
    elif choice == 13:
        record["players"] = record["players"][:1] if rng.random() < 0.5 else record["players"] * 2
    elif choice == 14 and street is not None:
        street["placed"]["side"] = []
    elif choice == 15 and street is not None:
        street["placed"] = rng.choice([[], None, {"top": None}, {"top": "Ah"}])
    elif choice == 16:
        record["hand_id"] = rng.choice(["", 0, -5, 3.0, None, True, "x" * 300])
    elif choice == 17:
        record["site"] = rng.choice(["", None, 5, "other"])
    elif choice == 18:
        record["rules"] = rng.choice(["", "flat-trips", "no-such-rules", None])
    elif choice == 19 and streets:
        player["board"] = board_of(player)
        row = rng.choice(["top", "middle", "bottom"])
        if player["board"][row] and rng.random() < 0.6:
            player["board"][row][0] = "2c" if player["board"][row][0] != "2c" else "3c"
    elif choice == 20 and streets:
        player["board"] = rng.choice([None, {}, {"top": []}, "board"])
    elif choice == 21:
        player.pop(rng.choice(["name", "seat", "streets", "fantasyland"]), None)
    elif choice == 22:
        record.pop(rng.choice(["hand_id", "variant", "players", "site", "rules"]), None)
    elif choice == 23:
        player["extra"] = {"note": "hi"}
    elif choice == 24 and street is not None:
        street["dealt"] = street["dealt"] + [street["dealt"][0]]
    elif choice == 25:
        record["table"] = rng.choice(["", None, 3, "T\u00e9"])
    elif choice == 26 and street is not None:
        street.pop("discarded", None)
    elif choice == 27 and streets:
        player["streets"] = [streets[0]]  # a lone street: Fantasyland-shaped or not
    elif choice == 28:
        player["seat"], record["players"][0]["seat"] = record["players"][0]["seat"], player["seat"]
    elif choice == 29:
        record["match_id"] = rng.choice(["", None, 7, " m1", "m\u00e9", "x" * 129, "m1",
                                         "m\x1b1", ["m1"], 2.0])
    else:
        player["name"] = player["name"] + "\u2603"
    return record


def as_lines(texts: list[str]) -> list[tuple[int, bytes, bool]]:
    return [(number, text.encode("utf-8", "surrogatepass"), True)
            for number, text in enumerate(texts, 1)]


def sorted_rows(table: pa.Table) -> list[tuple]:
    rows = list(zip(*(column.to_pylist() for column in table.columns), strict=True))
    return sorted(rows, key=repr)


def assert_paths_agree(texts: list[str]) -> tuple[int, int]:
    """Both paths give the same batch; returns (candidates, rejects)."""
    lines = as_lines(texts)
    fast = prepare_canonical("batch.jsonl", lines, RulesResolver())
    slow = prepare_canonical("batch.jsonl", lines, RulesResolver(), fast=False)
    assert fast.records == slow.records
    assert sorted((r.line, r.reason, r.kind) for r in fast.rejects) == sorted(
        (r.line, r.reason, r.kind) for r in slow.rejects)

    def identities(candidates: list) -> list[tuple]:
        return sorted((c.key, c.digest, c.site, c.hand_id, c.line) for c in candidates)

    assert identities(fast.later) == identities(slow.later)
    assert list(fast.frames) == list(slow.frames)
    for name in fast.frames:
        assert fast.frames[name].schema == slow.frames[name].schema, name
        assert sorted_rows(fast.frames[name]) == sorted_rows(slow.frames[name]), name
    return fast.frames["hands"].num_rows, len(fast.rejects)


def test_plain_records_take_the_fast_path_and_match_the_record_path() -> None:
    records = demo_records(400) + special_records()
    texts = [json.dumps(record) for record in records]
    columns, accepted, rest = parse_canonical_batch(
        [(number, data) for number, data, _ in as_lines(texts)], "batch.jsonl")
    assert rest == [] and len(accepted) == len(records)  # all of them went the fast way
    assert {variant.value for variant in columns.variants} == {
        "classic", "pineapple", "2-7-pineapple"}
    assert columns.fantasyland.any()
    candidates, rejects = assert_paths_agree(texts)
    assert (candidates, rejects) == (len(records), 0)


def test_spacing_key_order_and_duplicate_keys_do_not_change_the_hand() -> None:
    record = deal_hand(21, hand_id="spaced")
    spaced = json.dumps(record, indent=None, separators=(" , ", " : "))
    reordered = json.dumps(dict(reversed(list(record.items()))))
    pretty = json.dumps(deal_hand(23), indent="\t")  # tabs and newlines between the cards
    texts = [spaced, reordered, json.dumps(deal_hand(22)), pretty.replace("\n", "\r")]
    _, accepted, rest = parse_canonical_batch(
        [(number, data) for number, data, _ in as_lines(texts)], "batch.jsonl")
    assert rest == [] and len(accepted) == 4  # all plain: the fast path took them
    candidates, rejects = assert_paths_agree(texts)
    assert (candidates, rejects) == (3, 0)  # the first two are one hand, stored once


def test_a_card_with_spaces_inside_its_quotes_goes_the_record_way() -> None:
    record = json.dumps(deal_hand(24))
    first = record.split('"dealt": ["', 1)[1][:2]
    texts = [record.replace(f'"{first}"', f'" {first}"', 1), json.dumps(deal_hand(25))]
    _, accepted, rest = parse_canonical_batch(
        [(number, data) for number, data, _ in as_lines(texts)], "batch.jsonl")
    assert rest == [0] and accepted.tolist() == [1]
    assert assert_paths_agree(texts) == (2, 0)  # " Ah" is still the ace of hearts


@pytest.mark.parametrize("seed", range(6))
def test_mutated_records_get_the_same_verdict_on_both_paths(seed: int) -> None:
    rng = random.Random(seed)
    bases = demo_records(60) + special_records()
    records = [mutate(rng.choice(bases), rng) for _ in range(250)]
    texts = []
    for record in records:
        try:
            texts.append(json.dumps(record, allow_nan=True))
        except (TypeError, ValueError, OverflowError):
            continue
    texts += ["", "   ", "[1, 2]", '{"hand_id": "x"', "null", '"text"']
    candidates, rejects = assert_paths_agree(texts)
    assert candidates > 20 and rejects > 20  # the mix really has both kinds


def test_mutations_the_record_path_accepts_are_not_all_sent_back() -> None:
    """The fast path is not trivially refusing: of mutated records that stay valid and plain,
    it keeps the ones it is meant to handle."""
    rng = random.Random(99)
    bases = demo_records(40)
    texts = [json.dumps(mutate(rng.choice(bases), rng)) for _ in range(300)]
    lines = [(number, text.encode()) for number, text in enumerate(texts, 1)]
    _, accepted, _ = parse_canonical_batch(lines, "batch.jsonl")
    valid = 0
    for text in texts:
        try:
            parse_hand(json.loads(text))
            valid += 1
        except Exception:  # noqa: BLE001 - counting what the record path accepts
            continue
    assert 0 < len(accepted) <= valid
    assert len(accepted) > valid // 2


def damaged_lines(rng: random.Random, bases: list[bytes], count: int,
                  inserted: tuple[bytes, ...], overwritten: tuple[bytes, ...]) -> list[bytearray]:
    """``count`` lines, each a base line with 1-3 byte-level damages: a changed byte, a cut, an
    inserted stray (a space, quote, bracket, comma, brace, escape or one of ``inserted``) or
    two bytes overwritten with one of ``overwritten``."""
    strays = [b" ", b'"', b"[", b"]", b",", b"{", b"}", b"\\u00e9", *inserted]
    lines = []
    for _ in range(count):
        damaged = bytearray(rng.choice(bases))
        for _ in range(rng.randint(1, 3)):
            position = rng.randrange(len(damaged))
            kind = rng.randrange(4)
            if kind == 0:
                damaged[position] = rng.randrange(128)
            elif kind == 1:
                del damaged[position:position + rng.randint(1, 20)]
            elif kind == 2:
                damaged[position:position] = rng.choice(strays)
            else:
                damaged[position:position + 2] = rng.choice(overwritten)
        lines.append(damaged)
    return lines


def test_byte_level_damage_gets_the_same_verdict_on_both_paths() -> None:
    """Lines damaged as bytes (a changed byte, a cut, a stray quote, bracket or escape, a bad
    card spelling): no crash, and both paths agree line by line."""
    bases = [json.dumps(record, separators=(",", ":")).encode() for record in demo_records(100)]
    texts = [damaged.decode("utf-8", "replace") for damaged in damaged_lines(
        random.Random(7), bases, 800, (b" \t",), (b"10", b"Ah", b"xx", b"[]"))]
    candidates, rejects = assert_paths_agree(texts)
    assert candidates > 10 and rejects > 400


def test_reported_points_hash_as_the_record_path_hashes_them() -> None:
    """The columnar path makes each player's part of the content hash once per distinct seat
    and points reported: every value (a whole number and its float, both zeros, none) hashes
    as the record path hashes it, and 0 and -0.0 stay two texts."""
    values = [0, -0.0, 0.0, 3, 3.0, -6, 12.5, None, -0.0, 0]
    texts = []
    for index, value in enumerate(values):
        record = deal_hand(40 + index, hand_id=f"points-{index}")
        for player in record["players"]:
            player["reported_points"] = value
        texts.append(json.dumps(record))
    candidates, rejects = assert_paths_agree(texts)  # content hashes included
    assert (candidates, rejects) == (len(values), 0)
