"""One source through batches into the database, in order.

An :class:`Ingestor` streams the records of one source (a file of any format, or mappings)
through a :class:`~pipeline.ingest.batches.BatchBuilder`, or the lines of a canonical JSON
Lines file through :func:`~pipeline.ingest.batches.prepare_canonical` (in worker processes for
a large file), and writes each batch with :func:`pipeline.ingest.writer.write_batch`, counting
what happened into the source's :class:`~pipeline.ingest.summary.FileSummary`.
"""

from __future__ import annotations

import gc
import os
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from pipeline.formats import FormatError, SourceRecord
from pipeline.formats.source import (
    PackedLines,
    RawLine,
    SourceLine,
    collector_paused,
    read_raw_batches,
    read_raw_lines,
)
from pipeline.ingest.aggregates import Deferral
from pipeline.ingest.batches import BatchBuilder, PreparedBatch, prepare_canonical
from pipeline.ingest.summary import MAX_STORED_REJECTS, BatchReport, FileSummary
from pipeline.ingest.workers import prepare_spilled
from pipeline.ingest.writer import Writer, write_batch
from pipeline.records.rules_file import RulesResolver

__all__ = ["Ingestor"]


class Ingestor:
    """Streams records of one source through validation, scoring and batched writes.

    ``resolver`` resolves every record's rules (built once per ingest run by the caller, and
    sent along to the worker processes)."""

    def __init__(
        self,
        writer: Writer,
        resolver: RulesResolver,
        batch_size: int,
        on_batch: Callable[[BatchReport], None] | None,
        on_records: Callable[[int], None] | None,
        deferral: Deferral | None = None,
    ) -> None:
        """``deferral``: a bulk load's (:class:`~pipeline.ingest.aggregates.Deferral`): its
        batches leave the aggregates to the end of the source."""
        self.writer = writer
        self.deferral = deferral
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
        with collector_paused():
            builder = BatchBuilder(self.resolver)
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
                        builder = BatchBuilder(self.resolver)
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
        batches in order; :func:`~pipeline.ingest.batches.prepare_canonical` parses, validates,
        scores and builds the columns, in ``workers`` worker processes when there are 2 or more
        (at most ``workers + 1`` batches in flight), else here. The database is the same either
        way."""
        file_name = str(path)
        self.read_error = None
        with collector_paused():
            if pool is None or workers <= 1:
                batches = self._line_batches(read_raw_lines(path, skip_blank=True))
                for batch in batches:
                    prepared = prepare_canonical(file_name, batch, self.resolver)
                    prepared.lines = batch
                    self._write_counted(prepared, summary)
                    gc.collect(0)
            else:
                self._run_pool(pool, file_name, self._packed_batches(path), summary, workers)
        if self.read_error is not None:
            raise self.read_error

    def _run_pool(
        self, pool: ProcessPoolExecutor, file_name: str,
        batches: Iterator[PackedLines], summary: FileSummary, workers: int,
    ) -> None:
        """The batches prepared by the pool's worker processes, written here in order."""
        with tempfile.TemporaryDirectory(prefix="ofc-ingest-") as spill_folder:
            pending: deque[tuple[Future[PreparedBatch], list]] = deque()
            for number, batch in enumerate(batches):
                spill = os.path.join(spill_folder, f"batch{number}")
                pending.append((pool.submit(prepare_spilled, file_name, batch, self.resolver,
                                            spill), batch))
                while len(pending) > workers:
                    self._write_pending(pending.popleft(), summary)
            while pending:
                self._write_pending(pending.popleft(), summary)

    def _ramped_sizes(self) -> Iterator[int]:
        """Lines per batch handed to the workers: ``batch_size``, but the first three are an
        eighth, a quarter and a half of that, so the writer starts sooner."""
        yield from (max(1, self.batch_size // part) for part in (8, 4, 2))
        while True:
            yield self.batch_size

    def _packed_batches(self, path: Path) -> Iterator[PackedLines]:
        """The file's lines in batches of :meth:`_ramped_sizes`, packed for the workers
        (:func:`~pipeline.formats.source.read_raw_batches`: this process never splits them
        into lines, a worker does). A FormatError ends the batches, as in
        :meth:`_line_batches`."""
        try:
            yield from read_raw_batches(path, self._ramped_sizes(), skip_blank=True)
        except FormatError as error:
            self.read_error = error

    def _line_batches(
        self, lines: Iterator[RawLine | SourceLine]
    ) -> Iterator[list[RawLine | SourceLine]]:
        """Lines in batches of ``batch_size``. A FormatError (a reader giving up on the file)
        ends the batches after the lines read so far; run_canonical raises it once they are
        written."""
        batch: list[RawLine | SourceLine] = []
        try:
            for line in lines:
                batch.append(line)
                if len(batch) >= self.batch_size:
                    yield batch
                    batch = []
        except FormatError as error:
            self.read_error = error
        if batch:
            yield batch

    def _write_pending(
        self, pending: tuple[Future[PreparedBatch], list[RawLine | SourceLine]], summary: FileSummary
    ) -> None:
        future, batch = pending
        prepared = future.result()
        prepared.lines = batch
        self._write_counted(prepared, summary)

    def _write_counted(self, prepared: PreparedBatch, summary: FileSummary) -> None:
        self._write(prepared, summary)
        if self.on_records is not None:
            self.on_records(prepared.records)

    def _write(self, prepared: PreparedBatch, summary: FileSummary) -> None:
        """One transaction (:func:`~pipeline.ingest.writer.write_batch`), then its counts into
        ``summary`` and a :class:`~pipeline.ingest.summary.BatchReport` to ``on_batch``."""
        before = (summary.stored, summary.duplicates, summary.rejected)
        new_hands, duplicates = write_batch(
            self.writer, prepared, self.tables_touched,
            reject_room=MAX_STORED_REJECTS - summary.rejected, deferral=self.deferral)
        summary.records += prepared.records
        summary.stored += new_hands
        summary.duplicates += duplicates
        # In line order, so a file's first reasons do not depend on where batches split it.
        for reject in sorted(prepared.rejects, key=lambda reject: reject.line or 0):
            summary.note_reject(reject.line, reject.reason, reject.kind)
        for warning in prepared.warnings or ():
            summary.note_warning(warning)
        self.batches += 1
        if self.on_batch is not None:
            self.on_batch(BatchReport(
                summary.path, self.batches, prepared.records, summary.stored - before[0],
                summary.duplicates - before[1], summary.rejected - before[2],
            ))


