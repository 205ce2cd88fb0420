"""Where the read model reads from: the one small interface, the connection and the reader lock.

Every question of :mod:`pipeline.read` takes a :data:`Database`: a path to a DuckDB file, an open
connection (borrowed as is), or any :class:`Source`. A source only has to open a read-only DuckDB
connection in which the tables of ``schemas/database.md`` are visible by name; a DuckDB file is
one (:class:`DatabaseFile`), and a Parquet lake whose folders DuckDB reads directly can be another,
without any page, report or command changing.

The dashboard holds no long-lived connection: DuckDB lets one process write at a time and a
read-only connection blocks writers, so a terminal ``ofc ingest`` must find the file free between
two queries. :func:`database_state` gives a cheap key that changes whenever the file does, for
caching results until the next ingest.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import duckdb
import polars as pl

from pipeline import store
from pipeline.read.access import WritesForbidden, writes_forbidden

T = TypeVar("T")


@runtime_checkable
class Source(Protocol):
    """Anything the read model can read: it opens read-only DuckDB connections in which the tables
    of ``schemas/database.md`` (hands, seats, evaluations, results, matchups, ...) are visible."""

    @property
    def label(self) -> str:
        """A short name for messages and cache keys (a path, a lake folder)."""
        ...

    def exists(self) -> bool:
        """True when there is something to open at all."""
        ...

    def state(self) -> Hashable:
        """A cheap key that changes whenever the data changes (for caching answers)."""
        ...

    def open(self) -> duckdb.DuckDBPyConnection:
        """A new read-only connection; the caller closes it."""
        ...


@dataclass(frozen=True, slots=True)
class DatabaseFile:
    """A DuckDB database file written by ``ofc ingest`` (:mod:`pipeline.store`)."""

    path: Path

    @property
    def label(self) -> str:
        """The file's path."""
        return str(self.path)

    def exists(self) -> bool:
        """Whether the file is there."""
        return self.path.exists()

    def state(self) -> Hashable:
        """The file's and its write-ahead log's modification times and sizes."""
        return database_state(self.path)

    def open(self) -> duckdb.DuckDBPyConnection:
        """Open the file read-only, waiting briefly for a writer (or raise DatabaseBusy)."""
        return open_reader(self.path)


Database = str | Path | duckdb.DuckDBPyConnection | Source
"""What every read-model question accepts: a database path, an open connection, or a source."""


def as_source(db: str | Path | Source) -> Source:
    """A path becomes a :class:`DatabaseFile`, or a :class:`~pipeline.read.lake.ParquetLake`
    when it is a lake folder; a source is returned as it is."""
    if isinstance(db, str | Path):
        from pipeline.read.lake import ParquetLake, is_lake

        if is_lake(db):
            return ParquetLake(Path(db))
        return DatabaseFile(Path(db))
    return db


class _ReadersWriter:
    """Many readers or one writer: DuckDB refuses a read-write connection to a file that the same
    process has open read-only (and the reverse), so the Data page's ingest waits for readers."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._readers = 0
        self._writing = False

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._condition:
            while self._writing:
                self._condition.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._condition:
                self._readers -= 1
                self._condition.notify_all()

    @contextmanager
    def write(self, timeout: float) -> Iterator[None]:
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._writing or self._readers:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DatabaseBusy("the dashboard is still reading the database; "
                                       "try again in a moment")
                self._condition.wait(left)
            self._writing = True
        try:
            yield
        finally:
            with self._condition:
                self._writing = False
                self._condition.notify_all()


_PROCESS_LOCK = _ReadersWriter()


# How long a read waits for a writer (a terminal ``ofc ingest``) before giving up.
READ_WAIT_SECONDS = 5.0


# How long an ingest from the dashboard waits for the page views that are reading.
WRITE_WAIT_SECONDS = 30.0


class DatabaseBusy(RuntimeError):
    """Another process is writing the database; try again in a moment."""


def database_state(path: str | Path) -> tuple[int, int, int, int]:
    """A key that changes whenever the database file (or its write-ahead log) changes; for a
    lake folder, whenever a build or re-score commits (its manifest is replaced)."""
    path = Path(path)
    parts: list[int] = []
    if path.is_dir():
        from pipeline.read.lake import MANIFEST_NAME

        path = path / MANIFEST_NAME
    for candidate in (path, path.with_name(path.name + ".wal")):
        try:
            stat = candidate.stat()
        except OSError:
            parts.extend((0, 0))
        else:
            parts.extend((stat.st_mtime_ns, stat.st_size))
    return (parts[0], parts[1], parts[2], parts[3])


_BEFORE_WRITE: list[Callable[[], None]] = []


def before_write(release: Callable[[], None]) -> None:
    """Register a function that closes the calling thread's open read connection (if any).

    :func:`database_lock` calls them first, so a page that read the database can then write.
    """
    if release not in _BEFORE_WRITE:
        _BEFORE_WRITE.append(release)


@contextmanager
def database_lock() -> Iterator[None]:
    """Write access for this process: waits until no connection of the dashboard is open.

    The Data and Record pages ingest under it. The calling thread's own read connection is closed
    first (see :func:`before_write`); other page views finish their reads. A read-only dashboard
    (:mod:`pipeline.read.access`) refuses with :class:`~pipeline.read.access.WritesForbidden`.
    """
    if writes_forbidden():
        raise WritesForbidden("this dashboard is read-only (ofc dashboard --read-only): "
                              "nothing can be written from it")
    for release in _BEFORE_WRITE:
        release()
    with _PROCESS_LOCK.write(timeout=WRITE_WAIT_SECONDS):
        yield


def open_reader(path: str | Path) -> duckdb.DuckDBPyConnection:
    """Open ``path`` read-only (waiting briefly for a writer), or raise DatabaseBusy."""
    try:
        return store.connect(path, read_only=True, wait_seconds=READ_WAIT_SECONDS)
    except duckdb.IOException as error:
        raise DatabaseBusy(
            f"the database {path} is being written by another process; refresh in a moment"
        ) from error


@contextmanager
def read_access() -> Iterator[None]:
    """Hold read access for this process (while a connection of ours is open)."""
    with _PROCESS_LOCK.read():
        yield


@contextmanager
def reading(db: Database) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection for one question: borrowed as is, or opened and closed here."""
    if isinstance(db, duckdb.DuckDBPyConnection):
        yield db
        return
    source = as_source(db)
    with _PROCESS_LOCK.read():
        connection = source.open()
        try:
            yield connection
        finally:
            connection.close()


_ASKED_FOR: contextvars.ContextVar[int | None] = contextvars.ContextVar("asked_for", default=None)


def asked_for(connection: duckdb.DuckDBPyConnection) -> int:
    """Whose question ``connection`` answers: itself, or, inside a question asked alongside
    (:func:`asked_alongside`), the connection it is a second cursor of (the same database, so
    what was found out about one holds for the other, such as whether the kept totals are
    current)."""
    return _ASKED_FOR.get() or id(connection)


@contextmanager
def asked_alongside(connection: duckdb.DuckDBPyConnection,
                    question: Callable[[duckdb.DuckDBPyConnection], T]) -> Iterator[Callable[[], T]]:
    """Ask ``question`` on a second cursor of ``connection`` in a background thread while the
    block asks its own questions; the block gets a function that waits for the answer (and
    raises what the question raised).

    DuckDB runs a query without holding Python's lock, so on two cores a slow question overlaps
    the others. The thread sees this context's settings (the route, the readiness memory), and
    asks for ``connection`` (:func:`asked_for`). The cursor is the same database (a lake's views
    included), closed when the answer is in.
    """
    context = contextvars.copy_context()
    answer: list[Any] = []
    cursor = connection.cursor()  # made here: a connection is not to be shared by threads

    def for_connection() -> T:
        _ASKED_FOR.set(asked_for(connection))  # in the copied context only
        return question(cursor)

    def ask() -> None:
        try:
            answer.append(context.run(for_connection))
        except BaseException as error:  # handed to the block's thread by result()
            answer.append(error)
        finally:
            cursor.close()

    thread = threading.Thread(target=ask, name="ofc-read-alongside", daemon=True)
    thread.start()

    def result() -> T:
        thread.join()
        if isinstance(answer[0], BaseException):
            raise answer[0]
        return answer[0]

    try:
        yield result
    finally:
        thread.join()


def frame(db: Database, sql: str, params: Sequence[Any] = ()) -> pl.DataFrame:
    with reading(db) as connection:
        return connection.sql(sql, params=list(params)).pl()


def named_frame(db: Database, sql: str, params: dict[str, Any]) -> pl.DataFrame:
    """:func:`frame` of SQL with named parameters (``$name``), such as one list of keys."""
    with reading(db) as connection:
        return connection.sql(sql, params=params).pl()
