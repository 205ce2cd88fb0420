"""Shared line reading for every format reader: plain or gzip files, one line at a time.

:func:`read_lines` opens a path (gzip is recognised by its magic bytes, never by the name),
and yields one :class:`SourceLine` per line of text. It never holds more than one line in
memory, and a line longer than :data:`MAX_LINE_BYTES` is skipped in chunks, not loaded.
Text-level problems come back as lines with an ``error`` (the reader turns them into error
records); only problems with the whole file (missing, unreadable) raise :class:`FormatError`.
"""

from __future__ import annotations

import codecs
import contextlib
import gc
import gzip
import io
import json
import os
import signal
import sys
import zlib
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from multiprocessing.pool import Pool

MAX_LINE_BYTES = 1 << 20
"""Longest line a reader accepts (1 MiB); a longer line becomes an error, not a record."""

BINARY_PROBE_BYTES = 8192
"""How much of the (decompressed) start of a file is checked for NUL bytes when no line of it
fits any format (then it is reported as a binary file)."""

GZIP_MAGIC = b"\x1f\x8b"
COMPRESSED_SUFFIXES = (".gz", ".gzip")
"""File name endings of compressed files: a hand-history file's name may end in one of these
after its format's suffix (``hands.jsonl.gz``). Only the name: gzip data is recognised by its
magic bytes."""
BINARY_FILE_ERROR = "binary file, not a hand history"
TRUNCATED_LINE = "truncated line"

READ_BLOCK_BYTES = 1 << 20
"""How much of a file is read at a time."""

_PREVIEW_BYTES = 1000
_BLANK_BYTES = b" \t\r\n"
_BYTE_ORDER_MARK = "\ufeff"


class FormatError(Exception):
    """A problem with a whole file (cannot open it, cannot tell its format, missing columns...).

    ``str(error)`` is ``"<path>: <reason>"``; ``error.path`` and ``error.reason`` hold the parts.
    """

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class SourceLine(NamedTuple):
    """One line of a source file.

    ``text`` is the decoded line without its line ending (and without a UTF-8 byte-order mark
    on line 1), or ``None`` when the line could not be read as text; then ``error`` says why.
    ``raw`` is the text, or a lossy preview of an unreadable line for quarantine.
    ``terminated`` is false only for a last line that has no newline at its end; ``damaged``
    marks the error line of a file that ends early (see :func:`read_stream_raw`).
    """

    number: int
    text: str | None
    error: str | None
    raw: str
    terminated: bool = True
    damaged: bool = False
    """True for an error line that shows the file ends early: damaged compressed data, or an
    unreadable last line without a newline (a zero-filled or cut-off tail)."""


def open_binary(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open a file for reading bytes, decompressing it when it starts with the gzip magic bytes,
    and giving UTF-8 lines ending in ``\\n`` for what spreadsheets save otherwise
    (:func:`recoding_of`): UTF-16 with a byte-order mark (Excel's "Unicode text") is
    decoded, and line ends that are a lone carriage return ("CSV (Macintosh)") become
    newlines. Offsets in such a stream count its UTF-8 bytes, as they count a gzip file's
    decompressed bytes.

    Raises :class:`FormatError` when the file cannot be opened.
    """
    try:
        stream: IO[bytes] = open(path, "rb")  # noqa: SIM115 - returned to the caller
    except OSError as exc:
        raise FormatError(path, f"cannot open: {exc.strerror or exc}") from exc
    try:
        magic = stream.peek(2)[:2]  # type: ignore[attr-defined]
    except OSError as exc:
        stream.close()
        raise FormatError(path, f"cannot read: {exc.strerror or exc}") from exc
    if magic == GZIP_MAGIC:
        stream.close()
        try:
            stream = gzip.open(path, "rb")  # noqa: SIM115 - returned to the caller
        except OSError as exc:
            raise FormatError(path, f"cannot open: {exc.strerror or exc}") from exc
    try:
        head = stream.read(RECODING_PROBE_BYTES)
        stream.seek(0)
    except (OSError, EOFError, zlib.error):
        # damaged compressed data: read as it is, the line pass reports where it happens
        stream.close()
        return gzip.open(path, "rb") if magic == GZIP_MAGIC else open(path, "rb")  # noqa: SIM115
    recoding = recoding_of(head)
    if recoding is None:
        return stream
    return io.BufferedReader(_Recoded(stream, recoding), READ_BLOCK_BYTES)


RECODING_PROBE_BYTES = 1 << 16
"""How much of a file's start (decompressed) is looked at for a UTF-16 byte-order mark and for
line ends that are lone carriage returns."""

_UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")


class Recoding(NamedTuple):
    """How a file's bytes become UTF-8 lines ending in ``\\n``: its encoding (None: as they
    are) and whether a lone carriage return ends a line."""

    encoding: str | None
    carriage_returns: bool


def recoding_of(head: bytes) -> Recoding | None:
    """How a file starting with ``head`` must be recoded to be read line by line, or None when
    it reads as it is: UTF-16 (little or big endian) with its byte-order mark; line ends that
    are lone carriage returns (the start holds no ``\\n``, and a ``\\r`` before its end).

    A byte-order mark counts only when the bytes after it look like UTF-16 text (see
    :func:`_looks_like_utf16`): a UTF-8 file that starts with the junk bytes FF FE is read as
    UTF-8, its first line rejected, not decoded whole into nonsense."""
    encoding = "utf-16" if head[:2] in _UTF16_MARKS and _looks_like_utf16(head) else None
    text = head
    if encoding is not None:
        text = head[2:].decode("utf-16-le" if head[:2] == b"\xff\xfe" else "utf-16-be",
                               "replace").encode("utf-8", "replace")
    # a carriage return followed by something else than a newline (a file being written may
    # end, for now, in the \r of a \r\n)
    carriage_returns = b"\n" not in text and b"\r" in text.rstrip(b"\r")
    if encoding is None and not carriage_returns:
        return None
    return Recoding(encoding, carriage_returns)


UTF16_ZERO_SHARE = 0.25
"""Least share of zero high bytes after a UTF-16 byte-order mark for a file to be read as
UTF-16: hand histories are mostly ASCII (digits, card letters, separators), each a zero byte
beside its code in UTF-16, while UTF-8 text holds no zero bytes at all."""


def _looks_like_utf16(head: bytes) -> bool:
    """True when ``head`` (starting with a UTF-16 byte-order mark) reads as UTF-16 text: nothing
    after the mark, or at least :data:`UTF16_ZERO_SHARE` of the high bytes of its code units
    are zero."""
    body = head[2:len(head) - len(head) % 2]
    if not body:
        return True
    high = body[1::2] if head[:2] == b"\xff\xfe" else body[0::2]
    return high.count(0) >= UTF16_ZERO_SHARE * len(high)


class _Recoded(io.RawIOBase):
    """A binary stream's bytes recoded (:class:`Recoding`) as they are read; seekable to any
    offset of the recoded data (backwards by reading again from the start)."""

    def __init__(self, stream: IO[bytes], recoding: Recoding) -> None:
        self._stream = stream
        self._recoding = recoding
        self._restart()

    def _restart(self) -> None:
        self._stream.seek(0)
        self._decoder = (codecs.getincrementaldecoder(self._recoding.encoding)("replace")
                         if self._recoding.encoding else None)
        self._buffer = b""
        self._position = 0
        self._ended = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def _fill(self, wanted: int) -> None:
        while len(self._buffer) < wanted and not self._ended:
            data = self._stream.read(READ_BLOCK_BYTES)
            final = not data
            if self._decoder is not None:
                data = self._decoder.decode(data, final).encode("utf-8", "surrogatepass")
            if self._recoding.carriage_returns:
                data = data.replace(b"\r", b"\n")
            self._buffer += data
            self._ended = final

    def readinto(self, target: Any) -> int:
        view = memoryview(target).cast("B")
        self._fill(len(view))
        size = min(len(view), len(self._buffer))
        view[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        self._position += size
        return size

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_CUR:
            offset += self._position
        elif whence != io.SEEK_SET:
            raise io.UnsupportedOperation("a recoded file seeks from its start only")
        if offset < self._position:
            self._restart()
        while self._position < offset:
            self._fill(min(offset - self._position, READ_BLOCK_BYTES))
            if not self._buffer:
                break
            skipped = self._buffer[:offset - self._position]
            self._buffer = self._buffer[len(skipped):]
            self._position += len(skipped)
        return self._position

    def close(self) -> None:
        if not self.closed:
            self._stream.close()
        super().close()


def probe_head(path: str | os.PathLike[str]) -> bytes:
    """Up to BINARY_PROBE_BYTES of the file's (decompressed) content; damage is ignored here."""
    head = bytearray()
    with open_binary(path) as stream:
        try:
            while len(head) < BINARY_PROBE_BYTES:
                chunk = stream.read1(BINARY_PROBE_BYTES - len(head))  # type: ignore[attr-defined]
                if not chunk:
                    break
                head += chunk
        except (OSError, EOFError, zlib.error):
            pass  # the line pass reports damaged data at the right line
    return bytes(head)


def _describe_decode_error(number: int, exc: UnicodeDecodeError) -> str:
    bad_byte = exc.object[exc.start]
    return f"line {number} is not UTF-8 text (byte 0x{bad_byte:02x} at column {exc.start + 1})"


def _limit_text(limit: int) -> str:
    if limit % (1 << 20) == 0:
        return f"{limit >> 20} MiB"
    if limit % (1 << 10) == 0:
        return f"{limit >> 10} KiB"
    return f"{limit} bytes"


def read_lines(
    path: str | os.PathLike[str], max_line_bytes: int = MAX_LINE_BYTES, skip_blank: bool = False
) -> Iterator[SourceLine]:
    """Yield every line of a plain or gzip text file as a :class:`SourceLine`, streaming.

    * Each line is decoded as UTF-8 on its own; a bad line gives an error line
      ("line 7 is not UTF-8 text (byte 0xff at column 12)") and the next lines still come.
    * A UTF-8 byte-order mark at the start of line 1 is dropped.
    * A line holding a NUL byte gives an error line (binary data, or the zero-filled tail of a
      file cut off while being written); the lines around it still come.
    * A line longer than ``max_line_bytes`` gives "line N is longer than 1 MiB" and is skipped
      without being loaded whole.
    * Damaged gzip data ends the file with an error line naming where it happened
      (``damaged``, as is an unreadable last line without a newline).
    * An empty file yields nothing.
    * With ``skip_blank``, a run of blank lines that fills a whole block is passed over in C
      (the line numbers still count it): for readers to which a blank line is nothing, so a
      file of millions of blank lines costs what reading its bytes costs.

    Raises :class:`FormatError` when the file cannot be opened.
    """
    for item in read_raw_lines(path, max_line_bytes, skip_blank):
        yield decode_line(item) if type(item) is tuple else item


RawLine = tuple[int, bytes, bool]
"""A line as bytes, not decoded yet: (number, bytes without the line ending, terminated)."""


def read_stream_lines(
    stream: IO[bytes], max_line_bytes: int = MAX_LINE_BYTES, first_number: int = 1
) -> Iterator[SourceLine]:
    """Yield the lines of an already open binary stream (stdin, say) as :class:`SourceLine` values.

    ``first_number`` is the number of the stream's first line (a part of a file read from a
    line on keeps the file's line numbers)."""
    for item in read_stream_raw(stream, max_line_bytes, first_number):
        yield decode_line(item) if type(item) is tuple else item


def read_raw_lines(
    path: str | os.PathLike[str], max_line_bytes: int = MAX_LINE_BYTES, skip_blank: bool = False
) -> Iterator[RawLine | SourceLine]:
    """:func:`read_lines` without the decoding: each line as a :data:`RawLine` (decode it with
    :func:`decode_line`), or a :class:`SourceLine` with an ``error`` for a line that cannot be
    read (binary file, over-long line, damaged data), exactly where :func:`read_lines` gives one.
    """
    stream = open_binary(path)
    try:
        yield from read_stream_raw(stream, max_line_bytes, skip_blank=skip_blank)
    finally:
        stream.close()


def read_stream_raw(
    stream: IO[bytes], max_line_bytes: int = MAX_LINE_BYTES, first_number: int = 1,
    skip_blank: bool = False,
) -> Iterator[RawLine | SourceLine]:
    """The lines of an open binary stream as :data:`RawLine` tuples, or error lines.

    Reads blocks of :data:`READ_BLOCK_BYTES` and splits them (about ten times faster than a
    readline per line); a line longer than ``max_line_bytes`` is dropped as the blocks pass, so
    memory stays within one block plus one line. The first line is numbered ``first_number``.
    With ``skip_blank``, a block holding only blank lines (spaces, tabs, line ends) is counted
    and passed over without splitting it (see :func:`read_lines`).
    """
    cut = partial(_split_lines, max_line_bytes=max_line_bytes)
    for run in _line_runs(stream, max_line_bytes, first_number, skip_blank, cut):
        if type(run) is _Run:
            yield from run.kept.numbered(run.first_number)
        else:
            yield run


def _split_lines(buffer: bytes, end: int, max_line_bytes: int) -> tuple[_Lines, int]:
    """The whole lines of ``buffer[:end]`` split (:class:`_Lines`), and how many there are."""
    pieces = buffer.split(b"\n")
    pieces.pop()  # after ``end``: the start of the next line
    return _Lines(pieces, b"\0" in buffer, max_line_bytes), len(pieces)


class _Lines(NamedTuple):
    """Split whole lines, checked as they are given (:meth:`numbered`)."""

    pieces: list[bytes]
    binary: bool  # whether any of them may hold a NUL byte
    max_line_bytes: int

    def numbered(self, first_number: int) -> Iterator[RawLine | SourceLine]:
        """A :data:`RawLine` per line numbered from ``first_number``, or its error line (too
        long, or holding NUL bytes)."""
        number = first_number - 1
        max_line_bytes, binary = self.max_line_bytes, self.binary
        for piece in self.pieces:
            number += 1
            if len(piece) > max_line_bytes:
                yield SourceLine(number, None, _too_long(number, max_line_bytes),
                                 _preview(piece), True)
            elif binary and b"\0" in piece:
                yield SourceLine(number, None, _binary_line(number), _preview(piece), True)
            else:
                yield (number, piece[:-1] if piece[-1:] == b"\r" else piece, True)


class LineBlock(NamedTuple):
    """Whole lines of a file kept as one bytes object: the lines numbered ``first_number`` on,
    each ending in ``\n``, to be checked against ``max_line_bytes`` where they are split
    (:func:`expand_lines`, in a worker process). A batch of these crosses a pipe as a few large
    bytes objects instead of a tuple per line."""

    first_number: int
    data: bytes
    max_line_bytes: int


class _Run(NamedTuple):
    """The ``count`` whole lines of a block read, as the caller of :func:`_line_runs` cut them
    (``kept``), numbered ``first_number`` on."""

    first_number: int
    kept: Any
    count: int


def _line_runs(
    stream: IO[bytes], max_line_bytes: int, first_number: int, skip_blank: bool,
    cut: Callable[[bytes, int], tuple[Any, int]],
) -> Iterator[_Run | RawLine | SourceLine]:
    """The block loop of :func:`read_stream_raw` and :func:`read_raw_batches`: the whole lines
    each block ends (a line carried over from the blocks before it first) as
    ``cut(buffer, end)`` keeps them (``buffer[:end]``: split into lines, or kept whole) with
    how many they are; the lines too long to keep and the damage as error lines; the last line
    when it has no newline. A run's first line may be too long (it began in an earlier block);
    a line inside one block is shorter than a block."""
    number = first_number - 1  # the number of the last line given
    pending = b""  # the start of the next line
    skipping: str | None = None  # preview of an over-long line being dropped
    # read1: what one read of the underlying file gives, so a damaged gzip stream still yields
    # every line before the damage.
    read = getattr(stream, "read1", stream.read)
    while True:
        try:
            block = read(READ_BLOCK_BYTES)
        except (OSError, EOFError, zlib.error) as exc:
            yield SourceLine(number + 1, None, _damage_reason(number + 1, exc),
                             skipping or (_preview(pending) if pending else ""),
                             False, True)
            return
        if not block:
            break
        if skip_blank and skipping is None and not block.lstrip(_BLANK_BYTES) \
                and not pending.lstrip(_BLANK_BYTES):
            # only blank lines (and a blank start of a line carried over): count them (lstrip
            # stops at the first other byte, where deleting the blanks copied the whole block)
            newlines = block.count(b"\n")
            number += newlines
            pending = b"" if newlines else pending  # a blank unfinished line is nothing
            continue
        if skipping is not None:
            end = block.find(b"\n")
            if end < 0:
                continue
            number += 1
            yield SourceLine(number, None, _too_long(number, max_line_bytes), skipping, True)
            skipping = None
            block = block[end + 1:]
        last = block.rfind(b"\n")
        if last < 0:
            pending += block
        else:
            buffer = pending + block if pending else block
            run = _Run(number + 1, *cut(buffer, len(pending) + last + 1))
            yield run
            number += run.count
            pending = block[last + 1:]
        if len(pending) > max_line_bytes:
            skipping = _preview(pending)
            pending = b""
    if skipping is not None:
        yield SourceLine(number + 1, None, _too_long(number + 1, max_line_bytes), skipping,
                         False, True)
    elif pending and b"\0" in pending:
        yield SourceLine(number + 1, None, _binary_line(number + 1), _preview(pending), False, True)
    elif pending:
        yield (number + 1, pending, False)


PackedLines = list[LineBlock | tuple[int, bytes, bool] | SourceLine]
"""A batch of lines as :func:`read_raw_batches` gives it: blocks of whole lines, and lines
already read one by one (error lines, a file's last line)."""


def expand_lines(items: PackedLines | list) -> list:
    """The lines of a batch (:data:`PackedLines`, or lines already): every :class:`LineBlock`
    split into the :data:`RawLine` and error lines :func:`read_stream_raw` gives for it, in
    order."""
    if not any(type(item) is LineBlock for item in items):
        return list(items)
    lines: list = []
    for item in items:
        if type(item) is LineBlock:
            split, _ = _split_lines(item.data, len(item.data), item.max_line_bytes)
            lines += split.numbered(item.first_number)
        else:
            lines.append(item)
    return lines


def _whole(buffer: bytes, end: int) -> tuple[bytes, int]:
    """The whole lines of ``buffer[:end]`` kept as one bytes object, and how many there are."""
    data = buffer[:end]
    return data, data.count(b"\n")


def read_raw_batches(
    path: str | os.PathLike[str], sizes: Iterator[int], max_line_bytes: int = MAX_LINE_BYTES,
    skip_blank: bool = False,
) -> Iterator[PackedLines]:
    """The lines :func:`read_raw_lines` gives, in batches of ``next(sizes)`` lines each (the
    last one shorter), packed: whole lines stay in :class:`LineBlock` bytes, never split here
    (:func:`expand_lines` splits and checks them where they are used, in a worker process), so
    the reading process does not touch lines one by one. The blocks are those
    :func:`read_stream_raw` reads (:func:`_line_runs`).

    Raises :class:`FormatError` when the file cannot be opened."""
    stream = open_binary(path)
    batcher = _Batcher(sizes, max_line_bytes)
    try:
        for run in _line_runs(stream, max_line_bytes, 1, skip_blank, _whole):
            if type(run) is _Run:
                batcher.lines(run.first_number, run.kept, run.count)
            else:
                batcher.line(run)
            yield from batcher.take()
    finally:
        stream.close()
    if batcher.items:
        yield batcher.items


class _Batcher:
    """Fills batches of a given number of lines with blocks of whole lines and single lines."""

    def __init__(self, sizes: Iterator[int], max_line_bytes: int) -> None:
        self.sizes = sizes
        self.max_line_bytes = max_line_bytes
        self.size = next(sizes)
        self.items: PackedLines = []
        self.count = 0  # lines in items
        self.full: list[PackedLines] = []

    def lines(self, first_number: int, data: bytes, count: int) -> None:
        """Add ``count`` whole lines (``data``, each ending in a newline) numbered from
        ``first_number``, cut where batches end."""
        start = 0
        while count:
            room = self.size - self.count
            if count <= room:
                self.items.append(LineBlock(first_number, data[start:] if start else data,
                                             self.max_line_bytes))
                self.count += count
                count = 0
            else:
                end = start
                for _ in range(room):
                    end = data.index(b"\n", end) + 1
                self.items.append(LineBlock(first_number, data[start:end], self.max_line_bytes))
                self.count += room
                first_number += room
                count -= room
                start = end
            if self.count >= self.size:
                self._close()

    def line(self, item: tuple[int, bytes, bool] | SourceLine) -> None:
        """Add one line read on its own."""
        self.items.append(item)
        self.count += 1
        if self.count >= self.size:
            self._close()

    def _close(self) -> None:
        self.full.append(self.items)
        self.items = []
        self.count = 0
        self.size = next(self.sizes)

    def take(self) -> list[PackedLines]:
        """The batches filled since the last call."""
        full, self.full = self.full, []
        return full


def damaged_line(number: int, error: BaseException) -> SourceLine:
    """The error line :func:`read_stream_raw` gives at ``number`` when the data cannot be read
    any further (damaged compressed data), for a caller that reads a stream in its own parts."""
    return SourceLine(number, None, _damage_reason(number, error), "", False, True)


def _preview(data: bytes) -> str:
    return data[:_PREVIEW_BYTES].decode("utf-8", "replace") + "…"


def _binary_line(number: int) -> str:
    return (f"line {number} holds NUL bytes: binary data, or the zero-filled end of a file cut "
            "off while being written")


def _too_long(number: int, limit: int) -> str:
    return f"line {number} is longer than {_limit_text(limit)}"


def decode_line(line: RawLine) -> SourceLine:
    """A :data:`RawLine` as a :class:`SourceLine`: UTF-8 text (a byte-order mark dropped on
    line 1), or an error naming the first byte that is not UTF-8."""
    number, data, terminated = line
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        preview = data[:_PREVIEW_BYTES].decode("utf-8", "replace")
        return SourceLine(number, None, _describe_decode_error(number, exc), preview, terminated)
    if number == 1 and text.startswith(_BYTE_ORDER_MARK):
        text = text[1:]
    return SourceLine(number, text, None, text, terminated)


def _damage_reason(number: int, exc: BaseException) -> str:
    detail = str(exc) or type(exc).__name__
    if number == 1:
        return f"cannot read the file: damaged data at the start ({detail})"
    return f"cannot read past line {number - 1}: damaged data ({detail})"


class NonStandardNumber(ValueError):
    """A JSON text uses ``NaN``, ``Infinity`` or ``-Infinity``, which JSON does not have."""


class NestedTooDeep(ValueError):
    """A JSON text nests arrays or objects deeper than the parser follows (Python's recursion
    limit, about a thousand levels; a hand record needs five)."""


NESTED_TOO_DEEP = "invalid JSON: nested too deeply (arrays or objects about 1,000 levels deep or more)"
"""The reason of a line :func:`load_json` refuses for its nesting."""


def _refuse_constant(name: str) -> Any:
    raise NonStandardNumber(f"invalid JSON: {name} is not a JSON number")


_STRICT_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def load_json(text: str) -> Any:
    """Parse one JSON text as the readers do: like :func:`json.loads`, but ``NaN`` and
    ``Infinity`` (which Python accepts and JSON does not) raise :class:`NonStandardNumber`, a
    ``ValueError`` whose message is the reason. Decoding errors raise ``json.JSONDecodeError``
    (give it to :func:`json_error_reason`); a text nested deeper than the parser follows raises
    :class:`NestedTooDeep` (a ``ValueError`` too), never ``RecursionError``: a line of a hundred
    thousand ``[`` costs that line only."""
    try:
        return _STRICT_DECODER.decode(text)
    except RecursionError:
        raise NestedTooDeep(NESTED_TOO_DEEP) from None


def json_error_reason(error: ValueError) -> str:
    """A JSON decoding error as a reason: ``invalid JSON: Expecting ',' delimiter at column 40``.

    Python's messages that end with a position word ("Unterminated string starting at") get the
    column right after it, not a second "at".
    """
    if isinstance(error, (NonStandardNumber, NestedTooDeep)):
        return str(error)
    message = getattr(error, "msg", None) or str(error)
    column = getattr(error, "colno", None)
    if column is None:
        return f"invalid JSON: {message}"
    if message.endswith(" at"):
        return f"invalid JSON: {message} column {column}"
    return f"invalid JSON: {message} at column {column}"


def ends_early(line: SourceLine) -> bool:
    """True when an error at this line means the file ends early: the line is marked damaged, or
    it is a last line without a newline (see :func:`truncated_reason`)."""
    return line.damaged or not line.terminated


def truncated_reason(line: SourceLine, reason: str) -> str:
    """The error for a line that failed to parse: marked "truncated line" when it is a last line
    without a newline (the file was most likely cut off while being written)."""
    if line.terminated:
        return reason
    return f"{TRUNCATED_LINE}: the file ends in the middle of line {line.number} ({reason})"


def file_name_stem(path: str | os.PathLike[str]) -> str:
    """The file name without the compression and text suffixes (``ofc-27.jsonl.gz`` → ``ofc-27``).

    The text suffixes are the format registry's (:data:`pipeline.formats.FILE_SUFFIXES`)."""
    # Imported here: the registry imports the readers, which import this module.
    from pipeline.formats import FILE_SUFFIXES

    name = Path(path).name
    lowered = name.lower()
    for suffix in COMPRESSED_SUFFIXES:
        if lowered.endswith(suffix):
            name, lowered = name[: -len(suffix)], lowered[: -len(suffix)]
            break
    for suffix in FILE_SUFFIXES:
        if lowered.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name


MALLOC_MMAP_THRESHOLD_BYTES = 32 << 20
"""Allocations below this come from the heap, not from a mapping of their own
(:func:`keep_freed_memory`)."""
MALLOC_TRIM_THRESHOLD_BYTES = 512 << 20
"""Freed memory at the heap's top is given back to the system only beyond this."""


def keep_freed_memory() -> bool:
    """Let glibc reuse freed memory instead of giving it back and faulting it in again (Linux
    with glibc; elsewhere nothing). Returns whether it applied.

    A command that reads a file in 1 MiB blocks and builds arrays of a block at a time
    allocates and frees the same large sizes over and over. By default glibc maps each
    allocation of 128 KiB or more on its own (the threshold grows with use) and trims the
    heap's free top, so every block's memory is faulted in again, page by page. On the test
    machine, ``ofc score`` of 20,000 hands took about 50,000 page faults and 0.15 s of system
    time that way, against about 23,000 and 0.08 s with these thresholds (fixed: the process
    may keep up to 512 MiB of freed memory for reuse; a command's own bound on what it holds
    at once is unchanged). Forked workers inherit the setting. ``ofc score`` sets it; ``ofc
    ingest`` does not: measured side by side (100,000 hands, writer and workers set), its wall
    time did not change (0.94-1.02×) and its peak memory grew from 1.2 to 1.4 GB."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt  # glibc; musl has none
    except (OSError, AttributeError):
        return False
    trim_threshold, mmap_threshold = -1, -3  # M_TRIM_THRESHOLD, M_MMAP_THRESHOLD
    return bool(mallopt(mmap_threshold, MALLOC_MMAP_THRESHOLD_BYTES)
                and mallopt(trim_threshold, MALLOC_TRIM_THRESHOLD_BYTES))


def plain_worker_signals() -> None:
    """In a pool's worker process (its initializer): SIGTERM ends it at once, by the system's
    default action, and SIGINT is ignored.

    A worker forked from an ``ofc`` command inherits the command's SIGTERM handler, which
    raises an exception (:class:`pipeline.cli.Terminated`) for the command to stop cleanly.
    A worker waiting for its next task, on the lock of the pool's queue, did not end on it: a
    pool that stops its workers by SIGTERM then waited for that one forever. SIGTERM to ``ofc
    analyze --jobs 2`` while it graded hung the command so, every time it was tried
    (``tests/analysis/test_cli.py``). Ctrl-C reaches every process of the group; the parent
    takes it and stops its pool."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def forked_pool(processes: int, initializer: Callable[..., object] | None = None,
                initargs: tuple = ()) -> Iterator[Pool]:
    """A :class:`multiprocessing.pool.Pool` of ``processes`` workers for the block, forked from
    this process where the platform can fork (they start at once and share what it has
    imported and compiled), else started afresh. Each worker first takes
    :func:`plain_worker_signals`, then runs ``initializer(*initargs)``. When the block ends
    normally its work is done: the pool is closed and joined, and the workers leave by
    themselves, no signal sent; when it raises (an error, Ctrl-C, SIGTERM, a consumer that
    stopped early), the workers are stopped by SIGTERM, which always ends them."""
    import multiprocessing  # here: ``ofc score`` in one process never needs it

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with context.Pool(processes=processes, initializer=_start_pool_worker,
                      initargs=(initializer, initargs)) as pool:  # its end: terminate()
        yield pool
        pool.close()
        pool.join()


def _start_pool_worker(initializer: Callable[..., object] | None, initargs: tuple) -> None:
    plain_worker_signals()
    if initializer is not None:
        initializer(*initargs)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, as it was after it.

    Bulk parsing builds many small containers; collections triggered while they are alive scan
    them over and over and slow parsing down several times. Records are acyclic, so reference
    counting frees them meanwhile. Every bulk reader and parser (the format readers, ingest,
    ``ofc score``, watch, the lake's units) pauses it with this.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
