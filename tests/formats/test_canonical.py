"""The canonical JSON Lines reader: records pass through, bad lines get precise errors."""

from __future__ import annotations

import gc
import gzip
import json
from pathlib import Path

from pipeline.formats import canonical
from pipeline.formats.canonical import read_canonical, sniff_canonical

HAND = {
    "hand_id": "T7-00042",
    "site": "homegame",
    "variant": "pineapple",
    "players": [{"name": "mara", "seat": 1, "board": {"top": [], "middle": [], "bottom": []}}],
}


def _line(hand_id: str) -> str:
    return json.dumps({**HAND, "hand_id": hand_id})


def test_records_pass_through_with_hand_id(tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl"
    path.write_text(_line("a") + "\n\n   \n" + _line("b") + "\n", encoding="utf-8")
    records = list(read_canonical(path))
    assert [(record.line, record.hand_id, record.error) for record in records] == [
        (1, "a", None),
        (4, "b", None),
    ]
    assert records[0].record == {**HAND, "hand_id": "a"}
    assert records[0].path == str(path)
    assert records[0].raw == _line("a")


def test_integer_hand_id_is_reported_as_text(tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl"
    path.write_text(json.dumps({**HAND, "hand_id": 42}) + "\n", encoding="utf-8")
    assert [record.hand_id for record in read_canonical(path)] == ["42"]


def test_invalid_json_names_the_problem_and_good_lines_still_come(tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl"
    broken = '{"hand_id": "x-1", "players": [] "site": "s"}'
    path.write_text(_line("a") + "\n" + broken + "\n" + _line("b") + "\n", encoding="utf-8")
    records = list(read_canonical(path))
    assert [record.hand_id for record in records] == ["a", "x-1", "b"]
    bad = records[1]
    assert bad.record is None
    assert bad.line == 2
    assert bad.error == "invalid JSON: Expecting ',' delimiter at column 34"
    assert bad.raw == broken


def test_json_that_is_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl"
    path.write_text('[1, 2]\n"text"\n' + _line("a") + "\n", encoding="utf-8")
    records = list(read_canonical(path))
    assert records[0].error == "expected a JSON object (a hand record), got a list"
    assert records[1].error == "expected a JSON object (a hand record), got a string"
    assert records[2].record is not None


def test_truncated_last_line(tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl"
    text = _line("a") + "\n" + _line("b")
    path.write_text(text[:-20], encoding="utf-8")
    records = list(read_canonical(path))
    assert records[0].record is not None
    assert records[1].record is None
    assert records[1].error is not None
    assert records[1].error.startswith("truncated line")
    assert records[1].hand_id == "b"


def test_complete_last_line_without_newline_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl"
    path.write_text(_line("a"), encoding="utf-8")
    assert [record.hand_id for record in read_canonical(path)] == ["a"]


def test_invalid_utf8_line(tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl"
    path.write_bytes(_line("a").encode() + b'\n{"hand_id": "caf\xe9"}\n' + _line("b").encode() + b"\n")
    records = list(read_canonical(path))
    assert records[1].error == "line 2 is not UTF-8 text (byte 0xe9 at column 17)"
    assert [record.hand_id for record in records if record.record] == ["a", "b"]


def test_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl"
    path.write_bytes(b"\x00\x01binary" * 100)
    records = list(read_canonical(path))
    assert [(record.line, record.record) for record in records] == [(1, None)]
    assert "holds NUL bytes" in records[0].error and records[0].damaged


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl"
    path.write_bytes(b"")
    assert list(read_canonical(path)) == []


def test_gzip_file(tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl.gz"
    path.write_bytes(gzip.compress((_line("a") + "\n" + _line("b") + "\n").encode()))
    assert [record.hand_id for record in read_canonical(path)] == ["a", "b"]


def test_over_long_line(tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl"
    huge = json.dumps({"hand_id": "big", "notes": "x" * (1 << 20)})
    path.write_text(_line("a") + "\n" + huge + "\n" + _line("b") + "\n", encoding="utf-8")
    records = list(read_canonical(path))
    assert records[1].error == "line 2 is longer than 1 MiB"
    assert len(records[1].raw) < 2000
    assert [record.hand_id for record in records if record.record] == ["a", "b"]


def test_many_lines_in_several_batches_keep_gc_state(tmp_path: Path) -> None:
    count = canonical.BATCH_LINES * 2 + 7
    path = tmp_path / "hands.jsonl"
    path.write_text("".join(_line(f"h{number}") + "\n" for number in range(count)), encoding="utf-8")
    assert gc.isenabled()
    seen = []
    for record in read_canonical(path):
        assert gc.isenabled(), "the garbage collector must be back on between batches"
        seen.append(record.hand_id)
    assert seen == [f"h{number}" for number in range(count)]
    assert gc.isenabled()


def test_sniff() -> None:
    assert sniff_canonical(_line("a"))
    assert not sniff_canonical('{"hand": 3, "seats": ["a"]}')
    assert not sniff_canonical("hand_id,player,top")
