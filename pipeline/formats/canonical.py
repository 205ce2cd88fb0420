"""Reader for the product's own format: canonical hand records, one JSON object per line.

The records are passed on as parsed; checking them is :mod:`pipeline.records.validate`'s job. This
reader only reports lines that are not JSON objects at all.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

from pipeline.formats.base import SourceRecord, clip_raw
from pipeline.formats.source import (
    SourceLine,
    collector_paused,
    ends_early,
    json_error_reason,
    load_json,
    read_lines,
    truncated_reason,
)

DESCRIPTION = 'canonical JSON Lines (one hand object with "players" per line)'

BATCH_LINES = 2000
"""Lines parsed per garbage-collector pause."""

BATCH_BYTES = 4 << 20
"""Most text (characters) held in one batch, so memory stays bounded with long lines."""

_HAND_ID_PATTERN = re.compile(r'"hand_id"\s*:\s*(?:"((?:[^"\\]|\\.){1,200})"|(-?\d{1,30})\b)')
_JSON_TYPE_NAMES = {
    list: "a list",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true/false",
    type(None): "null",
}


def sniff_canonical(first_line: str) -> bool:
    """True when a file's first non-empty line looks like a canonical hand record."""
    try:
        value = load_json(first_line)
    except ValueError:  # not JSON, or nested too deeply
        return False
    return isinstance(value, dict) and "players" in value


def read_canonical(path: str | os.PathLike[str]) -> Iterator[SourceRecord]:
    """Yield one :class:`SourceRecord` per non-blank line of a canonical JSON Lines file.

    A line that is not JSON gives an error record naming the JSON problem
    ("invalid JSON: Expecting ',' delimiter at column 40"); a JSON value that is not an object
    gives "expected a JSON object (a hand record), got a list". Plain or gzip files.
    Raises :class:`~pipeline.formats.source.FormatError` when the file cannot be opened.
    """
    file_name = str(path)
    batch: list[SourceLine] = []
    batch_size = 0
    for line in read_lines(path, skip_blank=True):
        if line.text is not None and not line.text.strip():
            continue
        batch.append(line)
        batch_size += len(line.raw)
        if len(batch) >= BATCH_LINES or batch_size >= BATCH_BYTES:
            yield from _parse_batch(file_name, batch)
            batch = []
            batch_size = 0
    if batch:
        yield from _parse_batch(file_name, batch)


def _parse_batch(file_name: str, batch: list[SourceLine]) -> list[SourceRecord]:
    """Parse a batch of lines with the garbage collector paused (bulk JSON parsing builds many
    small containers, and collections triggered by them slow parsing several times over)."""
    with collector_paused():
        return [parse_canonical_line(file_name, line) for line in batch]


def parse_canonical_line(file_name: str, line: SourceLine) -> SourceRecord:
    """Turn one line of a canonical JSON Lines file into a :class:`SourceRecord` (ingest workers too)."""
    if line.text is None:
        return SourceRecord(file_name, line.number, clip_raw(line.raw), None, line.error,
                            damaged=ends_early(line))
    try:
        value: Any = load_json(line.text)
    except ValueError as exc:  # JSONDecodeError, NaN / Infinity, or nested too deeply
        reason = truncated_reason(line, json_error_reason(exc))
        return SourceRecord(
            file_name, line.number, clip_raw(line.text), None, reason, _find_hand_id(line.text),
            damaged=ends_early(line),
        )
    if not isinstance(value, dict):
        kind = _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
        reason = f"expected a JSON object (a hand record), got {kind}"
        return SourceRecord(file_name, line.number, clip_raw(line.text), None, reason)
    return SourceRecord(
        file_name, line.number, clip_raw(line.text), value, None, _hand_id_of(value)
    )


def _hand_id_of(record: dict[str, Any]) -> str | None:
    hand_id = record.get("hand_id")
    if isinstance(hand_id, str):
        return hand_id
    if isinstance(hand_id, int) and not isinstance(hand_id, bool):
        return str(hand_id)
    return None


def _find_hand_id(text: str) -> str | None:
    """The hand id of a line that is not valid JSON, when it can still be seen in the text."""
    match = _HAND_ID_PATTERN.search(text)
    if match is None:
        return None
    if match.group(1) is not None:
        try:
            return json.loads(f'"{match.group(1)}"')
        except ValueError:
            return match.group(1)
    return match.group(2)
