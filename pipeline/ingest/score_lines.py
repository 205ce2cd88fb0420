"""``ofc score``'s engine: canonical JSON Lines scored block by block through the batch core.

A block of lines is parsed and validated by the columnar canonical path
(:func:`~pipeline.ingest.fast_canonical.parse_canonical_batch`), scored as columns by the batch
rules core (:func:`~pipeline.ingest.columns.score_columns`) and written as one output line per
input line, in input order. A line the columnar path does not accept outright (an unusual
spelling, an extra field, a bad record, unknown rules...) goes through the per-record path,
:func:`score_line` (:func:`~pipeline.records.validate.parse_hand` and the scalar rules core),
which scores it or gives its precise error, in its place. The output is the same, byte for
byte, as :func:`scalar_output` gives for every line alone (tests/ingest/test_score_lines.py
compares the two on the golden files, random hands and mutated lines).

:func:`score_blocks` scores a stream: the first block here, the rest by worker processes when
there is more than one block, with a bounded number of blocks in flight (so memory stays
bounded on a pipe too), yielded in input order.

Imports numpy and msgspec but not pyarrow or DuckDB (they cost more start-up time than a small
input takes to score).
"""

from __future__ import annotations

import json
import os
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from pipeline.formats.source import (
    RawLine,
    SourceLine,
    collector_paused,
    decode_line,
    json_error_reason,
    load_json,
)
from pipeline.ingest.columns import CLASS_LABELS, score_columns
from pipeline.ingest.evaluate import score_output, score_record
from pipeline.ingest.fast_canonical import parse_canonical_batch
from pipeline.ingest.lifetime import exit_with
from pipeline.records.rules_file import RulesResolver
from pipeline.records.validate import InvalidHand, parse_hand
from pipeline.rules.ruleset import RulesError

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = [
    "BLOCK_BYTES",
    "BLOCK_LINES",
    "ScoredBlock",
    "default_workers",
    "scalar_output",
    "score_block",
    "score_blocks",
    "score_line",
    "usable_workers",
    "workers_for",
]

BLOCK_LINES = 2048
"""Lines per block: scored together, and the unit of work of a worker process."""

WARM_UP_LINES = 8
"""Lines of the first block scored here before the workers fork: the rules core builds its
tables and the decoder its caches once, and every worker shares them."""

BLOCK_BYTES = 16 << 20
"""A block also ends once its lines hold this many bytes (lines may be up to 1 MiB long)."""


@dataclass(frozen=True, slots=True)
class ScoredBlock:
    """The output of a block of input lines: ``text`` holds one line per input line (each
    ending in a newline), ``invalid`` how many of them are errors."""

    text: str
    lines: int
    invalid: int


_ENCODER = json.JSONEncoder(separators=(", ", ": "), ensure_ascii=False)
_dumps = _ENCODER.encode
_quoted = json.encoder.encode_basestring  # what _dumps writes for a str, without the call


def score_line(text: str, resolver: RulesResolver) -> tuple[dict, bool]:
    """Score one input line with the per-record path; returns (output object, ok)."""
    hand_id = None
    try:
        mapping = load_json(text)
    except ValueError as error:  # JSONDecodeError, or NaN / Infinity
        return {"hand_id": None, "error": json_error_reason(error)}, False
    if isinstance(mapping, dict):
        hand_id = mapping.get("hand_id")
    try:
        if not isinstance(mapping, dict):
            raise InvalidHand(f"expected a JSON object, got {type(mapping).__name__}")
        hand = parse_hand(mapping)
        return score_output(score_record(hand, resolver(hand.rules))), True
    except (InvalidHand, RulesError) as error:
        return {"hand_id": hand_id, "error": str(error)}, False


def scalar_output(line: RawLine | SourceLine, resolver: RulesResolver) -> tuple[str, bool]:
    """One input line's output line (without its newline) by the per-record path alone, and
    whether it was valid: what ``ofc score`` printed for every line before the batch core."""
    if type(line) is tuple:
        line = decode_line(line)
    if line.text is None:
        result, ok = {"hand_id": None, "error": line.error}, False
    elif not line.text.strip():
        result, ok = {"hand_id": None, "error": "empty line"}, False
    else:
        result, ok = score_line(line.text, resolver)
    if not ok:
        result = {"line": line.number, **result}
    return _dumps(result), ok


_JSON_BOOL = ("false", "true")
_ROW_LABELS = tuple(_dumps(label) for label in CLASS_LABELS)


def score_block(lines: Sequence[RawLine | SourceLine], resolver: RulesResolver) -> ScoredBlock:
    """Score a block of input lines; the output lines are in input order."""
    with collector_paused():
        return _score_block(lines, resolver)


def _score_block(lines: Sequence[RawLine | SourceLine], resolver: RulesResolver) -> ScoredBlock:
    outputs: list[str | None] = [None] * len(lines)
    raw_positions = [position for position, item in enumerate(lines) if type(item) is tuple]
    if raw_positions:
        columns, accepted, rest = parse_canonical_batch(
            [(lines[position][0], lines[position][1]) for position in raw_positions], "",
            identity=False, streets=False,
        )
        unusable = _unusable_rules(columns.rules, resolver)
        if unusable:
            keep = np.asarray([name not in unusable for name in columns.rules], bool)
            columns = columns.select(keep)
            accepted = accepted[keep]
        if columns.hand_count:
            text = _scored_text(columns, resolver)
            if columns.hand_count == len(lines):  # every line scored as columns
                return ScoredBlock(text, len(lines), 0)
            hand_lines = text.split("\n")
            for index, hand_line in zip(accepted.tolist(), hand_lines, strict=False):
                outputs[raw_positions[index]] = hand_line
    invalid = 0
    for position, output in enumerate(outputs):
        if output is None:
            outputs[position], ok = scalar_output(lines[position], resolver)
            invalid += not ok
    outputs.append("")
    return ScoredBlock("\n".join(outputs), len(lines), invalid)  # type: ignore[arg-type]


_PLAYER_START = ', {"name": '


def _scored_text(columns, resolver) -> str:  # noqa: ANN001
    """The output lines of the hands in ``columns``, each ending in a newline: the JSON
    :func:`~pipeline.ingest.evaluate.score_output` gives, written as text directly. The parts
    that repeat from player to player (the foul and royalties; Fantasyland and the row classes)
    are written once per distinct combination, then every part is joined in one pass."""
    scored = score_columns(columns, resolver)
    player_count = len(columns.names)
    names = dict.fromkeys(columns.names)
    for name in names:
        names[name] = _quoted(name)
    booleans = _JSON_BOOL
    labels = _ROW_LABELS
    verdicts = _distinct_texts(
        np.column_stack([scored.foul, scored.royalties]),
        lambda foul, top, middle, bottom: (
            f', "foul": {booleans[foul]}, "royalties": {{"top": {top}, "middle": {middle}, '
            f'"bottom": {bottom}}}, "points": '))
    outlooks = _distinct_texts(
        np.column_stack([scored.fantasyland_cards, scored.class_codes]),
        lambda cards, top, middle, bottom: (
            f', "fantasyland_next": {booleans[cards > 0]}, "fantasyland_cards": {cards}, '
            f'"classes": {{"top": {labels[top]}, "middle": {labels[middle]}, '
            f'"bottom": {labels[bottom]}}}}}'))
    counts = columns.player_counts
    first_players = (np.cumsum(counts) - counts).tolist()
    starts = [_PLAYER_START] * player_count
    ends = [""] * player_count
    for first, count, hand_id in zip(first_players, counts.tolist(), columns.hand_ids,
                                     strict=True):
        starts[first] = f'{{"hand_id": {_quoted(hand_id)}, "players": [{{"name": '
        ends[first + count - 1] = "]}\n"
    return "".join(chain.from_iterable(zip(
        starts, map(names.__getitem__, columns.names), verdicts,
        map(str, scored.points.tolist()), outlooks, ends, strict=True)))


def _distinct_texts(rows: np.ndarray, render) -> list[str]:  # noqa: ANN001
    """``render(*row)`` for every row of a table of integers, rendered once per distinct row."""
    if not len(rows):
        return []
    rows = rows.astype(np.int64)
    if rows.shape[1] <= 4 and rows.min() >= -(1 << 15) and rows.max() < 1 << 15:
        key = np.zeros(len(rows), np.int64)
        for column in range(rows.shape[1]):  # 16 bits a column
            key = (key << 16) | (rows[:, column] & 0xFFFF)
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    texts = [render(*row) for row in rows[first].tolist()]
    return list(map(texts.__getitem__, inverse.reshape(-1).tolist()))


def _unusable_rules(names: Sequence[str], resolver: RulesResolver) -> set[str]:
    """The rules names among ``names`` the resolver cannot resolve (their lines take the
    per-record path, which says why)."""
    unusable = set()
    for name in set(names):
        try:
            resolver(name)
        except RulesError:
            unusable.add(name)
    return unusable



# --- streams -----------------------------------------------------------------------------------


def usable_workers() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def workers_for(cpus: int, load: float) -> int:
    """Worker processes worth starting on ``cpus`` CPUs with a (one-minute) load average of
    ``load``: one per idle CPU, counting the CPU this process runs on, at most ``cpus``; 1
    (no workers: score here) when no CPU is idle. A worker on a busy CPU only takes turns
    with what already runs there, and costs its start and the traffic of lines and results.

    >>> workers_for(2, 0.2), workers_for(2, 1.0), workers_for(2, 1.6), workers_for(8, 5.2)
    (2, 2, 1, 4)
    """
    return max(1, min(cpus, round(cpus - load) + 1))


def default_workers() -> int:
    """:func:`workers_for` this machine now: its usable CPUs and load average."""
    cpus = usable_workers()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        return cpus
    return workers_for(cpus, load)


def _blocks(
    lines: Iterable[RawLine | SourceLine], block_lines: int, block_bytes: int
) -> Iterator[list[RawLine | SourceLine]]:
    block: list[RawLine | SourceLine] = []
    size = 0
    for line in lines:
        block.append(line)
        size += len(line[1]) if type(line) is tuple else len(line.raw)
        if len(block) >= block_lines or size >= block_bytes:
            yield block
            block = []
            size = 0
    if block:
        yield block


def score_blocks(
    lines: Iterable[RawLine | SourceLine],
    resolver: RulesResolver,
    workers: int | None = None,
    block_lines: int = BLOCK_LINES,
    block_bytes: int = BLOCK_BYTES,
) -> Iterator[ScoredBlock]:
    """Score a stream of input lines block by block, yielding the blocks in input order.

    An input of one block is scored in this process. When a second block follows and
    ``workers`` (default: :func:`default_workers`, one per idle CPU) is 2 or more, every block goes to that many worker
    processes, with at most two blocks per worker in flight: memory stays bounded whatever
    the input's length. Close the generator (or exhaust it) to stop the workers.
    """
    workers = default_workers() if workers is None else max(1, workers)
    blocks = _blocks(lines, max(1, block_lines), block_bytes)
    first = next(blocks, None)
    if first is None:
        return
    if workers < 2:
        # one block at a time, each answered before the next is read (a person typing waits
        # for each line)
        yield score_block(first, resolver)
        for block in blocks:
            yield score_block(block, resolver)
        return
    second = next(blocks, None)
    if second is None:
        yield score_block(first, resolver)
        return
    warm_up = first[:WARM_UP_LINES]
    score_block(warm_up, resolver)
    pool = _worker_pool(workers, resolver)
    try:
        pending: deque[Future[ScoredBlock]] = deque(
            [pool.submit(_score_in_worker, first), pool.submit(_score_in_worker, second)])
        for block in blocks:
            pending.append(pool.submit(_score_in_worker, block))
            while len(pending) > 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


_worker_resolver: RulesResolver | None = None


def _worker_pool(workers: int, resolver: RulesResolver) -> ProcessPoolExecutor:
    """Worker processes, forked from this one where the platform allows (they start at once,
    sharing what it has imported and built), else started afresh."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context(
        "fork" if sys.platform.startswith("linux") and "fork" in methods else None)
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_start,
                               initargs=(os.getpid(), resolver))


def _worker_start(parent: int, resolver: RulesResolver) -> None:
    """A worker: keep the resolver; end as soon as the scoring process does."""
    global _worker_resolver
    _worker_resolver = resolver
    exit_with(parent)


def _score_in_worker(lines: list[RawLine | SourceLine]) -> ScoredBlock:
    assert _worker_resolver is not None
    return score_block(lines, _worker_resolver)
