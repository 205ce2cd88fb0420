"""Format readers: every hand-history format is read into canonical records here.

Each format is one module with a reader (``path -> Iterator[SourceRecord]``), a
``sniff(first_line_text) -> bool`` and a one-line ``DESCRIPTION``; :data:`FORMATS` lists them.
Adding a format means writing its module and adding its line to :data:`FORMATS`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pipeline.formats import boards_csv, canonical, poker_arena
from pipeline.formats.base import SourceRecord
from pipeline.formats.source import FormatError, read_lines

__all__ = [
    "FORMATS",
    "FormatError",
    "FormatSpec",
    "SourceRecord",
    "detect_format",
    "read_source",
]


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """A readable format: its reader, how to recognise it, and a description for messages.

    ``read`` takes the path (and ``game=`` when ``takes_game``); ``sniff`` gets the first
    non-empty line of a file, decoded, and says whether the file is in this format.
    """

    read: Callable[..., Iterator[SourceRecord]]
    sniff: Callable[[str], bool]
    description: str
    takes_game: bool = False


FORMATS: dict[str, FormatSpec] = {
    "canonical": FormatSpec(
        canonical.read_canonical, canonical.sniff_canonical, canonical.DESCRIPTION
    ),
    "poker-arena": FormatSpec(
        poker_arena.read_poker_arena, poker_arena.sniff_poker_arena, poker_arena.DESCRIPTION,
        takes_game=True,
    ),
    "boards-csv": FormatSpec(
        boards_csv.read_boards_csv, boards_csv.sniff_boards_csv, boards_csv.DESCRIPTION
    ),
}
"""Format name → spec, in the order formats are tried by :func:`detect_format`."""


def _first_content_line(path: str | os.PathLike[str]) -> str | None:
    """The first non-blank line of a file, or None when the file has none.

    Raises :class:`FormatError` when that line cannot be read as text.
    """
    for line in read_lines(path):
        if line.text is None:
            raise FormatError(path, line.error or f"line {line.number} cannot be read")
        if line.text.strip():
            return line.text
    return None


def _describe(first_line: str) -> str:
    shown = first_line.strip()
    return shown if len(shown) <= 80 else shown[:80] + "…"


def detect_format(path: str | os.PathLike[str]) -> str:
    """The name of the format a file is in, judged by its first non-empty line.

    Raises :class:`FormatError` when the file is empty, unreadable, or in no known format.
    """
    first_line = _first_content_line(path)
    if first_line is None:
        raise FormatError(path, "empty file: no hand history in it")
    for name, spec in FORMATS.items():
        if spec.sniff(first_line):
            return name
    expected = "; ".join(f"{name}: {spec.description}" for name, spec in FORMATS.items())
    raise FormatError(
        path,
        f"unknown format: the first line {_describe(first_line)!r} fits none of the known "
        f"formats ({expected})",
    )


def read_source(
    path: str | os.PathLike[str], format: str | None = None, game: str | None = None
) -> Iterator[SourceRecord]:
    """Read any supported file: one :class:`SourceRecord` per hand (or per unreadable part).

    ``format`` names the format (a key of :data:`FORMATS`); without it the format is detected
    from the first line. ``game`` names the poker-arena game (``ofc``, ``ofc-pineapple``,
    ``ofc-progressive``, ``ofc-27``) and is ignored by formats whose records name their own
    variant. An empty file yields nothing. Raises :class:`FormatError` for an unknown format
    name or a file that cannot be read as a whole (possibly only once iteration starts).
    """
    if format is None:
        if _first_content_line(path) is None:
            return iter(())
        format = detect_format(path)
    spec = FORMATS.get(format)
    if spec is None:
        raise FormatError(
            path, f"unknown format {format!r} (known formats: {', '.join(FORMATS)})"
        )
    if spec.takes_game:
        return spec.read(path, game=game)
    return spec.read(path)
