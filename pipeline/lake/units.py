"""One work unit through ingest's batch core: staged frames on disk, events for the engine.

:func:`prepare_unit` is the code both engines run for every unit: in-process for
``--engine local``, inside ``mapInArrow`` on Spark's executors for ``--engine spark``. It
reads the unit's records exactly as ``ofc ingest`` does (the format readers; for canonical JSON
Lines the columnar path, :func:`pipeline.ingest.batches.prepare_canonical`; for every other
format :class:`pipeline.ingest.batches.BatchBuilder`, which validates each record with
:func:`pipeline.records.validate.parse_hand`), scores each batch with the batch rules core and
turns it into the columns of every hand table (:func:`pipeline.ingest.columns.hand_tables`).
Nothing of the rules or the validation is rewritten here.

What comes out:

* the batch's tables, each with its hand's ``site``, ``month`` and ``_order`` (the record's
  place in the build: file, then line), appended to one Parquet file per table of the unit
  under ``frames/<table>/`` of the commit's staging folder;
* events, one Arrow table with a ``kind`` per row: ``hand`` (a valid record's identity: key,
  content hash, where it is; ``staged`` when its rows are in the frames, i.e. it was the first
  of its key in its batch), ``reject`` (a record that is quarantined, with its reason and raw
  text) and ``unit`` (records read, and why the reader gave up on the file, if it did).

Deduplication against the lake and across units happens afterwards, in the engine, by hand key.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.formats import FormatError, read_source
from pipeline.formats.base import clip_raw
from pipeline.formats.source import (
    RawLine,
    SourceLine,
    collector_paused,
    decode_line,
    read_raw_lines,
    read_stream_raw,
)
from pipeline.ingest.batches import (
    DEFAULT_BATCH_SIZE,
    BatchBuilder,
    PreparedBatch,
    Reject,
    prepare_canonical,
)
from pipeline.ingest.writer import stored_raw_and_key
from pipeline.lake.plan import WorkUnit
from pipeline.lake.tables import (
    HAND_TABLES,
    ORDER_COLUMN,
    months_of,
    partition_value,
    staged_schema,
)
from pipeline.records.rules_file import RulesResolver

__all__ = [
    "EVENT_SCHEMA",
    "FRAMES_FOLDER",
    "LINE_BITS",
    "prepare_unit",
    "record_texts",
    "record_order",
]

FRAMES_FOLDER = "frames"
"""Staging subfolder of the units' frames (one folder per hand table)."""

LINE_BITS = 32
"""A record's order is ``file_order << LINE_BITS | line``."""

MAX_PARTITION_NAME_BYTES = 200
"""Longest ``site=<escaped site>`` folder name (file systems allow 255 bytes per name)."""

EVENT_SCHEMA = pa.schema([
    ("kind", pa.string()),  # hand | reject | unit
    ("unit", pa.int32()),
    ("file_order", pa.int32()),
    ("hand_key", pa.int64()),
    ("content_hash", pa.string()),
    ("site", pa.string()),
    ("hand_id", pa.string()),
    ("path", pa.string()),
    ("line", pa.int32()),
    ("ord", pa.int64()),
    ("staged", pa.bool_()),
    ("reason", pa.string()),
    ("raw", pa.string()),
    ("reject_kind", pa.string()),
    ("reject_key", pa.string()),
    ("records", pa.int64()),
    ("failed", pa.string()),
    ("format", pa.string()),
])
"""What :func:`prepare_unit` reports to the engine (see the module docstring)."""


def record_order(file_order: int, line: int | None) -> int:
    """A record's place in a build: files in order, lines in order within a file."""
    return (file_order << LINE_BITS) | (line or 0)


class _BoundedReader(io.RawIOBase):
    """Bytes ``[start, end)`` of a file, as a stream."""

    def __init__(self, path: str, start: int, end: int) -> None:
        self._file = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._file.seek(start)
        self._left = end - start

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = min(len(buffer), self._left)
        if size <= 0:
            return 0
        count = self._file.readinto(memoryview(buffer)[:size])
        self._left -= count or 0
        return count or 0

    def close(self) -> None:
        self._file.close()
        super().close()


def _unit_lines(unit: WorkUnit) -> Iterator[RawLine | SourceLine]:
    """The unit's lines as ingest's canonical path reads them (raw, numbered in the file)."""
    if unit.start is None:
        yield from read_raw_lines(unit.path)
        return
    try:
        stream = io.BufferedReader(_BoundedReader(unit.path, unit.start, unit.end or 0))
    except OSError as error:
        raise FormatError(unit.path, f"cannot open: {error.strerror or error}") from error
    with stream:
        yield from read_stream_raw(stream, first_number=unit.lines_before + 1)


class _FrameWriters:
    """One Parquet file per hand table for a unit's staged frames."""

    def __init__(self, folder: Path, unit: int) -> None:
        self.folder = folder
        self.unit = unit
        self.writers: dict[str, pq.ParquetWriter] = {}

    def write(self, table: str, frame: pa.Table) -> None:
        writer = self.writers.get(table)
        if writer is None:
            target = self.folder / table
            target.mkdir(parents=True, exist_ok=True)
            writer = pq.ParquetWriter(target / f"unit-{self.unit:06d}.parquet",
                                      staged_schema(table))
            self.writers[table] = writer
        writer.write_table(frame)

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()


class _Events:
    """The unit's events, as columns."""

    def __init__(self, unit: WorkUnit) -> None:
        self.unit = unit
        self.columns: dict[str, list[Any]] = {name: [] for name in EVENT_SCHEMA.names}

    def add(self, **values: Any) -> None:
        values.setdefault("unit", self.unit.unit)
        values.setdefault("file_order", self.unit.file_order)
        for name, column in self.columns.items():
            column.append(values.get(name))

    def hands(self, hands: pa.Table, orders: pa.Array) -> None:
        count = hands.num_rows
        columns = self.columns
        columns["kind"] += ["hand"] * count
        columns["unit"] += [self.unit.unit] * count
        columns["file_order"] += [self.unit.file_order] * count
        columns["hand_key"] += hands.column("hand_key").to_pylist()
        columns["content_hash"] += hands.column("content_hash").to_pylist()
        columns["site"] += hands.column("site").to_pylist()
        columns["hand_id"] += hands.column("hand_id").to_pylist()
        columns["path"] += hands.column("source_path").to_pylist()
        columns["line"] += hands.column("source_line").to_pylist()
        columns["ord"] += orders.to_pylist()
        columns["staged"] += [True] * count
        for name in ("reason", "raw", "reject_kind", "reject_key", "records", "failed",
                     "format"):
            columns[name] += [None] * count

    def table(self) -> pa.Table:
        return pa.Table.from_pydict(self.columns, schema=EVENT_SCHEMA)


def _set_aside_long_sites(prepared: PreparedBatch,
                          frames: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """Hands whose site cannot name a partition folder (too long once escaped) become rejects
    with that reason; the frames without them. (The database has no such limit: this is the one
    record a lake refuses that ``ofc ingest`` would store.)"""
    hands = frames.get("hands")
    if hands is None or not hands.num_rows:
        return frames
    long = {site for site in set(hands.column("site").to_pylist())
            if len(f"site={partition_value(site)}".encode()) > MAX_PARTITION_NAME_BYTES}
    if not long:
        return frames

    def reason(site: str) -> str:
        size = len(f"site={partition_value(site)}".encode())
        return (f"site name too long for a lake: its partition folder would be {size} bytes "
                f"(at most {MAX_PARTITION_NAME_BYTES})")

    refused = hands.filter(pc.is_in(hands.column("site"), value_set=pa.array(sorted(long))))
    for path, line, hand_id, site in zip(*(refused.column(name).to_pylist() for name in (
            "source_path", "source_line", "hand_id", "site")), strict=True):
        prepared.rejects.append(Reject(path, line, hand_id, reason(site),
                                       prepared.raw_text(line), "invalid"))
    for candidate in [candidate for candidate in prepared.later if candidate.site in long]:
        prepared.rejects.append(Reject(candidate.path, candidate.line, candidate.hand_id,
                                       reason(candidate.site), prepared.raw_text(candidate.line),
                                       "invalid"))
    prepared.later = [candidate for candidate in prepared.later if candidate.site not in long]
    keys = refused.column("hand_key")
    return {name: frame.filter(pc.invert(pc.is_in(frame.column("hand_key"), value_set=keys)))
            for name, frame in frames.items()}


def _stage_batch(prepared: PreparedBatch, unit: WorkUnit, writers: _FrameWriters,
                 events: _Events) -> None:
    """A prepared batch's frames (with site, month and order) to the unit's files, its hands,
    later records of a key and rejects to the events."""
    frames = _set_aside_long_sites(prepared, prepared.tables())
    hands = frames.get("hands")
    if hands is not None and hands.num_rows:
        lines = hands.column("source_line").cast(pa.int64())
        orders = pc.add(pa.scalar(unit.file_order << LINE_BITS, pa.int64()), lines)
        sites = hands.column("site")
        months = months_of(hands.column("started_at"))
        keys = hands.column("hand_key")
        for table in HAND_TABLES:
            frame = frames[table]
            if table == "hands":
                where = None
            else:
                where = pc.index_in(frame.column("hand_key"), value_set=keys)
            extra = {
                "site": sites if where is None else sites.take(where),
                "month": months if where is None else months.take(where),
                ORDER_COLUMN: orders if where is None else orders.take(where),
            }
            schema = staged_schema(table)
            columns = [
                frame.column(name) if name in frame.schema.names
                else extra[name] if name in extra
                else pa.nulls(frame.num_rows, schema.field(name).type)  # seats.session_id
                for name in schema.names
            ]
            writers.write(table, pa.Table.from_arrays(columns, schema=schema))
        events.hands(hands, orders)
    for candidate in prepared.later:
        events.add(kind="hand", hand_key=candidate.key, content_hash=candidate.digest,
                   site=candidate.site, hand_id=candidate.hand_id, path=candidate.path,
                   line=candidate.line, ord=record_order(unit.file_order, candidate.line),
                   staged=False)
    for reject in prepared.rejects:
        raw, key = stored_raw_and_key(reject)
        events.add(kind="reject", hand_id=reject.hand_id, path=reject.path, line=reject.line,
                   ord=record_order(unit.file_order, reject.line), reason=reject.reason,
                   raw=raw, reject_kind=reject.kind, reject_key=key)
    prepared.frames = None


def _prepared_batches(unit: WorkUnit, records: Iterator[Any] | None, resolver: RulesResolver,
                      batch_size: int) -> Iterator[PreparedBatch]:
    """The unit's records in prepared batches, as ``ofc ingest`` reads the file: canonical
    JSON Lines through the columnar path, every other format through its reader (``records``)."""
    if records is not None and unit.format != "canonical":
        builder = BatchBuilder(resolver)
        try:
            for record in records:
                builder.add(record)
                if builder.records >= batch_size:
                    yield builder.finish()
                    builder = BatchBuilder(resolver)
                    gc.collect(0)
        except FormatError:
            # Records read before a reader gave up on the file still land.
            if builder.records:
                yield builder.finish()
            raise
        if builder.records:
            yield builder.finish()
        return
    batch: list[RawLine | SourceLine] = []
    error: FormatError | None = None
    try:
        for line in _unit_lines(unit):
            batch.append(line)
            if len(batch) >= batch_size:
                yield _canonical(unit, batch, resolver)
                batch = []
                gc.collect(0)
    except FormatError as raised:
        error = raised
    if batch:
        yield _canonical(unit, batch, resolver)
    if error is not None:
        raise error


def _canonical(unit: WorkUnit, lines: list[RawLine | SourceLine],
               resolver: RulesResolver) -> PreparedBatch:
    prepared = prepare_canonical(unit.path, lines, resolver)
    prepared.lines = lines
    return prepared


def prepare_unit(
    unit: WorkUnit, resolver: RulesResolver, staging: str | os.PathLike[str],
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> pa.Table:
    """Read, validate, score and stage one unit; returns its events (:data:`EVENT_SCHEMA`).

    Its frames go to ``staging/frames/<table>/unit-<n>.parquet``. Writing them again (a task
    retried by Spark) gives the same files. Python's cyclic garbage collector is paused while
    batches are built (see :meth:`pipeline.ingest.ingestor.Ingestor.run`)."""
    events = _Events(unit)
    writers = _FrameWriters(Path(staging) / FRAMES_FOLDER, unit.unit)
    records = 0
    failed: str | None = None
    format = unit.format
    with collector_paused():
        try:
            source: Iterator[Any] | None = None
            if unit.start is None:
                # As ingest: the reader first (a file in no known format fails here, with its
                # reason, before any format is recorded for it).
                try:
                    source = read_source(unit.path, format=unit.forced_format, game=unit.game)
                except FormatError as error:
                    failed, format = error.reason, None
            if failed is None:
                batches = _prepared_batches(unit, source, resolver, max(1, batch_size))
                while True:
                    try:
                        prepared = next(batches)
                    except StopIteration:
                        break
                    except FormatError as error:
                        failed = error.reason
                        break
                    records += prepared.records
                    _stage_batch(prepared, unit, writers, events)
        finally:
            writers.close()
    events.add(kind="unit", records=records, failed=failed, format=format)
    return events.table()


def record_texts(path: str, format: str | None, forced_format: str | None, game: str | None,
                 lines: set[int]) -> dict[int, str]:
    """The original text of the records starting at ``lines`` of a file, as ingest keeps it for
    a conflict (read again: a conflict is found after the unit that read the record is done)."""
    found: dict[int, str] = {}
    with contextlib.suppress(FormatError):
        if format == "canonical":
            for item in read_raw_lines(path):
                number = item[0]
                if number in lines:
                    found[number] = (clip_raw(decode_line(item).raw) if type(item) is tuple
                                     else item.raw)
        else:
            for record in read_source(path, format=forced_format, game=game):
                if record.line in lines:
                    found[record.line] = record.raw
    return found
