"""Stored hands as the grader sees them, and one decision from the deciding player's seat.

A hand is read back from the ``hands``, ``seats``, ``placements`` and ``discards`` tables (only
hands whose records have streets). A *decision* is one street of one player who is not in
Fantasyland. At that moment the player knows (spec: "what the player saw"):

* their own board so far, their own earlier discards and the cards dealt to them now;
* every opponent's cards placed on earlier streets, and on this street the cards of opponents
  who act before them (action starts left of the button: ``seats.position`` 0 first).

Everything else is *unseen*: the rest of the deck, opponents' discards (face down), cards of
opponents who act later on this street, and the whole hand of an opponent in Fantasyland (set
in private). Rollouts deal the unseen cards at random, in the real deal's structure
(:class:`DealPlan`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from pipeline import store
from pipeline.analysis.alternatives import (
    DISCARD,
    AlternativeSet,
    Pattern,
    Rows,
    enumerate_alternatives,
    symmetry_group,
)
from pipeline.rules.cards import Card, parse_card
from pipeline.rules.game import Variant

ROW_INDEX = {"top": 0, "middle": 1, "bottom": 2}


@dataclass(frozen=True, slots=True)
class StreetPlay:
    """One street of one player: (card, row) placements in order, and the discarded cards."""

    placed: tuple[tuple[Card, int], ...]
    discarded: tuple[Card, ...]

    @property
    def dealt(self) -> tuple[Card, ...]:
        """The street's cards: placed ones in order, then the discards."""
        return tuple(card for card, _ in self.placed) + self.discarded

    @property
    def pattern(self) -> Pattern:
        """The placement as a pattern over :attr:`dealt`."""
        return tuple(row for _, row in self.placed) + (DISCARD,) * len(self.discarded)


@dataclass(frozen=True, slots=True)
class SeatPlay:
    """One player of a hand, in action order."""

    name: str
    position: int
    fantasyland: bool
    cards_dealt: int
    streets: tuple[StreetPlay, ...]

    def rows_before(self, street: int) -> Rows:
        """The board after streets ``0 .. street - 1`` (0-based street index)."""
        rows: list[list[Card]] = [[], [], []]
        for play in self.streets[:street]:
            for card, row in play.placed:
                rows[row].append(card)
        return (tuple(rows[0]), tuple(rows[1]), tuple(rows[2]))

    def discards_before(self, street: int) -> tuple[Card, ...]:
        """Cards this player discarded before ``street``."""
        return tuple(card for play in self.streets[:street] for card in play.discarded)


@dataclass(frozen=True, slots=True)
class HandView:
    """A stored hand with streets: seats in action order (left of the button first)."""

    hand_key: int
    hand_id: str
    variant: Variant
    rules: str
    seats: tuple[SeatPlay, ...]
    started_at: str | None = None  # ISO (UTC), when the record has it

    def seat_of(self, player: str) -> int:
        """Index (= position) of a player in :attr:`seats`."""
        for index, seat in enumerate(self.seats):
            if seat.name == player:
                return index
        raise KeyError(player)

    def decision_streets(self, player: str) -> list[int]:
        """0-based streets at which ``player`` made a placement decision (none in Fantasyland)."""
        seat = self.seats[self.seat_of(player)]
        if seat.fantasyland:
            return []
        return list(range(len(seat.streets)))


@dataclass(frozen=True, slots=True)
class DealPlan:
    """Where each unseen card of a rollout goes: positions in a shuffled unseen deck.

    ``fantasyland``: (seat, start, count) for each opponent in Fantasyland;
    ``current``: (seat, start, count, discards) for opponents still to act on this street;
    ``future``: per later street, (seat, start, count, discards) for every normal seat in
    action order (the decider included).
    """

    fantasyland: tuple[tuple[int, int, int], ...]
    current: tuple[tuple[int, int, int, int], ...]
    future: tuple[tuple[tuple[int, int, int, int], ...], ...]
    cards: int


@dataclass(frozen=True, slots=True)
class Decision:
    """One street of one player, from that player's point of view."""

    hand: HandView
    hero: int  # seat index
    street: int  # 0-based
    rows: Rows  # the hero's board before the street
    dealt: tuple[Card, ...]
    discards: int
    chosen: Pattern
    known: frozenset[Card]
    unseen: tuple[Card, ...]
    visible: tuple[Rows | None, ...]  # per seat: the board the hero sees (None: Fantasyland)
    plan: DealPlan

    @property
    def player(self) -> str:
        """The deciding player's name."""
        return self.hand.seats[self.hero].name

    @property
    def street_number(self) -> int:
        """1-based street, as stored in ``placements.street``."""
        return self.street + 1

    @property
    def last_street(self) -> bool:
        """True when this street completes the board."""
        return self.street == len(self.hand.variant.streets) - 1

    def symmetry(self) -> tuple[tuple[int, ...], ...]:
        """The suit permutations that map the position onto itself (the known cards, and each
        visible row of every opponent): placements they map onto each other are worth the same."""
        opponents = [
            cards for index, rows in enumerate(self.visible)
            if rows is not None and index != self.hero for cards in rows if cards
        ]
        return symmetry_group(self.known, opponents)

    def alternatives(self, prune: bool = True) -> AlternativeSet:
        """The legal alternatives, symmetric ones merged unless ``prune`` is false."""
        group = self.symmetry() if prune else ((0, 1, 2, 3),)
        return enumerate_alternatives(self.rows, self.dealt, self.discards, self.chosen, group, prune)


def decision_at(hand: HandView, hero: int, street: int) -> Decision:
    """The decision of seat ``hero`` on 0-based ``street`` (see the module docstring)."""
    seat = hand.seats[hero]
    if seat.fantasyland:
        raise ValueError("a Fantasyland hand is set at once; it is not graded street by street")
    shapes = hand.variant.streets
    play = seat.streets[street]
    known: set[Card] = set()
    visible: list[Rows | None] = []
    for index, other in enumerate(hand.seats):
        if other.fantasyland and index != hero:
            visible.append(None)
            continue
        seen = street + (1 if index < hero else 0) if index != hero else street
        rows = other.rows_before(seen)
        visible.append(rows)
        known.update(card for cards in rows for card in cards)
    known.update(seat.discards_before(street))
    known.update(play.dealt)
    unseen = tuple(card for card in range(52) if card not in known)

    cursor = 0
    fantasyland = []
    for index, other in enumerate(hand.seats):
        if other.fantasyland and index != hero:
            fantasyland.append((index, cursor, other.cards_dealt))
            cursor += other.cards_dealt
    current = []
    shape = shapes[street]
    for index, other in enumerate(hand.seats):
        if index > hero and not other.fantasyland:
            current.append((index, cursor, shape.dealt, shape.discarded))
            cursor += shape.dealt
    future = []
    for later in shapes[street + 1:]:
        step = []
        for index, other in enumerate(hand.seats):
            if not other.fantasyland:
                step.append((index, cursor, later.dealt, later.discarded))
                cursor += later.dealt
        future.append(tuple(step))
    if cursor > len(unseen):
        raise ValueError(f"hand {hand.hand_id}: the deal needs {cursor} unseen cards, "
                         f"only {len(unseen)} exist")
    return Decision(
        hand=hand, hero=hero, street=street, rows=seat.rows_before(street), dealt=play.dealt,
        discards=len(play.discarded), chosen=play.pattern, known=frozenset(known), unseen=unseen,
        visible=tuple(visible),
        plan=DealPlan(tuple(fantasyland), tuple(current), tuple(future), cursor),
    )


# --- reading hands back from the database ------------------------------------------------------

_CARD_CACHE: dict[str, Card] = {}


def _card(text: str) -> Card:
    card = _CARD_CACHE.get(text)
    if card is None:
        card = _CARD_CACHE[text] = parse_card(text)
    return card


def select_hands(
    connection: duckdb.DuckDBPyConnection, player: str | None = None, limit: int | None = None,
    variant: str | None = None, outdated: bool = False,
) -> list[int]:
    """Keys of hands with streets, most recent first: those ``player`` sat in (of ``variant``),
    at most ``limit``; ``outdated``: only hands holding an outdated grade (of ``player``, when
    given: :func:`pipeline.store.current_grades`)."""
    params: list[Any] = []
    where = "h.has_streets"
    if outdated:
        columns = {row[0] for row in connection.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' "
            "AND table_name = 'decision_grades'").fetchall()}
        if not columns:
            return []
        whose = ""
        if player is not None:
            whose = " AND g.player = ?"
            params.append(player)
        where += (" AND h.hand_key IN (SELECT g.hand_key FROM decision_grades g WHERE NOT "
                  f"coalesce({store.current_grades(columns, 'g')}, false){whose})")
    if variant is not None:
        where += " AND h.variant = ?"
        params.append(variant)
    if player is not None:
        where += " AND h.hand_key IN (SELECT hand_key FROM seats WHERE player = ?)"
        params.append(player)
    sql = (f"SELECT h.hand_key FROM hands h WHERE {where} "
           "ORDER BY h.started_at DESC NULLS LAST, h.hand_key")
    if limit is not None:
        sql += " LIMIT ?"
        params.append(int(limit))
    return [row[0] for row in connection.execute(sql, params).fetchall()]


def load_hands(connection: duckdb.DuckDBPyConnection, keys: Sequence[int]) -> list[HandView]:
    """The hands with these keys (in the given order), rebuilt street by street."""
    if not keys:
        return []
    connection.execute("CREATE OR REPLACE TEMP TABLE _grade_keys (hand_key BIGINT)")
    connection.executemany("INSERT INTO _grade_keys VALUES (?)", [[key] for key in keys])
    try:
        heads = {
            key: (hand_id, variant, rules, started_at)
            for key, hand_id, variant, rules, started_at in connection.execute(
                "SELECT hand_key, hand_id, variant, rules, strftime(started_at, '%Y-%m-%d %H:%M') "
                "FROM hands "
                "WHERE hand_key IN (SELECT hand_key FROM _grade_keys)"
            ).fetchall()
        }
        seats: dict[int, list[tuple]] = {}
        for row in connection.execute(
            "SELECT hand_key, player, position, fantasyland, cards_dealt FROM seats "
            "WHERE hand_key IN (SELECT hand_key FROM _grade_keys) ORDER BY hand_key, position"
        ).fetchall():
            seats.setdefault(row[0], []).append(row[1:])
        placed: dict[tuple[int, str], dict[int, list[tuple[Card, int]]]] = {}
        for key, player, street, card, row_name in connection.execute(
            "SELECT hand_key, player, street, card, row_name FROM placements "
            "WHERE hand_key IN (SELECT hand_key FROM _grade_keys) "
            "ORDER BY hand_key, player, street, card_order"
        ).fetchall():
            placed.setdefault((key, player), {}).setdefault(street, []).append(
                (_card(card), ROW_INDEX[row_name])
            )
        thrown: dict[tuple[int, str], dict[int, list[Card]]] = {}
        for key, player, street, card in connection.execute(
            "SELECT hand_key, player, street, card FROM discards "
            "WHERE hand_key IN (SELECT hand_key FROM _grade_keys) ORDER BY hand_key, player, street"
        ).fetchall():
            thrown.setdefault((key, player), {}).setdefault(street, []).append(_card(card))
    finally:
        connection.execute("DROP TABLE IF EXISTS _grade_keys")
    hands = []
    for key in keys:
        if key not in heads:
            continue
        hand_id, variant, rules, started_at = heads[key]
        plays = []
        for player, position, fantasyland, cards_dealt in seats.get(key, []):
            by_street = placed.get((key, player), {})
            discards = thrown.get((key, player), {})
            numbers = sorted(set(by_street) | set(discards))
            streets = tuple(
                StreetPlay(tuple(by_street.get(number, ())), tuple(discards.get(number, ())))
                for number in numbers
            )
            dealt = cards_dealt if cards_dealt is not None else sum(len(s.dealt) for s in streets)
            plays.append(SeatPlay(player, position, bool(fantasyland), int(dealt), streets))
        hands.append(HandView(key, hand_id, Variant(variant), rules, tuple(plays), started_at))
    return hands


def hand_players(hands: Iterable[HandView]) -> list[str]:
    """Every player name of the hands, sorted."""
    return sorted({seat.name for hand in hands for seat in hand.seats})
