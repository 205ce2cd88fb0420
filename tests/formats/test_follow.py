"""A file followed while it grows, read in parts with resumption, gives exactly the records of one
whole-file read of the final file (pipeline.formats.follow, used by ``ofc watch``)."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pipeline.formats import FORMATS, SourceRecord, read_source
from pipeline.formats.follow import Follow, FollowMode
from pipeline.formats.source import read_stream_raw

DATA = Path(__file__).parent / "data"
ARENA_LINES = (DATA / "ofc.jsonl").read_bytes().splitlines(keepends=True)
ARENA_JUNK = [b"\n", b"not json\n", b'{"hand": 7, "ev": {"event": "score", "seat": 0, '
              b'"points": 1}}\n', b'{"log_summary": {"hands_seen": 1}}\n', b"\xff\xfe\n",
              b'{"hand": 3, "seats": []}\n']

HEADER = b"hand_id,started_at,table,variant,player,seat,top,middle,bottom,fantasyland,points,notes\n"


def _row(hand: str, seat: int, notes: str = "", seat_text: str | None = None) -> bytes:
    return (f"{hand},2026-11-01T20:{seat:02d}:00Z,t,classic,p{seat},{seat_text or seat},"
            f"Ah Kd 2c,2d 3d 4d 5d 6d,7s 8s 9s Ts Js,no,0,{notes}\n").encode()


def _csv_item(kind: str, number: int) -> bytes:
    hand = f"h{number % 5}"  # ids come back: non-consecutive hands are refused
    if kind == "hand":
        return _row(hand, 1) + _row(hand, 2)
    if kind == "quoted":  # a notes cell holding a line break
        return _row(hand, 1, '"first line\nsecond line"') + _row(hand, 2)
    if kind == "open-quote":  # a quote never closed
        return _row(hand, 1, '"never closed')
    if kind == "bad-seat":
        return _row(hand, 1) + _row(hand, 2, seat_text="x")
    if kind == "orphan":
        return b",,,,,,,,,,,\n"
    if kind == "blank":
        return b"\n"
    return b"\xff\xfe not utf-8 at all\n"


def read_in_parts(path: Path, data: bytes, cuts: list[int], format_name: str,
                  game: str | None, settled: set[int] = frozenset()) -> list[SourceRecord]:
    """The file written up to each cut in turn, its whole new lines read after each (the last
    part final), resuming where the reader said; ``settled``: cuts read as settled parts."""
    spec = FORMATS[format_name]
    assert spec.follow is not None
    extra = {"game": game} if spec.takes_game else {}
    records: list[SourceRecord] = []
    offset, line, state = 0, 1, {}
    for size in [*sorted(set(cuts)), len(data)]:
        final = size == len(data)
        path.write_bytes(data[:size])
        visible = data[offset:size]
        if not final:
            visible = visible[: visible.rfind(b"\n") + 1]
        if not visible:
            continue
        starts = [0] + [index + 1 for index, byte in enumerate(visible[:-1]) if byte == 10]
        mode = (FollowMode.FINAL if final
                else FollowMode.SETTLED if size in settled else FollowMode.OPEN)
        follow = Follow(mode, line, state)
        records += spec.follow(path, read_stream_raw(io.BytesIO(visible), first_number=line),
                               follow, **extra)
        assert follow.finished
        if follow.resume_line is None:
            offset += len(visible)
            line += len(starts)
        else:
            assert line <= follow.resume_line < line + len(starts)
            assert not final
            offset += starts[follow.resume_line - line]
            line = follow.resume_line
        state = follow.state
    return records


def _whole(path: Path, format_name: str, game: str | None) -> list[SourceRecord]:
    return list(read_source(path, format=format_name, game=game))


@settings(max_examples=60, deadline=None)
@given(
    edits=st.lists(st.tuples(st.integers(0, len(ARENA_LINES) - 1),
                             st.sampled_from(["drop", "junk", "cut", "repeat"]),
                             st.sampled_from(ARENA_JUNK)), max_size=6),
    fractions=st.lists(st.floats(0, 1), max_size=12),
)
# found by a CI run: the last score line repeated, the file cut just before its end (a follower
# took the scored hand; the whole read had put the repeat inside it and rejected the hand)
@example(edits=[(308, "repeat", b"\n")], fractions=[0.99999])
# junk bytes FF FE first (a UTF-16 byte-order mark) once made the whole file read as UTF-16
@example(edits=[(0, "junk", b"\xff\xfe\n")], fractions=[])
def test_poker_arena_in_parts_reads_as_the_whole_file(edits, fractions) -> None:  # noqa: ANN001
    lines = list(ARENA_LINES)
    for index, action, junk in sorted(edits, reverse=True):
        index = min(index, len(lines) - 1)
        if action == "drop":
            del lines[index]
        elif action == "junk":
            lines.insert(index, junk)
        elif action == "cut":
            lines[index] = lines[index][: len(lines[index]) // 2] + b"\n"
        else:
            lines.insert(index, lines[index])
    data = b"".join(lines)
    cuts = [int(fraction * len(data)) for fraction in fractions]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ofc.jsonl"
        parts = read_in_parts(path, data, cuts, "poker-arena", "ofc")
        assert parts == _whole(path, "poker-arena", "ofc")


@settings(max_examples=80, deadline=None)
@given(
    items=st.lists(st.tuples(st.sampled_from(
        ["hand", "hand", "hand", "quoted", "open-quote", "bad-seat", "orphan", "blank",
         "unreadable"]), st.integers(0, 20)), min_size=1, max_size=12),
    title=st.booleans(),
    fractions=st.lists(st.floats(0, 1), max_size=12),
)
def test_boards_csv_in_parts_reads_as_the_whole_file(items, title, fractions) -> None:  # noqa: ANN001
    data = (b"Kitchen game, November\n" if title else b"") + HEADER + b"".join(
        _csv_item(kind, number) for kind, number in items)
    cuts = [int(fraction * len(data)) for fraction in fractions]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "boards.csv"
        parts = read_in_parts(path, data, cuts, "boards-csv", None)
        assert parts == _whole(path, "boards-csv", None)


def test_an_unfinished_poker_arena_hand_waits_and_a_scored_one_is_taken(tmp_path: Path) -> None:
    # the first hand of the log, without its last line (one seat not scored yet)
    headers = [index for index, line in enumerate(ARENA_LINES) if b'"seats"' in line]
    first_hand = ARENA_LINES[: headers[1]]
    path = tmp_path / "ofc.jsonl"
    follow = Follow(FollowMode.SETTLED, 1, {})
    records = list(FORMATS["poker-arena"].follow(
        path, read_stream_raw(io.BytesIO(b"".join(first_hand[:-1]))), follow, game="ofc"))
    assert records == [] and follow.resume_line == 1  # never quarantined as incomplete
    follow = Follow(FollowMode.OPEN, 1, {})
    records = list(FORMATS["poker-arena"].follow(
        path, read_stream_raw(io.BytesIO(b"".join(first_hand))), follow, game="ofc"))
    assert len(records) == 1 and records[0].record is not None  # every seat scored: taken
    assert follow.resume_line is None and follow.state["last_hand_number"] == 3


def test_junk_read_while_a_hand_is_open_is_reported_once(tmp_path: Path) -> None:
    """A junk line after a hand that is still open gets its own reject, after the hand's
    (tests/formats/test_poker_arena.py). A follower that reads up to the junk line waits for
    the hand and drops that reject; reading on, it reports it once, as the whole file does."""
    headers = [index for index, line in enumerate(ARENA_LINES) if b'"seats"' in line]
    lines = list(ARENA_LINES)
    del lines[headers[1] - 1]  # the first hand's last score: the hand stays open
    lines.insert(headers[1] - 1, b"not json\n")
    data = b"".join(lines)
    path = tmp_path / "ofc.jsonl"
    cut = len(b"".join(lines[: headers[1]]))  # the file ends just after the junk line
    parts = read_in_parts(path, data, [cut], "poker-arena", "ofc")
    assert parts == _whole(path, "poker-arena", "ofc")
    junk = [record for record in parts if record.raw == "not json"]
    assert len(junk) == 1 and junk[0].line == headers[1] and junk[0].error is not None
    first = next(record for record in parts if record.line == 1)
    assert first.record is None and "incomplete" in (first.error or "")


def test_a_boards_csv_last_hand_is_taken_once_settled_but_not_inside_an_open_quote(
    tmp_path: Path,
) -> None:
    path = tmp_path / "boards.csv"
    data = HEADER + _row("h1", 1) + _row("h1", 2)

    def part(mode: FollowMode, text: bytes) -> tuple[list[SourceRecord], Follow]:
        follow = Follow(mode, 1, {})
        records = list(FORMATS["boards-csv"].follow(path, read_stream_raw(io.BytesIO(text)),
                                                    follow))
        return records, follow

    records, follow = part(FollowMode.OPEN, data)
    assert records == [] and follow.resume_line == 2  # the next hand's row shows it is over
    assert follow.state["header"]["columns"][0] == "hand_id"
    records, follow = part(FollowMode.SETTLED, data)
    assert [record.hand_id for record in records] == ["h1"] and follow.resume_line is None
    assert follow.state["seen"] == {"h1": (2, 3)}
    records, follow = part(FollowMode.SETTLED, data + _row("h2", 1, '"a note still being typed'))
    assert [record.hand_id for record in records] == [] and follow.resume_line == 2


def test_nothing_is_taken_before_a_boards_csv_header(tmp_path: Path) -> None:
    follow = Follow(FollowMode.OPEN, 1, {})
    records = list(FORMATS["boards-csv"].follow(
        tmp_path / "boards.csv", read_stream_raw(io.BytesIO(b"Kitchen game\n")), follow))
    assert records == [] and follow.resume_line == 1 and "header" not in follow.state
