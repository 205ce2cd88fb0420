"""``ofc lake build``: hand-history files into a Parquet lake, commit by commit.

The same promises as ``ofc ingest`` (docs/lake.md), on either engine:

1. the paths are expanded as ingest expands them (:func:`pipeline.ingest.paths.expand_paths`)
   and every file is scanned (content hash, format, split points);
2. files are grouped into commits of about ``commit_bytes``; for each commit, under the lake's
   lock (:meth:`pipeline.lake.storage.Lake.writing`):

   * a file whose bytes the lake already holds completely is recorded as ``unchanged``;
   * the others are cut into work units and run through ingest's batch core
     (:func:`pipeline.lake.units.prepare_unit`): staged frames and events;
   * :func:`pipeline.lake.queries.outcomes` sorts every valid record into stored, duplicate
     or conflict by hand key, against the lake and within the commit;
   * the stored records' rows of every hand table are written, the stored sessions near the
     new hands (same player and table, within the gap) are merged with them (seats whose
     session id changed are rewritten with the files they are in; nothing else stored is
     read, so an append costs what is new), rejects (conflicts naming both sources, file-level problems)
     added unless the lake has them, the per-player totals brought up to date, and one
     ``ingested_files`` row written per file;
   * everything is staged, then committed in one atomic manifest replacement.

A build killed at any point leaves the lake at its last commit; running it again reads the
files of the lost commit again and gives the lake an uninterrupted build would have given.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.ingest.batches import DEFAULT_BATCH_SIZE, Reject
from pipeline.ingest.driver import EMPTY_FILE_REASON
from pipeline.ingest.paths import expand_paths
from pipeline.ingest.sessions import DEFAULT_SESSION_GAP_MINUTES, SESSION_GAP_META_KEY
from pipeline.ingest.summary import FIRST_REASONS, FileSummary
from pipeline.ingest.writer import conflict_reason, rule_set_meta, stored_raw_and_key
from pipeline.lake import queries
from pipeline.lake.engine import EVENTS_FOLDER, Engine
from pipeline.lake.plan import (
    DEFAULT_COMMIT_BYTES,
    DEFAULT_SPLIT_BYTES,
    FileScan,
    work_units,
)
from pipeline.lake.storage import Lake, Manifest
from pipeline.lake.tables import HAND_TABLES, SCHEMAS, partition_path, staged_schema
from pipeline.lake.units import EVENT_SCHEMA, FRAMES_FOLDER, record_order, record_texts
from pipeline.records.rules_file import RulesResolver
from pipeline.rules.ruleset import RuleSet

__all__ = ["BuildSummary", "build_lake", "register_lake_tables"]


@dataclass(slots=True)
class BuildSummary:
    """What a build did: per file as ``ofc ingest`` reports it, and the commits it made."""

    lake: str
    engine: str
    files: list[FileSummary] = field(default_factory=list)
    commits: int = 0
    seconds: float = 0.0
    version: int = 0

    @property
    def records(self) -> int:
        """Records read from every file."""
        return sum(item.records for item in self.files)

    @property
    def stored(self) -> int:
        """New hands stored."""
        return sum(item.stored for item in self.files)

    @property
    def duplicates(self) -> int:
        """Hands the lake already held (same content)."""
        return sum(item.duplicates for item in self.files)

    @property
    def rejected(self) -> int:
        """Records quarantined."""
        return sum(item.rejected for item in self.files)

    @property
    def hands_per_second(self) -> float:
        """Records read per second of wall time."""
        return self.records / self.seconds if self.seconds > 0 else 0.0


def build_lake(
    paths: Iterable[str | os.PathLike[str]],
    lake: str | os.PathLike[str],
    engine: Engine,
    rules: RuleSet | None = None,
    format: str | None = None,
    game: str | None = None,
    session_gap: float = DEFAULT_SESSION_GAP_MINUTES,
    batch_size: int = DEFAULT_BATCH_SIZE,
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    commit_bytes: int = DEFAULT_COMMIT_BYTES,
    progress: Any = None,
) -> BuildSummary:
    """Build (or extend) the lake at ``lake`` from files, folders and globs, on ``engine``.

    ``rules``, ``format``, ``game``, ``session_gap`` and ``batch_size`` mean what they mean for
    ``ofc ingest``. ``split_bytes``: plain canonical files are read in parts of about this size
    (a Spark partition each); ``commit_bytes``: files are committed in groups of about this
    size. ``progress`` (optional) has ``describe(text)`` and ``advance(records)``.

    Raises :class:`~pipeline.ingest.errors.IngestError` for a path that does not exist and
    :class:`~pipeline.lake.storage.LakeError` for a folder that cannot be a lake.
    """
    started = time.perf_counter()
    files = [str(path) for path in expand_paths(paths)]
    resolver = RulesResolver(override=rules)
    store = Lake(lake)
    summary = BuildSummary(str(store.root), engine.name)
    with store.writing() as manifest:
        if progress is not None:
            progress.describe("scanning files")
        scans = engine.scan(files, format, split_bytes)
        groups = _commit_groups(scans, commit_bytes)
        for number, group in enumerate(groups, 1):
            if progress is not None:
                progress.describe(f"commit {number}/{len(groups)}")
            step = _Commit(store, manifest, engine, resolver, format, game, session_gap,
                           batch_size, progress)
            manifest = step.run(group)
            summary.files.extend(step.summaries)
            summary.commits += 1
        summary.version = manifest.version
    summary.seconds = time.perf_counter() - started
    return summary


def _commit_groups(scans: Sequence[FileScan], commit_bytes: int) -> list[list[FileScan]]:
    """Files in order, in groups of about ``commit_bytes``; a file repeating the bytes of a
    file of the current group starts a new group (so it is found ``unchanged``, as ingest
    finds it)."""
    groups: list[list[FileScan]] = []
    current: list[FileScan] = []
    hashes: set[str] = set()
    size = 0
    for scan in scans:
        repeat = scan.content_hash is not None and scan.content_hash in hashes
        if current and (repeat or size + (scan.size or 0) > commit_bytes):
            groups.append(current)
            current, hashes, size = [], set(), 0
        current.append(scan)
        size += scan.size or 0
        if scan.content_hash is not None:
            hashes.add(scan.content_hash)
    if current:
        groups.append(current)
    return groups


def register_lake_tables(engine: Engine, store: Lake, manifest: Manifest,
                         with_file: Sequence[str] = (),
                         tables: Sequence[str] | None = None) -> None:
    """The tables of the committed lake (every one, or ``tables``) as ``lake_<table>``
    (``_file`` on the ones named in ``with_file``)."""
    for table in SCHEMAS if tables is None else tables:
        engine.register_lake(f"lake_{table}", table, store.files(table, manifest), store.root,
                             with_file=table in with_file)


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class _Commit:
    """One commit of a build: a group of files, staged, then committed."""

    def __init__(self, store: Lake, manifest: Manifest, engine: Engine, resolver: RulesResolver,
                 format: str | None, game: str | None, session_gap: float, batch_size: int,
                 progress: Any) -> None:
        self.store = store
        self.manifest = manifest
        self.engine = engine
        self.resolver = resolver
        self.format = format
        self.game = game
        self.session_gap = session_gap
        self.batch_size = batch_size
        self.progress = progress
        self.summaries: list[FileSummary] = []
        self.staging = store.staging()
        self.prefix = f"{manifest.version + 1:06d}-{self.staging.name}"
        engine.begin(self.staging)

    # --- the steps ---------------------------------------------------------------------------

    def run(self, group: Sequence[FileScan]) -> Manifest:
        """Stage everything for ``group`` and commit it; returns the new manifest."""
        summaries = {scan.order: FileSummary(scan.path, format=scan.format,
                                             content_hash=scan.content_hash) for scan in group}
        file_rejects: list[Reject] = []
        earlier = self._complete_files()
        to_read: list[FileScan] = []
        for scan in group:
            item = summaries[scan.order]
            if scan.error is not None:
                item.status, item.message, item.format = "failed", scan.error, self.format
                file_rejects.append(Reject(scan.path, None, None, scan.error, "", "file"))
                item.note_reject(None, scan.error)
            elif scan.content_hash in earlier:
                earlier_path, when = earlier[scan.content_hash]
                same = "" if earlier_path == scan.path else f" as {earlier_path}"
                item.status, item.format = "unchanged", self.format
                item.message = (f"unchanged: already ingested{same} on "
                                f"{when:%Y-%m-%d %H:%M:%S} UTC; nothing new stored")
            else:
                to_read.append(scan)
        replaced: dict[str, list[str]] = {}
        if to_read:
            replaced = self._read(to_read, summaries, file_rejects)
        elif file_rejects:
            self._register_lake()
            self._write_rejects(file_rejects)
        self._write_ingested_files(group, summaries)
        self.summaries = [summaries[scan.order] for scan in group]
        meta = {SESSION_GAP_META_KEY: repr(float(self.session_gap))} if to_read else {}
        if to_read and self.resolver.override is not None:  # kept as a database keeps it
            key, value = rule_set_meta(self.resolver.override)
            meta[key] = value
        return self.store.commit(self.manifest, self.staging, replaced, meta)

    def _complete_files(self) -> dict[str, tuple[str, datetime]]:
        """content hash → (path, when) of every file the lake holds completely (earliest)."""
        files = self.store.files("ingested_files", self.manifest)
        if not files:
            return {}
        rows = pq.read_table(files, columns=["path", "content_hash", "ingested_at", "status"])
        found: dict[str, tuple[str, datetime]] = {}
        for row in sorted(rows.to_pylist(), key=lambda row: row["ingested_at"]):
            if row["status"] == "complete":
                found.setdefault(row["content_hash"], (row["path"], row["ingested_at"]))
        return found

    def _register_lake(self) -> None:
        """The stored tables an append reads: hands (to find repeats and conflicts), sessions
        (those near the new hands), rejects and player totals; not the big per-seat tables
        (Spark lists the files of a table when it is registered)."""
        register_lake_tables(self.engine, self.store, self.manifest, with_file=("sessions",),
                             tables=("hands", "sessions", "rejects", "player_totals"))

    def _read(self, scans: Sequence[FileScan], summaries: dict[int, FileSummary],
              file_rejects: list[Reject]) -> dict[str, list[str]]:
        engine = self.engine
        units = work_units(scans, self.game, self.format)

        def on_records(count: int) -> None:
            if self.progress is not None:
                self.progress.advance(count)

        if self.progress is not None:
            self.progress.reading()
        engine.prepare(units, self.resolver, self.staging, self.batch_size, on_records,
                       whole_lake=self._gap_changed())
        engine.register_folder("events", self.staging / EVENTS_FOLDER, EVENT_SCHEMA)
        for table in HAND_TABLES:
            engine.register_folder(f"frames_{table}", self.staging / FRAMES_FOLDER / table,
                                   staged_schema(table))
        self._register_lake()
        engine.materialise("outcomes", queries.outcomes())

        # What happened to each file, in one query: its units (records, whether the reader
        # gave up, the format read), its records' outcomes, its first reject reasons and their
        # count, and its conflicts.
        units_by_file: dict[int, list[dict]] = {}
        counts: dict[tuple[int, str], int] = {}
        reject_counts: dict[int, int] = {}
        first_reasons: dict[int, list[tuple[int, str]]] = {}
        conflict_rows: list[dict] = []
        for row in engine.query(queries.commit_report(FIRST_REASONS)).to_pylist():
            what, order = row["what"], row["file_order"]
            if what == "unit":
                units_by_file.setdefault(order, []).append(
                    {"unit": row["number"], "records": row["count"], "failed": row["text1"],
                     "format": row["text2"]})
            elif what == "outcome":
                counts[(order, row["text1"])] = row["count"]
            elif what == "reason":
                reject_counts[order] = row["count"]
                first_reasons.setdefault(order, []).append((row["number"] or 0, row["text1"]))
            else:
                conflict_rows.append(
                    {"file_order": order, "line": row["number"], "hand_id": row["text1"],
                     "site": row["text2"], "path": row["text3"], "winner_path": row["text4"],
                     "winner_line": row["count"]})
        conflicts = self._conflicts(scans, conflict_rows)
        for order, reject in conflicts:
            first_reasons.setdefault(order, []).append((reject.line or 0, reject.reason))

        for scan in scans:
            item = summaries[scan.order]
            parts = sorted(units_by_file.get(scan.order, []), key=lambda row: row["unit"])
            item.records = sum(row["records"] or 0 for row in parts)
            item.stored = counts.get((scan.order, "stored"), 0)
            item.duplicates = counts.get((scan.order, "duplicate"), 0)
            conflicted = counts.get((scan.order, "conflict"), 0)
            for line, reason in sorted(first_reasons.get(scan.order, [])):
                if len(item.reasons) < FIRST_REASONS:
                    item.reasons.append(f"line {line}: {reason}" if line else reason)
            item.rejected = reject_counts.get(scan.order, 0) + conflicted
            failed = next((row["failed"] for row in parts if row["failed"]), None)
            if parts and parts[0]["format"] is None:
                item.format = None
            if failed is not None:
                item.status, item.message = "failed", failed
            elif item.records == 0:
                item.status, item.message = "empty", EMPTY_FILE_REASON
            if item.status in ("failed", "empty"):
                file_rejects.append(Reject(scan.path, None, None, item.message or "", "", "file"))
                item.note_reject(None, item.message or "")

        # Every valid record stored (no repeat, no conflict: a day's append): the staged frames
        # are the new rows as they are, and no step joins them to the outcomes.
        every_record_stored = not any(count for (_, outcome), count in counts.items()
                                      if outcome != "stored")
        engine.view("new_keys", "SELECT hand_key, ord FROM outcomes WHERE outcome = 'stored'")
        for table in HAND_TABLES:
            # hands, seats, results, evaluations and matchups feed sessions and totals too
            engine.view(f"new_{table}",
                        f"SELECT * FROM frames_{table}" if every_record_stored
                        else queries.new_rows(table),
                        reused=table not in ("placements", "discards", "boards"))
        replaced = self._sessions()
        sums = self._write_hands(every_record_stored)
        if reject_counts or conflicts or file_rejects:
            self._write_rejects(file_rejects, [reject for _, reject in conflicts])
        engine.register_arrow("fresh_totals", sums)
        engine.write(queries.summed_player_totals("fresh_totals", "lake_player_totals"),
                     "player_totals", self.staging / "player_totals", self.prefix)
        replaced["player_totals"] = list(self.manifest.files("player_totals"))
        return replaced

    def _conflicts(self, scans: Sequence[FileScan],
                   rows: Sequence[dict]) -> list[tuple[int, Reject]]:
        """The conflicts of the commit as rejects (file order, reject), their raw text read again."""
        if not rows:
            return []
        by_order = {scan.order: scan for scan in scans}
        wanted: dict[int, set[int]] = {}
        for row in rows:
            wanted.setdefault(row["file_order"], set()).add(row["line"])
        texts = {}
        for order, lines in wanted.items():
            scan = by_order[order]
            texts[order] = record_texts(scan.path, scan.format, self.format, self.game, lines)
        conflicts = []
        for row in sorted(rows, key=lambda row: (row["file_order"], row["line"])):
            where = f"{row['winner_path']}:{row['winner_line']}"
            conflicts.append((row["file_order"], Reject(
                row["path"], row["line"], row["hand_id"],
                conflict_reason(row["hand_id"], row["site"], where, row["path"], row["line"]),
                texts[row["file_order"]].get(row["line"], ""), "conflict", where,
            )))
        return conflicts

    def _sessions(self) -> dict[str, list[str]]:
        """Sessions of the new hands' players and tables brought up to date; returns the seats
        and sessions files that are rewritten (relative paths).

        An append (the usual case) reads only the stored sessions near its new hands
        (:func:`_sessions_near`); a build with another gap than the lake's sessions were
        computed with recomputes every table from every seat (:func:`_sessions_again`)."""
        if self._gap_changed():
            return self._sessions_again()
        return self._sessions_near()

    def _gap_changed(self) -> bool:
        """Whether the lake's sessions were made with another gap than this build's."""
        stored_gap = self.manifest.meta.get(SESSION_GAP_META_KEY)
        return stored_gap is not None and float(stored_gap) != self.session_gap

    def _sessions_near(self) -> dict[str, list[str]]:
        """The append's sessions from the stored sessions near its new hands and the new seats
        alone (:func:`~pipeline.lake.queries.merged_sessions`). Rewritten: the sessions files
        holding a near session, and (only when a new hand comes before a stored session's
        first, or joins two: the session's id changes) the seats files of those sessions'
        hands, found in their months' partitions."""
        engine = self.engine
        dialect = engine.dialect
        # new_timed and near are small and used twice each: kept once computed (no job of
        # their own); merged is written (the hand tables' writers read the assignments).
        engine.view("new_timed", queries.new_timed_seats(), reused=True)
        engine.view("near", queries.near_sessions(dialect, self.session_gap), reused=True)
        engine.materialise("merged", queries.merged_sessions(dialect, self.session_gap))
        engine.view("assignments", "SELECT hand_key, player, session_id FROM merged "
                                   "WHERE kind = 'new'")
        # One query: the stored sessions whose id changes, and the files of the near ones.
        found = engine.query(
            "SELECT m.old_id, m.session_id, m.site, n.started_at, n.ended_at, "
            "CAST(NULL AS STRING) AS _file "
            "FROM merged m JOIN near n ON n.session_id = m.old_id "
            "WHERE m.kind = 'stored' AND m.session_id <> m.old_id "
            "UNION ALL SELECT DISTINCT NULL, NULL, NULL, NULL, NULL, _file FROM near"
        ).to_pylist()
        renamed = [row for row in found if row["_file"] is None]
        touched_sessions = sorted({engine.file_path(row["_file"]) for row in found
                                   if row["_file"] is not None})
        changed: list[Path] = []
        if renamed:
            engine.register_arrow("renamed", pa.table({
                "old_id": [row["old_id"] for row in renamed],
                "session_id": [row["session_id"] for row in renamed]}))
            engine.register_lake("renamed_seats", "seats",
                                 self._seats_files_of(renamed), self.store.root,
                                 with_file=True)
            changed = sorted({engine.file_path(row["_file"]) for row in engine.query(
                "SELECT DISTINCT se._file FROM renamed_seats se "
                "JOIN renamed r ON r.old_id = se.session_id").to_pylist()})
        return self._rewrite(
            changed, "LEFT JOIN renamed r ON r.old_id = se.session_id", touched_sessions,
            f"{dialect.anti_join} near n ON n.session_id = s.session_id",
            queries.session_rows(dialect, "merged"))

    def _rewrite(self, seats: Sequence[Path], seats_join: str, sessions: Sequence[Path],
                 kept_sessions: str, new_sessions: str) -> dict[str, list[str]]:
        """Write again the stored ``seats`` files with the session ids ``seats_join`` gives
        (``r.session_id``, joined to ``se``; unchanged where there is none) and the stored
        ``sessions`` files without the rows ``kept_sessions`` drops (a join on ``s``), plus
        the ``new_sessions`` rows; returns the files replaced (relative paths)."""
        engine = self.engine
        if seats:
            engine.register_lake("rewrite_seats", "seats", seats, self.store.root)
            engine.write(
                f"SELECT {queries.columns('seats', 'se', {'session_id': 'coalesce(r.session_id, se.session_id)'})} "
                f"FROM rewrite_seats se {seats_join}",
                "seats", self.staging / "seats", self.prefix + "-s")
        engine.register_lake("rewrite_sessions", "sessions", sessions, self.store.root)
        engine.write(
            f"SELECT {queries.columns('sessions', 's')} FROM rewrite_sessions s {kept_sessions} "
            f"UNION ALL SELECT {queries.columns('sessions', 'x')} FROM ({new_sessions}) x",
            "sessions", self.staging / "sessions", self.prefix)
        return {"seats": [self._relative(path) for path in seats],
                "sessions": [self._relative(path) for path in sessions]}

    def _seats_files_of(self, sessions: Sequence[dict]) -> list[Path]:
        """The live seats files that may hold hands of ``sessions`` (site, started_at,
        ended_at): those of their sites' partitions for the months they span."""
        wanted: set[str] = set()
        for row in sessions:
            month = datetime(row["started_at"].year, row["started_at"].month, 1)
            while month <= row["ended_at"]:
                wanted.add(partition_path(row["site"], f"{month:%Y-%m}"))
                month = datetime(month.year + month.month // 12, month.month % 12 + 1, 1)
        return [self.store.root / relative for relative in self.manifest.files("seats")
                if relative.split("/", 1)[1].rsplit("/", 1)[0] in wanted]

    def _sessions_again(self) -> dict[str, list[str]]:
        """Sessions of every table recomputed from every seat (the gap changed); returns the
        seats and sessions files that are rewritten (relative paths)."""
        engine = self.engine
        register_lake_tables(engine, self.store, self.manifest, with_file=("seats",),
                             tables=("seats", "results"))
        engine.view("touched", "SELECT DISTINCT site, table_name FROM lake_hands "
                               "UNION SELECT DISTINCT site, table_name FROM new_hands",
                    reused=True)
        engine.materialise("assignments", queries.session_assignments(
            engine.dialect, self.session_gap, True))
        # Lake files to rewrite: seats whose session changed, sessions of the touched tables.
        rewrite: dict[str, list[Path]] = {"seats": [], "sessions": []}
        for row in engine.query(
            "SELECT DISTINCT 'seats' AS what, se._file FROM lake_seats se JOIN assignments a "
            "ON a.hand_key = se.hand_key AND a.player = se.player "
            "WHERE se.session_id IS DISTINCT FROM a.session_id "
            "UNION ALL "
            "SELECT DISTINCT 'sessions' AS what, s._file FROM lake_sessions s "
            "JOIN touched t ON t.site = s.site AND t.table_name IS NOT DISTINCT FROM s.table_name"
        ).to_pylist():
            rewrite[row["what"]].append(engine.file_path(row["_file"]))
        return self._rewrite(
            rewrite["seats"],
            "LEFT JOIN assignments r ON r.hand_key = se.hand_key AND r.player = se.player",
            rewrite["sessions"],
            f"{engine.dialect.anti_join} touched t ON t.site = s.site "
            "AND t.table_name IS NOT DISTINCT FROM s.table_name",
            queries.session_rows(engine.dialect))

    def _relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.store.root.resolve()).as_posix()

    def _write_hands(self, every_record_stored: bool) -> pa.Table:
        """The stored records' rows of every hand table (seats with their sessions); returns
        their per-player sums (:func:`~pipeline.lake.queries.player_totals`, in parts)."""
        writes = {}
        for table in HAND_TABLES:
            if table == "seats":
                writes[table] = (
                    f"SELECT {queries.columns('seats', 'f', {'session_id': 'a.session_id'})} "
                    "FROM new_seats f LEFT JOIN assignments a "
                    "ON a.hand_key = f.hand_key AND a.player = f.player")
            else:
                writes[table] = f"SELECT {queries.columns(table, 'f')} FROM new_{table} f"
        relations = [*(() if every_record_stored else ("new_keys",)),
                     *(f"new_{table}" for table in HAND_TABLES), "assignments"]
        return self.engine.write_new_rows(
            writes, queries.player_totals("new_seats", "new_results", "new_evaluations",
                                          "new_matchups", None),
            relations, self.staging, self.prefix)

    def _write_rejects(self, file_rejects: Sequence[Reject],
                       conflicts: Sequence[Reject] = ()) -> None:
        """The units' rejects, the conflicts and the file-level rejects the lake does not hold
        yet (each reject key once)."""
        columns: dict[str, list[Any]] = {name: [] for name in (
            "path", "line", "hand_id", "reason", "raw", "kind", "conflict_with", "reject_key",
            "ord")}
        for reject in (*conflicts, *file_rejects):
            raw, key = stored_raw_and_key(reject)
            values = (reject.path, reject.line, reject.hand_id, reject.reason, raw, reject.kind,
                      reject.conflict_with, key, record_order(1 << 30, reject.line))
            for name, value in zip(columns, values, strict=True):
                columns[name].append(value)
        extra = pa.table(columns, schema=pa.schema([
            ("path", pa.string()), ("line", pa.int32()), ("hand_id", pa.string()),
            ("reason", pa.string()), ("raw", pa.string()), ("kind", pa.string()),
            ("conflict_with", pa.string()), ("reject_key", pa.string()), ("ord", pa.int64())]))
        engine = self.engine
        engine.register_arrow("extra_rejects", extra)
        when = engine.dialect.timestamp(_now().isoformat(sep=" "))
        engine.write(f"""
            SELECT path, line, hand_id, reason, raw, {when} AS rejected_at, kind, conflict_with,
                   reject_key
            FROM (
                SELECT r.*, row_number() OVER (PARTITION BY reject_key ORDER BY ord) AS n
                FROM (
                    SELECT path, line, hand_id, reason, raw, reject_kind AS kind,
                           CAST(NULL AS STRING) AS conflict_with, reject_key, ord
                    FROM events WHERE kind = 'reject'
                    UNION ALL
                    SELECT path, line, hand_id, reason, raw, kind, conflict_with, reject_key, ord
                    FROM extra_rejects
                ) r
                WHERE reject_key NOT IN (SELECT reject_key FROM lake_rejects)
            ) ranked WHERE n = 1
        """, "rejects", self.staging / "rejects", self.prefix)

    def _write_ingested_files(self, group: Sequence[FileScan],
                              summaries: dict[int, FileSummary]) -> None:
        """One ``ingested_files`` row per file of the commit."""
        now = _now()
        rows = []
        for scan in group:
            item = summaries[scan.order]
            rows.append({
                "path": item.path, "content_hash": item.content_hash or "",
                "format": item.format, "size_bytes": scan.size, "ingested_at": now,
                "records": item.records, "stored": item.stored, "duplicates": item.duplicates,
                "rejected": item.rejected, "status": item.status, "message": item.message,
            })
        folder = self.staging / "ingested_files"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMAS["ingested_files"]),
                       folder / f"part-{self.prefix}-00000.parquet")
