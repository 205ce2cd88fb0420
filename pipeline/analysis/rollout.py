"""Monte Carlo rollouts of one decision: every alternative played out on the same sampled futures.

**Rollout policy** (documented in schemas/database.md and docs of ``ofc analyze``):

* The unseen cards (:mod:`pipeline.analysis.decisions`) are shuffled and dealt in the real deal's
  structure: the Fantasyland opponents' hands, then this street's cards of the opponents who act
  after the player, then every later street seat by seat in action order.
* Every seat not in Fantasyland finishes its board with one simulator bot (default ``expert``,
  solid's heuristic with weights tuned by simulation: :mod:`pipeline.simulate.bots`), played through :class:`~pipeline.analysis.policy.ColumnPolicy`
  exactly as the simulator plays it. An opponent in Fantasyland sets its cards with the exact
  setter (:func:`~pipeline.solver.fantasyland.solve_fantasyland`), as the simulator does; as
  that costs milliseconds, each group of :data:`FANTASYLAND_GROUP` consecutive samples shares
  one Fantasyland deal (the other unseen cards are shuffled per sample).
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
from pipeline.rules.batch import evaluate_boards, settle_hands
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import RuleSet
from pipeline.solver.fantasyland import DEFAULT_STAY_VALUE, solve_fantasyland

DEFAULT_POLICY = "expert"
DEFAULT_FANTASYLAND_VALUE = float(DEFAULT_STAY_VALUE)
FANTASYLAND_GROUP = 4
"""Samples that share one deal of an opponent in Fantasyland (see :class:`Rollouts`)."""
MAX_BOARDS_PER_STEP = 8192
"""Player boards rolled out together (alternatives × samples), to bound memory."""


@cache
def column_policy(name: str, variant: Variant, rules: RuleSet) -> ColumnPolicy:
    """The column policy of a bot for a variant and rule set (one per process)."""
    return ColumnPolicy(name, variant, rules)


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


@dataclass(frozen=True, slots=True)
class _Opponents:
    cards: list[np.ndarray]  # per opponent seat: (samples, 13) finished boards
    seats: list[int]
    in_fantasyland: list[bool]


class Rollouts:
    """The sampled futures ``lo .. hi - 1`` of one decision, and the alternatives' values on them."""

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
        self.decision = decision
        self.rules = rules
        self.lo = lo
        self.hi = hi
        self.fantasyland_value = float(fantasyland_value)
        variant = decision.hand.variant
        self.variant = variant
        self.policy = column_policy(policy, variant, rules)
        sequence = sample_seed(seed, decision.hand.hand_key, decision.player, decision.street,
                               stream)
        card_stream, chance_stream, fantasyland_stream = (
            np.random.default_rng(child) for child in sequence.spawn(3))
        unseen = np.asarray(decision.unseen, dtype=np.int64)
        keys = card_stream.random((hi, len(unseen)))[lo:hi]
        fantasyland_cards = sum(size for _, _, size in decision.plan.fantasyland)
        if fantasyland_cards:
            # Opponents in Fantasyland: one deal per group of FANTASYLAND_GROUP samples (the
            # exact setter costs milliseconds); those cards go first, the rest follow in the
            # sample's own random order.
            groups = (hi + FANTASYLAND_GROUP - 1) // FANTASYLAND_GROUP
            group_keys = fantasyland_stream.random((groups, len(unseen)))
            group_hands = np.argsort(group_keys, axis=1, kind="stable")[:, :fantasyland_cards]
            group_of = np.arange(lo, hi) // FANTASYLAND_GROUP
            keys = keys.copy()
            rows = np.repeat(np.arange(hi - lo), fantasyland_cards)
            # negative keys, increasing in the group deal's own random order: those cards come
            # first, in that order (so several Fantasyland opponents split them at random)
            order = np.linspace(-2.0, -1.0, fantasyland_cards, endpoint=False)
            keys[rows, group_hands[group_of].ravel()] = np.tile(order, hi - lo)
        self.deck = unseen[np.argsort(keys, axis=1, kind="stable")]  # (samples, unseen)
        steps = 1 + len(decision.plan.future)
        self.uniforms = chance_stream.random((hi, steps, len(decision.hand.seats)))[lo:hi]
        self.opponents = self._play_opponents()

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
        must not use chance (its random numbers are zeros)."""
        if decision.plan.fantasyland:
            raise ValueError("an opponent in Fantasyland is never enumerated")
        deals = np.ascontiguousarray(deals, dtype=np.int64)
        if deals.ndim != 2 or deals.shape[1] != decision.plan.cards or not len(deals):
            raise ValueError(f"expected ({decision.plan.cards}-card) deals, got {deals.shape}")
        self = cls.__new__(cls)
        self.decision = decision
        self.rules = rules
        self.lo, self.hi = 0, len(deals)
        self.fantasyland_value = float(fantasyland_value)
        self.variant = decision.hand.variant
        self.policy = column_policy(policy, self.variant, rules)
        if self.policy.bot.uses_chance:
            raise ValueError(f"policy {policy!r} uses chance: it cannot be enumerated")
        self.deck = deals
        steps = 1 + len(decision.plan.future)
        self.uniforms = np.zeros((len(deals), steps, len(decision.hand.seats)))
        self.opponents = self._play_opponents()
        return self

    @property
    def samples(self) -> int:
        """Number of samples held."""
        return self.hi - self.lo

    def _play_opponents(self) -> _Opponents:
        decision = self.decision
        plan = decision.plan
        count = self.samples
        cards: list[np.ndarray] = []
        seats: list[int] = []
        flags: list[bool] = []
        for seat, start, size in plan.fantasyland:
            boards = np.empty((count, 13), dtype=np.int64)
            solved: dict[int, tuple[int, ...]] = {}
            for sample in range(count):
                group = (self.lo + sample) // FANTASYLAND_GROUP
                if group not in solved:
                    arrangement = solve_fantasyland(
                        self.deck[sample, start:start + size].tolist(), self.variant, self.rules,
                        self.fantasyland_value,
                    )
                    solved[group] = arrangement.top + arrangement.middle + arrangement.bottom
                boards[sample] = solved[group]
            cards.append(boards)
            seats.append(seat)
            flags.append(True)
        for seat, rows in enumerate(decision.visible):
            if rows is None or seat == decision.hero:
                continue
            batch = BoardBatch.from_rows([rows]).repeat(count)
            for entry_seat, start, size, discards in plan.current:
                if entry_seat == seat:
                    self.policy.play_street(
                        batch, self.deck[:, start:start + size], discards, self.uniforms[:, 0, seat]
                    )
            for step, entries in enumerate(plan.future, 1):
                for entry_seat, start, size, discards in entries:
                    if entry_seat == seat:
                        self.policy.play_street(
                            batch, self.deck[:, start:start + size], discards,
                            self.uniforms[:, step, seat],
                        )
            cards.append(batch.cards)
            seats.append(seat)
            flags.append(False)
        return _Opponents(cards, seats, flags)

    def values(self, alternatives: Sequence[Alternative], lo: int | None = None,
               hi: int | None = None) -> np.ndarray:
        """The player's value of each alternative on samples ``lo .. hi - 1``: (alternatives, samples)."""
        lo = self.lo if lo is None else lo
        hi = self.hi if hi is None else hi
        if not self.lo <= lo < hi <= self.hi:
            raise ValueError(f"samples {lo}..{hi} are outside {self.lo}..{self.hi}")
        count = hi - lo
        per_step = max(1, MAX_BOARDS_PER_STEP // count)
        parts = [
            self._values(alternatives[start:start + per_step], lo - self.lo, hi - self.lo)
            for start in range(0, len(alternatives), per_step)
        ]
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, count))

    def _values(self, alternatives: Sequence[Alternative], first: int, last: int) -> np.ndarray:
        decision = self.decision
        hero = decision.hero
        count = last - first
        boards = BoardBatch.from_rows([alternative.rows_after for alternative in alternatives])
        boards = boards.repeat(count)
        repeats = len(alternatives)
        for step, entries in enumerate(decision.plan.future, 1):
            for seat, start, size, discards in entries:
                if seat != hero:
                    continue
                dealt = np.tile(self.deck[first:last, start:start + size], (repeats, 1))
                uniforms = np.tile(self.uniforms[first:last, step, seat], repeats)
                self.policy.play_street(boards, dealt, discards, uniforms)
        player_boards = len(boards)
        opponents = self.opponents
        all_cards = np.concatenate(
            [boards.cards, *(cards[first:last] for cards in opponents.cards)], axis=0
        )
        flags = np.zeros(len(all_cards), dtype=bool)
        seats = np.empty((player_boards, len(decision.hand.seats)), dtype=np.intp)
        seats[:, hero] = np.arange(player_boards)
        sample_of = np.arange(player_boards) % count
        base = player_boards
        for seat, in_fantasyland in zip(opponents.seats, opponents.in_fantasyland, strict=True):
            seats[:, seat] = base + sample_of
            flags[base:base + count] = in_fantasyland
            base += count
        verdicts = evaluate_boards(all_cards, self.variant, self.rules, flags)
        points = settle_hands(verdicts, seats, self.rules)[:, hero].astype(np.float64)
        bonus = (verdicts.fantasyland_cards[:player_boards] > 0) * self.fantasyland_value
        return (points + bonus).reshape(repeats, count)
