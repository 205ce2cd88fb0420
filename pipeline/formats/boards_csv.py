"""Reader for live games written up by hand: final boards in a CSV file, one row per player.

Header (names are matched without regard to case, spaces or dashes)::

    hand_id,started_at,table,variant,player,seat,top,middle,bottom,fantasyland,points

``points`` may be missing or blank; optional columns ``site`` (default ``live``), ``rules``
(default ``standard``), ``button`` (the name of the player on the button, or a yes/no
mark on that player's row) and ``match`` (the match the hand belongs to: the record's
``match_id``; blank for a hand in no match). Any other column is kept on the player record. Cards are
separated by spaces; any accepted spelling (``10h``, ``ah``, ``A♥``) is written canonically,
and a token that is not a card is left as it is for validation to name. Comma, semicolon and
tab separated files are all read.

A hand's rows must be consecutive. Players get ``board`` (their final rows) and no
``streets``: the order in which the cards came is not known.

Written by people, saved by spreadsheets, so:

* **the hand key**: people number each sheet from 1, so a ``hand_id`` that is a plain number
  (``1``, ``17``) is made unique by the table and the playing day: ``<table>/<day>/<number>``
  (``kitchen/2026-11-01/17``), the day being the date of ``started_at``, with hands before
  06:00 counted to the evening before (a night that runs past midnight stays one day). Parts
  that are blank are left out. Any other ``hand_id`` (``live-0001``) is kept as it is. The
  number as written is kept in the record's ``sheet_hand`` field. A ``match`` that is a plain
  number is made unique the same way (``kitchen/2026-11-01/2``, the number as written kept in
  ``sheet_match``), so match 2 of one evening is not match 2 of the next;
* **encodings**: each line is decoded on its own, as UTF-8, else as Windows-1252 (cp1252,
  what spreadsheets on Windows save), else as Latin-1; a line read with a fallback is said
  aloud as a warning on its hand;
* **quoted line breaks** (Alt-Enter in a notes cell) are read as CSV does: a quoted cell may
  run over several lines (up to :data:`MAX_LINES_PER_ROW`);
* **a bad row loses only its own hand**: a row whose hand cannot be seen (an unreadable line)
  spoils the hand around it only when the next row continues that hand; otherwise it is
  reported on its own. Lines before the header (a title, a note) are reported one by one.
"""

from __future__ import annotations

import csv
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from pipeline.formats.base import SourceRecord, clip_raw
from pipeline.formats.follow import Follow, FollowMode
from pipeline.formats.source import (
    FormatError,
    RawLine,
    SourceLine,
    ends_early,
    read_raw_lines,
    truncated_reason,
)
from pipeline.rules.cards import CardError, normalise_card
from pipeline.rules.game import Variant

DESCRIPTION = "boards CSV (header with hand_id, player, seat, top, middle, bottom, ...)"

REQUIRED_COLUMNS = (
    "hand_id", "started_at", "table", "variant", "player", "seat",
    "top", "middle", "bottom", "fantasyland",
)
OPTIONAL_COLUMNS = ("points", "site", "rules", "button", "match")
DEFAULT_SITE = "live"
DEFAULT_RULES = "standard"
MAX_ROWS_PER_HAND = 100
"""A hand with more rows than this is reported as an error (OFC seats at most 4)."""

MAX_LINES_PER_ROW = 20
"""Most physical lines one CSV row may span through quoted line breaks; past this the quote is
taken as broken and only its first line is reported."""

HEADER_SEARCH_LINES = 50
"""Non-blank lines searched for the header before the file is judged to have none."""

DAY_STARTS_AT_HOUR = 6
"""Hands before this hour count to the previous playing day (see the hand key above)."""

FALLBACK_ENCODINGS = ("cp1252", "latin-1")
"""Tried in order for a line that is not UTF-8 (Latin-1 decodes any byte)."""

_SNIFF_COLUMNS = ("hand_id", "player", "top", "middle", "bottom")
_DELIMITERS = (",", ";", "\t")
_ROWS = ("top", "middle", "bottom")
_HAND_COLUMNS = ("started_at", "table", "variant", "site", "rules", "match")
_PLAYER_KEYS = frozenset(
    ("name", "seat", "fantasyland", "streets", "board", "reported_points")
)
_TRUE_WORDS = frozenset(("true", "yes", "y", "1", "t", "x"))
_FALSE_WORDS = frozenset(("false", "no", "n", "0", "f", ""))
_PLAIN_NUMBER = re.compile(r"[0-9]+")
_DECIMAL_COMMA = re.compile(r"([+-]?(?:[0-9]{1,3}(?:\.[0-9]{3})+|[0-9]+)),([0-9]+)")
"""A number written with a decimal comma (and maybe dots between thousands): whole part,
fraction."""
_DAY = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ]([0-9]{2}))?")
_BYTE_ORDER_MARK = "\ufeff"


def _column_name(text: str) -> str:
    return text.strip().lower().replace(" ", "_").replace("-", "_")


def _split_row(text: str, delimiter: str) -> list[str]:
    """The fields of one CSV row (raises ``csv.Error`` on broken quoting)."""
    return next(csv.reader([text], delimiter=delimiter, strict=True), [])


def _header_columns(text: str) -> tuple[list[str], str]:
    """The header's column names and the delimiter that gives the most known columns."""
    best: tuple[int, list[str], str] | None = None
    for delimiter in _DELIMITERS:
        try:
            columns = [_column_name(name) for name in _split_row(text, delimiter)]
        except csv.Error:
            continue
        known = sum(1 for name in columns if name in REQUIRED_COLUMNS)
        if best is None or known > best[0]:
            best = (known, columns, delimiter)
    if best is None:
        return [], ","
    return best[1], best[2]


def sniff_boards_csv(first_line: str) -> bool:
    """True when a line is a boards CSV header."""
    columns, _ = _header_columns(first_line)
    return all(name in columns for name in _SNIFF_COLUMNS)


def sheet_hand_id(number: str, table: str | None, started_at: str | None) -> str:
    """The hand id of a sheet row's hand: a plain number made unique by table and playing day
    (``sheet_hand_id("17", "kitchen", "2026-11-02T01:10:00Z") == "kitchen/2026-11-01/17"``);
    any other id as it is."""
    if _PLAIN_NUMBER.fullmatch(number) is None:
        return number
    parts = [table] if table else []
    day = playing_day(started_at)
    if day is not None:
        parts.append(day)
    return "/".join([*parts, number])


def playing_day(started_at: str | None) -> str | None:
    """The date of a start time as written, hands before :data:`DAY_STARTS_AT_HOUR` counted to
    the day before; None without a readable date."""
    if not started_at:
        return None
    match = _DAY.match(started_at.strip())
    if match is None:
        return None
    year, month, day, hour = match.groups()
    try:
        moment = date(int(year), int(month), int(day))
    except ValueError:
        return None
    if hour is not None and int(hour) < DAY_STARTS_AT_HOUR and moment > date.min:
        moment -= timedelta(days=1)
    return moment.isoformat()


@dataclass(slots=True)
class _Row:
    """One CSV row: its first line number, the physical lines it spans, its text."""

    number: int
    text: str | None  # None: unreadable (then ``error`` says why)
    raw: str
    error: str | None = None
    terminated: bool = True
    damaged: bool = False
    warning: str | None = None
    lines: int = 1

    def as_line(self) -> SourceLine:
        """The row as a SourceLine (for the shared truncation and damage helpers)."""
        return SourceLine(self.number, self.text, self.error, self.raw, self.terminated,
                          self.damaged)


@dataclass(slots=True)
class _Hand:
    """The rows of one hand as they are read."""

    hand_id: str
    start_line: int
    end_line: int
    key: str = ""  # the hand id as stored (see sheet_hand_id), from its first row
    rows: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    raw_lines: list[str] = field(default_factory=list)
    problem: str | None = None
    damaged: bool = False
    warnings: list[str] = field(default_factory=list)
    first_fields: dict[str, str] | None = None  # the first readable row, even of a spoilt hand

    def add_problem(self, reason: str) -> None:
        """Record why this hand cannot be read (the first reason wins)."""
        if self.problem is None:
            self.problem = reason

    def add_row(self, row: _Row) -> None:
        """Count a row into the hand, keeping its text for the raw field (bounded)."""
        self.end_line = row.number + row.lines - 1
        if len(self.raw_lines) <= MAX_ROWS_PER_HAND:
            self.raw_lines.append(row.raw)
        if row.warning is not None and len(self.warnings) < 3:
            self.warnings.append(row.warning)
        self.damaged = self.damaged or (row.text is None and ends_early(row.as_line()))


class _BadRow(Exception):
    """A row that cannot become part of a record; the message is the reason."""


# --- lines to rows ------------------------------------------------------------------------------


def _decode(item: RawLine | SourceLine) -> _Row:
    """One physical line: UTF-8, else a said-aloud fallback encoding; or an error line."""
    if type(item) is not tuple:
        line: SourceLine = item  # type: ignore[assignment]
        return _Row(line.number, None, line.raw, line.error, line.terminated, line.damaged)
    number, data, terminated = item  # type: ignore[misc]
    try:
        text = data.decode("utf-8")
        warning = None
    except UnicodeDecodeError as error:
        bad = data[error.start]
        for encoding in FALLBACK_ENCODINGS:
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                continue
            warning = (f"line {number} is not UTF-8 (byte 0x{bad:02x} at column "
                       f"{error.start + 1}): read as {encoding}")
            break
    if number == 1 and text.startswith(_BYTE_ORDER_MARK):
        text = text[1:]
    return _Row(number, text, text, None, terminated, False, warning)


def _open_quote(text: str) -> bool:
    """True when a row's text ends inside a quoted cell (an odd number of quote marks)."""
    return text.count('"') % 2 == 1


def _rows(
    lines: Iterable[RawLine | SourceLine], fits: list[Callable[[str], bool]] | None = None,
    open_at_end: list[int] | None = None,
) -> Iterator[_Row]:
    """Physical lines joined into CSV rows: a quoted cell may hold line breaks. A quote still
    open after :data:`MAX_LINES_PER_ROW` lines, at an unreadable line or at the end of the file,
    or one that closes into something that is not one row of the header's shape (``fits[0]``,
    set once the header is known), is broken: its first line is given alone (and fails to parse)
    and the lines after it are read again as rows of their own, so a stray quote costs one row.

    With ``open_at_end`` (a part of a file that is still being written) a quote still open at the
    end of the lines is not judged: the number of its first line is appended there and the rows
    stop before it (the next part starts with it)."""
    pending: list[_Row] = []  # lines of a row whose quote is open
    queue: list[_Row] = []  # lines decoded already, to read again
    source = iter(lines)
    while True:
        if queue:
            row: _Row | None = queue.pop(0)
        else:
            item = next(source, None)
            row = _decode(item) if item is not None else None
        if row is None:  # the end of the file
            if not pending:
                return
            if open_at_end is not None:
                open_at_end.append(pending[0].number)
                return
            yield pending[0]  # a quote never closed: its line alone, the rest read again
            queue = pending[1:]
            pending = []
            continue
        if pending:
            if row.text is None or len(pending) >= MAX_LINES_PER_ROW:
                yield pending[0]
                queue = [*pending[1:], row, *queue]
                pending = []
                continue
            pending.append(row)
            joined = "\n".join(part.text or "" for part in pending)
            if not _open_quote(joined):
                if fits and not fits[0](joined):
                    yield pending[0]
                    queue = [*pending[1:], *queue]
                    pending = []
                    continue
                first = pending[0]
                warnings = [part.warning for part in pending if part.warning]
                yield _Row(first.number, joined, "\n".join(part.raw for part in pending), None,
                           pending[-1].terminated, False, warnings[0] if warnings else None,
                           len(pending))
                pending = []
            continue
        if row.text is not None and row.terminated and _open_quote(row.text):
            pending = [row]
            continue
        yield row


# --- the reader --------------------------------------------------------------------------------


def read_boards_csv(path: str | os.PathLike[str]) -> Iterator[SourceRecord]:
    """Read a boards CSV: one :class:`SourceRecord` per hand, streaming.

    Raises :class:`FormatError` (on first iteration) when no header is found in the first
    :data:`HEADER_SEARCH_LINES` lines or required columns are missing, naming them. A broken
    row, a hand_id that comes back after other hands (both line numbers are named), or a bad
    seat/fantasyland/points value makes that hand an error record; the other hands still come
    through. Lines before the header are reported one by one.
    """
    yield from _read_sheet(path, read_raw_lines(path), None)


def follow_boards_csv(
    path: str | os.PathLike[str], lines: Iterable[RawLine | SourceLine], follow: Follow
) -> Iterator[SourceRecord]:
    """Read a part of a boards CSV that is still being written (see
    :mod:`pipeline.formats.follow`): ``lines`` from ``follow.start_line`` on.

    ``follow.state`` carries the header (columns and delimiter: later parts have none) and the
    hands seen so far (a hand id that comes back after other hands is refused as in a whole-file
    read). Unless the part is final, the last hand is left for the next part (only the next
    hand's first row shows that it is over), and so are rows naming no hand after it and a
    quoted cell still open at the end; a settled part takes the last hand, unless a quote is
    open. Until the header has come, nothing is taken (the lines above it are reported once it
    is found, as in a whole-file read).
    """
    yield from _read_sheet(path, lines, follow)


def _read_sheet(
    path: str | os.PathLike[str], lines: Iterable[RawLine | SourceLine], follow: Follow | None
) -> Iterator[SourceRecord]:
    """The whole-file read, or a part of a followed file (``follow``)."""
    file_name = str(path)
    fits: list[Callable[[str], bool]] = [lambda text: True]
    open_at_end: list[int] | None = None
    if follow is not None and not follow.final:
        open_at_end = []
    rows = _rows(lines, fits, open_at_end)
    known = follow.state.get("header") if follow is not None else None
    if known is not None:
        columns, delimiter = list(known["columns"]), str(known["delimiter"])
        fits[0] = lambda text: _one_row(text, delimiter, len(columns))
        yield from _hands(file_name, rows, columns, delimiter, follow, open_at_end)
        return
    header: _Row | None = None
    before: list[_Row] = []
    for row in rows:
        if row.text is not None and not row.text.strip():
            continue
        if row.text is not None and sniff_boards_csv(row.text):
            header = row
            break
        before.append(row)
        if len(before) >= HEADER_SEARCH_LINES:
            break
    if header is None and follow is not None and not follow.final and (
        len(before) < HEADER_SEARCH_LINES
    ):
        # the header may still come: nothing is taken until it has
        follow.resume_line = follow.start_line
        follow.finished = True
        return
    if header is None or header.text is None:
        first = next((row for row in before if row.text is not None), None)
        if first is None:
            if before:
                raise FormatError(path, f"cannot read the header: {before[0].error}")
            if follow is not None:
                follow.resume_line, follow.finished = None, True
            return
        columns, _ = _header_columns(first.text or "")
        _raise_missing(path, columns, first.number)
        raise AssertionError("unreachable")  # pragma: no cover
    columns, delimiter = _header_columns(header.text)
    _raise_missing(path, columns, header.number)
    # counted once (a count per column was quadratic: 36 s for a header of 60,000 columns)
    duplicated = sorted(name for name, count in Counter(columns).items() if count > 1 and name)
    if duplicated:
        raise FormatError(path, f"column {', '.join(duplicated)} appears twice in the header")
    fits[0] = lambda text: _one_row(text, delimiter, len(columns))
    if follow is not None:
        follow.state = {"header": {"columns": columns, "delimiter": delimiter}}
    for row in before:
        reason = row.error or f"above the header (line {header.number}): not a row of the sheet"
        yield SourceRecord(file_name, row.number, clip_raw(row.raw), None, reason,
                           damaged=row.damaged)
    yield from _hands(file_name, rows, columns, delimiter, follow, open_at_end)


def _one_row(text: str, delimiter: str, width: int) -> bool:
    """True when ``text`` (lines joined through a quoted cell) reads as one CSV row of at most
    ``width`` fields (more only when they are blank)."""
    try:
        fields = _split_row(text, delimiter)
    except csv.Error:
        return False
    return len(fields) <= width or not any(value.strip() for value in fields[width:])


def _raise_missing(path: str | os.PathLike[str], columns: list[str], number: int) -> None:
    missing = [name for name in REQUIRED_COLUMNS if name not in columns]
    if missing:
        raise FormatError(
            path,
            f"missing required column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(line {number} has {', '.join(columns) or 'no columns'}; "
            f"expected {', '.join(REQUIRED_COLUMNS)}, optional {', '.join(OPTIONAL_COLUMNS)})",
        )


def _hands(
    file_name: str, rows: Iterator[_Row], columns: list[str], delimiter: str,
    follow: Follow | None = None, open_at_end: list[int] | None = None,
) -> Iterator[SourceRecord]:
    """The data rows grouped into hands (consecutive rows with one hand_id). With ``follow``
    (a part of a followed file) the hands seen come from and go back to its state, and the
    hand still open at the end is left for the next part unless the part is final or settled
    (see :func:`follow_boards_csv`); ``open_at_end`` holds the first line of a quote the rows
    left open at the end."""
    seen: dict[str, tuple[int, int]] = {}
    if follow is not None:
        seen = {key: (first, last) for key, (first, last) in follow.state.get("seen", {}).items()}
    current: _Hand | None = None
    orphans: list[tuple[_Row, str]] = []  # rows naming no hand, waiting for the next row
    hand_id_index = columns.index("hand_id")

    def orphan_records() -> Iterator[SourceRecord]:
        for row, problem in orphans:
            yield SourceRecord(file_name, row.number, clip_raw(row.raw), None, problem,
                               damaged=row.text is None and ends_early(row.as_line()))
        orphans.clear()

    for row in rows:
        if row.text is not None and not row.text.strip():
            continue
        fields, hand_id, problem = _read_row(row, columns, delimiter, hand_id_index)
        if hand_id is None:
            orphans.append((row, problem or f"line {row.number} cannot be read"))
            continue
        if current is not None and hand_id == current.hand_id:
            # the rows naming no hand sit inside this hand: they spoil it
            for orphan, orphan_problem in orphans:
                current.add_row(orphan)
                current.add_problem(f"{orphan_problem} (in hand {current.hand_id!r})")
            orphans.clear()
        else:
            if current is not None:
                seen.setdefault(current.key, (current.start_line, current.end_line))
                yield _hand_record(file_name, current)
            yield from orphan_records()
            # two sheets in one file may both number from 1: a hand is known by its full key
            key = (sheet_hand_id(hand_id, fields.get("table") or None,
                                 fields.get("started_at") or None) if fields else hand_id)
            current = _Hand(hand_id, row.number, row.number, key=key)
            if key in seen:
                first, last = seen[key]
                lines_text = f"line {first}" if first == last else f"lines {first}-{last}"
                current.add_problem(
                    f"hand_id {hand_id!r} on line {row.number} was already used by the hand on "
                    f"{lines_text}: the rows of a hand must be consecutive"
                )
        current.add_row(row)
        if fields is None:
            current.add_problem(problem or f"line {row.number} cannot be read")
        elif len(current.rows) >= MAX_ROWS_PER_HAND:
            current.add_problem(
                f"hand {hand_id!r} has more than {MAX_ROWS_PER_HAND} rows (from line "
                f"{current.start_line})"
            )
            current.rows.clear()
        elif current.problem is None:
            current.rows.append((row.number, fields))
        if fields is not None and current.first_fields is None:
            current.first_fields = fields
    if follow is not None and not follow.final and (
        follow.mode is not FollowMode.SETTLED or open_at_end
    ):
        # the last hand (and the rows after it) may go on in rows not written yet
        left = [line for line in (
            current.start_line if current is not None else None,
            orphans[0][0].number if orphans else None,
            *(open_at_end or ()),
        ) if line is not None]
        follow.resume_line = min(left) if left else None
        follow.state = {**follow.state, "seen": seen}
        follow.finished = True
        return
    if current is not None:
        yield _hand_record(file_name, current)
    yield from orphan_records()
    if follow is not None:
        if current is not None:
            seen.setdefault(current.key, (current.start_line, current.end_line))
        follow.resume_line = None
        follow.state = {**follow.state, "seen": seen}
        follow.finished = True


def _read_row(
    row: _Row, columns: list[str], delimiter: str, hand_id_index: int
) -> tuple[dict[str, str] | None, str | None, str | None]:
    """One data row: ``(fields, hand_id, None)`` or ``(None, hand_id or None, problem)``.

    The hand id of a broken row is still given when it can be seen, so the problem is
    charged to the right hand.
    """
    if row.text is None:
        return None, None, row.error or f"line {row.number} cannot be read"
    line = row.as_line()
    try:
        fields = _split_row(row.text, delimiter)
    except csv.Error as exc:
        parts = row.text.split(delimiter)
        guess = None
        if len(parts) > hand_id_index and '"' not in delimiter.join(parts[: hand_id_index + 1]):
            guess = parts[hand_id_index].strip() or None
        reason = truncated_reason(line, f"line {row.number}: broken CSV quoting ({exc})")
        return None, guess, reason
    hand_id = fields[hand_id_index].strip() or None if len(fields) > hand_id_index else None
    if len(fields) < len(columns):
        plural = "s" if len(fields) != 1 else ""
        reason = f"line {row.number} has {len(fields)} field{plural}, the header has {len(columns)}"
        return None, hand_id, truncated_reason(line, reason)
    if len(fields) > len(columns) and any(value.strip() for value in fields[len(columns):]):
        reason = f"line {row.number} has {len(fields)} fields, the header has {len(columns)}"
        return None, hand_id, reason
    if hand_id is None:
        return None, None, f"line {row.number} has no hand_id"
    values = {name: value.strip() for name, value in zip(columns, fields, strict=False) if name}
    return values, hand_id, None


def _hand_record(file_name: str, hand: _Hand) -> SourceRecord:
    raw = clip_raw("\n".join(hand.raw_lines))
    warning = "; ".join(hand.warnings) or None
    # the hand's key as stored, from its first readable row (so a later fix resolves the reject)
    first = hand.rows[0][1] if hand.rows else hand.first_fields or {}
    key_id = sheet_hand_id(hand.hand_id, first.get("table") or None,
                           first.get("started_at") or None)
    if hand.problem is not None:
        return SourceRecord(file_name, hand.start_line, raw, None, hand.problem, key_id,
                            hand.damaged, warning)
    try:
        record = _build_record(hand)
    except _BadRow as exc:
        return SourceRecord(file_name, hand.start_line, raw, None, str(exc), key_id,
                            warning=warning)
    return SourceRecord(file_name, hand.start_line, raw, record, None, record["hand_id"],
                        warning=warning)


def _hand_value(hand: _Hand, column: str) -> str | None:
    """The one value a hand-level column has over the hand's rows (blank rows don't count)."""
    value: str | None = None
    value_line = 0
    for number, row in hand.rows:
        text = row.get(column, "")
        if not text:
            continue
        if value is None:
            value, value_line = text, number
        elif text != value:
            raise _BadRow(
                f"hand {hand.hand_id!r}: rows disagree on {column} "
                f"({value!r} on line {value_line}, {text!r} on line {number})"
            )
    return value


def _build_record(hand: _Hand) -> dict[str, Any]:
    values = {column: _hand_value(hand, column) for column in _HAND_COLUMNS}
    hand_id = sheet_hand_id(hand.hand_id, values["table"], values["started_at"])
    record: dict[str, Any] = {
        "hand_id": hand_id,
        "site": values["site"] or DEFAULT_SITE,
    }
    if hand_id != hand.hand_id:
        record["sheet_hand"] = hand.hand_id
    if values["table"] is not None:
        record["table"] = values["table"]
    if values["match"] is not None:
        record["match_id"] = sheet_hand_id(values["match"], values["table"], values["started_at"])
        if record["match_id"] != values["match"]:
            record["sheet_match"] = values["match"]
    if values["started_at"] is not None:
        record["started_at"] = values["started_at"]
    if values["variant"] is not None:
        record["variant"] = _variant(values["variant"])
    record["rules"] = values["rules"] or DEFAULT_RULES
    players = [_player(number, row) for number, row in hand.rows]
    button = _button(hand, [player["name"] for player in players])
    if button is not None:
        record["button"] = button
    record["players"] = players
    return record


def _variant(text: str) -> str:
    try:
        return Variant.parse(text).value
    except ValueError:
        return text  # validation names the unknown variant


def _button(hand: _Hand, names: list[str]) -> str | None:
    """The button player: a name in the button column, or the row marked yes."""
    named: str | None = None
    marked: list[str] = []
    for (number, row), name in zip(hand.rows, names, strict=True):
        text = row.get("button", "")
        if not text:
            continue
        if text in names:
            if named is not None and named != text:
                raise _BadRow(
                    f"hand {hand.hand_id!r}: rows disagree on the button "
                    f"({named!r}, {text!r} on line {number})"
                )
            named = text
        elif text.lower() in _TRUE_WORDS:
            marked.append(name)
        elif text.lower() not in _FALSE_WORDS:
            raise _BadRow(
                f"line {number}: button {text!r} is neither a player of hand "
                f"{hand.hand_id!r} nor yes/no"
            )
    if len(marked) > 1 or (marked and named is not None and marked[0] != named):
        candidates = sorted(set(marked) | ({named} if named else set()))
        raise _BadRow(
            f"hand {hand.hand_id!r}: more than one button ({', '.join(candidates)})"
        )
    return named if named is not None else (marked[0] if marked else None)


def _cards(text: str) -> list[str]:
    tokens = text.replace(",", " ").split()
    cards = []
    for token in tokens:
        try:
            cards.append(normalise_card(token))
        except CardError:
            cards.append(token)  # validation names the token
    return cards


def _player(number: int, row: dict[str, str]) -> dict[str, Any]:
    name = row["player"]
    if not name:
        raise _BadRow(f"line {number}: no player name")
    seat_text = row["seat"]
    try:
        seat = int(seat_text)
    except ValueError:
        raise _BadRow(f"line {number}: seat {seat_text!r} is not a whole number") from None
    fantasyland_text = row["fantasyland"].lower()
    if fantasyland_text in _TRUE_WORDS:
        fantasyland = True
    elif fantasyland_text in _FALSE_WORDS:
        fantasyland = False
    else:
        raise _BadRow(
            f"line {number}: fantasyland {row['fantasyland']!r} is not true/false/yes/no/1/0"
        )
    player: dict[str, Any] = {
        "name": name,
        "seat": seat,
        "fantasyland": fantasyland,
        "board": {row_name: _cards(row[row_name]) for row_name in _ROWS},
    }
    points_text = row.get("points", "")
    if points_text:
        player["reported_points"] = _number(number, points_text)
    for column, value in row.items():
        if (
            value
            and column not in REQUIRED_COLUMNS
            and column not in OPTIONAL_COLUMNS
            and column not in _PLAYER_KEYS
        ):
            player[column] = value
    return player


def _number(number: int, text: str) -> int | float:
    """The points of a row: a whole number or a decimal one (``-12.5``); a whole number with a
    decimal comma, as European spreadsheets write it (``-12,00``, ``1.234,00``), is read as
    that whole number; a decimal comma with a fraction (``-12,50``) is refused (points are
    whole in every game; a fraction must be written with a point)."""
    cleaned = text.replace("\u2212", "-").replace(" ", "").replace("\u00a0", "")
    try:
        return int(cleaned)
    except ValueError:
        pass
    comma = _DECIMAL_COMMA.fullmatch(cleaned)
    if comma is not None:
        whole, fraction = comma.group(1).replace(".", ""), comma.group(2)
        if fraction.strip("0"):
            raise _BadRow(f"line {number}: points {text!r} is not a whole number (a decimal "
                          "comma is read for whole points, such as '-12,00'; write a "
                          "fraction with a point)")
        return int(whole)
    try:
        value = float(cleaned)
    except ValueError:
        raise _BadRow(f"line {number}: points {text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise _BadRow(f"line {number}: points {text!r} is not a number")
    return int(value) if value.is_integer() else value
