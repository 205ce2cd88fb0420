"""Monte Carlo rollouts of one decision: every alternative played out on the same sampled futures.

**Rollout policy** (documented in schemas/database.md and docs of ``ofc analyze``):

* The unseen cards (:mod:`pipeline.analysis.decisions`) are shuffled and dealt in the real deal's
  structure: the Fantasyland opponents' hands, then this street's cards of the opponents who act
  after the player, then every later street seat by seat in action order.
* Every seat not in Fantasyland finishes its board with one simulator bot (default ``learned``,
  a linear scorer trained by expert iteration on this grader's own lookahead:
  :mod:`pipeline.simulate.learned`; before it, ``expert``), played through :class:`~pipeline.analysis.policy.ColumnPolicy`
  exactly as the simulator plays it. What a seat has seen (the learned policy's live-card
  features count it) is what was known at the decision: the player knows their cards, discards
  and the boards visible, an opponent the boards visible, and each adds its own discards as it
  plays (not the boards' later cards: a seat's play stays a function of its own board and
  cards, which the exact enumeration below relies on). An opponent in Fantasyland sets its
  cards as the exact setter (:func:`~pipeline.solver.fantasyland.solve_fantasyland`) sets
  them, as the simulator does, through its compiled twin
  (:func:`~pipeline.solver.fantasyland_kernel.solve_deals`: the same boards, all of a batch's
  deals in one call); as a deal still costs about 0.1 ms, each group of
  :data:`FANTASYLAND_GROUP` consecutive samples shares one Fantasyland deal (the other unseen
  cards are shuffled per sample).
* The finished boards are judged and settled in bulk by the batch rules core
  (:func:`~pipeline.rules.batch.evaluate_boards`, :func:`~pipeline.rules.batch.settle_hands`,
  caps included). A sample's value for the player is their settled points plus
  ``fantasyland_value`` when their board earns Fantasyland next hand (default 10 points, the
  simulator's value of a Fantasyland hand: :data:`~pipeline.solver.fantasyland.DEFAULT_STAY_VALUE`).

**Common random numbers:** sample ``j`` of a decision is the same shuffle for every alternative
(and the bots decide from cards and boards only, so the opponents' boards of sample ``j`` are the
same too): differences between alternatives carry far less noise than the values themselves.
Sample ``j`` is drawn from its own seed (run seed, hand, player, street), so results do not
depend on how many samples were drawn before, on the order of work or on the number of processes;
a later run with more rollouts adds samples ``n, n+1, ...``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from pipeline.analysis.alternatives import Alternative
from pipeline.analysis.decisions import Decision
from pipeline.analysis.policy import BoardBatch, ColumnPolicy
from pipeline.rules.batch import BoardColumns, evaluate_boards, score_pairs, settle_hands
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import RuleSet
from pipeline.simulate.bots import BOTS
from pipeline.solver.fantasyland import DEFAULT_STAY_VALUE
from pipeline.store import GRADER_POLICY

DEFAULT_POLICY = GRADER_POLICY
"""The rollout policy the grader plays by default: the store's (grades of another are outdated)."""
DEFAULT_FANTASYLAND_VALUE = float(DEFAULT_STAY_VALUE)
FANTASYLAND_GROUP = 4
"""Samples that share one deal of an opponent in Fantasyland (see :class:`Rollouts`)."""
MAX_BOARDS_PER_STEP = 8192
"""Player boards rolled out together (alternatives × samples), to bound memory."""


@cache
def column_policy(name: str, variant: Variant, rules: RuleSet) -> ColumnPolicy:
    """The column policy of a bot for a variant and rule set (one per process)."""
    return ColumnPolicy(name, variant, rules)


def prepare_policy(name: str, rules: RuleSet, variant: Variant = Variant.PINEAPPLE) -> bool:
    """Ready the rollout policy ``name`` in this process before grading: its column policy
    for ``variant`` (kept, :func:`column_policy`) plays an opening on one board
    (:meth:`ColumnPolicy.prepare`), which compiles (the first use after an install: about
    15 s) or loads a compiled play, and builds the outlook tables; and the compiled
    Fantasyland setter the rollouts set an opponent in Fantasyland with, likewise. Worker
    processes forked after it inherit all of it. Returns whether the policy has a compiled play."""
    from pipeline.solver.fantasyland_kernel import prepare  # compiled: numba

    column_policy(name, variant, rules).prepare()
    prepare()
    return hasattr(BOTS.get(name), "play_boards")


def _name_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


SELECTION = 0
"""Sample stream that chooses the best play (racing over every alternative)."""
EVALUATION = 1
"""Sample stream, independent of :data:`SELECTION`, that measures the chosen best play's value
and the loss (so that a choice made on noise cannot inflate them)."""


def sample_seed(seed: int, hand_key: int, player: str, street: int,
                stream: int = SELECTION) -> np.random.SeedSequence:
    """The seed sequence of a decision's samples in one stream (selection or evaluation)."""
    return np.random.SeedSequence(
        [int(seed) & 0xFFFFFFFFFFFFFFFF, int(hand_key) & 0xFFFFFFFFFFFFFFFF, _name_hash(player),
         int(street), int(stream)]
    )


@dataclass(slots=True)
class _Seat:
    """One opponent's finished boards in a set of samples: ``boards`` (distinct boards, (U, 13))
    with their verdicts, and ``index`` (per sample, the row of ``boards`` it got)."""

    seat: int
    in_fantasyland: bool
    boards: np.ndarray
    verdicts: BoardColumns
    index: np.ndarray


@dataclass(frozen=True, slots=True)
class _Opponents:
    seats: list[int]
    in_fantasyland: list[bool]
    entries: list[_Seat]

    @property
    def cards(self) -> list[np.ndarray]:
        """Per opponent seat: (samples, 13) finished boards."""
        return [entry.boards[entry.index] for entry in self.entries]


def _take(columns: BoardColumns, index: np.ndarray | slice) -> BoardColumns:
    """The verdicts of some boards."""
    return BoardColumns(columns.values[index], columns.classes[index], columns.foul[index],
                        columns.raw_royalties[index], columns.royalties[index],
                        columns.fantasyland_cards[index])


def _join(parts: Sequence[BoardColumns]) -> BoardColumns:
    """Verdicts one after the other."""
    if len(parts) == 1:
        return parts[0]
    return BoardColumns(*(np.concatenate([getattr(part, name) for part in parts])
                          for name in ("values", "classes", "foul", "raw_royalties", "royalties",
                                       "fantasyland_cards")))


_PACKED_CARDS = 10
"""The most cards a row may hold for :func:`_distinct` to pack it into one 64-bit key (6 bits a
card)."""


def _distinct(columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an (N, k) card array, in the rows' lexicographic order, and, per
    row, the index of its distinct row (k = 0: one empty row): what ``np.unique(columns,
    axis=0, return_inverse=True)`` gives. Rows of at most :data:`_PACKED_CARDS` card codes
    (-1 to 62) are packed into one integer each (the first card in the highest bits, so the
    integers sort as the rows do), which sorts about ten times faster than rows."""
    if columns.shape[1] == 0:
        return columns[:1], np.zeros(len(columns), dtype=np.intp)
    if columns.shape[1] <= _PACKED_CARDS and len(columns) and (
            columns.min() >= -1 and columns.max() <= 62):
        shifted = columns.astype(np.int64) + 1
        keys = shifted[:, 0].copy()
        for column in range(1, columns.shape[1]):
            keys <<= 6
            keys |= shifted[:, column]
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return columns[first], inverse.reshape(-1).astype(np.intp)
    unique, inverse = np.unique(columns, axis=0, return_inverse=True)
    return unique, inverse.reshape(-1).astype(np.intp)


class Rollouts:
    """The sampled futures ``lo .. hi - 1`` of one decision, and the alternatives' values on them.

    A decision's samples in one stream are drawn once and kept: :meth:`grow` adds samples
    ``hi, hi + 1, ...`` (the same ones a larger range would have held from the start), the
    opponents' boards and verdicts are played and judged once per sample, and every
    alternative's values are kept, so a racing step, the evaluation of the selected play and
    the policy's own play never play the same future twice.
    """

    def __init__(
        self,
        decision: Decision,
        rules: RuleSet,
        lo: int,
        hi: int,
        seed: int = 1,
        policy: str = DEFAULT_POLICY,
        fantasyland_value: float = DEFAULT_FANTASYLAND_VALUE,
        stream: int = SELECTION,
    ) -> None:
        if not 0 <= lo < hi:
            raise ValueError(f"bad sample range {lo}..{hi}")
        self._setup(decision, rules, policy, fantasyland_value)
        self.lo = self.hi = lo
        sequence = sample_seed(seed, decision.hand.hand_key, decision.player, decision.street,
                               stream)
        self._card_stream, self._chance_stream, self._fantasyland_stream = (
            np.random.default_rng(child) for child in sequence.spawn(3))
        self._fantasyland_cards = sum(size for _, _, size in decision.plan.fantasyland)
        self._group_hands = np.zeros((0, self._fantasyland_cards), dtype=np.int64)
        self._solved: dict[tuple[int, int], np.ndarray] = {}
        self._steps = 1 + len(decision.plan.future)
        unseen = len(decision.unseen)
        for start in range(0, lo, 4096):  # the samples before lo are skipped, not kept
            size = min(4096, lo - start)
            self._card_stream.random((size, unseen))
            self._chance_stream.random((size, self._steps, len(decision.hand.seats)))
        self.deck = np.zeros((0, unseen), dtype=np.int64)
        self.uniforms = np.zeros((0, self._steps, len(decision.hand.seats)))
        self.opponents = _Opponents([], [], [])
        self.grow(hi)

    def _setup(self, decision: Decision, rules: RuleSet, policy: str,
               fantasyland_value: float) -> None:
        self.decision = decision
        self.rules = rules
        self.fantasyland_value = float(fantasyland_value)
        self.variant = decision.hand.variant
        self.policy = column_policy(policy, self.variant, rules)
        self.enumerated_deals = False
        self._kept: dict[Alternative, tuple[int, np.ndarray]] = {}

    @classmethod
    def enumerated(
        cls,
        decision: Decision,
        rules: RuleSet,
        deals: np.ndarray,
        policy: str = DEFAULT_POLICY,
        fantasyland_value: float = DEFAULT_FANTASYLAND_VALUE,
    ) -> Rollouts:
        """Every deal of ``deals`` (an (outcomes, plan.cards) card array, one row per possible
        deal of the unseen cards, in the plan's positions) instead of random samples: the mean
        over the rows is the exact expectation (see :mod:`pipeline.analysis.exact`). The policy
        must not use chance (its random numbers are zeros).

        A seat's play depends only on its own board and the cards it is dealt, so each seat's
        streets are played once per distinct set of its own cards (on the last street with two
        opponents to act: 2 × 286 boards instead of 2 × 34,320), and each distinct board is
        judged once."""
        if decision.plan.fantasyland:
            raise ValueError("an opponent in Fantasyland is never enumerated")
        deals = np.ascontiguousarray(deals, dtype=np.int64)
        if deals.ndim != 2 or deals.shape[1] != decision.plan.cards or not len(deals):
            raise ValueError(f"expected ({decision.plan.cards}-card) deals, got {deals.shape}")
        self = cls.__new__(cls)
        self._setup(decision, rules, policy, fantasyland_value)
        if self.policy.bot.uses_chance:
            raise ValueError(f"policy {policy!r} uses chance: it cannot be enumerated")
        self.enumerated_deals = True
        self.lo, self.hi = 0, len(deals)
        self.deck = deals
        self._steps = 1 + len(decision.plan.future)
        self.uniforms = np.zeros((len(deals), self._steps, len(decision.hand.seats)))
        self.opponents = self._play_opponents(deals, self.uniforms, 0)
        return self

    @property
    def samples(self) -> int:
        """Number of samples held."""
        return self.hi - self.lo

    def grow(self, hi: int) -> None:
        """Hold samples up to ``hi`` (exclusive): the next samples of the stream, drawn and
        played by the opponents now."""
        if self.enumerated_deals:
            if hi > self.hi:
                raise ValueError("every deal is already held")
            return
        if hi <= self.hi:
            return
        decision = self.decision
        first, count = self.hi, hi - self.hi
        unseen = np.asarray(decision.unseen, dtype=np.int64)
        keys = self._card_stream.random((count, len(unseen)))
        fantasyland_cards = self._fantasyland_cards
        if fantasyland_cards:
            # Opponents in Fantasyland: one deal per group of FANTASYLAND_GROUP samples (the
            # exact setter costs milliseconds); those cards go first, the rest follow in the
            # sample's own random order.
            groups = (hi + FANTASYLAND_GROUP - 1) // FANTASYLAND_GROUP
            drawn = len(self._group_hands)
            if groups > drawn:
                group_keys = self._fantasyland_stream.random((groups - drawn, len(unseen)))
                self._group_hands = np.concatenate([
                    self._group_hands,
                    np.argsort(group_keys, axis=1, kind="stable")[:, :fantasyland_cards]])
            group_of = np.arange(first, hi) // FANTASYLAND_GROUP
            rows = np.repeat(np.arange(count), fantasyland_cards)
            # negative keys, increasing in the group deal's own random order: those cards come
            # first, in that order (so several Fantasyland opponents split them at random)
            order = np.linspace(-2.0, -1.0, fantasyland_cards, endpoint=False)
            keys[rows, self._group_hands[group_of].ravel()] = np.tile(order, count)
        # (samples, unseen). Quicksort, about twice as fast as a stable sort on rows this
        # short, gives the same order unless two keys tie: uniform doubles (multiples of 2**-53)
        # tie about once in 10**13 samples, the Fantasyland cards' negative keys never
        deck = unseen[np.argsort(keys, axis=1, kind="quicksort")]
        uniforms = self._chance_stream.random((count, self._steps, len(decision.hand.seats)))
        played = self._play_opponents(deck, uniforms, first)
        if self.hi == self.lo:
            self.deck, self.uniforms, self.opponents = deck, uniforms, played
        else:
            self.deck = np.concatenate([self.deck, deck])
            self.uniforms = np.concatenate([self.uniforms, uniforms])
            entries = []
            for old, new in zip(self.opponents.entries, played.entries, strict=True):
                offset = len(old.boards)
                entries.append(_Seat(old.seat, old.in_fantasyland,
                                     np.concatenate([old.boards, new.boards]),
                                     _join([old.verdicts, new.verdicts]),
                                     np.concatenate([old.index, new.index + offset])))
            self.opponents = _Opponents(self.opponents.seats, self.opponents.in_fantasyland,
                                        entries)
        self.hi = hi

    def _play_opponents(self, deck: np.ndarray, uniforms: np.ndarray, first: int) -> _Opponents:
        """Every opponent's finished boards on these samples (``first``: the number of the first
        one), judged."""
        decision = self.decision
        plan = decision.plan
        count = len(deck)
        entries: list[_Seat] = []
        table = [card for rows in decision.visible if rows is not None
                 for row in rows for card in row]  # what every seat sees at the decision
        if plan.fantasyland:
            from pipeline.solver.fantasyland_kernel import solve_deals  # compiled: numba

            groups = (first + np.arange(count)) // FANTASYLAND_GROUP
            lowest = int(groups[0])
            # the groups here, lowest on, and each one's first sample here (a group's samples
            # share its Fantasyland cards)
            here = range(lowest, int(groups[-1]) + 1)
            leaders = np.maximum(np.asarray(here) * FANTASYLAND_GROUP - first, 0)
        for seat, start, size in plan.fantasyland:
            missing = [group for group in here if (seat, group) not in self._solved]
            if missing:
                at = leaders[np.asarray(missing) - lowest]
                solved = solve_deals(deck[at, start:start + size], self.variant, self.rules,
                                     self.fantasyland_value)
                self._solved.update(zip([(seat, group) for group in missing], solved,
                                        strict=True))
            by_group = np.stack([self._solved[(seat, group)] for group in here])
            boards = by_group[groups - lowest]
            entries.append(self._judged(seat, True, boards, np.arange(count)))
        for seat, rows in enumerate(decision.visible):
            if rows is None or seat == decision.hero:
                continue
            steps = [(0, entry) for entry in plan.current if entry[0] == seat]
            steps += [(step, entry) for step, entries_ in enumerate(plan.future, 1)
                      for entry in entries_ if entry[0] == seat]
            if self.enumerated_deals:  # one play per distinct set of the seat's own cards
                columns = np.concatenate(
                    [deck[:, start:start + size] for _, (_, start, size, _) in steps]
                    or [deck[:, :0]], axis=1)
                own, index = _distinct(columns)
                own_uniforms = np.zeros((len(own), self._steps, uniforms.shape[2]))
            else:
                columns = None
                own, index, own_uniforms = deck, np.arange(count), uniforms
            batch = BoardBatch.from_rows([rows], [table]).repeat(len(own))
            offset = 0
            for step, (_, start, size, discards) in steps:
                dealt = (own[:, offset:offset + size] if columns is not None
                         else own[:, start:start + size])
                offset += size
                self.policy.play_street(batch, dealt, discards, own_uniforms[:, step, seat])
            entries.append(self._judged(seat, False, batch.cards, index))
        return _Opponents([entry.seat for entry in entries],
                          [entry.in_fantasyland for entry in entries], entries)

    def _judged(self, seat: int, in_fantasyland: bool, boards: np.ndarray,
                index: np.ndarray) -> _Seat:
        verdicts = evaluate_boards(boards, self.variant, self.rules,
                                   np.full(len(boards), in_fantasyland))
        return _Seat(seat, in_fantasyland, boards, verdicts, index)

    def values(self, alternatives: Sequence[Alternative], lo: int | None = None,
               hi: int | None = None) -> np.ndarray:
        """The player's value of each alternative on samples ``lo .. hi - 1``: (alternatives,
        samples). Values already worked out for an alternative are reused."""
        lo = self.lo if lo is None else lo
        hi = self.hi if hi is None else hi
        if not self.lo <= lo < hi <= self.hi:
            raise ValueError(f"samples {lo}..{hi} are outside {self.lo}..{self.hi}")
        result = np.empty((len(alternatives), hi - lo))
        wanted: dict[int, list[int]] = {}  # first sample still to work out -> positions
        for position, alternative in enumerate(alternatives):
            kept = self._kept.get(alternative)
            if kept is not None and kept[0] <= lo <= kept[0] + len(kept[1]):
                start, values = kept
                if start + len(values) >= hi:
                    result[position] = values[lo - start:hi - start]
                    continue
                wanted.setdefault(start + len(values), []).append(position)
            else:
                self._kept.pop(alternative, None)
                wanted.setdefault(lo, []).append(position)
        for begin, positions in wanted.items():
            items = [alternatives[position] for position in positions]
            count = hi - begin
            per_step = max(1, MAX_BOARDS_PER_STEP // count)
            fresh = np.concatenate([
                self._values(items[start:start + per_step], begin - self.lo, hi - self.lo)
                for start in range(0, len(items), per_step)
            ], axis=0)
            for row, (position, alternative) in enumerate(zip(positions, items, strict=True)):
                kept = self._kept.get(alternative)
                if kept is not None:
                    start, values = kept
                    values = np.concatenate([values, fresh[row]])
                else:
                    start, values = begin, fresh[row]
                self._kept[alternative] = (start, values)
                result[position] = values[lo - start:hi - start]
        return result

    def _values(self, alternatives: Sequence[Alternative], first: int, last: int) -> np.ndarray:
        decision = self.decision
        hero = decision.hero
        count = last - first
        repeats = len(alternatives)
        steps = [(step, entry) for step, entries in enumerate(decision.plan.future, 1)
                 for entry in entries if entry[0] == hero]
        deck = self.deck[first:last]
        if self.enumerated_deals:  # one play per distinct set of the player's own cards
            columns = np.concatenate(
                [deck[:, start:start + size] for _, (_, start, size, _) in steps]
                or [deck[:, :0]], axis=1)
            own, own_index = _distinct(columns)
            own_uniforms = np.zeros((len(own), self._steps, self.uniforms.shape[2]))
        else:
            columns = None
            own, own_index, own_uniforms = deck, None, self.uniforms[first:last]
        distinct = len(own)
        boards = BoardBatch.from_rows([alternative.rows_after for alternative in alternatives],
                                      [decision.known] * len(alternatives))
        boards = boards.repeat(distinct)
        offset = 0
        for step, (seat, start, size, discards) in steps:
            cards = own[:, offset:offset + size] if columns is not None else own[:, start:start + size]
            offset += size
            dealt = np.tile(cards, (repeats, 1))
            uniforms = np.tile(own_uniforms[:, step, seat], repeats)
            self.policy.play_street(boards, dealt, discards, uniforms)
        hero_verdicts = evaluate_boards(boards.cards, self.variant, self.rules)
        player_boards = repeats * count
        if own_index is None:
            hero_rows = np.arange(player_boards)
        else:
            hero_rows = (np.arange(repeats)[:, None] * distinct + own_index[None, :]).ravel()
            if not self.rules.scoring.cap:
                grid = self._grid_values(hero_verdicts, hero_rows, first, last)
                if grid is not None:
                    return grid.reshape(repeats, count)
        parts = [hero_verdicts]
        seats = np.empty((player_boards, len(decision.hand.seats)), dtype=np.intp)
        seats[:, hero] = hero_rows
        base = len(boards)
        for entry in self.opponents.entries:
            index = entry.index[first:last]
            if self.enumerated_deals:
                parts.append(entry.verdicts)
                seats[:, entry.seat] = base + np.tile(index, repeats)
                base += len(entry.boards)
            else:  # one board per sample
                parts.append(_take(entry.verdicts, slice(first, last)))
                seats[:, entry.seat] = base + np.tile(np.arange(count), repeats)
                base += count
        verdicts = _join(parts)
        points = settle_hands(verdicts, seats, self.rules)[:, hero].astype(np.float64)
        bonus = (hero_verdicts.fantasyland_cards[hero_rows] > 0) * self.fantasyland_value
        return (points + bonus).reshape(repeats, count)

    def _grid_values(self, hero: BoardColumns, hero_rows: np.ndarray, first: int,
                     last: int) -> np.ndarray | None:
        """Enumerated deals without a cap: the player's points are the sum of their pairs'
        (a pair's outcome does not depend on the third seat), so each pair of distinct boards
        is scored once and the deals add them up. None when the pairs would outnumber the
        deals' rows (then the deals are settled one by one)."""
        pairs = sum(len(hero) * len(entry.boards) for entry in self.opponents.entries)
        if pairs > len(hero_rows):
            return None
        points = np.zeros(len(hero_rows), dtype=np.float64)
        every = np.arange(len(hero))
        for entry in self.opponents.entries:
            both = _join([hero, entry.verdicts])
            opponents = len(entry.boards)
            mine = np.repeat(every, opponents)
            theirs = len(hero) + np.tile(np.arange(opponents), len(hero))
            scored = score_pairs(both, mine, theirs, self.rules).points.reshape(len(hero),
                                                                                opponents)
            index = np.tile(entry.index[first:last], len(hero_rows) // (last - first))
            points += scored[hero_rows, index]
        bonus = (hero.fantasyland_cards[hero_rows] > 0) * self.fantasyland_value
        return points + bonus
