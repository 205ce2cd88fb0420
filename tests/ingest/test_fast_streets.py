"""The streets-as-raw-text parser (``ofc score``'s) gives exactly what the columnar parser gives.

pipeline.ingest.fast_streets reads every street of a block as one raw JSON text: the cards are
found by their rank byte, masked, and each distinct street shape is checked once. It must
accept the same lines as pipeline.ingest.fast_canonical (which tests/ingest/test_fast_canonical.py
holds to the per-record path), with the same columns — hand keys and content hashes, placements
and discards included — and send back the same others. The records: the demo sample (three
variants, Fantasyland), hand-made shapes, random mutations and byte-level damage, written
compactly (what the fast path is for) and with the standard library's spacing.
"""

from __future__ import annotations

import dataclasses
import json
import random

import numpy as np
import pytest

from pipeline.ingest import fast_streets
from pipeline.ingest.fast_canonical import parse_canonical_batch
from pipeline.ingest.fast_streets import (
    parse_canonical_block,
    parse_canonical_streets,
    street_lists,
)
from tests.ingest.conftest import deal_hand
from tests.ingest.test_fast_canonical import (
    damaged_lines,
    demo_records,
    mutate,
    special_records,
)

COMPACT = (",", ":")


def lines_of(texts: list[str | bytes]) -> list[tuple[int, bytes, bool]]:
    return [(number, text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"),
             True) for number, text in enumerate(texts, 1)]


def assert_same_parse(texts: list[str | bytes], identity: bool = True,
                      streets: bool = True, exact: bool = True) -> tuple[int, int]:
    """The streets parser accepts only lines the columnar parser accepts, with the same
    columns, and sends back every line that parser sends back; with ``exact``, it accepts
    them all too (it may send back more only for a street the columnar parser reads more
    leniently, such as a key given twice: the per-record path decides those). Returns
    (accepted, sent back). The streets parser must really have read the block."""
    lines = lines_of(texts)
    parsed = parse_canonical_streets(lines, "batch.jsonl", identity, streets)
    assert parsed is not None
    columns, accepted, rest = parsed
    expected_columns, expected_accepted, expected_rest = parse_canonical_batch(
        lines, "batch.jsonl", identity, streets)
    assert set(accepted.tolist()) <= set(expected_accepted.tolist())
    assert set(rest) >= set(expected_rest)
    assert sorted(accepted.tolist() + rest) == list(range(len(lines)))
    if exact:
        assert accepted.tolist() == expected_accepted.tolist()
    expected_columns = expected_columns.select(np.isin(expected_accepted, accepted))
    for field in dataclasses.fields(columns):
        ours, theirs = getattr(columns, field.name), getattr(expected_columns, field.name)
        if isinstance(theirs, np.ndarray):
            assert ours.dtype == theirs.dtype, field.name
            assert np.array_equal(ours, theirs, equal_nan=ours.dtype.kind == "M"), field.name
        else:
            assert ours == theirs, field.name
    return len(accepted), len(rest)


def repeated_key(text: str | bytes) -> bool:
    """Whether some JSON object of the text gives a key twice."""
    repeated = False

    def pairs(items: list[tuple[str, object]]) -> dict:
        nonlocal repeated
        repeated |= len({key for key, _ in items}) != len(items)
        return dict(items)

    json.loads(text, object_pairs_hook=pairs)
    return repeated


@pytest.mark.parametrize("separators", [COMPACT, None], ids=["compact", "spaced"])
def test_plain_records_give_the_same_columns(separators: tuple[str, str] | None) -> None:
    records = demo_records(300) + special_records() + [deal_hand(seed) for seed in range(40)]
    texts = [json.dumps(record, separators=separators) for record in records]
    accepted, rest = assert_same_parse(texts)
    assert (accepted, rest) == (len(records), 0)
    accepted, rest = assert_same_parse(texts, identity=False, streets=False)  # ofc score's
    assert (accepted, rest) == (len(records), 0)


def test_rows_and_keys_in_any_order_land_in_the_same_board() -> None:
    """The cards of a street's text go to the batch's layout (dealt, top, middle, bottom,
    discarded) whatever the order of its keys and rows: the boards, placements and hashes
    are the same as written in order."""
    rng = random.Random(5)
    texts = []
    for seed in range(30):
        record = deal_hand(seed, hand_id=f"order{seed}")
        for player in record["players"]:
            streets = []
            for street in player["streets"]:
                rows = list(street["placed"].items())
                rng.shuffle(rows)
                if rng.random() < 0.3:
                    rows += [(row, []) for row in ("top", "middle", "bottom")
                             if row not in street["placed"]]
                    rng.shuffle(rows)
                keys = [("dealt", street["dealt"]), ("placed", dict(rows))]
                if street.get("discarded") or rng.random() < 0.5:
                    keys.append(("discarded", street.get("discarded", [])))
                rng.shuffle(keys)
                streets.append(dict(keys))
            player["streets"] = streets
        texts.append(json.dumps(record, separators=COMPACT))
    assert assert_same_parse(texts) == (30, 0)


def test_unusual_street_texts_get_the_same_verdict() -> None:
    """Hand-made street texts, each in a block of plain records: the same lines accepted, the
    others sent back, on both parsers."""
    base = json.dumps(deal_hand(77, hand_id="odd"), separators=COMPACT)
    first = base.split('"dealt":["', 1)[1][:2]
    changes = [
        ('"dealt":[', '"dealt":[],"dealt":['),          # a key twice
        ('"placed":{', '"placed":{"top":[],"top":[],'),  # a row twice
        ('"placed":{', '"placed":{"side":[],'),          # a row that is not one
        ('"dealt":[', '"dealer":[],"dealt":['),          # a street key that is not one
        ('"placed":{', '"placed":[{'),                   # placed as a list: broken shape
        (f'"{first}"', f'"{first.lower()}"'),            # a card in lower case
        (f'"{first}"', f'"\\u00{ord(first[0]):x}{first[1]}"'),  # an escaped card
        (f'"{first}"', f'" {first}"'),                   # a space inside the quotes
        (f'"{first}"', f'"{first}x"'),                   # a card of three bytes
        (f'"{first}"', f'"{first[0]}"'),                 # a card of one byte
        (f'"{first}"', f'["{first}"]'),                  # a card in a list
        ('"placed":{"', '"placed":{"T'),                 # a capital in a key
        ('"dealt":', '"d\\u0065alt":'),                  # an escaped key
        ('"dealt":[', '"dealt" : [ '),                   # spaces between the tokens
        ('"discarded":[]', '"discarded":null'),
        ('"discarded":[]', '"discarded":[[]]'),
        ('"placed":{', '"placed":{"top":null,'),
        ('"placed":{', '"placed":{"top":7,'),
        ('"placed":{', '"placed":{"top":"Ah",'),
        ('{"dealt"', '{"note":"TJQKA 23456789","dealt"'),  # ranks in a string of no card
        ('"streets":[', '"streets":[[],'),                # a street that is not an object
    ]
    texts: list[str | bytes] = [json.dumps(deal_hand(seed), separators=COMPACT)
                                for seed in range(3)]
    for old, new in changes:
        assert old in base, old
        texts.append(base.replace(old, new, 1))
    texts.append(base.replace(f'"{first}"', '"Zz"'))  # every spelling of the card changed
    texts.append(base.encode().replace(first.encode(), b"\xc3\xa9", 1))  # not UTF-8 as a card
    accepted, rest = assert_same_parse(texts, exact=False)
    assert accepted >= 4 and rest >= len(changes) - 3  # both kinds are really in the mix
    # Only a key given twice (its last value counts for the columnar parser) or written with
    # an escape sends a line the columnar parser accepts to the per-record path instead.
    _, expected, _ = parse_canonical_batch(lines_of(texts), "")
    _, ours, _ = parse_canonical_block(lines_of(texts), "")
    lenient = set(expected.tolist()) - set(ours.tolist())
    assert lenient and all(repeated_key(texts[index]) or "\\u" in texts[index]
                           for index in lenient)


@pytest.mark.parametrize("seed", range(4))
def test_mutated_records_get_the_same_verdict(seed: int) -> None:
    rng = random.Random(seed)
    bases = demo_records(60) + special_records()
    texts = []
    for _ in range(300):
        record = mutate(rng.choice(bases), rng)
        try:
            texts.append(json.dumps(record, allow_nan=True, separators=COMPACT))
        except (TypeError, ValueError, OverflowError):
            continue
    texts += ["", "   ", "[1, 2]", '{"hand_id": "x"', "null", '"text"']
    accepted, rest = assert_same_parse(texts, exact=False)
    assert accepted > 20 and rest > 20


def test_byte_level_damage_gets_the_same_verdict() -> None:
    bases = [json.dumps(record, separators=COMPACT).encode() for record in demo_records(80)]
    texts: list[str | bytes] = [bytes(damaged) for damaged in damaged_lines(
        random.Random(11), bases, 600, (b"*", b'"**"'), (b"10", b"Ah", b"xx", b"**", b"[]"))]
    accepted, rest = assert_same_parse(texts, exact=False)
    assert accepted > 5 and rest > 400


def test_a_card_list_holding_stars_hands_the_block_to_the_other_path() -> None:
    """A list element ``"**"`` has no rank byte: the count of cards per street disagrees with
    the shape, so the streets parser gives the block up and the columnar parser reads it."""
    record = json.dumps(deal_hand(3), separators=COMPACT)
    first = record.split('"dealt":["', 1)[1][:2]
    starred = record.replace(f'"{first}"', '"**"')  # every spelling of that card
    lines = lines_of([record, starred])
    assert parse_canonical_streets(lines, "") is None
    columns, accepted, rest = parse_canonical_block(lines, "")
    assert accepted.tolist() == [0] and rest == [1]
    assert columns.hand_count == 1


def test_street_lists_of_one_street() -> None:
    """Worked by hand: the lengths in the layout (dealt, top, middle, bottom, discarded), the
    codes in that order (card code = rank * 4 + suit, clubs first), every list plain."""
    text = b'{"discarded":["2c"],"placed":{"bottom":["As"],"top":["3d"]},"dealt":["2c","3d","As"]}'
    lengths, codes, plain = street_lists([text])
    assert lengths.tolist() == [3, 1, 0, 1, 1]
    assert codes.tolist() == [0, 5, 51, 5, 51, 0]
    assert plain.tolist() == [True] * 5
    lengths, codes, plain = street_lists([b'{"dealt":["2c"],"placed":{"top":["2c"]},"x":[]}'])
    assert not plain.any()  # a key that is not one: its cards kept in text order, as dealt
    assert lengths.tolist() == [2, 0, 0, 0, 0] and codes.tolist() == [0, 0]


def test_the_shape_tables_start_again_past_their_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast_streets, "_MOST_SHAPES", 3)
    monkeypatch.setattr(fast_streets, "_SHAPES", fast_streets._Shapes())
    texts = [json.dumps(deal_hand(seed), separators=COMPACT) for seed in range(12)]
    assert assert_same_parse(texts) == (12, 0)
    assert len(fast_streets._SHAPES.rows) <= 3 * 12 * 5
