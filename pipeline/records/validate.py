"""Turn a canonical hand mapping (docs/hand-format.md) into a :class:`HandRecord`, or say why not.

:func:`parse_hand` checks a JSON-like mapping and raises :class:`InvalidHand` with one precise
human reason: the first problem found, naming the player, the street and the card.
:func:`hand_to_mapping` writes a record back as the canonical mapping, so records round-trip.

The checks are hand-written (no ``jsonschema`` per record) because ingestion runs them on
every hand; ``schemas/hand.schema.json`` describes the same shape for other tools, and the
tests keep the two in agreement. Conventions shared with the schema:

* unknown fields are kept (``HandRecord.extra``, ``PlayerRecord.extra``), never rejected;
  unknown keys inside a street or a board are ignored;
* ``site`` defaults to ``"local"``, ``rules`` to ``"standard"``, ``fantasyland`` to false,
  a street's ``discarded`` to ``[]``;
* ``table``, ``match_id``, ``started_at``, ``button``, ``streets``, ``board`` and
  ``reported_points`` may be ``null``, which means the same as absent;
* ``hand_id``, ``table`` and ``match_id`` may be integers and are stringified;
* integral floats (``5.0``) count as integers, as in JSON Schema;
* texts that identify something (``hand_id``, ``site``, ``table``, ``match_id``, ``rules``,
  ``button``, player names) are normalised the same way on every path (:func:`normalise_text`): Unicode NFC,
  surrounding white space trimmed, inner runs kept; they may hold no control character and are
  at most :data:`MAX_NAME_LENGTH` (names) or :data:`MAX_ID_LENGTH` (the others) characters;
* every number has a range: seats 0..:data:`MAX_SEAT`, ``reported_points`` within
  ±:data:`MAX_REPORTED_POINTS`, ``started_at`` in the years :data:`STARTED_AT_YEARS`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime
from typing import Any

from pipeline.records.record import FinalBoard, HandRecord, PlayerRecord, Street
from pipeline.rules.cards import Card, CardError, card_text, parse_card
from pipeline.rules.game import ROW_SIZES, ROWS, VARIANTS_BY_NAME, Row, Variant

__all__ = [
    "MAX_ID_LENGTH",
    "MAX_NAME_LENGTH",
    "MAX_REASON_CHARACTERS",
    "MAX_REPORTED_POINTS",
    "MAX_SEAT",
    "STARTED_AT_PATTERN",
    "STARTED_AT_YEARS",
    "InvalidHand",
    "clip_reason",
    "hand_to_mapping",
    "is_plain_text",
    "normalise_text",
    "parse_hand",
    "points_in_range",
]


class InvalidHand(ValueError):
    """A hand record that breaks the canonical format or a rule of the game.

    ``str(error)`` (and ``error.reason``) is one precise human reason; ``error.hand_id`` is the
    record's hand id when it could be read, else ``None``.
    """

    def __init__(self, reason: str, hand_id: str | None = None) -> None:
        reason = clip_reason(reason)
        super().__init__(reason)
        self.reason = reason
        self.hand_id = hand_id


MAX_REASON_CHARACTERS = 2_000
"""The longest reason kept (a reject's, an ``ofc score`` error's): one quoting a long part of a
record is cut, saying how much was."""


def clip_reason(reason: str) -> str:
    """``reason``, cut to :data:`MAX_REASON_CHARACTERS` with how much was cut said.

    >>> clip_reason("short")
    'short'
    >>> clip_reason("x" * 2_010)[-26:]
    'xxxx… [10 more characters]'
    """
    if len(reason) <= MAX_REASON_CHARACTERS:
        return reason
    return (reason[:MAX_REASON_CHARACTERS]
            + f"… [{len(reason) - MAX_REASON_CHARACTERS:,} more characters]")


# --- constants ------------------------------------------------------------------------------

_VARIANT_NAMES = ", ".join(variant.value for variant in Variant)

_HAND_FIELDS = frozenset(
    ("hand_id", "site", "table", "match_id", "started_at", "variant", "rules", "button",
     "players")
)
_PLAYER_FIELDS = frozenset(
    ("name", "seat", "fantasyland", "streets", "board", "reported_points")
)

MAX_SEAT = 999
"""Highest seat number a record may use (seats are small numbers; the database stores SMALLINT)."""

MAX_REPORTED_POINTS = 1_000_000
"""Largest ``reported_points`` a record may give, either sign (a hand pays a few hundred at most;
the database stores DOUBLE, exact for whole numbers far beyond this)."""

MAX_NAME_LENGTH = 64
"""Longest player name (and ``button``), in characters after normalising."""

MAX_ID_LENGTH = 128
"""Longest ``hand_id``, ``site``, ``table``, ``match_id`` and ``rules``, in characters after
normalising."""

MAX_EXTRA_DEPTH = 32
"""Deepest nesting of arrays and objects in an unknown field kept with a record (its extras are
written back as JSON; a hand record itself needs five levels)."""

STARTED_AT_YEARS = (1900, 2199)
"""First and last year a ``started_at`` may fall in (also after conversion to UTC)."""

_FORBIDDEN_IN_TEXT = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Control characters (C0, DEL, C1) and the bidirectional overrides that make text display as
something it is not: refused in names and ids."""

_TOP_SIZE = ROW_SIZES[Row.TOP]
_MIDDLE_SIZE = ROW_SIZES[Row.MIDDLE]
_BOTTOM_SIZE = ROW_SIZES[Row.BOTTOM]
_BOARD_SIZE = _TOP_SIZE + _MIDDLE_SIZE + _BOTTOM_SIZE

_CARD_TEXT: tuple[str, ...] = tuple(card_text(card) for card in range(52))

# (card, row) pairs are immutable, so every placement of a card in a row shares one tuple.
_TOP_PAIRS = tuple((card, Row.TOP) for card in range(52))
_MIDDLE_PAIRS = tuple((card, Row.MIDDLE) for card in range(52))
_BOTTOM_PAIRS = tuple((card, Row.BOTTOM) for card in range(52))

# Street structure of a normal hand, as plain (dealt, discarded) pairs for speed.
_STREET_SHAPES: dict[Variant, tuple[tuple[int, int], ...]] = {
    variant: tuple((shape.dealt, shape.discarded) for shape in variant.streets)
    for variant in Variant
}
_STREET_DESCRIPTIONS = {
    Variant.CLASSIC: "5 cards, then 8 streets of 1",
    Variant.PINEAPPLE: "5 cards, then 4 streets of 3",
    Variant.LOWBALL_PINEAPPLE: "5 cards, then 4 streets of 3",
}

# Cards dealt in Fantasyland (docs/rules.md): classic 13; pineapple 14, progressive up to 17;
# 2-7 pineapple 14 or 15.
_FANTASYLAND_DEALT: dict[Variant, frozenset[int]] = {
    variant: variant.fantasyland_deal_sizes for variant in Variant
}
_FANTASYLAND_DESCRIPTIONS = {
    Variant.CLASSIC: "13",
    Variant.PINEAPPLE: "14-17",
    Variant.LOWBALL_PINEAPPLE: "14 or 15",
}

STARTED_AT_PATTERN = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?"
    r"(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)?"
)
"""An ISO 8601 date-time as records may give ``started_at`` (date, time, optional zone)."""

# Token -> card code for every spelling seen so far (filled through parse_card, so it holds
# exactly what the card reader accepts), and token -> (card, row) pair for each row. Bounded:
# only accepted spellings are stored.
_CARD_CACHE: dict[str, Card] = {}
_TOP_PAIR_CACHE: dict[str, tuple[Card, Row]] = {}
_MIDDLE_PAIR_CACHE: dict[str, tuple[Card, Row]] = {}
_BOTTOM_PAIR_CACHE: dict[str, tuple[Card, Row]] = {}
_CARD_CACHE_LIMIT = 4096

_SEQUENCE_TYPES = (list, tuple)


# --- small helpers --------------------------------------------------------------------------


def _show(value: Any) -> str:
    """A short repr of a value for an error message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _as_integer(value: Any) -> int | None:
    """The value as an ``int`` when it is a JSON integer (``5`` or ``5.0``), else ``None``."""
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def normalise_text(text: str) -> str:
    """A name or id as stored: Unicode NFC, surrounding white space trimmed, inner runs kept
    (``" Ame\u0301lie "`` → ``"Amélie"``, ``"kofi  b"`` stays ``"kofi  b"``)."""
    if text.isascii():
        return text.strip()
    return unicodedata.normalize("NFC", text).strip()


def is_plain_text(text: str, limit: int) -> bool:
    """True when a name or id needs no normalising and no check: printable ASCII (or printable
    NFC text), no surrounding space, non-empty, at most ``limit`` characters. The fast paths
    accept only such texts and hand everything else to the checking path."""
    if not text or len(text) > limit or not text.isprintable():
        return False
    if text[0] == " " or text[-1] == " ":
        return False
    return text.isascii() or unicodedata.is_normalized("NFC", text)


def points_in_range(value: object) -> bool:
    """True when ``value`` is a usable ``reported_points``: an int or a finite float within
    ±:data:`MAX_REPORTED_POINTS` (False for bools, nan and infinities)."""
    kind = type(value)
    if kind is int or kind is float:
        return -MAX_REPORTED_POINTS <= value <= MAX_REPORTED_POINTS  # false for nan
    return False


def _checked_text(value: str, what: str, limit: int) -> str:
    """A name or id normalised, or InvalidHand naming what is wrong with it."""
    if len(value) > limit:  # as written: normalising only shortens, so the schema's cap holds
        raise InvalidHand(f"{what} is {len(value)} characters long, the limit is {limit}")
    text = normalise_text(value)
    if not text:
        raise InvalidHand(f"{what} must be a non-empty string, got {_show(value)}")
    bad = _FORBIDDEN_IN_TEXT.search(text)
    if bad is not None:
        raise InvalidHand(
            f"{what} {_show(value)} contains the control character U+{ord(bad.group()):04X}"
        )
    return text


def _count(cards: int) -> str:
    """``1 card``, ``3 cards``."""
    return "1 card" if cards == 1 else f"{cards} cards"


_CARDS_SHOWN = 20
"""Cards a reason shows of a list, at most (a street holds at most 17)."""


def _cards_text(cards: Any) -> str:
    """Card codes as ``[Ah Kd]``; a list longer than :data:`_CARDS_SHOWN` shows its first ones
    and its length (``[Ah Ah … (150,000 cards)]``)."""
    shown = " ".join(_CARD_TEXT[card] for card in cards[:_CARDS_SHOWN])
    if len(cards) > _CARDS_SHOWN:
        shown += f" … ({len(cards):,} cards)"
    return "[" + shown + "]"


def _remember_card(token: str, card: Card) -> None:
    """Add an accepted spelling to the token caches (while they have room)."""
    if len(_CARD_CACHE) < _CARD_CACHE_LIMIT and type(token) is str:
        _TOP_PAIR_CACHE[token] = _TOP_PAIRS[card]
        _MIDDLE_PAIR_CACHE[token] = _MIDDLE_PAIRS[card]
        _BOTTOM_PAIR_CACHE[token] = _BOTTOM_PAIRS[card]
        _CARD_CACHE[token] = card


for _card in range(52):
    _remember_card(_CARD_TEXT[_card], _card)


def _card_list(value: Any, where: str, what: str) -> list[Card]:
    """Parse a list of card tokens; raise :class:`InvalidHand` naming ``where`` and ``what``."""
    if isinstance(value, _SEQUENCE_TYPES):
        try:
            return [_CARD_CACHE[token] for token in value]
        except (KeyError, TypeError):
            pass
        cards = []
        for token in value:
            try:
                card = parse_card(token)
            except CardError as error:
                raise InvalidHand(f"{where} {what}: {error}") from None
            _remember_card(token, card)
            cards.append(card)
        return cards
    raise InvalidHand(f"{where}: {what} must be a list of cards, got {_show(value)}")


# --- parse_hand -----------------------------------------------------------------------------


def parse_hand(mapping: dict) -> HandRecord:
    """Validate a canonical hand mapping and return it as a :class:`HandRecord`.

    Raises :class:`InvalidHand` with the first problem found, e.g.
    ``players[1] ('jun') street 3: placed + discarded [Qs Qh 3d] differ from dealt [Qs Qh 3c]``.
    """
    try:
        hand = _parse_fast(mapping)
    except _FAST_PATH_SURPRISES:
        hand = None
    if hand is not None:
        return hand
    return _parse_precise(mapping)


def _parse_precise(mapping: dict) -> HandRecord:
    """The checking path: every rule in order, raising the first problem with its reason.

    :func:`parse_hand` comes here whenever the fast path sees anything unusual, so this is
    the path that defines what is valid.
    """
    if not isinstance(mapping, dict):
        raise InvalidHand(f"a hand record must be a JSON object, got {_show(mapping)}")
    hand_id = _read_hand_id(mapping)
    try:
        return _parse_checked(mapping, hand_id)
    except InvalidHand as error:
        if error.hand_id is None:
            error.hand_id = hand_id
        raise


def _read_hand_id(mapping: dict) -> str:
    """The hand id as text (integers are stringified)."""
    if "hand_id" not in mapping:
        raise InvalidHand("missing field 'hand_id'")
    value = mapping["hand_id"]
    if type(value) is str:
        if value.strip():
            return _checked_text(value, "hand_id", MAX_ID_LENGTH)
    else:
        integer = _as_integer(value)
        if integer is not None:
            return _checked_text(str(integer), "hand_id", MAX_ID_LENGTH)
    raise InvalidHand(f"hand_id must be a non-empty string or an integer, got {_show(value)}")


def _optional_text(
    mapping: dict, key: str, default: str | None, allow_integer: bool, limit: int = MAX_ID_LENGTH
) -> str | None:
    """An optional text field: absent gives ``default``; ``null`` is allowed when default is None.
    The text is normalised (:func:`normalise_text`) and checked."""
    value = mapping.get(key)
    if value is None:
        if default is not None and key in mapping:
            raise InvalidHand(f"{key} must be a non-empty string, got null")
        return default
    if type(value) is str and value.strip():
        return _checked_text(value, key, limit)
    if allow_integer:
        integer = _as_integer(value)
        if integer is not None:
            return _checked_text(str(integer), key, limit)
        raise InvalidHand(
            f"{key} must be a non-empty string, an integer or null, got {_show(value)}"
        )
    if default is None:
        raise InvalidHand(f"{key} must be a non-empty string or null, got {_show(value)}")
    raise InvalidHand(f"{key} must be a non-empty string, got {_show(value)}")


def _parse_checked(mapping: dict, hand_id: str) -> HandRecord:
    """The body of :func:`parse_hand` once the hand id is known."""
    if "variant" not in mapping:
        raise InvalidHand("missing field 'variant'")
    variant_value = mapping["variant"]
    if isinstance(variant_value, Variant):
        variant: Variant | None = variant_value
    else:
        variant = VARIANTS_BY_NAME.get(variant_value) if isinstance(variant_value, str) else None
    if variant is None:
        raise InvalidHand(f"variant {_show(variant_value)} is not one of {_VARIANT_NAMES}")

    site = _optional_text(mapping, "site", "local", allow_integer=False)
    rules = _optional_text(mapping, "rules", "standard", allow_integer=False)
    table = _optional_text(mapping, "table", None, allow_integer=True)
    match_id = _optional_text(mapping, "match_id", None, allow_integer=True)
    button = _optional_text(mapping, "button", None, allow_integer=False, limit=MAX_NAME_LENGTH)
    started_at = mapping.get("started_at")
    if started_at is not None:
        _check_started_at(started_at)

    if "players" not in mapping:
        raise InvalidHand("missing field 'players'")
    raw_players = mapping["players"]
    if not isinstance(raw_players, _SEQUENCE_TYPES):
        raise InvalidHand(f"players must be a list of player objects, got {_show(raw_players)}")
    count = len(raw_players)
    if not variant.min_players <= count <= variant.max_players:
        raise InvalidHand(
            f"{variant.value} allows {variant.min_players}-{variant.max_players} players, "
            f"got {count}"
        )

    players = []
    names: dict[str, int] = {}
    seats: dict[int, int] = {}
    all_cards: list[Card] = []
    for index, raw_player in enumerate(raw_players):
        player = _parse_player(raw_player, index, variant, all_cards)
        if player.name in names:
            raise InvalidHand(
                f"player name {player.name!r} appears twice (players[{names[player.name]}], "
                f"players[{index}])"
            )
        names[player.name] = index
        if player.seat in seats:
            first = seats[player.seat]
            raise InvalidHand(
                f"seat {player.seat} appears twice (players[{first}] "
                f"({players[first].name!r}), players[{index}] ({player.name!r}))"
            )
        seats[player.seat] = index
        players.append(player)

    if len(set(all_cards)) != len(all_cards):
        _raise_duplicate_card(players)

    if button is not None and button not in names:
        raise InvalidHand(
            f"button {button!r} is not one of the players ({', '.join(names)})"
        )

    return _hand_record(mapping, hand_id, site, variant, rules, players, table, started_at, button,
                        match_id)


def _hand_record(
    mapping: dict, hand_id: str, site: str, variant: Variant, rules: str,
    players: list[PlayerRecord], table: str | None, started_at: str | None, button: str | None,
    match_id: str | None,
) -> HandRecord:
    """The validated record, with the mapping's unknown fields kept as extras (input order)."""
    return HandRecord(
        hand_id=hand_id, site=site, variant=variant, rules=rules, players=tuple(players),
        table=table, started_at=started_at, button=button,
        extra=_kept_extras(mapping, _HAND_FIELDS, ""),
        match_id=match_id,
    )


def _kept_extras(raw: dict, known: frozenset[str], where: str) -> dict[str, Any]:
    """The unknown fields of ``raw`` (input order), kept as they are; raises InvalidHand for
    one nested deeper than :data:`MAX_EXTRA_DEPTH`."""
    extra = {key: value for key, value in raw.items() if key not in known}
    for key, value in extra.items():
        if type(value) in (dict, list) and _nested_deeper_than(value, MAX_EXTRA_DEPTH):
            raise InvalidHand(
                f"{where}{': ' if where else ''}field {key!r} is nested more than "
                f"{MAX_EXTRA_DEPTH} levels deep (unknown fields are kept up to that depth)")
    return extra


def _nested_deeper_than(value: Any, limit: int) -> bool:
    """True when arrays and objects in ``value`` nest more than ``limit`` levels (counted
    without recursion, so any depth is safe to ask about)."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > limit:
            return True
        children = item.values() if type(item) is dict else item
        pending.extend((child, depth + 1) for child in children if type(child) in (dict, list))
    return False


def _year_in_range(moment: datetime) -> bool:
    """True when a start time falls in :data:`STARTED_AT_YEARS`, as written and in UTC (the
    years around the range could overflow on conversion)."""
    first, last = STARTED_AT_YEARS
    return first < moment.year < last or (
        first <= moment.year <= last
        and (moment.tzinfo is None or first <= (moment - moment.utcoffset()).year <= last)
    )


def _check_started_at(value: Any) -> None:
    """Raise unless ``value`` is an ISO 8601 date-time string."""
    if type(value) is not str:
        raise InvalidHand(f"started_at must be an ISO 8601 date-time string, got {_show(value)}")
    if STARTED_AT_PATTERN.fullmatch(value) is not None:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if not _year_in_range(moment):
                first, last = STARTED_AT_YEARS
                raise InvalidHand(f"started_at {_show(value)} is outside the years {first}-{last}")
            return
    raise InvalidHand(
        f"started_at {_show(value)} is not an ISO 8601 date-time (like 2026-11-01T20:15:03Z)"
    )


def _parse_player(
    raw: Any, index: int, variant: Variant, all_cards: list[Card]
) -> PlayerRecord:
    """One player; appends every card the player saw to ``all_cards``."""
    if not isinstance(raw, dict):
        raise InvalidHand(f"players[{index}] must be an object, got {_show(raw)}")
    name = raw.get("name")
    if type(name) is not str or not name.strip():
        if "name" not in raw:
            raise InvalidHand(f"players[{index}]: missing field 'name'")
        raise InvalidHand(f"players[{index}]: name must be a non-empty string, got {_show(name)}")
    name = _checked_text(name, f"players[{index}]: name", MAX_NAME_LENGTH)
    where = f"players[{index}] ({name!r})"

    if "seat" not in raw:
        raise InvalidHand(f"{where}: missing field 'seat'")
    seat = _as_integer(raw["seat"])
    if seat is None or not 0 <= seat <= MAX_SEAT:
        raise InvalidHand(
            f"{where}: seat must be an integer from 0 to {MAX_SEAT}, got {_show(raw['seat'])}"
        )

    fantasyland = raw.get("fantasyland", False)
    if fantasyland is not False and fantasyland is not True:
        raise InvalidHand(f"{where}: fantasyland must be true or false, got {_show(fantasyland)}")

    reported_points = raw.get("reported_points")
    if reported_points is not None and (
        isinstance(reported_points, bool)
        or not isinstance(reported_points, (int, float))
        or (isinstance(reported_points, float) and not math.isfinite(reported_points))
    ):
        raise InvalidHand(
            f"{where}: reported_points must be a number or null, got {_show(reported_points)}"
        )
    if reported_points is not None and not (
        -MAX_REPORTED_POINTS <= reported_points <= MAX_REPORTED_POINTS
    ):
        raise InvalidHand(
            f"{where}: reported_points must be from {-MAX_REPORTED_POINTS:,} to "
            f"{MAX_REPORTED_POINTS:,}, got {_show(reported_points)}"
        )

    raw_streets = raw.get("streets")
    raw_board = raw.get("board")
    if raw_streets is None and raw_board is None:
        raise InvalidHand(f"{where}: needs 'streets' or 'board' (or both)")

    streets: tuple[Street, ...] | None = None
    if raw_streets is not None:
        streets, board = _parse_streets(raw_streets, where, variant, fantasyland, all_cards)
        if raw_board is not None:
            _check_board_agrees(_parse_board(raw_board, where), board, where)
    else:
        board = _parse_board(raw_board, where)
        all_cards.extend(board.top)
        all_cards.extend(board.middle)
        all_cards.extend(board.bottom)

    extra = _kept_extras(raw, _PLAYER_FIELDS, where)
    return PlayerRecord(
        name=name,
        seat=seat,
        fantasyland=fantasyland,
        board=board,
        streets=streets,
        reported_points=reported_points,
        extra=extra,
    )


def _parse_streets(
    raw_streets: Any, where: str, variant: Variant, fantasyland: bool, all_cards: list[Card]
) -> tuple[tuple[Street, ...], FinalBoard]:
    """A player's streets, checked against the variant, and the final board they build."""
    if not isinstance(raw_streets, _SEQUENCE_TYPES):
        raise InvalidHand(f"{where}: streets must be a list of streets, got {_show(raw_streets)}")
    if fantasyland:
        if len(raw_streets) != 1:
            raise InvalidHand(
                f"{where}: Fantasyland hand must be one street of "
                f"{_FANTASYLAND_DESCRIPTIONS[variant]} cards in {variant.value}, "
                f"got {len(raw_streets)} streets"
            )
        shapes: tuple[tuple[int, int], ...] = ((-1, -1),)
    else:
        shapes = _STREET_SHAPES[variant]
        if len(raw_streets) != len(shapes):
            raise InvalidHand(
                f"{where}: {len(raw_streets)} streets, {variant.value} has {len(shapes)} "
                f"({_STREET_DESCRIPTIONS[variant]})"
            )

    top: list[Card] = []
    middle: list[Card] = []
    bottom: list[Card] = []
    streets = []
    for number, (raw, (dealt_count, discarded_count)) in enumerate(
        zip(raw_streets, shapes, strict=True), start=1
    ):
        at = f"{where} street {number}"
        if not isinstance(raw, dict):
            raise InvalidHand(f"{at}: must be an object, got {_show(raw)}")
        if "dealt" not in raw:
            raise InvalidHand(f"{at}: missing field 'dealt'")
        dealt = _card_list(raw["dealt"], at, "dealt")
        placed_raw = raw.get("placed")
        if not isinstance(placed_raw, dict):
            if "placed" not in raw:
                raise InvalidHand(f"{at}: missing field 'placed'")
            raise InvalidHand(
                f"{at}: placed must be an object of rows, got {_show(placed_raw)}"
            )
        street_top = _card_list(placed_raw["top"], at, "placed top") if "top" in placed_raw else []
        street_middle = (
            _card_list(placed_raw["middle"], at, "placed middle") if "middle" in placed_raw else []
        )
        street_bottom = (
            _card_list(placed_raw["bottom"], at, "placed bottom") if "bottom" in placed_raw else []
        )
        discarded = _card_list(raw["discarded"], at, "discarded") if "discarded" in raw else []

        placed_all = street_top + street_middle + street_bottom
        if sorted(placed_all + discarded) != sorted(dealt):
            raise InvalidHand(
                f"{at}: placed + discarded {_cards_text(placed_all + discarded)} differ from "
                f"dealt {_cards_text(dealt)}"
            )
        if dealt_count < 0:
            _check_fantasyland_street(dealt, placed_all, discarded, at, where, variant)
        else:
            if len(dealt) != dealt_count:
                raise InvalidHand(
                    f"{at}: dealt {_count(len(dealt))}, {variant.value} deals {dealt_count} "
                    f"on street {number}"
                )
            if len(discarded) != discarded_count:
                raise InvalidHand(
                    f"{at}: discarded {_count(len(discarded))}, {variant.value} discards "
                    f"{discarded_count} on street {number}"
                )

        top += street_top
        middle += street_middle
        bottom += street_bottom
        if len(top) > _TOP_SIZE or len(middle) > _MIDDLE_SIZE or len(bottom) > _BOTTOM_SIZE:
            for row, cards in ((Row.TOP, top), (Row.MIDDLE, middle), (Row.BOTTOM, bottom)):
                if len(cards) > ROW_SIZES[row]:
                    raise InvalidHand(
                        f"{at}: {row.value} overflows ({len(cards)} cards, "
                        f"a row holds {ROW_SIZES[row]})"
                    )
        all_cards += dealt
        streets.append(
            Street(
                dealt=tuple(dealt),
                placed=tuple(
                    [_TOP_PAIRS[card] for card in street_top]
                    + [_MIDDLE_PAIRS[card] for card in street_middle]
                    + [_BOTTOM_PAIRS[card] for card in street_bottom]
                ),
                discarded=tuple(discarded),
            )
        )

    _check_row_sizes(top, middle, bottom, where)
    return tuple(streets), FinalBoard(tuple(top), tuple(middle), tuple(bottom))


def _check_fantasyland_street(
    dealt: list[Card],
    placed: list[Card],
    discarded: list[Card],
    at: str,
    where: str,
    variant: Variant,
) -> None:
    """A Fantasyland street: an allowed number of cards dealt, 13 placed, the rest discarded."""
    if len(dealt) not in _FANTASYLAND_DEALT[variant]:
        raise InvalidHand(
            f"{where}: Fantasyland hand must be one street of "
            f"{_FANTASYLAND_DESCRIPTIONS[variant]} cards in {variant.value}, "
            f"got {len(dealt)} cards"
        )
    if len(placed) != _BOARD_SIZE:
        raise InvalidHand(
            f"{at}: Fantasyland places {_BOARD_SIZE} cards and discards the rest, "
            f"got {len(placed)} placed and {len(discarded)} discarded"
        )


def _check_row_sizes(top: list[Card], middle: list[Card], bottom: list[Card], where: str) -> None:
    """Rows must end at exactly 3/5/5."""
    if len(top) != _TOP_SIZE or len(middle) != _MIDDLE_SIZE or len(bottom) != _BOTTOM_SIZE:
        for row, cards in ((Row.TOP, top), (Row.MIDDLE, middle), (Row.BOTTOM, bottom)):
            if len(cards) != ROW_SIZES[row]:
                raise InvalidHand(
                    f"{where}: {len(cards)} cards in {row.value} "
                    f"(a row holds {ROW_SIZES[row]})"
                )


def _parse_board(raw_board: Any, where: str) -> FinalBoard:
    """A final board given directly: rows top/middle/bottom of 3/5/5 cards."""
    if not isinstance(raw_board, dict):
        raise InvalidHand(f"{where}: board must be an object of rows, got {_show(raw_board)}")
    rows = []
    for row in ROWS:
        if row.value not in raw_board:
            raise InvalidHand(f"{where} board: missing field '{row.value}'")
        rows.append(_card_list(raw_board[row.value], f"{where} board", row.value))
    top, middle, bottom = rows
    _check_row_sizes(top, middle, bottom, where)
    return FinalBoard(tuple(top), tuple(middle), tuple(bottom))


def _check_board_agrees(given: FinalBoard, built: FinalBoard, where: str) -> None:
    """When a player has both streets and a board, each row must hold the same cards."""
    for row in ROWS:
        given_row = given.row(row)
        built_row = built.row(row)
        if sorted(given_row) != sorted(built_row):
            raise InvalidHand(
                f"{where}: board {row.value} {_cards_text(given_row)} differs from the cards "
                f"placed in {row.value} on the streets {_cards_text(built_row)}"
            )


def _raise_duplicate_card(players: list[PlayerRecord]) -> None:
    """Find the first card seen twice in the hand and raise naming both places."""
    seen: dict[Card, str] = {}
    for player in players:
        if player.streets is not None:
            places = [
                (f"{player.name} street {number} dealt", street.dealt)
                for number, street in enumerate(player.streets, start=1)
            ]
        else:
            places = [(f"{player.name} {row.value}", player.board.row(row)) for row in ROWS]
        for place, cards in places:
            for card in cards:
                if card in seen:
                    first = seen[card]
                    text = _CARD_TEXT[card]
                    if first == place:
                        raise InvalidHand(f"card {text} appears twice in {place}")
                    raise InvalidHand(f"card {text} appears twice ({first}, {place})")
                seen[card] = place
    raise AssertionError("duplicate card expected but not found")  # pragma: no cover


# --- the fast path --------------------------------------------------------------------------
#
# Most records are valid, so parse_hand first tries this optimistic version: the same checks
# done in bulk (final row sizes instead of per-street overflow, multisets of card tokens,
# one set for duplicate cards), no messages. It returns None (or raises one of
# _FAST_PATH_SURPRISES) at the first thing it does not like, and then _parse_precise decides
# and explains. It must never accept a record _parse_precise would reject, and must build the
# same HandRecord; tests/records/test_validate.py checks both on every case.

_FAST_PATH_SURPRISES = (KeyError, TypeError, ValueError, AttributeError, IndexError)
_NO_CARDS: list[str] = []




def _parse_fast(mapping: Any) -> HandRecord | None:
    """The hand as a HandRecord when it is plainly valid, else None (see the note above)."""
    if type(mapping) is not dict:
        return None
    hand_id = mapping["hand_id"]
    if type(hand_id) is not str:
        if type(hand_id) is not int:
            return None
        hand_id = str(hand_id)
    variant = VARIANTS_BY_NAME[mapping["variant"]]
    site = mapping.get("site", "local")
    rules = mapping.get("rules", "standard")
    if (
        type(site) is not str or type(rules) is not str
        or not is_plain_text(hand_id, MAX_ID_LENGTH) or not is_plain_text(site, MAX_ID_LENGTH)
        or not is_plain_text(rules, MAX_ID_LENGTH)
    ):
        return None
    table = mapping.get("table")
    if table is not None and (type(table) is not str or not is_plain_text(table, MAX_ID_LENGTH)):
        return None
    match_id = mapping.get("match_id")
    if match_id is not None and (
        type(match_id) is not str or not is_plain_text(match_id, MAX_ID_LENGTH)
    ):
        return None
    button = mapping.get("button")
    if button is not None and (
        type(button) is not str or not is_plain_text(button, MAX_NAME_LENGTH)
    ):
        return None
    started_at = mapping.get("started_at")
    if started_at is not None:
        if type(started_at) is not str or STARTED_AT_PATTERN.fullmatch(started_at) is None:
            return None
        if not _year_in_range(datetime.fromisoformat(started_at)):
            return None

    raw_players = mapping["players"]
    if type(raw_players) is not list:
        return None
    if not variant.min_players <= len(raw_players) <= variant.max_players:
        return None
    all_cards: list[Card] = []
    players = []
    for raw_player in raw_players:
        player = _parse_player_fast(raw_player, variant, all_cards)
        if player is None:
            return None
        players.append(player)

    names = {player.name for player in players}
    if len(names) != len(players) or len({player.seat for player in players}) != len(players):
        return None
    if len(set(all_cards)) != len(all_cards):
        return None
    if button is not None and button not in names:
        return None
    return _hand_record(mapping, hand_id, site, variant, rules, players, table, started_at, button,
                        match_id)


def _parse_player_fast(raw: Any, variant: Variant, all_cards: list[Card]) -> PlayerRecord | None:
    """One plainly valid player, or None."""
    if type(raw) is not dict:
        return None
    name = raw["name"]
    seat = raw["seat"]
    if (
        type(name) is not str or not is_plain_text(name, MAX_NAME_LENGTH)
        or type(seat) is not int or not 0 <= seat <= MAX_SEAT
    ):
        return None
    fantasyland = raw.get("fantasyland", False)
    if fantasyland is not False and fantasyland is not True:
        return None
    reported_points = raw.get("reported_points")
    if reported_points is not None and not points_in_range(reported_points):
        return None

    raw_streets = raw.get("streets")
    raw_board = raw.get("board")
    card_of = _CARD_CACHE.__getitem__
    if raw_streets is None:
        if type(raw_board) is not dict:
            return None
        top = raw_board["top"]
        middle = raw_board["middle"]
        bottom = raw_board["bottom"]
        streets = None
    else:
        if type(raw_streets) is not list:
            return None
        if fantasyland:
            if len(raw_streets) != 1:
                return None
            shapes: tuple[tuple[int, int], ...] = ((-1, -1),)
        else:
            shapes = _STREET_SHAPES[variant]
            if len(raw_streets) != len(shapes):
                return None
        top_pair = _TOP_PAIR_CACHE.__getitem__
        middle_pair = _MIDDLE_PAIR_CACHE.__getitem__
        bottom_pair = _BOTTOM_PAIR_CACHE.__getitem__
        new_street = Street
        no_cards = _NO_CARDS
        top = []
        middle = []
        bottom = []
        street_list = []
        for raw_street, (dealt_count, discarded_count) in zip(raw_streets, shapes, strict=True):
            dealt = raw_street["dealt"]
            placed = raw_street["placed"]
            if type(dealt) is not list or type(placed) is not dict:
                return None
            discarded = raw_street.get("discarded", no_cards)
            street_top = placed.get("top", no_cards)
            street_middle = placed.get("middle", no_cards)
            street_bottom = placed.get("bottom", no_cards)
            if dealt_count < 0:
                if len(dealt) not in _FANTASYLAND_DEALT[variant]:
                    return None
            elif len(dealt) != dealt_count or len(discarded) != discarded_count:
                return None
            # Concatenating and sorting also proves the four are lists (anything else raises
            # TypeError or AttributeError).
            rest = street_top + street_middle + street_bottom + discarded
            rest.sort()
            if rest != sorted(dealt):
                return None
            pairs: list[tuple[Card, Row]] = []
            if street_top:
                pairs += map(top_pair, street_top)
                top += street_top
            if street_middle:
                pairs += map(middle_pair, street_middle)
                middle += street_middle
            if street_bottom:
                pairs += map(bottom_pair, street_bottom)
                bottom += street_bottom
            dealt_cards = tuple(map(card_of, dealt))
            all_cards += dealt_cards
            street_list.append(
                new_street(
                    dealt=dealt_cards,
                    placed=tuple(pairs),
                    discarded=(
                        (card_of(discarded[0]),)
                        if len(discarded) == 1
                        else tuple(map(card_of, discarded))
                    ),
                )
            )
        streets = tuple(street_list)
        if raw_board is not None:
            # A board given as well must hold the same cards per row (same spellings here).
            if type(raw_board) is not dict:
                return None
            given_top = raw_board["top"]
            given_middle = raw_board["middle"]
            given_bottom = raw_board["bottom"]
            if (
                type(given_top) is not list
                or type(given_middle) is not list
                or type(given_bottom) is not list
                or sorted(given_top) != sorted(top)
                or sorted(given_middle) != sorted(middle)
                or sorted(given_bottom) != sorted(bottom)
            ):
                return None

    if (
        type(top) is not list
        or type(middle) is not list
        or type(bottom) is not list
        or len(top) != _TOP_SIZE
        or len(middle) != _MIDDLE_SIZE
        or len(bottom) != _BOTTOM_SIZE
    ):
        return None
    board = FinalBoard(
        top=tuple(map(card_of, top)),
        middle=tuple(map(card_of, middle)),
        bottom=tuple(map(card_of, bottom)),
    )
    if streets is None:
        all_cards += board.top
        all_cards += board.middle
        all_cards += board.bottom

    extra = {key: value for key, value in raw.items() if key not in _PLAYER_FIELDS}  # input order
    if any(type(value) in (dict, list) and _nested_deeper_than(value, MAX_EXTRA_DEPTH)
           for value in extra.values()):
        return None  # the checking path names the field
    return PlayerRecord(
        name=name,
        seat=seat,
        fantasyland=fantasyland,
        board=board,
        streets=streets,
        reported_points=reported_points,
        extra=extra,
    )


# --- hand_to_mapping ------------------------------------------------------------------------


def hand_to_mapping(hand: HandRecord, include_board: bool = False) -> dict[str, Any]:
    """The canonical JSON-like mapping of a record: cards as canonical text, extras merged back.

    A player's ``board`` is written when the record has no streets for that player, or always
    when ``include_board`` is true. ``parse_hand(hand_to_mapping(hand)) == hand`` for every
    record :func:`parse_hand` returns.
    """
    mapping: dict[str, Any] = {"hand_id": hand.hand_id, "site": hand.site}
    if hand.table is not None:
        mapping["table"] = hand.table
    if hand.match_id is not None:
        mapping["match_id"] = hand.match_id
    if hand.started_at is not None:
        mapping["started_at"] = hand.started_at
    mapping["variant"] = hand.variant.value
    mapping["rules"] = hand.rules
    if hand.button is not None:
        mapping["button"] = hand.button
    mapping["players"] = [_player_to_mapping(player, include_board) for player in hand.players]
    for key, value in hand.extra.items():
        mapping.setdefault(key, value)
    return mapping


def _player_to_mapping(player: PlayerRecord, include_board: bool) -> dict[str, Any]:
    """One player as a canonical mapping."""
    text = _CARD_TEXT
    mapping: dict[str, Any] = {
        "name": player.name,
        "seat": player.seat,
        "fantasyland": player.fantasyland,
    }
    if player.streets is not None:
        streets = []
        for street in player.streets:
            placed: dict[str, list[str]] = {}
            for card, row in street.placed:
                placed.setdefault(row.value, []).append(text[card])
            streets.append(
                {
                    "dealt": [text[card] for card in street.dealt],
                    "placed": {row.value: placed[row.value] for row in ROWS if row.value in placed},
                    "discarded": [text[card] for card in street.discarded],
                }
            )
        mapping["streets"] = streets
    if player.streets is None or include_board:
        mapping["board"] = player.board.as_text()
    if player.reported_points is not None:
        mapping["reported_points"] = player.reported_points
    for key, value in player.extra.items():
        mapping.setdefault(key, value)
    return mapping
