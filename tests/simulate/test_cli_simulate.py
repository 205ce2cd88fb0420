"""``ofc simulate`` end to end: files, gzip, summary, reproducibility and user errors."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.records.validate import parse_hand


def run(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the CLI; return (status, stdout, stderr)."""
    status = main(arguments)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_writes_plain_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "hands.jsonl"
    status, stdout, stderr = run(
        ["simulate", "--hands", "40", "--seed", "3", "--out", str(out)], capsys
    )
    assert status == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 40
    for line in lines:
        parse_hand(json.loads(line))
    assert "wrote 40 hands" in stderr
    assert stdout == ""
    assert not list(tmp_path.glob(".*partial"))


def test_gzip_output_is_reproducible_and_matches_the_plain_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["simulate", "--hands", "60", "--tables", "2", "--seed", "5", "--quiet"]
    first, second, plain = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz", tmp_path / "c.jsonl"
    assert run([*common, "--out", str(first)], capsys)[0] == 0
    assert run([*common, "--jobs", "2", "--out", str(second)], capsys)[0] == 0
    assert run([*common, "--out", str(plain)], capsys)[0] == 0
    assert first.read_bytes() == second.read_bytes()
    assert gzip.decompress(first.read_bytes()) == plain.read_bytes()


def test_summary_prints_a_row_per_bot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, stdout, _ = run(
        ["simulate", "--hands", "90", "--bots", "solid,chaser,random", "--summary", "--quiet",
         "--out", str(tmp_path / "h.jsonl")],
        capsys,
    )
    assert status == 0
    for bot in ("solid", "chaser", "random"):
        assert bot in stdout
    assert "fouls" in stdout and "%" in stdout


def test_options_shape_the_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "classic.jsonl"
    status, _, _ = run(
        ["simulate", "--hands", "30", "--players", "4", "--variant", "classic",
         "--rules", "flat-trips", "--start", "2026-03-01T18:30:00", "--pool", "5", "--quiet",
         "--out", str(out)],
        capsys,
    )
    assert status == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {record["variant"] for record in records} == {"classic"}
    assert {record["rules"] for record in records} == {"flat-trips"}
    assert all(len(record["players"]) == 4 for record in records)
    assert records[0]["started_at"].startswith("2026-03-01T18:")
    assert len({player["name"] for record in records for player in record["players"]}) <= 5


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--players", "4"], "pineapple is played by 2-3 players"),
        (["--bots", "solid,wizard"], "unknown bot 'wizard'"),
        (["--variant", "omaha"], "unknown variant"),
        (["--start", "yesterday"], "not an ISO 8601 time"),
        (["--rules", "no-such-rules"], "unknown rules"),
        (["--hands", "0"], "--hands must be at least 1"),
    ],
)
def test_user_errors_exit_2_with_a_reason(
    arguments: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never.jsonl"
    base = ["simulate", "--hands", "10", "--out", str(out)]
    status, _, stderr = run([*base, *arguments], capsys)
    assert status == 2
    assert message in stderr
    assert not out.exists()


def test_an_unwritable_path_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, stderr = run(
        ["simulate", "--hands", "5", "--out", str(tmp_path / "missing" / "h.jsonl")], capsys
    )
    assert status == 1
    assert "cannot write" in stderr
