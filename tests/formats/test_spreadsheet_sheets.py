"""Boards CSV as spreadsheets write it, and as people number it.

Before: a row saved in cp1252 (``Amélie``) merged into the previous hand and took it down, the
reason naming the wrong hand; a quoted cell with a line break (Alt-Enter in a notes column) lost
its hand with a chain of confusing errors; two evenings each numbered from 1 conflicted and the
second night was quarantined.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.formats.boards_csv import playing_day, read_boards_csv, sheet_hand_id
from pipeline.ingest.driver import ingest_paths
from tests.ingest.conftest import count, query

HEADER = "hand_id,started_at,table,variant,player,seat,top,middle,bottom,fantasyland,points,notes"
BOARD_A = "Qh Qd 4c,Kh Kd 7s 7c 2d,As 9s 8s 6s 3s"
BOARD_B = "5h 5d Jc,9h 9d 9c Tc 3d,Th Td Ts 8h 8d"
BOARD_C = "Ac Kc 2c,Jh Jd 6h 6d 4h,2s 3c 4d 5s 6c"


def hand(number: int, when: str, names: tuple[str, str] = ("mara", "jun"), note: str = "",
         table: str = "kitchen", boards: tuple[str, str] = (BOARD_A, BOARD_B)) -> list[str]:
    return [f"{number},{when},{table},pineapple,{names[0]},1,{boards[0]},no,3,{note}",
            f"{number},{when},{table},pineapple,{names[1]},2,{boards[1]},no,-3,"]


def write(path: Path, rows: list[str], encoding: str = "utf-8") -> Path:
    path.write_bytes(("\r\n".join([HEADER, *rows]) + "\r\n").encode(encoding))
    return path


def test_a_cp1252_row_lands_with_a_warning_and_spoils_nothing(tmp_path: Path) -> None:
    path = tmp_path / "night.csv"
    data = ("\r\n".join([HEADER, *hand(1, "2026-11-01T20:00:00"), *hand(2, "2026-11-01T20:10:00")])
            + "\r\n").encode()
    data += "\r\n".join(hand(3, "2026-11-01T20:20:00", names=("Amélie", "jun"))).encode("cp1252")
    data += ("\r\n" + "\r\n".join(hand(4, "2026-11-01T20:30:00")) + "\r\n").encode()
    path.write_bytes(data)
    records = list(read_boards_csv(path))
    assert [record.error for record in records] == [None] * 4
    assert records[2].record["players"][0]["name"] == "Amélie"
    assert "read as cp1252" in records[2].warning and records[1].warning is None
    summary = ingest_paths([path], tmp_path / "hands.duckdb")
    assert (summary.stored, summary.rejected) == (4, 0)
    assert summary.files[0].warning_count == 1
    assert "read as cp1252" in summary.files[0].message
    assert query(tmp_path / "hands.duckdb", "SELECT count(*) FROM seats WHERE player = 'Amélie'") \
        == [(1,)]


def test_a_quoted_cell_with_line_breaks_is_one_cell(tmp_path: Path) -> None:
    note = '"tilted after\r\nthe cooler, said ""never again""\r\nleft early"'
    path = write(tmp_path / "night.csv", [*hand(1, "2026-11-01T20:00:00"),
                                          *hand(2, "2026-11-01T20:10:00", note=note),
                                          *hand(3, "2026-11-01T20:20:00")])
    records = list(read_boards_csv(path))
    assert [record.error for record in records] == [None] * 3
    assert records[1].record["players"][0]["notes"] == (
        'tilted after\nthe cooler, said "never again"\nleft early')
    assert records[2].line == 8  # line numbers still count physical lines (4-6 is one row)


def test_an_unclosed_quote_loses_only_its_own_row(tmp_path: Path) -> None:
    path = write(tmp_path / "night.csv", [*hand(1, "2026-11-01T20:00:00"),
                                          *hand(2, "2026-11-01T20:10:00", note='"oops'),
                                          *hand(3, "2026-11-01T20:20:00")])
    records = list(read_boards_csv(path))
    assert [(record.record is not None) for record in records] == [True, False, True]
    assert records[1].error.startswith("line 4: broken CSV quoting")


def test_an_unreadable_row_between_hands_is_its_own_reject(tmp_path: Path) -> None:
    path = tmp_path / "night.csv"
    data = ("\r\n".join([HEADER, *hand(1, "2026-11-01T20:00:00")]) + "\r\n").encode()
    data += b"\x00\x00 garbled\r\n"
    data += ("\r\n".join(hand(2, "2026-11-01T20:10:00")) + "\r\n").encode()
    path.write_bytes(data)
    records = list(read_boards_csv(path))
    assert [(record.line, record.record is not None) for record in records] == [
        (2, True), (4, False), (5, True)]
    assert "holds NUL bytes" in records[1].error


def test_an_unreadable_row_inside_a_hand_spoils_that_hand_only(tmp_path: Path) -> None:
    path = tmp_path / "night.csv"
    first, second = hand(2, "2026-11-01T20:10:00")
    data = ("\r\n".join([HEADER, *hand(1, "2026-11-01T20:00:00"), first]) + "\r\n").encode()
    data += b"\x00\r\n" + (second + "\r\n" + "\r\n".join(hand(3, "2026-11-01T20:20:00"))).encode()
    path.write_bytes(data)
    records = list(read_boards_csv(path))
    assert [(record.line, record.record is not None) for record in records] == [
        (2, True), (4, False), (7, True)]
    assert "in hand '2'" in records[1].error


def test_the_hand_key_of_a_numbered_sheet() -> None:
    assert sheet_hand_id("17", "kitchen", "2026-11-01T21:00:00Z") == "kitchen/2026-11-01/17"
    # after midnight the hand still belongs to the evening it started in
    assert sheet_hand_id("61", "kitchen", "2026-11-02 01:30") == "kitchen/2026-11-01/61"
    assert sheet_hand_id("3", None, "2026-11-01") == "2026-11-01/3"
    assert sheet_hand_id("3", "kitchen", None) == "kitchen/3"
    assert sheet_hand_id("live-0001", "kitchen", "2026-11-01T20:00:00Z") == "live-0001"
    assert playing_day("2026-03-01T05:59:00") == "2026-02-28"
    assert playing_day("not a date") is None


def test_two_evenings_numbered_from_one_both_land(tmp_path: Path) -> None:
    friday = write(tmp_path / "friday.csv", [
        *hand(1, "2026-11-06T20:00:00"), *hand(2, "2026-11-06T23:50:00"),
        *hand(3, "2026-11-07T00:20:00")])  # past midnight: still Friday's game
    saturday = write(tmp_path / "saturday.csv", [
        *hand(1, "2026-11-07T20:00:00", boards=(BOARD_B, BOARD_C)),
        *hand(2, "2026-11-07T20:30:00", boards=(BOARD_C, BOARD_A)),
        *hand(3, "2026-11-07T21:00:00", boards=(BOARD_A, BOARD_C))])
    database = tmp_path / "hands.duckdb"
    summary = ingest_paths([friday, saturday], database)
    assert (summary.stored, summary.rejected) == (6, 0)
    assert sorted(hand_id for (hand_id,) in query(database, "SELECT hand_id FROM hands")) == [
        "kitchen/2026-11-06/1", "kitchen/2026-11-06/2", "kitchen/2026-11-06/3",
        "kitchen/2026-11-07/1", "kitchen/2026-11-07/2", "kitchen/2026-11-07/3"]
    extras = {extra for (extra,) in query(database, "SELECT extra->>'sheet_hand' FROM hands")}
    assert extras == {"1", "2", "3"}

    # the same sheet again (a copy, so its bytes are read): every hand a duplicate, nothing new
    copy = tmp_path / "copy" / "friday.csv"
    copy.parent.mkdir()
    copy.write_bytes(friday.read_bytes() + b"\r\n")
    again = ingest_paths([copy], database)
    assert (again.stored, again.duplicates, again.rejected) == (0, 3, 0)

    # a real edit of a hand (same night, same number, other cards) is still a conflict
    edited = write(tmp_path / "friday-edited.csv", [
        *hand(1, "2026-11-06T20:00:00"), *hand(2, "2026-11-06T23:50:00", boards=(BOARD_C, BOARD_B))])
    conflict = ingest_paths([edited], database)
    assert (conflict.stored, conflict.duplicates, conflict.rejected) == (0, 1, 1)
    assert "conflict: hand 'kitchen/2026-11-06/2'" in conflict.files[0].reasons[0]
    assert count(database, "hands") == 6


def test_two_evenings_in_one_file_both_land(tmp_path: Path) -> None:
    path = write(tmp_path / "season.csv", [
        *hand(1, "2026-11-06T20:00:00"), *hand(2, "2026-11-06T20:30:00"),
        *hand(1, "2026-11-07T20:00:00", boards=(BOARD_B, BOARD_C)),
        *hand(2, "2026-11-07T20:30:00", boards=(BOARD_C, BOARD_A))])
    summary = ingest_paths([path], tmp_path / "hands.duckdb")
    assert (summary.stored, summary.rejected) == (4, 0)
