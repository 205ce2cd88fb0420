"""Hardening round 2 at the commands: inputs nobody had tried cost their own lines, never the run.

Each test reproduces a defect found in the second review (its number in the issue is named) and
failed on the code before its fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli import main
from tests.ingest.conftest import count, deal_hand, query, write_jsonl


def _bomb(depth: int) -> str:
    return '{"players": ' + "[" * depth + "]" * depth + "}"


def test_ingest_reads_the_files_after_a_deeply_nested_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 1: a 100,000-level line in the first file stopped the whole run."""
    folder = tmp_path / "hands"
    folder.mkdir()
    (folder / "a-deep.jsonl").write_text(
        _bomb(100_000) + "\n" + json.dumps(deal_hand(1, hand_id="a1")) + "\n", encoding="utf-8")
    write_jsonl(folder / "b-after.jsonl", [deal_hand(seed, hand_id=f"b{seed}") for seed in (2, 3)])
    database = tmp_path / "db.duckdb"

    assert main(["ingest", str(folder), "--db", str(database), "--quiet"]) == 0
    output = " ".join(capsys.readouterr().out.split())
    assert "line 1: invalid JSON: nested too deeply" in output
    assert count(database, "hands") == 3
    assert query(database, "SELECT line, reason FROM rejects") == [
        (1, "invalid JSON: nested too deeply (arrays or objects about 1,000 levels deep or more)")]


def test_score_prints_every_line_around_a_deeply_nested_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Items 1 and 9: ``ofc score`` printed nothing at all, and ``"hand_id": Infinity``."""
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([json.dumps(deal_hand(1, hand_id="x1")), _bomb(100_000),
                               '{"hand_id": -1e400, "variant": "pineapple"}',
                               json.dumps(deal_hand(2, hand_id="x2"))]) + "\n", encoding="utf-8")

    assert main(["score", str(path)]) == 2  # some lines were invalid
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line.get("hand_id") for line in lines] == ["x1", None, None, "x2"]
    assert [line.get("line") for line in lines] == [None, 2, 3, None]
