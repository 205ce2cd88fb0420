"""``ofc score``'s engine: canonical JSON Lines scored block by block through the batch core.

A block of lines is parsed and validated by the columnar canonical path
(:func:`~pipeline.ingest.fast_streets.parse_canonical_block`), scored as columns by the batch
rules core (:func:`~pipeline.ingest.columns.score_columns`) and written as one output line per
input line, in input order. A line the columnar path does not accept outright (an unusual
spelling, an extra field, a bad record, unknown rules...) goes through the per-record path,
:func:`score_line` (:func:`~pipeline.records.validate.parse_hand` and the scalar rules core),
which scores it or gives its precise error, in its place. The output is the same, byte for
byte, as :func:`scalar_output` gives for every line alone (tests/ingest/test_score_lines.py
compares the two on the golden files, random hands and mutated lines).

:func:`score_blocks` scores a stream: here, and with worker processes beside this one when
there is more than one block, with a bounded number of blocks in flight (so memory stays
bounded on a pipe too), yielded in input order.

Imports numpy and msgspec but not pyarrow or DuckDB (they cost more start-up time than a small
input takes to score).
"""

from __future__ import annotations

import json
import os
import pickle
import select
import struct
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from itertools import chain, islice, repeat
from operator import attrgetter, itemgetter
from queue import SimpleQueue
from typing import TYPE_CHECKING

import numpy as np

from pipeline.formats.source import (
    RawLine,
    SourceLine,
    collector_paused,
    decode_line,
    json_error_reason,
    load_json,
    plain_worker_signals,
)
from pipeline.ingest.columns import CLASS_LABELS, score_columns
from pipeline.ingest.fast_streets import parse_canonical_block
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
    "running_others",
    "scalar_output",
    "score_block",
    "score_blocks",
    "score_line",
    "usable_workers",
    "workers_for",
]

BLOCK_LINES = 1024
"""Lines per block: scored together, and the unit of work of a worker process. A block's
arrays (a few MB for 2048 lines of pineapple hands) fit a core's cache better at 1024 lines:
about 8 % less CPU than 2048, and less than 512 or 768 (bench_score.py's hands)."""

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
    # imported on first use: a block the columnar path accepts whole never needs it
    from pipeline.ingest.evaluate import score_output, score_record

    hand_id = None
    try:
        mapping = load_json(text)
    except ValueError as error:  # JSONDecodeError, or NaN / Infinity
        return {"hand_id": None, "error": json_error_reason(error)}, False
    if isinstance(mapping, dict):
        hand_id = _shown_hand_id(mapping.get("hand_id"))
    try:
        if not isinstance(mapping, dict):
            raise InvalidHand(f"expected a JSON object, got {type(mapping).__name__}")
        hand = parse_hand(mapping)
        return score_output(score_record(hand, resolver(hand.rules))), True
    except (InvalidHand, RulesError) as error:
        return {"hand_id": hand_id, "error": str(error)}, False


def _shown_hand_id(value: object) -> str | int | None:
    """The ``hand_id`` echoed beside an error: a string or whole number as given, else None (a
    number such as ``1e999`` reads as infinity, which JSON cannot write, and a list or object
    is no id)."""
    if type(value) is str or type(value) is int:
        return value
    return None


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


_BYTES = itemgetter(1)
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
        columns, accepted, rest = parse_canonical_block(
            lines if len(raw_positions) == len(lines)
            else [lines[position] for position in raw_positions],  # type: ignore[misc]
            "", identity=False, streets=False,
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


def _scored_text(columns, resolver) -> str:  # noqa: ANN001
    """The output lines of the hands in ``columns``, each ending in a newline: the JSON
    :func:`~pipeline.ingest.evaluate.score_output` gives, written as text directly, three parts
    a player. The parts that repeat from player to player (the name, foul and royalties;
    Fantasyland, the row classes and the end of a hand) are written once per distinct
    combination, the hand's header added to its first player's; then every part is joined in
    one pass."""
    scored = score_columns(columns, resolver)
    names = columns.names
    player_count = len(names)
    name_index = {name: index for index, name in enumerate(dict.fromkeys(names))}
    quoted_names = list(map(_quoted, name_index))
    name_ids = np.fromiter(map(name_index.__getitem__, names), np.int64, player_count)
    counts = columns.player_counts
    first_players = np.cumsum(counts) - counts
    first = np.zeros(player_count, np.int64)
    first[first_players] = 1
    last = np.zeros(player_count, np.int64)
    last[first_players + counts - 1] = 1
    booleans = _JSON_BOOL
    labels = _ROW_LABELS
    heads = _distinct_texts(
        np.column_stack([first, name_ids, scored.foul, scored.royalties]),
        lambda first, name, foul, top, middle, bottom: (
            f'{"" if first else ", "}{{"name": {quoted_names[name]}, "foul": {booleans[foul]}, '
            f'"royalties": {{"top": {top}, "middle": {middle}, "bottom": {bottom}}}, '
            f'"points": '))
    tails = _distinct_texts(
        np.column_stack([last, scored.fantasyland_cards, scored.class_codes]),
        lambda last, cards, top, middle, bottom: (
            f', "fantasyland_next": {booleans[cards > 0]}, "fantasyland_cards": {cards}, '
            f'"classes": {{"top": {labels[top]}, "middle": {labels[middle]}, '
            f'"bottom": {labels[bottom]}}}}}{"]}" + chr(10) if last else ""}'))
    for player, hand_id in zip(first_players.tolist(), columns.hand_ids, strict=True):
        heads[player] = f'{{"hand_id": {_quoted(hand_id)}, "players": [{heads[player]}'
    parts: list[str] = [""] * (3 * player_count)
    parts[0::3] = heads
    parts[1::3] = map(str, scored.points.tolist())
    parts[2::3] = tails
    return "".join(parts)


def _distinct_texts(rows: np.ndarray, render) -> list[str]:  # noqa: ANN001
    """``render(*row)`` for every row of a table of integers, rendered once per distinct row
    (the distinct rows found by one key per row where the columns' ranges fit in 62 bits)."""
    if not len(rows):
        return []
    rows = rows.astype(np.int64)
    lowest = rows.min(axis=0)
    spans = (rows.max(axis=0) - lowest + 1).tolist()
    if np.prod(np.asarray(spans, float)) < 2.0 ** 62:
        key = np.zeros(len(rows), np.int64)
        for column, span in enumerate(spans):
            key = key * span + (rows[:, column] - lowest[column])
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
    """Processes worth scoring with (this one and its workers) on ``cpus`` CPUs with a
    (one-minute) load average of ``load``: one per idle CPU, counting the CPU this process runs
    on, at most ``cpus``; 1 (no workers: score here) when no CPU is idle. A worker on a busy
    CPU only takes turns with what already runs there, and costs its start and the traffic of
    lines and results.

    >>> workers_for(2, 0.2), workers_for(2, 1.0), workers_for(2, 1.6), workers_for(8, 5.2)
    (2, 2, 1, 4)
    """
    return max(1, min(cpus, round(cpus - load) + 1))


def running_others(loadavg_text: str) -> int | None:
    """The tasks running or ready to run now besides this one, from the text of
    ``/proc/loadavg`` (its fourth field, ``runnable/all``, counts this process too); None when
    the text does not have it.

    >>> running_others("1.34 3.11 3.61 3/109 11527"), running_others("0.5 0.4 0.3")
    (2, None)
    """
    fields = loadavg_text.split()
    if len(fields) < 4:
        return None
    runnable, _, _ = fields[3].partition("/")
    return max(0, int(runnable) - 1) if runnable.isdigit() else None


def default_workers() -> int:
    """:func:`workers_for` this machine now: its usable CPUs and what runs on them now (on
    Linux the tasks runnable at this moment; elsewhere the one-minute load average, which still
    counts for a minute a burst that has ended, such as a command run just before)."""
    cpus = usable_workers()
    try:
        with open("/proc/loadavg", encoding="ascii") as file:
            now = running_others(file.read())
    except (OSError, ValueError):
        now = None
    if now is not None:
        return workers_for(cpus, float(now))
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        return cpus
    return workers_for(cpus, load)


_BLOCK_STEP = 16
"""Lines taken from the input at a time while a block fills (in C: ``islice``); the block's
size is checked after each step."""


def _blocks(
    lines: Iterable[RawLine | SourceLine], block_lines: int, block_bytes: int
) -> Iterator[list[RawLine | SourceLine]]:
    """The lines in blocks of ``block_lines``; a block ends early once its lines hold
    ``block_bytes`` bytes (checked every :data:`_BLOCK_STEP` lines)."""
    lines = iter(lines)
    while True:
        block: list[RawLine | SourceLine] = []
        size = 0
        while len(block) < block_lines and size < block_bytes:
            step = list(islice(lines, min(_BLOCK_STEP, block_lines - len(block))))
            if not step:
                break
            block += step
            if set(map(type, step)) == {tuple}:  # the usual step: lines as bytes
                size += sum(map(len, map(_BYTES, step)))
            else:
                size += sum(len(line[1]) if type(line) is tuple else len(line.raw)
                            for line in step)
        if not block:
            return
        yield block


def score_blocks(
    lines: Iterable[RawLine | SourceLine],
    resolver: RulesResolver,
    workers: int | None = None,
    block_lines: int = BLOCK_LINES,
    block_bytes: int = BLOCK_BYTES,
) -> Iterator[ScoredBlock]:
    """Score a stream of input lines block by block, yielding the blocks in input order.

    ``workers`` is how many processes score (default: :func:`default_workers`, one per idle
    CPU). An input of one block is scored in this process. When a second block follows and
    ``workers`` is 2 or more, this process and ``workers - 1`` worker processes score the
    blocks: a block goes to the workers while fewer than two per worker are unfinished, else
    it is scored here. At most two blocks per process are waiting to be yielded, so memory
    stays bounded whatever the input's length. Close the generator (or exhaust it) to stop the
    workers.
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
    scoring = _score_forked if _FORK_WORKERS else _score_pooled
    yield from scoring(chain((first, second), blocks), resolver, workers - 1)


_FORK_WORKERS = sys.platform.startswith("linux") and hasattr(os, "fork")
"""Whether the workers are forked and fed through pipes (:func:`_score_forked`); elsewhere
they are a process pool (:func:`_score_pooled`)."""


def _score_forked(
    blocks: Iterator[list[RawLine | SourceLine]], resolver: RulesResolver, helpers: int
) -> Iterator[ScoredBlock]:
    """:func:`score_blocks` with ``helpers`` forked workers, each fed through a pair of pipes:
    a block goes out as one message of its lines' bytes (:func:`_block_message`), its output
    comes back as one message of UTF-8 text, read here between blocks without waiting. A
    thread per worker writes its blocks (a block is larger than a pipe holds: the worker
    reads it while this process scores)."""
    channels: list[_Channel] = []
    inherited: list[int] = []
    senders: list[threading.Thread] = []
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(min(switch_interval, _SWITCH_SECONDS))
    try:
        for _ in range(helpers):  # all forked before any thread starts
            channels.append(_fork_worker(resolver, inherited))
        for channel in channels:
            sender = threading.Thread(target=_send_messages,
                                      args=(channel.requests, channel.outbox),
                                      name="ofc-score-sender", daemon=True)
            sender.start()
            senders.append(sender)

        def dispatch(block: list[RawLine | SourceLine]) -> _Channel | ScoredBlock:
            for channel in channels:
                channel.receive(wait=False)
            channel = min(channels, key=_UNANSWERED)
            if channel.unanswered < 2:
                channel.send(block)
                return channel
            return score_block(block, resolver)  # the workers are busy: scored here

        yield from _in_input_order(blocks, dispatch, helpers)
    finally:
        sys.setswitchinterval(switch_interval)
        # Results no longer read: a worker still scoring ends at its next write, and its sender
        # then at its next write; an idle worker ends once its sender stops and its pipe closes.
        for channel in channels:
            channel.outbox.put(None)
            os.close(channel.results)
        for sender in senders:
            sender.join()
        for channel in channels:
            os.close(channel.requests)
            os.waitpid(channel.pid, 0)


def _in_input_order(blocks: Iterator[list[RawLine | SourceLine]],
                    dispatch: Callable[[list[RawLine | SourceLine]],
                                       _Channel | Future[ScoredBlock] | ScoredBlock],
                    helpers: int) -> Iterator[ScoredBlock]:
    """Each block ``dispatch``-ed (to a worker: a handle with ``done()`` and ``result()``; or
    scored here: its :class:`ScoredBlock`), yielded in input order as soon as every block
    before it is done; at most two blocks per process wait to be yielded."""
    pending: deque[_Channel | Future[ScoredBlock] | ScoredBlock] = deque()
    for block in blocks:
        pending.append(dispatch(block))
        while pending and (type(pending[0]) is ScoredBlock or pending[0].done()):
            yield _finished(pending.popleft())
        while len(pending) > 2 * (helpers + 1):
            yield _finished(pending.popleft())
    while pending:
        yield _finished(pending.popleft())


_HEADER = struct.Struct("<QBqq?")
"""A block's message header: body length, kind (:data:`_LINES` or :data:`_PICKLED`), first line
number, line count, and whether the last line ended with a newline."""
_LINES, _PICKLED = 0, 1
_RESULT_HEADER = struct.Struct("<Qqq")
"""A result's message header: text length in bytes, lines, invalid lines."""
_PIPE_BYTES = 1 << 20
"""Pipe capacity asked for (Linux lets any process have up to 1 MiB): a block's output fits,
so a worker rarely waits for this process to read it."""
_F_SETPIPE_SZ = 1031


def _block_message(block: list[RawLine | SourceLine]) -> tuple[bytes, bytes]:
    """A block as a message to a worker: (header, body). The usual block (raw lines numbered
    one after the other, each but the last ending in a newline, none holding a newline: a
    reader's lines) is its lines' bytes joined by newlines; any other is pickled."""
    count = len(block)
    first = block[0][0]
    if (set(map(type, block)) == {tuple} and set(map(len, block)) == {3}
            and list(map(_NUMBER, block)) == list(range(first, first + count))
            and all(ended is True for ended in map(_ENDED, block[:-1]))
            and type(block[-1][2]) is bool):
        body = b"\n".join(map(_BYTES, block))
        if body.count(b"\n") == count - 1:  # no line of its own holds a newline
            return _HEADER.pack(len(body), _LINES, first, count, block[-1][2]), body
    body = pickle.dumps(block, pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body), _PICKLED, 0, count, False), body


_NUMBER, _ENDED = itemgetter(0), itemgetter(2)
_UNANSWERED = attrgetter("unanswered")


def _block_of_message(kind: int, first: int, count: int, ended: bool,
                      body: bytes) -> list[RawLine | SourceLine]:
    """The block :func:`_block_message` sent."""
    if kind == _PICKLED:
        return pickle.loads(body)
    block: list = list(zip(range(first, first + count), body.split(b"\n"), repeat(True)))
    if not ended:
        block[-1] = (block[-1][0], block[-1][1], False)
    return block


def _send_messages(descriptor: int, outbox: SimpleQueue) -> None:
    """A sender thread: write each (header, body) of ``outbox`` to ``descriptor`` until None."""
    while True:
        message = outbox.get()
        if message is None:
            return
        try:
            for part in message:
                _write_all(descriptor, part)
        except OSError:  # the worker ended: the reading side reports it
            return


def _write_all(descriptor: int, data: bytes) -> None:
    """Write all of ``data`` to a blocking descriptor."""
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]


class _Channel:
    """This process's side of one forked worker: its pipes, what it has been sent and not yet
    answered, and the answers read so far."""

    def __init__(self, pid: int, requests: int, results: int) -> None:
        self.pid = pid
        self.requests = requests  # written by the sender thread
        self.results = results  # read here, without waiting
        self.outbox: SimpleQueue = SimpleQueue()
        self.unanswered = 0
        self.poller = select.poll()  # no limit on descriptor numbers, unlike select.select
        self.poller.register(results, select.POLLIN)
        self.received: deque[ScoredBlock] = deque()
        self.buffer = bytearray()

    def done(self) -> bool:
        """Whether the oldest block sent has been answered (reading what is there)."""
        if not self.received:
            self.receive(wait=False)
        return bool(self.received)

    def send(self, block: list[RawLine | SourceLine]) -> None:
        """Queue a block for the worker."""
        self.outbox.put(_block_message(block))
        self.unanswered += 1

    def receive(self, wait: bool) -> None:
        """Read the worker's answers that have come (``wait``: at least one more)."""
        while True:
            if not self.poller.poll(None if wait else 0):
                return
            data = os.read(self.results, 1 << 20)
            if not data:
                raise RuntimeError("an ofc score worker process ended unexpectedly")
            self.buffer += data
            answered = self._take_results()
            if answered and wait:
                wait = False

    def _take_results(self) -> int:
        answered = 0
        buffer = self.buffer
        size = _RESULT_HEADER.size
        while len(buffer) >= size:
            length, lines, invalid = _RESULT_HEADER.unpack_from(buffer)
            if len(buffer) < size + length:
                break
            with memoryview(buffer) as view:
                text = str(view[size:size + length], "utf-8", "surrogatepass")
            del buffer[:size + length]
            self.received.append(ScoredBlock(text, lines, invalid))
            self.unanswered -= 1
            answered += 1
        return answered

    def result(self) -> ScoredBlock:
        """The answer to the oldest block sent (waiting for it)."""
        while not self.received:
            self.receive(wait=True)
        return self.received.popleft()


def _fork_worker(resolver: RulesResolver, inherited: list[int]) -> _Channel:
    """Fork a worker with its two pipes; ``inherited``: this process's descriptors of earlier
    workers, which the new one closes."""
    import fcntl

    request_read, request_write = os.pipe()
    result_read, result_write = os.pipe()
    for descriptor in (request_write, result_write):
        with suppress(OSError):  # not Linux, or a smaller limit: the default size
            fcntl.fcntl(descriptor, _F_SETPIPE_SZ, _PIPE_BYTES)
    pid = os.fork()
    if pid == 0:  # the worker
        code = 1
        try:
            for descriptor in (request_write, result_read, *inherited):
                os.close(descriptor)
            _serve(request_read, result_write, resolver)
            code = 0
        except (BrokenPipeError, KeyboardInterrupt):  # ofc score ended, or was interrupted
            pass
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(request_read)
    os.close(result_write)
    channel = _Channel(pid, request_write, result_read)
    inherited.append(result_read)
    inherited.append(request_write)
    return channel


def _serve(requests: int, results: int, resolver: RulesResolver) -> None:
    """A worker's loop: score each block read from ``requests``, write its output to
    ``results``; return at the end of ``requests`` (``ofc score`` is done, or ended)."""
    # buffered: a header comes out of the buffer, a body is read straight into its bytes
    reader = open(requests, "rb", buffering=1 << 16, closefd=False)  # noqa: SIM115
    while True:
        header = reader.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return  # the end (a message cut short only when ofc score ended mid-write)
        length, kind, first, count, ended = _HEADER.unpack(header)
        body = reader.read(length)
        if len(body) < length:
            return
        block = score_block(_block_of_message(kind, first, count, ended, body), resolver)
        text = block.text.encode("utf-8", "surrogatepass")
        _write_all(results, _RESULT_HEADER.pack(len(text), block.lines, block.invalid))
        _write_all(results, text)


def _score_pooled(
    blocks: Iterator[list[RawLine | SourceLine]], resolver: RulesResolver, helpers: int
) -> Iterator[ScoredBlock]:
    """:func:`score_blocks` with ``helpers`` workers of a process pool (where they cannot be
    forked)."""
    pool = _worker_pool(helpers, resolver)
    # The pool's threads here (sending blocks, receiving results) wait for the interpreter
    # lock while this process scores a block: switching every 0.5 ms instead of 5 keeps the
    # workers fed.
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(min(switch_interval, _SWITCH_SECONDS))
    submitted: list[Future[ScoredBlock]] = []
    try:

        def dispatch(block: list[RawLine | SourceLine]) -> Future[ScoredBlock] | ScoredBlock:
            submitted[:] = [future for future in submitted if not future.done()]
            if len(submitted) < 2 * helpers:
                submitted.append(pool.submit(_score_in_worker, block))
                return submitted[-1]
            return score_block(block, resolver)  # the workers are busy: scored here

        yield from _in_input_order(blocks, dispatch, helpers)
    finally:
        sys.setswitchinterval(switch_interval)
        pool.shutdown(wait=True, cancel_futures=True)


def _finished(item: _Channel | Future[ScoredBlock] | ScoredBlock) -> ScoredBlock:
    """A block scored here, or a worker's (waiting for it)."""
    return item if type(item) is ScoredBlock else item.result()  # type: ignore[union-attr]


_SWITCH_SECONDS = 0.0005
"""The interpreter's thread switch interval while workers score beside this process."""

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
    """A worker: keep the resolver; end as soon as the scoring process does (and at once on
    SIGTERM: :func:`~pipeline.formats.source.plain_worker_signals`)."""
    global _worker_resolver
    _worker_resolver = resolver
    plain_worker_signals()
    exit_with(parent)


def _score_in_worker(lines: list[RawLine | SourceLine]) -> ScoredBlock:
    assert _worker_resolver is not None
    return score_block(lines, _worker_resolver)
