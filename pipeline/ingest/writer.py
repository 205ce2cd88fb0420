"""The writer: the only code that writes hand data into the database.

:class:`Writer` holds the write connection (for at most :data:`HOLD_SECONDS` at a time, then
lets readers in) and runs transactions on it. In those transactions:

* :func:`write_batch` writes a prepared batch: its hands classified against stored ones (new,
  duplicate, or conflict), the new hands inserted into every hand table, the rejects inserted;
* :func:`insert_rejects` adds rejects not stored yet (keyed by path, line, reason and raw text);
* :func:`finish_source` closes a source: its file-level rejects, its tables' sessions and its
  ``ingested_files`` row; :func:`already_ingested` asks whether a file's bytes were ingested.

Each batch is one transaction covering every table, so a process killed mid-ingest leaves
whole batches only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import store
from pipeline.formats.base import clip_raw
from pipeline.ingest.aggregates import Deferral, add_hands, catch_up, defer_hands
from pipeline.ingest.batches import Candidate, PreparedBatch, Reject
from pipeline.ingest.errors import DatabaseError
from pipeline.ingest.sessions import defer_sessions, refresh_sessions
from pipeline.ingest.summary import FileSummary
from pipeline.ingest.tables import TABLE_SCHEMAS
from pipeline.rules.ruleset import RuleSet, ruleset_to_mapping
from pipeline.store.aggregates import aggregates_current

__all__ = [
    "BUILD_MEMORY_LIMIT",
    "CHECKPOINT_THRESHOLD",
    "HOLD_SECONDS",
    "WRITER_MEMORY_LIMIT",
    "WRITE_WAIT_SECONDS",
    "Writer",
    "already_ingested",
    "conflict_reason",
    "finish_load",
    "finish_source",
    "insert_rejects",
    "open_check",
    "record_rule_set",
    "rule_set_meta",
    "stored_hands",
    "stored_raw_and_key",
    "write_batch",
]

WRITE_WAIT_SECONDS = 120.0
"""How long a batch waits for another process (a reader) to let go of the database."""

HOLD_SECONDS = 1.5
"""How long the writer keeps the database between batches before letting readers in."""

WRITER_MEMORY_LIMIT = "600MB"
"""DuckDB's memory limit for the writer (its default, 80 % of the machine, lets its buffer cache
grow past what an ingest needs)."""

BUILD_MEMORY_LIMIT = "1400MB"
"""DuckDB's memory limit while a bulk load builds the aggregates at its end (the facts of every
stored board at once: at 1 M hands they did not fit in :data:`WRITER_MEMORY_LIMIT`)."""

CHECKPOINT_THRESHOLD = "2GB"
"""Write-ahead log size that forces a checkpoint while the writer holds the database (so in
practice it checkpoints when it lets go)."""


class Writer:
    """Writes batches: one transaction each, on a write connection held for at most
    :data:`HOLD_SECONDS` at a time and then closed, so the dashboard's short read-only
    connections get in between batches. While it is held, committed batches wait in DuckDB's
    write-ahead log and are checkpointed together when it closes (one checkpoint per batch
    costs about 40 % more)."""

    def __init__(
        self, database: str | os.PathLike[str], hold_seconds: float = HOLD_SECONDS,
        rules: RuleSet | None = None,
    ) -> None:
        """``rules``: the rule set that overrides every record's (``--rules``), kept with each
        batch it scores (:func:`record_rule_set`)."""
        self.database = Path(database)
        self.hold_seconds = hold_seconds
        self.rules = rules
        self._connection: duckdb.DuckDBPyConnection | None = None
        self._opened = 0.0

    def connect(self) -> duckdb.DuckDBPyConnection:
        """Open a new connection for writing (waiting for readers), or raise DatabaseError."""
        try:
            return store.connect(self.database, wait_seconds=WRITE_WAIT_SECONDS)
        except duckdb.Error as error:
            raise DatabaseError(f"cannot use database {self.database}: {error}") from error
        except OSError as error:
            raise DatabaseError(
                f"cannot use database {self.database}: {error.strerror or error}"
            ) from error

    @contextlib.contextmanager
    def transaction(self, release: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """One transaction on the held connection (opened when needed): committed when the
        block ends, rolled back (and the connection closed) when it raises. The connection is
        closed after the commit once held ``hold_seconds``, or at once with ``release``."""
        if self._connection is None:
            connection = self.connect()
            try:
                connection.execute(f"SET checkpoint_threshold = '{CHECKPOINT_THRESHOLD}'")
                connection.execute(f"SET memory_limit = '{WRITER_MEMORY_LIMIT}'")
            except BaseException:
                connection.close()
                raise
            self._connection = connection
            self._opened = time.monotonic()
        connection = self._connection
        try:
            connection.execute("BEGIN TRANSACTION")
            yield connection
            connection.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                connection.execute("ROLLBACK")
            self.close()
            raise
        if release or time.monotonic() - self._opened >= self.hold_seconds:
            self.close()

    def close(self) -> None:
        """Close the held connection (checkpointing what it wrote), if any."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()



def open_check(writer: Writer, probe: bool = True) -> None:
    """Fail early (DatabaseError) when the database cannot take a write: it cannot be opened
    for writing, or (``probe``: one small transaction is committed) its folder refuses the
    write-ahead log (a read-only place), before any file is read."""
    from pipeline.store.faults import NotWritable, check_writable

    writer.connect().close()
    if not probe:
        return
    try:
        check_writable(writer.database)
    except NotWritable as error:
        raise DatabaseError(str(error)) from error


# --- batches -----------------------------------------------------------------------------------


def write_batch(
    writer: Writer, prepared: PreparedBatch, tables_touched: set[tuple[str, str | None]],
    then: Callable[[duckdb.DuckDBPyConnection, int, int], None] | None = None,
    reject_room: int | None = None, deferral: Deferral | None = None,
) -> tuple[int, int]:
    """One transaction: classify against stored hands, insert new ones and the rejects.

    A record whose key is stored (or came earlier in the batch) with other content becomes a
    conflict reject, added to ``prepared.rejects``. The (site, table) of the batch's hands are
    added to ``tables_touched``. ``then(connection, new_hands, duplicates)`` runs last, in the
    same transaction (``ofc watch`` stores how far it has read a file there). ``reject_room``:
    how many more rejects of this file may be stored (the first ones in line order; conflicts
    are always stored; see :data:`~pipeline.ingest.summary.MAX_STORED_REJECTS`); None: all.
    ``deferral``: a bulk load's, whose new hands are counted in the aggregates when its
    source is closed (:func:`~pipeline.ingest.aggregates.defer_hands`), not now.
    Returns the number of new hands stored and of duplicates."""
    rejects = prepared.rejects
    frames = prepared.tables()
    hands = frames.get("hands")
    batch_hands = 0 if hands is None else hands.num_rows
    with writer.transaction() as connection:
        # Stored hands with a key of this batch: duplicates, or conflicts.
        stored: dict[int, tuple[str, str, int]] = {}
        duplicates = 0
        if batch_hands:
            connection.register("_batch_hands", hands)
            matches = connection.execute(
                "SELECT b.hand_key, b.content_hash, b.site, b.hand_id, b.source_path, "
                "b.source_line, b.match_id, h.match_id, h.content_hash, h.source_path, "
                "h.source_line FROM _batch_hands b JOIN hands h ON h.hand_key = b.hand_key"
            ).fetchall()
            tables_touched.update(connection.execute(
                "SELECT DISTINCT site, table_name FROM _batch_hands"
            ).fetchall())
            connection.unregister("_batch_hands")
            for key, digest, site, hand_id, path, line, match, stored_match, *reference in matches:
                stored[key] = (reference[0], reference[1], reference[2])
                candidate = Candidate(key, digest, site, hand_id, path, line, None)
                duplicates += _compare(candidate, stored[key], rejects, prepared,
                                       (match, stored_match))
        if prepared.later:
            # A later record of a key is compared with what is stored, else with the
            # batch's first record of the key.
            firsts = _first_records(hands, {candidate.key for candidate in prepared.later})
            for candidate in prepared.later:
                reference = stored.get(candidate.key) or firsts[candidate.key]
                duplicates += _compare(candidate, reference, rejects, prepared)
        new_hands = batch_hands - len(stored)
        if new_hands and not stored:  # all new: nothing to filter
            for name, frame in frames.items():
                store.insert_frame(connection, name, frame)
        elif new_hands:
            keys = hands.column("hand_key")
            new_keys = pc.filter(keys, pc.invert(pc.is_in(
                keys, value_set=pa.array(list(stored), pa.int64()))))
            connection.register("_new_keys", pa.table({"hand_key": new_keys}))
            for name, frame in frames.items():
                store.insert_frame(connection, name, frame, only_keys="_new_keys")
            connection.unregister("_new_keys")
        if deferral is None:
            add_hands(connection, frames, stored)
        else:
            defer_hands(connection, frames, stored, deferral)
        insert_rejects(connection, rejects if reject_room is None
                       else _within_room(rejects, reject_room))
        if writer.rules is not None and new_hands:
            record_rule_set(connection, writer.rules)
        if then is not None:
            then(connection, new_hands, duplicates)
    prepared.frames = None
    prepared.discard_spill()
    return new_hands, duplicates


def rule_set_meta(rules: RuleSet) -> tuple[str, str]:
    """The ``meta`` key and value that keep a rule set's definition (``ruleset:<name>``, the
    full rules mapping as JSON): the same text in a database and in a lake's manifest."""
    return (store.RULESET_META_PREFIX + rules.name,
            json.dumps(ruleset_to_mapping(rules), ensure_ascii=False, sort_keys=True))


def record_rule_set(connection: duckdb.DuckDBPyConnection, rules: RuleSet) -> None:
    """Keep the definition of a rule set the database scores with, under ``ruleset:<name>`` in
    ``meta``: a rules file given with ``--rules`` is not found again by name, and a match is
    settled by its rule set's cap and stake (the read model rebuilds it from this)."""
    store.set_meta(connection, *rule_set_meta(rules))


def _compare(
    candidate: Candidate, reference: tuple[str, str, int], rejects: list[Reject],
    prepared: PreparedBatch, matches: tuple[str | None, str | None] | None = None,
) -> int:
    """1 when the candidate duplicates the reference; else add a conflict reject, 0.
    ``matches``: the candidate's match id and the stored hand's, when known."""
    digest, path, line = reference
    if digest == candidate.digest:
        return 1
    where = f"{path}:{line}"
    rejects.append(Reject(
        candidate.path, candidate.line, candidate.hand_id,
        conflict_reason(candidate.hand_id, candidate.site, where, candidate.path, candidate.line,
                        matches),
        prepared.raw_text(candidate.line), "conflict", where,
    ))
    return 0


def _match_text(match_id: str | None) -> str:
    return "in no match" if match_id is None else f"in match {match_id!r}"


def conflict_reason(hand_id: str, site: str, where: str, path: str, line: int,
                    matches: tuple[str | None, str | None] | None = None) -> str:
    """Why a record is a conflict: its key is stored from ``where`` (``path:line``) with other
    content. When the two differ in their match (``matches``: this record's match id, the
    stored hand's), the reason says so: a hand belongs to one match, and the stored one stays."""
    if matches is not None and matches[0] != matches[1]:
        return (
            f"conflict: hand {hand_id!r} of site {site!r} is already stored from {where} "
            f"{_match_text(matches[1])}; this record ({path}:{line}) puts it "
            f"{_match_text(matches[0])}"
        )
    return (
        f"conflict: hand {hand_id!r} of site {site!r} is already stored from {where} with "
        f"different content (this record: {path}:{line})"
    )


def _first_records(hands: pa.Table, keys: set[int]) -> dict[int, tuple[str, str, int]]:
    """(content hash, path, line) of the batch's hands with one of ``keys``."""
    selected = hands.filter(pc.is_in(hands.column("hand_key"),
                                     value_set=pa.array(list(keys), pa.int64())))
    return {
        key: (digest, path, line)
        for key, digest, path, line in zip(
            selected.column("hand_key").to_pylist(), selected.column("content_hash").to_pylist(),
            selected.column("source_path").to_pylist(), selected.column("source_line").to_pylist(),
            strict=True)
    }


# --- rejects and files -------------------------------------------------------------------------


def _reject_key(path: str, line: int | None, reason: str, raw: str) -> str:
    text = f"{path}\x1f{line}\x1f{reason}\x1f{raw}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def stored_raw_and_key(reject: Reject) -> tuple[str, str]:
    """A reject's raw text as stored (clipped) and its idempotence key (``reject_key``)."""
    raw = clip_raw(reject.raw or "")
    return raw, _reject_key(reject.path, reject.line, reject.reason, raw)


def _rows_table(name: str, rows: list[tuple]) -> pa.Table:
    """Row tuples (in the table's column order) as an Arrow table: transposed in one go."""
    schema = TABLE_SCHEMAS[name]
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    return pa.Table.from_arrays(
        [pa.array(values, type=field.type) for values, field in zip(columns, schema, strict=True)],
        schema=schema,
    )


def _within_room(rejects: Sequence[Reject], room: int) -> list[Reject]:
    """The conflicts, and the first ``room`` other rejects in line order."""
    others = sorted((reject for reject in rejects if reject.kind != "conflict"),
                    key=lambda reject: reject.line or 0)
    return [*others[:max(0, room)], *(reject for reject in rejects if reject.kind == "conflict")]


def insert_rejects(connection: duckdb.DuckDBPyConnection, rejects: Sequence[Reject]) -> None:
    """Insert rejects that are not stored yet (keyed by path, line, reason and raw text)."""
    if not rejects:
        return
    rows: list[tuple] = []
    now = datetime.now(UTC).replace(tzinfo=None)
    seen: set[str] = set()
    for reject in rejects:
        raw, key = stored_raw_and_key(reject)
        if key in seen:
            continue
        seen.add(key)
        rows.append((reject.path, reject.line, reject.hand_id, reject.reason, raw, now,
                     reject.kind, reject.conflict_with, key, reject.site, None, None))
    connection.register("_frame_rejects", _rows_table("rejects", rows))
    try:
        connection.execute(
            "INSERT INTO rejects BY NAME SELECT f.* FROM _frame_rejects f "
            "ANTI JOIN rejects r ON r.reject_key = f.reject_key"
        )
    finally:
        connection.unregister("_frame_rejects")


RESOLVABLE_KINDS = ("read", "damaged", "invalid", "rules")
"""Reject kinds a stored hand of the same id resolves. A conflict is never resolved this way (its
hand is stored by definition: the other version needs a person), nor a whole-file reject."""


def resolve_rejects(connection: duckdb.DuckDBPyConnection) -> int:
    """Mark open rejects whose hand is now stored as resolved: same hand id, and the same site
    when the reject knows it (a file fixed and ingested again leaves no stale reject beside its
    hand). Returns how many were resolved."""
    kinds = ", ".join(f"'{kind}'" for kind in RESOLVABLE_KINDS)
    open_rejects = connection.execute(
        f"SELECT count(*) FROM rejects WHERE resolved_at IS NULL AND hand_id IS NOT NULL "
        f"AND kind IN ({kinds})"
    ).fetchall()[0][0]
    if not open_rejects:
        return 0
    now = datetime.now(UTC).replace(tzinfo=None)
    resolved = connection.execute(
        f"""
        UPDATE rejects SET resolved_at = ?, resolved_by = found.stored_at
        FROM (
            SELECT r.reject_key, min(h.source_path || ':' || h.source_line) AS stored_at
            FROM rejects r JOIN hands h ON h.hand_id = r.hand_id
                AND (r.site IS NULL OR r.site = h.site)
            WHERE r.resolved_at IS NULL AND r.kind IN ({kinds})
            GROUP BY r.reject_key
        ) found
        WHERE rejects.reject_key = found.reject_key AND rejects.resolved_at IS NULL
        """,
        [now],
    ).fetchall()
    return int(resolved[0][0]) if resolved else 0


def _record_file(
    connection: duckdb.DuckDBPyConnection, summary: FileSummary, size: int | None
) -> None:
    connection.execute(
        "INSERT INTO ingested_files BY NAME SELECT ? AS path, ? AS content_hash, ? AS format, "
        "? AS size_bytes, ? AS ingested_at, ? AS records, ? AS stored, ? AS duplicates, "
        "? AS rejected, ? AS status, ? AS message",
        [summary.path, summary.content_hash or "", summary.format, size,
         datetime.now(UTC).replace(tzinfo=None), summary.records, summary.stored,
         summary.duplicates, summary.rejected, summary.status, summary.message],
    )


def finish_source(
    writer: Writer,
    summary: FileSummary,
    size: int | None,
    touched: set[tuple[str, str | None]],
    session_gap: float,
    file_rejects: Sequence[Reject] = (),
    then: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
    deferral: Deferral | None = None,
    run_tables: set[tuple[str, str | None]] | None = None,
) -> None:
    """Close a source: its file-level rejects, affected sessions, the aggregates its batches
    left out (``deferral``, a bulk load's: :func:`~pipeline.ingest.aggregates.catch_up`) and
    its ingested_files row (``then(connection)`` runs last, in the same transaction).
    ``run_tables``: the source is one of a run that works out its sessions once, after its
    last source (:func:`finish_load`): its touched tables are added to them and its sessions
    deferred (:func:`~pipeline.ingest.sessions.defer_sessions`). The
    writer keeps the database as after any transaction (it lets go once it held it
    ``hold_seconds``, and its caller closes it at its end): letting go after every source cost
    a checkpoint and a new connection each, about 90 ms a file, most of the time of a folder of
    small files."""
    with writer.transaction() as connection:
        insert_rejects(connection, file_rejects)
        if run_tables is None:
            refresh_sessions(connection, touched, session_gap)
        else:
            defer_sessions(connection, touched)
            run_tables |= touched
        if deferral is not None and deferral.pending:
            _catch_up(connection, deferral)
        resolve_rejects(connection)
        _record_file(connection, summary, size)
        if then is not None:
            then(connection)


def finish_load(writer: Writer, deferral: Deferral, run_tables: set[tuple[str, str | None]],
                session_gap: float) -> None:
    """Once every source of a load of several is stored, in one transaction: the sessions its
    sources left (``run_tables``, the tables they touched: :func:`finish_source` with
    ``run_tables``; also those of an earlier run that died before its end, even when this one
    touched none), with ``session_gap``, then what they left out of the aggregates
    (``deferral``, shared by its sources, which each closed without catching up), or every
    aggregate when they are out of date and the run stored nothing new (an earlier run that
    died before its end left them so)."""
    with writer.transaction() as connection:
        refresh_sessions(connection, run_tables, session_gap)
        if deferral.pending:
            _catch_up(connection, deferral)
        elif not aggregates_current(connection):
            # an earlier run died before it counted its files, and this one found nothing new
            _catch_up(connection, Deferral(pending=True))


def _catch_up(connection: duckdb.DuckDBPyConnection, deferral: Deferral) -> None:
    connection.execute(f"SET memory_limit = '{BUILD_MEMORY_LIMIT}'")
    try:
        catch_up(connection, deferral)
    finally:
        connection.execute(f"SET memory_limit = '{WRITER_MEMORY_LIMIT}'")


def stored_hands(writer: Writer) -> int:
    """How many hands the database holds."""
    with writer.transaction() as connection:
        return int(connection.execute("SELECT count(*) FROM hands").fetchone()[0])


def already_ingested(writer: Writer, digest: str) -> tuple[str, datetime] | None:
    """Where and when a file with content hash ``digest`` was ingested completely, if it was."""
    with writer.transaction() as connection:
        rows = connection.execute(
            "SELECT path, ingested_at FROM ingested_files "
            "WHERE content_hash = ? AND status = 'complete' ORDER BY ingested_at LIMIT 1",
            [digest],
        ).fetchall()
    return (rows[0][0], rows[0][1]) if rows else None
