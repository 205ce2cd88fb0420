"""Hardening round 2 at the commands: inputs nobody had tried cost their own lines, never the run.

Each test reproduces a defect found in the second review (its number in the issue is named) and
failed on the code before its fix.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.ingest.summary import MAX_STORED_REJECTS
from tests.ingest.conftest import count, deal_hand, query, write_jsonl

OFC = [sys.executable, "-c", "import sys; from pipeline.cli import main; sys.exit(main())"]


def _bomb(depth: int) -> str:
    return '{"players": ' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("command", ["ingest", "watch"])
def test_ingest_reads_the_files_after_a_deeply_nested_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Item 1: a 100,000-level line in the first file stopped the whole run (ofc watch died)."""
    folder = tmp_path / "hands"
    folder.mkdir()
    (folder / "a-deep.jsonl").write_text(
        _bomb(100_000) + "\n" + json.dumps(deal_hand(1, hand_id="a1")) + "\n", encoding="utf-8")
    write_jsonl(folder / "b-after.jsonl", [deal_hand(seed, hand_id=f"b{seed}") for seed in (2, 3)])
    database = tmp_path / "db.duckdb"

    extra = ["--once"] if command == "watch" else ["--quiet"]
    assert main([command, str(folder), "--db", str(database), *extra]) == 0
    output = " ".join(capsys.readouterr().out.split())
    if command == "ingest":
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


@pytest.mark.parametrize("command", ["ingest", "watch"])
def test_rejects_stored_per_file_are_capped_and_the_rest_counted(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 9: every junk line became a reject row (a 2 MB file: a million rows, 28 MB)."""
    junk = 2 * MAX_STORED_REJECTS + 500
    lines: list[dict | str] = [deal_hand(1, hand_id="first")]
    lines += ['{"x'] * junk
    lines += [deal_hand(2, hand_id="last")]
    folder = tmp_path / "hands"
    write_jsonl(folder / "junk.jsonl", lines)
    database = tmp_path / "db.duckdb"
    arguments = ["--once"] if command == "watch" else ["--quiet"]

    assert main([command, str(folder), "--db", str(database), *arguments]) == 0
    capsys.readouterr()
    assert query(database, "SELECT hand_id FROM hands ORDER BY hand_id") == [("first",), ("last",)]
    assert query(database, "SELECT count(*), min(line), max(line) FROM rejects") == [
        (MAX_STORED_REJECTS, 2, MAX_STORED_REJECTS + 1)]
    if command == "watch":  # a file is recorded in ingested_files once it has been idle
        assert query(database, "SELECT rejected FROM file_offsets") == [(junk,)]
        return
    [(rejected, message)] = query(database, "SELECT rejected, message FROM ingested_files")
    assert rejected == junk
    assert message == (f"{junk:,} records rejected: the first {MAX_STORED_REJECTS:,} are kept in "
                       "the rejects table with their line and reason, the rest only counted")


@pytest.mark.parametrize("command", ["ingest", "watch"])
def test_a_glob_through_symlink_loops_ends(tmp_path: Path, command: str) -> None:
    """Item 4: ``ofc ingest 'DIR/**/*.jsonl'`` over links pointing back up the tree never ended
    (and ``ofc watch`` grew to gigabytes); given as a folder the same tree was handled."""
    root = tmp_path / "logs"
    write_jsonl(root / "a" / "b" / "deep.jsonl", [deal_hand(1, hand_id="deep")])
    write_jsonl(root / "top.jsonl", [deal_hand(2, hand_id="top")])
    for link, target in (("a/b/up", "../.."), ("a/b/up2", "../.."), ("a/sideways", "..")):
        (root / link).symlink_to(target, target_is_directory=True)
    (root / "a" / "again.jsonl").symlink_to("../top.jsonl")
    database = tmp_path / "db.duckdb"
    extra = ["--once"] if command == "watch" else []
    result = subprocess.run(
        [*OFC, command, f"{root}/**/*.jsonl", "--db", str(database), *extra],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert query(database, "SELECT hand_id FROM hands ORDER BY hand_id") == [("deep",), ("top",)]


def test_lake_build_reads_around_a_deeply_nested_line(tmp_path: Path) -> None:
    """Item 1: ``ofc lake build`` failed on the same line."""
    folder = tmp_path / "hands"
    folder.mkdir()
    (folder / "deep.jsonl").write_text(
        "\n".join([json.dumps(deal_hand(1, hand_id="a1")), _bomb(100_000),
                   json.dumps(deal_hand(2, hand_id="a2"))]) + "\n", encoding="utf-8")
    lake = tmp_path / "lake"
    built = subprocess.run([*OFC, "lake", "build", str(folder), "--lake", str(lake)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    assert "Traceback" not in built.stderr
    players = subprocess.run([*OFC, "players", "--lake", str(lake), "--format", "csv"],
                             capture_output=True, text=True, timeout=300)
    assert players.returncode == 0, players.stderr
    rows = players.stdout.splitlines()[1:]
    assert len(rows) == 3 and all(row.split(",")[1] == "2" for row in rows), rows
