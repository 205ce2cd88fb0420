"""Format readers: every hand-history format is read into canonical records here.

Owns the formats and their registry, :data:`FORMATS`: each format's reader, how to recognise
it, its description and the file name endings it is found under. Everything that lists formats
or file names derives from the registry: :data:`FILE_SUFFIXES` (the endings read when a folder
is given to ingest, offered by the dashboard's upload widget and named in ``ofc ingest --help``)
and :data:`COMPRESSED_SUFFIXES`.

Modules:

* :mod:`~pipeline.formats.base` — :class:`SourceRecord`, what every reader yields;
* :mod:`~pipeline.formats.source` — line reading shared by the readers (plain or gzip);
* :mod:`~pipeline.formats.follow` — reading a file that is still being written, a part at a time;
* :mod:`~pipeline.formats.canonical` — the product's own canonical JSON Lines;
* :mod:`~pipeline.formats.poker_arena` — poker-arena OFC logs;
* :mod:`~pipeline.formats.boards_csv` — final boards written up by hand, as CSV.

Each format is one module with a reader (``path -> Iterator[SourceRecord]``), a
``sniff(first_line_text) -> bool`` and a one-line ``DESCRIPTION``. Adding a format means
writing its module and adding its line, with its file suffixes, to :data:`FORMATS`.

Layer: imports only :mod:`pipeline.rules` (readers yield plain mappings; checking them is
:mod:`pipeline.records`'s job, which sits beside this package and is not imported by it). May be
imported by store and every layer above it: ingest, simulate, analysis, read, report, live, cli
and the dashboard. Reads files, never the database. This package file imports the readers (all
light: no numpy, polars or DuckDB) to build the registry, on first use of the registry (or of
:class:`SourceRecord`): a command that only reads lines (``ofc score``, with
:mod:`~pipeline.formats.source`) starts without them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from pipeline.formats.source import (
    BINARY_FILE_ERROR,
    COMPRESSED_SUFFIXES,
    FormatError,
    decode_line,
    open_binary,
    probe_head,
    read_stream_raw,
)

if TYPE_CHECKING:
    from pipeline.formats.base import SourceRecord

__all__ = [
    "COMPRESSED_SUFFIXES",
    "FILE_SUFFIXES",
    "FORMATS",
    "FormatError",
    "FormatSpec",
    "SourceRecord",
    "detect_format",
    "format_of_lines",
    "sample_file",
    "read_source",
]


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """A readable format: its reader, how to recognise it, a description for messages and help,
    and the file name endings (lower case, with the dot) its files usually have.

    ``read`` takes the path (and ``game=`` when ``takes_game``); ``sniff`` gets one non-empty
    line of a file, decoded, and says whether the line fits this format (a sample of lines
    votes, see :func:`detect_format`). The format
    of a file is always judged by its content (:func:`detect_format`); ``suffixes`` only say
    which files of a folder are hand histories (and which files the dashboard offers to upload).
    """

    read: Callable[..., Iterator[SourceRecord]]
    sniff: Callable[[str], bool]
    description: str
    suffixes: tuple[str, ...]
    takes_game: bool = False
    follow: Callable[..., Iterator[SourceRecord]] | None = None
    """Reads a part of a file that is still being written (:mod:`pipeline.formats.follow`):
    ``(path, lines, follow)``, plus ``game=`` when ``takes_game``. None for a format whose
    lines are records on their own (canonical) or that cannot be read in parts."""


@cache
def _formats() -> dict[str, FormatSpec]:
    """:data:`FORMATS`, built (and the format modules imported) on first use."""
    from pipeline.formats import boards_csv, canonical, poker_arena

    return {
        "canonical": FormatSpec(
            canonical.read_canonical, canonical.sniff_canonical, canonical.DESCRIPTION,
            suffixes=(".jsonl", ".ndjson", ".json"),
        ),
        "poker-arena": FormatSpec(
            poker_arena.read_poker_arena, poker_arena.sniff_poker_arena, poker_arena.DESCRIPTION,
            suffixes=(".jsonl", ".log", ".txt"), takes_game=True,
            follow=poker_arena.follow_poker_arena,
        ),
        "boards-csv": FormatSpec(
            boards_csv.read_boards_csv, boards_csv.sniff_boards_csv, boards_csv.DESCRIPTION,
            suffixes=(".csv",), follow=boards_csv.follow_boards_csv,
        ),
    }


@cache
def _file_suffixes() -> tuple[str, ...]:
    return tuple(dict.fromkeys(suffix for spec in _formats().values() for suffix in spec.suffixes))


def __getattr__(name: str) -> Any:
    """The registry and :class:`SourceRecord`, imported on first use:

    * ``FORMATS`` (``dict[str, FormatSpec]``): format name → spec, in the order formats are
      tried by :func:`detect_format`;
    * ``FILE_SUFFIXES`` (``tuple[str, ...]``): every registered format's file name endings,
      each once, in registry order."""
    if name == "FORMATS":
        return _formats()
    if name == "FILE_SUFFIXES":
        return _file_suffixes()
    if name == "SourceRecord":
        from pipeline.formats.base import SourceRecord

        return SourceRecord
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SNIFF_LINES = 50
"""How many non-blank readable lines of a file are sampled to judge its format."""

SNIFF_BYTES = 8 << 20
"""Most of a file's (decompressed) text read to sample it (8 MiB): a file whose first 8 MiB
hold no readable non-blank line is not guessed at (give ``--format``), so judging a file costs
milliseconds however it is made (a .gz of a billion blank lines, say)."""


class FileSample(NamedTuple):
    """The sample a file's format is judged from (:func:`sample_file`)."""

    lines: list[str]
    """Up to the asked number of non-blank lines that can be read as text."""
    unreadable: int
    """Lines of the sampled start that could not be read (not UTF-8, too long, binary)."""
    cut: bool
    """True when :data:`SNIFF_BYTES` were read before the sample was complete."""


def sample_file(path: str | os.PathLike[str], limit: int = SNIFF_LINES) -> FileSample:
    """Up to ``limit`` non-blank lines of a file that can be read as text, read from at most
    :data:`SNIFF_BYTES` of it. Raises :class:`FormatError` when the file cannot be opened."""
    lines: list[str] = []
    unreadable = 0
    with open_binary(path) as stream:
        bounded = _Bounded(stream, SNIFF_BYTES)
        for item in read_stream_raw(bounded, skip_blank=True):
            if bounded.exhausted and (type(item) is not tuple or not item[2]):
                break  # the line the budget cut off is not judged
            line = decode_line(item) if type(item) is tuple else item
            if line.text is None:
                unreadable += 1
                if unreadable > 4 * limit:
                    break
                continue
            if line.text.strip():
                lines.append(line.text)
                if len(lines) >= limit:
                    break
    return FileSample(lines, unreadable, bounded.exhausted and len(lines) < limit)


def sample_lines(path: str | os.PathLike[str], limit: int = SNIFF_LINES) -> tuple[list[str], int]:
    """:func:`sample_file`'s lines and unreadable count."""
    sample = sample_file(path, limit)
    return sample.lines, sample.unreadable


class _Bounded:
    """A binary stream that ends after ``budget`` bytes (``exhausted`` then says so)."""

    def __init__(self, stream: IO[bytes], budget: int) -> None:
        self.stream = stream
        self.left = budget
        self.exhausted = False
        self.read = self.read1 = self._read

    def _read(self, size: int = -1) -> bytes:
        if self.left <= 0:
            # the budget is spent: cut, unless the file ends right here
            self.exhausted = self.exhausted or bool(
                getattr(self.stream, "read1", self.stream.read)(1))
            return b""
        read = getattr(self.stream, "read1", self.stream.read)
        data = read(min(size if size > 0 else self.left, self.left))
        self.left -= len(data)
        return data


def _describe(first_line: str) -> str:
    shown = first_line.strip()
    return shown if len(shown) <= 80 else shown[:80] + "…"


def format_of_lines(lines: list[str]) -> str | None:
    """The format most of these non-blank lines fit (ties go to the registry's order), or None
    when none fits any: the vote :func:`detect_format` takes over a file's first lines."""
    formats = _formats()
    votes = {name: sum(1 for line in lines if spec.sniff(line)) for name, spec in formats.items()}
    best = max(formats, key=lambda name: votes[name])  # the first of equals: registry order
    return best if votes[best] else None


def detect_format(path: str | os.PathLike[str]) -> str:
    """The name of the format a file is in, judged from a sample of its lines.

    The first :data:`SNIFF_LINES` non-blank lines that can be read as text vote: the format
    most of them fit wins (ties go to the registry's order), so a comment line, an unreadable
    line or an over-long line at the top does not decide the file. Raises
    :class:`FormatError` when the file is empty, binary, or fits no known format.
    """
    lines, unreadable, cut = sample_file(path)
    if not lines:
        if cut:
            raise FormatError(path, f"no hand history in the first {SNIFF_BYTES >> 20} MiB "
                                    "(only blank or unreadable lines): not read; if hands "
                                    "follow, give --format to read the whole file")
        if unreadable:
            if b"\0" in probe_head(path):
                raise FormatError(path, BINARY_FILE_ERROR)
            raise FormatError(path, "no line of the file can be read as text")
        raise FormatError(path, "empty file: no hand history in it")
    best = format_of_lines(lines)
    if best is not None:
        return best
    if b"\0" in probe_head(path):
        raise FormatError(path, BINARY_FILE_ERROR)
    expected = "; ".join(f"{name}: {spec.description}" for name, spec in _formats().items())
    if len(lines) == 1:
        what = f"the first line {_describe(lines[0])!r} fits none of the known formats"
    else:
        what = (f"none of the first {len(lines)} lines fits a known format (the first is "
                f"{_describe(lines[0])!r})")
    raise FormatError(path, f"unknown format: {what} ({expected})")


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
        first = sample_file(path, limit=1)
        if not first.lines and not first.unreadable and not first.cut:
            return iter(())
        format = detect_format(path)
    spec = _formats().get(format)
    if spec is None:
        raise FormatError(
            path, f"unknown format {format!r} (known formats: {', '.join(_formats())})"
        )
    if spec.takes_game:
        return spec.read(path, game=game)
    return spec.read(path)
