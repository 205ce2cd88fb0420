"""A file's format is judged from a sample of its lines, only the lines that fail are rejected,
and a file that ends early says so.

Before: a file whose first line was a comment, not UTF-8, over 1 MiB, or held a NUL byte in its
first 8 KiB was rejected whole (exit 0); a crash-truncated file with a zero-filled tail lost all
its good hands; ``--format canonical`` on such a file said "complete" while storing nothing; a
truncated ``.gz`` ended with status ``complete``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.formats import detect_format
from pipeline.formats.source import MAX_LINE_BYTES
from pipeline.ingest.driver import ingest_paths
from tests.ingest.conftest import deal_hand, query

GOOD = [json.dumps(deal_hand(seed)) for seed in range(6)]
BOARDS = (
    "hand_id,started_at,table,variant,player,seat,top,middle,bottom,fantasyland\n"
    "h1,2026-11-01T20:15:03Z,t1,pineapple,mara,1,Qh Qd 4c,Kh Kd 7s 7c 2d,As 9s 8s 6s 3s,no\n"
    "h1,2026-11-01T20:15:03Z,t1,pineapple,jun,2,5h 5d Jc,9h 9d 9c Tc 3d,Th Td Ts 8h 8d,no\n"
)

# What stands at the top of the file, before six good canonical hands.
TOPS: dict[str, bytes] = {
    "a comment": b"# exported from the club's tracker, 2026-11-01\n",
    "a line that is not UTF-8": b'{"hand_id": "caf\xe9", "players": []}\n',
    "a line over 1 MiB": b'{"hand_id": "big", "note": "' + b"x" * (MAX_LINE_BYTES + 10) + b'"}\n',
    "a NUL byte": b'{"hand_id": "nul\x00", "players": []}\n',
}


@pytest.mark.parametrize("top", sorted(TOPS))
def test_a_bad_first_line_loses_only_itself(top: str, tmp_path: Path) -> None:
    path = tmp_path / "hands.jsonl"
    path.write_bytes(TOPS[top] + "".join(line + "\n" for line in GOOD).encode())
    assert detect_format(path) == "canonical"
    summary = ingest_paths([path], tmp_path / "hands.duckdb")
    (file_summary,) = summary.files
    assert (file_summary.status, file_summary.stored, file_summary.rejected) == ("complete", 6, 1)
    assert query(tmp_path / "hands.duckdb", "SELECT line FROM rejects") == [(1,)]


def test_a_comment_above_a_boards_header_is_reported_and_the_sheet_read(tmp_path: Path) -> None:
    path = tmp_path / "night.csv"
    path.write_text("Friday night at the club\n\n" + BOARDS, encoding="utf-8")
    assert detect_format(path) == "boards-csv"
    summary = ingest_paths([path], tmp_path / "hands.duckdb")
    assert (summary.stored, summary.rejected) == (1, 1)
    assert summary.files[0].reasons[0] == "line 1: above the header (line 3): not a row of the sheet"


@pytest.mark.parametrize("forced", [None, "canonical"])
def test_a_crash_truncated_file_with_a_zero_filled_tail_keeps_its_hands(
    forced: str | None, tmp_path: Path
) -> None:
    path = tmp_path / "hands.jsonl"
    data = "".join(line + "\n" for line in GOOD).encode()
    path.write_bytes(data + GOOD[0][:50].encode() + b"\x00" * 4096)
    summary = ingest_paths([path], tmp_path / "hands.duckdb", format=forced)
    (file_summary,) = summary.files
    assert file_summary.stored == 6 and file_summary.rejected == 1
    assert file_summary.status == "partial"
    assert "ends early" in file_summary.message and "NUL" in file_summary.message
    assert query(tmp_path / "hands.duckdb", "SELECT kind FROM rejects") == [("damaged",)]


def test_a_binary_file_with_a_forced_format_does_not_claim_complete(tmp_path: Path,
                                                                  capsys) -> None:  # noqa: ANN001
    path = tmp_path / "photo.jsonl"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 40)
    summary = ingest_paths([path], tmp_path / "hands.duckdb", format="canonical")
    (file_summary,) = summary.files
    assert file_summary.stored == 0
    assert file_summary.status == "failed"
    assert "no record could be read as canonical" in file_summary.message
    detected = ingest_paths([path], tmp_path / "detected.duckdb")
    assert detected.files[0].status == "failed"
    assert detected.files[0].message == "binary file, not a hand history"
    assert main(["ingest", str(path), "--db", str(tmp_path / "cli.duckdb"), "--format",
                 "canonical", "--quiet"]) == 0
    output = capsys.readouterr().out
    assert "failed" in output and "complete" not in output


def test_a_truncated_gz_ends_partial_and_a_complete_copy_is_read_again(tmp_path: Path) -> None:
    lines = [json.dumps(deal_hand(seed)) for seed in range(300)]
    data = gzip.compress("".join(line + "\n" for line in lines).encode())
    cut = tmp_path / "hands.jsonl.gz"
    cut.write_bytes(data[: len(data) * 2 // 3])
    database = tmp_path / "hands.duckdb"
    summary = ingest_paths([cut], database)
    (file_summary,) = summary.files
    assert file_summary.status == "partial"
    assert 0 < file_summary.stored < 300
    assert "damaged data" in file_summary.message
    assert query(database, "SELECT status FROM ingested_files") == [("partial",)]
    cut.write_bytes(data)  # the complete file arrives: it is read, and only the rest is new
    again = ingest_paths([cut], database)
    assert again.files[0].status == "complete"
    assert again.stored == 300 - file_summary.stored
