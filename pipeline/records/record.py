"""The canonical hand record (docs/hand-format.md) as small typed values.

Readers yield plain JSON-like mappings; :mod:`pipeline.records.validate` turns a mapping into a
:class:`HandRecord` or a precise reason. Everything here is pure data, no I/O.
Unknown fields are kept in ``extra`` so nothing a source recorded is lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipeline.rules.cards import Card, cards_text
from pipeline.rules.game import ROWS, Row, Variant


@dataclass(slots=True)
class Street:
    """One street for one player: the cards dealt, where each was placed, what was discarded."""

    dealt: tuple[Card, ...]
    placed: tuple[tuple[Card, Row], ...]
    discarded: tuple[Card, ...]


@dataclass(slots=True)
class FinalBoard:
    """A set board: 3 top, 5 middle, 5 bottom cards."""

    top: tuple[Card, ...]
    middle: tuple[Card, ...]
    bottom: tuple[Card, ...]

    def row(self, row: Row) -> tuple[Card, ...]:
        """Cards of one row."""
        return {Row.TOP: self.top, Row.MIDDLE: self.middle, Row.BOTTOM: self.bottom}[row]

    def as_text(self) -> dict[str, list[str]]:
        """Rows as canonical card texts."""
        return {row.value: cards_text(self.row(row)) for row in ROWS}

    @property
    def cards(self) -> tuple[Card, ...]:
        """All 13 cards, top then middle then bottom."""
        return self.top + self.middle + self.bottom


@dataclass(slots=True)
class PlayerRecord:
    """One player's part of a hand."""

    name: str
    seat: int
    fantasyland: bool
    board: FinalBoard
    streets: tuple[Street, ...] | None = None
    reported_points: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def discards(self) -> tuple[Card, ...]:
        """All cards this player discarded, in street order."""
        if not self.streets:
            return ()
        return tuple(card for street in self.streets for card in street.discarded)

    @property
    def cards_dealt(self) -> int | None:
        """How many cards the player saw this hand (None when streets are unknown)."""
        if self.streets is None:
            return None
        return sum(len(street.dealt) for street in self.streets)


@dataclass(slots=True)
class HandRecord:
    """One played hand, validated."""

    hand_id: str
    site: str
    variant: Variant
    rules: str
    players: tuple[PlayerRecord, ...]
    table: str | None = None
    started_at: str | None = None
    button: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    match_id: str | None = None
    """The match the hand belongs to (unique within ``site``); None: no match."""

    @property
    def key(self) -> tuple[str, str]:
        """The identity of the hand: (site, hand_id)."""
        return (self.site, self.hand_id)

    def action_order(self) -> tuple[PlayerRecord, ...]:
        """Players in settlement order: clockwise by seat, starting left of the button.

        Without a known button the lowest seat starts.
        """
        by_seat = sorted(self.players, key=lambda player: player.seat)
        if self.button is None:
            return tuple(by_seat)
        names = [player.name for player in by_seat]
        if self.button not in names:
            return tuple(by_seat)
        start = (names.index(self.button) + 1) % len(by_seat)
        return tuple(by_seat[start:] + by_seat[:start])
