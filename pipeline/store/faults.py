"""Storage faults said in words: a full disk, a read-only place, no permission to write.

DuckDB reports these as its own errors (``IOException``, ``TransactionException`` "Failed to
commit: Could not write file ...: No space left on device"), the standard library and pyarrow as
``OSError``. :func:`storage_fault` recognises them, whatever the library, and returns the
sentence a command prints instead of a traceback; :func:`check_writable` proves, before any
work, that a database can take a write (its folder must let DuckDB create the write-ahead log
beside it).

Imports nothing heavy at module level: the command line asks it only once something failed.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["NotWritable", "StorageFault", "check_writable", "storage_fault"]

_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_READ_ONLY_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}
_FULL_WORDS = ("No space left on device", "Disk quota exceeded", "File too large")
_READ_ONLY_WORDS = ("Read-only file system", "Permission denied", "Operation not permitted")
_QUOTED_PATH = re.compile(r'(?:file|File|directory)\s+\\?"([^"\\]+)')


@dataclass(frozen=True, slots=True)
class StorageFault:
    """What went wrong with the storage: ``kind`` is ``full`` or ``read-only``; ``path`` the
    file named (when known); ``detail`` the system's words."""

    kind: str
    path: str | None
    detail: str

    def sentence(self) -> str:
        """The message for a person: what happened, what was kept, what to do."""
        where = f" {self.path}" if self.path else ""
        if self.kind == "full":
            return (f"the disk is full: could not write{where} ({self.detail}). The unfinished "
                    "step was undone and what was complete before it is kept; free some space "
                    "and run the command again")
        return (f"cannot write{where}: the place is read-only or not yours ({self.detail}). "
                "Nothing was changed; use a folder you may write to (DuckDB also writes a "
                "'.wal' file beside the database), or open the database read-only")


def storage_fault(error: BaseException) -> StorageFault | None:
    """The storage fault behind ``error`` (looking through its causes), or None when it is
    something else."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        fault = _fault_of(current)
        if fault is not None:
            return fault
        current = current.__cause__ or current.__context__
    return None


def _fault_of(error: BaseException) -> StorageFault | None:
    if isinstance(error, NotWritable) and error.fault is not None:
        return error.fault
    if isinstance(error, OSError) and error.errno is not None:
        path = error.filename if isinstance(error.filename, str) else None
        detail = os.strerror(error.errno)
        if error.errno in _FULL_ERRNOS:
            return StorageFault("full", path, detail)
        if error.errno in _READ_ONLY_ERRNOS:
            return StorageFault("read-only", path, detail)
    text = str(error)
    if not isinstance(error, OSError) and not type(error).__module__.startswith(
            ("duckdb", "_duckdb", "pyarrow")):
        return None
    match = _QUOTED_PATH.search(text)
    path = match.group(1) if match else None
    for words in _FULL_WORDS:
        if words in text:
            return StorageFault("full", path, words)
    for words in _READ_ONLY_WORDS:
        if words in text:
            return StorageFault("read-only", path, words)
    return None


class NotWritable(OSError):
    """A database cannot take a write (see :func:`check_writable`); ``str()`` says why and
    ``fault`` is the storage fault, when it is one."""

    def __init__(self, message: str, fault: StorageFault | None = None) -> None:
        super().__init__(message)
        self.fault = fault


def check_writable(database: str | os.PathLike[str]) -> None:
    """Raise :class:`NotWritable` unless ``database`` (existing or not) can take a write: one
    small transaction is written and committed, which makes DuckDB write its log beside the
    file. For commands that work long before they write (``ofc analyze``), so a read-only
    place is found before the work, not after it."""
    import duckdb

    from pipeline import store

    path = Path(database)
    try:
        connection = store.connect(path)
    except (duckdb.Error, OSError) as error:
        raise NotWritable(_not_writable(path, error), storage_fault(error)) from error
    try:
        connection.execute("BEGIN TRANSACTION")
        connection.execute("CREATE TABLE IF NOT EXISTS _ofc_write_check (checked BOOLEAN)")
        connection.execute("DROP TABLE _ofc_write_check")
        connection.execute("COMMIT")
    except (duckdb.Error, OSError) as error:
        raise NotWritable(_not_writable(path, error), storage_fault(error)) from error
    finally:
        connection.close()


def _not_writable(path: Path, error: BaseException) -> str:
    fault = storage_fault(error)
    if fault is not None:
        return fault.sentence()
    return f"cannot write {path}: {error}"
