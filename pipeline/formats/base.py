"""What every reader yields: one :class:`SourceRecord` per record found in a file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """A record as read from a source, before validation.

    ``record`` is a canonical JSON-like mapping (docs/hand-format.md) or ``None`` when the
    text could not be read as a record at all; then ``error`` says why. ``line`` is the
    1-based line number where the record starts; ``raw`` is its original text (kept for
    quarantine, truncated by readers to a sane size). ``damaged`` is true for an unreadable
    record that shows the file ends early (damaged compressed data, a cut-off last line): the
    file is then only partly read. ``warning`` says aloud what the reader had to guess to read
    the record (a line in a legacy encoding, say); the record is still good.
    """

    path: str
    line: int
    raw: str
    record: dict[str, Any] | None
    error: str | None = None
    hand_id: str | None = None
    damaged: bool = False
    warning: str | None = None


RAW_TEXT_LIMIT = 20_000
"""Longest raw text kept for one quarantined record (characters)."""


def clip_raw(text: str) -> str:
    """Clip raw text for storage in quarantine, saying how much was cut."""
    if len(text) <= RAW_TEXT_LIMIT:
        return text
    return text[:RAW_TEXT_LIMIT] + f"… [{len(text) - RAW_TEXT_LIMIT} more characters]"
