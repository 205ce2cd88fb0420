"""A live game recorded at the table: the session, checking an entry as it is typed, saving hands.

This is the logic behind ``ofc record`` and the dashboard's Record page, with no user interface:
both only collect text (or tapped cards) and show what these functions return.

A :class:`LiveSession` is an immutable value: the players in clockwise seat order, the variant,
the rule set, the money value of a point, who has the button next, who is pre-marked for
Fantasyland next hand (with the card count) and the hands saved so far (running totals are
derived from them). Every step returns a new session:

* :func:`check_entry` validates the boards as typed and says, per player and row, what is wrong
  (an unknown card token, a card used twice in the hand naming both places, a row of the wrong
  size); nothing is saved until the whole hand is valid;
* :func:`record_hand` builds the canonical record (site ``live``, hand id
  ``{session_id}-{number:04d}``, a final ``board`` per player), scores it with the rules core and
  advances: the button moves one seat left unless anyone played Fantasyland, and the next hand's
  Fantasyland marks come from the boards that qualify;
* :func:`edit_last_hand` re-enters the last hand (re-scored, same id and time);
  :func:`delete_last_hand` takes it back.

The ``store_hand``/``replace_hand``/``remove_hand`` functions at the end write a hand to the
database, always through :mod:`pipeline.ingest.driver` (the same tables and keys as file ingestion).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import duckdb

from pipeline import store
from pipeline.ingest.delete import delete_hand
from pipeline.ingest.driver import ingest_mappings
from pipeline.ingest.evaluate import ScoredHand, score_record
from pipeline.records.record import FinalBoard
from pipeline.records.rules_file import resolve_rules
from pipeline.records.validate import parse_hand
from pipeline.rules.board import evaluate_board
from pipeline.rules.cards import Card, CardError, card_text, parse_card
from pipeline.rules.game import ROW_SIZES, ROWS, Row, Variant
from pipeline.rules.ruleset import RulesError, RuleSet

__all__ = [
    "LIVE_SITE",
    "BoardInput",
    "Clock",
    "EntryCheck",
    "EntryRejected",
    "FieldProblem",
    "LiveError",
    "LiveHand",
    "LiveSession",
    "LiveStoreError",
    "add_card",
    "board_text",
    "build_record",
    "cards_in_entries",
    "check_entry",
    "default_fantasyland_cards",
    "delete_last_hand",
    "edit_last_hand",
    "entry_rows",
    "entry_text",
    "fantasyland_marks",
    "format_money",
    "format_points",
    "hand_id_for",
    "next_button",
    "open_row",
    "record_hand",
    "remove_last_card",
    "remove_hand",
    "replace_hand",
    "start_session",
    "store_hand",
    "stored_hand_ids",
    "utc_now",
]

LIVE_SITE = "live"
"""The ``site`` of every hand recorded live."""

MAX_NAME_LENGTH = 40
"""Longest accepted player name (characters)."""

Clock = Callable[[], datetime]
"""Returns the current time; tests inject a fixed one."""

BoardInput = str | Sequence[Sequence[str]] | None
"""One player's board as entered: ``"Qs Qh 5d / Kc Kd 4h 3s 2c / Ac Ad Ah 9s 9c"`` or three rows
of card tokens (top, middle, bottom) as a card picker collects them; ``None`` or blank when the
player's board is not entered yet."""

_CARD_HINT = "ranks 23456789TJQKA or 10, suits cdhs or ♣♦♥♠"


def utc_now() -> datetime:
    """The current time in UTC (the default clock)."""
    return datetime.now(UTC)


class LiveError(ValueError):
    """A session that cannot be set up or a step that cannot be taken; the message says why."""


# --- checking an entry ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldProblem:
    """One thing wrong with one field: a player's whole board (``row`` None) or one row of it.

    ``kind`` is ``missing`` (nothing entered yet), ``format`` (not three rows), ``card`` (a token
    that is not a card), ``size`` (a row with the wrong number of cards) or ``duplicate`` (a card
    used twice in the hand; the message names both places).
    """

    player: str
    row: Row | None
    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class EntryCheck:
    """The verdict on a hand's entries: the boards that are fine and every problem found."""

    players: tuple[str, ...]
    boards: Mapping[str, FinalBoard]
    problems: tuple[FieldProblem, ...]

    @property
    def ok(self) -> bool:
        """True when every player has a complete, valid board and no card is used twice."""
        return not self.problems and all(name in self.boards for name in self.players)

    def problems_for(self, player: str, row: Row | None | str = "any") -> tuple[FieldProblem, ...]:
        """Problems of one player's field; ``row`` narrows to one row (None: the whole board)."""
        return tuple(
            problem for problem in self.problems
            if problem.player == player and (row == "any" or problem.row == row)
        )

    def messages_for(self, player: str, include_missing: bool = True) -> list[str]:
        """The messages to show next to a player's field, in row order."""
        return [
            problem.message for problem in self.problems_for(player)
            if include_missing or problem.kind != "missing"
        ]

    @property
    def summary(self) -> str:
        """All problems as one text, ``player: message`` per line."""
        return "\n".join(f"{problem.player}: {problem.message}" for problem in self.problems)


class EntryRejected(ValueError):
    """A hand that cannot be saved yet; ``check`` holds every problem by field."""

    def __init__(self, check: EntryCheck) -> None:
        super().__init__(check.summary or "the hand is not complete")
        self.check = check


def _row_tokens(value: BoardInput) -> tuple[list[list[str]] | None, str | None]:
    """Split an input into three rows of tokens, or give the format problem."""
    if isinstance(value, str):
        parts = value.split("/")
        if len(parts) != 3:
            return None, (
                'a board is three rows separated by "/": top (3) / middle (5) / bottom (5); '
                f"got {len(parts)} row{'s' if len(parts) != 1 else ''}"
            )
        return [part.replace(",", " ").split() for part in parts], None
    rows = list(value or ())
    if len(rows) != 3:
        return None, f"a board is three rows: top, middle and bottom; got {len(rows)}"
    tokens: list[list[str]] = []
    for row in rows:
        if isinstance(row, str):
            tokens.append(row.replace(",", " ").split())
        else:
            tokens.append([str(token).strip() for token in row if str(token).strip()])
    return tokens, None


def _is_blank(value: BoardInput) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.replace("/", "").strip()
    return not any(
        (row.strip() if isinstance(row, str) else any(str(token).strip() for token in row))
        for row in value
    )


def check_entry(session: LiveSession | Sequence[str], entries: Mapping[str, BoardInput]) -> EntryCheck:
    """Check every player's board as entered so far; never raises for bad input.

    ``session`` gives the players (a :class:`LiveSession` or the names in seat order). A player
    missing from ``entries`` or with a blank entry gets a ``missing`` problem, so a form can show
    what is left to enter. Duplicates are found across the whole hand, and each field involved
    gets a message naming both places (``Ah is used twice: mara top and jun bottom``).
    """
    players = tuple(session.players if isinstance(session, LiveSession) else session)
    problems: list[FieldProblem] = []
    parsed: dict[str, list[list[Card]]] = {}
    for name in players:
        value = entries.get(name)
        if _is_blank(value):
            problems.append(FieldProblem(name, None, "missing", "no board entered yet"))
            continue
        rows, format_problem = _row_tokens(value)
        if rows is None:
            problems.append(FieldProblem(name, None, "format", format_problem or "not a board"))
            for tokens in entry_rows(value):
                for token in tokens:
                    try:
                        parse_card(token)
                    except CardError:
                        problems.append(FieldProblem(
                            name, None, "card", f"{token!r} is not a card ({_CARD_HINT})"))
            continue
        cards_by_row: list[list[Card]] = []
        for row, tokens in zip(ROWS, rows, strict=True):
            cards: list[Card] = []
            for token in tokens:
                try:
                    cards.append(parse_card(token))
                except CardError:
                    problems.append(FieldProblem(
                        name, row, "card", f"{row.value}: {token!r} is not a card ({_CARD_HINT})"
                    ))
            if len(tokens) != ROW_SIZES[row]:
                problems.append(FieldProblem(
                    name, row, "size",
                    f"{row.value} needs {ROW_SIZES[row]} cards, has {len(tokens)}",
                ))
            cards_by_row.append(cards)
        parsed[name] = cards_by_row

    first_place: dict[Card, tuple[str, Row]] = {}
    for name in players:
        for row, cards in zip(ROWS, parsed.get(name, ()), strict=False):
            for card in cards:
                if card not in first_place:
                    first_place[card] = (name, row)
                    continue
                first_name, first_row = first_place[card]
                text = card_text(card)
                if (first_name, first_row) == (name, row):
                    message = f"{text} is used twice in {name} {row.value}"
                    problems.append(FieldProblem(name, row, "duplicate", message))
                    continue
                message = f"{text} is used twice: {first_name} {first_row.value} and {name} {row.value}"
                problems.append(FieldProblem(first_name, first_row, "duplicate", message))
                problems.append(FieldProblem(name, row, "duplicate", message))

    troubled = {problem.player for problem in problems}
    boards = {
        name: FinalBoard(*(tuple(cards) for cards in rows))
        for name, rows in parsed.items() if name not in troubled
    }
    order = {name: index for index, name in enumerate(players)}
    row_order = {None: -1, Row.TOP: 0, Row.MIDDLE: 1, Row.BOTTOM: 2}
    problems.sort(key=lambda problem: (order[problem.player], row_order[problem.row]))
    return EntryCheck(players, boards, tuple(problems))


def entry_rows(value: BoardInput) -> list[list[str]]:
    """An entry as three rows of tokens, however incomplete (extra ``/`` parts join the bottom)."""
    if value is None:
        return [[], [], []]
    if isinstance(value, str):
        parts = value.split("/")
        rows = [part.replace(",", " ").split() for part in parts[:3]]
        for part in parts[3:]:
            rows[-1].extend(part.replace(",", " ").split())
    else:
        rows = [
            row.replace(",", " ").split() if isinstance(row, str)
            else [str(token).strip() for token in row if str(token).strip()]
            for row in list(value)[:3]
        ]
    return rows + [[] for _ in range(3 - len(rows))]


def entry_text(rows: Sequence[Sequence[str]]) -> str:
    """Rows of tokens back as typed text: ``Qs Qh 5d / Kc Kd / `` (always three parts)."""
    padded = [list(row) for row in rows] + [[] for _ in range(3 - len(rows))]
    return " ".join(" / ".join(" ".join(row) for row in padded[:3]).split())


def open_row(value: BoardInput, preferred: Row = Row.TOP) -> Row | None:
    """The row the next tapped card goes to: ``preferred`` if it has room, else the first with room."""
    rows = entry_rows(value)
    index = ROWS.index(preferred)
    if len(rows[index]) < ROW_SIZES[preferred]:
        return preferred
    for row, tokens in zip(ROWS, rows, strict=True):
        if len(tokens) < ROW_SIZES[row]:
            return row
    return None


def add_card(value: BoardInput, card: Card | str, row: Row = Row.TOP) -> tuple[str, Row | None]:
    """Put a tapped card on a board entry: into ``row`` or, when it is full, the first row with room.

    Returns the new text and the row the next card should go to (None once the board is full).
    A full board is returned unchanged.
    """
    rows = entry_rows(value)
    target = open_row(value, row)
    if target is None:
        return entry_text(rows), None
    text = card if isinstance(card, str) else card_text(card)
    rows[ROWS.index(target)].append(text)
    new_text = entry_text(rows)
    return new_text, open_row(new_text, target)


def remove_last_card(value: BoardInput, row: Row | None = None) -> str:
    """Take back the last card of ``row`` (or of the last row holding a card when it is empty)."""
    rows = entry_rows(value)
    if row is not None and rows[ROWS.index(row)]:
        rows[ROWS.index(row)].pop()
        return entry_text(rows)
    for tokens in reversed(rows):
        if tokens:
            tokens.pop()
            break
    return entry_text(rows)


def cards_in_entries(entries: Iterable[BoardInput]) -> set[Card]:
    """Every valid card already entered on any board (for greying out a card picker)."""
    used: set[Card] = set()
    for value in entries:
        for tokens in entry_rows(value):
            for token in tokens:
                try:
                    used.add(parse_card(token))
                except CardError:
                    continue
    return used


def board_text(board: FinalBoard) -> str:
    """A board as the text one types: ``Qs Qh 5d / Kc Kd 4h 3s 2c / Ac Ad Ah 9s 9c``."""
    return " / ".join(" ".join(card_text(card) for card in board.row(row)) for row in ROWS)


# --- the session ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LiveHand:
    """One saved hand of a live session: the canonical record as stored and its score."""

    number: int
    record: dict[str, Any]
    scored: ScoredHand
    button: str
    fantasyland: Mapping[str, int]
    """Players who played this hand in Fantasyland, with the cards they were dealt."""
    boards: Mapping[str, FinalBoard]
    foul_reasons: Mapping[str, str] = field(default_factory=dict)
    """Why each fouled board fouls (``top (pair of queens) beats middle (...)``)."""

    @property
    def hand_id(self) -> str:
        """The hand's id (unique within site ``live``)."""
        return self.record["hand_id"]

    @property
    def started_at(self) -> str:
        """When the hand was first saved (ISO 8601, UTC)."""
        return self.record["started_at"]

    @property
    def points(self) -> dict[str, int]:
        """Each player's points for this hand."""
        return {player.name: player.points for player in self.scored.players}

    @property
    def played_fantasyland(self) -> bool:
        """True when anyone played this hand in Fantasyland (the button then stays)."""
        return bool(self.fantasyland)

    @property
    def fantasyland_next(self) -> dict[str, int]:
        """Players who play Fantasyland next hand, with the number of cards they are dealt."""
        return fantasyland_marks(self.scored)


@dataclass(frozen=True, slots=True)
class LiveSession:
    """A live game in progress; every step returns a new value."""

    session_id: str
    players: tuple[str, ...]
    """Names in clockwise seat order (seat 1, 2, ...)."""
    variant: Variant
    rules: RuleSet
    stake: Decimal
    """Money per point."""
    table: str
    button: str
    """Who has the button for the next hand."""
    fantasyland: Mapping[str, int] = field(default_factory=dict)
    """Pre-marks for the next hand: player -> Fantasyland cards."""
    hands: tuple[LiveHand, ...] = ()
    clock: Clock = field(default=utc_now, compare=False, repr=False)

    @property
    def hand_number(self) -> int:
        """The number of the next hand to record (1 for the first)."""
        return len(self.hands) + 1

    @property
    def last_hand(self) -> LiveHand | None:
        """The most recently saved hand, if any."""
        return self.hands[-1] if self.hands else None

    @property
    def totals(self) -> dict[str, int]:
        """Running points per player over every saved hand."""
        totals = dict.fromkeys(self.players, 0)
        for hand in self.hands:
            for name, points in hand.points.items():
                totals[name] += points
        return totals

    @property
    def money(self) -> dict[str, Decimal]:
        """Running money per player: points × stake."""
        return {name: points * self.stake for name, points in self.totals.items()}

    def action_order(self, button: str | None = None) -> tuple[str, ...]:
        """Players clockwise starting left of the button (the next hand's button by default)."""
        index = self.players.index(button or self.button)
        return self.players[index + 1:] + self.players[: index + 1]

    def fantasyland_cards(self, player: str) -> int:
        """Cards a player is pre-marked to get in Fantasyland next hand (0: not marked)."""
        return int(self.fantasyland.get(player, 0))


def default_fantasyland_cards(variant: Variant, rules: RuleSet) -> int:
    """Cards dealt in Fantasyland when a player is marked by hand (no qualifying board seen)."""
    fl = rules.fantasyland
    if variant is Variant.CLASSIC:
        return fl.cards_classic
    if variant is Variant.LOWBALL_PINEAPPLE:
        return fl.lowball_cards
    return fl.progressive_cards[0] if fl.progressive else fl.cards_pineapple


def _clean_players(players: Iterable[str], variant: Variant) -> tuple[str, ...]:
    names: list[str] = []
    seen: dict[str, str] = {}
    for raw in players:
        name = unicodedata.normalize("NFC", str(raw)).strip()
        if not name:
            raise LiveError("a player name is empty")
        if len(name) > MAX_NAME_LENGTH:
            raise LiveError(f"player name {name[:20]!r}... is longer than {MAX_NAME_LENGTH} characters")
        if any(unicodedata.category(char).startswith("C") for char in name):
            raise LiveError(f"player name {name!r} contains control characters")
        key = name.casefold()
        if key in seen:
            raise LiveError(f"player {name!r} is listed twice (also as {seen[key]!r})")
        seen[key] = name
        names.append(name)
    if not variant.min_players <= len(names) <= variant.max_players:
        raise LiveError(
            f"{variant.value} is played by {variant.min_players}-{variant.max_players} players, "
            f"got {len(names)}"
        )
    return tuple(names)


def _stake(value: Decimal | float | int | str | None, rules: RuleSet) -> Decimal:
    if value is None or value == "":
        value = rules.scoring.stake
    try:
        stake = Decimal(str(value).strip())
    except InvalidOperation:
        raise LiveError(f"stake {value!r} is not a number (money per point, e.g. 0.10)") from None
    if not stake.is_finite() or stake < 0:
        raise LiveError(f"stake {value!r} must be a number ≥ 0 (money per point)")
    return stake


def start_session(
    players: Iterable[str],
    variant: Variant | str = Variant.PINEAPPLE,
    rules: RuleSet | str = "standard",
    stake: Decimal | float | int | str | None = None,
    button: str | None = None,
    session_id: str | None = None,
    table: str | None = None,
    fantasyland: Mapping[str, int] | None = None,
    clock: Clock = utc_now,
) -> LiveSession:
    """Set up a live session; raises :class:`LiveError` saying what is wrong.

    ``players`` are in clockwise seat order. ``rules`` is a RuleSet, a preset name or a rules
    file. ``stake`` (money per point) defaults to the rule set's. The button starts with the last
    player, so the first listed acts first. ``session_id`` defaults to ``live-YYYYMMDD-HHMMSS``
    from the clock and ``table`` to the session id (so each session is its own table).
    ``fantasyland`` pre-marks players for the first hand (player -> cards).
    """
    try:
        variant = variant if isinstance(variant, Variant) else Variant.parse(variant)
    except ValueError as error:
        raise LiveError(str(error)) from None
    if not isinstance(rules, RuleSet):
        try:
            rules = resolve_rules(rules)
        except RulesError as error:
            raise LiveError(str(error)) from None
    names = _clean_players(players, variant)
    if button is None:
        button = names[-1]
    elif button not in names:
        raise LiveError(f"button {button!r} is not one of the players ({', '.join(names)})")
    if session_id is None:
        session_id = "live-" + _as_utc(clock()).strftime("%Y%m%d-%H%M%S")
    session_id = session_id.strip()
    if not session_id:
        raise LiveError("the session id is empty")
    marks = _marks(fantasyland or {}, names, variant, rules)
    return LiveSession(
        session_id=session_id, players=names, variant=variant, rules=rules,
        stake=_stake(stake, rules), table=(table or "").strip() or session_id, button=button,
        fantasyland=marks, clock=clock,
    )


def _marks(
    fantasyland: Mapping[str, int] | Collection[str], players: Sequence[str], variant: Variant,
    rules: RuleSet, previous: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """Normalise Fantasyland marks: names (cards from ``previous`` or the default) or name -> cards."""
    marks: dict[str, int] = {}
    default = default_fantasyland_cards(variant, rules)
    for name in fantasyland:
        if name not in players:
            raise LiveError(f"Fantasyland mark for {name!r}, who is not playing")
        cards = fantasyland[name] if isinstance(fantasyland, Mapping) else None
        if cards is None or cards is True:
            cards = (previous or {}).get(name) or default
        cards = int(cards)
        if cards <= 0:
            continue
        if not 13 <= cards <= 17:
            raise LiveError(f"Fantasyland for {name}: {cards} cards (13-17 are dealt)")
        marks[name] = cards
    return {name: marks[name] for name in players if name in marks}


def next_button(players: Sequence[str], button: str, played_fantasyland: bool) -> str:
    """Who has the button after a hand: one seat left, unless anyone played Fantasyland."""
    if played_fantasyland:
        return button
    return players[(players.index(button) + 1) % len(players)]


def fantasyland_marks(scored: ScoredHand) -> dict[str, int]:
    """Players who play Fantasyland next hand (entry or stay), with their card counts."""
    return {player.name: player.fantasyland_cards for player in scored.players
            if player.fantasyland_cards > 0}


def hand_id_for(session_id: str, number: int) -> str:
    """The id of hand ``number`` of a session: ``{session_id}-{number:04d}``."""
    return f"{session_id}-{number:04d}"


def _as_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _iso(moment: datetime) -> str:
    return _as_utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_record(
    session: LiveSession,
    boards: Mapping[str, FinalBoard],
    fantasyland: Mapping[str, int] | Collection[str],
    started_at: datetime | str,
    number: int | None = None,
    button: str | None = None,
) -> dict[str, Any]:
    """The canonical record (spec/hand-format.md) of a live hand: final boards, no streets."""
    number = session.hand_number if number is None else number
    return {
        "hand_id": hand_id_for(session.session_id, number),
        "site": LIVE_SITE,
        "table": session.table,
        "started_at": started_at if isinstance(started_at, str) else _iso(started_at),
        "variant": session.variant.value,
        "rules": session.rules.name,
        "button": button or session.button,
        "players": [
            {
                "name": name,
                "seat": seat,
                "fantasyland": name in fantasyland,
                "board": {row.value: [card_text(card) for card in boards[name].row(row)]
                          for row in ROWS},
            }
            for seat, name in enumerate(session.players, start=1)
        ],
    }


def _make_hand(
    session: LiveSession,
    entries: Mapping[str, BoardInput],
    fantasyland: Mapping[str, int] | Collection[str] | None,
    number: int,
    button: str,
    started_at: datetime | str,
    previous_marks: Mapping[str, int],
) -> LiveHand:
    check = check_entry(session, entries)
    if not check.ok:
        raise EntryRejected(check)
    marks = _marks(previous_marks if fantasyland is None else fantasyland,
                   session.players, session.variant, session.rules, previous_marks)
    record = build_record(session, check.boards, marks, started_at, number, button)
    scored = score_record(parse_hand(record), session.rules)
    foul_reasons = {}
    for player in scored.players:
        if player.foul:
            board = check.boards[player.name]
            verdict = evaluate_board(board.top, board.middle, board.bottom, session.variant,
                                     session.rules, player.name in marks)
            foul_reasons[player.name] = verdict.foul_reason or "foul"
    return LiveHand(number=number, record=record, scored=scored, button=button,
                    fantasyland=marks, boards=dict(check.boards), foul_reasons=foul_reasons)


def record_hand(
    session: LiveSession,
    entries: Mapping[str, BoardInput],
    fantasyland: Mapping[str, int] | Collection[str] | None = None,
) -> tuple[LiveSession, LiveHand]:
    """Save the next hand in the session (not yet in a database): check, build, score, advance.

    ``fantasyland`` says who plays this hand in Fantasyland (names, or name -> cards); by default
    the session's pre-marks. Raises :class:`EntryRejected` (with every problem) when any board is
    missing or wrong. Returns the advanced session and the new hand.
    """
    hand = _make_hand(session, entries, fantasyland, session.hand_number, session.button,
                      session.clock(), session.fantasyland)
    return _advance(session, session.hands + (hand,)), hand


def _advance(session: LiveSession, hands: tuple[LiveHand, ...]) -> LiveSession:
    last = hands[-1]
    return replace(
        session,
        hands=hands,
        button=next_button(session.players, last.button, last.played_fantasyland),
        fantasyland=last.fantasyland_next,
    )


def edit_last_hand(
    session: LiveSession,
    entries: Mapping[str, BoardInput],
    fantasyland: Mapping[str, int] | Collection[str] | None = None,
) -> tuple[LiveSession, LiveHand]:
    """Replace the last hand with corrected boards: same number, id, button and start time.

    The hand is re-scored, and the next hand's button and Fantasyland marks follow the edit.
    ``fantasyland`` defaults to the marks the hand was played with.
    """
    last = session.last_hand
    if last is None:
        raise LiveError("no hand to edit yet")
    hand = _make_hand(session, entries, fantasyland, last.number, last.button,
                      last.started_at, last.fantasyland)
    return _advance(session, session.hands[:-1] + (hand,)), hand


def delete_last_hand(session: LiveSession) -> tuple[LiveSession, LiveHand]:
    """Take back the last hand: the session is as it was before it (button, marks, totals)."""
    last = session.last_hand
    if last is None:
        raise LiveError("no hand to delete yet")
    return replace(session, hands=session.hands[:-1], button=last.button,
                   fantasyland=dict(last.fantasyland)), last


def format_points(points: int) -> str:
    """Points with a sign: ``+7``, ``-9``, ``0``."""
    return f"{points:+d}" if points else "0"


def format_money(amount: Decimal) -> str:
    """Money with a sign and two decimals: ``+0.70``, ``-0.90``, ``0.00``."""
    return f"{amount:+.2f}" if amount else "0.00"


# --- the database (always through pipeline.ingest.driver) -----------------------------------------


class LiveStoreError(RuntimeError):
    """A hand the database did not take; the message says why."""


def _source_name(hand: LiveHand) -> str:
    return f"live:{hand.record['table']}"


def store_hand(database: str | Path, hand: LiveHand, rules: RuleSet) -> None:
    """Write a saved hand to the database through :func:`pipeline.ingest.driver.ingest_mappings`.

    Storing the same hand twice is harmless (a duplicate); a different hand under the same id
    raises :class:`LiveStoreError` (use :func:`replace_hand` for an edit).
    """
    summary = ingest_mappings([hand.record], database, _source_name(hand), rules=rules)
    if summary.stored + summary.duplicates != 1:
        reasons = "; ".join(summary.first_reasons) or "not stored"
        raise LiveStoreError(f"hand {hand.hand_id} was not saved: {reasons}")


def remove_hand(database: str | Path, hand: LiveHand) -> bool:
    """Delete a saved hand from the database; False when it was not stored."""
    return delete_hand(database, LIVE_SITE, hand.hand_id)


def replace_hand(database: str | Path, hand: LiveHand, rules: RuleSet) -> None:
    """Store an edited hand in place of the stored one with the same id (delete, then ingest)."""
    remove_hand(database, hand)
    store_hand(database, hand, rules)


def stored_hand_ids(database: str | Path, session_id: str) -> list[str]:
    """Ids of the hands of a live session already in the database (none without a database).

    Lets a new session refuse an id that would collide with hands saved earlier.
    """
    path = Path(database)
    if not path.exists():
        return []
    with store.open_database(path, read_only=True) as connection:
        try:
            rows = connection.execute(
                "SELECT hand_id FROM hands WHERE site = ? AND starts_with(hand_id, ?) "
                "ORDER BY hand_id",
                [LIVE_SITE, f"{session_id}-"],
            ).fetchall()
        except duckdb.CatalogException:
            return []
    return [row[0] for row in rows]
