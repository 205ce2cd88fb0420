"""What spreadsheets save is read (hardening round 2, item 8): Excel's "Unicode text" (UTF-16
with a byte-order mark, tab separated), "CSV (Macintosh)" (lone carriage returns ending the lines)
and whole points written with a decimal comma ("-12,00"). Before, each of them lost the whole
file: "binary file, not a hand history", "unknown format", or every hand "not a number"."""

from __future__ import annotations

import gzip
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.formats import detect_format, read_source
from pipeline.formats.source import open_binary

SAMPLE = Path(__file__).parents[2] / "sample_data" / "live-boards.csv"
TEXT = SAMPLE.read_text(encoding="utf-8")
# a name a legacy code page can hold, so every encoding below is put to work
TEXT = TEXT.replace(",lee,", ",léa,").replace(",lee\n", ",léa\n")


def _records(path: Path) -> list[tuple]:
    return [(record.line, record.hand_id, record.record, record.error)
            for record in read_source(path)]



def _expected(tmp_path: Path) -> list[tuple]:
    plain = tmp_path / "plain.csv"
    plain.write_text(TEXT, encoding="utf-8")
    records = _records(plain)
    assert [record[1] for record in records] == ["live-0001", "live-0002"]
    assert all(record[3] is None for record in records)
    return records


def test_excel_unicode_text_is_read(tmp_path: Path) -> None:
    """UTF-16 little endian with its byte-order mark, tabs, CRLF: Excel's "Unicode text"."""
    path = tmp_path / "sheet.txt"
    path.write_bytes(TEXT.replace(",", "\t").replace("\n", "\r\n").encode("utf-16"))
    assert path.read_bytes()[:2] == b"\xff\xfe"
    assert detect_format(path) == "boards-csv"  # was "binary file, not a hand history"
    assert _records(path) == _expected(tmp_path)


def test_csv_macintosh_is_read(tmp_path: Path) -> None:
    """Lone carriage returns end the lines, the text in Mac Roman's cousin cp1252."""
    path = tmp_path / "sheet.csv"
    path.write_bytes(TEXT.replace("\n", "\r").encode("cp1252"))
    assert detect_format(path) == "boards-csv"  # was "unknown format"
    records = _records(path)
    assert [record[:3] for record in records] == [record[:3] for record in _expected(tmp_path)]


def test_decimal_comma_points_are_read_and_a_fraction_costs_its_hand(tmp_path: Path) -> None:
    european = TEXT.replace(",", ";").replace(";17;", ";17,00;").replace(";10;", ";10,00;")
    european = european.replace(";-27;", ";-27,00;").replace(";4;", ";4,50;")
    path = tmp_path / "sheet.csv"
    path.write_text(european, encoding="utf-8")
    records = _records(path)
    first, second = records
    assert first[3] is None
    assert [player["reported_points"] for player in first[2]["players"]] == [17, 10, -27]
    assert second[2] is None
    assert second[3] == ("line 5: points '4,50' is not a whole number (a decimal comma is read "
                         "for whole points, such as '-12,00'; write a fraction with a point)")


def test_a_recoded_stream_seeks_like_a_file(tmp_path: Path) -> None:
    """``ofc watch`` reads parts from offsets: offsets count the recoded UTF-8 bytes."""
    path = tmp_path / "sheet.txt"
    path.write_bytes(TEXT.encode("utf-16"))
    data = TEXT.encode("utf-8")
    with open_binary(path) as stream:
        assert stream.read() == data
        for offset in (0, 17, len(data) // 2, 5, len(data)):
            stream.seek(offset)
            assert stream.tell() == offset
            assert stream.readline() == data[offset:].split(b"\n")[0] + (
                b"\n" if offset < len(data) else b"")


def test_junk_that_looks_like_a_utf16_mark_does_not_recode_a_utf8_file(tmp_path: Path) -> None:
    """A UTF-8 file whose first line is the junk bytes FF FE (a UTF-16 byte-order mark) is read
    as UTF-8: that line is rejected, every other line is kept (found by the property test of
    tests/formats/test_follow.py: the whole file had been decoded as UTF-16, every hand lost)."""
    path = tmp_path / "sheet.csv"
    path.write_bytes(b"\xff\xfe\n" + TEXT.encode("utf-8"))
    assert detect_format(path) == "boards-csv"
    with open_binary(path) as stream:
        assert stream.read() == b"\xff\xfe\n" + TEXT.encode("utf-8")
    plain = tmp_path / "plain.csv"
    plain.write_text(TEXT, encoding="utf-8")
    junk, *rest = _records(path)
    assert junk[1:3] == (None, None) and "line 2" in junk[3]  # the header follows it
    assert [record[1:] for record in rest] == [record[1:] for record in _records(plain)]


ENCODINGS = {
    "utf-8": lambda text: text.encode("utf-8"),
    "utf-8 with BOM": lambda text: text.encode("utf-8-sig"),
    "utf-16 LE": lambda text: text.encode("utf-16-le").join([b"\xff\xfe", b""]),
    "utf-16 BE": lambda text: text.encode("utf-16-be").join([b"\xfe\xff", b""]),
    "cp1252": lambda text: text.encode("cp1252"),
}


@settings(max_examples=60, deadline=None)
@given(encoding=st.sampled_from(sorted(ENCODINGS)), ending=st.sampled_from(["\n", "\r\n", "\r"]),
       delimiter=st.sampled_from([",", ";", "\t"]), compress=st.booleans(),
       last_newline=st.booleans())
def test_every_spreadsheet_spelling_gives_the_same_records(
    tmp_path_factory, encoding: str, ending: str, delimiter: str, compress: bool,  # noqa: ANN001
    last_newline: bool,
) -> None:
    folder = tmp_path_factory.mktemp("sheets")
    text = TEXT if last_newline else TEXT.rstrip("\n")
    data = ENCODINGS[encoding](text.replace(",", delimiter).replace("\n", ending))
    path = folder / "sheet.csv"
    path.write_bytes(gzip.compress(data) if compress else data)
    got = _records(path)
    expected = _expected(folder)
    assert [record[:3] for record in got] == [record[:3] for record in expected]
    assert all(record[3] is None for record in got)
