"""Checking and editing one hand's boards as they are typed or tapped, before anything is saved.

:func:`check_entry` validates the boards as typed and says, per player and row, what is wrong
(an unknown card token, a card used twice in the hand naming both places, a row of the wrong
size); nothing is saved until the whole hand is valid. The other functions edit an entry in
progress: split it into rows (:func:`entry_rows`), add a tapped card to the row with room
(:func:`add_card`), take the last one back (:func:`remove_last_card`), list the cards already
used (:func:`cards_in_entries`) for greying out a card picker, and show every card typed so far,
those beyond a row's size marked as extra (:func:`preview_rows`).

A board is typed with ``/`` between the rows, or as 13 cards without separators (spaces, commas
or none at all: ``QsQh5dKcKd4h3s2cAcAdAh9s9c``): in order they fill top 3, middle 5, bottom 5.

Knows nothing of scoring or the database; of a session it only asks the players' names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.records.record import FinalBoard
from pipeline.rules.cards import Card, CardError, card_text, parse_card
from pipeline.rules.game import ROW_SIZES, ROWS, Row

if TYPE_CHECKING:
    from pipeline.live.session import LiveSession

__all__ = [
    "BoardInput",
    "EntryCheck",
    "EntryRejected",
    "FieldProblem",
    "PreviewCard",
    "add_card",
    "cards_in_entries",
    "check_entry",
    "entry_rows",
    "entry_text",
    "open_row",
    "preview_rows",
    "remove_last_card",
    "split_tokens",
]

BoardInput = str | Sequence[Sequence[str]] | None
"""One player's board as entered: ``"Qs Qh 5d / Kc Kd 4h 3s 2c / Ac Ad Ah 9s 9c"``, the same 13
cards without ``/`` (they fill top 3, middle 5, bottom 5 in order), or three rows of card tokens
(top, middle, bottom) as a card picker collects them; ``None`` or blank when the player's board is
not entered yet."""

_CARD_HINT = "ranks 23456789TJQKA or 10, suits cdhs or ♣♦♥♠"
_BOARD_SIZE = sum(ROW_SIZES.values())
_RUN_OF_CARDS = re.compile(r"(?:(?:10|[2-9tjqka])[cdhs♣♦♥♠♧♢♡♤])+", re.IGNORECASE)
_ONE_CARD = re.compile(r"(?:10|[2-9tjqka])[cdhs♣♦♥♠♧♢♡♤]", re.IGNORECASE)


def split_tokens(text: str) -> list[str]:
    """The card tokens of a typed row or board: split at spaces and commas, and cards typed
    together without a space (``AhKd10c``) apart. A word that is not a run of cards stays whole,
    so its message names it as typed.

    >>> split_tokens("Qs Qh,5d")
    ['Qs', 'Qh', '5d']
    >>> split_tokens("AhKd10c qx")
    ['Ah', 'Kd', '10c', 'qx']
    """
    tokens: list[str] = []
    for word in text.replace(",", " ").split():
        if len(word) > 3 and _RUN_OF_CARDS.fullmatch(word):
            tokens.extend(_ONE_CARD.findall(word))
        else:
            tokens.append(word)
    return tokens


def _fill_rows(tokens: Sequence[str]) -> list[list[str]]:
    """Cards typed without ``/``: in order into top, middle, bottom; any beyond 13 join the bottom."""
    rows: list[list[str]] = []
    start = 0
    for row in ROWS:
        rows.append(list(tokens[start:start + ROW_SIZES[row]]))
        start += ROW_SIZES[row]
    rows[-1].extend(tokens[start:])
    return rows


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
        if "/" not in value:
            tokens = split_tokens(value)
            if len(tokens) == _BOARD_SIZE:
                return _fill_rows(tokens), None
            return None, (
                f"type {_BOARD_SIZE} cards (they fill top 3, middle 5, bottom 5 in order) or "
                f'separate the rows with "/"; got {len(tokens)} card{"s" if len(tokens) != 1 else ""}'
            )
        parts = value.split("/")
        if len(parts) != 3:
            return None, (
                'a board is three rows separated by "/": top (3) / middle (5) / bottom (5); '
                f"got {len(parts)} row{'s' if len(parts) != 1 else ''}"
            )
        return [split_tokens(part) for part in parts], None
    rows = list(value or ())
    if len(rows) != 3:
        return None, f"a board is three rows: top, middle and bottom; got {len(rows)}"
    tokens: list[list[str]] = []
    for row in rows:
        if isinstance(row, str):
            tokens.append(split_tokens(row))
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
    players = tuple(getattr(session, "players", session))
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
    """An entry as three rows of tokens, however incomplete: extra ``/`` parts join the bottom, and
    cards typed without ``/`` fill top 3, middle 5, bottom 5 in order (any beyond join the bottom).
    """
    if value is None:
        return [[], [], []]
    if isinstance(value, str):
        if "/" not in value:
            return _fill_rows(split_tokens(value))
        parts = value.split("/")
        rows = [split_tokens(part) for part in parts[:3]]
        for part in parts[3:]:
            rows[-1].extend(split_tokens(part))
    else:
        rows = [
            split_tokens(row) if isinstance(row, str)
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



@dataclass(frozen=True, slots=True)
class PreviewCard:
    """One card of an entry as a preview shows it: ``text`` is the canonical card (``Ah``) or the
    token as typed when it is not a card; ``extra`` marks a card beyond its row's size."""

    text: str
    valid: bool
    extra: bool


def preview_rows(value: BoardInput) -> tuple[tuple[PreviewCard, ...], ...]:
    """Every card of an entry, row by row, nothing hidden: a row typed with too many cards shows
    all of them, those beyond its size marked ``extra`` ("top 4/3" shows four cards, one extra).

    >>> [card.text + ("+" if card.extra else "") for card in preview_rows("Qs Qh 5d 2c / /")[0]]
    ['Qs', 'Qh', '5d', '2c+']
    """
    shown: list[tuple[PreviewCard, ...]] = []
    for row, tokens in zip(ROWS, entry_rows(value), strict=True):
        cards = []
        for position, token in enumerate(tokens):
            try:
                text, valid = card_text(parse_card(token)), True
            except CardError:
                text, valid = token, False
            cards.append(PreviewCard(text, valid, position >= ROW_SIZES[row]))
        shown.append(tuple(cards))
    return tuple(shown)
