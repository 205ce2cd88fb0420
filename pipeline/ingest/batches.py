"""A batch: records validated one at a time, then scored together and turned into columns.

What is done to a batch before it is written, and nothing else: no database, no processes, so
it runs the same in a worker process (:mod:`pipeline.ingest.workers`) as in the writing one.

* :class:`BatchBuilder` validates records of any format (:func:`pipeline.records.validate.parse_hand`)
  into candidates or rejects and builds the columns of every hand table in :meth:`~BatchBuilder.finish`;
* :func:`prepare_canonical` does the same for lines of a canonical JSON Lines file, taking the
  columnar path (:mod:`pipeline.ingest.fast_canonical`) for plainly valid lines;
* :class:`PreparedBatch` is the result, which :func:`pipeline.ingest.writer.write_batch` writes.

Every rules name a record carries is resolved by the one :class:`~pipeline.records.rules_file.RulesResolver`
the caller hands in.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pipeline import store
from pipeline.formats import SourceRecord
from pipeline.formats import canonical as canonical_reader
from pipeline.formats.base import clip_raw
from pipeline.formats.source import PackedLines, RawLine, SourceLine, decode_line, expand_lines
from pipeline.ingest.columns import HandColumns, concat_columns, content_hash
from pipeline.ingest.columns import from_records as columns_from_records
from pipeline.ingest.defaults import DEFAULT_BATCH_SIZE
from pipeline.ingest.fast_canonical import parse_canonical_batch
from pipeline.ingest.tables import FRAME_ORDER, hand_tables
from pipeline.records.record import HandRecord
from pipeline.records.rules_file import RulesResolver
from pipeline.records.validate import InvalidHand, clip_reason, parse_hand
from pipeline.rules.ruleset import RulesError

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "BatchBuilder",
    "Candidate",
    "PreparedBatch",
    "Reject",
    "prepare_canonical",
]



DAMAGED = "damaged"
"""The reject kind of an unreadable record that shows its file ends early (the file is then
``partial``); other unreadable records are of kind ``read``."""

UNREADABLE_KINDS = frozenset(("read", DAMAGED))
"""Reject kinds of records that could not be read as a record of the format at all."""


@dataclass(slots=True)
class Reject:
    """A record (or a whole file, ``line`` None) that is not stored: why, and its raw text.

    ``kind``: read | damaged | invalid | rules | conflict | file."""

    path: str
    line: int | None
    hand_id: str | None
    reason: str
    raw: str
    kind: str
    conflict_with: str | None = None
    site: str | None = None  # the record's site, when it could be read

    def __post_init__(self) -> None:
        # a reason from any reader or check stays short (:func:`clip_reason`), as raw does
        self.reason = clip_reason(self.reason)


@dataclass(slots=True)
class Candidate:
    """A valid record of a batch: its identity and where it came from. ``raw`` is None for a
    record of the columnar canonical path: the process that read the line has its text."""

    key: int
    digest: str
    site: str
    hand_id: str
    path: str
    line: int
    raw: str | None

    def __reduce__(self) -> tuple[type, tuple]:
        # Workers send a batch's candidates back pickled: as constructor arguments this takes
        # about half the CPU of the slotted dataclass's __getstate__/__setstate__ pair.
        return (Candidate, (self.key, self.digest, self.site, self.hand_id, self.path,
                             self.line, self.raw))


@dataclass(slots=True)
class PreparedBatch:
    """A batch validated, scored and turned into columns, ready to be written.

    Its hands are the rows of ``frames["hands"]`` (the first record of each key in the batch);
    a worker process leaves the frames in Arrow files under ``spill`` instead, which the writer
    maps into memory without copying them (sending them through a pipe cost the writer more
    CPU than inserting them)."""

    records: int
    rejects: list[Reject]
    later: list[Candidate]  # records of a key seen earlier in the batch
    frames: dict[str, pa.Table] | None  # rows of every hand, for every hand table
    raws: dict[int, str]  # line → original text, for records that did not come as lines
    spill: str | None = None  # path prefix of the frames' Arrow files
    lines: PackedLines | list[RawLine | SourceLine] | None = None  # the batch's lines, set by the reader
    warnings: list[str] | None = None  # what readers had to guess (said aloud, records kept)

    def spill_frames(self, prefix: str) -> PreparedBatch:
        """Write the frames to Arrow files at ``prefix`` (worker side) and drop them."""
        for name, frame in (self.frames or {}).items():
            with pa.OSFile(f"{prefix}-{name}.arrow", "wb") as sink, pa.ipc.new_file(
                sink, frame.schema
            ) as writer:
                writer.write_table(frame)
        self.frames = None
        self.spill = prefix
        return self

    def tables(self) -> dict[str, pa.Table]:
        """The frames, mapped from their files when a worker left them there."""
        if self.frames is None and self.spill is not None:
            self.frames = {
                name: pa.ipc.open_file(pa.memory_map(f"{self.spill}-{name}.arrow")).read_all()
                for name in FRAME_ORDER
            }
        return self.frames or {}

    def discard_spill(self) -> None:
        """Delete the frames' files (the tables mapped from them stay readable until dropped)."""
        if self.spill is not None:
            for name in FRAME_ORDER:
                with contextlib.suppress(OSError):
                    os.unlink(f"{self.spill}-{name}.arrow")

    def raw_text(self, line: int) -> str:
        """The original text of the record at ``line``."""
        if line not in self.raws and self.lines:
            # First call for lines read as bytes: index the batch's texts once (a re-ingest of
            # edited hands asks for every line of the batch).
            for item in expand_lines(self.lines):
                number = item[0]
                if number not in self.raws:
                    self.raws[number] = (
                        clip_raw(decode_line(item).raw) if type(item) is tuple else item.raw
                    )
            self.lines = None
        return self.raws.get(line, "")


class BatchBuilder:
    """Validates records one at a time (keeping only the compact HandRecord), then scores the
    batch in one go and builds its columns."""

    def __init__(self, resolver: RulesResolver) -> None:
        self.resolver = resolver
        self.records = 0
        self.rejects: list[Reject] = []
        self.candidates: list[Candidate] = []
        self.hands: list[HandRecord] = []
        self.warnings: list[str] = []

    def add(self, source: SourceRecord) -> None:
        """Validate one record: a reject or a candidate."""
        self.records += 1
        if source.warning is not None:
            self.warnings.append(source.warning)
        if source.record is None:
            self.rejects.append(Reject(source.path, source.line, source.hand_id,
                                        source.error or "unreadable record", source.raw,
                                        DAMAGED if source.damaged else "read"))
            return
        try:
            hand = parse_hand(source.record)
        except InvalidHand as error:
            site = source.record.get("site", "local")
            self.rejects.append(Reject(source.path, source.line, error.hand_id or source.hand_id,
                                        error.reason, source.raw, "invalid",
                                        site=site.strip() if isinstance(site, str) else None))
            return
        try:
            self.resolver(hand.rules)
        except RulesError as error:
            self.rejects.append(Reject(source.path, source.line, hand.hand_id, str(error),
                                        source.raw, "rules", site=hand.site))
            return
        self.candidates.append(Candidate(
            store.hand_key(hand.site, hand.hand_id), content_hash(hand), hand.site, hand.hand_id,
            source.path, source.line, source.raw,
        ))
        self.hands.append(hand)

    def finish(
        self, fast: HandColumns | None = None, fast_candidates: Sequence[Candidate] = ()
    ) -> PreparedBatch:
        """Score the batch's hands together and build the columns of every table.

        ``fast`` holds hands the columnar canonical path validated (``fast_candidates`` their
        identities); they join the records added here. Of the records of one key, the first
        in line order is the batch's candidate; the others are compared with it when written.
        """
        candidates = self.candidates
        columns = columns_from_records(
            [candidate.key for candidate in candidates],
            [candidate.digest for candidate in candidates], self.hands,
            [candidate.path for candidate in candidates],
            [candidate.line for candidate in candidates],
        )
        if fast is not None and fast.hand_count:
            columns = concat_columns([fast, columns])
            candidates = [*fast_candidates, *candidates]
        keep = np.ones(len(candidates), bool)
        later: list[Candidate] = []
        seen: set[int] = set()
        for index in sorted(range(len(candidates)), key=lambda index: candidates[index].line):
            candidate = candidates[index]
            if candidate.key in seen:
                keep[index] = False
                later.append(candidate)
            else:
                seen.add(candidate.key)
        if later:
            columns = columns.select(keep)
        raws = {candidate.line: candidate.raw for candidate in self.candidates
                if candidate.raw is not None}
        return PreparedBatch(self.records, self.rejects, later, hand_tables(columns, self.resolver),
                             raws, warnings=self.warnings or None)


def prepare_canonical(
    file_name: str, lines: list[RawLine | SourceLine], resolver: RulesResolver, fast: bool = True
) -> PreparedBatch:
    """Parse, validate, score and build the columns of a batch of canonical JSON Lines lines
    (in a worker process, see :func:`pipeline.ingest.workers.prepare_spilled`, or in this one
    for a small file).

    Plainly valid records take the columnar path (:mod:`pipeline.ingest.fast_canonical`); every other
    line goes through the canonical reader and :func:`pipeline.records.validate.parse_hand`, exactly as
    a record of any other format would, so its reason is the precise one. ``fast=False`` sends
    every line that way (tests compare the two). ``resolver`` resolves the records' rules.
    """
    builder = BatchBuilder(resolver)
    raw_positions = [position for position, item in enumerate(lines) if type(item) is tuple]
    columns: HandColumns | None = None
    fast_candidates: list[Candidate] = []
    slow_positions: list[int]
    if fast and raw_positions:
        columns, accepted, rest = parse_canonical_batch(
            [(lines[position][0], lines[position][1]) for position in raw_positions], file_name
        )
        rejected_rules = _unusable_rules(columns.rules, resolver)
        if rejected_rules:
            usable = np.asarray([name not in rejected_rules for name in columns.rules], bool)
            rest = rest + accepted[~usable].tolist()
            columns = columns.select(usable)
        fast_candidates = [
            Candidate(key, digest, site, hand_id, file_name, line, None)
            for key, digest, site, hand_id, line in zip(
                columns.keys.tolist(), columns.digests, columns.sites, columns.hand_ids,
                columns.lines, strict=True)
        ]
        builder.records += len(fast_candidates)
        slow_positions = sorted(
            [raw_positions[index] for index in rest]
            + [position for position, item in enumerate(lines) if type(item) is not tuple]
        )
    else:
        slow_positions = list(range(len(lines)))
    parse_line = canonical_reader.parse_canonical_line
    for position in slow_positions:
        item = lines[position]
        line = decode_line(item) if type(item) is tuple else item
        if line.text is not None and not line.text.strip():
            continue  # blank lines are not records
        builder.add(parse_line(file_name, line))
    return builder.finish(columns, fast_candidates)


def _unusable_rules(names: Sequence[str], resolver: RulesResolver) -> set[str]:
    """The rules names among ``names`` the resolver cannot resolve."""
    unusable = set()
    for name in set(names):
        try:
            resolver(name)
        except RulesError:
            unusable.add(name)
    return unusable

