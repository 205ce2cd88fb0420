"""Validated hands of one batch as columns, and their verdicts from the batch rules core.

:class:`HandColumns` holds a batch of validated hands as flat arrays: one entry per hand, per
player, per street and per card placed or discarded. Two feeders fill it: :func:`from_records`
(any :class:`~pipeline.records.record.HandRecord`, whatever format it came from) and the columnar
canonical parser (:mod:`pipeline.ingest.fast_canonical`), which never builds records at all. Both give
the same columns for the same hand. :func:`score_columns` scores a batch in one go (the verdicts
of the batch rules core); :mod:`pipeline.ingest.tables` turns columns into the Arrow tables of
schemas/database.md (``TABLE_SCHEMAS``, ``hand_tables`` and ``verdict_tables`` are still found
here too, imported on first use).

Pure: no files, no database. numpy only: ``ofc score`` scores through this module without
importing pyarrow (which brings pandas).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from pipeline.records.record import HandRecord
from pipeline.rules.batch import evaluate_boards, settle_pairs
from pipeline.rules.cards import card_text
from pipeline.rules.game import ROWS, Variant
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.values import HIGH_CLASS_LABELS, LOW_CLASS_LABELS

__all__ = [
    "CARD_TEXT",
    "RANK_OF_BYTE",
    "SUIT_OF_BYTE",
    "CLASS_LABELS",
    "HandColumns",
    "ScoredColumns",
    "VerdictFacts",
    "concat_columns",
    "content_hash",
    "disagreement_texts",
    "from_records",
    "score_columns",
    "scoring_columns",
    "utc_timestamp",
]

CARD_TEXT: tuple[str, ...] = tuple(card_text(code) for code in range(52))
RANK_OF_BYTE = np.full(256, -1, np.int64)
"""Rank index (0 = deuce … 12 = ace) of the first byte of a canonical card text, else -1."""
SUIT_OF_BYTE = np.full(256, -1, np.int64)
"""Suit index (c d h s) of the second byte of a canonical card text, else -1."""
for _code, _text in enumerate(CARD_TEXT):
    RANK_OF_BYTE[ord(_text[0])] = _code // 4
    SUIT_OF_BYTE[ord(_text[1])] = _code % 4
    if _code != RANK_OF_BYTE[ord(_text[0])] * 4 + SUIT_OF_BYTE[ord(_text[1])]:
        raise RuntimeError("card codes are not rank * 4 + suit")  # pragma: no cover

_ROW_CODE = {row: index for index, row in enumerate(ROWS)}
_PAIR_CODE: dict[tuple[int, Any], int] = {
    (card, row): card * 3 + index for card in range(52) for index, row in enumerate(ROWS)
}
"""(card, row) placement → one byte: card * 3 + row index."""

STREET_MARKER, PLACED_MARKER, DISCARD_MARKER = 0xFF, 0xFE, 0xFD
"""Bytes framing a street in a player's card bytes (no card or placement code uses them)."""

_dumps = json.dumps
_blake2b = hashlib.blake2b


def utc_timestamp(text: str | None) -> datetime | None:
    """A validated ``started_at`` text as a naive UTC datetime (None stays None)."""
    if text is None:
        return None
    moment = datetime.fromisoformat(text.replace(",", "."))
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


def json_or_none(value: dict[str, Any] | None) -> str | None:
    """Extras as JSON text, or None when there are none."""
    if not value:
        return None
    return _dumps(value, ensure_ascii=False, default=str)


def header_bytes(
    hand_id: str, site: str, table: str | None, started_at: str | None, variant: str,
    rules: str, button: str | None, extra: dict[str, Any] | None,
) -> bytes:
    """The hand-level part of the bytes :func:`content_hash` hashes."""
    return "\x1f".join((
        hand_id, site, table or "", started_at or "", variant, rules, button or "",
        _dumps(extra, sort_keys=True, ensure_ascii=False, default=str) if extra else "",
    )).encode("utf-8", "surrogatepass")


def hashed_extra(extra: dict[str, Any] | None, match_id: str | None) -> dict[str, Any] | None:
    """The hand-level extras as :func:`header_bytes` hashes them: with the ``match_id`` among
    them, as it was hashed when the canonical format did not know the field (it was kept as an
    extra then), so a hand stored before keeps its hash."""
    if match_id is None:
        return extra
    return {**(extra or {}), "match_id": match_id}


def player_bytes(
    name: str, seat: int, fantasyland: bool, reported: float | None,
    extra: dict[str, Any] | None,
) -> bytes:
    """The per-player text part of the bytes :func:`content_hash` hashes (cards follow it):
    :func:`player_head_bytes`, then :func:`player_tail_bytes`."""
    return player_head_bytes(name, seat, fantasyland) + player_tail_bytes(reported, extra)


def player_head_bytes(name: str, seat: int, fantasyland: bool) -> bytes:
    """The start of :func:`player_bytes`: who sits where (it repeats from hand to hand)."""
    return f"\x1e{len(name)}:{name}\x1f{seat}\x1f{int(fantasyland)}\x1f".encode(
        "utf-8", "surrogatepass")


def player_tail_bytes(reported: float | None, extra: dict[str, Any] | None) -> bytes:
    """The end of :func:`player_bytes`: the points reported and the extras."""
    return (
        f"{'' if reported is None else float(reported)!r}\x1f"
        f"{_dumps(extra, sort_keys=True, ensure_ascii=False, default=str) if extra else ''}"
    ).encode("utf-8", "surrogatepass")


def content_hash(hand: HandRecord) -> str:
    """A hash of everything a validated record says (formatting and card spelling aside).

    Hand fields as text (the ``match_id`` among the extras, see :func:`hashed_extra`); per player its name (length-prefixed), seat, Fantasyland flag,
    reported points and extras, then the cards as bytes: the board, and per street the cards
    dealt, the placements (card * 3 + row) and the discards, each street framed by marker bytes
    no card code uses. The columnar canonical parser builds the same bytes with numpy.
    """
    parts = [header_bytes(hand.hand_id, hand.site, hand.table, hand.started_at,
                          hand.variant.value, hand.rules, hand.button,
                          hashed_extra(hand.extra, hand.match_id))]
    pair_code = _PAIR_CODE.__getitem__
    for player in hand.players:
        parts.append(player_bytes(player.name, player.seat, player.fantasyland,
                                  player.reported_points, player.extra))
        board = player.board
        codes = [*board.top, *board.middle, *board.bottom]
        streets = player.streets
        if streets is not None:
            append = codes.append
            for street in streets:
                append(STREET_MARKER)
                codes += street.dealt
                append(PLACED_MARKER)
                codes += map(pair_code, street.placed)
                append(DISCARD_MARKER)
                codes += street.discarded
        parts.append(bytes(codes))
    return _blake2b(b"".join(parts), digest_size=16).hexdigest()


@dataclass(slots=True)
class HandColumns:
    """A batch of validated hands as columns.

    Per hand: identity, header fields (``started`` as naive UTC datetime64[us], NaT when
    unknown; ``match_ids``, None for a hand in no match) and ``player_counts``. Per player (hands in order,
    players in record order): name, seat, settlement ``position``, Fantasyland, cards dealt
    (-1 when streets are unknown), reported points, extras and the 13 ``boards`` codes (top,
    middle, bottom). Per street (players in order, streets in order): its player and number and
    how many cards it placed and discarded. ``placed`` holds placement codes (card * 3 + row
    index) and ``discarded`` card codes, street after street.
    """

    keys: np.ndarray
    digests: list[str]
    sites: list[str]
    hand_ids: list[str]
    tables: list[str | None]
    started: np.ndarray
    variants: list[Variant]
    rules: list[str]
    buttons: list[str | None]
    paths: list[str]
    lines: list[int]
    hand_extras: list[str | None]
    player_counts: np.ndarray
    names: list[str]
    seats: np.ndarray
    positions: np.ndarray
    fantasyland: np.ndarray
    cards_dealt: np.ndarray
    reported: list[float | None]
    player_extras: list[dict[str, Any] | None]
    boards: np.ndarray
    street_players: np.ndarray
    street_numbers: np.ndarray
    placed_counts: np.ndarray
    discard_counts: np.ndarray
    placed: np.ndarray
    discarded: np.ndarray
    match_ids: list[str | None]

    @property
    def hand_count(self) -> int:
        """Hands in the batch."""
        return len(self.digests)

    def select(self, keep: np.ndarray) -> HandColumns:
        """The hands where ``keep`` (one bool per hand) is true, in order."""
        keep = np.asarray(keep, bool)
        hands = np.flatnonzero(keep)
        player_keep = np.repeat(keep, self.player_counts)
        players = np.flatnonzero(player_keep)
        street_keep = player_keep[self.street_players]
        new_player_index = np.cumsum(player_keep) - 1

        def pick(values: list) -> list:
            return [values[index] for index in hands]

        def pick_players(values: list) -> list:
            return [values[index] for index in players]

        return HandColumns(
            keys=self.keys[hands], digests=pick(self.digests), sites=pick(self.sites),
            hand_ids=pick(self.hand_ids), tables=pick(self.tables), started=self.started[hands],
            variants=pick(self.variants), rules=pick(self.rules), buttons=pick(self.buttons),
            paths=pick(self.paths), lines=pick(self.lines), hand_extras=pick(self.hand_extras),
            player_counts=self.player_counts[hands],
            names=pick_players(self.names), seats=self.seats[players],
            positions=self.positions[players], fantasyland=self.fantasyland[players],
            cards_dealt=self.cards_dealt[players], reported=pick_players(self.reported),
            player_extras=pick_players(self.player_extras), boards=self.boards[players],
            street_players=new_player_index[self.street_players[street_keep]],
            street_numbers=self.street_numbers[street_keep],
            placed_counts=self.placed_counts[street_keep],
            discard_counts=self.discard_counts[street_keep],
            placed=self.placed[np.repeat(street_keep, self.placed_counts)],
            discarded=self.discarded[np.repeat(street_keep, self.discard_counts)],
            match_ids=pick(self.match_ids),
        )


def empty_columns() -> HandColumns:
    """A batch with no hands."""
    return concat_columns([])


def concat_columns(parts: Sequence[HandColumns]) -> HandColumns:
    """The hands of several batches, in order, as one."""
    parts = list(parts)
    player_offsets = np.cumsum([0] + [len(part.names) for part in parts])

    def lists(name: str) -> list:
        return [value for part in parts for value in getattr(part, name)]

    def arrays(name: str, dtype: Any, shape: tuple[int, ...] = ()) -> np.ndarray:
        if not parts:
            return np.zeros((0, *shape), dtype)
        return np.concatenate([np.asarray(getattr(part, name), dtype) for part in parts])

    street_players = (
        np.concatenate([part.street_players + offset
                        for part, offset in zip(parts, player_offsets, strict=False)])
        if parts else np.zeros(0, np.int64)
    )
    return HandColumns(
        keys=arrays("keys", np.int64), digests=lists("digests"), sites=lists("sites"),
        hand_ids=lists("hand_ids"), tables=lists("tables"),
        started=arrays("started", "datetime64[us]"),
        variants=lists("variants"), rules=lists("rules"), buttons=lists("buttons"),
        paths=lists("paths"), lines=lists("lines"), hand_extras=lists("hand_extras"),
        player_counts=arrays("player_counts", np.int64),
        names=lists("names"),
        seats=arrays("seats", np.int64), positions=arrays("positions", np.int64),
        fantasyland=arrays("fantasyland", bool), cards_dealt=arrays("cards_dealt", np.int64),
        reported=lists("reported"), player_extras=lists("player_extras"),
        boards=arrays("boards", np.uint8, (13,)), street_players=street_players.astype(np.int64),
        street_numbers=arrays("street_numbers", np.int64),
        placed_counts=arrays("placed_counts", np.int64),
        discard_counts=arrays("discard_counts", np.int64),
        placed=arrays("placed", np.uint8), discarded=arrays("discarded", np.uint8),
        match_ids=lists("match_ids"),
    )


def from_records(
    keys: Sequence[int], digests: Sequence[str], hands: Sequence[HandRecord],
    paths: Sequence[str], lines: Sequence[int],
) -> HandColumns:
    """Columns of validated records (any format), one per hand, in order."""
    sites: list[str] = []
    hand_ids: list[str] = []
    tables: list[str | None] = []
    started: list[datetime | None] = []
    variants: list[Variant] = []
    rules: list[str] = []
    buttons: list[str | None] = []
    hand_extras: list[str | None] = []
    match_ids: list[str | None] = []
    player_counts: list[int] = []
    names: list[str] = []
    seats: list[int] = []
    positions: list[int] = []
    fantasyland: list[bool] = []
    cards_dealt: list[int] = []
    reported: list[float | None] = []
    player_extras: list[dict[str, Any] | None] = []
    board_codes = bytearray()
    street_players: list[int] = []
    street_numbers: list[int] = []
    placed_counts: list[int] = []
    discard_counts: list[int] = []
    placed = bytearray()
    discarded = bytearray()
    pair_code = _PAIR_CODE.__getitem__
    for hand in hands:
        players = hand.players
        sites.append(hand.site)
        hand_ids.append(hand.hand_id)
        tables.append(hand.table)
        started.append(utc_timestamp(hand.started_at))
        variants.append(hand.variant)
        rules.append(hand.rules)
        buttons.append(hand.button)
        hand_extras.append(json_or_none(hand.extra))
        match_ids.append(hand.match_id)
        player_counts.append(len(players))
        position = {id(player): index for index, player in enumerate(hand.action_order())}
        for player in players:
            player_index = len(names)
            names.append(player.name)
            seats.append(player.seat)
            positions.append(position[id(player)])
            fantasyland.append(player.fantasyland)
            reported.append(player.reported_points)
            player_extras.append(player.extra or None)
            board = player.board
            board_codes.extend(board.top)
            board_codes.extend(board.middle)
            board_codes.extend(board.bottom)
            streets = player.streets
            if streets is None:
                cards_dealt.append(-1)
                continue
            cards_dealt.append(sum(len(street.dealt) for street in streets))
            for number, street in enumerate(streets, 1):
                street_players.append(player_index)
                street_numbers.append(number)
                placed_counts.append(len(street.placed))
                placed.extend(map(pair_code, street.placed))
                discard_counts.append(len(street.discarded))
                discarded.extend(street.discarded)
    return HandColumns(
        keys=np.asarray(keys, np.int64).reshape(-1), digests=list(digests), sites=sites,
        hand_ids=hand_ids, tables=tables, started=np.array(started, "datetime64[us]"),
        variants=variants, rules=rules,
        buttons=buttons, paths=list(paths), lines=list(lines), hand_extras=hand_extras,
        player_counts=np.asarray(player_counts, np.int64),
        names=names, seats=np.asarray(seats, np.int64), positions=np.asarray(positions, np.int64),
        fantasyland=np.asarray(fantasyland, bool), cards_dealt=np.asarray(cards_dealt, np.int64),
        reported=reported, player_extras=player_extras,
        boards=np.frombuffer(bytes(board_codes), np.uint8).reshape(-1, 13).copy(),
        street_players=np.asarray(street_players, np.int64),
        street_numbers=np.asarray(street_numbers, np.int64),
        placed_counts=np.asarray(placed_counts, np.int64),
        discard_counts=np.asarray(discard_counts, np.int64),
        placed=np.frombuffer(bytes(placed), np.uint8).copy(),
        discarded=np.frombuffer(bytes(discarded), np.uint8).copy(),
        match_ids=match_ids,
    )


def scoring_columns(
    keys: np.ndarray, variants: list[Variant], rules: list[str], player_counts: np.ndarray,
    names: list[str], positions: np.ndarray, fantasyland: np.ndarray,
    reported: list[float | None], player_extras: list[dict[str, Any] | None],
    boards: np.ndarray,
) -> HandColumns:
    """Columns holding only what :func:`verdict_tables` reads (a re-score of stored boards);
    the other fields are empty placeholders."""
    hand_count = len(keys)
    player_count = len(names)
    nothing: list[Any] = [None] * hand_count
    no_streets = np.zeros(0, np.int64)
    return HandColumns(
        keys=np.asarray(keys, np.int64), digests=[""] * hand_count, sites=nothing,
        hand_ids=nothing, tables=nothing, started=np.full(hand_count, "NaT", "datetime64[us]"),
        variants=variants, rules=rules, buttons=nothing, paths=nothing, lines=nothing,
        hand_extras=nothing, player_counts=np.asarray(player_counts, np.int64),
        names=names,
        seats=np.zeros(player_count, np.int64), positions=np.asarray(positions, np.int64),
        fantasyland=np.asarray(fantasyland, bool), cards_dealt=np.full(player_count, -1),
        reported=reported, player_extras=player_extras,
        boards=np.asarray(boards, np.uint8).reshape(player_count, 13),
        street_players=no_streets, street_numbers=no_streets, placed_counts=no_streets,
        discard_counts=no_streets, placed=np.zeros(0, np.uint8),
        discarded=np.zeros(0, np.uint8), match_ids=nothing,
    )


@dataclass(frozen=True, slots=True)
class VerdictFacts:
    """What the disagreement check needs of one player's re-score."""

    name: str
    reported_points: float | None
    extra: dict[str, Any]
    foul: bool
    raw_royalties: tuple[int, ...]
    fantasyland_cards: int
    points: int


def _source_causes(verdict: VerdictFacts) -> list[str]:
    """How the source's own verdict (poker-arena ``source_showdown``) differs from the re-score."""
    showdown = verdict.extra.get("source_showdown")
    if not isinstance(showdown, dict):
        return []
    causes = []
    fouled = showdown.get("fouled")
    if isinstance(fouled, bool) and fouled != verdict.foul:
        causes.append(
            f"foul: the source says {'fouled' if fouled else 'not fouled'}, "
            f"the re-score says {'fouled' if verdict.foul else 'not fouled'}"
        )
    royalties = showdown.get("royalties")
    if isinstance(royalties, dict):
        source = tuple(royalties.get(row.value) for row in ROWS)
        if all(isinstance(value, int | float) for value in source) and tuple(
            source
        ) != tuple(verdict.raw_royalties):
            causes.append(
                "royalty: the source says "
                + "/".join(str(value) for value in source)
                + " (top/middle/bottom), the re-score says "
                + "/".join(str(value) for value in verdict.raw_royalties)
            )
    if "next_fantasyland" in showdown:
        next_cards = showdown.get("next_fantasyland")
        source_cards = next_cards if isinstance(next_cards, int) else 0
        if source_cards != verdict.fantasyland_cards:
            causes.append(
                "fantasyland: the source says "
                + (f"{source_cards} cards next hand" if source_cards else "no Fantasyland")
                + ", the re-score says "
                + (f"{verdict.fantasyland_cards} cards" if verdict.fantasyland_cards
                   else "no Fantasyland")
            )
    return causes


def _format_points(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def disagreement_texts(verdicts: Sequence[VerdictFacts]) -> list[str | None]:
    """Per player of one hand: why the source disagrees with the re-score, or None."""
    causes = [_source_causes(verdict) for verdict in verdicts]
    culprits = [
        f"{verdict.name}: {', '.join(cause.split(':', 1)[0] for cause in player_causes)}"
        for verdict, player_causes in zip(verdicts, causes, strict=True)
        if player_causes
    ]
    texts: list[str | None] = []
    for verdict, player_causes in zip(verdicts, causes, strict=True):
        parts = list(player_causes)
        reported = verdict.reported_points
        if reported is not None and reported != verdict.points:
            text = f"points: reported {_format_points(reported)}, re-scored {verdict.points}"
            if not player_causes and culprits:
                text += f" (because of {'; '.join(culprits)})"
            parts.append(text)
        texts.append("; ".join(parts) if parts else None)
    return texts


@dataclass(frozen=True, slots=True)
class ScoredColumns:
    """The batch rules core's verdicts for a batch's boards (players in batch order) and pairs
    (hands in batch order, each hand's pairs in settlement order)."""

    rule_names: list[str]  # per hand: the name of the rule set that scored it
    values: np.ndarray  # (boards, 3) row values
    class_codes: np.ndarray  # (boards, 3) index into HIGH_CLASS_LABELS + LOW_CLASS_LABELS
    foul: np.ndarray
    raw_royalties: np.ndarray  # (boards, 3) before a foul voids them
    royalties: np.ndarray  # (boards, 3) collected
    fantasyland_cards: np.ndarray
    points: np.ndarray  # per board: the player's settled total for the hand
    pair_counts: np.ndarray  # per hand
    pair_first: np.ndarray  # per pair: board index of the player settled first
    pair_second: np.ndarray
    pair_rows: np.ndarray  # (pairs, 3): +1 first wins the row, -1 loses, 0 tie
    pair_scoop: np.ndarray
    pair_royalty: np.ndarray
    pair_points: np.ndarray  # before any cap
    pair_settled: np.ndarray  # after the cap


CLASS_LABELS: tuple[str, ...] = (*HIGH_CLASS_LABELS, *LOW_CLASS_LABELS)
"""Row class names by ``ScoredColumns.class_codes`` (2-7 middles use the low labels)."""


def score_columns(columns: HandColumns, rules_for: Callable[[str], RuleSet]) -> ScoredColumns:
    """Score a batch: hands grouped by (variant, rule set), each group's boards evaluated and
    its pairs settled as columns by the batch rules core. ``rules_for`` maps a record's rules
    name to the RuleSet that scores it."""
    player_counts = columns.player_counts
    hand_count = columns.hand_count
    board_count = len(columns.names)
    pair_counts = player_counts * (player_counts - 1) // 2
    pair_bases = np.cumsum(pair_counts) - pair_counts
    pair_count = int(pair_counts.sum())
    player_hand = np.repeat(np.arange(hand_count), player_counts)

    # Hands grouped by (variant, rule set): first by the names (cheap to hash), then merged
    # where two rules names resolve to the same rule set.
    combinations = set(zip(columns.variants, columns.rules, strict=True))
    named: dict[tuple[Variant, str], list[int]] = {}
    if len(combinations) == 1:  # the usual batch: one game under one rule set
        named[combinations.pop()] = list(range(hand_count))
    else:
        for index, key in enumerate(zip(columns.variants, columns.rules, strict=True)):
            named.setdefault(key, []).append(index)
    rule_sets = {name: rules_for(name) for name in {name for _, name in named}}
    groups: dict[tuple[Variant, RuleSet], list[int]] = {}
    for (variant, name), members in named.items():
        groups.setdefault((variant, rule_sets[name]), []).extend(members)
    for members in groups.values():
        members.sort()
    rule_names = (
        [rule_sets[columns.rules[0]].name] * hand_count if len(rule_sets) == 1
        else [rule_sets[name].name for name in columns.rules]
    )

    card_array = columns.boards.astype(np.int8)
    fantasyland_array = columns.fantasyland
    values = np.zeros((board_count, 3), np.int32)
    class_codes = np.zeros((board_count, 3), np.int64)
    foul = np.zeros(board_count, bool)
    raw = np.zeros((board_count, 3), np.int16)
    royalties = np.zeros((board_count, 3), np.int16)
    fantasyland_cards = np.zeros(board_count, np.int8)
    points = np.zeros(board_count, np.int64)
    pair_first = np.zeros(pair_count, np.int64)
    pair_second = np.zeros(pair_count, np.int64)
    pair_rows = np.zeros((pair_count, 3), np.int8)
    pair_scoop = np.zeros(pair_count, np.int64)
    pair_royalty = np.zeros(pair_count, np.int64)
    pair_points = np.zeros(pair_count, np.int64)
    pair_settled = np.zeros(pair_count, np.int64)
    high_count = len(HIGH_CLASS_LABELS)
    for (variant, rules), member_list in groups.items():
        members = np.asarray(member_list, np.int64)
        counts = player_counts[members]
        width = int(counts.max())
        # The group's boards (local index) and, per hand, its boards in settlement order.
        rows = np.flatnonzero(np.isin(player_hand, members)) if len(groups) > 1 else np.arange(
            board_count)
        local_hand = np.repeat(np.arange(len(members)), counts)
        seats = np.full((len(members), width), -1, np.int64)
        seats[local_hand, columns.positions[rows]] = np.arange(len(rows))
        bases = pair_bases[members]
        group = evaluate_boards(card_array[rows], variant, rules, fantasyland_array[rows])
        values[rows] = group.values
        codes = group.classes.astype(np.int64)
        if variant.lowball_middle:
            codes[:, 1] += high_count
        class_codes[rows] = codes
        foul[rows] = group.foul
        raw[rows] = group.raw_royalties
        royalties[rows] = group.royalties
        fantasyland_cards[rows] = group.fantasyland_cards
        totals, settled_pairs = settle_pairs(group, seats, rules)
        for pair in settled_pairs:
            present = pair.hands
            first_position, second_position = pair.first_position, pair.second_position
            players = counts[present]
            # Where this pair sits in its hand's settlement order (settlement_pairs).
            slots = bases[present] + (
                first_position * (2 * players - first_position - 1) // 2
                + second_position - first_position - 1
            )
            pair_first[slots] = rows[pair.first]
            pair_second[slots] = rows[pair.second]
            pair_rows[slots] = pair.outcome.rows
            pair_scoop[slots] = pair.outcome.scoop
            pair_royalty[slots] = pair.outcome.royalty_points
            pair_points[slots] = pair.outcome.points
            pair_settled[slots] = pair.settled
        present_rows, present_positions = np.nonzero(seats >= 0)
        points[rows[seats[present_rows, present_positions]]] = totals[present_rows,
                                                                      present_positions]
    return ScoredColumns(
        rule_names=rule_names, values=values, class_codes=class_codes, foul=foul,
        raw_royalties=raw, royalties=royalties, fantasyland_cards=fantasyland_cards,
        points=points, pair_counts=pair_counts, pair_first=pair_first, pair_second=pair_second,
        pair_rows=pair_rows, pair_scoop=pair_scoop, pair_royalty=pair_royalty,
        pair_points=pair_points, pair_settled=pair_settled,
    )


_TABLE_NAMES = frozenset(("TABLE_SCHEMAS", "FRAME_ORDER", "hand_tables", "verdict_tables"))


def __getattr__(name: str) -> Any:
    """The Arrow side moved to :mod:`pipeline.ingest.tables`; its names are still found here
    (imported on first use, so importing this module does not load pyarrow)."""
    if name in _TABLE_NAMES:
        from pipeline.ingest import tables

        return getattr(tables, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
