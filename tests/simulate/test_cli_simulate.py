"""``ofc simulate`` end to end: files, gzip, summary, reproducibility and user errors."""

from __future__ import annotations

import gzip
import json
import os
import stat
import subprocess
import sys
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


def _simulate(*arguments: str, **options: object) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pipeline.cli", "simulate",
                             *arguments], **options)  # type: ignore[call-overload]


def test_a_named_pipe_is_written_to_and_stays_a_pipe(tmp_path: Path) -> None:
    """A target that is no regular file is written to directly: the file used to be written
    beside it and renamed over it, so ``--out /dev/null`` run as root replaced the device with
    a regular file (here: a named pipe, which the reader never saw written)."""
    fifo = tmp_path / "hands.fifo"
    os.mkfifo(fifo)
    with open(tmp_path / "read.jsonl", "wb") as read:
        reader = subprocess.Popen(["cat", str(fifo)], stdout=read)
        writer = _simulate("--hands", "25", "--seed", "3", "--quiet", "--out", str(fifo))
        try:
            assert writer.wait(timeout=120) == 0
            reader.wait(timeout=30)
        finally:
            reader.kill()
            writer.kill()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    lines = (tmp_path / "read.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 25
    assert not list(tmp_path.glob(".*partial"))


def test_a_symbolic_link_stays_a_link_to_the_file_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real = tmp_path / "kept" / "hands.jsonl"
    real.parent.mkdir()
    link = tmp_path / "latest.jsonl"
    link.symlink_to(real)
    status, _, _ = run(["simulate", "--hands", "12", "--quiet", "--out", str(link)], capsys)
    assert status == 0
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert len(real.read_text(encoding="utf-8").splitlines()) == 12
    assert not list(tmp_path.rglob(".*partial"))


def test_out_dash_writes_the_hands_to_standard_output(tmp_path: Path) -> None:
    """``--out -`` wrote a file named "-"; it is standard output, the summary going to standard
    error, so ``ofc simulate --out - | ofc score -`` works."""
    writer = _simulate("--hands", "30", "--seed", "4", "--summary", "--out", "-",
                       cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    lines = out.decode().splitlines()
    assert len(lines) == 30
    for line in lines:
        parse_hand(json.loads(line))
    assert "wrote 30 hands" in err.decode() and "standard output" in err.decode()
    assert "random" in err.decode() or "solid" in err.decode()  # the summary table
    assert not (tmp_path / "-").exists()


def test_a_reader_that_stops_early_ends_the_run_quietly(tmp_path: Path) -> None:
    """``ofc simulate --out - | head -1``: no traceback, no "Exception ignored", status 0."""
    writer = _simulate("--hands", "3000", "--quiet", "--out", "-", cwd=tmp_path,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = writer.stdout.readline()
    writer.stdout.close()
    err = writer.stderr.read().decode()
    assert writer.wait(timeout=120) == 0, err
    assert json.loads(first)["hand_id"]
    assert "Traceback" not in err and "Exception" not in err and "Broken pipe" not in err
