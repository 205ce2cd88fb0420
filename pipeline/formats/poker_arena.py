"""Reader for poker-arena OFC logs (/work/shared/formats/poker-arena/README.md).

A log is JSON Lines: a header ``{"hand": N, "seats": [...]}`` starts a hand and its events
``{"hand": N, "ev": {"event": KIND, ...}}`` follow. This reader groups the lines of each hand
and turns the hand into one canonical record (docs/hand-format.md), streaming: only the hand
being read is held in memory.

Each player gets ``streets`` built from the deal/place pairs of its seat and ``board`` from
its showdown rows (so :mod:`pipeline.records.validate` checks that the two agree), plus two extras:
``source_showdown`` (the engine's own verdict) and ``source_fantasyland_cards`` (when the
player played Fantasyland). The record also carries the extra field ``game``.

Hand numbers restart in every match, so ids are built from the content:
``f"{game}-{digest12}-{hand:05d}"`` where ``digest12`` is the start of the SHA-1 of the hand's
own lines (its deals make it unique); the same hand read from any file, a curated extract or the
full match log, gets the same id. The table is named after the digest of the match's first hand.

The log never names its game: see :func:`resolve_game` and :func:`infer_game`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from pipeline.formats.base import RAW_TEXT_LIMIT, SourceRecord, clip_raw
from pipeline.formats.follow import Follow
from pipeline.formats.source import (
    FormatError,
    RawLine,
    SourceLine,
    collector_paused,
    decode_line,
    ends_early,
    file_name_stem,
    json_error_reason,
    load_json,
    read_lines,
    truncated_reason,
)
from pipeline.rules.cards import CardError, normalise_card

DESCRIPTION = 'poker-arena OFC log (JSON Lines: {"hand": N, "seats": [...]} then {"hand": N, "ev": ...})'

SITE = "poker-arena"


@dataclass(frozen=True, slots=True)
class PokerArenaGame:
    """One game the poker-arena engine logs, and how its hands are scored here."""

    game: str
    variant: str
    rules: str


GAMES: dict[str, PokerArenaGame] = {
    "ofc": PokerArenaGame("ofc", "classic", "poker-arena-classic"),
    "ofc-pineapple": PokerArenaGame("ofc-pineapple", "pineapple", "poker-arena-pineapple"),
    "ofc-progressive": PokerArenaGame("ofc-progressive", "pineapple", "poker-arena-progressive"),
    "ofc-27": PokerArenaGame("ofc-27", "2-7-pineapple", "poker-arena-27"),
}
"""The four poker-arena game ids, in the order they are listed in messages."""

_GAME_ALIASES: dict[str, str] = {
    "classic": "ofc",
    "regular": "ofc",
    "pineapple": "ofc-pineapple",
    "progressive": "ofc-progressive",
    "progressive-pineapple": "ofc-progressive",
    "pineapple-progressive": "ofc-progressive",
    "2-7-pineapple": "ofc-27",
    "2-7": "ofc-27",
    "27": "ofc-27",
    "27-pineapple": "ofc-27",
    "ofc-2-7": "ofc-27",
    "lowball-pineapple": "ofc-27",
    **{spec.rules: spec.game for spec in GAMES.values()},
}

MAX_HAND_LINES = 5000
"""A hand with more lines than this is reported as an error (a real hand has under 100)."""

MAX_ASIDE_LINES = 100
"""Junk lines set aside while a hand is open, at most: at this many the open hand is taken as
ended there (reported as it stands, say incomplete) and the reader goes on without it, so a
file of a header and millions of junk lines is read with bounded memory."""

_ROW_NAMES = {"top": "top", "front": "top", "middle": "middle", "mid": "middle",
              "bottom": "bottom", "back": "bottom"}
_ROWS = ("top", "middle", "bottom")
_EVENT_KINDS = ("fantasyland", "deal", "place", "showdown", "score")
_PINEAPPLE_FAMILY = frozenset({"ofc-pineapple", "ofc-progressive", "ofc-27"})
_CARD_COUNT_GAMES: dict[int, frozenset[str]] = {
    1: frozenset({"ofc"}),
    3: _PINEAPPLE_FAMILY,
    13: frozenset({"ofc"}),
    14: _PINEAPPLE_FAMILY,
    15: frozenset({"ofc-progressive", "ofc-27"}),
    16: frozenset({"ofc-progressive"}),
    17: frozenset({"ofc-progressive"}),
}
"""Games in which a deal of that many cards (or a Fantasyland of that size) can happen."""


# --- the game ---------------------------------------------------------------------------------


def resolve_game(name: str) -> str:
    """The poker-arena game id for a game id, a variant name or a rules name.

    ``ofc``, ``ofc-pineapple``, ``ofc-progressive``, ``ofc-27`` are returned as they are;
    ``classic``, ``pineapple``, ``2-7-pineapple``, ``progressive`` and the rules names
    (``poker-arena-27``...) map to their game. Raises ``ValueError`` for anything else.
    """
    key = str(name).strip().lower().replace("_", "-").replace(" ", "-")
    if key in GAMES:
        return key
    if key in _GAME_ALIASES:
        return _GAME_ALIASES[key]
    raise ValueError(
        f"unknown poker-arena game {name!r} (expected {', '.join(GAMES)}, "
        "or classic, pineapple, progressive, 2-7-pineapple)"
    )


def game_from_file_name(path: str | os.PathLike[str]) -> str | None:
    """The game named by the file name (``ofc-27.jsonl``, ``ofc-pineapple.jsonl.gz``), if any."""
    stem = file_name_stem(path).strip().lower()
    return stem if stem in GAMES else None


def _join_names(names: Iterable[str]) -> str:
    ordered = [game for game in GAMES if game in set(names)]
    if len(ordered) <= 1:
        return "".join(ordered)
    return ", ".join(ordered[:-1]) + " or " + ordered[-1]


def _ranks(cards: Any) -> list[str] | None:
    """Rank letters of a list of card tokens, or None when any token is not a card."""
    if not isinstance(cards, list):
        return None
    try:
        return [normalise_card(card)[0] for card in cards]
    except CardError:
        return None


def _games_for_showdown(event: dict[str, Any], in_fantasyland: bool) -> frozenset[str] | None:
    """Games a showdown verdict is possible in, when it tells anything (else None)."""
    possible = set(GAMES)
    next_cards = event.get("next_fantasyland")
    if isinstance(next_cards, int) and next_cards in _CARD_COUNT_GAMES:
        possible &= _CARD_COUNT_GAMES[next_cards]
    top, middle = _ranks(event.get("top")), _ranks(event.get("middle"))
    if event.get("fouled") is False and top is not None and middle is not None:
        top_paired = len(set(top)) < len(top)
        middle_paired = len(set(middle)) < len(middle)
        if top_paired and not middle_paired:
            # A pair on top over an unpaired middle fouls everywhere but in 2-7.
            possible &= {"ofc-27"}
        if middle_paired:
            # A 2-7 middle may hold no pair.
            possible.discard("ofc-27")
        paired_ranks = {rank for rank in top if top.count(rank) >= 2}
        high_top = len(set(top)) == 1 or bool(paired_ranks & {"K", "A"})
        if high_top and next_cards == 14 and not in_fantasyland:
            # Progressive pays 15 for KK, 16 for AA and 17 for trips.
            possible.discard("ofc-progressive")
    return frozenset(possible) if possible != set(GAMES) else None


def _content_games(path: str | os.PathLike[str]) -> tuple[frozenset[str], bool]:
    """Games the log's content allows (streaming pre-scan), and whether any hand was seen."""
    possible = frozenset(GAMES)
    seen_header = False
    fantasyland_seats: set[Any] = set()
    for line in read_lines(path, skip_blank=True):
        if line.text is None or '"ev"' not in line.text and '"seats"' not in line.text:
            continue
        try:
            value = load_json(line.text)
        except ValueError:  # not JSON, or nested too deeply: the reading pass reports it
            continue
        if not isinstance(value, dict):
            continue
        event = value.get("ev")
        if event is None:
            if isinstance(value.get("seats"), list):
                seen_header = True
                fantasyland_seats.clear()
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("event")
        allowed: frozenset[str] | None = None
        if kind == "deal":
            cards = event.get("cards")
            count = len(cards) if isinstance(cards, list) else event.get("count")
            allowed = _CARD_COUNT_GAMES.get(count) if isinstance(count, int) else None
        elif kind == "fantasyland":
            fantasyland_seats.add(event.get("seat"))
            count = event.get("cards")
            allowed = _CARD_COUNT_GAMES.get(count) if isinstance(count, int) else None
        elif kind == "showdown":
            allowed = _games_for_showdown(event, event.get("seat") in fantasyland_seats)
        if allowed is not None:
            narrowed = possible & allowed
            if not narrowed:
                raise FormatError(
                    path,
                    f"line {line.number} fits none of the games the earlier lines allow "
                    f"({_join_names(possible)}): is this one poker-arena log?",
                )
            possible = narrowed
            if len(possible) == 1:
                break
    return possible, seen_header


def infer_game(path: str | os.PathLike[str]) -> str | None:
    """The game of a log from its content, when certain; None when the log holds no hand.

    Certain signs: a 1-card deal or a 13-card Fantasyland → ``ofc``; a Fantasyland of 16 or 17
    cards → ``ofc-progressive``; a legal board with a pair on top over an unpaired middle →
    ``ofc-27``. Others only narrow the choice (a paired middle on a legal board rules out
    ``ofc-27``; a 14-card Fantasyland earned with KK, AA or trips rules out progressive).
    Raises :class:`FormatError`, saying how to name the game, when the content leaves a choice.
    """
    possible, seen_header = _content_games(path)
    if len(possible) == 1:
        return next(iter(possible))
    if not seen_header:
        return None
    names = _join_names(possible)
    choices = "|".join(game for game in GAMES if game in possible)
    raise FormatError(
        path,
        f"cannot tell which poker-arena game this log is ({names} deal alike): "
        f"pass --variant {choices} or name the file <game>.jsonl",
    )


def sniff_poker_arena(first_line: str) -> bool:
    """True when a file's first non-empty line looks like a poker-arena log line."""
    try:
        value = load_json(first_line)
    except ValueError:  # not JSON, or nested too deeply
        return False
    if not isinstance(value, dict):
        return False
    return ("hand" in value and ("seats" in value or "ev" in value)) or "log_summary" in value


# --- grouping lines into hands ------------------------------------------------------------------


class _BadHand(Exception):
    """A hand that cannot become a record; the message is the reason."""


@dataclass(slots=True)
class _HandLines:
    """The lines of one hand (or of a run of events without a header) as they are read."""

    start_line: int
    hand_number: int | None
    header: dict[str, Any] | None
    first_of_match: bool
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    problem: str | None = None
    kept_text: list[str] = field(default_factory=list)
    kept_chars: int = 0
    total_chars: int = 0
    line_count: int = 0
    scored_seats: set[int] = field(default_factory=set)
    digest: Any = None
    damaged: bool = False  # a line of the hand shows the file ends early
    # rejects of lines read while the hand was open that cannot be lines of any hand (not
    # even the start of a JSON object): reported on their own, right after the hand
    aside: list[SourceRecord] = field(default_factory=list)

    def add_text(self, text: str) -> None:
        """Remember a line's text (for the raw field and the match digest)."""
        self.line_count += 1
        self.total_chars += len(text) + (1 if self.total_chars else 0)
        if self.kept_chars <= RAW_TEXT_LIMIT:
            self.kept_text.append(text)
            self.kept_chars += len(text) + 1
        if self.digest is not None:
            self.digest.update(text.encode("utf-8", "surrogatepass") + b"\n")
        if self.line_count > MAX_HAND_LINES and self.problem is None:
            self.problem = (
                f"hand has more than {MAX_HAND_LINES} lines (from line {self.start_line} on)"
            )
            self.events.clear()

    def add_problem(self, reason: str) -> None:
        """Record why this hand cannot be read (the first reason wins)."""
        if self.problem is None:
            self.problem = reason

    def add_event(self, number: int, event: dict[str, Any]) -> None:
        """Keep one parsed event of the hand."""
        if self.line_count > MAX_HAND_LINES:
            return
        self.events.append((number, event))
        if event.get("event") == "score" and isinstance(event.get("seat"), int):
            self.scored_seats.add(event["seat"])

    @property
    def is_over(self) -> bool:
        """True when the hand has a header and every one of its seats has a score: nothing
        after its last score belongs to it. A hand spoilt by a problem is over the same way,
        so an unreadable line after it is reported on its own, not as one more of its lines."""
        if self.header is None:
            return False
        seats = self.header.get("seats")
        return isinstance(seats, list) and len(self.scored_seats) >= len(seats) > 0

    def raw_text(self) -> str:
        """The hand's original lines, clipped for quarantine."""
        text = "\n".join(self.kept_text)
        if self.total_chars <= RAW_TEXT_LIMIT:
            return text
        return text[:RAW_TEXT_LIMIT] + f"… [{self.total_chars - RAW_TEXT_LIMIT} more characters]"


def _hand_number(value: dict[str, Any]) -> int | None:
    number = value.get("hand")
    if isinstance(number, int) and not isinstance(number, bool) and number >= 0:
        return number
    return None


def read_poker_arena(
    path: str | os.PathLike[str], game: str | None = None
) -> Iterator[SourceRecord]:
    """Read a poker-arena OFC log: one :class:`SourceRecord` per hand, streaming.

    The game is ``game`` when given (a game id ``ofc``/``ofc-pineapple``/``ofc-progressive``/
    ``ofc-27``, or a variant or rules name, see :func:`resolve_game`), else the file name when
    it is ``<game>.jsonl`` (or ``.jsonl.gz``), else the content when it is certain
    (:func:`infer_game`, a streaming pre-scan). Raises :class:`FormatError` right away when the
    game is unknown or cannot be told.

    A hand with a malformed line, an unknown event, a deal never placed, or no showdown or
    score for a seat becomes an error record (line = where the hand starts, raw = its lines,
    clipped); events before any header become one error record per run. A hand is over once
    every seat has scored (spoilt or not); an unreadable line after that, or one that is not
    even the start of a JSON object while a hand is open (junk between hands), is an error
    record of its own. Later hands still come through. The ``log_summary`` line is skipped.
    """
    if game is not None:
        try:
            resolved: str | None = resolve_game(game)
        except ValueError as exc:
            raise FormatError(path, str(exc)) from exc
    else:
        resolved = game_from_file_name(path) or infer_game(path)
    return _in_batches(_read_hands(path, resolved))


BATCH_HANDS = 200
"""Hands read per garbage-collector pause."""


def _in_batches(records: Iterator[SourceRecord]) -> Iterator[SourceRecord]:
    """Run the reader in batches with the garbage collector paused (parsing builds many small
    containers, and the collections they trigger slow reading down), yielding between batches
    with it back on."""
    while True:
        with collector_paused():
            batch = list(islice(records, BATCH_HANDS))
        if not batch:
            return
        yield from batch


def follow_poker_arena(
    path: str | os.PathLike[str], lines: Iterable[RawLine | SourceLine], follow: Follow,
    game: str | None = None,
) -> Iterator[SourceRecord]:
    """Read a part of a poker-arena log that is still being written (see
    :mod:`pipeline.formats.follow`): ``lines`` from ``follow.start_line`` on, ``game`` resolved
    by the caller (:func:`resolve_game`, :func:`game_from_file_name` or :func:`infer_game`).

    Unless the part is final, the hand still open at its end is left for the next part
    (``follow.resume_line`` is its first line) when any of its seats is not scored yet; a hand
    whose every seat is scored is over and taken. ``follow.state`` carries the match (its digest
    names the table) and the last hand number (hand numbers going back start a new match).
    """
    decoded = (decode_line(item) if type(item) is tuple else item for item in lines)
    return _read_hands(path, game, decoded, follow)  # type: ignore[arg-type]


def _read_hands(
    path: str | os.PathLike[str], game: str | None,
    lines: Iterable[SourceLine] | None = None, follow: Follow | None = None,
) -> Iterator[SourceRecord]:
    file_name = str(path)
    current: _HandLines | None = None
    state = follow.state if follow is not None else {}
    match_digest: str | None = state.get("match_digest")
    last_hand_number: int | None = state.get("last_hand_number")
    # what was known when the open hand started: where a follow read resumes
    started_with: tuple[str | None, int | None] = (match_digest, last_hand_number)

    def finish(hand: _HandLines | None) -> list[SourceRecord]:
        """The hand's record, then the rejects of the lines set aside while it was open."""
        nonlocal match_digest
        if hand is None:
            return []
        hand_digest = hand.digest.hexdigest()[:12] if hand.digest is not None else None
        if hand.first_of_match and hand_digest is not None:
            match_digest = hand_digest
        return [_hand_record(file_name, hand, game, match_digest, hand_digest), *hand.aside]

    for line in read_lines(path, skip_blank=True) if lines is None else lines:
        if line.text is not None and not line.text.strip():
            continue
        value, reason = _parse_line(line)
        if reason is not None:
            if current is None or current.is_over:
                # Not part of an open hand: report it on its own, keep the finished hand.
                yield from finish(current)
                current = None
                yield _alone(file_name, line, reason)
            elif not _could_be_hand_line(line):
                # Junk between hands (a comment, a separator) while a hand is still open:
                # its own reject, after the hand's; the hand is judged without it.
                current.aside.append(_alone(file_name, line, reason))
                if len(current.aside) >= MAX_ASIDE_LINES:
                    yield from finish(current)
                    current = None
            else:
                current.add_text(line.raw)
                current.add_problem(reason)
                current.damaged = current.damaged or ends_early(line)
            continue
        assert value is not None
        if "log_summary" in value and "hand" not in value:
            yield from finish(current)
            current = None
            match_digest = None
            last_hand_number = None
            continue
        number = _hand_number(value)
        if "ev" not in value:
            # A header: the previous hand is over, a new one starts.
            yield from finish(current)
            started_with = (match_digest, last_hand_number)
            if number is not None:
                if last_hand_number is not None and number <= last_hand_number:
                    match_digest = None  # hand numbers went back: a new match
                last_hand_number = number
            current = _HandLines(
                line.number, number, value, first_of_match=match_digest is None
            )
            current.digest = hashlib.sha1()
            current.add_text(line.text or "")
            problem = _header_problem(value, line.number)
            if problem is not None:
                current.add_problem(problem)
            continue
        if (current is None or current.hand_number != number or number is None
                or current.is_over):
            # An event that is not part of an open hand. After a hand whose every seat is
            # scored, that hand is over (a reader following the file has taken it already):
            # the event is reported on its own, the hand kept.
            yield from finish(current)
            started_with = (match_digest, last_hand_number)
            current = _HandLines(line.number, number, None, first_of_match=False)
            if number is not None and number == last_hand_number:
                current.add_problem(
                    f"events of hand {number} from line {line.number} come after the hand "
                    "was over (every seat scored)")
            else:
                what = f"hand {number}" if number is not None else "a hand without a valid number"
                current.add_problem(
                    f"events of {what} from line {line.number} come before any header "
                    f'{{"hand": N, "seats": [...]}} for that hand'
                )
        current.add_text(line.text or "")
        event = value.get("ev")
        if not isinstance(event, dict):
            current.add_problem(f"line {line.number}: 'ev' is not an object")
        else:
            current.add_event(line.number, event)
    if follow is not None and not follow.final and current is not None and not current.is_over:
        # the hand may go on in lines not written yet: the next part starts with it
        follow.resume_line = current.start_line
        follow.state = {"match_digest": started_with[0], "last_hand_number": started_with[1]}
        follow.finished = True
        return
    yield from finish(current)
    if follow is not None:
        follow.resume_line = None
        follow.state = {"match_digest": match_digest, "last_hand_number": last_hand_number}
        follow.finished = True


def _parse_line(line: SourceLine) -> tuple[dict[str, Any] | None, str | None]:
    """A line's JSON object, or the reason it is not a poker-arena line."""
    if line.text is None:
        return None, line.error or f"line {line.number} cannot be read"
    try:
        value = load_json(line.text)
    except ValueError as exc:  # JSONDecodeError, NaN / Infinity, or nested too deeply
        reason = f"line {line.number}: {json_error_reason(exc)}"
        return None, truncated_reason(line, reason)
    if not isinstance(value, dict):
        return None, truncated_reason(line, f"line {line.number} is not a JSON object")
    if "log_summary" in value and "hand" not in value:
        return value, None
    if "hand" not in value:
        return None, f'line {line.number} has no "hand" number: not a poker-arena line'
    if _hand_number(value) is None:
        return None, f"line {line.number}: hand number {value['hand']!r} is not a whole number"
    if "ev" not in value and "seats" not in value:
        return None, f'line {line.number} has neither "seats" (a header) nor "ev" (an event)'
    return value, None


def _alone(file_name: str, line: SourceLine, reason: str) -> SourceRecord:
    """An unreadable line that is no hand's line, as its own error record."""
    return SourceRecord(file_name, line.number, clip_raw(line.raw), None, reason,
                        damaged=ends_early(line))


def _could_be_hand_line(line: SourceLine) -> bool:
    """Whether an unreadable line may be a damaged line of the hand around it: any line
    that cannot be decoded, or whose text starts (after spaces) as a JSON object does. A
    line of other text (``# --- next table ---``) is no hand's."""
    return line.text is None or line.text.lstrip().startswith("{")


def _header_problem(header: dict[str, Any], number: int) -> str | None:
    seats = header.get("seats")
    if not isinstance(seats, list) or not seats:
        return f"hand header at line {number}: 'seats' is not a list of player names"
    for index, name in enumerate(seats):
        if not isinstance(name, str) or not name.strip():
            return f"hand header at line {number}: seat {index} has no player name ({name!r})"
    return None


# --- building the canonical record -------------------------------------------------------------


def _hand_record(
    file_name: str,
    hand: _HandLines,
    game: str | None,
    match_digest: str | None,
    hand_digest: str | None,
) -> SourceRecord:
    hand_id = None
    if hand.header is not None and hand.hand_number is not None and game and hand_digest:
        hand_id = f"{game}-{hand_digest}-{hand.hand_number:05d}"
    raw = hand.raw_text()
    if hand.problem is not None:
        return SourceRecord(file_name, hand.start_line, raw, None, hand.problem, hand_id,
                            damaged=hand.damaged)
    if hand.header is None or hand_id is None or game is None or match_digest is None:
        reason = f"hand at line {hand.start_line}: cannot tell which poker-arena game it is"
        return SourceRecord(file_name, hand.start_line, raw, None, reason, hand_id)
    try:
        record = _build_record(hand, GAMES[game], hand_id, match_digest)
    except _BadHand as exc:
        return SourceRecord(file_name, hand.start_line, raw, None, str(exc), hand_id)
    return SourceRecord(file_name, hand.start_line, raw, record, None, hand_id)


_CARD_TEXT: dict[str, str] = {}
"""Canonical text of every card spelling met so far (bounded: only real card spellings)."""


def _card(token: Any) -> Any:
    """Canonical text of a card token; anything unreadable is kept for validation to name."""
    if not isinstance(token, str):
        return token
    text = _CARD_TEXT.get(token)
    if text is not None:
        return text
    try:
        text = normalise_card(token)
    except CardError:
        return token
    if len(token) <= 3:  # "10h" at most: spellings padded with spaces are not kept
        _CARD_TEXT[token] = text
    return text


def _card_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise _BadHand(f"{what} is not a list of cards ({value!r})")
    return [_card(token) for token in value]


@dataclass(slots=True)
class _SeatState:
    """What has been read so far for one seat of a hand."""

    streets: list[dict[str, Any]] = field(default_factory=list)
    pending_deal: tuple[int, list[Any]] | None = None
    fantasyland: bool = False
    fantasyland_cards: Any = None
    showdown: dict[str, Any] | None = None
    showdown_line: int = 0
    points: Any = None
    score_line: int = 0


def _build_record(
    hand: _HandLines, spec: PokerArenaGame, hand_id: str, match_digest: str
) -> dict[str, Any]:
    assert hand.header is not None
    names: list[str] = hand.header["seats"]
    seats = [_SeatState() for _ in names]
    for number, event in hand.events:
        kind = event.get("event")
        if kind not in _EVENT_KINDS:
            raise _BadHand(f"line {number}: unknown event kind {kind!r}")
        seat = event.get("seat")
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(names):
            raise _BadHand(
                f"line {number}: {kind} event for seat {seat!r}, the hand has seats "
                f"0..{len(names) - 1}"
            )
        _apply_event(seats[seat], seat, number, kind, event)
    players = []
    for index, (name, state) in enumerate(zip(names, seats, strict=True)):
        players.append(_player(hand, index, name, state))
    return {
        "hand_id": hand_id,
        "site": SITE,
        "table": f"{SITE}-{match_digest}",
        "variant": spec.variant,
        "rules": spec.rules,
        "button": names[0],
        "game": spec.game,
        "players": players,
    }


def _apply_event(state: _SeatState, seat: int, number: int, kind: str, event: dict) -> None:
    if kind == "fantasyland":
        state.fantasyland = True
        state.fantasyland_cards = event.get("cards")
    elif kind == "deal":
        if state.pending_deal is not None:
            raise _BadHand(
                f"line {number}: seat {seat} is dealt again before placing the cards dealt "
                f"at line {state.pending_deal[0]}"
            )
        state.pending_deal = (number, _card_list(event.get("cards"), f"line {number}: deal"))
    elif kind == "place":
        if state.pending_deal is None:
            raise _BadHand(f"line {number}: seat {seat} places cards it was not dealt")
        state.streets.append(_street(state.pending_deal[1], number, event))
        state.pending_deal = None
    elif kind == "showdown":
        if state.showdown is not None:
            raise _BadHand(
                f"line {number}: a second showdown for seat {seat} "
                f"(the first is at line {state.showdown_line})"
            )
        state.showdown, state.showdown_line = event, number
    else:  # score
        if state.score_line:
            raise _BadHand(
                f"line {number}: a second score for seat {seat} "
                f"(the first is at line {state.score_line})"
            )
        points = event.get("points")
        if not isinstance(points, int | float) or isinstance(points, bool):
            raise _BadHand(f"line {number}: score points {points!r} is not a number")
        state.points, state.score_line = points, number


def _street(dealt: list[Any], number: int, event: dict[str, Any]) -> dict[str, Any]:
    placements = event.get("placements")
    if not isinstance(placements, list):
        raise _BadHand(f"line {number}: place has no list of placements")
    placed: dict[str, list[Any]] = {}
    for placement in placements:
        if not isinstance(placement, dict) or "card" not in placement or "row" not in placement:
            raise _BadHand(f"line {number}: placement {placement!r} is not {{card, row}}")
        row = _ROW_NAMES.get(str(placement["row"]).strip().lower())
        if row is None:
            raise _BadHand(
                f"line {number}: card {placement['card']!r} placed in row "
                f"{placement['row']!r} (rows are top, middle, bottom)"
            )
        placed.setdefault(row, []).append(_card(placement["card"]))
    discarded = event.get("discarded", [])
    return {
        "dealt": dealt,
        "placed": {row: placed[row] for row in _ROWS if row in placed},
        "discarded": _card_list(discarded if discarded is not None else [],
                                f"line {number}: discarded"),
    }


def _player(hand: _HandLines, seat: int, name: str, state: _SeatState) -> dict[str, Any]:
    where = f"hand {hand.hand_number} (line {hand.start_line})"
    if state.pending_deal is not None:
        raise _BadHand(
            f"{where}: the cards dealt to seat {seat} at line {state.pending_deal[0]} are "
            "never placed"
        )
    if state.showdown is None:
        raise _BadHand(f"{where}: no showdown for seat {seat} ({name}): the hand is incomplete")
    if not state.score_line:
        raise _BadHand(f"{where}: no score for seat {seat} ({name}): the hand is incomplete")
    showdown = state.showdown
    board = {
        row: _card_list(showdown.get(row), f"line {state.showdown_line}: showdown {row} row")
        for row in _ROWS
    }
    player: dict[str, Any] = {
        "name": name,
        "seat": seat,
        "fantasyland": state.fantasyland,
        "streets": state.streets,
        "board": board,
        "reported_points": state.points,
        "source_showdown": {
            "fouled": showdown.get("fouled"),
            "royalties": showdown.get("royalties"),
            "next_fantasyland": showdown.get("next_fantasyland"),
            "top_value": showdown.get("top_value"),
            "middle_value": showdown.get("middle_value"),
            "bottom_value": showdown.get("bottom_value"),
        },
    }
    if state.fantasyland and state.fantasyland_cards is not None:
        player["source_fantasyland_cards"] = state.fantasyland_cards
    return player
