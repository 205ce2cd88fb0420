"""Columnar validation of canonical JSON Lines: plainly valid records straight into columns.

Ingesting a million hands is mostly validating a million ordinary records. This module takes a
batch of raw lines and, for every line that is a plainly valid canonical record, produces its
:class:`~pipeline.ingest.columns.HandColumns` without building a :class:`~pipeline.records.record.HandRecord`:

* msgspec decodes each line into typed structs, checking the JSON types as it parses (no
  coercion: a seat of ``"3"`` or ``3.0`` is not plainly valid); card lists stay raw JSON text,
  so no Python object is made per card;
* scalar checks per hand (names, seats, button, started_at, street counts) run in Python;
* the card checks run over the whole batch with numpy: every card list plainly
  ``["Ah","Kd"]`` (whitespace between cards allowed), every token a canonical card (``Ah``),
  the cards of each street dealt exactly once as placed + discarded (64-bit card masks and
  popcounts), the street shapes of the variant, rows of 3/5/5, no card twice in a hand, and a
  board given beside the streets holding the same cards;
* the content hash is built from the same bytes :func:`pipeline.ingest.columns.content_hash` hashes.

Anything this path does not accept outright (extra fields, another card spelling, a bad
record...) is handed back by position, for the per-record path (:func:`pipeline.records.validate.
parse_hand`), which accepts or rejects it with its precise reason. So the fast path may only
ever accept a record the per-record path accepts, with the same columns and hash;
tests/ingest/test_fast_canonical.py checks that on generated and mutated records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime
from itertools import chain, repeat
from operator import attrgetter, itemgetter
from typing import Annotated

import msgspec
import numpy as np

from pipeline.ingest.columns import (
    DISCARD_MARKER,
    PLACED_MARKER,
    RANK_OF_BYTE,
    STREET_MARKER,
    SUIT_OF_BYTE,
    HandColumns,
    header_bytes,
    player_head_bytes,
    player_tail_bytes,
    utc_timestamp,
)
from pipeline.records.validate import (
    MAX_ID_LENGTH,
    MAX_NAME_LENGTH,
    MAX_SEAT,
    STARTED_AT_PATTERN,
    STARTED_AT_YEARS,
    is_plain_text,
    points_in_range,
)
from pipeline.rules.game import ROW_LENGTHS, VARIANTS_BY_NAME, Variant

__all__ = ["parse_canonical_batch"]


_NO_CARDS = msgspec.Raw(b"[]")

# Card lists stay raw JSON text: they are checked and turned into card codes for the whole
# batch at once (_segment_codes), without a Python string per card.


class _Placed(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    top: msgspec.Raw = _NO_CARDS
    middle: msgspec.Raw = _NO_CARDS
    bottom: msgspec.Raw = _NO_CARDS


class _Street(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    dealt: msgspec.Raw
    placed: _Placed
    discarded: msgspec.Raw = _NO_CARDS


class _Board(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    top: msgspec.Raw
    middle: msgspec.Raw
    bottom: msgspec.Raw


class _Player(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    name: str
    seat: Annotated[int, msgspec.Meta(ge=0, le=MAX_SEAT)]  # another seat: the checking path
    fantasyland: bool = False
    streets: list[_Street] | None = None
    board: _Board | None = None
    reported_points: int | float | None = None


class _Hand(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    hand_id: str | int
    variant: str
    players: list[_Player]
    site: str = "local"
    rules: str = "standard"
    table: str | None = None
    started_at: str | None = None
    button: str | None = None
    match_id: str | None = None  # an integer match id: the checking path


_DECODER = msgspec.json.Decoder(_Hand)
_HAND_ID, _VARIANT_NAME, _PLAYERS, _SITE, _RULES, _TABLE, _BUTTON, _STARTED_AT, _MATCH_ID = (
    attrgetter(name) for name in ("hand_id", "variant", "players", "site", "rules", "table",
                                  "button", "started_at", "match_id"))
_NAME, _SEAT, _FANTASYLAND, _REPORTED, _STREETS, _BOARD = (
    attrgetter(name) for name in ("name", "seat", "fantasyland", "reported_points", "streets",
                                  "board"))
_STREET_LISTS = attrgetter("dealt", "placed.top", "placed.middle", "placed.bottom", "discarded")
"""A street's five card lists in the order the batch lays them out (read in C, per street)."""

_VARIANT_CODE: dict[Variant, int] = {variant: index for index, variant in enumerate(Variant)}
_VARIANT_CODE_BY_NAME = {name: _VARIANT_CODE[variant] for name, variant in VARIANTS_BY_NAME.items()}
_STREET_COUNTS: dict[Variant, int] = {variant: len(variant.streets) for variant in Variant}
_MOST_STREETS = max(_STREET_COUNTS.values())
_STREET_COUNT_OF_CODE = np.array([_STREET_COUNTS[variant] for variant in Variant], np.int64)
_MIN_PLAYERS = np.array([variant.min_players for variant in Variant], np.int64)
_MAX_PLAYERS = np.array([variant.max_players for variant in Variant], np.int64)
_MOST_DEALT = 64

# Expected (dealt, discarded) of street i of a normal hand, per variant code; -1 past the end.
_SHAPE_DEALT = np.full((len(Variant), _MOST_STREETS), -1, np.int64)
_SHAPE_DISCARDED = np.full((len(Variant), _MOST_STREETS), -1, np.int64)
_FANTASYLAND_DEALT = np.zeros((len(Variant), _MOST_DEALT), bool)
for _variant, _code in _VARIANT_CODE.items():
    for _index, _shape in enumerate(_variant.streets):
        _SHAPE_DEALT[_code, _index] = _shape.dealt
        _SHAPE_DISCARDED[_code, _index] = _shape.discarded
    for _size in _variant.fantasyland_deal_sizes:
        _FANTASYLAND_DEALT[_code, _size] = True


_NO_STREETS = {name: np.zeros(0, dtype) for name, dtype in (
    ("street_players", np.int64), ("street_numbers", np.int64), ("placed_counts", np.int64),
    ("discard_counts", np.int64), ("placed", np.uint8), ("discarded", np.uint8))}
"""The street columns of a batch parsed without them (``streets=False``)."""

_BOARD_SLOT_START = np.array([0, 0, 3, 8, 0], np.int64)  # by token kind: top 0, middle 3, bottom 8
_blake2b = hashlib.blake2b


_CHUNK_LINES = 48
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
"""Hands decoded and then gathered into columns at a time: their structs stay in the CPU
caches, and a batch never holds more of them."""

_JSON_SPACE = np.zeros(256, bool)
_JSON_SPACE[list(b" \t\n\r")] = True
_QUOTE, _COMMA, _OPEN, _CLOSE = (ord(character) for character in '",[]')
_PAIRS = np.arange(1 << 16)
_CODE_OF_PAIR = np.where((RANK_OF_BYTE[_PAIRS >> 8] >= 0) & (SUIT_OF_BYTE[_PAIRS & 255] >= 0),
                         RANK_OF_BYTE[_PAIRS >> 8] * 4 + SUIT_OF_BYTE[_PAIRS & 255],
                         -1).astype(np.int16)
"""Card code of the two bytes of a card text (first byte << 8 | second byte), else -1 (16 bits:
a block's card codes take a quarter of the memory, and so of the cache, of 64-bit ones)."""
_BIT_OF_CODE = np.array([1 << code for code in range(52)] + [0], np.uint64)
"""A card's bit in a 64-bit card mask, by card code; 0 for code -1 (the last entry)."""


def _joined_segments(segments: list[msgspec.Raw]) -> bytes:
    """The raw JSON texts of some card lists, each followed by a NUL byte: JSON text never
    holds one (msgspec refuses control characters, quoted or not), so the NULs mark where each
    list ends without a length taken per list in Python."""
    if not segments:
        return b""
    return b"\0".join(segments) + b"\0"


def _segment_codes(
    data: bytes, starts: np.ndarray, lengths: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Card lists as raw JSON texts (in ``data`` at ``starts``, ``lengths`` bytes each, one NUL
    byte after each) → (cards in each list, card code of each card: -1 where it is not a
    canonical card text, and whether each list is plainly ``["Ah","Kd",...]``). Whitespace
    between the cards is fine; anything else (other values, whitespace inside a card's quotes)
    makes the list not plain."""
    count = len(lengths)
    spaced = any(space in data for space in (b" ", b"\t", b"\n", b"\r"))
    if not spaced and count:
        lists = _plain_lists(data, starts, lengths)
        if lists is not None:
            return lists
    plain = lengths > 0
    if spaced:
        data, lengths = _without_spaces(data.replace(b"\0", b""), lengths, plain)
        starts = np.cumsum(lengths) - lengths
    text = np.frombuffer(data + b"\0" * 8, np.uint8)
    # A plain list of n cards is '[' + n * ('"' rank suit '"' separator) with ']' as the
    # last separator: 1 + 5n bytes; no cards is "[]".
    cards = np.where(lengths == 2, 0, (lengths - 1) // 5)
    plain &= (lengths == 2) | ((lengths >= 6) & ((lengths - 1) % 5 == 0))
    plain &= text[starts] == _OPEN
    plain &= (lengths != 2) | (text[starts + 1] == _CLOSE)
    segment_of = np.repeat(np.arange(count), cards)
    first_card = np.cumsum(cards) - cards
    card_starts = (starts[segment_of] + 1
                   + 5 * (np.arange(len(segment_of)) - first_card[segment_of]))
    separators = np.where(np.arange(len(segment_of)) == (first_card + cards - 1)[segment_of],
                          _CLOSE, _COMMA)
    shape_ok = ((text[card_starts] == _QUOTE) & (text[card_starts + 3] == _QUOTE)
                & (text[card_starts + 4] == separators))
    plain[segment_of[~shape_ok]] = False
    ranks = RANK_OF_BYTE[text[card_starts + 1]]
    suits = SUIT_OF_BYTE[text[card_starts + 2]]
    codes = np.where((ranks >= 0) & (suits >= 0), ranks * 4 + suits, -1)
    return cards, codes, plain


def _plain_lists(
    data: bytes, starts: np.ndarray, lengths: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`_segment_codes` of lists without whitespace, each sized as a plain list and
    holding its one ``[`` where it starts (the usual block), in a few passes over contiguous
    bytes: with the ``[`` and NUL bytes taken out (and the empty lists), every card is one
    5-byte record ``"Ah",`` (``]`` ending the last of a list). None when the lists are not
    all so (the general path decides)."""
    sized = (lengths == 2) | ((lengths >= 6) & ((lengths - 1) % 5 == 0))
    if not sized.all():
        return None
    text = np.frombuffer(data, np.uint8)
    opens = text == _OPEN
    if np.count_nonzero(opens) != len(lengths) or not opens[starts].all():
        return None
    # Every list's only "[" is its first byte: what is left without the "[" and NUL bytes
    # and the "]" of the empty lists is the cards' records.
    keep = ~opens & (text != 0)
    keep[starts[lengths == 2] + 1] = False
    cards = np.where(lengths == 2, 0, (lengths - 1) // 5)
    total = int(cards.sum())
    records = text[keep].reshape(total, 5)
    separators = np.full(total, _COMMA, np.uint8)
    separators[np.cumsum(cards)[cards > 0] - 1] = _CLOSE
    shaped = ((records[:, 0] == _QUOTE) & (records[:, 3] == _QUOTE)
              & (records[:, 4] == separators))
    codes = _CODE_OF_PAIR[(records[:, 1].astype(np.intp) << 8) | records[:, 2]]
    plain = np.ones(len(lengths), bool)
    if not shaped.all():
        plain[np.repeat(np.arange(len(lengths)), cards)[~shaped]] = False
    return cards, codes, plain


def _without_spaces(
    data: bytes, lengths: np.ndarray, plain: np.ndarray
) -> tuple[bytes, np.ndarray]:
    """The texts with JSON whitespace outside quotes removed; a list with whitespace inside
    quotes is marked not plain (a card token never holds any)."""
    text = np.frombuffer(data, np.uint8)
    count = len(lengths)
    segment_of = np.repeat(np.arange(count), lengths)
    spaces = _JSON_SPACE[text]
    quotes = (text == _QUOTE).astype(np.int64)
    before = np.cumsum(quotes) - quotes
    starts = np.cumsum(lengths) - lengths
    at_start = before[np.minimum(starts, max(len(text) - 1, 0))]
    inside = ((before - at_start[segment_of]) & 1).astype(bool)
    plain[segment_of[spaces & inside]] = False
    return text[~spaces].tobytes(), np.bincount(segment_of[~spaces], minlength=count)


def _started_column(
    started: list[datetime | None], utc_texts: list[str], utc_hands: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """The hands' start times as datetime64[us] (NaT when unknown), with the batch's plain UTC
    stamps parsed at once, and which hands' stamps are real dates (not February 30th)."""
    if started.count(None) == len(started):  # the usual batch (np.array of Nones is slow)
        column = np.full(len(started), np.datetime64("NaT", "us"))
    else:
        column = np.array(started, "datetime64[us]")
    ok = np.ones(len(started), bool)
    if utc_texts:
        positions = np.asarray(utc_hands, np.int64)
        try:
            column[positions] = np.array(utc_texts, "datetime64[s]")
        except ValueError:
            for position, text in zip(utc_hands, utc_texts, strict=True):
                try:
                    column[position] = np.datetime64(text, "s")
                except ValueError:
                    ok[position] = False
    return column, ok


def _exclusive_cumsum(values: np.ndarray) -> np.ndarray:
    return np.cumsum(values) - values


def _or_segments(bits: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Bitwise OR of ``bits`` over each segment [start, start + length); 0 for empty ones."""
    if not len(starts):
        return np.zeros(0, np.uint64)
    padded = np.concatenate([bits, np.zeros(1, np.uint64)])
    bounds = np.empty(2 * len(starts), np.int64)  # reduceat runs from each index to the next
    bounds[0::2] = starts
    bounds[1::2] = starts + lengths
    result = np.bitwise_or.reduceat(padded, np.minimum(bounds, len(bits)))[0::2]
    return np.where(lengths > 0, result, np.uint64(0))


def _sum_segments(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over each segment [start, start + length); 0 for empty ones."""
    totals = np.concatenate([[0], np.cumsum(values)])
    return totals[starts + lengths] - totals[starts]


def parse_canonical_batch(
    lines: Sequence[tuple[int, bytes] | tuple[int, bytes, bool]], path: str,
    identity: bool = True, streets: bool = True,
) -> tuple[HandColumns, np.ndarray, list[int]]:
    """Validate the plainly valid canonical records of a batch of lines as columns.

    ``lines`` holds (line number, line bytes without the line ending), or the
    :data:`~pipeline.formats.source.RawLine` tuples a reader gives (the rest is ignored). Returns the columns of
    the accepted records (in line order), the position in ``lines`` of each accepted record,
    and the positions of every other line: those go through the per-record path.
    ``identity=False`` leaves out the hand keys and content hashes (``ofc score`` does not store
    hands): keys are 0 and digests empty. ``streets=False`` leaves out the street columns
    (placements and discards, which only storing a hand needs): the columns hold the hands'
    final boards, as for hands given as boards.

    Every line msgspec decodes is gathered into columns (in C: ``attrgetter``, ``map``) without
    a check per hand in Python; the checks then run over the whole batch (:func:`_plain_hands`,
    once per distinct name, site and rules; numpy for seats, names within a hand, street
    counts) and a hand that fails any of them goes to the per-record path.
    """
    columns = _Gathered()
    rest, decoded = _decode_chunks(lines, _DECODER.decode, columns)
    return _finish(path, rest, decoded, columns, identity, streets)


def _decode_chunks(
    lines: Sequence[tuple[int, bytes] | tuple[int, bytes, bool]],
    decode: Callable[[bytes], object], columns: _Gathered,
) -> tuple[list[int], list[int]]:
    """Decode the lines a chunk at a time into ``columns``: returns the positions of the lines
    that do not decode (the per-record path says why) and of those that do."""
    rest: list[int] = []
    decoded: list[int] = []
    numbers = columns.numbers
    texts = list(map(_SECOND, lines))
    line_numbers = list(map(_FIRST, lines))
    for start in range(0, len(texts), _CHUNK_LINES):
        stop = min(start + _CHUNK_LINES, len(texts))
        try:  # the usual chunk: every line decodes (one call in C for the chunk)
            chunk = list(map(decode, texts[start:stop]))
        except (msgspec.MsgspecError, RecursionError):  # RecursionError: nested too deeply
            chunk = []
            for position in range(start, stop):
                try:
                    chunk.append(decode(texts[position]))
                except (msgspec.MsgspecError, RecursionError):  # the per-record path says why
                    rest.append(position)
                    continue
                decoded.append(position)
                numbers.append(line_numbers[position])
        else:
            decoded.extend(range(start, stop))
            numbers.extend(line_numbers[start:stop])
        columns.gather(chunk)
    return rest, decoded


class _Gathered:
    """The columns of a batch's decoded hands, a chunk at a time."""

    def __init__(self) -> None:
        # per hand
        self.numbers: list[int] = []
        self.hand_ids: list[str | int] = []
        self.variant_names: list[str] = []
        self.sites: list[str] = []
        self.rules: list[str] = []
        self.tables: list[str | None] = []
        self.match_ids: list[str | None] = []
        self.buttons: list[str | None] = []
        self.started_texts: list[str | None] = []
        self.player_counts: list[int] = []
        # per player
        self.names: list[str] = []
        self.seats: list[int] = []
        self.fantasyland: list[bool] = []
        self.reported: list[float | None] = []
        self.street_counts: list[int] = []  # -1: no streets given
        self.given_players: list[int] = []
        self.player_total = 0
        # per chunk of hands: the raw JSON of every street's five card lists, of every board's rows
        self.segment_parts: list[bytes] = []
        self.given_parts: list[bytes] = []

    def gather(self, chunk: list[_Hand]) -> None:
        """The columns of the chunk's hands, read in C (attrgetter, map), then the card lists'
        raw texts joined while their structs are still in the CPU caches."""
        if not chunk:
            return
        hand_players = list(map(_PLAYERS, chunk))
        self.hand_ids.extend(map(_HAND_ID, chunk))
        self.variant_names.extend(map(_VARIANT_NAME, chunk))
        self.sites.extend(map(_SITE, chunk))
        self.rules.extend(map(_RULES, chunk))
        self.tables.extend(map(_TABLE, chunk))
        self.match_ids.extend(map(_MATCH_ID, chunk))
        self.buttons.extend(map(_BUTTON, chunk))
        self.started_texts.extend(map(_STARTED_AT, chunk))
        self.player_counts.extend(map(len, hand_players))
        players = list(chain.from_iterable(hand_players))
        self.names.extend(map(_NAME, players))
        self.seats.extend(map(_SEAT, players))
        self.fantasyland.extend(map(_FANTASYLAND, players))
        self.reported.extend(map(_REPORTED, players))
        self._gather_streets(players)
        first = self.player_total
        given_segments: list[msgspec.Raw] = []
        boards = list(map(_BOARD, players))
        if boards.count(None) != len(boards):
            for index, board in enumerate(boards):
                if board is not None:
                    self.given_players.append(first + index)
                    given_segments += (board.top, board.middle, board.bottom)
        self.player_total += len(players)
        self.given_parts.append(_joined_segments(given_segments))
        chunk.clear()

    def _gather_streets(self, players: list[_Player]) -> None:
        """The players' street counts and the raw texts of their streets' card lists, joined
        while their structs are still in the CPU caches."""
        self.segment_parts.append(_joined_segments(list(chain.from_iterable(
            map(_STREET_LISTS, chain.from_iterable(self._counted_streets(players)))))))

    def _counted_streets(self, players: list) -> list[list]:
        """The players' street counts (-1: no streets given) added; their street lists
        returned (those given)."""
        player_streets = list(map(_STREETS, players))
        if None in player_streets:
            self.street_counts.extend([-1 if streets is None else len(streets)
                                       for streets in player_streets])
            return [streets for streets in player_streets if streets is not None]
        self.street_counts.extend(map(len, player_streets))  # the usual chunk: all given
        return player_streets


def _plain_hands(
    gathered: _Gathered, player_hand: np.ndarray
) -> tuple[np.ndarray, list[str], list[Variant | None], list[datetime | None], list[str],
           list[int], np.ndarray]:
    """The hand-level checks of a batch: which hands are plain (known variant and player
    count; plain ids, names, button; a usable ``started_at``; seats 0..MAX_SEAT, no name or
    seat twice, the button one of the names; reported points in range; streets or a board,
    as many streets as the variant deals), with the hand ids as text, the variants, the start
    times not in the usual UTC form, the usual UTC stamps to parse at once (text, hand), and
    which players hold the button."""
    hand_count = len(gathered.numbers)
    hand_ids = list(map(str, gathered.hand_ids))  # a str stays itself, an int becomes text
    variants = list(map(VARIANTS_BY_NAME.get, gathered.variant_names))
    ok = _plain_texts(hand_ids, MAX_ID_LENGTH)
    # Sites, tables, rules and names repeat from hand to hand: each is checked once a batch.
    for texts, limit in ((gathered.sites, MAX_ID_LENGTH), (gathered.rules, MAX_ID_LENGTH),
                         (gathered.tables, MAX_ID_LENGTH), (gathered.match_ids, MAX_ID_LENGTH),
                         (gathered.buttons, MAX_NAME_LENGTH)):
        bad = {text for text in set(texts) if text is not None and not is_plain_text(text, limit)}
        if bad:
            ok &= np.fromiter((text not in bad for text in texts), bool, hand_count)
    codes = np.fromiter(map(_VARIANT_CODE_BY_NAME.get, gathered.variant_names, repeat(-1)),
                        np.int64, hand_count)
    counts = np.asarray(gathered.player_counts, np.int64)
    ok &= (codes >= 0) & (counts >= _MIN_PLAYERS[codes]) & (counts <= _MAX_PLAYERS[codes])

    started: list[datetime | None] = [None] * hand_count
    utc_texts: list[str] = []  # "YYYY-MM-DDTHH:MM:SS" of hands stamped "...Z", parsed later
    utc_hands: list[int] = []
    first_year, last_year = (str(year) for year in STARTED_AT_YEARS)
    match_started = STARTED_AT_PATTERN.fullmatch
    texts = gathered.started_texts
    if _usual_utc_stamps(texts):  # every hand stamped "YYYY-MM-DDTHH:MM:SSZ" within the years
        utc_texts = [text[:19] for text in texts]
        utc_hands = list(range(hand_count))
        texts = [None] * hand_count
    for hand, text in enumerate(texts):
        if text is None:
            continue
        if match_started(text) is None:
            ok[hand] = False
        elif len(text) == 20 and text[19] == "Z" and text[10] == "T" and (
            first_year < text[:4] < last_year
        ):
            utc_texts.append(text[:19])  # the usual UTC form: parsed for the whole batch at once
            utc_hands.append(hand)
        else:
            try:
                datetime.fromisoformat(text)
                moment = utc_timestamp(text)
            except (ValueError, OverflowError):
                ok[hand] = False
                continue
            if not first_year < str(moment.year).zfill(4) < last_year:
                ok[hand] = False  # near or past the range: the checking path decides
                continue
            started[hand] = moment

    # players: names (each distinct one checked once), seats, points, streets
    names = gathered.names
    name_index = {name: index for index, name in enumerate(dict.fromkeys(names))}
    name_ids = np.fromiter(map(name_index.__getitem__, names), np.int64, len(names))
    bad_names = [index for name, index in name_index.items()
                 if not is_plain_text(name, MAX_NAME_LENGTH)]
    player_bad = np.isin(name_ids, bad_names) if bad_names else np.zeros(len(names), bool)
    seats = np.asarray(gathered.seats, np.int64)  # 0..MAX_SEAT: msgspec checked the range
    if gathered.reported.count(None) != len(gathered.reported):
        player_bad |= np.fromiter((points is not None and not points_in_range(points)
                                   for points in gathered.reported), bool, len(names))
    street_counts = np.asarray(gathered.street_counts, np.int64)
    has_board = np.zeros(len(names), bool)
    has_board[gathered.given_players] = True
    expected_streets = np.where(np.asarray(gathered.fantasyland, bool), 1,
                                _STREET_COUNT_OF_CODE[np.maximum(codes, 0)][player_hand])
    player_bad |= np.where(street_counts < 0, ~has_board, street_counts != expected_streets)
    ok &= np.bincount(player_hand[player_bad], minlength=hand_count) == 0
    ok &= ~_repeated_within(player_hand, name_ids, len(name_index), hand_count)
    ok &= ~_repeated_within(player_hand, seats, MAX_SEAT + 1, hand_count)
    button_ids = np.fromiter((-2 if button is None else name_index.get(button, -1)
                              for button in gathered.buttons), np.int64, hand_count)
    is_button = name_ids == button_ids[player_hand]
    ok &= (button_ids == -2) | (np.bincount(player_hand[is_button], minlength=hand_count) > 0)
    return ok, hand_ids, variants, started, utc_texts, utc_hands, is_button


def _plain_texts(texts: list[str], limit: int) -> np.ndarray:
    """:func:`~pipeline.records.validate.is_plain_text` of every text (ids differ from hand to
    hand): for a batch of printable ASCII texts, checked together (lengths and surrounding
    spaces one text at a time, in C)."""
    joined = "".join(texts)
    if not (joined.isascii() and joined.isprintable()):
        return np.fromiter(map(is_plain_text, texts, repeat(limit)), bool, len(texts))
    lengths = np.fromiter(map(len, texts), np.int64, len(texts))
    ok = (lengths > 0) & (lengths <= limit)
    spaced = np.fromiter(map(str.startswith, texts, repeat(" ")), bool, len(texts))
    spaced |= np.fromiter(map(str.endswith, texts, repeat(" ")), bool, len(texts))
    return ok & ~spaced


_STAMP_DIGITS = np.array([0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18])
_STAMP_MARKS = np.frombuffer(b"--T::Z", np.uint8)
_STAMP_MARK_AT = np.array([4, 7, 10, 13, 16, 19])


def _usual_utc_stamps(texts: list[str | None]) -> bool:
    """Whether every text is a ``started_at`` of the usual UTC form ``YYYY-MM-DDTHH:MM:SSZ``
    with a year inside :data:`STARTED_AT_YEARS` (exclusive), checked for the batch at once
    (when not, each text is checked alone)."""
    if not texts or None in texts or set(map(len, texts)) != {20}:
        return False
    joined = "".join(texts)  # type: ignore[arg-type]
    if not joined.isascii():
        return False
    stamps = np.frombuffer(joined.encode("ascii"), np.uint8).reshape(len(texts), 20)
    digits = stamps[:, _STAMP_DIGITS]
    if not ((digits >= ord("0")) & (digits <= ord("9"))).all():
        return False
    if not (stamps[:, _STAMP_MARK_AT] == _STAMP_MARKS).all():
        return False
    years = (digits[:, :4].astype(np.int64) - ord("0")) @ np.array([1000, 100, 10, 1])
    first, last = STARTED_AT_YEARS
    return bool(((years > first) & (years < last)).all())


def _repeated_within(
    player_hand: np.ndarray, values: np.ndarray, span: int, hand_count: int
) -> np.ndarray:
    """Per hand: whether two of its players have the same value (0 <= value < span)."""
    keys = np.sort(player_hand * span + values)
    repeated = np.zeros(hand_count, bool)
    same = keys[1:] == keys[:-1]
    repeated[keys[1:][same] // span] = True
    return repeated


def _settlement_positions(
    player_hand: np.ndarray, first_player: np.ndarray, player_counts: np.ndarray,
    seats: np.ndarray, is_button: np.ndarray,
) -> np.ndarray:
    """Each player's place in the settlement order: by seat, starting left of the button (the
    lowest seat without one)."""
    order = np.lexsort((seats, player_hand))
    rank = np.empty(len(seats), np.int64)
    rank[order] = np.arange(len(seats)) - first_player[player_hand[order]]
    start = np.zeros(len(player_counts), np.int64)
    start[player_hand[is_button]] = rank[is_button] + 1
    counts = np.maximum(player_counts, 1)[player_hand]
    return (rank - start[player_hand]) % counts


def _joined(parts: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The card lists of every chunk as (cards per list, card codes, list is plain)."""
    data = b"".join(parts)
    ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 0)
    starts = np.zeros(len(ends), np.int64)
    starts[1:] = ends[:-1] + 1
    return _segment_codes(data, starts, ends - starts)


def _finish(
    path: str, rest: list[int], decoded: list[int], gathered: _Gathered, identity: bool = True,
    streets: bool = True,
    segments: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[HandColumns, np.ndarray, list[int]]:
    """The batch-wide checks, the hashes and the columns of the hands that pass.
    ``segments``: the streets' card lists already read (cards per list, codes, plain per list;
    :func:`pipeline.ingest.fast_streets.street_lists`), else read from ``gathered``."""
    hand_count = len(decoded)
    player_count_list = gathered.player_counts
    player_counts = np.asarray(player_count_list, np.int64)
    player_hand = np.repeat(np.arange(hand_count), player_counts)
    hands_plain, hand_ids, variants, started, utc_texts, utc_hands, is_button = _plain_hands(
        gathered, player_hand)
    started_at, time_ok = _started_column(started, utc_texts, utc_hands)
    names, seat_list = gathered.names, gathered.seats
    fantasyland_list, reported = gathered.fantasyland, gathered.reported
    sites, tables, rules = gathered.sites, gathered.tables, gathered.rules
    buttons, started_texts, numbers = gathered.buttons, gathered.started_texts, gathered.numbers
    player_total = len(names)
    fantasyland = np.asarray(fantasyland_list, bool)
    variant_codes = np.fromiter((0 if variant is None else _VARIANT_CODE[variant]
                                 for variant in variants), np.int64, hand_count)
    street_counts = np.maximum(np.asarray(gathered.street_counts, np.int64), 0)
    street_total = int(street_counts.sum())
    if segments is None:
        segments = _joined(gathered.segment_parts)
    given_segments = _joined(gathered.given_parts)
    given_player_list = gathered.given_players
    first_player = _exclusive_cumsum(player_counts)
    seats = np.asarray(seat_list, np.int64)
    positions = _settlement_positions(player_hand, first_player, player_counts, seats, is_button)
    player_bad = np.zeros(player_total, bool)

    # --- streets: tokens laid out per street as dealt, top, middle, bottom, discarded
    lengths, codes, plain = segments
    lengths = lengths.reshape(street_total, 5)
    plain_streets = plain.reshape(street_total, 5).all(axis=1)
    kinds = np.repeat(np.tile(np.arange(5, dtype=np.int8), street_total), lengths.reshape(-1))
    street_sizes = lengths.sum(axis=1)
    street_starts = _exclusive_cumsum(street_sizes)
    street_player = np.repeat(np.arange(player_total), street_counts)
    first_street = _exclusive_cumsum(street_counts)
    street_number = np.arange(street_total) - np.repeat(first_street, street_counts) + 1
    dealt, top, middle, bottom, discarded = (lengths[:, column] for column in range(5))
    placed_counts = top + middle + bottom
    bits = _BIT_OF_CODE[codes]
    dealt_masks = _or_segments(bits, street_starts, dealt)
    rest_masks = _or_segments(bits, street_starts + dealt, placed_counts + discarded)
    bad_codes = codes < 0
    bad_tokens = np.zeros(street_total, bool)
    if bad_codes.any():
        bad_tokens[np.repeat(np.arange(street_total), street_sizes)[bad_codes]] = True
    street_variant = variant_codes[player_hand[street_player]]
    street_fantasyland = fantasyland[street_player]
    index = np.minimum(street_number - 1, _MOST_STREETS - 1)
    shape_ok = np.where(
        street_fantasyland,
        _FANTASYLAND_DEALT[street_variant, np.minimum(dealt, _MOST_DEALT - 1)],
        (_SHAPE_DEALT[street_variant, index] == dealt)
        & (_SHAPE_DISCARDED[street_variant, index] == discarded),
    )
    street_ok = (
        plain_streets & shape_ok & ~bad_tokens & (dealt > 0) & (placed_counts + discarded == dealt)
        & (np.bitwise_count(dealt_masks) == dealt) & (np.bitwise_count(rest_masks) == dealt)
        & (dealt_masks == rest_masks)
    )
    player_bad[street_player[~street_ok]] = True

    # --- rows of players with streets: 3/5/5, and the board codes in placement order
    with_streets = street_counts > 0
    row_counts = np.zeros((player_total, 3), np.int64)
    for column, counts in enumerate((top, middle, bottom)):
        row_counts[with_streets, column] = _sum_segments(
            counts, first_street[with_streets], street_counts[with_streets])
    rows_ok = (row_counts == ROW_LENGTHS).all(axis=1)
    player_bad |= with_streets & ~rows_ok
    # Each placed card's slot on its player's board: the row's first slot, plus the cards of
    # that row placed in the player's earlier streets, plus its place in the street's list.
    # Per (street, row) that is one offset from the card's position among the tokens.
    placed_tokens = (kinds >= 1) & (kinds <= 3)
    placed_positions = np.flatnonzero(placed_tokens)
    placed_lengths = lengths[:, 1:4]
    row_starts = (street_starts[:, None] + np.cumsum(lengths, axis=1) - lengths)[:, 1:4]
    placed_before = np.cumsum(placed_lengths, axis=0) - placed_lengths
    placed_before -= placed_before[first_street[street_player]]
    offsets = _BOARD_SLOT_START[1:4] + placed_before - row_starts
    slots = placed_positions + np.repeat(offsets.reshape(-1), placed_lengths.reshape(-1))
    owners = np.repeat(street_player, placed_counts)
    slots = np.where(rows_ok[owners] & (slots >= 0) & (slots < 13), slots, 13)
    boards = np.zeros((player_total, 14), np.int64)
    boards.reshape(-1)[owners * 14 + slots] = np.maximum(codes[placed_tokens], 0)
    board_bits = _BIT_OF_CODE[boards[:, :13]]
    built_row_masks = np.stack([
        np.bitwise_or.reduce(board_bits[:, 0:3], axis=1),
        np.bitwise_or.reduce(board_bits[:, 3:8], axis=1),
        np.bitwise_or.reduce(board_bits[:, 8:13], axis=1),
    ], axis=1)

    # --- given boards: 3/5/5 canonical cards; the board of a player without streets, else
    # the same cards per row as the streets placed
    given_players = np.asarray(given_player_list, np.int64)
    given_lengths, given_codes, given_plain = given_segments
    given_lengths = given_lengths.reshape(len(given_players), 3)
    given_ok = (given_lengths == ROW_LENGTHS).all(axis=1)
    player_bad[given_players[~given_plain.reshape(-1, 3).all(axis=1)]] = True
    player_bad[given_players[~given_ok]] = True
    good_given = given_players[given_ok]
    if len(good_given):
        board_codes = given_codes[np.repeat(given_ok, given_lengths.sum(axis=1))].reshape(-1, 13)
        bad_given = (board_codes < 0).any(axis=1)
        player_bad[good_given[bad_given]] = True
        given_bits = _BIT_OF_CODE[board_codes]
        given_row_masks = np.stack([
            np.bitwise_or.reduce(given_bits[:, 0:3], axis=1),
            np.bitwise_or.reduce(given_bits[:, 3:8], axis=1),
            np.bitwise_or.reduce(given_bits[:, 8:13], axis=1),
        ], axis=1)
        only_board = ~with_streets[good_given]
        boards[good_given[only_board], :13] = np.maximum(board_codes[only_board], 0)
        disagrees = (given_row_masks != built_row_masks[good_given]).any(axis=1)
        player_bad[good_given[~only_board & disagrees]] = True
        only_board_masks = np.bitwise_or.reduce(given_bits[only_board], axis=1)
    else:
        only_board_masks = np.zeros(0, np.uint64)

    # --- no card twice in a hand: the cards each player was dealt (or holds, without streets)
    player_masks = np.zeros(player_total, np.uint64)
    player_cards = np.zeros(player_total, np.int64)
    player_masks[with_streets] = _or_segments(
        dealt_masks, first_street[with_streets], street_counts[with_streets])
    player_cards[with_streets] = _sum_segments(
        dealt, first_street[with_streets], street_counts[with_streets])
    if len(good_given):
        board_only_players = good_given[~with_streets[good_given]]
        player_masks[board_only_players] = only_board_masks
        player_cards[board_only_players] = 13
    hand_masks = _or_segments(player_masks, first_player, player_counts)
    hand_cards = _sum_segments(player_cards, first_player, player_counts)
    hand_ok = hands_plain & time_ok & (np.bitwise_count(hand_masks) == hand_cards) & (
        np.bincount(player_hand[player_bad], minlength=hand_count) == 0)
    # A player without streets and without a usable board never gets here (board required).

    # --- the content hash: per player the text part, then the card bytes (see content_hash)
    if identity or streets:
        values = np.where((kinds >= 1) & (kinds <= 3), codes * 3 + kinds - 1, codes)
    if identity:
        keys, digests = _identities(
            hand_ok, values, kinds, codes, np.repeat(np.arange(street_total), street_sizes),
            boards, with_streets, street_starts,
            first_street, street_counts, street_sizes, street_player, street_number, dealt,
            placed_counts, player_count_list, hand_ids, sites, tables, started_texts, variants,
            rules, buttons, names, seat_list, fantasyland_list, reported, player_hand,
            np.repeat(street_player, street_sizes), gathered.match_ids)
    else:
        keys, digests = [0] * hand_count, [""] * hand_count
    columns = HandColumns(
        keys=np.asarray(keys, np.int64), digests=digests, sites=sites, hand_ids=hand_ids,
        tables=tables, started=started_at, variants=variants, rules=rules, buttons=buttons,
        paths=[path] * hand_count, lines=numbers, hand_extras=[None] * hand_count,
        player_counts=player_counts,
        names=names, seats=seats,
        positions=positions, fantasyland=fantasyland,
        cards_dealt=np.where(with_streets, player_cards, -1), reported=reported,
        player_extras=[None] * player_total, boards=boards[:, :13].astype(np.uint8),
        **(dict(
            street_players=street_player, street_numbers=street_number,
            placed_counts=placed_counts, discard_counts=discarded,
            placed=values[placed_tokens].astype(np.uint8),
            discarded=np.maximum(codes[kinds == 4], 0).astype(np.uint8),
        ) if streets else _NO_STREETS),
        match_ids=gathered.match_ids,
    )
    accepted_array = np.asarray(decoded, np.int64)
    if hand_ok.all():
        return columns, accepted_array, rest
    rest = sorted(rest + accepted_array[~hand_ok].tolist())
    return columns.select(hand_ok), accepted_array[hand_ok], rest

def _identities(
    hand_ok: np.ndarray, values: np.ndarray, kinds: np.ndarray, codes: np.ndarray,
    token_street: np.ndarray, boards: np.ndarray, with_streets: np.ndarray,
    street_starts: np.ndarray, first_street: np.ndarray, street_counts: np.ndarray,
    street_sizes: np.ndarray, street_player: np.ndarray, street_number: np.ndarray,
    dealt: np.ndarray, placed_counts: np.ndarray, player_count_list: list[int],
    hand_ids: list[str], sites: list[str], tables: list[str | None],
    started_texts: list[str | None], variants: list[Variant], rules: list[str],
    buttons: list[str | None], names: list[str], seat_list: list[int],
    fantasyland_list: list[bool], reported: list[float | None], player_hand: np.ndarray,
    token_player: np.ndarray, match_ids: list[str | None],
) -> tuple[list[int], list[str]]:
    """The hand keys and content hashes of a batch (0 and "" for hands that failed): per
    player the text part, then the card bytes (see :func:`~pipeline.ingest.columns.content_hash`)."""
    from pipeline.store import hand_key

    player_total = len(names)
    hand_count = len(player_count_list)
    player_token_start = np.zeros(player_total, np.int64)
    player_tokens = np.zeros(player_total, np.int64)
    player_token_start[with_streets] = street_starts[first_street[with_streets]]
    player_tokens[with_streets] = _sum_segments(
        street_sizes, first_street[with_streets], street_counts[with_streets])
    byte_counts = 13 + player_tokens + 3 * street_counts
    byte_starts = _exclusive_cumsum(byte_counts)
    card_bytes = np.zeros(int(byte_counts.sum()), np.uint8)
    board_positions = byte_starts[:, None] + np.arange(13)
    card_bytes[board_positions] = boards[:, :13]
    street_base = (byte_starts[street_player] + 13 + street_starts
                   - player_token_start[street_player] + 3 * (street_number - 1))
    card_bytes[street_base] = STREET_MARKER
    card_bytes[street_base + 1 + dealt] = PLACED_MARKER
    card_bytes[street_base + 2 + dealt + placed_counts] = DISCARD_MARKER
    token_positions = (np.arange(len(codes)) + (street_base - street_starts + 1)[token_street]
                       + (kinds >= 1) + (kinds == 4))
    card_bytes[token_positions] = np.where(hand_ok[player_hand[token_player]],
                                           values, 0).astype(np.uint8)
    flat = card_bytes.tobytes()
    byte_ends = (byte_starts + byte_counts).tolist()
    byte_starts_list = byte_starts.tolist()

    keys: list[int] = []
    digests: list[str] = []
    ok_list = hand_ok.tolist()
    player = 0
    # A player's text part repeats from hand to hand: who sits where, and the points reported
    # (few distinct values), each made once.
    heads: dict[tuple, bytes] = {}
    tails: dict[float | None, bytes] = {}
    for hand in range(hand_count):
        count = player_count_list[hand]
        if not ok_list[hand]:
            keys.append(0)
            digests.append("")
            player += count
            continue
        variant = variants[hand]
        match_id = match_ids[hand]
        parts = [header_bytes(hand_ids[hand], sites[hand], tables[hand], started_texts[hand],
                              variant.value, rules[hand], buttons[hand],
                              None if match_id is None else {"match_id": match_id})]
        for index in range(player, player + count):
            facts = (names[index], seat_list[index], fantasyland_list[index])
            head = heads.get(facts)
            if head is None:
                head = heads[facts] = player_head_bytes(*facts)
            points = reported[index]
            tail = tails.get(points)
            if tail is None or points == 0:  # 0.0 and -0.0 are one key but two texts
                tail = tails[points] = player_tail_bytes(points, None)
            parts.append(head)
            parts.append(tail)
            parts.append(flat[byte_starts_list[index]:byte_ends[index]])
        player += count
        digests.append(_blake2b(b"".join(parts), digest_size=16).hexdigest())
        keys.append(hand_key(sites[hand], hand_ids[hand]))
    return keys, digests
