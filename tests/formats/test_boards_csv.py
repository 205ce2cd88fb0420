"""The boards CSV reader for live games written up by hand."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from pipeline.formats.boards_csv import read_boards_csv, sniff_boards_csv
from pipeline.formats.source import FormatError

HEADER = "hand_id,started_at,table,variant,player,seat,top,middle,bottom,fantasyland,points"
MARA = "h1,2026-11-01T20:15:03Z,t1,pineapple,mara,1,Qh Qd 4c,Kh Kd 7s 7c 2d,As 9s 8s 6s 3s,no,2"
JUN = "h1,2026-11-01T20:15:03Z,t1,pineapple,jun,2,5h 5d Jc,9h 9d 9c Tc 3d,Th Td Ts 8h 8d,no,-2"


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _hand(hand_id: str) -> list[str]:
    return [MARA.replace("h1,", f"{hand_id},", 1), JUN.replace("h1,", f"{hand_id},", 1)]


def test_sample_file(sample_boards: Path) -> None:
    records = list(read_boards_csv(sample_boards))
    assert [(record.hand_id, record.line, record.error) for record in records] == [
        ("live-0001", 2, None),
        ("live-0002", 5, None),
    ]
    first = records[0].record
    assert first is not None
    assert first["site"] == "live"
    assert first["rules"] == "standard"
    assert first["variant"] == "classic"
    assert first["table"] == "kitchen"
    assert first["started_at"] == "2026-11-01T20:15:03Z"
    assert first["button"] == "lee"
    assert [player["name"] for player in first["players"]] == ["mara", "jun", "lee"]
    assert first["players"][0] == {
        "name": "mara",
        "seat": 1,
        "fantasyland": False,
        "board": {
            "top": ["Qh", "Qd", "4c"],
            "middle": ["Kh", "Kd", "7s", "7c", "2d"],
            "bottom": ["As", "9s", "8s", "6s", "3s"],
        },
        "reported_points": 17,
    }
    assert sum(player["reported_points"] for player in first["players"]) == 0
    second = records[1].record
    assert second is not None
    assert second["variant"] == "pineapple"
    assert [player["fantasyland"] for player in second["players"]] == [True, False]
    for record in records:
        assert record.record is not None
        for player in record.record["players"]:
            assert "streets" not in player
            assert [len(player["board"][row]) for row in ("top", "middle", "bottom")] == [3, 5, 5]


def test_card_spellings_are_normalised_and_bad_tokens_kept(tmp_path: Path) -> None:
    row = "h1,,t,classic,mara,1,10h ah A♥,2c 3C 4♦ 5d 6d,7s 8s 9s Ts ZZ,,"
    path = _write(tmp_path / "b.csv", [HEADER, row])
    (record,) = read_boards_csv(path)
    assert record.record is not None
    board = record.record["players"][0]["board"]
    assert board["top"] == ["Th", "Ah", "Ah"]
    assert board["middle"] == ["2c", "3c", "4d", "5d", "6d"]
    assert board["bottom"] == ["7s", "8s", "9s", "Ts", "ZZ"]
    assert "reported_points" not in record.record["players"][0]
    assert "started_at" not in record.record


def test_missing_columns_name_them(tmp_path: Path) -> None:
    path = _write(tmp_path / "b.csv", ["hand_id,player,seat,top,middle,bottom", "h1,a,1,,,"])
    with pytest.raises(FormatError) as caught:
        list(read_boards_csv(path))
    message = str(caught.value)
    assert "missing required columns started_at, table, variant, fantasyland" in message
    assert message.startswith(str(path))


def test_a_column_twice_is_named_even_in_a_very_wide_header(tmp_path: Path) -> None:
    """Every column named twice is said, once each. A header of 60,000 columns used to take
    36 s to check (a count per column: quadratic; 0.6 s now, docs/security-and-data-safety.md);
    its rows are read, their extra cells kept."""
    extra = [f"x{number}" for number in range(60_000)]
    wide = ",".join([HEADER, *extra])
    rows = [row + "," * len(extra) for row in (MARA, JUN)]
    (record,) = read_boards_csv(_write(tmp_path / "wide.csv", [wide, *rows]))
    assert record.record is not None and len(record.record["players"]) == 2
    twice = ",".join([HEADER, *extra, "x17", "points", "x17"])
    with pytest.raises(FormatError, match="column points, x17 appears twice in the header"):
        list(read_boards_csv(_write(tmp_path / "twice.csv", [twice, *rows])))


def test_points_column_is_optional(tmp_path: Path) -> None:
    header = HEADER.removesuffix(",points")
    path = _write(tmp_path / "b.csv", [header, MARA.rsplit(",", 1)[0], JUN.rsplit(",", 1)[0]])
    (record,) = read_boards_csv(path)
    assert record.record is not None
    assert all("reported_points" not in player for player in record.record["players"])


def test_non_contiguous_hand_names_both_lines(tmp_path: Path) -> None:
    lines = [HEADER, *_hand("h1"), *_hand("h2"), MARA.replace("mara", "late"), *_hand("h3")]
    path = _write(tmp_path / "b.csv", lines)
    records = list(read_boards_csv(path))
    assert [(record.hand_id, record.record is not None) for record in records] == [
        ("h1", True),
        ("h2", True),
        ("h1", False),
        ("h3", True),
    ]
    assert records[2].line == 6
    assert records[2].error == (
        "hand_id 'h1' on line 6 was already used by the hand on lines 2-3: "
        "the rows of a hand must be consecutive"
    )


def test_fantasyland_values(tmp_path: Path) -> None:
    values = ["true", "FALSE", "yes", "No", "1", "0", ""]
    lines = [HEADER] + [
        MARA.replace("h1,", f"h{index},", 1).replace(",no,", f",{value},")
        for index, value in enumerate(values)
    ]
    path = _write(tmp_path / "b.csv", lines)
    flags = [record.record["players"][0]["fantasyland"] for record in read_boards_csv(path)]
    assert flags == [True, False, True, False, True, False, False]


def test_bad_values_spoil_only_their_hand(tmp_path: Path) -> None:
    lines = [
        HEADER,
        *_hand("h1"),
        MARA.replace("h1,", "h2,", 1).replace(",no,", ",maybe,"),
        MARA.replace("h1,", "h3,", 1).replace(",mara,1,", ",mara,first,"),
        MARA.replace("h1,", "h4,", 1).replace(",2", ",two"),
        JUN.replace("h1,", "h5,", 1).replace("pineapple", "classic"),
        MARA.replace("h1,", "h5,", 1),
        *_hand("h6"),
    ]
    path = _write(tmp_path / "b.csv", lines)
    errors = {record.hand_id: record.error for record in read_boards_csv(path)}
    assert errors == {
        "h1": None,
        "h2": "line 4: fantasyland 'maybe' is not true/false/yes/no/1/0",
        "h3": "line 5: seat 'first' is not a whole number",
        "h4": "line 6: points 'two' is not a number",
        "h5": "hand 'h5': rows disagree on variant ('classic' on line 7, 'pineapple' on line 8)",
        "h6": None,
    }


def test_short_row_and_truncated_last_line(tmp_path: Path) -> None:
    path = tmp_path / "b.csv"
    path.write_text(
        "\n".join([HEADER, "h0,x,y", *_hand("h1"), MARA.replace("h1,", "h2,", 1)[:30]]),
        encoding="utf-8",
    )
    records = list(read_boards_csv(path))
    assert [(record.hand_id, record.line, record.error) for record in records] == [
        ("h0", 2, "line 2 has 3 fields, the header has 11"),
        ("h1", 3, None),
        (
            "h2",
            5,
            "truncated line: the file ends in the middle of line 5 "
            "(line 5 has 4 fields, the header has 11)",
        ),
    ]


def test_broken_quoting(tmp_path: Path) -> None:
    path = _write(tmp_path / "b.csv", [HEADER, *_hand("h1"), 'h2,"oops,t', *_hand("h3")])
    records = list(read_boards_csv(path))
    assert [(record.hand_id, record.error) for record in records] == [
        ("h1", None),
        ("h2", "line 4: broken CSV quoting (unexpected end of data)"),
        ("h3", None),
    ]


def test_optional_columns_button_and_extras(tmp_path: Path) -> None:
    header = "Hand ID;Started At;Table;Variant;Player;Seat;Top;Middle;Bottom;Fantasyland;Site;Rules;Button;Notes"
    lines = [
        header,
        "h1;;t;2-7;mara;1;Qh Qd 4c;Kh Kd 7s 7c 2d;As 9s 8s 6s 3s;;club;flat-trips;;tilted",
        "h1;;t;2-7;jun;2;5h 5d Jc;9h 9d 9c Tc 3d;Th Td Ts 8h 8d;;club;flat-trips;yes;",
    ]
    path = _write(tmp_path / "b.csv", lines)
    (record,) = read_boards_csv(path)
    hand = record.record
    assert hand is not None
    assert (hand["site"], hand["rules"], hand["variant"], hand["button"]) == (
        "club", "flat-trips", "2-7-pineapple", "jun"
    )
    assert hand["players"][0]["notes"] == "tilted"
    assert "notes" not in hand["players"][1]


def test_a_line_in_a_legacy_encoding_is_read_with_a_warning(tmp_path: Path) -> None:
    # a spreadsheet saved one row in Windows-1252: it is read as such, said aloud, and only
    # its own hand (a short row here) is spoilt
    path = tmp_path / "b.csv"
    data = "\n".join([HEADER, *_hand("h1"), MARA.replace("h1,", "h2,", 1)]).encode()
    data += b"\nh2,\xff\n" + "\n".join(_hand("h3")).encode() + b"\n"
    path.write_bytes(data)
    records = list(read_boards_csv(path))
    assert [(record.hand_id, record.error) for record in records] == [
        ("h1", None),
        ("h2", "line 5 has 2 fields, the header has 11"),
        ("h3", None),
    ]
    assert records[1].warning == "line 5 is not UTF-8 (byte 0xff at column 4): read as cp1252"
    assert records[0].warning is None and records[2].warning is None


def test_gzip_empty_and_binary_files(tmp_path: Path) -> None:
    compressed = tmp_path / "boards.dat"
    compressed.write_bytes(gzip.compress(("\n".join([HEADER, *_hand("h1")]) + "\n").encode()))
    assert [record.hand_id for record in read_boards_csv(compressed)] == ["h1"]
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    assert list(read_boards_csv(empty)) == []
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(FormatError, match="missing required columns"):
        list(read_boards_csv(binary))


def test_sniff() -> None:
    assert sniff_boards_csv(HEADER)
    assert sniff_boards_csv(HEADER.replace(",", ";").upper())
    assert not sniff_boards_csv('{"hand_id": "x", "players": []}')
    assert not sniff_boards_csv("hand_id,player,seat")


def test_match_column_gives_each_hand_its_match_id(tmp_path: Path) -> None:
    # a plain-number match is made unique by table and playing day (as a plain hand number);
    # any other match id is kept; a blank cell leaves the hand in no match
    lines = [HEADER + ",match"]
    for hand_id, match in (("h1", "2"), ("h2", "2"), ("h3", "club-final"), ("h4", "")):
        lines += [row.replace("h1,", f"{hand_id},", 1) + f",{match}" for row in _hand("h1")]
    records = [record.record for record in read_boards_csv(_write(tmp_path / "m.csv", lines))]
    assert [hand.get("match_id") for hand in records] == [
        "t1/2026-11-01/2", "t1/2026-11-01/2", "club-final", None]
    assert records[0]["sheet_match"] == "2" and "sheet_match" not in records[2]
    assert all("match" not in player for hand in records for player in hand["players"])


def test_rows_of_one_hand_that_disagree_on_the_match_spoil_that_hand(tmp_path: Path) -> None:
    lines = [HEADER + ",match", MARA + ",m1", JUN + ",m2", *(
        row + ",m1" for row in _hand("h2"))]
    records = list(read_boards_csv(_write(tmp_path / "m.csv", lines)))
    assert records[0].record is None
    assert records[0].error == "hand 'h1': rows disagree on match ('m1' on line 2, 'm2' on line 3)"
    assert records[1].record is not None and records[1].record["match_id"] == "m1"
