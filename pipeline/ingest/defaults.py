"""The ingest's default settings, in a module that imports nothing but ``os``.

The command line shows them in ``ofc ingest --help`` without importing the ingest itself (numpy,
pyarrow, DuckDB); the modules that use them import them from here (and keep their old names:
``pipeline.ingest.batches.DEFAULT_BATCH_SIZE`` and so on)."""

from __future__ import annotations

import os

DEFAULT_BATCH_SIZE = 20_000
"""Records per batch (one transaction each)."""

MAX_BATCH_SIZE = 200_000
"""The most records per batch a user may ask for (``--batch-size``): a batch is held in memory
while it is scored and written, and one of 1,000,000 records took 2.9 GB in one process (the
default's 20,000: under 0.5 GB) and was slower, not faster; ``--batch-size 10000000`` would run
a machine like the test machine out of memory."""

PARALLEL_MIN_BYTES = 64 << 20
"""Canonical files this large (about 30,000 hands) are parsed by worker processes."""

WORKER_MODULE = "pipeline.ingest.workers"
"""The module the workers' forkserver imports before it forks them (everything a batch
needs)."""

WORKER_PRELOAD = [WORKER_MODULE]
"""What the workers' forkserver imports before it forks a worker: the workers' module, and so
everything a batch needs (``ofc ingest`` starts the server with it early:
:func:`~pipeline.ingest.lifetime.start_forkserver`). Not pandas, which pyarrow would import on
a process's first array (about 0.2 s): each worker tells pyarrow it is absent
(:func:`~pipeline.ingest.no_pandas.hide_pandas_from_pyarrow`), and the writing process builds
no array in a parallel load; neither imports it."""

DEFAULT_SESSION_GAP_MINUTES = 30.0
"""A break this long (minutes) or longer between two hands starts a new session."""


def parallel_workers(workers: int | None, format: str | None, size: int) -> int:
    """How many worker processes to use for a file of ``size`` bytes in ``format`` (1 = none):
    ``workers`` when given, else one per core for canonical files of
    :data:`PARALLEL_MIN_BYTES` or more."""
    if format != "canonical":
        return 1
    if workers is None:
        return (os.cpu_count() or 1) if size >= PARALLEL_MIN_BYTES else 1
    return max(1, workers)
