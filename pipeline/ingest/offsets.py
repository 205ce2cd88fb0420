"""How far ``ofc watch`` has read each file: the ``file_offsets`` table (schemas/database.md).

A :class:`Cursor` is one row: the bytes and lines read, a hash of those bytes, what the file's
reader needs to go on (:mod:`pipeline.formats.follow`), and what was found so far. It is saved
by :func:`save_cursor` inside the transaction that stores the hands read up to there, so a
watcher stopped at any moment (even killed) goes on where it stopped, reading nothing twice.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import duckdb

from pipeline.ingest.summary import FIRST_REASONS, FileSummary

__all__ = [
    "EMPTY_HASH",
    "Counts",
    "Cursor",
    "CursorMoved",
    "forget_recorded",
    "ingested_counts",
    "load_cursor",
    "load_cursors",
    "save_cursor",
]

EMPTY_HASH = hashlib.sha256(b"").hexdigest()
"""The hash of nothing read yet."""


class CursorMoved(Exception):
    """The file's row changed since this watcher read it (another watcher follows the file):
    the transaction is rolled back and the row read again."""


@dataclass(slots=True)
class Counts:
    """What the records read from a file came to, as an ingest run of it counts them."""

    records: int = 0
    stored: int = 0
    duplicates: int = 0
    rejected: int = 0
    unreadable: int = 0
    ends_early: str | None = None
    warnings: list[str] = field(default_factory=list)
    warning_count: int = 0

    def add(self, summary: FileSummary) -> Counts:
        """These counts and a part's (a copy)."""
        warnings = (self.warnings + summary.warnings)[:FIRST_REASONS]
        return Counts(
            self.records + summary.records, self.stored + summary.stored,
            self.duplicates + summary.duplicates, self.rejected + summary.rejected,
            self.unreadable + summary.unreadable, self.ends_early or summary.ends_early,
            warnings, self.warning_count + summary.warning_count,
        )

    def summary(self, path: str, format: str | None, content_hash: str) -> FileSummary:
        """The file as one ingest run would sum it up (for its ``ingested_files`` row)."""
        summary = FileSummary(
            path, format=format, records=self.records, stored=self.stored,
            duplicates=self.duplicates, rejected=self.rejected, content_hash=content_hash,
            unreadable=self.unreadable, ends_early=self.ends_early,
            warnings=list(self.warnings), warning_count=self.warning_count,
        )
        summary.settle_status()
        return summary


@dataclass(slots=True)
class Cursor:
    """One file's row of ``file_offsets``."""

    path: str
    format: str | None = None
    bytes_read: int = 0
    lines_read: int = 0
    mid_line: bool = False
    read_hash: str = EMPTY_HASH
    state: dict[str, Any] = field(default_factory=dict)
    counts: Counts = field(default_factory=Counts)
    size_bytes: int | None = None
    modified_ns: int | None = None
    recorded_hash: str | None = None

    @property
    def mark(self) -> tuple[int, str, str | None]:
        """What tells this row from a later one of the same file (see :func:`save_cursor`)."""
        return (self.bytes_read, self.read_hash, self.recorded_hash)

    def restarted(self) -> Cursor:
        """The cursor of the file read again from its start (it was replaced or truncated)."""
        return Cursor(self.path, recorded_hash=self.recorded_hash)

    def copy(self, **changes: Any) -> Cursor:
        """A copy with some fields changed."""
        return replace(self, **changes)


_COLUMNS = (
    "path, format, bytes_read, lines_read, mid_line, read_hash, reader_state, records, stored, "
    "duplicates, rejected, notes, size_bytes, modified_ns, recorded_hash"
)

_UPDATED = ", ".join(f"{column.strip()} = ?" for column in
                     [*_COLUMNS.split(",")[1:], "updated_at"])
"""The SET list of every column but the path, in :data:`_COLUMNS` order, then updated_at."""


def _notes(counts: Counts) -> str:
    return json.dumps({"unreadable": counts.unreadable, "ends_early": counts.ends_early,
                       "warnings": counts.warnings, "warning_count": counts.warning_count})


def _cursor(row: tuple) -> Cursor:
    (path, format, bytes_read, lines_read, mid_line, read_hash, state, records, stored,
     duplicates, rejected, notes, size_bytes, modified_ns, recorded_hash) = row
    extra = json.loads(notes) if notes else {}
    counts = Counts(int(records), int(stored), int(duplicates), int(rejected),
                    int(extra.get("unreadable", 0)), extra.get("ends_early"),
                    list(extra.get("warnings", [])), int(extra.get("warning_count", 0)))
    return Cursor(path, format, int(bytes_read), int(lines_read), bool(mid_line), read_hash,
                  json.loads(state) if state else {}, counts, size_bytes, modified_ns,
                  recorded_hash)


def load_cursors(connection: duckdb.DuckDBPyConnection) -> dict[str, Cursor]:
    """Every file's cursor, by path."""
    rows = connection.execute(f"SELECT {_COLUMNS} FROM file_offsets").fetchall()
    return {row[0]: _cursor(row) for row in rows}


def load_cursor(connection: duckdb.DuckDBPyConnection, path: str) -> Cursor | None:
    """One file's cursor, if it has one."""
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM file_offsets WHERE path = ?", [path]
    ).fetchall()
    return _cursor(rows[0]) if rows else None


def save_cursor(
    connection: duckdb.DuckDBPyConnection, cursor: Cursor, expected: tuple | None
) -> None:
    """Write the cursor in the caller's transaction. ``expected`` is the :meth:`Cursor.mark`
    of the row when this watcher last wrote or read it (None: no row); another value raises
    :class:`CursorMoved`, so two watchers of one file never both store a part."""
    rows = connection.execute(
        "SELECT bytes_read, read_hash, recorded_hash FROM file_offsets WHERE path = ?",
        [cursor.path],
    ).fetchall()
    found = (int(rows[0][0]), rows[0][1], rows[0][2]) if rows else None
    if found != expected:
        raise CursorMoved(f"{cursor.path}: read by another watcher meanwhile")
    counts = cursor.counts
    values = [cursor.format, cursor.bytes_read, cursor.lines_read, cursor.mid_line,
              cursor.read_hash, json.dumps(cursor.state), counts.records, counts.stored,
              counts.duplicates, counts.rejected, _notes(counts), cursor.size_bytes,
              cursor.modified_ns, cursor.recorded_hash, datetime.now(UTC).replace(tzinfo=None)]
    # An UPDATE of the row found (or an INSERT of a new one), not INSERT OR REPLACE: that cost
    # 2.8 ms a call against 0.5, twice per file of a folder that ofc watch follows.
    if rows:
        connection.execute(f"UPDATE file_offsets SET {_UPDATED} WHERE path = ?",
                           [*values, cursor.path])
    else:
        connection.execute(
            f"INSERT INTO file_offsets ({_COLUMNS}, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [cursor.path, *values])


def ingested_counts(
    connection: duckdb.DuckDBPyConnection, content_hash: str
) -> Counts | None:
    """The counts of the complete ingest of a file with these bytes, if there was one."""
    rows = connection.execute(
        "SELECT records, stored, duplicates, rejected FROM ingested_files "
        "WHERE content_hash = ? AND status = 'complete' ORDER BY ingested_at LIMIT 1",
        [content_hash],
    ).fetchall()
    if not rows:
        return None
    return Counts(*(int(value) for value in rows[0]))


def forget_recorded(
    connection: duckdb.DuckDBPyConnection, path: str, content_hash: str | None
) -> None:
    """Drop the ``ingested_files`` row of an earlier version of a followed file (the watcher
    keeps one row per file, for the file as read so far)."""
    if content_hash is not None:
        connection.execute("DELETE FROM ingested_files WHERE path = ? AND content_hash = ?",
                           [path, content_hash])
