"""Columnar validation with every street kept as one raw JSON text: ``ofc score``'s parser.

:func:`~pipeline.ingest.fast_canonical.parse_canonical_batch` has msgspec build a struct per
street and per ``placed`` object and a raw text per card list (about 35 objects per pineapple
player), then reads them back out in C. Here msgspec keeps each street as one raw text
(``streets: list[msgspec.Raw]``: about half the decode), and a block's streets are read at once
(:func:`street_lists`):

1. the streets' texts are joined into one buffer, a NUL byte after each (JSON text never holds
   one);
2. a card's text starts with its rank (2-9, T, J, Q, K, A), and no key (``dealt``, ``placed``,
   ``discarded``, ``top``, ``middle``, ``bottom``) nor the JSON between them holds a digit or a
   capital letter: each such byte is taken for a card's first byte, its code read from it and
   the byte after it (-1 when they are not a canonical card, as in the other path), and both
   overwritten with ``*``;
3. what is left of a street is its **shape** — ``{"dealt":["**","**"],"placed":{"top":["**"]},
   "discarded":[]}`` — and a block holds few distinct shapes (about 70 in bench_score.py's
   hands: the cards are gone): each new shape is parsed once with :func:`json.loads` and
   checked (keys ``dealt``, ``placed`` and ``discarded`` only, each once, ``dealt`` and
   ``placed`` given; rows ``top``, ``middle``, ``bottom`` only, each once; every list only
   ``"**"``), and gives the street's five list lengths in the batch's layout (dealt, top,
   middle, bottom, discarded) and where each card of the text goes in that layout;
4. the card codes are put in that layout and the batch-wide checks of
   :mod:`~pipeline.ingest.fast_canonical` run on them unchanged (``_finish``).

Why a plainly valid shape means exactly those cards: every ``*`` of a valid shape is inside a
``"**"`` list element (keys hold none). A taken byte turns itself and the next byte into
``**``, so in a valid shape it can only be an element's first byte (as its second, the closing
quote would be gone), and each element has at most one. The count of taken bytes inside each
street must equal its shape's elements (an element that was ``"**"`` in the input has none: the
block then takes the other path), so every element is the text of a card whose two bytes gave
its code, and the input is the shape with each ``**`` put back. A street whose shape is not
plainly valid makes its hand go to the per-record path, like any hand the columnar checks
refuse. So this path accepts the hands the other path accepts, with the same columns:
tests/ingest/test_fast_streets.py compares the two on generated, special, mutated and
byte-damaged records.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import chain

import msgspec
import numpy as np

from pipeline.ingest.columns import HandColumns
from pipeline.ingest.fast_canonical import (
    _CODE_OF_PAIR,
    _decode_chunks,
    _finish,
    _Gathered,
    _Hand,
    _Player,
    parse_canonical_batch,
)

__all__ = ["parse_canonical_block", "parse_canonical_streets", "street_lists"]


class _RawPlayer(_Player, forbid_unknown_fields=True, gc=False):
    """A player of :class:`~pipeline.ingest.fast_canonical._Player`'s shape whose streets stay
    raw texts."""

    streets: list[msgspec.Raw] | None = None


class _RawHand(_Hand, forbid_unknown_fields=True, gc=False):
    """A hand of :class:`~pipeline.ingest.fast_canonical._Hand`'s shape with raw streets."""

    players: list[_RawPlayer]


_DECODER = msgspec.json.Decoder(_RawHand)


class _RawGathered(_Gathered):
    """:class:`~pipeline.ingest.fast_canonical._Gathered` with each street kept as its raw
    text (``street_texts``), to be read for the whole batch by :func:`street_lists`."""

    def __init__(self) -> None:
        super().__init__()
        self.street_texts: list[msgspec.Raw] = []

    def _gather_streets(self, players: list) -> None:
        self.street_texts.extend(chain.from_iterable(self._counted_streets(players)))


_COLON, _STAR = ord(":"), ord("*")
_FIRST_RANK_BYTE, _RANK_BYTE_SPAN = ord("0"), ord("Z") - ord("0") + 1
"""Bytes taken for a card's first byte: "0" to "Z" but ":" (every rank, and no byte of a key or
of the JSON between them; another one, in a plain street, breaks the street's shape)."""
_STREET_KEYS = frozenset({"dealt", "placed", "discarded"})
_ROW_KEYS = ("top", "middle", "bottom")
_LAYOUT = {"dealt": 0, "top": 1, "middle": 2, "bottom": 3, "discarded": 4}
"""Each card list's place among a street's five lists in the batch's layout."""
_MOST_SHAPES = 1 << 14
"""Distinct street shapes remembered between blocks (the tables start again past this)."""


class _Object(list):
    """A JSON object as its (key, value) pairs in order (:func:`json.loads`'s pairs hook)."""


def _card_list(value: object) -> bool:
    return type(value) is list and all(item == "**" for item in value)


def _shape_lists(shape: bytes) -> list[tuple[str, int]] | None:
    """A street's shape (its text with every card's two bytes as ``**``) → its card lists in
    text order as (name, cards), or None when the street is not plainly valid."""
    try:
        street = json.loads(shape, object_pairs_hook=_Object)
    except (ValueError, RecursionError):  # UnicodeDecodeError too
        return None
    if type(street) is not _Object:
        return None
    keys = [key for key, _ in street]
    if len(set(keys)) != len(keys) or not _STREET_KEYS.issuperset(keys) or not {
            "dealt", "placed"}.issubset(keys):
        return None
    lists: list[tuple[str, int]] = []
    for key, value in street:
        if key != "placed":
            if not _card_list(value):
                return None
            lists.append((key, len(value)))
            continue
        if type(value) is not _Object:
            return None
        rows = [row for row, _ in value]
        if len(set(rows)) != len(rows) or not set(rows).issubset(_ROW_KEYS):
            return None
        for row, cards in value:
            if not _card_list(cards):
                return None
            lists.append((row, len(cards)))
    return lists


class _Shapes:
    """The distinct street shapes seen, as rows of numpy tables: each one's five list lengths
    in the batch's layout, whether it is plainly valid, its card count, and for each card of
    its text the move to its place in the layout (``moves[first[shape] + k]`` for the k-th)."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}
        self.rows: list[tuple[tuple[int, ...], bool, int, list[int]]] = []
        self.tables: tuple[np.ndarray, ...] | None = None

    def learn(self, shapes: list[bytes]) -> None:
        """Add the shapes not seen before."""
        new = [shape for shape in dict.fromkeys(shapes) if shape not in self.index]
        if not new:
            return
        if len(self.index) + len(new) > _MOST_SHAPES:
            self.__init__()
        for shape in new:
            self.index[shape] = len(self.rows)
            self.rows.append(_shape_row(shape))
        self.tables = None

    def arrays(self) -> tuple[np.ndarray, ...]:
        """(lengths, plain, cards, first, moves) over every shape learnt."""
        if self.tables is None:
            lengths = np.array([row[0] for row in self.rows], np.int64).reshape(-1, 5)
            plain = np.array([row[1] for row in self.rows], bool)
            cards = np.array([row[2] for row in self.rows], np.int64)
            first = np.cumsum(cards) - cards
            moves = np.array(list(chain.from_iterable(row[3] for row in self.rows)), np.int64)
            self.tables = (lengths, plain, cards, first, moves)
        return self.tables


def _shape_row(shape: bytes) -> tuple[tuple[int, ...], bool, int, list[int]]:
    """A shape's row of :class:`_Shapes`: (lengths, plain, cards, moves). A shape that is not
    plainly valid is marked so (its hand goes to the per-record path)."""
    lists = _shape_lists(shape)
    if lists is None:
        return (0, 0, 0, 0, 0), False, 0, []
    cards = sum(count for _, count in lists)
    lengths = [0] * 5
    for name, count in lists:
        lengths[_LAYOUT[name]] = count
    starts = [sum(lengths[:place]) for place in range(5)]
    moves: list[int] = []
    position = 0  # the card's place in the text
    for name, count in lists:
        start = starts[_LAYOUT[name]]
        moves += [start + offset - (position + offset) for offset in range(count)]
        position += count
    return tuple(lengths), True, cards, moves


_SHAPES = _Shapes()


def street_lists(
    texts: Sequence[bytes | msgspec.Raw],
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The streets' raw JSON texts → (cards in each of the five lists of every street, card
    codes in the batch's layout, whether each list is plain), as
    :func:`~pipeline.ingest.fast_canonical._segment_codes` gives them for the lists joined; or
    None for the rare block the other path must read (a card list holding the text ``"**"``).
    """
    count = len(texts)
    if not count:
        return np.zeros(0, np.int64), np.zeros(0, np.int16), np.zeros(0, bool)
    joined = b"\0".join(texts)
    size = len(joined)
    source = np.frombuffer(joined, np.uint8)
    # A digit or capital letter (a rank: 2-9, T, J, Q, K, A) is in no key: in a plain street
    # each one starts a card's text. The card's two bytes become "**" in the street's shape.
    card_at = np.flatnonzero((np.subtract(source, _FIRST_RANK_BYTE, dtype=np.uint8)
                              < _RANK_BYTE_SPAN) & (source != _COLON))
    if len(card_at) and card_at[-1] + 1 >= size:  # pragma: no cover - JSON text ends so
        return None
    pairs = np.ndarray((size - 1,), ">u2", joined, 0, (1,))  # bytes i and i + 1, big-endian
    codes = _CODE_OF_PAIR[pairs[card_at]]
    masked = source.copy()
    masked[card_at] = _STAR
    masked[card_at + 1] = _STAR
    shapes = masked.tobytes().split(b"\0")
    if len(shapes) != count:  # pragma: no cover - msgspec refuses a NUL in JSON text
        return None
    ids_list = list(map(_SHAPES.index.get, shapes))
    if None in ids_list:
        _SHAPES.learn(shapes)
        ids_list = list(map(_SHAPES.index.__getitem__, shapes))
    lengths, plain, cards, first, moves = _SHAPES.arrays()
    ids = np.asarray(ids_list, np.intp)
    # The cards of each street: the rank bytes found inside its text. In a plainly valid
    # shape each "**" is one of them (a "**" of the text itself is not: the other path).
    street_ends = np.cumsum(np.fromiter(map(len, texts), np.int64, count) + 1)
    street_cards = np.searchsorted(card_at, street_ends)
    street_cards[1:] -= street_cards[:-1].copy()
    street_plain = plain[ids]
    if (street_plain & (street_cards != cards[ids])).any():
        return None
    street_lengths = lengths[ids]
    total = len(codes)
    street_start = np.cumsum(street_cards) - street_cards
    positions = np.arange(total)
    if street_plain.all():  # the usual block
        targets = positions + moves[np.repeat(first[ids] - street_start, street_cards)
                                    + positions]
    else:  # a street not plainly valid keeps its cards in text order, all as dealt
        odd = ~street_plain
        street_lengths[odd] = 0
        street_lengths[odd, 0] = street_cards[odd]
        card_plain = np.repeat(street_plain, street_cards)
        index = np.repeat(first[ids] - street_start, street_cards) + positions
        targets = positions + np.where(card_plain, moves[np.where(card_plain, index, 0)], 0)
    laid_out = np.empty_like(codes)
    laid_out[targets] = codes
    return street_lengths.reshape(-1), laid_out, np.repeat(street_plain, 5)


def parse_canonical_streets(
    lines: Sequence[tuple[int, bytes] | tuple[int, bytes, bool]], path: str,
    identity: bool = True, streets: bool = True,
) -> tuple[HandColumns, np.ndarray, list[int]] | None:
    """:func:`~pipeline.ingest.fast_canonical.parse_canonical_batch` with the streets read by
    :func:`street_lists`: the same columns, accepted and other positions; or None where
    :func:`street_lists` gives None."""
    gathered = _RawGathered()
    rest, decoded = _decode_chunks(lines, _DECODER.decode, gathered)
    segments = street_lists(gathered.street_texts)
    if segments is None:
        return None
    gathered.street_texts = []
    return _finish(path, rest, decoded, gathered, identity, streets, segments)


def parse_canonical_block(
    lines: Sequence[tuple[int, bytes] | tuple[int, bytes, bool]], path: str,
    identity: bool = True, streets: bool = True,
) -> tuple[HandColumns, np.ndarray, list[int]]:
    """:func:`parse_canonical_streets`, or where it returns None
    :func:`~pipeline.ingest.fast_canonical.parse_canonical_batch`."""
    parsed = parse_canonical_streets(lines, path, identity, streets)
    if parsed is None:
        return parse_canonical_batch(lines, path, identity, streets)
    return parsed

