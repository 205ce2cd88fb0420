"""What ingestion raises when nothing can be ingested at all.

Problems inside files never raise: they become rejects and per-file summaries
(:mod:`pipeline.ingest.summary`).
"""

from __future__ import annotations

__all__ = ["DatabaseError", "IngestError"]


class IngestError(Exception):
    """A fatal problem: nothing can be ingested (no such path, unusable database)."""


class DatabaseError(IngestError):
    """The database cannot be opened or written."""
