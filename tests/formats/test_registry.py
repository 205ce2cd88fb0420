"""The format registry: detecting a file's format and reading any supported file."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from pipeline.formats import FORMATS, FormatError, detect_format, read_source

CANONICAL_LINE = json.dumps(
    {"hand_id": "x-1", "variant": "classic", "players": [{"name": "a", "seat": 1}]}
)


def test_registry_lists_the_formats() -> None:
    assert list(FORMATS) == ["canonical", "poker-arena", "boards-csv"]
    for spec in FORMATS.values():
        assert callable(spec.read) and callable(spec.sniff) and spec.description


def test_reading_lines_does_not_import_the_readers() -> None:
    """The registry (and every format's reader) is built on first use: a command that only
    reads lines (``ofc score``, with pipeline.formats.source) starts without them; the
    registry's names still import as before."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    script = (
        "import sys\n"
        "import pipeline.formats.source\n"
        "before = sorted(m for m in sys.modules if m.startswith('pipeline.formats'))\n"
        "from pipeline.formats import FILE_SUFFIXES, FORMATS, SourceRecord\n"
        "print(before, list(FORMATS), '.csv' in FILE_SUFFIXES, SourceRecord.__name__)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=repo, timeout=60, check=True)
    assert result.stdout.split("] ")[0] + "]" == str(["pipeline.formats",
                                                       "pipeline.formats.source"])
    assert "['canonical', 'poker-arena', 'boards-csv'] True SourceRecord" in result.stdout


def test_detect_each_format(
    tmp_path: Path, classic_log: Path, sample_boards: Path
) -> None:
    canonical = tmp_path / "hands.jsonl"
    canonical.write_text("\n\n" + CANONICAL_LINE + "\n", encoding="utf-8")
    assert detect_format(canonical) == "canonical"
    assert detect_format(classic_log) == "poker-arena"
    assert detect_format(sample_boards) == "boards-csv"
    compressed = tmp_path / "boards.gz"
    compressed.write_bytes(gzip.compress(sample_boards.read_bytes()))
    assert detect_format(compressed) == "boards-csv"


def test_detect_unknown_format_explains(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Hand #1: mara bets\n", encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        detect_format(path)
    message = str(caught.value)
    assert "unknown format" in message and "Hand #1: mara bets" in message
    for name in FORMATS:
        assert name in message


def test_detect_empty_and_binary_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(FormatError, match="empty file"):
        detect_format(empty)
    assert list(read_source(empty)) == []
    binary = tmp_path / "image.jsonl"
    binary.write_bytes(b"\x00\x01\x02")
    with pytest.raises(FormatError, match="binary file, not a hand history"):
        detect_format(binary)


def test_read_source_detects_and_reads(
    tmp_path: Path, classic_log: Path, sample_boards: Path
) -> None:
    canonical = tmp_path / "hands.jsonl"
    canonical.write_text(CANONICAL_LINE + "\n", encoding="utf-8")
    assert [record.hand_id for record in read_source(canonical)] == ["x-1"]
    assert len(list(read_source(classic_log))) == 4
    assert [record.hand_id for record in read_source(sample_boards)] == ["live-0001", "live-0002"]


def test_read_source_passes_the_game_to_poker_arena(tmp_path: Path, pineapple_log: Path) -> None:
    unnamed = tmp_path / "match.jsonl"
    shutil.copy(pineapple_log, unnamed)
    with pytest.raises(FormatError, match="cannot tell which poker-arena game"):
        list(read_source(unnamed))
    records = list(read_source(unnamed, format="poker-arena", game="ofc-progressive"))
    assert {record.record["rules"] for record in records} == {"poker-arena-progressive"}


def test_read_source_with_a_format_name(tmp_path: Path, sample_boards: Path) -> None:
    renamed = tmp_path / "boards.txt"
    shutil.copy(sample_boards, renamed)
    assert len(list(read_source(renamed, format="boards-csv"))) == 2
    with pytest.raises(FormatError, match="unknown format 'pgn'"):
        read_source(renamed, format="pgn")
