"""Worker processes: a pool that parses, validates and scores canonical JSON Lines batches.

Large canonical files are prepared by worker processes while the ingesting process reads lines
and writes batches in order (:meth:`pipeline.ingest.ingestor.Ingestor.run_canonical`). The
workers are forked from a forkserver that has imported this module (and so everything a batch
needs), so each starts in milliseconds. A worker leaves a batch's columns in Arrow files
(:meth:`~pipeline.ingest.batches.PreparedBatch.spill_frames`) that the writer maps into memory.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

from pipeline.formats.source import PackedLines, RawLine, SourceLine, expand_lines
from pipeline.ingest.batches import PreparedBatch, prepare_canonical
from pipeline.ingest.defaults import (
    PARALLEL_MIN_BYTES,
    WORKER_PRELOAD,
    parallel_workers,
)
from pipeline.ingest.lifetime import PARENT_POLL_SECONDS, exit_with, start_forkserver
from pipeline.ingest.no_pandas import hide_pandas_from_pyarrow
from pipeline.records.rules_file import RulesResolver

__all__ = [
    "PARALLEL_MIN_BYTES",
    "PARENT_POLL_SECONDS",
    "WORKER_NICENESS",
    "exit_with",
    "parallel_workers",
    "prepare_spilled",
    "worker_pool",
]


WORKER_NICENESS = 5
"""How much lower the worker processes' CPU priority is than the writer's."""


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes, started now (forked from a server that has imported
    this module, so each starts in milliseconds: it imports all a worker runs).

    Each worker ends itself as soon as this process dies, even by ``kill -9`` (which leaves no
    chance to shut the pool down): otherwise the workers would wait for work forever, and the
    forkserver and the resource tracker with them."""
    context = multiprocessing.get_context("forkserver")
    start_forkserver(WORKER_PRELOAD)  # already running when ``ofc ingest`` started it early
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_start,
                               initargs=(os.getpid(),))
    for _ in range(workers):
        pool.submit(_worker_ready)
    return pool


def _worker_ready() -> None:
    """Nothing: submitted once per worker so the processes start at once."""


def _worker_start(ingesting_process: int) -> None:
    """Worker processes: no cyclic garbage collection (see Ingestor.run), a lower CPU priority
    than the writer, which is the one serial step (when the cores are busy it should not wait
    for them), pyarrow without pandas (a worker builds its tables from numpy arrays and lists:
    :mod:`pipeline.ingest.no_pandas`), and an end together with the ingesting process."""
    gc.disable()
    hide_pandas_from_pyarrow()
    with contextlib.suppress(OSError, AttributeError):  # os.nice is Unix only
        os.nice(WORKER_NICENESS)
    exit_with(ingesting_process)


def prepare_spilled(
    file_name: str, lines: PackedLines | list[RawLine | SourceLine], resolver: RulesResolver,
    spill: str,
) -> PreparedBatch:
    """In a worker: :func:`~pipeline.ingest.batches.prepare_canonical` a batch of lines (packed
    by :func:`~pipeline.formats.source.read_raw_batches`, split here), leaving its frames in
    Arrow files at the path prefix ``spill``."""
    return prepare_canonical(file_name, expand_lines(lines), resolver).spill_frames(spill)
