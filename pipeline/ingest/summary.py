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

__all__ = ["FIRST_REASONS", "MAX_STORED_REJECTS", "BatchReport", "FileSummary", "IngestSummary"]

FIRST_REASONS = 5
"""How many reject reasons a summary keeps per file."""

MAX_STORED_REJECTS = 1000
"""Most rejects of one file a reading stores in the ``rejects`` table, each with its line and
reason (the first ones, in line order). The rest are counted (``ingested_files.rejected``, the
summary) and the file's message says so: a small .gz of junk lines cannot grow the database by
gigabytes. Conflicts are not limited: each is a whole hand that needs a person."""


@dataclass(slots=True)
class FileSummary:
    """What happened to one source (a file, or a named stream of mappings)."""

    path: str
    format: str | None = None
    status: str = "complete"  # complete | partial | unchanged | empty | failed
    records: int = 0
    stored: int = 0
    duplicates: int = 0
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)
    message: str | None = None
    content_hash: str | None = None
    unreadable: int = 0  # records that could not be read as a record of the format at all
    ends_early: str | None = None  # why the file ends early (damaged or cut off), if it does
    warnings: list[str] = field(default_factory=list)  # things read with a guess, said aloud
    warning_count: int = 0

    def note_reject(self, line: int | None, reason: str, kind: str = "invalid") -> None:
        """Count a rejected record, keeping the first few reasons. ``kind`` is the reject's
        kind: ``read`` and ``damaged`` records count as unreadable; the first ``damaged`` one
        says why the file ends early."""
        self.rejected += 1
        if kind in ("read", "damaged"):
            self.unreadable += 1
        if kind == "damaged" and self.ends_early is None:
            self.ends_early = f"line {line}: {reason}" if line else reason
        if len(self.reasons) < FIRST_REASONS:
            self.reasons.append(f"line {line}: {reason}" if line else reason)

    def note_warning(self, warning: str) -> None:
        """Count a warning (a line read with a guess, like a legacy encoding), keeping the first few."""
        self.warning_count += 1
        if len(self.warnings) < FIRST_REASONS:
            self.warnings.append(warning)

    def settle_status(self) -> None:
        """The status of a source read to its end without a file-level failure:

        * ``failed`` when it had records and none of them could be read as one (a binary file
          read with a forced format, say): nothing in it was a hand history;
        * ``partial`` when it ends early (damaged compressed data, a cut-off last line): the
          records before the damage were read and stored;
        * ``complete`` otherwise (rejected records included: each has its reason).
        """
        if self.status != "complete" or not self.records:
            return
        if self.unreadable == self.records and not self.stored and not self.duplicates:
            self.status = "failed"
            first = self.reasons[0] if self.reasons else "unreadable"
            self.message = (f"no record could be read as {self.format or 'a known format'} "
                            f"({self.records:,} unreadable; first: {first})")
        elif self.ends_early is not None:
            self.status = "partial"
            self.message = (f"the file ends early, read up to the damage ({self.ends_early}); "
                            "ingest it again once it is complete")
        elif self.rejected > MAX_STORED_REJECTS and self.message is None:
            self.message = (f"{self.rejected:,} records rejected: the first "
                            f"{MAX_STORED_REJECTS:,} are kept in the rejects table with their "
                            "line and reason, the rest only counted")
        elif self.warning_count and self.message is None:
            plural = "s" if self.warning_count > 1 else ""
            self.message = f"{self.warning_count:,} warning{plural}; first: {self.warnings[0]}"


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

