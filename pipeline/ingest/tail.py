"""The new part of a growing file: whole lines from an offset on, and a check of what was read.

``ofc watch`` (:mod:`pipeline.ingest.watch`) reads a file in parts. :func:`read_part` reads the
lines after an offset (a half-written last line only when asked: once the file has gone idle),
noting where each line starts, so a reader that stops at a line gives the byte offset to go on
from. :class:`ReadPrefix` keeps a running SHA-256 of the bytes read so far and their first and
last few kilobytes: a file whose read part is no longer what it was (replaced, truncated,
rewritten) is read again from the start.

Offsets count the file's data: the decompressed bytes of a gzip file.
"""

from __future__ import annotations

import hashlib
import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pipeline.formats.source import (
    MAX_LINE_BYTES,
    READ_BLOCK_BYTES,
    RECODING_PROBE_BYTES,
    RawLine,
    SourceLine,
    damaged_line,
    open_binary,
    read_stream_raw,
    recoding_of,
)

__all__ = ["CHECK_BYTES", "LINE_LIMIT", "Part", "ReadPrefix", "is_compressed", "read_part"]

LINE_LIMIT = MAX_LINE_BYTES + 2
"""Bytes read for one line at most: a line longer than this is longer than any reader takes, so
only this much of it is kept (the readers report it as too long) while its end is looked for."""

CHECK_BYTES = 4096
"""How much of the start and of the end of the bytes read is compared to tell that a file still
holds what was read (the whole of it is hashed when the file is opened afresh)."""

_READ_ERRORS = (OSError, EOFError, zlib.error)


@dataclass(slots=True)
class Part:
    """Whole lines of a file from an offset on, as :func:`read_part` found them."""

    data: bytes
    """The lines as the readers get them (an over-long line cut to :data:`LINE_LIMIT` bytes)."""
    start: int
    """Offset of the part's first byte."""
    first_line: int
    """Number of the part's first line."""
    line_starts: list[int]
    """Offset where each line of the part starts."""
    end: int
    """Offset just past the part."""
    at_end: bool
    """The part reaches the end of what is written (else it stopped at its size limit)."""
    partial: bool = False
    """Its last line has no newline (read only once the file is idle)."""
    exact: bool = True
    """``data`` is the file's bytes exactly (no over-long line was cut)."""
    error: BaseException | None = None
    """Why the data could not be read past the part (damaged compressed data)."""

    @property
    def line_count(self) -> int:
        """Lines in the part (a damaged end adds one error line after them)."""
        return len(self.line_starts) + (1 if self.error is not None else 0)

    @property
    def last_line(self) -> int:
        """Number of the part's last line."""
        return self.first_line + self.line_count - 1

    def offset_of(self, line: int) -> int:
        """Offset where line ``line`` of the part starts (the part's end past its last line)."""
        index = line - self.first_line
        return self.line_starts[index] if index < len(self.line_starts) else self.end

    def lines(self) -> Iterator[RawLine | SourceLine]:
        """The part's lines as :func:`~pipeline.formats.source.read_stream_raw` gives them,
        numbered as in the file."""
        yield from read_stream_raw(io.BytesIO(self.data), first_number=self.first_line)
        if self.error is not None:
            yield damaged_line(self.first_line + len(self.line_starts), self.error)


def read_part(
    stream: IO[bytes], start: int, first_line: int, max_bytes: int, max_lines: int,
    take_partial: bool,
) -> Part:
    """Whole lines of ``stream`` (positioned at offset ``start``) up to about ``max_bytes`` and
    at most ``max_lines``; a last line without a newline only with ``take_partial``.

    A line longer than :data:`LINE_LIMIT` is read to its end without being held: the part keeps
    its first :data:`LINE_LIMIT` bytes. Damaged compressed data ends the part (``error``).
    """
    chunks: list[bytes] = []
    starts: list[int] = []
    position = start
    size = 0
    part = Part(b"", start, first_line, starts, start, at_end=False)
    while size < max_bytes and len(starts) < max_lines:
        try:
            line = stream.readline(LINE_LIMIT)
            length = len(line)
            terminated = line.endswith(b"\n")
            if not terminated and length == LINE_LIMIT:
                while True:  # an over-long line: look for its end, keeping only its start
                    more = stream.readline(READ_BLOCK_BYTES)
                    length += len(more)
                    if not more or more.endswith(b"\n"):
                        terminated = bool(more)
                        break
                part.exact = False
                line += b"\n" if terminated else b""
        except _READ_ERRORS as error:
            part.error = error
            part.at_end = True
            break
        if not line:
            part.at_end = True
            break
        if not terminated:
            part.at_end = True
            if not take_partial:
                break
            part.partial = True
        chunks.append(line)
        starts.append(position)
        position += length
        size += len(line)
        if part.partial:
            break
    part.data = b"".join(chunks)
    part.end = position
    return part


def is_compressed(path: Path) -> bool:
    """True when the file is read whole, once it is idle: gzip data, or text recoded as it is
    read (UTF-16, line ends that are lone carriage returns: see
    :func:`~pipeline.formats.source.recoding_of`), whose offsets are not its bytes'."""
    with open(path, "rb") as stream:
        head = stream.read(RECODING_PROBE_BYTES)
    return head[:2] == b"\x1f\x8b" or recoding_of(head) is not None


@dataclass(slots=True)
class ReadPrefix:
    """The bytes of a file read so far: their running SHA-256, length, first and last bytes."""

    hasher: Any = field(default_factory=hashlib.sha256)
    length: int = 0
    head: bytes = b""
    tail: bytes = b""

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of the bytes read."""
        return self.hasher.hexdigest()

    def extended(self, data: bytes) -> ReadPrefix:
        """A copy with ``data`` read after the bytes so far."""
        head = self.head
        if len(head) < CHECK_BYTES:
            head = (head + data[:CHECK_BYTES])[:CHECK_BYTES]
        tail = (self.tail + data[-CHECK_BYTES:])[-CHECK_BYTES:]
        hasher = self.hasher.copy()
        hasher.update(data)
        return ReadPrefix(hasher, self.length + len(data), head, tail)

    def extended_from(self, path: Path, start: int, end: int) -> ReadPrefix:
        """A copy with the file's bytes ``[start, end)`` read after the bytes so far (streamed:
        for a part whose data holds a cut over-long line)."""
        prefix = self
        with open_binary(path) as stream:
            stream.seek(start)
            left = end - start
            while left > 0:
                block = stream.read(min(READ_BLOCK_BYTES, left))
                if not block:
                    break
                prefix = prefix.extended(block)
                left -= len(block)
        return prefix

    @classmethod
    def read(cls, path: Path, length: int) -> ReadPrefix | None:
        """The first ``length`` bytes of the file's data, or None when it holds fewer now."""
        prefix = cls()
        with open_binary(path) as stream:
            left = length
            while left > 0:
                try:
                    block = stream.read(min(READ_BLOCK_BYTES, left))
                except _READ_ERRORS:
                    return None
                if not block:
                    return None
                prefix = prefix.extended(block)
                left -= len(block)
        return prefix

    def still_there(self, path: Path) -> bool:
        """Whether an uncompressed file still starts and ends (at the length read) with the
        bytes read: a cheap check made on every change (rewritten files fail it)."""
        try:
            with open(path, "rb") as stream:
                if stream.read(len(self.head)) != self.head:
                    return False
                stream.seek(self.length - len(self.tail))
                return stream.read(len(self.tail)) == self.tail
        except OSError:
            return False
