"""What an ingest run reports: a summary per source and per run, and a report per batch.

:class:`FileSummary` is filled in as a source's batches are written (:mod:`pipeline.ingest.ingestor`)
and recorded in the ``ingested_files`` table (:mod:`pipeline.ingest.writer`);
:class:`IngestSummary` is what :func:`pipeline.ingest.driver.ingest_paths` and
:func:`~pipeline.ingest.driver.ingest_mappings` return; :class:`BatchReport` goes to
``on_batch`` after each commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FIRST_REASONS", "BatchReport", "FileSummary", "IngestSummary"]

FIRST_REASONS = 5
"""How many reject reasons a summary keeps per file."""


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

