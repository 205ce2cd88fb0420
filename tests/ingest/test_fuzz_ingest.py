"""Property-based fuzz of ingest over all three formats: valid records mixed with every kind of
damage issue 15 lists. Every valid record lands, every damaged one is quarantined with a reason
naming its line, and nothing crashes.

A fixed seed and a small budget keep it in the default suite (a few seconds per format): the
examples of a format share one database (each writes its own file, with its own hand ids) and
most run without worker processes (starting them costs more than a small file's ingest).
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from pipeline.formats.source import MAX_LINE_BYTES
from pipeline.ingest.driver import ingest_paths
from tests.ingest.conftest import deal_hand, query

SETTINGS = settings(max_examples=8, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
FUZZ_SEED = 20261201


@dataclass
class Item:
    """One record (or junk) written to the file: its lines, and whether it must land."""

    lines: list[bytes]
    valid: bool
    hand_id: str | None = None  # the id it is stored under (canonical, boards CSV)
    first_line: int = 0  # set when the file is laid out
    kinds: list[str] = field(default_factory=list)

    @property
    def last_line(self) -> int:
        return self.first_line + len(self.lines) - 1


def lay_out(items: list[Item], header: list[bytes] = ()) -> bytes:
    """The file's bytes, numbering each item's lines."""
    number = len(header) + 1
    for item in items:
        item.first_line = number
        number += len(item.lines)
    return b"".join(line + b"\n" for line in header) + b"".join(
        line + b"\n" for item in items for line in item.lines)


EXAMPLES = iter(range(1, 1_000_000))
"""Numbers the examples: each writes its own file and uses its own hand ids."""


def check(database: Path, path: Path, items: list[Item], by_line: bool = False) -> None:
    """Every valid item of the file at ``path`` stored, every damaged one quarantined with a
    reason inside its lines (and not stored)."""
    where = [str(path)]
    stored_ids = {hand_id for (hand_id,) in query(
        database, "SELECT hand_id FROM hands WHERE source_path = ?", where)}
    stored_lines = {line for (line,) in query(
        database, "SELECT source_line FROM hands WHERE source_path = ?", where)}
    rejects = query(database, "SELECT line, reason FROM rejects WHERE line IS NOT NULL AND "
                              "path = ?", where)
    # a file none of whose lines can be read has one reject for the whole file (line null)
    whole_file = [reason for (reason,) in query(
        database, "SELECT reason FROM rejects WHERE line IS NULL AND kind = 'file' AND path = ?",
        where)]
    for item in items:
        inside = [reason for line, reason in rejects if item.first_line <= line <= item.last_line]
        inside += whole_file
        landed = (item.first_line in stored_lines) if by_line else (item.hand_id in stored_ids)
        if item.valid:
            assert landed, (item.kinds, item.first_line, inside)
        else:
            assert not landed, (item.kinds, item.first_line)
            assert inside and all(reason.strip() for reason in inside), (item.kinds, item.first_line)


@pytest.fixture(scope="module")
def shared_folder(tmp_path_factory) -> Path:  # noqa: ANN001
    """One folder (and database) for every example of a format's test."""
    return tmp_path_factory.mktemp("fuzz")


# --- canonical JSON Lines --------------------------------------------------------------------------

CANONICAL_VALID = ("plain", "spaced names", "integer id", "unknown field", "decomposed name")
CANONICAL_DAMAGE = ("points past int64", "huge seat", "card twice", "NaN", "NUL byte",
                    "not UTF-8", "comment", "cut JSON", "escape in a name", "long name",
                    "year 1", "over-long line", "infinite points text")


def canonical_item(kind: str, number: int, example: int) -> Item:
    names = ("mara", "jun", "lee")
    if kind == "spaced names":
        names = (" mara ", "jun  ", "lee")
    elif kind == "decomposed name":
        names = (unicodedata.normalize("NFD", "Amélie"), "jun", "lee")
    hand_id = f"F{example}-{number}"
    record = deal_hand(number, hand_id=hand_id, names=names)
    record["button"] = names[0].strip()
    text: str | None = None
    if kind == "integer id":
        record["hand_id"] = example * 1000 + number
        hand_id = str(example * 1000 + number)
    elif kind == "unknown field":
        record["dealer_note"] = {"tilt": [1, 2.5, None]}
    elif kind == "points past int64":
        record["players"][0]["reported_points"] = 2**64
    elif kind == "huge seat":
        record["players"][1]["seat"] = 2**70
    elif kind == "card twice":
        record["players"][1]["streets"][0]["dealt"][0] = record["players"][0]["streets"][0]["dealt"][0]
    elif kind == "escape in a name":
        record["players"][2]["name"] = "\x1b[2Jlee"
    elif kind == "long name":
        record["players"][2]["name"] = "l" * 65
    elif kind == "year 1":
        record["started_at"] = "0001-01-01T00:00:00+01:00"
    text = json.dumps(record)
    if kind == "NaN":
        text = text[:-1] + ', "x": NaN}'
    elif kind == "infinite points text":
        text = text.replace('"seat": 1,', '"seat": 1, "reported_points": Infinity,', 1)
    data = text.encode()
    if kind == "NUL byte":
        data = data.replace(b'"site"', b'"si\x00te"', 1)
    elif kind == "not UTF-8":
        data = data.replace(b"homegame", b"home\xffgame", 1)
    elif kind == "comment":
        data = b"# exported by hand, please check"
        hand_id = None
    elif kind == "cut JSON":
        data = data[: len(data) // 2]
    elif kind == "over-long line":
        data = data[:-1] + b', "pad": "' + b"x" * MAX_LINE_BYTES + b'"}'
    return Item([data], kind in CANONICAL_VALID, hand_id, kinds=[kind])


@seed(FUZZ_SEED)
@SETTINGS
@given(kinds=st.lists(st.sampled_from(CANONICAL_VALID + CANONICAL_DAMAGE), min_size=1, max_size=12),
       tail=st.sampled_from(["none", "zeros", "cut"]), workers=st.sampled_from([1, 1, 1, 2]))
def test_canonical(shared_folder, kinds: list[str], tail: str, workers: int) -> None:  # noqa: ANN001
    folder, example = shared_folder, next(EXAMPLES)
    items = [canonical_item(kind, number, example) for number, kind in enumerate(kinds, start=1)]
    data = lay_out(items)
    if tail == "zeros":
        data += json.dumps(deal_hand(999))[:40].encode() + b"\x00" * 2048
    elif tail == "cut":
        data += json.dumps(deal_hand(999))[:60].encode()
    path = folder / f"hands-{example}.jsonl"
    path.write_bytes(data)
    summary = ingest_paths([path], folder / "hands.duckdb", workers=workers)
    (file_summary,) = summary.files
    check(folder / "hands.duckdb", path, items)
    assert file_summary.stored == sum(item.valid for item in items)
    if file_summary.status == "failed":
        # only when nothing in the file could be read as a record
        assert not any(item.valid for item in items)
    elif tail != "none":
        assert file_summary.status == "partial"
        assert query(folder / "hands.duckdb",
                     "SELECT count(*) FROM rejects WHERE kind = 'damaged' AND path = ?",
                     [str(path)]) == [(1,)]
    else:
        assert file_summary.status == "complete"


# --- boards CSV ------------------------------------------------------------------------------------

CSV_HEADER = b"hand_id,started_at,table,variant,player,seat,top,middle,bottom,fantasyland,points,notes"
CSV_VALID = ("plain", "cp1252 row", "quoted line break", "spaced names")
CSV_DAMAGE = ("points past int64", "seat not a number", "NUL row inside", "broken quote",
              "card twice", "escape in a name", "junk row between")


def final_board(player: dict) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {"top": [], "middle": [], "bottom": []}
    for street in player["streets"]:
        for row, cards in street["placed"].items():
            rows[row] += cards
    return rows


def csv_item(kind: str, number: int, example: int) -> Item:
    record = deal_hand(number, players=2)
    when = f"2026-{1 + example % 12:02d}-{1 + number % 28:02d}T20:{number % 60:02d}:00"
    names = ["mara", "jun"]
    if kind == "cp1252 row":
        names[0] = "Amélie"
    elif kind == "spaced names":
        names = [" mara", "jun "]
    elif kind == "escape in a name":
        names[1] = "j\x1bun"
    boards = [final_board(player) for player in record["players"]]
    if kind == "card twice":
        boards[1]["top"][0] = boards[0]["top"][0]
    rows = []
    for index, (name, board) in enumerate(zip(names, boards, strict=True)):
        points = 2**64 if kind == "points past int64" and index == 0 else (3 if index == 0 else -3)
        seat = "one" if kind == "seat not a number" and index == 1 else str(index + 1)
        note = ""
        if kind == "quoted line break" and index == 0:
            note = '"first line\nsecond ""quoted"" line"'
        elif kind == "broken quote" and index == 0:
            note = '"never closed'
        text = (f"{number},{when},t{example},pineapple,{name},{seat},{' '.join(board['top'])},"
                f"{' '.join(board['middle'])},{' '.join(board['bottom'])},no,{points},{note}")
        encoded = text.encode("cp1252" if kind == "cp1252 row" and index == 0 else "utf-8")
        rows += encoded.split(b"\n")
    if kind == "NUL row inside":
        rows.insert(1, b"\x00\x00garbled")
    if kind == "junk row between":
        return Item([b"\x00\x00 not a row"], False, None, kinds=[kind])
    day = when[:10]
    return Item(rows, kind in CSV_VALID, f"t{example}/{day}/{number}", kinds=[kind])


@seed(FUZZ_SEED)
@SETTINGS
@given(kinds=st.lists(st.sampled_from(CSV_VALID + CSV_DAMAGE), min_size=1, max_size=10))
def test_boards_csv(shared_folder, kinds: list[str]) -> None:  # noqa: ANN001
    folder, example = shared_folder, next(EXAMPLES)
    items = [csv_item(kind, number, example) for number, kind in enumerate(kinds, start=1)]
    path = folder / f"night-{example}.csv"
    path.write_bytes(lay_out(items, header=[CSV_HEADER]))
    summary = ingest_paths([path], folder / "hands.duckdb")
    check(folder / "hands.duckdb", path, items)
    assert summary.stored == sum(item.valid for item in items)
    assert summary.files[0].warning_count == sum(item.kinds == ["cp1252 row"] for item in items)


# --- poker-arena logs ------------------------------------------------------------------------------

ARENA_SOURCE = Path(__file__).parents[1] / "formats" / "data" / "ofc.jsonl"
ARENA_DAMAGE = ("points past int64", "cut line", "NUL byte", "not UTF-8", "no score",
                "junk line between")


def arena_hands() -> list[list[bytes]]:
    """The source log's hands (header line first), each as its lines."""
    hands: list[list[bytes]] = []
    for line in ARENA_SOURCE.read_bytes().splitlines():
        if b'"seats"' in line:
            hands.append([line])
        elif hands and b'"ev"' in line:
            hands[-1].append(line)
    return hands


@pytest.fixture(scope="module")
def landing_hands(tmp_path_factory) -> list[list[bytes]]:  # noqa: ANN001
    """The hands of the source log that land when it is ingested clean."""
    folder = tmp_path_factory.mktemp("arena-clean")
    hands = arena_hands()
    path = folder / "ofc.jsonl"
    path.write_bytes(b"".join(line + b"\n" for hand in hands for line in hand))
    ingest_paths([path], folder / "hands.duckdb")
    starts, number = [], 1
    for hand in hands:
        starts.append(number)
        number += len(hand)
    stored = {line for (line,) in query(folder / "hands.duckdb", "SELECT source_line FROM hands")}
    return [hand for hand, start in zip(hands, starts, strict=True) if start in stored]


def arena_item(kind: str, hand: list[bytes], example: int) -> Item:
    # a field of the example's own in the header: the hand's id (a digest of its lines) is new
    lines = [hand[0].replace(b'{"hand"', b'{"fuzz": %d, "hand"' % example, 1), *hand[1:]]
    scores = [index for index, line in enumerate(lines) if b'"score"' in line]
    if kind == "points past int64":
        value = json.loads(lines[scores[0]])
        value["ev"]["points"] = 2**64
        lines[scores[0]] = json.dumps(value).encode()
    elif kind == "cut line":
        lines[2] = lines[2][: len(lines[2]) // 2]
    elif kind == "NUL byte":
        lines[3] = lines[3].replace(b'"seat"', b'"se\x00at"', 1)
    elif kind == "not UTF-8":
        lines[3] = lines[3].replace(b'"event"', b'"ev\xffent"', 1)
    elif kind == "no score":
        del lines[scores[-1]]
    elif kind == "junk line between":
        return Item([b"# --- next table ---"], False, kinds=[kind])
    return Item(lines, kind == "valid", kinds=[kind])


@seed(FUZZ_SEED)
@SETTINGS
@given(data=st.data())
def test_poker_arena(shared_folder, landing_hands, data) -> None:  # noqa: ANN001
    folder, example = shared_folder, next(EXAMPLES)
    count = data.draw(st.integers(min_value=1, max_value=min(8, len(landing_hands))))
    chosen = data.draw(st.permutations(range(len(landing_hands))))[:count]
    kinds = data.draw(st.lists(st.sampled_from(("valid", "valid", *ARENA_DAMAGE)),
                               min_size=count, max_size=count))
    items = [arena_item(kind, landing_hands[index], example)
             for kind, index in zip(kinds, chosen, strict=True)]
    path = folder / f"{example}" / "ofc.jsonl"  # the file name names the game
    path.parent.mkdir()
    path.write_bytes(lay_out(items))
    summary = ingest_paths([path], folder / "hands.duckdb")
    check(folder / "hands.duckdb", path, items, by_line=True)
    assert summary.stored == sum(item.valid for item in items)
