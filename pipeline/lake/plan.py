"""What a build reads: each file scanned once (hash, format, where it can be split), then cut
into work units, and the files grouped into commits.

A work unit is what one Spark partition (or one step of the local engine) reads: a whole file,
or, for a plain canonical JSON Lines file larger than ``split_bytes``, a range of its lines. The
scan finds the split points while it hashes the file (the first newline after every
``split_bytes``) and counts the lines before each, so a unit numbers its lines as the whole
file would (rejects and ``hands.source_line`` name the file's real line numbers). Gzip files and
the other formats (a poker-arena hand spans lines, a CSV has a header) are read whole.

Pure reading of files: no database, no Spark.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.formats import FormatError, detect_format
from pipeline.formats.source import BINARY_PROBE_BYTES, GZIP_MAGIC, READ_BLOCK_BYTES

__all__ = [
    "DEFAULT_COMMIT_BYTES",
    "DEFAULT_SPLIT_BYTES",
    "FileScan",
    "WorkUnit",
    "commit_groups",
    "scan_file",
    "work_units",
]

DEFAULT_SPLIT_BYTES = 64 << 20
"""Plain canonical files are read in parts of about this size (one Spark partition each)."""

DEFAULT_COMMIT_BYTES = 1 << 30
"""Files are committed in groups of about this many bytes (a killed build loses at most one)."""


@dataclass(frozen=True, slots=True)
class FileScan:
    """One file of a build, scanned: its bytes' hash, its format and its split points.

    ``format`` is the forced or detected format (None when it cannot be told: the unit reading
    the file then gives the reader's own reason). ``error`` is set when the file cannot be read
    at all. ``splits`` are (start byte, end byte, lines before start) for a file read in parts;
    empty for a file read whole."""

    order: int
    path: str
    size: int | None = None
    content_hash: str | None = None
    format: str | None = None
    error: str | None = None
    splits: tuple[tuple[int, int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class WorkUnit:
    """What one partition reads: a whole file (``start`` None) or lines ``lines_before + 1``
    onwards of the bytes ``[start, end)``. ``forced_format`` is the build's ``--format`` (the
    reader detects it otherwise), ``format`` what the scan found."""

    unit: int
    file_order: int
    path: str
    format: str | None
    forced_format: str | None
    game: str | None
    start: int | None = None
    end: int | None = None
    lines_before: int = 0


def scan_file(
    order: int, path: str, forced_format: str | None = None, split_bytes: int = DEFAULT_SPLIT_BYTES
) -> FileScan:
    """Hash a file (SHA-256 of its bytes, as ingest does), tell its format and, for a plain
    canonical file, find where it can be split (about every ``split_bytes``)."""
    try:
        with open(path, "rb") as stream:
            hasher = hashlib.sha256()
            head = stream.read(BINARY_PROBE_BYTES)
            plain = head[:2] != GZIP_MAGIC and b"\0" not in head
            blocks = _blocks(stream, head)
            points = _split_points(blocks, hasher, split_bytes if plain else 0)
            size = stream.tell()
    except OSError as error:
        return FileScan(order, path, error=f"cannot read: {error.strerror or error}")
    format = forced_format
    if format is None:
        try:
            format = detect_format(path)
        except FormatError:
            format = None
    splits: tuple[tuple[int, int, int], ...] = ()
    if format == "canonical" and plain and points:
        starts = [(0, 0), *points]
        ends = [point for point, _ in points] + [size]
        splits = tuple((start, end, lines) for (start, lines), end in zip(starts, ends, strict=True)
                       if end > start)
    return FileScan(order, path, size, hasher.hexdigest(), format, None, splits)


def _blocks(stream, head: bytes) -> Iterator[bytes]:  # noqa: ANN001 - a binary file
    if head:
        yield head
    while True:
        block = stream.read(READ_BLOCK_BYTES)
        if not block:
            return
        yield block


def _split_points(
    blocks: Iterator[bytes], hasher: Any, split_bytes: int
) -> list[tuple[int, int]]:
    """Hash every block; with ``split_bytes``, return (byte after the first newline at or past
    each multiple of it, newlines before that byte)."""
    points: list[tuple[int, int]] = []
    offset = 0  # bytes before the current block
    newlines = 0  # newlines before the current block
    target = split_bytes
    for block in blocks:
        hasher.update(block)
        if split_bytes:
            searched = 0
            while target < offset + len(block):
                found = block.find(b"\n", max(target - offset, searched))
                if found < 0:
                    break
                point = offset + found + 1
                points.append((point, newlines + block.count(b"\n", 0, found + 1)))
                searched = found + 1
                target = max(target + split_bytes, point)
            newlines += block.count(b"\n")
        offset += len(block)
    # A point at the very end leaves no bytes after it.
    return [(point, lines) for point, lines in points if point < offset]


def work_units(scans: Sequence[FileScan], game: str | None, forced_format: str | None,
               first_unit: int = 0) -> list[WorkUnit]:
    """The units reading ``scans`` (files that failed the scan have none), numbered from
    ``first_unit``."""
    units: list[WorkUnit] = []
    for scan in scans:
        if scan.error is not None:
            continue
        if scan.splits:
            for start, end, lines_before in scan.splits:
                units.append(WorkUnit(first_unit + len(units), scan.order, scan.path, scan.format,
                                      forced_format, game, start, end, lines_before))
        else:
            units.append(WorkUnit(first_unit + len(units), scan.order, scan.path, scan.format,
                                  forced_format, game))
    return units


def commit_groups(scans: Sequence[FileScan], commit_bytes: int) -> list[list[FileScan]]:
    """The files in order, grouped into commits of about ``commit_bytes`` (at least one file
    each)."""
    groups: list[list[FileScan]] = []
    current: list[FileScan] = []
    size = 0
    for scan in scans:
        if current and size + (scan.size or 0) > commit_bytes:
            groups.append(current)
            current, size = [], 0
        current.append(scan)
        size += scan.size or 0
    if current:
        groups.append(current)
    return groups
