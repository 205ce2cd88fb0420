"""Following folders: hand histories ingested while they are being written (``ofc watch``).

A :class:`Watcher` looks at every hand-history file under its folders (recursively, the names of
the format registry, plain or gzip) whenever a file event wakes it (``watchdog``) and at least
every ``interval`` seconds (polling: network drives send no events). For each file it reads what
is new since the last time, a part at a time, and stores each part as **one ingest
transaction** (validated, re-scored, deduplicated, quarantined exactly as ``ofc ingest`` does)
in which the file's offset (:mod:`pipeline.ingest.offsets`) is written too. So a watcher killed
at any moment loses nothing and, restarted, reads nothing twice.

What is read, and when (a file's *quiet time* is how long it has not changed):

* only whole lines: a half-written last line waits until its newline comes, or until the file
  has been quiet for ``idle`` seconds (then it is read as it is, as ``ofc ingest`` would);
* only whole records: a poker-arena hand once every seat is scored; a boards-CSV hand once the
  next hand's first row shows it is over, or once the file has been quiet for ``settle``
  seconds (:mod:`pipeline.formats.follow`); a canonical line at once. A record the writer has
  not finished is never quarantined before the file has been idle;
* a file whose read part changed (replaced by another, truncated, rewritten) is read again
  from its start: hands already stored count as duplicates, edited ones as conflicts, as when
  ``ofc ingest`` reads a changed file;
* a file that an ingest has already read completely (same bytes) is followed from its end;
* a gzip file is read once it has been idle (its end cannot be read while it is written).

Once a file has been read to its end and is quiet, it gets its ``ingested_files`` row, as after
``ofc ingest`` of it (counts for the whole file), so the database ends as one ingest of the
final files would leave it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from pipeline.formats import FORMATS, FormatError, detect_format, format_of_lines, sample_lines
from pipeline.formats.follow import Follow, FollowMode
from pipeline.formats.poker_arena import game_from_file_name, infer_game, resolve_game
from pipeline.formats.source import collector_paused, open_binary
from pipeline.ingest.aggregates import Deferral
from pipeline.ingest.batches import (
    DEFAULT_BATCH_SIZE,
    BatchBuilder,
    PreparedBatch,
    Reject,
    prepare_canonical,
)
from pipeline.ingest.driver import bulk_run
from pipeline.ingest.errors import DatabaseError, IngestError
from pipeline.ingest.offsets import (
    Cursor,
    CursorMoved,
    forget_recorded,
    ingested_counts,
    load_cursor,
    load_cursors,
    save_cursor,
)
from pipeline.ingest.paths import expand_paths, file_hash, is_hand_file
from pipeline.ingest.sessions import (
    DEFAULT_SESSION_GAP_MINUTES,
    defer_sessions,
    finish_waiting_sessions,
    refresh_sessions,
)
from pipeline.ingest.summary import MAX_STORED_REJECTS, FileSummary
from pipeline.ingest.tail import Part, ReadPrefix, is_compressed, read_part
from pipeline.ingest.writer import (
    Writer,
    finish_load,
    finish_source,
    open_check,
    resolve_rejects,
    write_batch,
)
from pipeline.records.rules_file import RulesResolver
from pipeline.rules.ruleset import RuleSet
from pipeline.store.faults import storage_fault

__all__ = [
    "DEFAULT_IDLE_SECONDS",
    "DEFAULT_INTERVAL",
    "DEFAULT_SETTLE_SECONDS",
    "WatchOptions",
    "WatchStatus",
    "Watcher",
]

DEFAULT_INTERVAL = 1.0
"""Seconds between two looks at every file (file events wake the watcher sooner)."""

DEFAULT_SETTLE_SECONDS = 5.0
"""A file quiet this long has its last record taken when it looks whole (a boards CSV's last
hand, whose end only the next hand's first row shows otherwise)."""

DEFAULT_IDLE_SECONDS = 30.0
"""A file quiet this long is read to its very end, half-written last line and unfinished hand
included, as ``ofc ingest`` would read it."""

PART_BYTES = 32 << 20
"""About how much of a file one part (one transaction) holds: with :data:`PART_LINES`, about an
ingest batch (catching up with a 50,000-hand file took 1.4-1.5x longer in parts of 8 MiB, each
transaction's fixed costs paid four times as often, for 120 MB less memory at its peak)."""

PART_LINES = DEFAULT_BATCH_SIZE
"""Most lines in one part."""

EVENT_DELAY = 0.1
"""After a file event, how long to wait for the rest of a burst of writes before reading."""

_MODE_ORDER = {FollowMode.OPEN: 0, FollowMode.SETTLED: 1, FollowMode.FINAL: 2}


@dataclass(frozen=True, slots=True)
class WatchOptions:
    """How a :class:`Watcher` reads: the same choices as ``ofc ingest`` (rules, format, game,
    session gap), and its timing (see the module documentation)."""

    rules: RuleSet | None = None
    format: str | None = None
    game: str | None = None
    session_gap: float = DEFAULT_SESSION_GAP_MINUTES
    interval: float = DEFAULT_INTERVAL
    settle: float = DEFAULT_SETTLE_SECONDS
    idle: float = DEFAULT_IDLE_SECONDS
    part_bytes: int = PART_BYTES


@dataclass(slots=True)
class WatchStatus:
    """What the watcher has done: the one-line status ``ofc watch`` shows."""

    files: int = 0
    hands_in_database: int | None = None
    new_hands: int = 0
    records: int = 0
    rejected: int = 0
    last_hand_played: datetime | None = None
    """Start time (UTC) of the latest new hand that has one."""
    last_hand_stored: datetime | None = None
    """When (local time) this watcher last stored a new hand."""
    waiting: dict[str, str] = field(default_factory=dict)
    """Files whose records cannot be read yet, and why (the format or game is not known...)."""
    not_stored: int = 0
    """Parts that could not be stored (a full disk, say): rolled back, read again next time."""

    def line(self) -> str:
        """``following 3 files · 1,204 hands stored · 57 new · last hand 2026-11-01 20:24:41 UTC``"""
        parts = [f"following {self.files:,} file{'s' if self.files != 1 else ''}"]
        if self.hands_in_database is not None:
            parts.append(f"{self.hands_in_database:,} hands stored")
        parts.append(f"{self.new_hands:,} new")
        if self.rejected:
            parts.append(f"{self.rejected:,} quarantined")
        if self.last_hand_played is not None:
            parts.append(f"last hand {self.last_hand_played:%Y-%m-%d %H:%M:%S} UTC")
        elif self.last_hand_stored is not None:
            parts.append(f"last hand stored {self.last_hand_stored:%H:%M:%S}")
        if self.waiting:
            first = next(iter(self.waiting.values()))
            parts.append(f"{len(self.waiting)} waiting ({first})")
        if self.not_stored:
            parts.append(f"{self.not_stored:,} part{'s' if self.not_stored != 1 else ''} NOT "
                         "stored (read again next time)")
        return " · ".join(parts)


@dataclass(slots=True)
class _File:
    """One followed file, as this watcher knows it."""

    path: Path
    cursor: Cursor
    stored: tuple | None
    """:attr:`Cursor.mark` of the file's row in the database (None: no row)."""
    prefix: ReadPrefix | None = None
    """The bytes read so far (None: not checked against the file in this process yet)."""
    identity: tuple[int, int, int, int] | None = None
    """(device, inode, size, modification time) when last looked at."""
    checked: tuple[int, int, int, int] | None = None
    """The identity the read part was last checked against."""
    changed_at: float = 0.0
    """When (monotonic) a change was last seen."""
    done: tuple[tuple[int, int, int, int], FollowMode] | None = None
    """(identity, mode) of the last pass that left nothing to do."""
    compressed: bool = False
    open_tail: bool = False
    """The last part left records at its end for later (an unfinished hand)."""
    failed: tuple[int, int, int, int] | None = None
    """The identity at which the file could not be read as a whole (retried once it changes)."""


class Watcher:
    """Follows hand-history files under ``roots`` into ``database`` (see the module
    documentation). :meth:`run` loops until :meth:`request_stop`; :meth:`step` is one pass.

    ``on_status`` gets the :class:`WatchStatus` after each stored part and each pass;
    ``on_message`` gets a line to show for each notable event (a file replaced, a file that
    cannot be read).
    """

    def __init__(
        self,
        roots: list[str | os.PathLike[str]],
        database: str | os.PathLike[str],
        options: WatchOptions | None = None,
        on_status: Callable[[WatchStatus], None] | None = None,
        on_message: Callable[[str], None] | None = None,
    ) -> None:
        self.roots = [Path(root).expanduser() for root in roots]
        self.database = Path(database)
        self.options = options or WatchOptions()
        self.on_status = on_status
        self.on_message = on_message
        self.writer = Writer(self.database, rules=self.options.rules)
        self.resolver = RulesResolver(override=self.options.rules)
        self.game = resolve_game(self.options.game) if self.options.game else None
        self.files: dict[str, _File] = {}
        self.cursors: dict[str, Cursor] = {}
        self.status = WatchStatus()
        self.stop_requested = threading.Event()
        self.wake = threading.Event()
        self._started = False
        self._deferral: Deferral | None = None  # this look's, when it counts its hands at its end
        # with it, the tables whose sessions the look works out at its end
        self._look_tables: set[tuple[str, str | None]] | None = None
        self._said: dict[str, str] = {}
        self._changed: set[str] = set()  # paths file events named since the last pass
        self._changed_lock = threading.Lock()

    # --- the loop --------------------------------------------------------------------------

    def start(self) -> None:
        """Open the database (DatabaseError when it cannot be used) and load the offsets."""
        if self._started:
            return
        open_check(self.writer)
        with self.writer.transaction(release=True) as connection:
            self.cursors = load_cursors(connection)
            self.status.hands_in_database = _hand_count(connection)
            # a look (or a run) that died before its end may have left sessions waiting, and
            # every file may be read to its end already: no later write would find them
            finish_waiting_sessions(connection, self.options.session_gap)
        self._started = True

    def request_stop(self) -> None:
        """Ask :meth:`run` to stop after the part being stored (thread- and signal-safe)."""
        self.stop_requested.set()
        self.wake.set()

    def run(self, once: bool = False) -> WatchStatus:
        """Follow the folders until :meth:`request_stop` (``once``: one pass, then return).

        File events (watchdog) wake the watcher between its looks every ``interval`` seconds;
        where the file system sends none (network drives), the looks alone find the changes.
        """
        self.start()
        observer = None if once else self._observe()
        looked_at = -float("inf")
        try:
            while True:
                changed = self._take_changed()
                full = time.monotonic() - looked_at >= self.options.interval
                try:
                    if full:
                        looked_at = time.monotonic()
                        self.step()
                    else:
                        self.step(only=changed)
                except DatabaseError as error:
                    if once:
                        raise
                    self._say("database", f"{error}; trying again")
                if once or self.stop_requested.is_set():
                    break
                wait = max(0.0, looked_at + self.options.interval - time.monotonic())
                if self.wake.wait(wait):
                    self.wake.clear()
                    self.stop_requested.wait(EVENT_DELAY)  # the rest of a burst of writes
                if self.stop_requested.is_set():
                    break
        finally:
            if observer is not None:
                observer.stop()
                with contextlib.suppress(RuntimeError):
                    observer.join(timeout=5)
            self.writer.close()
        return self.status

    def step(self, only: set[str] | None = None) -> None:
        """One look at every file (``only``: at these paths, named by file events): read and
        store what is new."""
        self.start()
        paths = self._scan() if only is None else self._named(only)
        if only is None:
            self.status.files = len(paths)
        self._deferral = self._deferral_for(paths)
        self._look_tables = set() if self._deferral is not None else None
        try:
            self._follow_each(paths)
            if self._deferral is not None:
                finish_load(self.writer, self._deferral, self._look_tables,
                            self.options.session_gap)
        finally:
            self._deferral = self._look_tables = None
            # let readers (the dashboard) in once the look is over; within it the writer lets
            # go every HOLD_SECONDS (closing after every file cost a checkpoint and a new
            # connection each: about 90 ms a file, most of a folder of small files' time)
            self.writer.close()
        if only is None:
            present = {str(path) for path in paths}
            for key in [key for key in self.files if key not in present]:
                self.cursors[key] = self.files.pop(key).cursor  # as it is, should it come back
                self.status.waiting.pop(key, None)
            self.status.files = len(paths)
        self._report()

    def _deferral_for(self, paths: list[Path]) -> Deferral | None:
        """A deferral for this look when the files with bytes not read yet are, together, a run
        that counts its hands in the aggregates once, at the look's end
        (:func:`~pipeline.ingest.driver.bulk_run`: a first look over a folder of many
        session files); else None (every part counted as it is stored)."""
        files = size = 0
        for path in paths:
            key = str(path)
            file = self.files.get(key)
            cursor = file.cursor if file is not None else self.cursors.get(key)
            try:
                unread = path.stat().st_size - (cursor.bytes_read if cursor is not None else 0)
            except OSError:
                continue
            if unread > 0:
                files += 1
                size += unread
        if files > 1 and bulk_run(size, files, self.status.hands_in_database or 0):
            return Deferral()
        return None

    def _follow_each(self, paths: list[Path]) -> None:
        """:meth:`_follow` each of ``paths`` in turn, saying what went wrong with one and going
        on with the next (a database that cannot be used stops the look)."""
        for path in paths:
            if self.stop_requested.is_set():
                break
            key = str(path)
            file = self.files.get(key)
            if file is None:
                cursor = self.cursors.get(key)
                file = _File(path, cursor or Cursor(key), cursor.mark if cursor else None)
                self.files[key] = file
            try:
                self._follow(file)
            except CursorMoved as moved:
                self._say(key, f"{moved}; reading its offset again")
                self._reload(file)
            except DatabaseError:
                raise
            except (OSError, FormatError) as error:
                fault = storage_fault(error)
                if fault is not None and fault.kind == "full":  # writing failed: as below
                    self.status.not_stored += 1
                    self._say(key, f"could not store what is new in {path}: {fault.sentence()}")
                    self._reload(file)
                    continue
                self._say(key, f"cannot read {path}: {getattr(error, 'strerror', None) or error}")
            except duckdb.Error as error:  # the part is rolled back: read again next time
                self.status.not_stored += 1
                fault = storage_fault(error)
                self._say(key, f"could not store what is new in {path}: "
                               f"{fault.sentence() if fault is not None else error}")
                self._reload(file)

    # --- files ----------------------------------------------------------------------------

    def _scan(self) -> list[Path]:
        """Every hand-history file under the roots, each once, in order."""
        found: dict[Path, None] = {}
        for root in self.roots:
            try:
                for path in expand_paths([root]):
                    found.setdefault(path, None)
            except IngestError as error:
                self._say(str(root), str(error))
        return list(found)

    def _named(self, names: set[str]) -> list[Path]:
        """The hand-history files among paths named by file events, if they are followed (or
        new under a followed folder)."""
        found: dict[Path, None] = {}
        for name in sorted(names):
            path = Path(name)
            if not path.is_file() or not is_hand_file(path):
                continue
            resolved = path.resolve()
            if str(resolved) in self.files or any(
                _inside(resolved, root) for root in self.roots
            ):
                found.setdefault(resolved, None)
        return list(found)

    def _take_changed(self) -> set[str]:
        with self._changed_lock:
            changed, self._changed = self._changed, set()
        return changed

    def _follow(self, file: _File) -> None:
        """Read what is new in one file."""
        try:
            stat = file.path.stat()
        except FileNotFoundError:
            return
        identity = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
        now = time.monotonic()
        if file.identity is None:
            file.changed_at = now - max(0.0, time.time() - stat.st_mtime)
        elif identity != file.identity:
            file.changed_at = now
        file.identity = identity
        quiet = now - file.changed_at
        if quiet >= self.options.idle:
            mode = FollowMode.FINAL
        elif quiet >= self.options.settle:
            mode = FollowMode.SETTLED
        else:
            mode = FollowMode.OPEN
        if file.done == (identity, mode) or file.failed == identity:
            return
        if file.cursor.bytes_read == 0 or file.checked is None or file.checked[:2] != identity[:2]:
            file.compressed = stat.st_size > 0 and is_compressed(file.path)
        if file.compressed and mode is not FollowMode.FINAL:
            self._wait(file, f"compressed or recoded: read once idle for {self.options.idle:g} s")
            return
        if stat.st_size == 0 or self._unchanged_since_read(file, stat):
            self.status.waiting.pop(str(file.path), None)
            file.done = (identity, mode)
            return
        self._check_read_part(file, identity)
        if file.cursor.format is None and not self._know_format(file, mode):
            return
        if file.cursor.format == "poker-arena" and "game" not in file.cursor.state and (
            not self._know_game(file, mode)
        ):
            return
        self.status.waiting.pop(str(file.path), None)
        try:
            if file.stored is None and file.cursor.bytes_read == 0 and (
                mode is not FollowMode.OPEN
            ):
                self._adopt_if_ingested(file, stat, mode)
            finished = self._read(file, stat, mode)
        except FormatError as error:  # a reader gave up on the whole file (no header...)
            self._fail(file, file.cursor.format, error.reason)
            return
        if finished:
            self._record_if_settled(file, stat, mode)
            file.done = (identity, mode)

    def _unchanged_since_read(self, file: _File, stat: os.stat_result) -> bool:
        """True when the file is, to the byte count and modification time, as when its offset
        was written, and that was its end with every record read (nothing to check or read)."""
        cursor = file.cursor
        return (
            file.prefix is None and cursor.bytes_read == stat.st_size
            and cursor.size_bytes == stat.st_size and cursor.modified_ns == stat.st_mtime_ns
            and cursor.recorded_hash == cursor.read_hash
        )

    def _check_read_part(self, file: _File, identity: tuple[int, int, int, int]) -> None:
        """Make sure the file still holds the bytes read; else read it again from its start."""
        cursor = file.cursor
        if cursor.bytes_read == 0:
            file.prefix = file.prefix or ReadPrefix()
            file.checked = identity
            return
        if file.checked == identity and file.prefix is not None:
            return
        same_file = file.checked is not None and file.checked[:2] == identity[:2]
        if (
            file.prefix is not None and same_file and not file.compressed
            and identity[2] >= cursor.bytes_read and file.prefix.still_there(file.path)
        ):
            file.checked = identity
            return
        prefix = ReadPrefix.read(file.path, cursor.bytes_read)
        if prefix is not None and prefix.digest == cursor.read_hash:
            file.prefix = prefix
        else:
            if file.stored is not None or cursor.bytes_read:
                self._say(str(file.path), f"{file.path} was replaced or cut: reading it again "
                          "from its start (hands already stored are not stored twice)",
                          once=False)
            file.cursor = cursor.restarted()
            file.prefix = ReadPrefix()
            file.open_tail = False
        file.checked = identity

    def _know_format(self, file: _File, mode: FollowMode) -> bool:
        """Find the file's format (forced, or voted by its first whole lines); False to wait."""
        if self.options.format is not None:
            file.cursor = file.cursor.copy(format=self.options.format)
            return True
        if mode is FollowMode.FINAL or file.compressed:
            lines, unreadable = sample_lines(file.path, limit=1)
            if not lines and not unreadable:
                self._wait(file, "no hand history in it yet")
                return False
            try:
                file.cursor = file.cursor.copy(format=detect_format(file.path))
            except FormatError as error:
                self._fail(file, None, error.reason)
                return False
            return True
        found = format_of_lines(_whole_lines(file.path))
        if found is None:
            self._wait(file, "format not recognised yet")
            return False
        file.cursor = file.cursor.copy(format=found)
        return True

    def _know_game(self, file: _File, mode: FollowMode) -> bool:
        """The poker-arena game: --variant, the file name, else the log's content (which may
        tell it only later); False to wait."""
        game = self.game or game_from_file_name(file.path)
        if game is None:
            try:
                game = infer_game(file.path)
            except FormatError as error:
                if mode is FollowMode.FINAL:
                    self._fail(file, "poker-arena", error.reason)
                else:
                    self._wait(file, "game not known yet: name the file <game>.jsonl or pass "
                                     "--variant")
                return False
            if game is None and mode is not FollowMode.FINAL:
                self._wait(file, "no hand yet")
                return False
        state = {**file.cursor.state, "game": game}
        file.cursor = file.cursor.copy(state=state)
        return True

    # --- reading parts ----------------------------------------------------------------------

    def _read(self, file: _File, stat: os.stat_result, mode: FollowMode, discard: bool = False,
              ) -> bool:
        """Read and store the file's new parts; True when nothing readable is left."""
        part_bytes = self.options.part_bytes
        with open_binary(file.path) as stream:
            position = -1
            while True:
                if self.stop_requested.is_set():
                    return False
                cursor = file.cursor
                if position != cursor.bytes_read:
                    stream.seek(cursor.bytes_read)
                skipped = b""
                first_line = cursor.lines_read + 1
                if cursor.mid_line:
                    # the last read ended inside a line (taken when the file was idle)
                    following = stream.read(1)
                    if not following:
                        return True
                    if following == b"\n":
                        skipped = following  # only its newline was missing
                    else:
                        stream.seek(cursor.bytes_read)
                        first_line = cursor.lines_read  # the line goes on: same number
                start = cursor.bytes_read + len(skipped)
                part = read_part(stream, start, first_line, part_bytes, PART_LINES,
                                 take_partial=mode is FollowMode.FINAL)
                position = part.end
                if not part.line_starts and part.error is None and not skipped:
                    file.open_tail = False
                    return True
                taken = self._take(file, stat, part, mode if part.at_end else FollowMode.OPEN,
                                   skipped, discard)
                file.open_tail = file.cursor.bytes_read < part.end
                if not taken and not part.at_end:
                    part_bytes *= 2  # one record longer than a part: read a longer one
                    position = -1
                    continue
                part_bytes = self.options.part_bytes
                if part.at_end:
                    return True

    def _take(self, file: _File, stat: os.stat_result, part: Part, mode: FollowMode,
              skipped: bytes, discard: bool) -> bool:
        """Read one part and store its finished records with the new offset, in one
        transaction; False when nothing of it could be taken yet."""
        cursor = file.cursor
        name = str(file.path)
        format_name = cursor.format or "canonical"
        prepared: PreparedBatch | None = None
        resume: int | None = None
        state = cursor.state
        with collector_paused():
            if format_name == "canonical":  # one record per line: every whole line is taken
                if not discard:
                    lines = list(part.lines())
                    if lines:
                        prepared = prepare_canonical(name, lines, self.resolver)
                        prepared.lines = lines
            else:
                spec = FORMATS[format_name]
                if spec.follow is None:
                    raise FormatError(name, f"{format_name} files cannot be followed")
                follow = Follow(mode, part.first_line, dict(cursor.state.get("reader", {})))
                extra = {"game": cursor.state.get("game")} if spec.takes_game else {}
                assert spec.follow is not None
                records = spec.follow(file.path, part.lines(), follow, **extra)
                builder = BatchBuilder(self.resolver)
                for record in records:
                    if not discard:
                        builder.add(record)
                if not follow.finished:  # pragma: no cover - every follow reader sets it
                    raise RuntimeError(f"{format_name} reader did not finish the part")
                resume = follow.resume_line
                state = {**cursor.state, "reader": follow.state}
                if builder.records:
                    prepared = builder.finish()
        if resume is not None and resume <= part.first_line:
            if not skipped:
                return False
            end, lines_read, mid_line = part.start, cursor.lines_read, False
        elif resume is not None:
            end, lines_read, mid_line = part.offset_of(resume), resume - 1, False
        else:
            end = part.end
            lines_read = part.first_line + len(part.line_starts) - 1
            mid_line = part.partial
        assert file.prefix is not None and file.prefix.length == cursor.bytes_read
        prefix = file.prefix.extended(skipped)
        if part.exact:
            prefix = prefix.extended(part.data[: end - part.start])
        else:
            prefix = prefix.extended_from(file.path, part.start, end)
        after = cursor.copy(
            format=format_name, bytes_read=end, lines_read=max(lines_read, 0), mid_line=mid_line,
            read_hash=prefix.digest, state=state, size_bytes=stat.st_size,
            modified_ns=stat.st_mtime_ns,
        )
        if discard:
            file.cursor, file.prefix = after, prefix
            return True
        summary = FileSummary(name, format=format_name)
        touched: set[tuple[str, str | None]] = set()
        committed: list[Callable[[], None]] = []

        def in_transaction(connection: duckdb.DuckDBPyConnection, new_hands: int,
                           duplicates: int) -> None:
            assert prepared is not None
            summary.records, summary.stored, summary.duplicates = (
                prepared.records, new_hands, duplicates)
            for reject in sorted(prepared.rejects, key=lambda reject: reject.line or 0):
                summary.note_reject(reject.line, reject.reason, reject.kind)
            for warning in prepared.warnings or ():
                summary.note_warning(warning)
            after.counts = cursor.counts.add(summary)
            save_cursor(connection, after, file.stored)
            if self._look_tables is None:
                refresh_sessions(connection, touched, self.options.session_gap)
            else:  # a look that works out its sessions at its end
                defer_sessions(connection, touched)
                self._look_tables |= touched
            resolve_rejects(connection)
            if new_hands:
                committed.append(self._new_hands_note(connection, name, part.first_line,
                                                      new_hands))

        if prepared is not None:
            write_batch(self.writer, prepared, touched, in_transaction,
                        reject_room=MAX_STORED_REJECTS - cursor.counts.rejected,
                        deferral=self._deferral)
            for note in committed:  # only now: a commit that fails counts nothing
                note()
            self.status.records += summary.records
            self.status.rejected += summary.rejected
        else:
            with self.writer.transaction() as connection:
                save_cursor(connection, after, file.stored)
        file.cursor, file.prefix = after, prefix
        file.stored = after.mark
        if prepared is not None:
            self._report()
        return True

    def _new_hands_note(self, connection: duckdb.DuckDBPyConnection, path: str,
                        first_line: int, new_hands: int) -> Callable[[], None]:
        """What storing a part's new hands does to the status, to apply once it is committed
        (read inside the transaction: the total and the latest start time)."""
        total, played = connection.execute(
            "SELECT (SELECT count(*) FROM hands), (SELECT max(started_at) FROM hands "
            "WHERE source_path = ? AND source_line >= ?)", [path, first_line],
        ).fetchall()[0]

        def note() -> None:
            self.status.hands_in_database = int(total)
            self.status.new_hands += new_hands
            self.status.last_hand_stored = datetime.now()
            if played is not None and (self.status.last_hand_played is None
                                       or played > self.status.last_hand_played):
                self.status.last_hand_played = played

        return note

    # --- whole files ------------------------------------------------------------------------

    def _adopt_if_ingested(self, file: _File, stat: os.stat_result, mode: FollowMode) -> None:
        """A new file whose bytes an ingest has read completely is followed from its end (its
        records are read for what the reader needs to go on, not stored again)."""
        digest = file_hash(file.path)
        with self.writer.transaction() as connection:
            counts = ingested_counts(connection, digest)
        if counts is None:
            return
        if not self._read(file, stat, mode, discard=True):
            file.cursor = Cursor(str(file.path), format=file.cursor.format,
                                 state={"game": file.cursor.state["game"]}
                                 if "game" in file.cursor.state else {})
            file.prefix = ReadPrefix()
            return
        adopted = file.cursor.copy(counts=counts, recorded_hash=digest)
        with self.writer.transaction() as connection:
            save_cursor(connection, adopted, file.stored)
        file.cursor = adopted
        file.stored = adopted.mark
        self._say(str(file.path), f"{file.path} was already ingested: following it from its end")

    def _record_if_settled(self, file: _File, stat: os.stat_result, mode: FollowMode) -> None:
        """Once a quiet file is read to its end, its ``ingested_files`` row (as one ingest run
        of the whole file would write it), in the transaction that notes it in its offset."""
        cursor = file.cursor
        if mode is FollowMode.OPEN or file.open_tail or not cursor.counts.records:
            return
        if file.compressed:
            digest = file_hash(file.path)
        elif cursor.bytes_read == stat.st_size:
            digest = cursor.read_hash
        else:
            return
        if digest == cursor.recorded_hash:
            return
        summary = cursor.counts.summary(str(file.path), cursor.format, digest)
        after = cursor.copy(recorded_hash=digest)

        def then(connection: duckdb.DuckDBPyConnection) -> None:
            forget_recorded(connection, str(file.path), cursor.recorded_hash)
            save_cursor(connection, after, file.stored)

        finish_source(self.writer, summary, stat.st_size, set(), self.options.session_gap,
                      then=then, run_tables=self._look_tables)
        file.cursor = after
        file.stored = after.mark

    def _fail(self, file: _File, format_name: str | None, reason: str) -> None:
        """The file cannot be read as a whole (unknown format, game not known, no header...):
        a file reject and an ``ingested_files`` row, as ``ofc ingest`` records it; tried again
        once the file changes."""
        file.failed = file.identity
        digest = file_hash(file.path)
        key = str(file.path)
        self._wait(file, reason)
        if digest == file.cursor.recorded_hash:
            return
        summary = FileSummary(key, format=format_name, status="failed", message=reason,
                              content_hash=digest)
        summary.note_reject(None, reason, "file")
        after = file.cursor.copy(recorded_hash=digest, format=None)
        size = file.identity[2] if file.identity else None
        before = file.cursor.recorded_hash

        def then(connection: duckdb.DuckDBPyConnection) -> None:
            forget_recorded(connection, key, before)
            save_cursor(connection, after, file.stored)

        finish_source(self.writer, summary, size, set(), self.options.session_gap,
                      [Reject(key, None, None, reason, "", "file")], then=then,
                      run_tables=self._look_tables)
        file.cursor = after
        file.stored = after.mark
        self._say(key, f"{file.path}: {reason}")

    def _reload(self, file: _File) -> None:
        """Read the file's offset again (another watcher moved it)."""
        with self.writer.transaction(release=True) as connection:
            cursor = load_cursor(connection, str(file.path))
        file.cursor = cursor or Cursor(str(file.path))
        file.stored = cursor.mark if cursor else None
        file.prefix = None
        file.checked = None
        file.done = None

    # --- telling -----------------------------------------------------------------------------

    def _wait(self, file: _File, reason: str) -> None:
        self.status.waiting[str(file.path)] = reason

    def _say(self, key: str, message: str, once: bool = True) -> None:
        """Pass a message on (``once``: not again while it stays the same for ``key``)."""
        if once and self._said.get(key) == message:
            return
        self._said[key] = message
        if self.on_message is not None:
            self.on_message(message)

    def _report(self) -> None:
        if self.on_status is not None:
            self.on_status(self.status)

    def _observe(self) -> Any:
        """A watchdog observer that wakes the loop on changes to hand-history files (None when
        file events are not available: the looks every ``interval`` seconds still find them)."""
        try:
            from watchdog.events import FileSystemEvent, FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:  # pragma: no cover - watchdog is a dependency
            return None
        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                for name in (event.src_path, getattr(event, "dest_path", "")):
                    path = os.fsdecode(name) if name else ""
                    if path and is_hand_file(Path(path)):
                        with watcher._changed_lock:
                            watcher._changed.add(path)
                        watcher.wake.set()

        observer = Observer()
        handler = Handler()
        try:
            for root in self.roots:
                if root.is_dir():
                    observer.schedule(handler, str(root), recursive=True)
                elif root.is_file():
                    observer.schedule(handler, str(root.parent), recursive=False)
            observer.start()
        except OSError as error:  # e.g. too many inotify watches
            self._say("events", f"no file events ({error}): looking every "
                                f"{self.options.interval:g} s")
            return None
        return observer


def _inside(path: Path, root: Path) -> bool:
    """Whether a file is under a followed folder (not in a hidden folder of it), or is the
    followed file itself."""
    try:
        base = root.resolve()
    except OSError:
        return False
    if path == base:
        return True
    try:
        parts = path.relative_to(base).parts
    except ValueError:
        return False
    return not any(part.startswith(".") for part in parts)


def _hand_count(connection: duckdb.DuckDBPyConnection) -> int:
    return int(connection.execute("SELECT count(*) FROM hands").fetchall()[0][0])


def _whole_lines(path: Path, limit: int = 50, max_bytes: int = 1 << 20) -> list[str]:
    """Up to ``limit`` non-blank whole lines from the file's start that read as text."""
    lines: list[str] = []
    with open_binary(path) as stream:
        part = read_part(stream, 0, 1, max_bytes, limit * 4, take_partial=False)
    for item in part.lines():
        if type(item) is not tuple:
            continue
        try:
            text = item[1].decode("utf-8").lstrip("\ufeff")  # type: ignore[index]
        except UnicodeDecodeError:
            continue
        if text.strip():
            lines.append(text)
            if len(lines) >= limit:
                break
    return lines

