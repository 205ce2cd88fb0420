"""Ingestion: hand-history files (or mappings) into the DuckDB database, re-scored and audited.

The one way hand data gets into the database (schemas/database.md). A file is streamed through
its format reader (:func:`pipeline.formats.read_source`) in batches of ``batch_size`` records;
each batch is validated (:func:`pipeline.records.validate.parse_hand`), re-scored in one go as columns
by the batch rules core (the verdicts :func:`pipeline.ingest.evaluate.score_records` gives), turned into
columns (Arrow) and written in **one transaction** covering every table, rejects included. The write connection is held for
at most :data:`~pipeline.ingest.writer.HOLD_SECONDS` and then closed between batches, so the dashboard's short read-only
connections get in.
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

This module is the entry points and the per-file orchestration (which files, skip unchanged
ones, pick the reader and whether to use worker processes, close each source); the parts are
:mod:`~pipeline.ingest.paths`, :mod:`~pipeline.ingest.ingestor` (one source, batch by batch),
:mod:`~pipeline.ingest.batches`, :mod:`~pipeline.ingest.workers` and
:mod:`~pipeline.ingest.writer`. :func:`pipeline.ingest.rescore.rescore` recomputes the verdicts
of stored hands under another rule set.

Rules are resolved once: the caller (the ``--rules`` option, the dashboard) turns a name or file
into a RuleSet, and each entry point here builds the one
:class:`~pipeline.records.rules_file.RulesResolver` that every batch and worker process uses.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from pipeline.formats import FormatError, SourceRecord, read_source
from pipeline.formats.base import clip_raw
from pipeline.ingest.aggregates import Deferral
from pipeline.ingest.batches import DEFAULT_BATCH_SIZE, Reject
from pipeline.ingest.ingestor import Ingestor
from pipeline.ingest.paths import HashAhead, expand_paths, file_hash
from pipeline.ingest.progress import Progress
from pipeline.ingest.sessions import DEFAULT_SESSION_GAP_MINUTES
from pipeline.ingest.summary import BatchReport, FileSummary, IngestSummary
from pipeline.ingest.workers import parallel_workers, worker_pool
from pipeline.ingest.writer import (
    Writer,
    already_ingested,
    finish_load,
    finish_source,
    open_check,
    stored_hands,
)
from pipeline.records.rules_file import RulesResolver
from pipeline.rules.ruleset import RuleSet

__all__ = ["BULK_BYTES_PER_HAND", "BULK_HANDS_PER_FILE", "EMPTY_FILE_REASON", "bulk_load",
           "bulk_run", "ingest_mappings", "ingest_paths"]

EMPTY_FILE_REASON = "empty file: no hand history in it"

BULK_BYTES_PER_HAND = 2_000
"""A file of at least this many bytes for every hand stored is a bulk load: it counts its hands
in the aggregates once, at its end (:class:`~pipeline.ingest.aggregates.Deferral`), which costs
less than batch by batch once it brings about as many hands as the database holds. (A
3-player Pineapple hand is about 1,600 bytes of canonical JSON, a 2-player Classic one about
800: the estimate errs towards counting batch by batch.)"""


BULK_HANDS_PER_FILE = 10_000
"""Counting one more file's hands in the aggregates costs, whatever its size, about what
building them costs for this many stored hands (measured: 0.13 s a file for its merges into
the totals, the play order and the summaries, against about 9 µs a hand for a build from every
hand; the estimate errs towards counting file by file). So a run of many files counts them all
once, at its end, once there are enough files (:func:`bulk_run`): 250 files of one hand each
into a new database took 58 s, 0.23 s a file."""


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
    bulk: bool | None = None,
) -> IngestSummary:
    """Ingest files, folders (recursive) and globs, plain or gzip, into ``database``.

    ``rules`` (resolved by the caller, e.g. from ``--rules``) overrides the rules each record
    names (without it, a record's rules name must be a preset); ``format`` forces a reader (else
    it is detected per file); ``game`` names the poker-arena game. Each batch of ``batch_size``
    records commits atomically; ``on_batch`` is called after each commit. The sessions the new
    hands change are recomputed with ``session_gap`` minutes.
    ``workers``: processes that parse, validate and score canonical JSON Lines while this one
    reads and writes; None uses every core for files of
    :data:`~pipeline.ingest.workers.PARALLEL_MIN_BYTES` or more, 1 never forks, 2+ forks for
    every canonical file. The result is the same either way.
    ``bulk``: count a file's hands in the aggregates once, at its end, instead of batch by
    batch (:class:`~pipeline.ingest.aggregates.Deferral`); None decides: for several files,
    once for them all (:func:`bulk_run`: their hands are then counted once, after the last
    file), else per file (a file of at least :data:`BULK_BYTES_PER_HAND` bytes per stored
    hand). The result is the same either way.

    Raises :class:`~pipeline.ingest.errors.IngestError` for a missing path and
    :class:`~pipeline.ingest.errors.DatabaseError` for a database that cannot be used; problems inside files become rejects and per-file summaries.
    """
    started = time.perf_counter()
    files = expand_paths(paths)
    hashes = HashAhead(files)  # the first file is hashed while the database is opened
    resolver = RulesResolver(override=rules)
    writer = Writer(database, rules=rules)
    open_check(writer)
    summary = IngestSummary(str(database))
    display = Progress(progress)
    run_deferral = run_tables = None
    if bulk is None and len(files) > 1 and bulk_run(_total_bytes(files), len(files),
                                                    stored_hands(writer)):
        run_deferral, run_tables = Deferral(), set()
    try:
        for path in files:
            file_summary = _ingest_file(
                writer, path, resolver, format, game, batch_size, session_gap, on_batch, display,
                workers, bulk, run_deferral, run_tables, hashes,
            )
            summary.files.append(file_summary)
        if run_deferral is not None:
            finish_load(writer, run_deferral, run_tables, session_gap)
    finally:
        writer.close()
        display.stop()
    summary.seconds = time.perf_counter() - started
    return summary


def _ingest_file(
    writer: Writer,
    path: Path,
    resolver: RulesResolver,
    format: str | None,
    game: str | None,
    batch_size: int,
    session_gap: float,
    on_batch: Callable[[BatchReport], None] | None,
    display: Progress,
    workers: int | None = None,
    bulk: bool | None = None,
    run_deferral: Deferral | None = None,
    run_tables: set[tuple[str, str | None]] | None = None,
    hash_of: Callable[[Path], str] = file_hash,
) -> FileSummary:
    summary = FileSummary(str(path), format=format)
    display.describe(path.name)
    pool: ProcessPoolExecutor | None = None

    def start_pool(workers: int) -> ProcessPoolExecutor:
        nonlocal pool
        if pool is None:
            pool = worker_pool(workers)
        return pool

    def stop_pool() -> None:
        """End the workers (their memory is given back before the source is closed)."""
        nonlocal pool
        if pool is not None:
            pool.shutdown(cancel_futures=True)
            pool = None

    try:
        return _ingest_source_file(
            writer, path, summary, resolver, game, batch_size, session_gap, on_batch, display,
            workers, start_pool, bulk, stop_pool, run_deferral, run_tables, hash_of,
        )
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _ingest_source_file(
    writer: Writer,
    path: Path,
    summary: FileSummary,
    resolver: RulesResolver,
    game: str | None,
    batch_size: int,
    session_gap: float,
    on_batch: Callable[[BatchReport], None] | None,
    display: Progress,
    workers: int | None,
    start_pool: Callable[[int], ProcessPoolExecutor],
    bulk: bool | None = None,
    stop_pool: Callable[[], None] = lambda: None,
    run_deferral: Deferral | None = None,
    run_tables: set[tuple[str, str | None]] | None = None,
    hash_of: Callable[[Path], str] = file_hash,
) -> FileSummary:
    """One file: read, stored batch by batch, closed. ``run_deferral``: a run of several files
    that counts their hands in the aggregates once after the last one (this file leaves them
    out and does not catch up); ``run_tables``: the tables whose sessions that run works out
    after its last file (this file adds its own and leaves its sessions to then); ``hash_of``:
    the file's content hash (the run's :class:`~pipeline.ingest.paths.HashAhead`)."""
    format = summary.format
    try:
        size = path.stat().st_size
        parallel = parallel_workers(workers, format or _detected_format(path), size)
        if parallel > 1:
            start_pool(parallel)  # the workers start up while the file is hashed
        summary.content_hash = hash_of(path)
    except OSError as error:
        summary.status = "failed"
        summary.message = f"cannot read: {error.strerror or error}"
        reject = Reject(str(path), None, None, summary.message, "", "file")
        summary.note_reject(None, summary.message, "file")
        finish_source(writer, summary, None, set(), session_gap, [reject], run_tables=run_tables)
        return summary
    earlier = already_ingested(writer, summary.content_hash)
    if earlier is not None:
        earlier_path, when = earlier
        summary.status = "unchanged"
        same = "" if earlier_path == str(path) else f" as {earlier_path}"
        summary.message = (
            f"unchanged: already ingested{same} on {when:%Y-%m-%d %H:%M:%S} UTC; nothing new stored"
        )
        finish_source(writer, summary, size, set(), session_gap, run_tables=run_tables)
        return summary
    own_deferral = None  # this file's alone: caught up when the file is closed
    if run_deferral is None:
        if bulk is None:
            bulk = bulk_load(size, stored_hands(writer))
        own_deferral = Deferral() if bulk else None
    ingestor = Ingestor(writer, resolver, batch_size, on_batch, display.advance,
                        run_deferral or own_deferral)
    file_rejects: list[Reject] = []
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
        file_rejects.append(Reject(str(path), None, None, error.reason, "", "file"))
        summary.note_reject(None, error.reason, "file")
    else:
        if summary.records == 0:
            summary.status = "empty"
            summary.message = EMPTY_FILE_REASON
            file_rejects.append(Reject(str(path), None, None, EMPTY_FILE_REASON, "", "file"))
            summary.note_reject(None, EMPTY_FILE_REASON, "file")
        summary.settle_status()
    stop_pool()  # a bulk load's build of the aggregates needs the workers' memory
    finish_source(writer, summary, size, ingestor.tables_touched, session_gap, file_rejects,
                  deferral=own_deferral, run_tables=run_tables)
    return summary


def bulk_load(file_bytes: int, stored: int) -> bool:
    """Whether a file of ``file_bytes`` bytes, ingested into a database of ``stored`` hands, is a
    bulk load (:data:`BULK_BYTES_PER_HAND`)."""
    return file_bytes >= BULK_BYTES_PER_HAND * stored


def bulk_run(total_bytes: int, files: int, stored: int) -> bool:
    """Whether a run of ``files`` files of ``total_bytes`` bytes in all, ingested into a
    database of ``stored`` hands, counts its hands in the aggregates once, after its last file:
    when the files together are a bulk load (:func:`bulk_load`), or when there are enough of
    them that counting each one costs more than one build (:data:`BULK_HANDS_PER_FILE`)."""
    return bulk_load(total_bytes, stored) or files * BULK_HANDS_PER_FILE >= stored


def _total_bytes(files: Sequence[Path]) -> int:
    total = 0
    for path in files:
        try:
            total += path.stat().st_size
        except OSError:  # said when the file is read
            continue
    return total


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
    # Mappings come from this process, which may read the database while they are pulled (a
    # generator): the write connection is closed after each batch until the last mapping is
    # pulled. The last batch and the closing transaction then share one connection (a live
    # save, one hand: one checkpoint instead of two).
    writer = Writer(database, hold_seconds=0.0, rules=rules)
    open_check(writer, probe=False)
    summary = FileSummary(source_name, format="mappings")
    hasher = hashlib.sha256()
    ingestor = Ingestor(writer, resolver, batch_size, None, None)

    def records() -> Iterator[SourceRecord]:
        yield from _mapping_records(mappings, source_name, hasher)
        writer.hold_seconds = math.inf  # nothing of the caller runs between writes any more

    try:
        ingestor.run(records(), summary)
        summary.content_hash = hasher.hexdigest()
        if summary.records == 0:
            summary.status = "empty"
            summary.message = "no hands given"
        finish_source(writer, summary, None, ingestor.tables_touched, session_gap)
    finally:
        writer.close()
    return IngestSummary(str(database), [summary], time.perf_counter() - started)

