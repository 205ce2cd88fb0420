"""Ingestion: hand-history files (or mappings) into the DuckDB database, re-scored and audited.

The one way hand data gets into the database (schemas/database.md). A file is streamed through
its format reader (:func:`pipeline.formats.read_source`) in batches of ``batch_size`` records;
each batch is validated (:func:`pipeline.validate.parse_hand`), re-scored in one go as columns
by the batch rules core (the verdicts :func:`pipeline.evaluate.score_records` gives), turned into
columns (Arrow) and written in **one transaction** covering every table, rejects included. The write connection is opened per batch
and closed right after, so the dashboard's short read-only connections get in between batches.
Large canonical JSON Lines files are parsed, validated and scored by worker processes while this
process reads lines and writes batches in order; the database is the same as a sequential run's.

Identity and idempotence:

* a hand is keyed by ``hand_key(site, hand_id)``; its ``content_hash`` covers everything the
  validated record says. The same key with the same hash is a duplicate (counted, stored once);
  the same key with another hash is a conflict, rejected with both sources named;
* rejects are keyed by (path, line, reason, raw text), so reading a file again never doubles them;
* a file whose bytes were already ingested completely is skipped ("unchanged");
* killing the process mid-ingest and running again gives exactly the database an uninterrupted
  run gives: committed batches come back as duplicates, the rest is stored.

:func:`rescore` recomputes evaluations, matchups and results under another rule set from the
stored boards, as columns with the batch rules core, without reading any file.
"""

from __future__ import annotations

import contextlib
import gc
import glob
import hashlib
import json
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import store
from pipeline.evaluate import _settlement_order
from pipeline.formats import FormatError, SourceRecord, read_source
from pipeline.formats import canonical as canonical_reader
from pipeline.formats.base import clip_raw
from pipeline.formats.source import SourceLine, read_lines
from pipeline.record import HandRecord
from pipeline.rules.batch import evaluate_boards, settle_pairs
from pipeline.rules.game import ROWS, Variant
from pipeline.rules.ruleset import RulesError, RuleSet
from pipeline.rules.values import HIGH_CLASS_LABELS, LOW_CLASS_LABELS
from pipeline.rules_file import RulesResolver, resolve_rules
from pipeline.sessions import DEFAULT_SESSION_GAP_MINUTES, SESSION_GAP_META_KEY, update_sessions
from pipeline.validate import InvalidHand, parse_hand

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "BatchReport",
    "DatabaseError",
    "FileSummary",
    "IngestError",
    "IngestSummary",
    "RescoreSummary",
    "content_hash",
    "delete_hand",
    "expand_paths",
    "ingest_mappings",
    "ingest_paths",
    "rescore",
]

DEFAULT_BATCH_SIZE = 20_000
"""Records per batch (one transaction each)."""

FIRST_REASONS = 5
"""How many reject reasons a summary keeps per file."""

FOLDER_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".log", ".txt")
"""File name endings (optionally followed by .gz) read when a folder is given."""

PARALLEL_MIN_BYTES = 64 << 20
"""Canonical files this large (about 30,000 hands) are parsed by worker processes."""

WRITE_WAIT_SECONDS = 120.0
"""How long a batch waits for another process (a reader) to let go of the database."""

EMPTY_FILE_REASON = "empty file: no hand history in it"


class IngestError(Exception):
    """A fatal problem: nothing can be ingested (no such path, unusable database)."""


class DatabaseError(IngestError):
    """The database cannot be opened or written."""


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


@dataclass(frozen=True, slots=True)
class RescoreSummary:
    """What a re-score did."""

    rules: str
    hands: int
    players: int
    disagreements: int
    seconds: float


# --- content identity ------------------------------------------------------------------------

_ROW_CODE = {row: index for index, row in enumerate(ROWS)}
_dumps = json.dumps
_blake2b = hashlib.blake2b


def content_hash(hand: HandRecord) -> str:
    """A hash of everything a validated record says (formatting and card spelling aside).

    Hand fields as text; per player its name (length-prefixed), seat, Fantasyland flag,
    reported points and extras, then the cards as bytes: the board, and per street the cards
    dealt, the placements (card and row) and the discards, each street framed by marker bytes
    no card code uses.
    """
    extra = hand.extra
    header = "\x1f".join((
        hand.hand_id, hand.site, hand.table or "", hand.started_at or "", hand.variant.value,
        hand.rules, hand.button or "",
        _dumps(extra, sort_keys=True, ensure_ascii=False, default=str) if extra else "",
    ))
    parts = [header.encode("utf-8", "surrogatepass")]
    pair_code = _PAIR_CODE.__getitem__
    for player in hand.players:
        reported = player.reported_points
        name = player.name
        extra = player.extra
        parts.append(
            f"\x1e{len(name)}:{name}\x1f{player.seat}\x1f{int(player.fantasyland)}"
            f"\x1f{'' if reported is None else float(reported)!r}\x1f"
            f"{_dumps(extra, sort_keys=True, ensure_ascii=False, default=str) if extra else ''}"
            .encode("utf-8", "surrogatepass")
        )
        # The player's card bytes, built as one list of codes (same bytes as joining pieces).
        board = player.board
        codes = [*board.top, *board.middle, *board.bottom]
        streets = player.streets
        if streets is not None:
            append = codes.append
            for street in streets:
                append(0xFF)
                codes += street.dealt
                append(0xFE)
                codes += map(pair_code, street.placed)
                append(0xFD)
                codes += street.discarded
        parts.append(bytes(codes))
    return _blake2b(b"".join(parts), digest_size=16).hexdigest()


def _reject_key(path: str, line: int | None, reason: str, raw: str) -> str:
    text = f"{path}\x1f{line}\x1f{reason}\x1f{raw}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _file_hash(path: Path) -> str:
    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


# --- paths -------------------------------------------------------------------------------------


def _is_hand_file(path: Path) -> bool:
    name = path.name.lower()
    if name.startswith("."):
        return False
    for suffix in (".gz", ".gzip"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name.endswith(FOLDER_SUFFIXES)


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files to read: files as given, folders recursively (hand-history file names only,
    see :data:`FOLDER_SUFFIXES`), globs expanded; each file once, absolute, in order.

    Raises :class:`IngestError` for a path that does not exist or a glob that matches nothing.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    found: list[Path] = []
    for item in paths:
        text = os.fspath(item)
        path = Path(text).expanduser()
        if path.is_dir():
            found.extend(
                sorted(
                    candidate
                    for candidate in path.rglob("*")
                    if candidate.is_file()
                    and _is_hand_file(candidate)
                    and not any(part.startswith(".") for part in candidate.relative_to(path).parts)
                )
            )
        elif path.is_file():
            found.append(path)
        elif glob.has_magic(text):
            matches = sorted(Path(match) for match in glob.glob(text, recursive=True))
            files = [match for match in matches if match.is_file()]
            for match in matches:
                if match.is_dir():
                    files.extend(expand_paths([match]))
            if not files:
                raise IngestError(f"no files match {text}")
            found.extend(files)
        elif path.exists():
            raise IngestError(f"not a regular file or folder: {text}")
        else:
            raise IngestError(f"no such file or folder: {text}")
    unique: dict[Path, None] = {}
    for path in found:
        unique.setdefault(path.resolve(), None)
    return list(unique)


# --- turning a batch into columns --------------------------------------------------------------

_TABLE_SCHEMAS: dict[str, pa.Schema] = {
    "hands": pa.schema([
        ("hand_key", pa.int64()), ("site", pa.string()), ("hand_id", pa.string()),
        ("table_name", pa.string()), ("started_at", pa.timestamp("us")),
        ("variant", pa.string()), ("rules", pa.string()), ("button", pa.string()),
        ("player_count", pa.int8()), ("has_streets", pa.bool_()),
        ("any_fantasyland", pa.bool_()), ("content_hash", pa.string()),
        ("source_path", pa.string()), ("source_line", pa.int32()), ("extra", pa.string()),
    ]),
    "seats": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("seat", pa.int16()),
        ("position", pa.int8()), ("is_button", pa.bool_()), ("fantasyland", pa.bool_()),
        ("cards_dealt", pa.int8()), ("reported_points", pa.float64()), ("extra", pa.string()),
    ]),
    "placements": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("street", pa.int8()),
        ("card_order", pa.int8()), ("card", pa.string()), ("row_name", pa.string()),
    ]),
    "discards": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("street", pa.int8()),
        ("card", pa.string()),
    ]),
    "boards": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("top", pa.string()),
        ("middle", pa.string()), ("bottom", pa.string()),
    ]),
    "evaluations": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("ruleset", pa.string()),
        ("top_class", pa.string()), ("middle_class", pa.string()), ("bottom_class", pa.string()),
        ("top_value", pa.int32()), ("middle_value", pa.int32()), ("bottom_value", pa.int32()),
        ("foul", pa.bool_()), ("royalty_top", pa.int16()), ("royalty_middle", pa.int16()),
        ("royalty_bottom", pa.int16()), ("royalties", pa.int16()),
        ("fantasyland_next", pa.bool_()), ("fantasyland_cards", pa.int8()),
        ("raw_royalty_top", pa.int16()), ("raw_royalty_middle", pa.int16()),
        ("raw_royalty_bottom", pa.int16()),
    ]),
    "matchups": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("opponent", pa.string()),
        ("rows_won", pa.int8()), ("rows_lost", pa.int8()), ("scoop", pa.int8()),
        ("royalty_points", pa.int32()), ("points", pa.int32()), ("settled", pa.int32()),
    ]),
    "results": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("points", pa.int32()),
        ("reported_points", pa.float64()), ("disagrees", pa.bool_()),
        ("disagreement", pa.string()),
    ]),
    "rejects": pa.schema([
        ("path", pa.string()), ("line", pa.int32()), ("hand_id", pa.string()),
        ("reason", pa.string()), ("raw", pa.string()), ("rejected_at", pa.timestamp("us")),
        ("kind", pa.string()), ("conflict_with", pa.string()), ("reject_key", pa.string()),
    ]),
}

_CARD_TEXT: tuple[str, ...] = tuple(
    rank + suit for rank in "23456789TJQKA" for suit in "cdhs"
)


def _check_card_text() -> None:
    from pipeline.rules.cards import card_text

    for code in range(52):
        if card_text(code) != _CARD_TEXT[code]:  # pragma: no cover - a layout change upstream
            raise RuntimeError("card codes changed: update pipeline.ingest._CARD_TEXT")


_check_card_text()


def _utc_timestamp(text: str | None) -> datetime | None:
    if text is None:
        return None
    moment = datetime.fromisoformat(text.replace(",", "."))
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


def _json_or_none(value: dict[str, Any]) -> str | None:
    if not value:
        return None
    return json.dumps(value, ensure_ascii=False, default=str)


@dataclass(frozen=True, slots=True)
class _Verdict:
    """What the disagreement check needs of one player's re-score."""

    name: str
    reported_points: float | None
    extra: dict[str, Any]
    foul: bool
    raw_royalties: tuple[int, ...]
    fantasyland_cards: int
    points: int


def _source_causes(verdict: _Verdict) -> list[str]:
    """How the source's own verdict (poker-arena ``source_showdown``) differs from the re-score."""
    showdown = verdict.extra.get("source_showdown")
    if not isinstance(showdown, dict):
        return []
    causes = []
    fouled = showdown.get("fouled")
    if isinstance(fouled, bool) and fouled != verdict.foul:
        causes.append(
            f"foul: the source says {'fouled' if fouled else 'not fouled'}, "
            f"the re-score says {'fouled' if verdict.foul else 'not fouled'}"
        )
    royalties = showdown.get("royalties")
    if isinstance(royalties, dict):
        source = tuple(royalties.get(row.value) for row in ROWS)
        if all(isinstance(value, int | float) for value in source) and tuple(
            source
        ) != tuple(verdict.raw_royalties):
            causes.append(
                "royalty: the source says "
                + "/".join(str(value) for value in source)
                + " (top/middle/bottom), the re-score says "
                + "/".join(str(value) for value in verdict.raw_royalties)
            )
    if "next_fantasyland" in showdown:
        next_cards = showdown.get("next_fantasyland")
        source_cards = next_cards if isinstance(next_cards, int) else 0
        if source_cards != verdict.fantasyland_cards:
            causes.append(
                "fantasyland: the source says "
                + (f"{source_cards} cards next hand" if source_cards else "no Fantasyland")
                + ", the re-score says "
                + (f"{verdict.fantasyland_cards} cards" if verdict.fantasyland_cards
                   else "no Fantasyland")
            )
    return causes


def _format_points(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _disagreement_texts(verdicts: Sequence[_Verdict]) -> list[str | None]:
    """Per player of one hand: why the source disagrees with the re-score, or None."""
    causes = [_source_causes(verdict) for verdict in verdicts]
    culprits = [
        f"{verdict.name}: {', '.join(cause.split(':', 1)[0] for cause in player_causes)}"
        for verdict, player_causes in zip(verdicts, causes, strict=True)
        if player_causes
    ]
    texts: list[str | None] = []
    for verdict, player_causes in zip(verdicts, causes, strict=True):
        parts = list(player_causes)
        reported = verdict.reported_points
        if reported is not None and reported != verdict.points:
            text = f"points: reported {_format_points(reported)}, re-scored {verdict.points}"
            if not player_causes and culprits:
                text += f" (because of {'; '.join(culprits)})"
            parts.append(text)
        texts.append("; ".join(parts) if parts else None)
    return texts


_CARD_ARRAY = pa.array(_CARD_TEXT, pa.string())
_ROW_ARRAY = pa.array([row.value for row in ROWS], pa.string())
_STREET_TABLES = ("placements", "discards")
_FRAME_ORDER = ("hands", "seats", "evaluations", "matchups", "results", "boards", "placements",
                "discards")
"""The order a batch's tables are inserted in."""


_PAIR_CODE: dict[tuple[int, Any], int] = {
    (card, row): card * 3 + index for card in range(52) for index, row in enumerate(ROWS)
}
"""(card, row) placement → one byte: card * 3 + row index."""


def _rows_table(name: str, rows: list[tuple]) -> pa.Table:
    """Row tuples (in the table's column order) as an Arrow table: transposed in one go."""
    schema = _TABLE_SCHEMAS[name]
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    return pa.Table.from_arrays(
        [pa.array(values, type=field.type) for values, field in zip(columns, schema, strict=True)],
        schema=schema,
    )


def _verdict_tables(
    keys: Sequence[int], hands: Sequence[HandRecord], rules_for: Callable[[str], RuleSet]
) -> dict[str, pa.Table]:
    """Evaluations, matchups and results of a batch's hands, built as columns straight from the
    batch evaluator's arrays (the rows :func:`pipeline.evaluate.score_records` gives, in the same
    order: hands in batch order, players in record order, pairs in settlement order each
    followed by its mirror)."""
    player_counts = [len(hand.players) for hand in hands]
    board_count = sum(player_counts)
    cards: list[tuple[int, ...]] = []
    fantasyland: list[bool] = []
    names: list[str] = []
    reported: list[float | None] = []
    rule_names: list[str] = []
    orders: list[list[int]] = []
    first_boards: list[int] = []
    pair_bases: list[int] = []
    groups: dict[tuple[Variant, RuleSet], tuple[RuleSet, list[int]]] = {}
    board = pair_count = 0
    for index, hand in enumerate(hands):
        rules = rules_for(hand.rules)
        groups.setdefault((hand.variant, rules), (rules, []))[1].append(index)
        rule_names.append(rules.name)
        first_boards.append(board)
        pair_bases.append(pair_count)
        for player in hand.players:
            cards.append(player.board.cards)
            fantasyland.append(player.fantasyland)
            names.append(player.name)
            reported.append(player.reported_points)
        orders.append(_settlement_order(hand))
        count = len(hand.players)
        board += count
        pair_count += count * (count - 1) // 2
    card_array = np.asarray(cards, np.int8).reshape(board_count, 13)
    fantasyland_array = np.asarray(fantasyland, bool)
    values = np.zeros((board_count, 3), np.int32)
    class_codes = np.zeros((board_count, 3), np.int64)
    foul = np.zeros(board_count, bool)
    raw = np.zeros((board_count, 3), np.int16)
    royalties = np.zeros((board_count, 3), np.int16)
    fantasyland_cards = np.zeros(board_count, np.int8)
    points = np.zeros(board_count, np.int64)
    pair_first = np.zeros(pair_count, np.int64)
    pair_second = np.zeros(pair_count, np.int64)
    pair_rows = np.zeros((pair_count, 3), np.int8)
    pair_scoop = np.zeros(pair_count, np.int64)
    pair_royalty = np.zeros(pair_count, np.int64)
    pair_points = np.zeros(pair_count, np.int64)
    pair_settled = np.zeros(pair_count, np.int64)
    high_count = len(HIGH_CLASS_LABELS)
    for (variant, _), (rules, members) in groups.items():
        width = max(player_counts[index] for index in members)
        seats = np.full((len(members), width), -1, np.int64)  # local board index by position
        counts = np.zeros(len(members), np.int64)
        bases = np.zeros(len(members), np.int64)
        rows_list: list[int] = []
        for local, index in enumerate(members):
            first = first_boards[index]
            local_base = len(rows_list)
            rows_list.extend(range(first, first + player_counts[index]))
            order = orders[index]
            seats[local, : len(order)] = [local_base + position for position in order]
            counts[local] = player_counts[index]
            bases[local] = pair_bases[index]
        rows = np.asarray(rows_list, np.int64)
        columns = evaluate_boards(card_array[rows], variant, rules, fantasyland_array[rows])
        values[rows] = columns.values
        codes = columns.classes.astype(np.int64)
        if variant.lowball_middle:
            codes[:, 1] += high_count
        class_codes[rows] = codes
        foul[rows] = columns.foul
        raw[rows] = columns.raw_royalties
        royalties[rows] = columns.royalties
        fantasyland_cards[rows] = columns.fantasyland_cards
        totals, settled_pairs = settle_pairs(columns, seats, rules)
        for pair in settled_pairs:
            present, first, second = pair.hands, pair.first, pair.second
            first_position, second_position = pair.first_position, pair.second_position
            pairs, amount, settled = pair.outcome, pair.outcome.points, pair.settled
            # Where this pair sits in its hand's settlement order (settlement_pairs).
            players = counts[present]
            slots = bases[present] + (
                first_position * (2 * players - first_position - 1) // 2
                + second_position - first_position - 1
            )
            pair_first[slots] = rows[first]
            pair_second[slots] = rows[second]
            pair_rows[slots] = pairs.rows
            pair_scoop[slots] = pairs.scoop
            pair_royalty[slots] = pairs.royalty_points
            pair_points[slots] = amount
            pair_settled[slots] = settled
        present_rows, present_positions = np.nonzero(seats >= 0)
        points[rows[seats[present_rows, present_positions]]] = totals[present_rows,
                                                                      present_positions]

    key_array = np.repeat(np.asarray(keys, np.int64), player_counts)
    player_array = pa.array(names, pa.string())
    labels = pa.array(list(HIGH_CLASS_LABELS) + list(LOW_CLASS_LABELS), pa.string())
    ruleset = pa.array(rule_names, pa.string()).take(
        pa.array(np.repeat(np.arange(len(hands)), player_counts))
    )
    evaluations = pa.Table.from_pydict({
        "hand_key": pa.array(key_array), "player": player_array, "ruleset": ruleset,
        "top_class": labels.take(pa.array(class_codes[:, 0])),
        "middle_class": labels.take(pa.array(class_codes[:, 1])),
        "bottom_class": labels.take(pa.array(class_codes[:, 2])),
        "top_value": values[:, 0], "middle_value": values[:, 1], "bottom_value": values[:, 2],
        "foul": foul, "royalty_top": royalties[:, 0], "royalty_middle": royalties[:, 1],
        "royalty_bottom": royalties[:, 2],
        "royalties": royalties.astype(np.int64).sum(axis=1).astype(np.int16),
        "fantasyland_next": fantasyland_cards > 0, "fantasyland_cards": fantasyland_cards,
        "raw_royalty_top": raw[:, 0], "raw_royalty_middle": raw[:, 1],
        "raw_royalty_bottom": raw[:, 2],
    }, schema=_TABLE_SCHEMAS["evaluations"])

    won = (pair_rows == 1).sum(axis=1)
    lost = (pair_rows == -1).sum(axis=1)

    def interleaved(forward: np.ndarray, mirror: np.ndarray, dtype: Any) -> np.ndarray:
        both = np.empty(2 * pair_count, dtype)
        both[0::2] = forward
        both[1::2] = mirror
        return both

    pair_hands = np.repeat(np.asarray(keys, np.int64),
                           [count * (count - 1) // 2 for count in player_counts])
    matchups = pa.Table.from_pydict({
        "hand_key": np.repeat(pair_hands, 2),
        "player": player_array.take(pa.array(interleaved(pair_first, pair_second, np.int64))),
        "opponent": player_array.take(pa.array(interleaved(pair_second, pair_first, np.int64))),
        "rows_won": interleaved(won, lost, np.int8),
        "rows_lost": interleaved(lost, won, np.int8),
        "scoop": interleaved(pair_scoop, -pair_scoop, np.int8),
        "royalty_points": interleaved(pair_royalty, -pair_royalty, np.int32),
        "points": interleaved(pair_points, -pair_points, np.int32),
        "settled": interleaved(pair_settled, -pair_settled, np.int32),
    }, schema=_TABLE_SCHEMAS["matchups"])

    texts: list[str | None] = [None] * board_count
    for index, hand in enumerate(hands):
        if all(player.reported_points is None and not player.extra for player in hand.players):
            continue
        first = first_boards[index]
        hand_verdicts = [
            _Verdict(player.name, player.reported_points, player.extra,
                     bool(foul[first + offset]),
                     tuple(int(value) for value in raw[first + offset]),
                     int(fantasyland_cards[first + offset]), int(points[first + offset]))
            for offset, player in enumerate(hand.players)
        ]
        texts[first:first + len(hand_verdicts)] = _disagreement_texts(hand_verdicts)
    results = pa.Table.from_pydict({
        "hand_key": pa.array(key_array), "player": player_array,
        "points": points.astype(np.int32),
        "reported_points": pa.array(reported, pa.float64()),
        "disagrees": pa.array([text is not None for text in texts], pa.bool_()),
        "disagreement": pa.array(texts, pa.string()),
    }, schema=_TABLE_SCHEMAS["results"])
    return {"evaluations": evaluations, "matchups": matchups, "results": results}


class _BatchTables:
    """Rows of the rule-independent hand-data tables for the hands of one batch (the verdict
    tables come from :func:`_verdict_tables`).

    Rows are gathered as tuples and transposed once at the end; placements, discards and board
    texts (most of the data) are gathered as card-code bytes and expanded with numpy and Arrow,
    not card by card in Python.
    """

    def __init__(self) -> None:
        self.rows: dict[str, list[tuple]] = {
            name: [] for name in ("hands", "seats")
        }
        self._board_keys: list[int] = []
        self._board_players: list[str] = []
        self._board_cards = bytearray()
        self._street_keys: list[int] = []
        self._street_players: list[str] = []
        self._street_numbers: list[int] = []
        self._placed_counts: list[int] = []
        self._discard_counts: list[int] = []
        self._placed = bytearray()
        self._discarded = bytearray()

    def add_hand(self, key: int, digest: str, hand: HandRecord, path: str, line: int) -> None:
        """Rows of the rule-independent tables: hands, seats, placements, discards, boards."""
        players = hand.players
        self.rows["hands"].append((
            key, hand.site, hand.hand_id, hand.table, _utc_timestamp(hand.started_at),
            hand.variant.value, hand.rules, hand.button, len(players),
            all(player.streets is not None for player in players),
            any(player.fantasyland for player in players), digest, path, line,
            _json_or_none(hand.extra),
        ))
        position = {player.name: index for index, player in enumerate(hand.action_order())}
        seats = self.rows["seats"]
        button = hand.button
        pair_code = _PAIR_CODE.__getitem__
        board_cards = self._board_cards
        placed_counts = self._placed_counts
        discard_counts = self._discard_counts
        placed_codes = self._placed
        discarded_codes = self._discarded
        for player in players:
            name = player.name
            extra = player.extra
            streets = player.streets
            seats.append((
                key, name, player.seat, position[name], name == button, player.fantasyland,
                None if streets is None else sum([len(street.dealt) for street in streets]),
                player.reported_points, _json_or_none(extra) if extra else None,
            ))
            self._board_keys.append(key)
            self._board_players.append(name)
            board = player.board
            board_cards.extend(board.top)
            board_cards.extend(board.middle)
            board_cards.extend(board.bottom)
            if streets is None:
                continue
            count = len(streets)
            self._street_keys += [key] * count
            self._street_players += [name] * count
            self._street_numbers += range(1, count + 1)
            for street in streets:
                placed = street.placed
                discarded = street.discarded
                placed_counts.append(len(placed))
                placed_codes.extend(map(pair_code, placed))
                discard_counts.append(len(discarded))
                discarded_codes.extend(discarded)

    def _street_table(self, name: str) -> pa.Table:
        """Placements or discards, expanded from the per-street card bytes."""
        counts = np.asarray(
            self._placed_counts if name == "placements" else self._discard_counts, np.int64
        )
        streets = np.repeat(np.arange(len(counts)), counts)
        columns: dict[str, Any] = {
            "hand_key": pa.array(np.asarray(self._street_keys, np.int64)[streets]),
            "player": pa.array(self._street_players, pa.string()).take(pa.array(streets)),
            "street": pa.array(np.asarray(self._street_numbers, np.int8)[streets]),
        }
        if name == "placements":
            codes = np.frombuffer(bytes(self._placed), np.uint8).astype(np.int64)
            starts = np.cumsum(counts) - counts
            columns["card_order"] = pa.array(
                (np.arange(len(streets)) - np.repeat(starts, counts)).astype(np.int8)
            )
            columns["card"] = _CARD_ARRAY.take(pa.array(codes // 3))
            columns["row_name"] = _ROW_ARRAY.take(pa.array(codes % 3))
        else:
            columns["card"] = _CARD_ARRAY.take(
                pa.array(np.frombuffer(bytes(self._discarded), np.uint8).astype(np.int64))
            )
        return pa.Table.from_pydict(columns, schema=_TABLE_SCHEMAS[name])

    def _boards_table(self) -> pa.Table:
        """Final boards: row texts joined from the 13 card codes of each board."""
        codes = np.frombuffer(bytes(self._board_cards), np.uint8).astype(np.int64).reshape(-1, 13)
        texts = [_CARD_ARRAY.take(pa.array(codes[:, column])) for column in range(13)]

        def joined(first: int, last: int) -> pa.Array:
            return pc.binary_join_element_wise(*texts[first:last], " ")

        return pa.Table.from_pydict({
            "hand_key": pa.array(self._board_keys, pa.int64()),
            "player": pa.array(self._board_players, pa.string()),
            "top": joined(0, 3), "middle": joined(3, 8), "bottom": joined(8, 13),
        }, schema=_TABLE_SCHEMAS["boards"])

    def arrow(self) -> dict[str, pa.Table]:
        """Every table as Arrow."""
        tables = {name: _rows_table(name, rows) for name, rows in self.rows.items()}
        tables["boards"] = self._boards_table()
        for name in _STREET_TABLES:
            tables[name] = self._street_table(name)
        return tables


# --- the ingest engine --------------------------------------------------------------------------


@dataclass(slots=True)
class _Reject:
    path: str
    line: int | None
    hand_id: str | None
    reason: str
    raw: str
    kind: str
    conflict_with: str | None = None


@dataclass(slots=True)
class _Candidate:
    """A valid record of a batch: its identity and where it came from."""

    key: int
    digest: str
    site: str
    hand_id: str
    table: str | None
    path: str
    line: int
    raw: str

    def __reduce__(self) -> tuple[type, tuple]:
        # Workers send a batch's candidates back pickled: as constructor arguments this takes
        # about half the CPU of the slotted dataclass's __getstate__/__setstate__ pair.
        return (_Candidate, (self.key, self.digest, self.site, self.hand_id, self.table,
                             self.path, self.line, self.raw))


@dataclass(slots=True)
class _Prepared:
    """A batch validated, scored and turned into columns, ready to be written."""

    records: int
    rejects: list[_Reject]
    candidates: list[_Candidate]  # the first record of each key in the batch
    later: list[_Candidate]  # records of a key seen earlier in the batch
    frames: dict[str, pa.Table]  # rows of every candidate, for every hand table


def _rules_argument(rules: RuleSet | str | None) -> RuleSet | None:
    if rules is None or isinstance(rules, RuleSet):
        return rules
    return resolve_rules(rules)


class _BatchBuilder:
    """Validates records one at a time (keeping only the compact HandRecord), then scores the
    batch in one go and builds its columns."""

    def __init__(self, resolver: RulesResolver) -> None:
        self.resolver = resolver
        self.records = 0
        self.rejects: list[_Reject] = []
        self.candidates: list[_Candidate] = []
        self.hands: list[HandRecord] = []
        self.later: list[_Candidate] = []
        self.keys: set[int] = set()

    def add(self, source: SourceRecord) -> None:
        """Validate one record: a reject, a candidate, or a later copy of a batch key."""
        self.records += 1
        if source.record is None:
            self.rejects.append(_Reject(source.path, source.line, source.hand_id,
                                        source.error or "unreadable record", source.raw, "read"))
            return
        try:
            hand = parse_hand(source.record)
        except InvalidHand as error:
            self.rejects.append(_Reject(source.path, source.line, error.hand_id or source.hand_id,
                                        error.reason, source.raw, "invalid"))
            return
        try:
            self.resolver(hand.rules)
        except RulesError as error:
            self.rejects.append(_Reject(source.path, source.line, hand.hand_id, str(error),
                                        source.raw, "rules"))
            return
        candidate = _Candidate(store.hand_key(hand.site, hand.hand_id), content_hash(hand),
                               hand.site, hand.hand_id, hand.table, source.path, source.line,
                               source.raw)
        if candidate.key in self.keys:
            self.later.append(candidate)
            return
        self.keys.add(candidate.key)
        self.candidates.append(candidate)
        self.hands.append(hand)

    def finish(self) -> _Prepared:
        """Score the batch's hands together and build the columns of every table."""
        tables = _BatchTables()
        for candidate, hand in zip(self.candidates, self.hands, strict=True):
            tables.add_hand(candidate.key, candidate.digest, hand, candidate.path, candidate.line)
        rule_independent = tables.arrow()
        verdicts = _verdict_tables([candidate.key for candidate in self.candidates], self.hands,
                                   self.resolver)
        frames = {name: rule_independent.get(name, verdicts.get(name)) for name in _FRAME_ORDER}
        return _Prepared(self.records, self.rejects, self.candidates, self.later, frames)


def _prepare_canonical_lines(
    file_name: str, lines: list[SourceLine], rules: RuleSet | None
) -> _Prepared:
    """Worker side of the parallel path: parse canonical lines exactly as the canonical reader
    does, validate, score and build columns."""
    builder = _BatchBuilder(RulesResolver(override=rules))
    parse_line = canonical_reader.parse_canonical_line
    for line in lines:
        builder.add(parse_line(file_name, line))
    return builder.finish()


def _worker_start() -> None:
    gc.disable()


class _Writer:
    """Writes batches: one short write connection and one transaction per batch."""

    def __init__(self, database: str | os.PathLike[str]) -> None:
        self.database = Path(database)

    def connect(self) -> duckdb.DuckDBPyConnection:
        """Open the database for writing (waiting for readers), or raise DatabaseError."""
        try:
            return store.connect(self.database, wait_seconds=WRITE_WAIT_SECONDS)
        except duckdb.Error as error:
            raise DatabaseError(f"cannot use database {self.database}: {error}") from error
        except OSError as error:
            raise DatabaseError(
                f"cannot use database {self.database}: {error.strerror or error}"
            ) from error


class _Ingestor:
    """Streams records of one source through validation, scoring and batched writes."""

    def __init__(
        self,
        writer: _Writer,
        rules: RuleSet | None,
        batch_size: int,
        on_batch: Callable[[BatchReport], None] | None,
        on_records: Callable[[int], None] | None,
    ) -> None:
        self.writer = writer
        self.rules = rules
        self.resolver = RulesResolver(override=rules)
        self.batch_size = max(1, batch_size)
        self.on_batch = on_batch
        self.on_records = on_records
        self.tables_touched: set[tuple[str, str | None]] = set()
        self.batches = 0

    def run(self, records: Iterator[SourceRecord], summary: FileSummary) -> None:
        """Read every record, writing batch by batch. FormatError propagates to the caller.

        Python's cyclic garbage collector is paused for the whole run: a batch holds millions
        of small containers, and collections triggered while they are alive would scan them
        all, over and over (bulk parsing runs several times slower). Records are acyclic, so
        reference counting frees them; a young-generation collection after each batch picks
        up anything else.
        """
        with _collector_paused():
            builder = _BatchBuilder(self.resolver)
            pending_progress = 0
            try:
                for record in records:
                    builder.add(record)
                    pending_progress += 1
                    if pending_progress >= 1000 and self.on_records is not None:
                        self.on_records(pending_progress)
                        pending_progress = 0
                    if builder.records >= self.batch_size:
                        self._write(builder.finish(), summary)
                        builder = _BatchBuilder(self.resolver)
                        gc.collect(0)
            except FormatError:
                # Records read before a reader gave up on the file still land.
                if builder.records:
                    self._write(builder.finish(), summary)
                raise
            if builder.records:
                self._write(builder.finish(), summary)
            if pending_progress and self.on_records is not None:
                self.on_records(pending_progress)

    def run_canonical_parallel(self, path: Path, summary: FileSummary, workers: int) -> None:
        """The canonical reader's work split over worker processes: this process reads lines
        and writes batches, in order (so the result is the sequential one); the workers parse,
        validate, score and build columns. At most ``workers + 1`` batches are in flight."""
        file_name = str(path)
        context = multiprocessing.get_context("forkserver")
        with _collector_paused(), ProcessPoolExecutor(
            workers, mp_context=context, initializer=_worker_start
        ) as pool:
            pending: deque[Future[_Prepared]] = deque()
            batch: list[SourceLine] = []
            for line in read_lines(path):
                if line.text is not None and not line.text.strip():
                    continue
                batch.append(line)
                if len(batch) >= self.batch_size:
                    pending.append(pool.submit(_prepare_canonical_lines, file_name, batch,
                                               self.rules))
                    batch = []
                    while len(pending) > workers:
                        self._write_counted(pending.popleft().result(), summary)
            if batch:
                pending.append(pool.submit(_prepare_canonical_lines, file_name, batch,
                                           self.rules))
            while pending:
                self._write_counted(pending.popleft().result(), summary)

    def _write_counted(self, prepared: _Prepared, summary: FileSummary) -> None:
        self._write(prepared, summary)
        if self.on_records is not None:
            self.on_records(prepared.records)

    def _write(self, prepared: _Prepared, summary: FileSummary) -> None:
        """One transaction: classify against stored hands, insert new ones and the rejects."""
        before = (summary.stored, summary.duplicates, summary.rejected)
        candidates = prepared.candidates
        rejects = prepared.rejects
        connection = self.writer.connect()
        try:
            connection.execute("BEGIN TRANSACTION")
            stored: dict[int, tuple[str, str, int]] = {}
            if candidates:
                keys = pa.table({"hand_key": pa.array([c.key for c in candidates], pa.int64())})
                connection.register("_batch_keys", keys)
                for key, digest, path, line in connection.execute(
                    "SELECT h.hand_key, h.content_hash, h.source_path, h.source_line "
                    "FROM hands h SEMI JOIN _batch_keys k ON h.hand_key = k.hand_key"
                ).fetchall():
                    stored[key] = (digest, path, line)
                connection.unregister("_batch_keys")
            # Each key's reference: what is stored, else the batch's first record of the key.
            new_keys: list[int] = []
            reference: dict[int, tuple[str, str, int]] = dict(stored)
            duplicates = 0
            for candidate in candidates:
                if candidate.key in stored:
                    duplicates += self._compare(candidate, stored[candidate.key], rejects)
                else:
                    new_keys.append(candidate.key)
                    reference[candidate.key] = (candidate.digest, candidate.path, candidate.line)
            for candidate in prepared.later:
                duplicates += self._compare(candidate, reference[candidate.key], rejects)
            if new_keys and len(new_keys) == len(candidates):  # all new: nothing to filter
                for name, frame in prepared.frames.items():
                    store.insert_frame(connection, name, frame)
            elif new_keys:
                connection.register(
                    "_new_keys", pa.table({"hand_key": pa.array(new_keys, pa.int64())})
                )
                for name, frame in prepared.frames.items():
                    store.insert_frame(connection, name, frame, only_keys="_new_keys")
                connection.unregister("_new_keys")
            self.tables_touched.update((c.site, c.table) for c in candidates)
            _insert_rejects(connection, rejects)
            connection.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                connection.execute("ROLLBACK")
            raise
        finally:
            connection.close()
        summary.records += prepared.records
        summary.stored += len(new_keys)
        summary.duplicates += duplicates
        for reject in rejects:
            summary.note_reject(reject.line, reject.reason)
        self.batches += 1
        if self.on_batch is not None:
            self.on_batch(BatchReport(
                summary.path, self.batches, prepared.records, summary.stored - before[0],
                summary.duplicates - before[1], summary.rejected - before[2],
            ))

    @staticmethod
    def _compare(
        candidate: _Candidate, reference: tuple[str, str, int], rejects: list[_Reject]
    ) -> int:
        """1 when the candidate duplicates the reference; else add a conflict reject, 0."""
        digest, path, line = reference
        if digest == candidate.digest:
            return 1
        where = f"{path}:{line}"
        rejects.append(_Reject(
            candidate.path, candidate.line, candidate.hand_id,
            f"conflict: hand {candidate.hand_id!r} of site {candidate.site!r} is already stored "
            f"from {where} with different content (this record: "
            f"{candidate.path}:{candidate.line})",
            candidate.raw, "conflict", where,
        ))
        return 0


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _insert_rejects(connection: duckdb.DuckDBPyConnection, rejects: Sequence[_Reject]) -> None:
    """Insert rejects that are not stored yet (keyed by path, line, reason and raw text)."""
    if not rejects:
        return
    rows: list[tuple] = []
    now = datetime.now(UTC).replace(tzinfo=None)
    seen: set[str] = set()
    for reject in rejects:
        raw = clip_raw(reject.raw or "")
        key = _reject_key(reject.path, reject.line, reject.reason, raw)
        if key in seen:
            continue
        seen.add(key)
        rows.append((reject.path, reject.line, reject.hand_id, reject.reason, raw, now,
                     reject.kind, reject.conflict_with, key))
    connection.register("_frame_rejects", _rows_table("rejects", rows))
    try:
        connection.execute(
            "INSERT INTO rejects BY NAME SELECT f.* FROM _frame_rejects f "
            "ANTI JOIN rejects r ON r.reject_key = f.reject_key"
        )
    finally:
        connection.unregister("_frame_rejects")


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


def _finish_source(
    writer: _Writer,
    summary: FileSummary,
    size: int | None,
    touched: set[tuple[str, str | None]],
    session_gap: float,
    file_rejects: Sequence[_Reject] = (),
) -> None:
    """Close a source: its file-level rejects, affected sessions and its ingested_files row."""
    connection = writer.connect()
    try:
        connection.execute("BEGIN TRANSACTION")
        _insert_rejects(connection, file_rejects)
        stored_gap = store.get_meta(connection, SESSION_GAP_META_KEY)
        if stored_gap is not None and float(stored_gap) != session_gap:
            update_sessions(connection, None, session_gap)
        elif touched:
            update_sessions(connection, touched, session_gap)
        store.set_meta(connection, SESSION_GAP_META_KEY, repr(float(session_gap)))
        _record_file(connection, summary, size)
        connection.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            connection.execute("ROLLBACK")
        raise
    finally:
        connection.close()


def _already_ingested(writer: _Writer, digest: str) -> tuple[str, datetime] | None:
    connection = writer.connect()
    try:
        rows = connection.execute(
            "SELECT path, ingested_at FROM ingested_files "
            "WHERE content_hash = ? AND status = 'complete' ORDER BY ingested_at LIMIT 1",
            [digest],
        ).fetchall()
    finally:
        connection.close()
    return (rows[0][0], rows[0][1]) if rows else None


# --- progress ----------------------------------------------------------------------------------


class _Progress:
    """A rich progress display on stderr: hands read and hands per second."""

    def __init__(self, enabled: bool) -> None:
        self.progress = None
        self.task = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.text import Text

        class RateColumn(ProgressColumn):
            def render(self, task: Any) -> Text:
                elapsed = task.finished_time or task.elapsed
                if not elapsed or not task.completed:
                    return Text("… hands/s")
                return Text(f"{task.completed / elapsed:,.0f} hands/s")

        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:,.0f} hands"),
            RateColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.progress.start()
        self.task = self.progress.add_task("ingest", total=None)

    def describe(self, text: str) -> None:
        """Show which source is being read."""
        if self.progress is not None:
            self.progress.update(self.task, description=text)

    def advance(self, count: int) -> None:
        """Count records read."""
        if self.progress is not None:
            self.progress.advance(self.task, count)

    def stop(self) -> None:
        """Close the display."""
        if self.progress is not None:
            self.progress.update(self.task, description="done")
            self.progress.stop()


# --- public API --------------------------------------------------------------------------------


def _open_check(writer: _Writer) -> None:
    """Fail early (DatabaseError) when the database cannot be opened for writing."""
    writer.connect().close()


def ingest_paths(
    paths: Iterable[str | os.PathLike[str]],
    database: str | os.PathLike[str],
    rules: RuleSet | str | None = None,
    format: str | None = None,
    game: str | None = None,
    progress: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    session_gap: float = DEFAULT_SESSION_GAP_MINUTES,
    on_batch: Callable[[BatchReport], None] | None = None,
    workers: int | None = None,
) -> IngestSummary:
    """Ingest files, folders (recursive) and globs, plain or gzip, into ``database``.

    ``rules`` (a RuleSet, a preset name or a rules file) overrides the rules each record names;
    ``format`` forces a reader (else it is detected per file); ``game`` names the poker-arena
    game. Each batch of ``batch_size`` records commits atomically; ``on_batch`` is called after
    each commit. Sessions of the tables touched are recomputed with ``session_gap`` minutes.
    ``workers``: processes that parse, validate and score canonical JSON Lines while this one
    reads and writes; None uses every core for files of :data:`PARALLEL_MIN_BYTES` or more,
    1 never forks, 2+ forks for every canonical file. The result is the same either way.

    Raises :class:`IngestError` for a missing path and :class:`DatabaseError` for a database
    that cannot be used; problems inside files become rejects and per-file summaries.
    """
    started = time.perf_counter()
    files = expand_paths(paths)
    rule_set = _rules_argument(rules)
    writer = _Writer(database)
    _open_check(writer)
    summary = IngestSummary(str(database))
    display = _Progress(progress)
    try:
        for path in files:
            file_summary = _ingest_file(
                writer, path, rule_set, format, game, batch_size, session_gap, on_batch, display,
                workers,
            )
            summary.files.append(file_summary)
    finally:
        display.stop()
    summary.seconds = time.perf_counter() - started
    return summary


def _ingest_file(
    writer: _Writer,
    path: Path,
    rules: RuleSet | None,
    format: str | None,
    game: str | None,
    batch_size: int,
    session_gap: float,
    on_batch: Callable[[BatchReport], None] | None,
    display: _Progress,
    workers: int | None = None,
) -> FileSummary:
    summary = FileSummary(str(path), format=format)
    display.describe(path.name)
    try:
        summary.content_hash = _file_hash(path)
        size = path.stat().st_size
    except OSError as error:
        summary.status = "failed"
        summary.message = f"cannot read: {error.strerror or error}"
        reject = _Reject(str(path), None, None, summary.message, "", "file")
        summary.note_reject(None, summary.message)
        _finish_source(writer, summary, None, set(), session_gap, [reject])
        return summary
    earlier = _already_ingested(writer, summary.content_hash)
    if earlier is not None:
        earlier_path, when = earlier
        summary.status = "unchanged"
        same = "" if earlier_path == str(path) else f" as {earlier_path}"
        summary.message = (
            f"unchanged: already ingested{same} on {when:%Y-%m-%d %H:%M:%S} UTC; nothing new stored"
        )
        _finish_source(writer, summary, size, set(), session_gap)
        return summary
    ingestor = _Ingestor(writer, rules, batch_size, on_batch, display.advance)
    file_rejects: list[_Reject] = []
    try:
        records = read_source(path, format=format, game=game)
        if summary.format is None:
            summary.format = _detected_format(path)
        parallel = _parallel_workers(workers, summary.format, size)
        if parallel > 1:
            ingestor.run_canonical_parallel(path, summary, parallel)
        else:
            ingestor.run(records, summary)
    except FormatError as error:
        summary.status = "failed"
        summary.message = error.reason
        file_rejects.append(_Reject(str(path), None, None, error.reason, "", "file"))
        summary.note_reject(None, error.reason)
    else:
        if summary.records == 0:
            summary.status = "empty"
            summary.message = EMPTY_FILE_REASON
            file_rejects.append(_Reject(str(path), None, None, EMPTY_FILE_REASON, "", "file"))
            summary.note_reject(None, EMPTY_FILE_REASON)
    _finish_source(writer, summary, size, ingestor.tables_touched, session_gap, file_rejects)
    return summary


def _parallel_workers(workers: int | None, format: str | None, size: int) -> int:
    """How many worker processes to use for a file (1 = none)."""
    if format != "canonical":
        return 1
    if workers is None:
        return (os.cpu_count() or 1) if size >= PARALLEL_MIN_BYTES else 1
    return max(1, workers)


def _detected_format(path: Path) -> str | None:
    from pipeline.formats import detect_format

    try:
        return detect_format(path)
    except FormatError:
        return None


def _mapping_records(
    mappings: Iterable[Any], source_name: str, hasher: Any
) -> Iterator[SourceRecord]:
    for number, mapping in enumerate(mappings, 1):
        try:
            raw = json.dumps(mapping, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            raw = repr(mapping)
        hasher.update(raw.encode("utf-8", "surrogatepass") + b"\n")
        if not isinstance(mapping, dict):
            yield SourceRecord(
                source_name, number, clip_raw(raw), None,
                f"expected a JSON object (a hand record), got {type(mapping).__name__}",
            )
            continue
        hand_id = mapping.get("hand_id")
        yield SourceRecord(
            source_name, number, clip_raw(raw), mapping, None,
            str(hand_id) if isinstance(hand_id, str | int) else None,
        )


def ingest_mappings(
    mappings: Iterable[dict],
    database: str | os.PathLike[str],
    source_name: str,
    rules: RuleSet | str | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    session_gap: float = DEFAULT_SESSION_GAP_MINUTES,
) -> IngestSummary:
    """Ingest canonical hand mappings (hands entered in the dashboard, uploads) into ``database``.

    The same path as files: same validation, dedup, tables and keys. ``source_name`` stands in
    for the file name (rejects and ``hands.source_path`` name it; line = position, from 1).
    """
    started = time.perf_counter()
    rule_set = _rules_argument(rules)
    writer = _Writer(database)
    _open_check(writer)
    summary = FileSummary(source_name, format="mappings")
    hasher = hashlib.sha256()
    ingestor = _Ingestor(writer, rule_set, batch_size, None, None)
    ingestor.run(_mapping_records(mappings, source_name, hasher), summary)
    summary.content_hash = hasher.hexdigest()
    if summary.records == 0:
        summary.status = "empty"
        summary.message = "no hands given"
    _finish_source(writer, summary, None, ingestor.tables_touched, session_gap)
    return IngestSummary(str(database), [summary], time.perf_counter() - started)


def delete_hand(database: str | os.PathLike[str], site: str, hand_id: str) -> bool:
    """Remove one stored hand (every hand-data table) and recompute its table's sessions.

    For taking back or correcting a hand entered live: delete it, then ingest the corrected
    record. One transaction. Returns False when no such hand is stored.
    """
    key = store.hand_key(site, hand_id)
    connection = _Writer(database).connect()
    try:
        connection.execute("BEGIN TRANSACTION")
        rows = connection.execute(
            "SELECT site, table_name FROM hands WHERE hand_key = ?", [key]
        ).fetchall()
        row = rows[0] if rows else None
        if row is None:
            connection.execute("ROLLBACK")
            return False
        for name in store.HAND_DATA_TABLES:
            if name != "sessions":
                connection.execute(f"DELETE FROM {name} WHERE hand_key = ?", [key])
        gap = store.get_meta(connection, SESSION_GAP_META_KEY)
        update_sessions(connection, [(row[0], row[1])],
                        float(gap) if gap is not None else DEFAULT_SESSION_GAP_MINUTES)
        connection.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            connection.execute("ROLLBACK")
        raise
    finally:
        connection.close()
    return True


# --- re-scoring --------------------------------------------------------------------------------

_BOARD_CODES_SQL = (
    "list_transform(string_split(b.top || ' ' || b.middle || ' ' || b.bottom, ' '), "
    "lambda c: ((instr('23456789TJQKA', c[1]) - 1) * 4 + instr('cdhs', c[2]) - 1)::TINYINT)"
)
_CLASS_ARRAYS = {
    False: pa.array(HIGH_CLASS_LABELS, pa.string()),
    True: pa.array(LOW_CLASS_LABELS, pa.string()),
}


def _stored_boards(connection: duckdb.DuckDBPyConnection, low: int, high: int) -> pa.Table:
    """Every seat of the hands with keys in [low, high], in hand then settlement order, with
    the board as 13 card codes (top, middle, bottom)."""
    return connection.sql(
        f"SELECT s.hand_key, h.variant, h.rules, s.player, s.position, s.fantasyland, "
        f"s.reported_points, s.extra, {_BOARD_CODES_SQL} AS cards "
        "FROM seats s JOIN boards b ON b.hand_key = s.hand_key AND b.player = s.player "
        "JOIN hands h ON h.hand_key = s.hand_key "
        "WHERE s.hand_key BETWEEN ? AND ? ORDER BY s.hand_key, s.position",
        params=[low, high],
    ).to_arrow_table()


def _score_stored(boards: pa.Table, rules_for: Callable[[str], RuleSet]) -> dict[str, pa.Table]:
    """Evaluations, matchups and results for stored boards, computed as columns with the batch
    rules core (the same verdicts :func:`pipeline.evaluate.score_records` gives)."""
    count = boards.num_rows
    keys = boards.column("hand_key").to_numpy()
    positions = boards.column("position").to_numpy().astype(np.int64)
    cards = boards.column("cards").combine_chunks().flatten().to_numpy().reshape(count, 13)
    fantasyland = boards.column("fantasyland").to_numpy(zero_copy_only=False).astype(bool)
    names = boards.column("player").to_pylist()
    variants = boards.column("variant").to_pylist()
    rule_names = boards.column("rules").to_pylist()
    group_of: dict[tuple[str, str], list[int]] = {}
    rule_sets: dict[str, RuleSet] = {}
    for index, (variant, name) in enumerate(zip(variants, rule_names, strict=True)):
        if name not in rule_sets:
            rule_sets[name] = rules_for(name)
        group_of.setdefault((variant, name), []).append(index)

    ruleset = np.empty(count, dtype=object)
    values = np.zeros((count, 3), np.int32)
    foul = np.zeros(count, bool)
    raw = np.zeros((count, 3), np.int16)
    royalties = np.zeros((count, 3), np.int16)
    fantasyland_cards = np.zeros(count, np.int8)
    class_text: list[pa.Array] = [pa.nulls(count, pa.string())] * 3
    class_parts: list[list[tuple[np.ndarray, pa.Array]]] = [[], [], []]
    points = np.zeros(count, np.int64)
    pair_parts: list[tuple[np.ndarray, ...]] = []
    for (variant_name, rules_name), members in group_of.items():
        rows = np.asarray(members, np.int64)
        rules = rule_sets[rules_name]
        variant = Variant(variant_name)
        columns = evaluate_boards(cards[rows], variant, rules, fantasyland[rows])
        ruleset[rows] = rules.name
        values[rows] = columns.values
        foul[rows] = columns.foul
        raw[rows] = columns.raw_royalties
        royalties[rows] = columns.royalties
        fantasyland_cards[rows] = columns.fantasyland_cards
        for row_index in range(3):
            labels = _CLASS_ARRAYS[row_index == 1 and variant.lowball_middle]
            class_parts[row_index].append(
                (rows, labels.take(pa.array(columns.classes[:, row_index].astype(np.int64))))
            )
        # Hands of the group: (H, P) board indexes (local to the group) in settlement order.
        group_keys = keys[rows]
        starts = np.flatnonzero(np.r_[True, group_keys[1:] != group_keys[:-1]])
        hand_of_row = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(rows)]))
        width = int(positions[rows].max()) + 1
        seats = np.full((len(starts), width), -1, np.int64)
        seats[hand_of_row, positions[rows]] = np.arange(len(rows))
        totals, settled_pairs = settle_pairs(columns, seats, rules)
        for pair in settled_pairs:
            first, second, pairs, amount = pair.first, pair.second, pair.outcome, pair.settled
            pair_parts.append((rows[first], rows[second], pairs.rows, pairs.scoop,
                               pairs.royalty_points, pairs.points, amount))
        points[rows] = totals[hand_of_row, positions[rows]]
    for row_index in range(3):
        if class_parts[row_index]:
            order = np.concatenate([rows for rows, _ in class_parts[row_index]])
            labels = pa.concat_arrays([labels for _, labels in class_parts[row_index]])
            class_text[row_index] = labels.take(pa.array(np.argsort(order, kind="stable")))

    player_array = boards.column("player").combine_chunks()
    evaluations = pa.Table.from_pydict({
        "hand_key": pa.array(keys, pa.int64()), "player": player_array,
        "ruleset": pa.array(ruleset.tolist(), pa.string()),
        "top_class": class_text[0], "middle_class": class_text[1], "bottom_class": class_text[2],
        "top_value": values[:, 0], "middle_value": values[:, 1], "bottom_value": values[:, 2],
        "foul": foul, "royalty_top": royalties[:, 0], "royalty_middle": royalties[:, 1],
        "royalty_bottom": royalties[:, 2], "royalties": royalties.sum(axis=1).astype(np.int16),
        "fantasyland_next": fantasyland_cards > 0, "fantasyland_cards": fantasyland_cards,
        "raw_royalty_top": raw[:, 0], "raw_royalty_middle": raw[:, 1],
        "raw_royalty_bottom": raw[:, 2],
    }, schema=_TABLE_SCHEMAS["evaluations"])

    if pair_parts:
        first, second, pair_rows, scoop, royalty_points, pair_points, settled = (
            np.concatenate(part) for part in zip(*pair_parts, strict=True)
        )
    else:
        first = second = np.zeros(0, np.int64)
        pair_rows = np.zeros((0, 3), np.int8)
        scoop = royalty_points = pair_points = settled = np.zeros(0, np.int64)
    won = (pair_rows > 0).sum(axis=1)
    lost = (pair_rows < 0).sum(axis=1)
    both = np.concatenate
    matchups = pa.Table.from_pydict({
        "hand_key": pa.array(both([keys[first], keys[first]]), pa.int64()),
        "player": player_array.take(pa.array(both([first, second]))),
        "opponent": player_array.take(pa.array(both([second, first]))),
        "rows_won": both([won, lost]).astype(np.int8),
        "rows_lost": both([lost, won]).astype(np.int8),
        "scoop": both([scoop, -scoop]).astype(np.int8),
        "royalty_points": both([royalty_points, -royalty_points]).astype(np.int32),
        "points": both([pair_points, -pair_points]).astype(np.int32),
        "settled": both([settled, -settled]).astype(np.int32),
    }, schema=_TABLE_SCHEMAS["matchups"])

    reported = boards.column("reported_points").to_pylist()
    extras = boards.column("extra").to_pylist()
    texts: list[str | None] = [None] * count
    flagged = sorted({
        int(keys[index]) for index in range(count)
        if extras[index] is not None
        or (reported[index] is not None and reported[index] != points[index])
    })
    if flagged:
        flagged_set = set(flagged)
        by_hand: dict[int, list[int]] = {}
        for index in range(count):
            if int(keys[index]) in flagged_set:
                by_hand.setdefault(int(keys[index]), []).append(index)
        for indexes in by_hand.values():
            hand_verdicts = [
                _Verdict(names[index], reported[index],
                         json.loads(extras[index]) if extras[index] else {}, bool(foul[index]),
                         tuple(int(value) for value in raw[index]),
                         int(fantasyland_cards[index]), int(points[index]))
                for index in indexes
            ]
            for index, text in zip(indexes, _disagreement_texts(hand_verdicts), strict=True):
                texts[index] = text
    results = pa.Table.from_pydict({
        "hand_key": pa.array(keys, pa.int64()), "player": player_array,
        "points": points.astype(np.int32),
        "reported_points": boards.column("reported_points").combine_chunks(),
        "disagrees": pa.array([text is not None for text in texts], pa.bool_()),
        "disagreement": pa.array(texts, pa.string()),
    }, schema=_TABLE_SCHEMAS["results"])
    return {"evaluations": evaluations, "matchups": matchups, "results": results}


def rescore(
    database: str | os.PathLike[str],
    rules: RuleSet | str | None = None,
    batch_size: int = 250_000,
    progress: bool = False,
) -> RescoreSummary:
    """Recompute evaluations, matchups and results of every stored hand, from stored boards.

    ``rules`` (a RuleSet, a preset name or a rules file) applies to every hand; None scores
    each hand under the rules its record named. No file is read: the boards come from the
    database and are scored as columns by the batch rules core, ``batch_size`` hands per
    transaction (short write connections, as in ingest); sessions' points follow.
    Raises :class:`DatabaseError` when the database cannot be used, RulesError for unknown
    rules.
    """
    started = time.perf_counter()
    rule_set = _rules_argument(rules)
    resolver = RulesResolver(override=rule_set)
    writer = _Writer(database)
    connection = writer.connect()
    try:
        keys = connection.sql(
            "SELECT hand_key FROM hands ORDER BY hand_key"
        ).to_arrow_table().column(0).to_numpy()
    finally:
        connection.close()
    display = _Progress(progress)
    display.describe("rescore")
    hands_done = players_done = disagreeing = 0
    names: set[str] = set()
    try:
        for start in range(0, len(keys), max(1, batch_size)):
            chunk = keys[start:start + batch_size]
            low, high = int(chunk[0]), int(chunk[-1])
            connection = writer.connect()
            try:
                connection.execute("BEGIN TRANSACTION")
                boards = _stored_boards(connection, low, high)
                tables = _score_stored(boards, resolver)
                for name, key_columns in store.VERDICT_TABLES.items():
                    store.update_frame(connection, name, tables[name], key_columns)
                connection.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(duckdb.Error):
                    connection.execute("ROLLBACK")
                raise
            finally:
                connection.close()
            names.update(tables["evaluations"].column("ruleset").unique().to_pylist())
            disagreeing += tables["results"].column("disagrees").to_numpy(
                zero_copy_only=False).sum()
            hands_done += len(chunk)
            players_done += boards.num_rows
            display.advance(len(chunk))
        connection = writer.connect()
        try:
            connection.execute("BEGIN TRANSACTION")
            gap = store.get_meta(connection, SESSION_GAP_META_KEY)
            update_sessions(connection, None,
                            float(gap) if gap is not None else DEFAULT_SESSION_GAP_MINUTES)
            label = ", ".join(sorted(names)) if names else (rule_set.name if rule_set else "")
            store.set_meta(connection, "rescored_with", label)
            connection.execute("COMMIT")
        finally:
            connection.close()
    finally:
        display.stop()
    label = rule_set.name if rule_set is not None else ", ".join(sorted(names)) or "record rules"
    return RescoreSummary(label, hands_done, players_done, int(disagreeing),
                          time.perf_counter() - started)
