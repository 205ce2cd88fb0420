"""Deep nesting costs its own line only: format detection, every reader, validation of kept
extras and ``ofc score``'s per-line path never raise RecursionError (hardening round 2, item 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.formats import detect_format, read_source
from pipeline.formats.source import NESTED_TOO_DEEP, NestedTooDeep, load_json, read_raw_lines
from pipeline.ingest.score_lines import score_blocks
from pipeline.records.rules_file import RulesResolver
from pipeline.records.validate import MAX_EXTRA_DEPTH, InvalidHand, parse_hand
from tests.ingest.conftest import deal_hand

DATA = Path(__file__).parent / "data"
ARENA_LINES = (DATA / "ofc.jsonl").read_text(encoding="utf-8").splitlines()


def _bomb(depth: int, opening: str = "[") -> str:
    closing = {"[": "]", "{": "}"}[opening]
    inner = '"x"' if opening == "[" else ""
    if opening == "{":
        return '{"players": ' + '{"a": ' * depth + "1" + "}" * depth + "}"
    return '{"players": ' + opening * depth + inner + closing * depth + "}"


def test_a_deep_line_is_one_reject_and_the_file_is_still_canonical(tmp_path: Path) -> None:
    hands = [json.dumps(deal_hand(seed, hand_id=f"h{seed}")) for seed in range(3)]
    path = tmp_path / "deep.jsonl"
    # the bomb on line 1, where format detection looks first
    path.write_text("\n".join([_bomb(100_000), *hands]) + "\n", encoding="utf-8")

    assert detect_format(path) == "canonical"  # used to raise RecursionError
    records = list(read_source(path))
    assert [record.line for record in records] == [1, 2, 3, 4]
    assert records[0].record is None and records[0].error == NESTED_TOO_DEEP
    assert [record.hand_id for record in records[1:]] == ["h0", "h1", "h2"]
    assert all(record.error is None for record in records[1:])


def test_a_deep_line_in_a_poker_arena_log_costs_that_line(tmp_path: Path) -> None:
    path = tmp_path / "ofc.jsonl"
    bomb = '{"hand": 1, "ev": ' + "[" * 50_000 + "]" * 50_000 + "}"
    path.write_text("\n".join([bomb, *ARENA_LINES]) + "\n", encoding="utf-8")

    assert detect_format(path) == "poker-arena"
    records = list(read_source(path, game="ofc"))
    errors = [record for record in records if record.error is not None]
    assert any(NESTED_TOO_DEEP in (record.error or "") for record in errors)
    clean = list(read_source(DATA / "ofc.jsonl", game="ofc"))
    assert [r.hand_id for r in records if r.record is not None] == [
        r.hand_id for r in clean if r.record is not None]


def test_extras_nested_past_the_limit_are_refused_by_name() -> None:
    hand = deal_hand(1)
    nested: object = 1
    for _ in range(MAX_EXTRA_DEPTH):
        nested = [nested]
    hand["notes"] = nested  # exactly the limit: kept
    assert parse_hand(json.loads(json.dumps(hand))).extra["notes"] == nested
    hand["notes"] = [nested]
    with pytest.raises(InvalidHand, match=rf"field 'notes' is nested more than {MAX_EXTRA_DEPTH}"):
        parse_hand(json.loads(json.dumps(hand)))
    hand.pop("notes")
    hand["players"][0]["coach"] = {"a": [nested]}
    with pytest.raises(InvalidHand, match=r"players\[0\] \('mara'\): field 'coach' is nested"):
        parse_hand(json.loads(json.dumps(hand)))


def test_ofc_score_engine_scores_around_a_deep_line(tmp_path: Path) -> None:
    hands = [json.dumps(deal_hand(seed, hand_id=f"h{seed}")) for seed in range(3)]
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join([hands[0], _bomb(100_000, "{"), hands[1], '{"hand_id": 1e999}',
                               hands[2]]) + "\n", encoding="utf-8")
    output = "".join(block.text for block in
                     score_blocks(read_raw_lines(path), RulesResolver(), workers=1))
    lines = [json.loads(line) for line in output.splitlines()]  # strict JSON: no Infinity
    assert [line.get("hand_id") for line in lines] == ["h0", None, "h1", None, "h2"]
    assert lines[1] == {"line": 2, "hand_id": None, "error": NESTED_TOO_DEEP}
    assert "Infinity" not in output and lines[3]["line"] == 4


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(0, 3000), opening=st.sampled_from("[{"), spaces=st.booleans())
def test_any_nesting_depth_parses_or_is_refused_as_too_deep(depth: int, opening: str,
                                                            spaces: bool) -> None:
    text = _bomb(depth, opening)
    if spaces:
        text = text.replace("[", "[ ").replace("{", " {")
    try:
        value = load_json(text)
    except NestedTooDeep as error:
        assert str(error) == NESTED_TOO_DEEP
        assert depth > 100  # nothing a record could need is refused
    else:
        assert isinstance(value, dict)
