"""Reader for live games written up by hand: final boards in a CSV file, one row per player.

Header (names are matched without regard to case, spaces or dashes)::

    hand_id,started_at,table,variant,player,seat,top,middle,bottom,fantasyland,points

``points`` may be missing or blank; optional columns ``site`` (default ``live``), ``rules``
(default ``standard``) and ``button`` (the name of the player on the button, or a yes/no
mark on that player's row). Any other column is kept on the player record. Cards are
separated by spaces; any accepted spelling (``10h``, ``ah``, ``A♥``) is written canonically,
and a token that is not a card is left as it is for validation to name. Comma, semicolon and
tab separated files are all read.

A hand's rows must be consecutive. Players get ``board`` (their final rows) and no
``streets``: the order in which the cards came is not known.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pipeline.formats.base import SourceRecord, clip_raw
from pipeline.formats.source import (
    BINARY_FILE_ERROR,
    FormatError,
    SourceLine,
    read_lines,
    truncated_reason,
)
from pipeline.rules.cards import CardError, normalise_card
from pipeline.rules.game import Variant

DESCRIPTION = "boards CSV (header with hand_id, player, seat, top, middle, bottom, ...)"

REQUIRED_COLUMNS = (
    "hand_id", "started_at", "table", "variant", "player", "seat",
    "top", "middle", "bottom", "fantasyland",
)
OPTIONAL_COLUMNS = ("points", "site", "rules", "button")
DEFAULT_SITE = "live"
DEFAULT_RULES = "standard"
MAX_ROWS_PER_HAND = 100
"""A hand with more rows than this is reported as an error (OFC seats at most 4)."""

_SNIFF_COLUMNS = ("hand_id", "player", "top", "middle", "bottom")
_DELIMITERS = (",", ";", "\t")
_ROWS = ("top", "middle", "bottom")
_HAND_COLUMNS = ("started_at", "table", "variant", "site", "rules")
_PLAYER_KEYS = frozenset(
    ("name", "seat", "fantasyland", "streets", "board", "reported_points")
)
_TRUE_WORDS = frozenset(("true", "yes", "y", "1", "t", "x"))
_FALSE_WORDS = frozenset(("false", "no", "n", "0", "f", ""))


def _column_name(text: str) -> str:
    return text.strip().lower().replace(" ", "_").replace("-", "_")


def _split_row(text: str, delimiter: str) -> list[str]:
    """The fields of one CSV line (raises ``csv.Error`` on broken quoting)."""
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
    """True when a file's first non-empty line is a boards CSV header."""
    columns, _ = _header_columns(first_line)
    return all(name in columns for name in _SNIFF_COLUMNS)


@dataclass(slots=True)
class _Hand:
    """The rows of one hand as they are read."""

    hand_id: str
    start_line: int
    end_line: int
    rows: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    raw_lines: list[str] = field(default_factory=list)
    problem: str | None = None

    def add_problem(self, reason: str) -> None:
        """Record why this hand cannot be read (the first reason wins)."""
        if self.problem is None:
            self.problem = reason

    def add_line(self, line: SourceLine) -> None:
        """Count a line into the hand, keeping its text for the raw field (bounded)."""
        self.end_line = line.number
        if len(self.raw_lines) <= MAX_ROWS_PER_HAND:
            self.raw_lines.append(line.raw)


class _BadRow(Exception):
    """A row that cannot become part of a record; the message is the reason."""


def read_boards_csv(path: str | os.PathLike[str]) -> Iterator[SourceRecord]:
    """Read a boards CSV: one :class:`SourceRecord` per hand, streaming.

    Raises :class:`FormatError` (on first iteration) when required columns are missing, naming
    them. A broken row, a hand_id that comes back after other hands (both line numbers are
    named), or a bad seat/fantasyland/points value makes that hand an error record; the other
    hands still come through. An unreadable line (not UTF-8, too long) spoils the hand it is in.
    """
    file_name = str(path)
    lines = read_lines(path)
    header: SourceLine | None = None
    for line in lines:
        if line.error == BINARY_FILE_ERROR:
            yield SourceRecord(file_name, line.number, clip_raw(line.raw), None, line.error)
            return
        if line.text is None:
            raise FormatError(path, f"cannot read the header: {line.error}")
        if line.text.strip():
            header = line
            break
    if header is None or header.text is None:
        return
    columns, delimiter = _header_columns(header.text)
    missing = [name for name in REQUIRED_COLUMNS if name not in columns]
    if missing:
        raise FormatError(
            path,
            f"missing required column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(line {header.number} has {', '.join(columns) or 'no columns'}; "
            f"expected {', '.join(REQUIRED_COLUMNS)}, optional {', '.join(OPTIONAL_COLUMNS)})",
        )
    duplicated = sorted({name for name in columns if columns.count(name) > 1 and name})
    if duplicated:
        raise FormatError(path, f"column {', '.join(duplicated)} appears twice in the header")

    seen: dict[str, tuple[int, int]] = {}
    current: _Hand | None = None
    hand_id_index = columns.index("hand_id")
    for line in lines:
        if line.text is not None and not line.text.strip():
            continue
        row, hand_id, problem = _read_row(line, columns, delimiter, hand_id_index)
        if hand_id is None:
            # A line that names no hand: it spoils the hand being read, if any.
            if current is None:
                yield SourceRecord(file_name, line.number, clip_raw(line.raw), None, problem)
            else:
                current.add_line(line)
                current.add_problem(f"{problem} (in hand {current.hand_id!r})")
            continue
        if current is None or hand_id != current.hand_id:
            if current is not None:
                seen.setdefault(current.hand_id, (current.start_line, current.end_line))
                yield _hand_record(file_name, current)
            current = _Hand(hand_id, line.number, line.number)
            if hand_id in seen:
                first, last = seen[hand_id]
                lines_text = f"line {first}" if first == last else f"lines {first}-{last}"
                current.add_problem(
                    f"hand_id {hand_id!r} on line {line.number} was already used by the hand on "
                    f"{lines_text}: the rows of a hand must be consecutive"
                )
        current.add_line(line)
        if row is None:
            current.add_problem(problem or f"line {line.number} cannot be read")
        elif len(current.rows) >= MAX_ROWS_PER_HAND:
            current.add_problem(
                f"hand {hand_id!r} has more than {MAX_ROWS_PER_HAND} rows (from line "
                f"{current.start_line})"
            )
            current.rows.clear()
        elif current.problem is None:
            current.rows.append((line.number, row))
    if current is not None:
        yield _hand_record(file_name, current)


def _read_row(
    line: SourceLine, columns: list[str], delimiter: str, hand_id_index: int
) -> tuple[dict[str, str] | None, str | None, str | None]:
    """One data line: ``(row, hand_id, None)`` or ``(None, hand_id or None, problem)``.

    The hand id of a broken line is still given when it can be seen, so the problem is
    charged to the right hand.
    """
    if line.text is None:
        return None, None, line.error or f"line {line.number} cannot be read"
    try:
        fields = _split_row(line.text, delimiter)
    except csv.Error as exc:
        parts = line.text.split(delimiter)
        guess = None
        if len(parts) > hand_id_index and '"' not in delimiter.join(parts[: hand_id_index + 1]):
            guess = parts[hand_id_index].strip() or None
        reason = truncated_reason(line, f"line {line.number}: broken CSV quoting ({exc})")
        return None, guess, reason
    hand_id = fields[hand_id_index].strip() or None if len(fields) > hand_id_index else None
    if len(fields) < len(columns):
        plural = "s" if len(fields) != 1 else ""
        reason = f"line {line.number} has {len(fields)} field{plural}, the header has {len(columns)}"
        return None, hand_id, truncated_reason(line, reason)
    if len(fields) > len(columns) and any(value.strip() for value in fields[len(columns):]):
        reason = f"line {line.number} has {len(fields)} fields, the header has {len(columns)}"
        return None, hand_id, reason
    if hand_id is None:
        return None, None, f"line {line.number} has no hand_id"
    row = {name: value.strip() for name, value in zip(columns, fields, strict=False) if name}
    return row, hand_id, None


def _hand_record(file_name: str, hand: _Hand) -> SourceRecord:
    raw = clip_raw("\n".join(hand.raw_lines))
    if hand.problem is not None:
        return SourceRecord(file_name, hand.start_line, raw, None, hand.problem, hand.hand_id)
    try:
        record = _build_record(hand)
    except _BadRow as exc:
        return SourceRecord(file_name, hand.start_line, raw, None, str(exc), hand.hand_id)
    return SourceRecord(file_name, hand.start_line, raw, record, None, hand.hand_id)


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
    record: dict[str, Any] = {
        "hand_id": hand.hand_id,
        "site": values["site"] or DEFAULT_SITE,
    }
    if values["table"] is not None:
        record["table"] = values["table"]
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
    cleaned = text.replace("\u2212", "-").replace(" ", "")
    try:
        return int(cleaned)
    except ValueError:
        pass
    try:
        value = float(cleaned)
    except ValueError:
        raise _BadRow(f"line {number}: points {text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise _BadRow(f"line {number}: points {text!r} is not a number")
    return int(value) if value.is_integer() else value
