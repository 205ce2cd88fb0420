"""The dealer: plays the hands of planned sessions, exactly by the rules of the game.

Per hand: one shuffled 52-card deck; Fantasyland players get all their cards at once (their
count comes from the rules core's verdict on their previous board) and set them with the exact
setter; everybody else gets the variant's streets in action order, starting left of the button,
and their bot places each street (Pineapple: place two, discard one). A bot that reads the
live cards sees its own discards and every board of the table as it stands at its turn: the
seats choose in action order and each sees what the seats before it placed on the street (the
other bots see only their own board, so for them the order does not matter and the street is
decided for every seat at once). After the hand the rules
core judges every board (who fouled, royalties, who plays Fantasyland next and with how many
cards) and settles the points. The button moves one seat left after every hand, except after a
hand in which anyone played Fantasyland.

Speed: sessions are independent (each has its own seed and starts fresh), so :func:`play_sessions`
plays the n-th hand of many sessions side by side and lets the bots decide a street for all
those boards in one vectorised call; judging and settling are batched the same way. Every
random draw comes from the session's own generators (decks from a numpy generator, the rest from
a :class:`random.Random`, both seeded from the plan), in the session's own order, so a session
plays the same hands whichever sessions it is played beside.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from pipeline.rules.batch import evaluate_boards, settle_hands
from pipeline.rules.cards import card_text
from pipeline.rules.game import ROW_LENGTHS, Variant
from pipeline.rules.ruleset import RuleSet
from pipeline.simulate.bots import (
    BOTS,
    ROW_NAMES,
    Bot,
    Options,
    pattern_subsets,
    street_patterns,
    uses_live_cards,
)
from pipeline.simulate.outlook import RowOutlooks, row_outlooks, state_space
from pipeline.simulate.sessions import SessionPlan
from pipeline.solver.fantasyland import DEFAULT_STAY_VALUE, solve_fantasyland
from pipeline.solver.tables import KEY_LIMIT, RANK_KEY_OF_CARD

if TYPE_CHECKING:
    from pipeline.simulate.learned_kernel import StreetTables

QUOTED_CARD: tuple[str, ...] = tuple(f'"{card_text(card)}"' for card in range(52))
"""Each card's canonical text as a JSON string."""

SITE = "sim"
"""The ``site`` of simulated records."""

HAND_GAP_SECONDS = {
    Variant.CLASSIC: (45, 150), Variant.PINEAPPLE: (60, 200), Variant.LOWBALL_PINEAPPLE: (60, 200),
}
"""Seconds between the starts of two hands at a table: a few minutes at most."""

_CARD_KEYS = np.asarray(RANK_KEY_OF_CARD, dtype=np.int64)
_SUIT_KEYS = np.asarray([(1, 8, 64, 512)[card & 3] for card in range(52)], dtype=np.int64)
_ROW_START = np.asarray((0, 3, 8), dtype=np.int64)


def _mono_suit_table() -> np.ndarray:
    """Suit-key sum of some cards -> their one suit (0..3), -1 for no cards, 4 for mixed."""
    table = np.full(5 * 512 + 1, 4, dtype=np.int64)
    table[0] = -1
    for suit, key in enumerate((1, 8, 64, 512)):
        for count in range(1, 6):
            table[count * key] = suit
    return table


_MONO_SUIT = _mono_suit_table()


def _suit_after_table() -> np.ndarray:
    """The suit state of a row (-1 empty, 0-3 one suit, 4 mixed) once some cards of suit state
    ``added`` join it, at ``6 * (current + 1) + added + 1``."""
    table = np.empty(36, dtype=np.int64)
    for current in range(-1, 5):
        for added in range(-1, 5):
            table[6 * (current + 1) + added + 1] = (
                current if added == -1 else added if current in (-1, added) else 4)
    return table


_SUIT_AFTER = _suit_after_table()


def _suits_after(current: np.ndarray, added: np.ndarray) -> np.ndarray:
    """The suit states of rows in suit state ``current`` once cards of suit state ``added``
    join them (broadcast), read from :data:`_SUIT_AFTER`."""
    return np.take(_SUIT_AFTER, added + (6 * current + 7))


def _rank_cards_table() -> np.ndarray:
    """A 13-bit rank mask -> the 52-bit mask of those ranks' cards (bit ``card``; a card's rank
    is ``card >> 2``), uint64."""
    masks = np.arange(1 << 13, dtype=np.uint64)
    table = np.zeros(1 << 13, dtype=np.uint64)
    for rank in range(13):
        table |= ((masks >> np.uint64(rank)) & np.uint64(1)) * (np.uint64(0xF) << np.uint64(4 * rank))
    return table


_RANK_CARDS = _rank_cards_table()

_SUIT_CARDS = np.asarray([sum(1 << card for card in range(suit, 52, 4)) for suit in range(4)],
                         dtype=np.uint64)
"""A suit -> the 52-bit mask of its cards."""

_RANK_BIT = np.asarray([1 << (card >> 2) for card in range(52)] + [0], dtype=np.uint16)
"""A card -> its rank's bit in a 13-bit mask (the last entry, 0, for an empty slot's -1)."""


@cache
def _subset_members(size: int) -> tuple[np.ndarray, ...]:
    """Per dealt column: which subsets of ``size`` cards hold it (0 or 1 per subset, uint16)."""
    subsets = np.arange(1 << size)
    return tuple(((subsets >> column) & 1).astype(np.uint16) for column in range(size))


_CARD_BIT = np.asarray([1 << card for card in range(52)] + [0], dtype=np.uint64)
"""A card -> its bit in a 52-bit mask (the last entry, 0, for an empty slot's -1)."""

_ALL_CARDS = np.uint64((1 << 52) - 1)
"""The 52-bit mask of every card."""


@cache
def _state_ranks() -> np.ndarray:
    """A row state id (:func:`pipeline.simulate.outlook.state_space`) -> the 13-bit mask of the
    ranks its cards hold (uint16)."""
    held = state_space().vectors > 0
    return (held * (1 << np.arange(13))).sum(axis=1).astype(np.uint16)


@cache
def _state_next() -> np.ndarray:
    """A row state id (:func:`pipeline.simulate.outlook.state_space`) and a rank -> the id of
    the state with one more card of that rank (-1 where none exists: five cards, or a fifth
    of a rank), int32 (states × 13)."""
    space = state_space()
    rank_keys = np.asarray(RANK_KEY_OF_CARD[::4], dtype=np.int64)  # card 4r is of rank r
    at = (space.counts[:, None] + 1) * KEY_LIMIT + space.keys[:, None] + rank_keys[None, :]
    room = space.counts[:, None] < 5
    following = np.where(room, space.index[np.where(room, at, 0)], -1)
    return following.astype(np.int32)


_NO_SUIT = 15
"""The unseen count that stands for "no one suit" in :data:`_FLUSH_SHARE`."""


def _share_tables() -> tuple[np.ndarray, np.ndarray]:
    """The live-card shares of :meth:`StreetRows.live_state` as float32 tables of small
    integer counts, worked out by the same float32 divisions: *live* by ``unseen << 8 |
    distinct << 4 | cards`` (the unseen cards of the row's ranks, its distinct ranks, its
    cards), *flush* by ``unseen << 4 | cards`` (the unseen cards of the row's one suit,
    :data:`_NO_SUIT` where it has none)."""
    code = np.arange(1 << 14)
    unseen = (code >> 8).astype(np.float32)
    room = np.float32(4.0) * ((code >> 4) & 15).astype(np.float32) - (code & 15).astype(
        np.float32)
    live = np.where(room > 0, unseen / np.maximum(room, np.float32(1.0)), np.float32(1.0))
    code = np.arange(1 << 8)
    unseen, cards = code >> 4, (code & 15).astype(np.float32)
    flush = np.where((unseen != _NO_SUIT) & (cards >= 2),
                     unseen.astype(np.float32) / np.maximum(np.float32(13.0) - cards,
                                                            np.float32(1.0)),
                     np.float32(0.0))
    return live.astype(np.float32), flush.astype(np.float32)


_LIVE_SHARE, _FLUSH_SHARE = _share_tables()


@dataclass(slots=True)
class BoardTally:
    """One player's hand as the statistics see it."""

    bot: str
    name: str
    in_fantasyland: bool
    foul: bool
    royalties: int
    fantasyland_next: bool
    points: int


@dataclass(slots=True)
class SessionResult:
    """A played session: one canonical record per hand as a JSON line (no newline), and tallies.

    The lines are exactly what ``json.dumps(record, separators=(",", ":"), ensure_ascii=False)``
    writes for the canonical record (tests/simulate check this), only built faster.
    """

    plan: SessionPlan
    lines: list[str] = field(default_factory=list)
    tallies: list[BoardTally] = field(default_factory=list)


@dataclass(slots=True)
class _Session:
    """A session being played: its generator and what carries over from hand to hand."""

    plan: SessionPlan
    rng: random.Random
    deck_rng: np.random.Generator
    button: int
    fantasyland: list[int]
    moment: datetime
    played: int
    result: SessionResult
    names_json: list[str]
    table_json: str


@dataclass(slots=True)
class _Hand:
    """One hand of the current step: its deck, action order and who plays Fantasyland."""

    session: _Session
    deck: list[int]
    order: list[int]
    normal: list[int]  # seat indexes of non-Fantasyland players, in action order
    rows: list[tuple[list[int], list[int], list[int]] | None]
    streets: list[str]  # per seat: the JSON of its streets, comma-joined


def fantasyland_deal_sizes(variant: Variant, rules: RuleSet) -> set[int]:
    """Every Fantasyland card count the rules can deal in a variant."""
    fl = rules.fantasyland
    if not fl.enabled:
        return set()
    if variant is Variant.CLASSIC:
        return {fl.cards_classic, fl.stay_cards_classic}
    if variant is Variant.LOWBALL_PINEAPPLE:
        return {fl.lowball_cards, fl.lowball_cards_both}
    sizes = {fl.cards_pineapple, fl.stay_cards_pineapple}
    if fl.progressive:
        sizes |= set(fl.progressive_cards)
    return sizes


def play_sessions(
    plans: Sequence[SessionPlan], rules: RuleSet, stay_value: float = DEFAULT_STAY_VALUE
) -> list[SessionResult]:
    """Play every hand of the planned sessions; results in the order of ``plans``."""
    sessions = []
    for plan in plans:
        rng = random.Random(plan.seed)
        deck_seed = int.from_bytes(hashlib.sha256(plan.seed.encode()).digest()[:8], "little")
        seats = len(plan.players)
        sessions.append(
            _Session(
                plan, rng, np.random.default_rng(deck_seed), rng.randrange(seats), [0] * seats,
                plan.start, 0, SessionResult(plan),
                [json.dumps(player.name, ensure_ascii=False) for player in plan.players],
                json.dumps(plan.table, ensure_ascii=False),
            )
        )
    for variant in dict.fromkeys(plan.variant for plan in plans):
        group = [session for session in sessions if session.plan.variant is variant]
        _play_group(group, variant, rules, stay_value)
    return [session.result for session in sessions]


def _play_group(
    sessions: list[_Session], variant: Variant, rules: RuleSet, stay_value: float
) -> None:
    """Play sessions of one variant side by side, one hand of each per step."""
    while True:
        active = [session for session in sessions if session.played < session.plan.hands]
        if not active:
            return
        hands = [_start_hand(session) for session in active]
        for hand in hands:
            _play_fantasyland(hand, variant, rules, stay_value)
        _play_streets(hands, variant, rules)
        _finish_hands(hands, variant, rules)


def _start_hand(session: _Session) -> _Hand:
    """Shuffle, and work out the action order and who is in Fantasyland."""
    if session.played:
        low, high = HAND_GAP_SECONDS[session.plan.variant]
        session.moment += timedelta(seconds=session.rng.randint(low, high))
    deck = session.deck_rng.permutation(52).tolist()
    seats = len(session.plan.players)
    order = [(session.button + 1 + offset) % seats for offset in range(seats)]
    normal = [seat for seat in order if not session.fantasyland[seat]]
    return _Hand(session, deck, order, normal, [None] * seats, [""] * seats)


def _play_fantasyland(hand: _Hand, variant: Variant, rules: RuleSet, stay_value: float) -> None:
    """Fantasyland players take their cards first (in action order) and set them exactly."""
    position = 0
    quoted = QUOTED_CARD
    for seat in hand.order:
        size = hand.session.fantasyland[seat]
        if not size:
            continue
        dealt = hand.deck[position:position + size]
        position += size
        arrangement = solve_fantasyland(dealt, variant, rules, stay_value)
        rows = (list(arrangement.top), list(arrangement.middle), list(arrangement.bottom))
        hand.rows[seat] = rows
        placed = ",".join(
            f'"{name}":[{",".join(quoted[card] for card in row)}]'
            for name, row in zip(ROW_NAMES, rows, strict=True)
        )
        hand.streets[seat] = (
            f'{{"dealt":[{",".join(quoted[card] for card in dealt)}],"placed":{{{placed}}},'
            f'"discarded":[{",".join(quoted[card] for card in arrangement.discards)}]}}'
        )


def _session_bot(plan: SessionPlan, seat: int, playing: dict[str, Bot]) -> str:
    """The key of the bot that plays ``seat`` in this session (recorded in ``playing``).

    A bot's key is its name; a bot that changes style part-way (it has ``for_progress``) is
    asked which style plays at the session's point in the run.
    """
    name = plan.players[seat].bot
    bot = BOTS[name]
    resolve = getattr(bot, "for_progress", None)
    if resolve is not None:
        name, bot = resolve(plan.progress)
    playing[name] = bot
    return name


def _play_streets(hands: list[_Hand], variant: Variant, rules: RuleSet) -> None:
    """Deal the streets to every non-Fantasyland board of the step and let the bots place them.

    Boards are ordered by bot (then hand, then action order) so that each bot decides for one
    contiguous range of boards.
    """
    playing: dict[str, Bot] = {}
    owners = sorted(
        ((_session_bot(hand.session.plan, seat, playing), hand_index, rank, seat)
         for hand_index, hand in enumerate(hands) for rank, seat in enumerate(hand.normal)),
        key=lambda owner: (owner[0], owner[1], owner[2]),
    )
    if not owners:
        return
    count = len(owners)
    hand_of = np.asarray([owner[1] for owner in owners], dtype=np.int64)
    rank_of = np.asarray([owner[2] for owner in owners], dtype=np.int64)
    normal_players = np.asarray([len(hand.normal) for hand in hands], dtype=np.int64)[hand_of]
    first_card = np.asarray(
        [sum(hand.session.fantasyland) for hand in hands], dtype=np.int64
    )[hand_of]
    decks = np.asarray([hand.deck for hand in hands], dtype=np.int64)
    ranges = []
    start = 0
    for position in range(1, count + 1):
        if position == count or owners[position][0] != owners[start][0]:
            ranges.append((playing[owners[start][0]], slice(start, position)))
            start = position
    chance = [bot.uses_chance for bot, _ in ranges]
    live = any(uses_live_cards(bot, variant) for bot, _ in ranges)
    outlooks = row_outlooks(variant, rules)

    keys = np.zeros((count, 3), dtype=np.int64)
    counts = np.zeros((count, 3), dtype=np.int64)
    suits = np.full((count, 3), -1, dtype=np.int64)
    cards = np.full((count, 13), -1, dtype=np.int64)
    discarded = np.zeros((count, 52), dtype=bool)
    everyone = np.arange(count)
    street_json: list[list[str]] = [[] for _ in range(count)]
    street_start = 0
    for shape in variant.streets:
        offsets = first_card + street_start * normal_players + rank_of * shape.dealt
        dealt = decks[hand_of[:, None], offsets[:, None] + np.arange(shape.dealt)[None, :]]
        street_start += shape.dealt
        patterns = street_patterns(shape.dealt, shape.discarded)
        subsets = pattern_subsets(shape.dealt, shape.discarded)
        street = StreetRows(dealt, keys, counts, suits)
        uniforms = np.zeros(count)
        for (_, boards), needs_chance in zip(ranges, chance, strict=True):
            if needs_chance:
                uniforms[boards] = [hands[owner[1]].session.rng.random()
                                    for owner in owners[boards]]
        chosen = np.zeros(count, dtype=np.int64)
        if not live:
            options = street.options(variant, patterns, subsets, outlooks)
            for bot, boards in ranges:
                chosen[boards] = bot.choose(options.take(boards), uniforms[boards])
        else:
            _choose_in_turn(chosen, ranges, rank_of, hand_of, len(hands), dealt, keys, counts,
                            suits, cards, discarded, variant, patterns, subsets, outlooks,
                            uniforms)
        before = counts
        keys, counts, suits = street.after(subsets[chosen])
        within = order_within_rows(shape.dealt, shape.discarded)[chosen]
        pattern_rows = patterns[chosen]
        for column in range(shape.dealt):
            row = pattern_rows[:, column]
            placed = row >= 0
            safe_row = np.where(placed, row, 0)
            slot = _ROW_START[safe_row] + before[everyone, safe_row] + within[:, column]
            cards[everyone[placed], slot[placed]] = dealt[placed, column]
            discarded[everyone[~placed], dealt[~placed, column]] = True
        templates = _street_templates(shape.dealt, shape.discarded)
        quoted = QUOTED_CARD
        for board, (pattern, dealt_cards) in enumerate(zip(chosen.tolist(), dealt.tolist(), strict=True)):
            street_json[board].append(templates[pattern].format(*[quoted[card] for card in dealt_cards]))

    final = cards.tolist()
    for board, (_, hand_index, _, seat) in enumerate(owners):
        hand = hands[hand_index]
        row_cards = final[board]
        hand.rows[seat] = (row_cards[0:3], row_cards[3:8], row_cards[8:13])
        hand.streets[seat] = ",".join(street_json[board])


def _choose_in_turn(chosen: np.ndarray, ranges: list[tuple[Bot, slice]], rank_of: np.ndarray,
                    hand_of: np.ndarray, hands: int, dealt: np.ndarray, keys: np.ndarray,
                    counts: np.ndarray, suits: np.ndarray, cards: np.ndarray,
                    discarded: np.ndarray, variant: Variant, patterns: np.ndarray,
                    subsets: np.ndarray, outlooks: RowOutlooks, uniforms: np.ndarray) -> None:
    """One street when a bot reads the live cards: the seats choose in action order, each
    seeing every board at the table before the street, the cards placed on this street by the
    seats before it (a real table shows them; the grader's decisions count them as seen,
    :func:`pipeline.analysis.decisions.decision_at`) and its own discards. Fills ``chosen``."""
    table = _table_cards(cards, hand_of, hands)  # per hand: the cards on its boards
    for rank in range(int(rank_of.max()) + 1):
        turn = np.flatnonzero(rank_of == rank)  # ascending: the bots' ranges stay in order
        street = StreetRows(dealt[turn], keys[turn], counts[turn], suits[turn], cards[turn],
                            table[hand_of[turn]] | discarded[turn])
        options = street.options(variant, patterns, subsets, outlooks)
        for bot, boards in ranges:
            first, last = np.searchsorted(turn, [boards.start, boards.stop])
            if last > first:
                picked = bot.choose(options.take(slice(first, last)),
                                    uniforms[turn[first:last]])
                chosen[turn[first:last]] = picked
        placed_rows = patterns[chosen[turn]]
        for column in range(dealt.shape[1]):  # what this turn placed, the next turns see
            shown = placed_rows[:, column] >= 0
            table[hand_of[turn[shown]], dealt[turn[shown], column]] = True


def _table_cards(cards: np.ndarray, hand_of: np.ndarray, hands: int) -> np.ndarray:
    """Per hand (hands × 52, bool): every card on the boards of its players not in
    Fantasyland (``cards``: one row per board, ``hand_of``: each board's hand)."""
    table = np.zeros((hands, 52), dtype=bool)
    placed = cards >= 0
    table[np.repeat(hand_of, cards.shape[1]).reshape(cards.shape)[placed], cards[placed]] = True
    return table


@cache
def street_tables() -> StreetTables:
    """This module's lookup tables as the compiled street player reads them
    (:func:`pipeline.simulate.learned_kernel.play_learned`), built once per process."""
    from pipeline.simulate.learned_kernel import StreetTables

    return StreetTables(
        card_keys=_CARD_KEYS,
        suit_keys=_SUIT_KEYS,
        rank_bits=_RANK_BIT[:52].astype(np.int64),
        card_bits=_CARD_BIT[:52].copy(),
        mono_suit=_MONO_SUIT,
        suit_after=_SUIT_AFTER,
        state_index=state_space().index,
        state_next=_state_next(),
        state_ranks=_state_ranks(),
        rank_cards=_RANK_CARDS,
        suit_cards=_SUIT_CARDS,
        live_share=_LIVE_SHARE,
        flush_share=_FLUSH_SHARE,
        row_lengths=np.asarray(ROW_LENGTHS, dtype=np.int64),
        row_starts=_ROW_START,
        key_limit=int(KEY_LIMIT),
        no_suit=_NO_SUIT,
    )


class RowState(NamedTuple):
    """A row of every board after each subset of the street's cards (boards × subsets): its
    open slots (float32), whether the cards fit, the state id (0 where they do not fit),
    whether it is suited (five-card rows; None for the top) and its entry in
    :func:`packed_outlooks` (the state id; 2 × id + suited for five-card rows)."""

    open: np.ndarray
    fits: np.ndarray
    state: np.ndarray
    suited: np.ndarray | None
    entry: np.ndarray


class StreetRows:
    """The rows of a column of boards and the cards of one street, by subset of those cards.

    Every row can receive any subset of the street's cards (2^dealt of them); the state of each
    row after each subset is computed once, and options are then gathered from those.
    """

    def __init__(self, dealt: np.ndarray, keys: np.ndarray, counts: np.ndarray, suits: np.ndarray,
                 cards: np.ndarray | None = None, seen: np.ndarray | None = None):
        size = dealt.shape[1]
        self.dealt = dealt
        self.cards = cards
        self.seen = seen
        membership = (np.arange(1 << size)[None, :] >> np.arange(size)[:, None]) & 1
        # (dealt, subsets) int64: integer products, so no BLAS (whose idle threads spin)
        self.subset_keys = np.take(_CARD_KEYS, dealt) @ membership
        self.subset_suits = _MONO_SUIT[np.take(_SUIT_KEYS, dealt) @ membership]
        self.subset_counts = membership.sum(axis=0)
        self.keys = keys
        self.counts = counts
        self.suits = suits
        self._states: dict[int, RowState] = {}
        self._live: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}
        self._unseen: np.ndarray | None = None
        self._rows: dict[int, tuple[np.ndarray, ...]] = {}

    def _row(self, row: int) -> tuple[np.ndarray, ...]:
        """(key, count, suit) of one row after each subset (boards × subsets), kept."""
        known = self._rows.get(row)
        if known is None:
            suit = _suits_after(self.suits[:, row, None], self.subset_suits)
            known = self._rows[row] = (self.keys[:, row, None] + self.subset_keys,
                                       self.counts[:, row, None] + self.subset_counts, suit)
        return known

    def row_state(self, row: int) -> RowState:
        """One row after each subset (boards × subsets), worked out once per row and kept."""
        known = self._states.get(row)
        if known is None:
            key, count, suit = self._row(row)
            fits = count <= ROW_LENGTHS[row]
            at = count * KEY_LIMIT
            at += key
            at *= fits  # rows that do not fit look up 0 (the empty row's id)
            state = np.take(state_space().index, at)
            np.maximum(state, 0, out=state)
            if row == 0:
                suited, entry = None, state
            else:
                suited = (suit.view(np.uint64) < 4).astype(np.int64)  # one suit: 0 to 3
                entry = 2 * state + suited
            known = RowState(np.subtract(ROW_LENGTHS[row], count, dtype=np.float32), fits,
                             state, suited, entry)
            self._states[row] = known
        return known

    def _unseen_bits(self) -> np.ndarray:
        """Per board, the cards the player has not seen (not on their board, not dealt, not in
        ``seen``) as a 52-bit mask (bit ``card``; uint64)."""
        if self._unseen is None:
            count = len(self.keys)
            known = np.zeros((count, 8), dtype=np.uint8)
            if self.seen is not None:
                known[:, :7] = np.packbits(self.seen, axis=1, bitorder="little")
            known = known.view("<u8")[:, 0]
            known |= np.bitwise_or.reduce(np.take(_CARD_BIT, self.dealt), axis=1)
            if self.cards is not None:
                known |= np.bitwise_or.reduce(np.take(_CARD_BIT, self.cards), axis=1)
            self._unseen = ~known & _ALL_CARDS
        return self._unseen

    @np.errstate(all="ignore")
    def live_state(self, row: int) -> tuple[np.ndarray, np.ndarray | None]:
        """How live a row's draws are after each subset of the street's cards (boards ×
        subsets, float32), from what the player has seen (``cards`` and ``seen``):

        * *live*: of the cards of the ranks already in the row, the share still unseen
          (the row's own cards left out: 4 × distinct ranks - cards); 1 for an empty row;
        * *flush* (five-card rows; None for the top): when the row holds two or more cards
          all of one suit, the share of that suit's other cards still unseen; else 0.

        Without the board's ``cards`` every rank counts as live and no flush as drawing.

        Every count is a small integer worked out exactly (bit masks and their popcounts: a
        row's ranks as a 13-bit mask, the unseen cards as a 52-bit one); only the two shares
        are float32 divisions of those counts."""
        known = self._live.get(row)
        if known is not None:
            return known
        count = len(self.keys)
        subsets = self.subset_counts.shape[0]
        if self.cards is None:
            for each in range(3):
                self._live[each] = (np.ones((count, subsets), dtype=np.float32),
                                    None if each == 0 else
                                    np.zeros((count, subsets), dtype=np.float32))
            return self._live[row]
        unseen = self._unseen_bits()
        # the ranks of each subset of the street's cards (boards × subsets), as 13-bit masks:
        # the subsets with column d's card are those without it plus that card (index + 2^d)
        dealt_bits = np.take(_RANK_BIT, self.dealt)
        added = np.zeros((count, subsets), dtype=np.uint16)
        for column, member in enumerate(_subset_members(self.dealt.shape[1])):
            added |= dealt_bits[:, column, None] * member
        # every row at once (rows × boards × subsets): its ranks, with the unseen cards of
        # those ranks, the distinct ranks and the cards; the shares from a table
        masks = np.stack([np.take(_state_ranks(), self.row_state(each).state[:, 0])
                          for each in range(3)])[:, :, None] | added
        total = self.counts.T.astype(np.uint16)[:, :, None] + self.subset_counts.astype(
            np.uint16)
        code = np.take(_RANK_CARDS, masks)
        code &= unseen[:, None]
        code = np.bitwise_count(code).astype(np.uint16)  # the unseen cards of the row's ranks
        code <<= 8
        code |= np.left_shift(np.bitwise_count(masks), 4, dtype=np.uint16)
        code |= total
        live = np.take(_LIVE_SHARE, code)
        # five-card rows: the unseen cards of the row's one suit, by suit + 1 (a sentinel
        # where it has none: empty, -1, or mixed, 4)
        drawn = np.full((count, 6), _NO_SUIT, dtype=np.uint16)
        drawn[:, 1:5] = np.bitwise_count(unseen[:, None] & _SUIT_CARDS)
        first = np.arange(1, 6 * count, 6)[:, None]
        code = np.stack([np.take(drawn, self._row(each)[2] + first) for each in (1, 2)])
        code <<= 4
        code |= total[1:]
        drawn = np.take(_FLUSH_SHARE, code)
        self._live.update({0: (live[0], None), 1: (live[1], drawn[0]), 2: (live[2], drawn[1])})
        return self._live[row]

    def _live_fields(self, row: int, pick: Callable[[np.ndarray], np.ndarray],
                     shape: tuple[int, ...]) -> dict[str, np.ndarray]:
        """A row's live-card fields for the options that ``pick`` takes out of (boards ×
        subsets) arrays. Without the boards' ``cards`` (no bot reads them) they are the
        constants of :meth:`live_state`, made at the options' ``shape`` without a gather."""
        name = ROW_NAMES[row]
        if self.cards is None:
            fields = {f"{name}_live": np.ones(shape, dtype=np.float32)}
            if row > 0:
                fields[f"{name}_flush"] = np.zeros(shape, dtype=np.float32)
            return fields
        live, flush = self.live_state(row)
        fields = {f"{name}_live": pick(live)}
        if flush is not None:
            fields[f"{name}_flush"] = pick(flush)
        return fields

    @np.errstate(all="ignore")
    def options(
        self, variant: Variant, patterns: np.ndarray, subsets: np.ndarray, outlooks: RowOutlooks
    ) -> Options:
        """Every option (pattern) of the street for every board, with its rows' outlooks."""
        valid = np.ones((len(self.keys), len(patterns)), dtype=bool)
        fields: dict[str, np.ndarray] = {}
        for row, name in enumerate(ROW_NAMES):
            open_slots, fits, state, suited, _ = self.row_state(row)
            columns = subsets[:, row]
            valid &= fits[:, columns]
            fields[f"open_{name}"] = open_slots[:, columns]
            for field_name, values in _row_outlooks(row, variant, outlooks, state,
                                                    suited).items():
                fields[f"{name}_{field_name}"] = values[:, columns]
            fields.update(self._live_fields(row, lambda values, at=columns: values[:, at],
                                            fields[f"open_{name}"].shape))
        if "middle_qualify" not in fields:
            fields["middle_qualify"] = fields["middle_mean"]
        return Options(variant=variant, patterns=patterns, valid=valid, **fields)

    def valid(self, subsets: np.ndarray) -> np.ndarray:
        """Whether each option (boards × patterns) fits the rows' room: ``options().valid``
        without the outlooks."""
        valid = np.ones((len(self.keys), len(subsets)), dtype=bool)
        for row in range(3):
            valid &= self.row_state(row).fits[:, subsets[:, row]]
        return valid

    @np.errstate(all="ignore")
    def options_at(
        self, variant: Variant, patterns: np.ndarray, subsets: np.ndarray,
        outlooks: RowOutlooks, flat: np.ndarray,
    ) -> Options:
        """Some options only, as flat arrays: ``flat`` holds the positions of the options
        wanted in the boards × patterns grid of :meth:`options` (``board * patterns +
        pattern``), and every field holds exactly that option's value there (the same table
        entries), without building the options nobody asked for. ``valid`` is all true and
        ``patterns`` the street's patterns."""
        fields: dict[str, np.ndarray] = {}
        # each option's place in the boards × subsets arrays of a row (board * subsets +
        # the row's subset), so that every field is one gather of the options asked for
        board, pattern = np.divmod(flat, len(patterns))
        board *= self.subset_counts.shape[0]
        for row, name in enumerate(ROW_NAMES):
            at = np.take(subsets[:, row], pattern)
            at += board
            entries = np.take(self.row_state(row).entry, at)
            names, table = packed_outlooks(row, variant, outlooks)
            fields.update({f"open_{name}" if field == "open" else f"{name}_{field}":
                           np.take(table[column], entries)
                           for column, field in enumerate(names)})
            fields.update(self._live_fields(row, lambda values, at=at: np.take(values, at),
                                            flat.shape))
        if "middle_qualify" not in fields:
            fields["middle_qualify"] = fields["middle_mean"]
        return Options(variant=variant, patterns=patterns,
                       valid=np.ones(len(flat), dtype=bool), **fields)

    def after(self, chosen_subsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Keys, counts and suits of every row once each board's chosen option is placed."""
        # each board's chosen subset per row (boards × rows), as a place in boards × subsets
        at = chosen_subsets + np.arange(0, self.subset_keys.size, self.subset_keys.shape[1])[
            :, None]
        suits = _suits_after(self.suits, np.take(self.subset_suits, at))
        return (self.keys + np.take(self.subset_keys, at),
                self.counts + np.take(self.subset_counts, chosen_subsets), suits)


_PACKED: dict[tuple[int, int, Variant], tuple[RowOutlooks, tuple[str, ...], np.ndarray]] = {}


def packed_outlooks(row: int, variant: Variant,
                    outlooks: RowOutlooks) -> tuple[tuple[str, ...], np.ndarray]:
    """A row's outlook fields side by side, one table row per :attr:`RowState.entry` (a state
    id; for five-card rows 2 × id + suited): the field names (``open`` first, then as in
    :func:`_row_outlooks`) and the (fields, entries) float32 table, so that
    :meth:`StreetRows.options_at` gathers all of an option's row fields at once. Built once
    per process for each row, variant and outlook arrays."""
    key = (row, id(outlooks), variant)
    known = _PACKED.get(key)
    if known is None or known[0] is not outlooks:
        space = state_space()
        identities = np.arange(len(space.counts))
        if row == 0:
            state, suited = identities, None
        else:
            state, suited = np.repeat(identities, 2), np.tile(np.arange(2), len(identities))
        fields = {"open": (ROW_LENGTHS[row] - space.counts[state]).astype(np.float32),
                  **_row_outlooks(row, variant, outlooks, state, suited)}
        known = (outlooks, tuple(fields), np.stack(list(fields.values())))
        _PACKED[key] = known
    return known[1], known[2]


def _row_outlooks(row: int, variant: Variant, outlooks: RowOutlooks, state: np.ndarray,
                  suited: np.ndarray | None) -> dict[str, np.ndarray]:
    """The outlook fields of a row (0 top, 1 middle, 2 bottom) for an array of state ids (and,
    for five-card rows, whether each is suited), named as in :class:`Options` without the row's
    prefix."""
    if row == 0:
        return {
            "mean": outlooks.top_mean[state], "variance": outlooks.top_variance[state],
            "royalty": outlooks.top_royalty[state],
            "fantasyland": outlooks.top_fantasyland[state],
            "fantasyland_mean": outlooks.top_fantasyland_mean[state],
            "fantasyland_variance": outlooks.top_fantasyland_variance[state],
            "floor": outlooks.top_floor[state],
        }
    assert suited is not None
    fields = {
        "mean": outlooks.five_mean[state, suited],
        "variance": outlooks.five_variance[state, suited],
    }
    if row == 1:
        fields["floor"] = outlooks.five_floor[state]
    if row == 2:
        fields["royalty"] = outlooks.bottom_royalty[state, suited]
    elif variant is Variant.LOWBALL_PINEAPPLE:
        fields["royalty"] = outlooks.low_royalty[state, suited]
        fields["qualify"] = outlooks.low_qualify[state, suited]
    else:
        fields["royalty"] = outlooks.middle_royalty[state, suited]
    return fields


@cache
def order_within_rows(dealt: int, discards: int) -> np.ndarray:
    """For each street pattern (:func:`street_patterns`) and dealt card: how many earlier cards
    of the pattern go to its row."""
    patterns = street_patterns(dealt, discards)
    within = np.zeros_like(patterns)
    for column in range(patterns.shape[1]):
        within[:, column] = (patterns[:, :column] == patterns[:, column:column + 1]).sum(axis=1)
    return within


@cache
def _street_templates(dealt: int, discards: int) -> tuple[str, ...]:
    """The JSON of a street for each pattern, as ``str.format`` templates over the quoted cards
    (``{0}`` is the first dealt card): exactly what ``json.dumps`` writes for the street."""

    def fields(columns: Sequence[int]) -> str:
        """Format fields for the given dealt cards, comma-separated."""
        return ",".join(f"{{{column}}}" for column in columns)

    templates = []
    for pattern in street_patterns(dealt, discards).tolist():
        placed = ",".join(
            f'"{name}":[{fields([column for column, target in enumerate(pattern) if target == row])}]'
            for row, name in enumerate(ROW_NAMES) if row in pattern
        )
        discarded = fields([column for column, target in enumerate(pattern) if target < 0])
        templates.append(
            '{{"dealt":[' + fields(range(dealt)) + '],"placed":{{' + placed
            + '}},"discarded":[' + discarded + "]}}"
        )
    return tuple(templates)


def _finish_hands(hands: list[_Hand], variant: Variant, rules: RuleSet) -> None:
    """Judge and settle every hand of the step, write the records, move buttons and clocks."""
    boards = []
    flags = []
    seats = []
    for hand in hands:
        first = len(boards)
        for seat, rows in enumerate(hand.rows):
            assert rows is not None
            boards.append(rows[0] + rows[1] + rows[2])
            flags.append(bool(hand.session.fantasyland[seat]))
        seats.append([first + seat for seat in hand.order])
    verdicts = evaluate_boards(np.asarray(boards, dtype=np.intp), variant, rules,
                               np.asarray(flags, dtype=bool))
    points = settle_hands(verdicts, np.asarray(seats, dtype=np.intp), rules).tolist()
    fouls = verdicts.foul.tolist()
    royalties = verdicts.royalties.sum(axis=1).tolist()
    next_cards = verdicts.fantasyland_cards.tolist()
    variant_json = json.dumps(variant.value)
    rules_json = json.dumps(rules.name, ensure_ascii=False)
    board = 0
    for hand, hand_points in zip(hands, points, strict=True):
        session = hand.session
        plan = session.plan
        names = session.names_json
        by_seat = [0] * len(hand.rows)
        for position, seat in enumerate(hand.order):
            by_seat[seat] = hand_points[position]
        players = []
        played_fantasyland = any(session.fantasyland)
        tallies = session.result.tallies
        for seat, player in enumerate(plan.players):
            in_fantasyland = bool(session.fantasyland[seat])
            players.append(
                f'{{"name":{names[seat]},"seat":{seat + 1},'
                f'"fantasyland":{"true" if in_fantasyland else "false"},'
                f'"streets":[{hand.streets[seat]}],"reported_points":{by_seat[seat]}}}'
            )
            tallies.append(BoardTally(
                player.bot, player.name, in_fantasyland, fouls[board + seat],
                royalties[board + seat], next_cards[board + seat] > 0, by_seat[seat],
            ))
        hand_id = f"{plan.hand_prefix}-{plan.first_hand + session.played:06d}"
        session.result.lines.append(
            f'{{"hand_id":{json.dumps(hand_id, ensure_ascii=False)},"site":"{SITE}",'
            f'"table":{session.table_json},'
            f'"started_at":"{session.moment.strftime("%Y-%m-%dT%H:%M:%SZ")}",'
            f'"variant":{variant_json},"rules":{rules_json},"button":{names[session.button]},'
            f'"players":[{",".join(players)}]}}'
        )
        session.fantasyland = next_cards[board:board + len(hand.rows)]
        board += len(hand.rows)
        if not played_fantasyland:
            session.button = (session.button + 1) % len(hand.rows)
        session.played += 1
