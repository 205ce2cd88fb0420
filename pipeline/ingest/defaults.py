"""The ingest's default settings, in a module that imports nothing.

The command line shows them in ``ofc ingest --help`` without importing the ingest itself (numpy,
pyarrow, DuckDB); the modules that use them import them from here (and keep their old names:
``pipeline.ingest.batches.DEFAULT_BATCH_SIZE`` and so on)."""

from __future__ import annotations

DEFAULT_BATCH_SIZE = 20_000
"""Records per batch (one transaction each)."""

PARALLEL_MIN_BYTES = 64 << 20
"""Canonical files this large (about 30,000 hands) are parsed by worker processes."""

DEFAULT_SESSION_GAP_MINUTES = 30.0
"""A break this long (minutes) or longer between two hands starts a new session."""
