"""Line reading shared by the readers: plain/gzip, UTF-8 per line, binary, long and cut lines."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from pipeline.formats.source import (
    BINARY_FILE_ERROR,
    FormatError,
    file_name_stem,
    read_lines,
    truncated_reason,
)


def test_plain_lines_are_numbered_without_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"\xef\xbb\xbffirst\r\nsecond\n\nlast\n")
    lines = list(read_lines(path))
    assert [(line.number, line.text, line.error) for line in lines] == [
        (1, "first", None),
        (2, "second", None),
        (3, "", None),
        (4, "last", None),
    ]
    assert all(line.terminated for line in lines)


def test_byte_order_mark_is_only_dropped_on_line_one(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"one\n\xef\xbb\xbftwo\n")
    assert [line.text for line in read_lines(path)] == ["one", "\ufefftwo"]


def test_non_utf8_line_is_an_error_and_later_lines_still_come(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"ok\n" * 6 + b"hello world\xff!\nafter\n")
    lines = list(read_lines(path))
    assert lines[6].text is None
    assert lines[6].error == "line 7 is not UTF-8 text (byte 0xff at column 12)"
    assert "hello world" in lines[6].raw
    assert lines[7].text == "after"


def test_a_line_with_nul_bytes_is_an_error_and_a_binary_file_is_named(tmp_path: Path) -> None:
    from pipeline.formats import detect_format

    path = tmp_path / "a.bin"
    path.write_bytes(b"PK\x03\x04\x00\x00" + bytes(range(256)) * 10 + b"\n" * 50)
    lines = list(read_lines(path))
    assert lines[0].text is None and "holds NUL bytes" in lines[0].error
    with pytest.raises(FormatError, match=BINARY_FILE_ERROR):
        detect_format(path)


def test_a_nul_byte_spoils_only_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"x" * 9000 + b"\n" + b"a\x00b\n" + b"after\n" + b"\x00" * 5000)
    lines = list(read_lines(path))
    assert [line.text for line in lines] == ["x" * 9000, None, "after", None]
    assert lines[1].error.startswith("line 2 holds NUL bytes") and not lines[1].damaged
    assert lines[3].damaged and not lines[3].terminated  # a zero-filled tail: the file ends early


def test_empty_file_yields_nothing(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert list(read_lines(path)) == []


def test_gzip_is_detected_by_magic_bytes_not_name(tmp_path: Path) -> None:
    path = tmp_path / "looks-plain.txt"
    path.write_bytes(gzip.compress(b"one\ntwo\n"))
    assert [line.text for line in read_lines(path)] == ["one", "two"]
    plain_named_gz = tmp_path / "not-really.gz"
    plain_named_gz.write_bytes(b"plain\n")
    assert [line.text for line in read_lines(plain_named_gz)] == ["plain"]


def test_binary_check_applies_to_decompressed_content(tmp_path: Path) -> None:
    path = tmp_path / "a.gz"
    path.write_bytes(gzip.compress(b"\x00\x01\x02 binary\n"))
    lines = list(read_lines(path))
    assert [line.error for line in lines] == [
        "line 1 holds NUL bytes: binary data, or the zero-filled end of a file cut off while "
        "being written"]


def test_damaged_gzip_ends_with_an_error_not_a_crash(tmp_path: Path) -> None:
    data = gzip.compress(b"".join(b"line %d with some text\n" % number for number in range(5000)))
    path = tmp_path / "cut.gz"
    path.write_bytes(data[: len(data) // 2])
    lines = list(read_lines(path))
    assert lines[0].text == "line 0 with some text"
    assert lines[-1].text is None
    assert "damaged data" in (lines[-1].error or "")


def test_over_long_line_is_skipped_without_loading_it(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_bytes(b"short\n" + b"y" * 5000 + b"\nafter\n")
    lines = list(read_lines(path, max_line_bytes=1024))
    assert [line.text for line in lines] == ["short", None, "after"]
    assert lines[1].error == "line 2 is longer than 1 KiB"
    assert len(lines[1].raw) < 1100


def test_default_limit_is_one_mebibyte(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_bytes(b"z" * ((1 << 20) + 10) + b"\nok\n")
    lines = list(read_lines(path))
    assert lines[0].error == "line 1 is longer than 1 MiB"
    assert lines[1].text == "ok"


def test_last_line_without_newline_is_marked(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"one\ntw")
    lines = list(read_lines(path))
    assert [line.terminated for line in lines] == [True, False]
    assert truncated_reason(lines[0], "bad") == "bad"
    assert truncated_reason(lines[1], "bad").startswith("truncated line")


def test_missing_file_is_a_format_error_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.jsonl"
    with pytest.raises(FormatError) as caught:
        list(read_lines(path))
    assert str(path) in str(caught.value)
    assert caught.value.path == str(path)


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("ofc-27.jsonl", "ofc-27"),
        ("ofc-pineapple.jsonl.gz", "ofc-pineapple"),
        ("OFC.JSONL.GZ", "OFC"),
        ("match", "match"),
    ],
)
def test_file_name_stem(name: str, stem: str) -> None:
    assert file_name_stem(Path("/x") / name) == stem


def test_the_collector_is_paused_for_the_block_and_restored_as_it_was() -> None:
    """One pause for every bulk parser: off inside, back as it was after, even on an error."""
    import gc

    from pipeline.formats.source import collector_paused

    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        raise RuntimeError("a parser failed")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()
