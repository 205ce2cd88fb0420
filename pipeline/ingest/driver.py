"""Ingestion: hand-history files (or mappings) into the DuckDB database, re-scored and audited.

The one way hand data gets into the database (schemas/database.md). A file is streamed through
its format reader (:func:`pipeline.formats.read_source`) in batches of ``batch_size`` records;
each batch is validated (:func:`pipeline.records.validate.parse_hand`), re-scored in one go as columns
by the batch rules core (the verdicts :func:`pipeline.ingest.evaluate.score_records` gives), turned into
columns (Arrow) and written in **one transaction** covering every table, rejects included. The write connection is opened per batch
and closed right after, so the dashboard's short read-only connections get in between batches.
Large canonical JSON Lines files are parsed, validated and scored by worker processes while this
process reads lines and writes batches in order; the database is the same as a sequential run's.

Identity and idempotence:

* a hand is keyed by ``hand_key(site, hand_id)``; its ``content_hash`` covers everything the
  validated record says. The same key with the same hash is a duplicate (counted, stored once);
  the same key with another hash is a conflict, rejected with both sources named;
* rejects are keyed by (path, line, reason, raw text), so reading a file again never doubles them;
* a file whose bytes were already ingested completely is skipped ("unchanged");
* killing the process mid-ingest and running again gives exactly the database an uninterrupted
  run gives: committed batches come back as duplicates, the rest is stored.

:func:`rescore` recomputes evaluations, matchups and results under another rule set from the
stored boards, as columns with the batch rules core, without reading any file.
"""

from __future__ import annotations

import contextlib
import gc
import glob
import hashlib
import json
import multiprocessing
import os
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import store
from pipeline.formats import FormatError, SourceRecord, read_source
from pipeline.formats import canonical as canonical_reader
from pipeline.formats.base import clip_raw
from pipeline.formats.source import RawLine, SourceLine, decode_line, read_raw_lines
from pipeline.ingest.columns import (
    FRAME_ORDER,
    RANK_OF_BYTE,
    SUIT_OF_BYTE,
    TABLE_SCHEMAS,
    HandColumns,
    concat_columns,
    content_hash,
    hand_tables,
    scoring_columns,
    verdict_tables,
)
from pipeline.ingest.columns import from_records as columns_from_records
from pipeline.ingest.fast_canonical import parse_canonical_batch
from pipeline.ingest.sessions import (
    DEFAULT_SESSION_GAP_MINUTES,
    SESSION_GAP_META_KEY,
    update_session_points,
    update_sessions,
)
from pipeline.records.record import HandRecord
from pipeline.records.rules_file import RulesResolver
from pipeline.records.validate import InvalidHand, parse_hand
from pipeline.rules.cards import parse_cards
from pipeline.rules.game import VARIANTS_BY_NAME
from pipeline.rules.ruleset import RulesError, RuleSet

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "BatchReport",
    "DatabaseError",
    "FileSummary",
    "IngestError",
    "IngestSummary",
    "RescoreSummary",
    "content_hash",
    "delete_hand",
    "expand_paths",
    "ingest_mappings",
    "ingest_paths",
    "rescore",
]

DEFAULT_BATCH_SIZE = 20_000
"""Records per batch (one transaction each)."""

FIRST_REASONS = 5
"""How many reject reasons a summary keeps per file."""

FOLDER_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".log", ".txt")
"""File name endings (optionally followed by .gz) read when a folder is given."""

PARALLEL_MIN_BYTES = 64 << 20
"""Canonical files this large (about 30,000 hands) are parsed by worker processes."""

WRITE_WAIT_SECONDS = 120.0
"""How long a batch waits for another process (a reader) to let go of the database."""

WORKER_NICENESS = 5
"""How much lower the worker processes' CPU priority is than the writer's."""

HOLD_SECONDS = 1.5
"""How long the writer keeps the database between batches before letting readers in."""

WRITER_MEMORY_LIMIT = "600MB"
"""DuckDB's memory limit for the writer (its default, 80 % of the machine, lets its buffer cache
grow past what an ingest needs)."""

CHECKPOINT_THRESHOLD = "2GB"
"""Write-ahead log size that forces a checkpoint while the writer holds the database (so in
practice it checkpoints when it lets go)."""

EMPTY_FILE_REASON = "empty file: no hand history in it"


class IngestError(Exception):
    """A fatal problem: nothing can be ingested (no such path, unusable database)."""


class DatabaseError(IngestError):
    """The database cannot be opened or written."""


@dataclass(slots=True)
class FileSummary:
    """What happened to one source (a file, or a named stream of mappings)."""

    path: str
    format: str | None = None
    status: str = "complete"  # complete | unchanged | empty | failed
    records: int = 0
    stored: int = 0
    duplicates: int = 0
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)
    message: str | None = None
    content_hash: str | None = None

    def note_reject(self, line: int | None, reason: str) -> None:
        """Count a rejected record, keeping the first few reasons."""
        self.rejected += 1
        if len(self.reasons) < FIRST_REASONS:
            self.reasons.append(f"line {line}: {reason}" if line else reason)


@dataclass(slots=True)
class IngestSummary:
    """Per-source summaries of one ingest run, with totals."""

    database: str
    files: list[FileSummary] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def records(self) -> int:
        """Records read from every source."""
        return sum(summary.records for summary in self.files)

    @property
    def stored(self) -> int:
        """New hands stored."""
        return sum(summary.stored for summary in self.files)

    @property
    def duplicates(self) -> int:
        """Hands already in the database (same content)."""
        return sum(summary.duplicates for summary in self.files)

    @property
    def rejected(self) -> int:
        """Records rejected into the rejects table."""
        return sum(summary.rejected for summary in self.files)

    @property
    def first_reasons(self) -> list[str]:
        """The first few reject reasons over all sources, each prefixed with its file."""
        reasons = [
            f"{Path(summary.path).name}: {reason}"
            for summary in self.files
            for reason in summary.reasons
        ]
        return reasons[:FIRST_REASONS]

    @property
    def nothing_new(self) -> bool:
        """True when the run stored no new hand."""
        return self.stored == 0

    @property
    def hands_per_second(self) -> float:
        """Records processed per second of wall time."""
        return self.records / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True, slots=True)
class BatchReport:
    """Passed to ``on_batch`` after each committed batch."""

    path: str
    batch: int
    records: int
    stored: int
    duplicates: int
    rejected: int


@dataclass(frozen=True, slots=True)
class RescoreSummary:
    """What a re-score did."""

    rules: str
    hands: int
    players: int
    disagreements: int
    seconds: float


# --- content identity ------------------------------------------------------------------------


def _reject_key(path: str, line: int | None, reason: str, raw: str) -> str:
    text = f"{path}\x1f{line}\x1f{reason}\x1f{raw}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _file_hash(path: Path) -> str:
    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


# --- paths -------------------------------------------------------------------------------------


def _is_hand_file(path: Path) -> bool:
    name = path.name.lower()
    if name.startswith("."):
        return False
    for suffix in (".gz", ".gzip"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name.endswith(FOLDER_SUFFIXES)


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files to read: files as given, folders recursively (hand-history file names only,
    see :data:`FOLDER_SUFFIXES`), globs expanded; each file once, absolute, in order.

    Raises :class:`IngestError` for a path that does not exist or a glob that matches nothing.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    found: list[Path] = []
    for item in paths:
        text = os.fspath(item)
        path = Path(text).expanduser()
        if path.is_dir():
            found.extend(
                sorted(
                    candidate
                    for candidate in path.rglob("*")
                    if candidate.is_file()
                    and _is_hand_file(candidate)
                    and not any(part.startswith(".") for part in candidate.relative_to(path).parts)
                )
            )
        elif path.is_file():
            found.append(path)
        elif glob.has_magic(text):
            matches = sorted(Path(match) for match in glob.glob(text, recursive=True))
            files = [match for match in matches if match.is_file()]
            for match in matches:
                if match.is_dir():
                    files.extend(expand_paths([match]))
            if not files:
                raise IngestError(f"no files match {text}")
            found.extend(files)
        elif path.exists():
            raise IngestError(f"not a regular file or folder: {text}")
        else:
            raise IngestError(f"no such file or folder: {text}")
    unique: dict[Path, None] = {}
    for path in found:
        unique.setdefault(path.resolve(), None)
    return list(unique)


def _rows_table(name: str, rows: list[tuple]) -> pa.Table:
    """Row tuples (in the table's column order) as an Arrow table: transposed in one go."""
    schema = TABLE_SCHEMAS[name]
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    return pa.Table.from_arrays(
        [pa.array(values, type=field.type) for values, field in zip(columns, schema, strict=True)],
        schema=schema,
    )



# --- the ingest engine --------------------------------------------------------------------------


@dataclass(slots=True)
class _Reject:
    path: str
    line: int | None
    hand_id: str | None
    reason: str
    raw: str
    kind: str
    conflict_with: str | None = None


@dataclass(slots=True)
class _Candidate:
    """A valid record of a batch: its identity and where it came from. ``raw`` is None for a
    record of the columnar canonical path: the process that read the line has its text."""

    key: int
    digest: str
    site: str
    hand_id: str
    path: str
    line: int
    raw: str | None

    def __reduce__(self) -> tuple[type, tuple]:
        # Workers send a batch's candidates back pickled: as constructor arguments this takes
        # about half the CPU of the slotted dataclass's __getstate__/__setstate__ pair.
        return (_Candidate, (self.key, self.digest, self.site, self.hand_id, self.path,
                             self.line, self.raw))


@dataclass(slots=True)
class _Prepared:
    """A batch validated, scored and turned into columns, ready to be written.

    Its hands are the rows of ``frames["hands"]`` (the first record of each key in the batch);
    a worker process leaves the frames in Arrow files under ``spill`` instead, which the writer
    maps into memory without copying them (sending them through a pipe cost the writer more
    CPU than inserting them)."""

    records: int
    rejects: list[_Reject]
    later: list[_Candidate]  # records of a key seen earlier in the batch
    frames: dict[str, pa.Table] | None  # rows of every hand, for every hand table
    raws: dict[int, str]  # line → original text, for records that did not come as lines
    spill: str | None = None  # path prefix of the frames' Arrow files
    lines: list[RawLine | SourceLine] | None = None  # the batch's lines, set by the reader

    def tables(self) -> dict[str, pa.Table]:
        """The frames, mapped from their files when a worker left them there."""
        if self.frames is None and self.spill is not None:
            self.frames = {
                name: pa.ipc.open_file(pa.memory_map(f"{self.spill}-{name}.arrow")).read_all()
                for name in FRAME_ORDER
            }
        return self.frames or {}

    def discard_spill(self) -> None:
        """Delete the frames' files (the tables mapped from them stay readable until dropped)."""
        if self.spill is not None:
            for name in FRAME_ORDER:
                with contextlib.suppress(OSError):
                    os.unlink(f"{self.spill}-{name}.arrow")

    def raw_text(self, line: int) -> str:
        """The original text of the record at ``line``."""
        if line not in self.raws and self.lines:
            # First call for lines read as bytes: index the batch's texts once (a re-ingest of
            # edited hands asks for every line of the batch).
            for item in self.lines:
                number = item[0]
                if number not in self.raws:
                    self.raws[number] = (
                        clip_raw(decode_line(item).raw) if type(item) is tuple else item.raw
                    )
            self.lines = None
        return self.raws.get(line, "")


def _spill_frames(prepared: _Prepared, prefix: str) -> _Prepared:
    """Write the frames to Arrow files at ``prefix`` (worker side) and drop them."""
    for name, frame in (prepared.frames or {}).items():
        with pa.OSFile(f"{prefix}-{name}.arrow", "wb") as sink, pa.ipc.new_file(
            sink, frame.schema
        ) as writer:
            writer.write_table(frame)
    prepared.frames = None
    prepared.spill = prefix
    return prepared


class _BatchBuilder:
    """Validates records one at a time (keeping only the compact HandRecord), then scores the
    batch in one go and builds its columns."""

    def __init__(self, resolver: RulesResolver) -> None:
        self.resolver = resolver
        self.records = 0
        self.rejects: list[_Reject] = []
        self.candidates: list[_Candidate] = []
        self.hands: list[HandRecord] = []

    def add(self, source: SourceRecord) -> None:
        """Validate one record: a reject or a candidate."""
        self.records += 1
        if source.record is None:
            self.rejects.append(_Reject(source.path, source.line, source.hand_id,
                                        source.error or "unreadable record", source.raw, "read"))
            return
        try:
            hand = parse_hand(source.record)
        except InvalidHand as error:
            self.rejects.append(_Reject(source.path, source.line, error.hand_id or source.hand_id,
                                        error.reason, source.raw, "invalid"))
            return
        try:
            self.resolver(hand.rules)
        except RulesError as error:
            self.rejects.append(_Reject(source.path, source.line, hand.hand_id, str(error),
                                        source.raw, "rules"))
            return
        self.candidates.append(_Candidate(
            store.hand_key(hand.site, hand.hand_id), content_hash(hand), hand.site, hand.hand_id,
            source.path, source.line, source.raw,
        ))
        self.hands.append(hand)

    def finish(
        self, fast: HandColumns | None = None, fast_candidates: Sequence[_Candidate] = ()
    ) -> _Prepared:
        """Score the batch's hands together and build the columns of every table.

        ``fast`` holds hands the columnar canonical path validated (``fast_candidates`` their
        identities); they join the records added here. Of the records of one key, the first
        in line order is the batch's candidate; the others are compared with it when written.
        """
        candidates = self.candidates
        columns = columns_from_records(
            [candidate.key for candidate in candidates],
            [candidate.digest for candidate in candidates], self.hands,
            [candidate.path for candidate in candidates],
            [candidate.line for candidate in candidates],
        )
        if fast is not None and fast.hand_count:
            columns = concat_columns([fast, columns])
            candidates = [*fast_candidates, *candidates]
        keep = np.ones(len(candidates), bool)
        later: list[_Candidate] = []
        seen: set[int] = set()
        for index in sorted(range(len(candidates)), key=lambda index: candidates[index].line):
            candidate = candidates[index]
            if candidate.key in seen:
                keep[index] = False
                later.append(candidate)
            else:
                seen.add(candidate.key)
        if later:
            columns = columns.select(keep)
        raws = {candidate.line: candidate.raw for candidate in self.candidates
                if candidate.raw is not None}
        return _Prepared(self.records, self.rejects, later, hand_tables(columns, self.resolver),
                         raws)


def _prepare_canonical(
    file_name: str, lines: list[RawLine | SourceLine], resolver: RulesResolver, fast: bool = True,
    spill: str | None = None,
) -> _Prepared:
    """Parse, validate, score and build the columns of a batch of canonical JSON Lines lines
    (in a worker process, or in this one for a small file).

    Plainly valid records take the columnar path (:mod:`pipeline.ingest.fast_canonical`); every other
    line goes through the canonical reader and :func:`pipeline.records.validate.parse_hand`, exactly as
    a record of any other format would, so its reason is the precise one. ``fast=False`` sends
    every line that way (tests compare the two). ``resolver`` resolves the records' rules. With
    ``spill`` (a path prefix) the frames are left in Arrow files there (see :class:`_Prepared`).
    """
    builder = _BatchBuilder(resolver)
    raw_positions = [position for position, item in enumerate(lines) if type(item) is tuple]
    columns: HandColumns | None = None
    fast_candidates: list[_Candidate] = []
    slow_positions: list[int]
    if fast and raw_positions:
        columns, accepted, rest = parse_canonical_batch(
            [(lines[position][0], lines[position][1]) for position in raw_positions], file_name
        )
        rejected_rules = _unusable_rules(columns.rules, resolver)
        if rejected_rules:
            usable = np.asarray([name not in rejected_rules for name in columns.rules], bool)
            rest = rest + accepted[~usable].tolist()
            columns = columns.select(usable)
        fast_candidates = [
            _Candidate(key, digest, site, hand_id, file_name, line, None)
            for key, digest, site, hand_id, line in zip(
                columns.keys.tolist(), columns.digests, columns.sites, columns.hand_ids,
                columns.lines, strict=True)
        ]
        builder.records += len(fast_candidates)
        slow_positions = sorted(
            [raw_positions[index] for index in rest]
            + [position for position, item in enumerate(lines) if type(item) is not tuple]
        )
    else:
        slow_positions = list(range(len(lines)))
    parse_line = canonical_reader.parse_canonical_line
    for position in slow_positions:
        item = lines[position]
        line = decode_line(item) if type(item) is tuple else item
        if line.text is not None and not line.text.strip():
            continue  # blank lines are not records
        builder.add(parse_line(file_name, line))
    prepared = builder.finish(columns, fast_candidates)
    return prepared if spill is None else _spill_frames(prepared, spill)


def _unusable_rules(names: Sequence[str], resolver: RulesResolver) -> set[str]:
    """The rules names among ``names`` the resolver cannot resolve."""
    unusable = set()
    for name in set(names):
        try:
            resolver(name)
        except RulesError:
            unusable.add(name)
    return unusable


def _worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes, started now (forked from a server that has imported
    this module, so each starts in milliseconds)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["pipeline.ingest.driver"])
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_start)
    for _ in range(workers):
        pool.submit(_worker_ready)
    return pool


def _worker_ready() -> None:
    """Nothing: submitted once per worker so the processes start at once."""


def _worker_start() -> None:
    """Worker processes: no cyclic garbage collection (see _Ingestor.run), and a lower CPU
    priority than the writer, which is the one serial step: when the cores are busy it should
    not wait for them."""
    gc.disable()
    with contextlib.suppress(OSError, AttributeError):  # os.nice is Unix only
        os.nice(WORKER_NICENESS)


class _Writer:
    """Writes batches: one transaction each, on a write connection held for at most
    :data:`HOLD_SECONDS` at a time and then closed, so the dashboard's short read-only
    connections get in between batches. While it is held, committed batches wait in DuckDB's
    write-ahead log and are checkpointed together when it closes (one checkpoint per batch
    costs about 40 % more)."""

    def __init__(
        self, database: str | os.PathLike[str], hold_seconds: float = HOLD_SECONDS
    ) -> None:
        self.database = Path(database)
        self.hold_seconds = hold_seconds
        self._connection: duckdb.DuckDBPyConnection | None = None
        self._opened = 0.0

    def connect(self) -> duckdb.DuckDBPyConnection:
        """Open a new connection for writing (waiting for readers), or raise DatabaseError."""
        try:
            return store.connect(self.database, wait_seconds=WRITE_WAIT_SECONDS)
        except duckdb.Error as error:
            raise DatabaseError(f"cannot use database {self.database}: {error}") from error
        except OSError as error:
            raise DatabaseError(
                f"cannot use database {self.database}: {error.strerror or error}"
            ) from error

    @contextlib.contextmanager
    def transaction(self, release: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """One transaction on the held connection (opened when needed): committed when the
        block ends, rolled back (and the connection closed) when it raises. The connection is
        closed after the commit once held ``hold_seconds``, or at once with ``release``."""
        if self._connection is None:
            connection = self.connect()
            try:
                connection.execute(f"SET checkpoint_threshold = '{CHECKPOINT_THRESHOLD}'")
                connection.execute(f"SET memory_limit = '{WRITER_MEMORY_LIMIT}'")
            except BaseException:
                connection.close()
                raise
            self._connection = connection
            self._opened = time.monotonic()
        connection = self._connection
        try:
            connection.execute("BEGIN TRANSACTION")
            yield connection
            connection.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                connection.execute("ROLLBACK")
            self.close()
            raise
        if release or time.monotonic() - self._opened >= self.hold_seconds:
            self.close()

    def close(self) -> None:
        """Close the held connection (checkpointing what it wrote), if any."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()


class _Ingestor:
    """Streams records of one source through validation, scoring and batched writes.

    ``resolver`` resolves every record's rules (built once per ingest run by the caller, and
    sent along to the worker processes)."""

    def __init__(
        self,
        writer: _Writer,
        resolver: RulesResolver,
        batch_size: int,
        on_batch: Callable[[BatchReport], None] | None,
        on_records: Callable[[int], None] | None,
    ) -> None:
        self.writer = writer
        self.resolver = resolver
        self.batch_size = max(1, batch_size)
        self.on_batch = on_batch
        self.on_records = on_records
        self.tables_touched: set[tuple[str, str | None]] = set()
        self.batches = 0
        self.read_error: FormatError | None = None

    def run(self, records: Iterator[SourceRecord], summary: FileSummary) -> None:
        """Read every record, writing batch by batch. FormatError propagates to the caller.

        Python's cyclic garbage collector is paused for the whole run: a batch holds millions
        of small containers, and collections triggered while they are alive would scan them
        all, over and over (bulk parsing runs several times slower). Records are acyclic, so
        reference counting frees them; a young-generation collection after each batch picks
        up anything else.
        """
        with _collector_paused():
            builder = _BatchBuilder(self.resolver)
            pending_progress = 0
            try:
                for record in records:
                    builder.add(record)
                    pending_progress += 1
                    if pending_progress >= 1000 and self.on_records is not None:
                        self.on_records(pending_progress)
                        pending_progress = 0
                    if builder.records >= self.batch_size:
                        self._write(builder.finish(), summary)
                        builder = _BatchBuilder(self.resolver)
                        gc.collect(0)
            except FormatError:
                # Records read before a reader gave up on the file still land.
                if builder.records:
                    self._write(builder.finish(), summary)
                raise
            if builder.records:
                self._write(builder.finish(), summary)
            if pending_progress and self.on_records is not None:
                self.on_records(pending_progress)

    def run_canonical(
        self, path: Path, summary: FileSummary, workers: int,
        pool: ProcessPoolExecutor | None = None,
    ) -> None:
        """Canonical JSON Lines, batch by batch: this process reads lines (as bytes) and writes
        batches in order; :func:`_prepare_canonical` parses, validates, scores and builds the
        columns, in ``workers`` worker processes when there are 2 or more (at most
        ``workers + 1`` batches in flight), else here. The database is the same either way."""
        file_name = str(path)
        self.read_error = None
        with _collector_paused():
            if pool is None or workers <= 1:
                batches = self._line_batches(read_raw_lines(path))
                for batch in batches:
                    prepared = _prepare_canonical(file_name, batch, self.resolver)
                    prepared.lines = batch
                    self._write_counted(prepared, summary)
                    gc.collect(0)
            else:
                batches = self._line_batches(read_raw_lines(path), ramp=True)
                self._run_pool(pool, file_name, batches, summary, workers)
        if self.read_error is not None:
            raise self.read_error

    def _run_pool(
        self, pool: ProcessPoolExecutor, file_name: str,
        batches: Iterator[list[RawLine | SourceLine]], summary: FileSummary, workers: int,
    ) -> None:
        """The batches prepared by the pool's worker processes, written here in order."""
        with tempfile.TemporaryDirectory(prefix="ofc-ingest-") as spill_folder:
            pending: deque[tuple[Future[_Prepared], list]] = deque()
            for number, batch in enumerate(batches):
                spill = os.path.join(spill_folder, f"batch{number}")
                pending.append((pool.submit(_prepare_canonical, file_name, batch, self.resolver,
                                            True, spill), batch))
                while len(pending) > workers:
                    self._write_pending(pending.popleft(), summary)
            while pending:
                self._write_pending(pending.popleft(), summary)

    def _line_batches(
        self, lines: Iterator[RawLine | SourceLine], ramp: bool = False
    ) -> Iterator[list[RawLine | SourceLine]]:
        """Lines in batches of ``batch_size``; with ``ramp`` the first three are an eighth, a
        quarter and a half of that, so the writer starts sooner. A FormatError (a reader giving
        up on the file) ends the batches after the lines read so far; run_canonical raises it
        once they are written."""
        sizes = [max(1, self.batch_size // part) for part in ((8, 4, 2) if ramp else ())]
        size = sizes.pop(0) if sizes else self.batch_size
        batch: list[RawLine | SourceLine] = []
        try:
            for line in lines:
                batch.append(line)
                if len(batch) >= size:
                    yield batch
                    batch = []
                    size = sizes.pop(0) if sizes else self.batch_size
        except FormatError as error:
            self.read_error = error
        if batch:
            yield batch

    def _write_pending(
        self, pending: tuple[Future[_Prepared], list[RawLine | SourceLine]], summary: FileSummary
    ) -> None:
        future, batch = pending
        prepared = future.result()
        prepared.lines = batch
        self._write_counted(prepared, summary)

    def _write_counted(self, prepared: _Prepared, summary: FileSummary) -> None:
        self._write(prepared, summary)
        if self.on_records is not None:
            self.on_records(prepared.records)

    def _write(self, prepared: _Prepared, summary: FileSummary) -> None:
        """One transaction: classify against stored hands, insert new ones and the rejects."""
        before = (summary.stored, summary.duplicates, summary.rejected)
        rejects = prepared.rejects
        frames = prepared.tables()
        hands = frames.get("hands")
        batch_hands = 0 if hands is None else hands.num_rows
        with self.writer.transaction() as connection:
            # Stored hands with a key of this batch: duplicates, or conflicts.
            stored: dict[int, tuple[str, str, int]] = {}
            duplicates = 0
            if batch_hands:
                connection.register("_batch_hands", hands)
                matches = connection.execute(
                    "SELECT b.hand_key, b.content_hash, b.site, b.hand_id, b.source_path, "
                    "b.source_line, h.content_hash, h.source_path, h.source_line "
                    "FROM _batch_hands b JOIN hands h ON h.hand_key = b.hand_key"
                ).fetchall()
                self.tables_touched.update(connection.execute(
                    "SELECT DISTINCT site, table_name FROM _batch_hands"
                ).fetchall())
                connection.unregister("_batch_hands")
                for key, digest, site, hand_id, path, line, *reference in matches:
                    stored[key] = (reference[0], reference[1], reference[2])
                    candidate = _Candidate(key, digest, site, hand_id, path, line, None)
                    duplicates += self._compare(candidate, stored[key], rejects, prepared)
            if prepared.later:
                # A later record of a key is compared with what is stored, else with the
                # batch's first record of the key.
                firsts = _first_records(hands, {candidate.key for candidate in prepared.later})
                for candidate in prepared.later:
                    reference = stored.get(candidate.key) or firsts[candidate.key]
                    duplicates += self._compare(candidate, reference, rejects, prepared)
            new_hands = batch_hands - len(stored)
            if new_hands and not stored:  # all new: nothing to filter
                for name, frame in frames.items():
                    store.insert_frame(connection, name, frame)
            elif new_hands:
                keys = hands.column("hand_key")
                new_keys = pc.filter(keys, pc.invert(pc.is_in(
                    keys, value_set=pa.array(list(stored), pa.int64()))))
                connection.register("_new_keys", pa.table({"hand_key": new_keys}))
                for name, frame in frames.items():
                    store.insert_frame(connection, name, frame, only_keys="_new_keys")
                connection.unregister("_new_keys")
            _insert_rejects(connection, rejects)
        prepared.frames = None
        prepared.discard_spill()
        summary.records += prepared.records
        summary.stored += new_hands
        summary.duplicates += duplicates
        # In line order, so a file's first reasons do not depend on where batches split it.
        for reject in sorted(rejects, key=lambda reject: reject.line or 0):
            summary.note_reject(reject.line, reject.reason)
        self.batches += 1
        if self.on_batch is not None:
            self.on_batch(BatchReport(
                summary.path, self.batches, prepared.records, summary.stored - before[0],
                summary.duplicates - before[1], summary.rejected - before[2],
            ))

    @staticmethod
    def _compare(
        candidate: _Candidate, reference: tuple[str, str, int], rejects: list[_Reject],
        prepared: _Prepared,
    ) -> int:
        """1 when the candidate duplicates the reference; else add a conflict reject, 0."""
        digest, path, line = reference
        if digest == candidate.digest:
            return 1
        where = f"{path}:{line}"
        rejects.append(_Reject(
            candidate.path, candidate.line, candidate.hand_id,
            f"conflict: hand {candidate.hand_id!r} of site {candidate.site!r} is already stored "
            f"from {where} with different content (this record: "
            f"{candidate.path}:{candidate.line})",
            prepared.raw_text(candidate.line), "conflict", where,
        ))
        return 0


def _first_records(hands: pa.Table, keys: set[int]) -> dict[int, tuple[str, str, int]]:
    """(content hash, path, line) of the batch's hands with one of ``keys``."""
    selected = hands.filter(pc.is_in(hands.column("hand_key"),
                                     value_set=pa.array(list(keys), pa.int64())))
    return {
        key: (digest, path, line)
        for key, digest, path, line in zip(
            selected.column("hand_key").to_pylist(), selected.column("content_hash").to_pylist(),
            selected.column("source_path").to_pylist(), selected.column("source_line").to_pylist(),
            strict=True)
    }


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _insert_rejects(connection: duckdb.DuckDBPyConnection, rejects: Sequence[_Reject]) -> None:
    """Insert rejects that are not stored yet (keyed by path, line, reason and raw text)."""
    if not rejects:
        return
    rows: list[tuple] = []
    now = datetime.now(UTC).replace(tzinfo=None)
    seen: set[str] = set()
    for reject in rejects:
        raw = clip_raw(reject.raw or "")
        key = _reject_key(reject.path, reject.line, reject.reason, raw)
        if key in seen:
            continue
        seen.add(key)
        rows.append((reject.path, reject.line, reject.hand_id, reject.reason, raw, now,
                     reject.kind, reject.conflict_with, key))
    connection.register("_frame_rejects", _rows_table("rejects", rows))
    try:
        connection.execute(
            "INSERT INTO rejects BY NAME SELECT f.* FROM _frame_rejects f "
            "ANTI JOIN rejects r ON r.reject_key = f.reject_key"
        )
    finally:
        connection.unregister("_frame_rejects")


def _record_file(
    connection: duckdb.DuckDBPyConnection, summary: FileSummary, size: int | None
) -> None:
    connection.execute(
        "INSERT INTO ingested_files BY NAME SELECT ? AS path, ? AS content_hash, ? AS format, "
        "? AS size_bytes, ? AS ingested_at, ? AS records, ? AS stored, ? AS duplicates, "
        "? AS rejected, ? AS status, ? AS message",
        [summary.path, summary.content_hash or "", summary.format, size,
         datetime.now(UTC).replace(tzinfo=None), summary.records, summary.stored,
         summary.duplicates, summary.rejected, summary.status, summary.message],
    )


def _finish_source(
    writer: _Writer,
    summary: FileSummary,
    size: int | None,
    touched: set[tuple[str, str | None]],
    session_gap: float,
    file_rejects: Sequence[_Reject] = (),
) -> None:
    """Close a source: its file-level rejects, affected sessions and its ingested_files row.
    The writer lets go of the database after it (checkpointing the source's batches)."""
    with writer.transaction(release=True) as connection:
        _insert_rejects(connection, file_rejects)
        stored_gap = store.get_meta(connection, SESSION_GAP_META_KEY)
        if stored_gap is not None and float(stored_gap) != session_gap:
            update_sessions(connection, None, session_gap)
        elif touched:
            update_sessions(connection, touched, session_gap)
        store.set_meta(connection, SESSION_GAP_META_KEY, repr(float(session_gap)))
        _record_file(connection, summary, size)


def _already_ingested(writer: _Writer, digest: str) -> tuple[str, datetime] | None:
    with writer.transaction() as connection:
        rows = connection.execute(
            "SELECT path, ingested_at FROM ingested_files "
            "WHERE content_hash = ? AND status = 'complete' ORDER BY ingested_at LIMIT 1",
            [digest],
        ).fetchall()
    return (rows[0][0], rows[0][1]) if rows else None


# --- progress ----------------------------------------------------------------------------------


class _Progress:
    """A rich progress display on stderr: hands read and hands per second."""

    def __init__(self, enabled: bool) -> None:
        self.progress = None
        self.task = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.text import Text

        class RateColumn(ProgressColumn):
            def render(self, task: Any) -> Text:
                elapsed = task.finished_time or task.elapsed
                if not elapsed or not task.completed:
                    return Text("… hands/s")
                return Text(f"{task.completed / elapsed:,.0f} hands/s")

        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:,.0f} hands"),
            RateColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.progress.start()
        self.task = self.progress.add_task("ingest", total=None)

    def describe(self, text: str) -> None:
        """Show which source is being read."""
        if self.progress is not None:
            self.progress.update(self.task, description=text)

    def advance(self, count: int) -> None:
        """Count records read."""
        if self.progress is not None:
            self.progress.advance(self.task, count)

    def stop(self) -> None:
        """Close the display."""
        if self.progress is not None:
            self.progress.update(self.task, description="done")
            self.progress.stop()


# --- public API --------------------------------------------------------------------------------


def _open_check(writer: _Writer) -> None:
    """Fail early (DatabaseError) when the database cannot be opened for writing."""
    writer.connect().close()


def ingest_paths(
    paths: Iterable[str | os.PathLike[str]],
    database: str | os.PathLike[str],
    rules: RuleSet | None = None,
    format: str | None = None,
    game: str | None = None,
    progress: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    session_gap: float = DEFAULT_SESSION_GAP_MINUTES,
    on_batch: Callable[[BatchReport], None] | None = None,
    workers: int | None = None,
) -> IngestSummary:
    """Ingest files, folders (recursive) and globs, plain or gzip, into ``database``.

    ``rules`` (resolved by the caller, e.g. from ``--rules``) overrides the rules each record
    names (without it, a record's rules name must be a preset); ``format`` forces a reader (else
    it is detected per file); ``game`` names the poker-arena game. Each batch of ``batch_size``
    records commits atomically; ``on_batch`` is called after each commit. Sessions of the tables
    touched are recomputed with ``session_gap`` minutes.
    ``workers``: processes that parse, validate and score canonical JSON Lines while this one
    reads and writes; None uses every core for files of :data:`PARALLEL_MIN_BYTES` or more,
    1 never forks, 2+ forks for every canonical file. The result is the same either way.

    Raises :class:`IngestError` for a missing path and :class:`DatabaseError` for a database
    that cannot be used; problems inside files become rejects and per-file summaries.
    """
    started = time.perf_counter()
    files = expand_paths(paths)
    resolver = RulesResolver(override=rules)
    writer = _Writer(database)
    _open_check(writer)
    summary = IngestSummary(str(database))
    display = _Progress(progress)
    try:
        for path in files:
            file_summary = _ingest_file(
                writer, path, resolver, format, game, batch_size, session_gap, on_batch, display,
                workers,
            )
            summary.files.append(file_summary)
    finally:
        writer.close()
        display.stop()
    summary.seconds = time.perf_counter() - started
    return summary


def _ingest_file(
    writer: _Writer,
    path: Path,
    resolver: RulesResolver,
    format: str | None,
    game: str | None,
    batch_size: int,
    session_gap: float,
    on_batch: Callable[[BatchReport], None] | None,
    display: _Progress,
    workers: int | None = None,
) -> FileSummary:
    summary = FileSummary(str(path), format=format)
    display.describe(path.name)
    pool: ProcessPoolExecutor | None = None

    def start_pool(workers: int) -> ProcessPoolExecutor:
        nonlocal pool
        if pool is None:
            pool = _worker_pool(workers)
        return pool

    try:
        return _ingest_source_file(
            writer, path, summary, resolver, game, batch_size, session_gap, on_batch, display,
            workers, start_pool,
        )
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _ingest_source_file(
    writer: _Writer,
    path: Path,
    summary: FileSummary,
    resolver: RulesResolver,
    game: str | None,
    batch_size: int,
    session_gap: float,
    on_batch: Callable[[BatchReport], None] | None,
    display: _Progress,
    workers: int | None,
    start_pool: Callable[[int], ProcessPoolExecutor],
) -> FileSummary:
    format = summary.format
    try:
        size = path.stat().st_size
        parallel = _parallel_workers(workers, format or _detected_format(path), size)
        if parallel > 1:
            start_pool(parallel)  # the workers start up while the file is hashed
        summary.content_hash = _file_hash(path)
    except OSError as error:
        summary.status = "failed"
        summary.message = f"cannot read: {error.strerror or error}"
        reject = _Reject(str(path), None, None, summary.message, "", "file")
        summary.note_reject(None, summary.message)
        _finish_source(writer, summary, None, set(), session_gap, [reject])
        return summary
    earlier = _already_ingested(writer, summary.content_hash)
    if earlier is not None:
        earlier_path, when = earlier
        summary.status = "unchanged"
        same = "" if earlier_path == str(path) else f" as {earlier_path}"
        summary.message = (
            f"unchanged: already ingested{same} on {when:%Y-%m-%d %H:%M:%S} UTC; nothing new stored"
        )
        _finish_source(writer, summary, size, set(), session_gap)
        return summary
    ingestor = _Ingestor(writer, resolver, batch_size, on_batch, display.advance)
    file_rejects: list[_Reject] = []
    try:
        records = read_source(path, format=format, game=game)
        if summary.format is None:
            summary.format = _detected_format(path)
        if summary.format == "canonical":
            ingestor.run_canonical(path, summary, parallel,
                                   start_pool(parallel) if parallel > 1 else None)
        else:
            ingestor.run(records, summary)
    except FormatError as error:
        summary.status = "failed"
        summary.message = error.reason
        file_rejects.append(_Reject(str(path), None, None, error.reason, "", "file"))
        summary.note_reject(None, error.reason)
    else:
        if summary.records == 0:
            summary.status = "empty"
            summary.message = EMPTY_FILE_REASON
            file_rejects.append(_Reject(str(path), None, None, EMPTY_FILE_REASON, "", "file"))
            summary.note_reject(None, EMPTY_FILE_REASON)
    _finish_source(writer, summary, size, ingestor.tables_touched, session_gap, file_rejects)
    return summary


def _parallel_workers(workers: int | None, format: str | None, size: int) -> int:
    """How many worker processes to use for a file (1 = none)."""
    if format != "canonical":
        return 1
    if workers is None:
        return (os.cpu_count() or 1) if size >= PARALLEL_MIN_BYTES else 1
    return max(1, workers)


def _detected_format(path: Path) -> str | None:
    from pipeline.formats import detect_format

    try:
        return detect_format(path)
    except FormatError:
        return None


def _mapping_records(
    mappings: Iterable[Any], source_name: str, hasher: Any
) -> Iterator[SourceRecord]:
    for number, mapping in enumerate(mappings, 1):
        try:
            raw = json.dumps(mapping, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            raw = repr(mapping)
        hasher.update(raw.encode("utf-8", "surrogatepass") + b"\n")
        if not isinstance(mapping, dict):
            yield SourceRecord(
                source_name, number, clip_raw(raw), None,
                f"expected a JSON object (a hand record), got {type(mapping).__name__}",
            )
            continue
        hand_id = mapping.get("hand_id")
        yield SourceRecord(
            source_name, number, clip_raw(raw), mapping, None,
            str(hand_id) if isinstance(hand_id, str | int) else None,
        )


def ingest_mappings(
    mappings: Iterable[dict],
    database: str | os.PathLike[str],
    source_name: str,
    rules: RuleSet | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    session_gap: float = DEFAULT_SESSION_GAP_MINUTES,
) -> IngestSummary:
    """Ingest canonical hand mappings (hands entered in the dashboard, uploads) into ``database``.

    The same path as files: same validation, dedup, tables and keys. ``source_name`` stands in
    for the file name (rejects and ``hands.source_path`` name it; line = position, from 1).
    ``rules`` (resolved by the caller) overrides the rules each record names.
    """
    started = time.perf_counter()
    resolver = RulesResolver(override=rules)
    # Mappings come from this process (the dashboard), which may read between batches.
    writer = _Writer(database, hold_seconds=0.0)
    _open_check(writer)
    summary = FileSummary(source_name, format="mappings")
    hasher = hashlib.sha256()
    ingestor = _Ingestor(writer, resolver, batch_size, None, None)
    try:
        ingestor.run(_mapping_records(mappings, source_name, hasher), summary)
        summary.content_hash = hasher.hexdigest()
        if summary.records == 0:
            summary.status = "empty"
            summary.message = "no hands given"
        _finish_source(writer, summary, None, ingestor.tables_touched, session_gap)
    finally:
        writer.close()
    return IngestSummary(str(database), [summary], time.perf_counter() - started)


def delete_hand(database: str | os.PathLike[str], site: str, hand_id: str) -> bool:
    """Remove one stored hand (every hand-data table and its decision grades) and recompute its
    table's sessions.

    For taking back or correcting a hand entered live: delete it, then ingest the corrected
    record. One transaction. Returns False when no such hand is stored.
    """
    key = store.hand_key(site, hand_id)
    connection = _Writer(database).connect()
    try:
        connection.execute("BEGIN TRANSACTION")
        rows = connection.execute(
            "SELECT site, table_name FROM hands WHERE hand_key = ?", [key]
        ).fetchall()
        row = rows[0] if rows else None
        if row is None:
            connection.execute("ROLLBACK")
            return False
        for name in (*store.HAND_DATA_TABLES, *store.GRADE_TABLES):
            if name != "sessions":
                connection.execute(f"DELETE FROM {name} WHERE hand_key = ?", [key])
        gap = store.get_meta(connection, SESSION_GAP_META_KEY)
        update_sessions(connection, [(row[0], row[1])],
                        float(gap) if gap is not None else DEFAULT_SESSION_GAP_MINUTES)
        connection.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            connection.execute("ROLLBACK")
        raise
    finally:
        connection.close()
    return True


# --- re-scoring --------------------------------------------------------------------------------

_STAGING_PREFIX = "_rescore_"
"""Name prefix of the tables a re-score fills before they replace the verdict tables."""

def _stored_boards(
    connection: duckdb.DuckDBPyConnection, condition: str, parameters: list[Any]
) -> pa.Table:
    """Every seat of the hands matching ``condition`` (on ``s.hand_key``), in hand then
    settlement order, with its board's rows as stored text."""
    return connection.sql(
        "SELECT s.hand_key, h.variant, h.rules, s.player, s.position, s.fantasyland, "
        "s.reported_points, s.extra, b.top, b.middle, b.bottom "
        "FROM seats s JOIN boards b ON b.hand_key = s.hand_key AND b.player = s.player "
        f"JOIN hands h ON h.hand_key = s.hand_key WHERE {condition} "
        "ORDER BY s.hand_key, s.position",
        params=parameters,
    ).to_arrow_table()


def _board_codes(boards: pa.Table) -> np.ndarray:
    """The 13 card codes (top, middle, bottom) of each stored board.

    Stored rows are canonical card texts joined by single spaces ("Ah Kd Qs"), so a row of n
    cards is 3n - 1 bytes and its cards sit at fixed offsets: parsed for all boards at once.
    A row that is not in that form (edited by hand, say) is parsed card by card."""
    count = boards.num_rows
    codes = np.zeros((count, 13), np.int64)
    column = 0
    for name, size in (("top", 3), ("middle", 5), ("bottom", 5)):
        texts = boards.column(name).combine_chunks().cast(pa.large_string())
        width = 3 * size - 1
        offsets = np.frombuffer(texts.buffers()[1], np.int64)[texts.offset:texts.offset + count + 1]
        data = np.frombuffer(texts.buffers()[2], np.uint8)
        fixed = np.diff(offsets) == width
        starts = offsets[:-1, None] + 3 * np.arange(size)
        starts = np.where(fixed[:, None], starts, 0)
        ranks = RANK_OF_BYTE[data[starts]] if len(data) else np.full(starts.shape, -1)
        suits = SUIT_OF_BYTE[data[starts + 1]] if len(data) else np.full(starts.shape, -1)
        row_codes = ranks * 4 + suits
        odd = np.flatnonzero(~fixed | (ranks < 0).any(axis=1) | (suits < 0).any(axis=1))
        for index in odd.tolist():
            row_codes[index] = parse_cards(texts[index].as_py())
        codes[:, column:column + size] = row_codes
        column += size
    return codes


def _hand_keys(connection: duckdb.DuckDBPyConnection) -> np.ndarray:
    """Every stored hand's key, in order."""
    return connection.sql(
        "SELECT hand_key FROM hands ORDER BY hand_key"
    ).to_arrow_table().column(0).to_numpy()


def _score_stored(boards: pa.Table, rules_for: Callable[[str], RuleSet]) -> dict[str, pa.Table]:
    """Evaluations, matchups and results for stored boards: the batch's columns scored by
    :func:`pipeline.ingest.columns.verdict_tables`, as at ingest."""
    keys = boards.column("hand_key").to_numpy()
    count = len(keys)
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if count else np.zeros(0, int)
    player_counts = np.diff(np.r_[starts, count]).astype(np.int64)
    variants = boards.column("variant").take(pa.array(starts)).to_pylist()
    extra_column = boards.column("extra")
    extras: list[dict[str, Any] | None] = [None] * count
    if extra_column.null_count < count:
        for index, text in enumerate(extra_column.to_pylist()):
            if text:
                extras[index] = json.loads(text)
    columns = scoring_columns(
        keys=keys[starts], variants=[VARIANTS_BY_NAME[name] for name in variants],
        rules=boards.column("rules").take(pa.array(starts)).to_pylist(),
        player_counts=player_counts, names=boards.column("player").to_pylist(),
        positions=boards.column("position").to_numpy().astype(np.int64),
        fantasyland=boards.column("fantasyland").to_numpy(zero_copy_only=False).astype(bool),
        reported=boards.column("reported_points").to_pylist(),
        player_extras=extras,
        boards=_board_codes(boards),
    )
    return verdict_tables(columns, rules_for)


def rescore(
    database: str | os.PathLike[str],
    rules: RuleSet | None = None,
    batch_size: int = 250_000,
    progress: bool = False,
) -> RescoreSummary:
    """Recompute evaluations, matchups and results of every stored hand, from stored boards.

    ``rules`` (resolved by the caller, e.g. from ``--rules``) applies to every hand; None
    scores each hand under the rules its record named. No file is read: the boards come from the
    database and are scored as columns by the batch rules core, ``batch_size`` hands per
    transaction, into staging tables that replace the verdict tables in the last transaction
    (inserting is several times faster than updating every row in place; readers see the old
    verdicts until then). Hands another process stores or deletes meanwhile are accounted
    for in that last transaction. Sessions' points follow.
    Raises :class:`DatabaseError` when the database cannot be used, RulesError for a record's
    unknown rules.
    """
    started = time.perf_counter()
    resolver = RulesResolver(override=rules)
    writer = _Writer(database)
    connection = writer.connect()
    try:
        keys = _hand_keys(connection)
    finally:
        connection.close()
    display = _Progress(progress)
    display.describe("rescore")
    hands_done = players_done = disagreeing = 0
    names: set[str] = set()

    def stage(connection: duckdb.DuckDBPyConnection, boards: pa.Table) -> None:
        nonlocal hands_done, players_done, disagreeing
        tables = _score_stored(boards, resolver)
        for name in store.VERDICT_TABLES:
            store.insert_frame(connection, _STAGING_PREFIX + name, tables[name])
        names.update(tables["evaluations"].column("ruleset").unique().to_pylist())
        disagreeing += tables["results"].column("disagrees").to_numpy(
            zero_copy_only=False).sum()
        hands_done += len(np.unique(boards.column("hand_key").to_numpy()))
        players_done += boards.num_rows

    try:
        with writer.transaction() as connection:
            for name in store.VERDICT_TABLES:
                store.create_staging_table(connection, name, _STAGING_PREFIX + name)
        for start in range(0, len(keys), max(1, batch_size)):
            chunk = keys[start:start + batch_size]
            with writer.transaction() as connection:
                stage(connection, _stored_boards(
                    connection, "s.hand_key BETWEEN ? AND ?", [int(chunk[0]), int(chunk[-1])]))
            display.advance(len(chunk))
        with writer.transaction(release=True) as connection:
            # Hands stored or deleted by another process since the keys were read.
            staged = f"{_STAGING_PREFIX}evaluations"
            stage(connection, _stored_boards(
                connection, f"s.hand_key IN (SELECT hand_key FROM hands "
                f"ANTI JOIN {staged} USING (hand_key))", []))
            for name in store.VERDICT_TABLES:
                connection.execute(
                    f"DELETE FROM {_STAGING_PREFIX}{name} "
                    "WHERE hand_key NOT IN (SELECT hand_key FROM hands)"
                )
                store.replace_table(connection, _STAGING_PREFIX + name, name)
            update_session_points(connection)
            label = ", ".join(sorted(names)) if names else (rules.name if rules else "")
            store.set_meta(connection, "rescored_with", label)
    finally:
        writer.close()
        display.stop()
    label = rules.name if rules is not None else ", ".join(sorted(names)) or "record rules"
    return RescoreSummary(label, hands_done, players_done, int(disagreeing),
                          time.perf_counter() - started)
