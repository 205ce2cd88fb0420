"""Messages say what they mean: no doubled word in JSON errors, ``ofc board --help`` speaks of
the board, not of records."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.cli import build_parser
from pipeline.formats import read_source
from pipeline.formats.source import json_error_reason


def test_json_errors_name_the_column_once(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text('{"hand_id": "h1", "players": [], "site": "unterminated\n', encoding="utf-8")
    (record,) = list(read_source(path, format="canonical"))
    assert "at at" not in record.error
    assert "Unterminated string starting at column" in record.error
    try:
        json.loads('{"a" 1}')
    except json.JSONDecodeError as error:
        assert json_error_reason(error) == "invalid JSON: Expecting ':' delimiter at column 6"


def test_board_help_speaks_of_the_board() -> None:
    parser = build_parser()
    subparsers = next(action for action in parser._actions if action.dest == "command")
    text = subparsers.choices["board"].format_help()
    assert "record" not in text
    assert "judge the board" in " ".join(text.split())
