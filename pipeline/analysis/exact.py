"""Exact endgames: every possible deal of the unseen cards, instead of random samples.

Late in a hand few cards are still to come. On the last street of a Pineapple hand the cards
still unknown to the deciding player are at most the street of each opponent who acts after
them (three cards each) from a dozen or two unseen cards; in Classic the last streets deal one
card a seat. When the number of distinct deals is small enough (:data:`DEFAULT_EXACT_LIMIT`),
the grader plays every alternative out on *every* deal once, each deal weighing the same, so
each alternative's value is an exact expectation: no sampling error, no winner's curse. The
grade says so (``exact = true``).

A deal is a set of cards per slot of the deal plan (:class:`~pipeline.analysis.decisions.DealPlan`:
this street's cards of each opponent still to act, then every later street seat by seat). The
order of the cards within a slot does not change what they are; each set is dealt once, in a
fixed order (ascending card codes). What the opponents then do is the rollout policy's play —
exact means "no sampling", not "no model": the value is exact *given* that the seats still to
play finish with the policy (a deterministic bot; a policy that uses chance is never enumerated).
An opponent in Fantasyland holds 13-17 unseen cards: such decisions are never enumerated.

The final street of the player who acts last has a single deal (nothing is unknown).
"""

from __future__ import annotations

import itertools
from functools import cache
from math import comb

import numpy as np

from pipeline.analysis.decisions import Decision

DEFAULT_EXACT_LIMIT = 40_000
"""Deals at most, for a decision to be enumerated (Pineapple's last street with two opponents
still to act has about 34,000)."""


def _slots(decision: Decision) -> list[int]:
    """The size of each slot of the deal plan, in deck order."""
    plan = decision.plan
    sizes = [size for _, _, size, _ in plan.current]
    sizes += [size for step in plan.future for _, _, size, _ in step]
    return sizes


def deal_count(decision: Decision) -> int | None:
    """How many distinct deals the unseen cards allow (None with an opponent in Fantasyland)."""
    if decision.plan.fantasyland:
        return None
    remaining = len(decision.unseen)
    count = 1
    for size in _slots(decision):
        count *= comb(remaining, size)
        remaining -= size
    return count


def enumerate_deals(decision: Decision, limit: int = DEFAULT_EXACT_LIMIT) -> np.ndarray | None:
    """Every distinct deal as an (outcomes, plan.cards) array of cards in the plan's positions,
    or None when there are more than ``limit`` (or an opponent is in Fantasyland).

    Each slot's cards are in ascending order; no card appears twice in a row of the array.
    """
    count = deal_count(decision)
    if count is None or count > limit:
        return None
    unseen = np.asarray(decision.unseen, dtype=np.int64)
    size_total = len(unseen)
    bits = np.left_shift(np.int64(1), np.arange(size_total, dtype=np.int64))
    chosen = np.zeros((1, 0), dtype=np.int64)  # positions into unseen
    used = np.zeros(1, dtype=np.int64)  # bitmask of positions dealt so far
    for size in _slots(decision):
        if size == 0:
            continue
        combos = np.asarray(
            _combinations(size_total, size), dtype=np.int64).reshape(-1, size)
        combo_masks = bits[combos].sum(axis=1)
        free = (used[:, None] & combo_masks[None, :]) == 0
        rows, picks = np.nonzero(free)
        chosen = np.concatenate([chosen[rows], combos[picks]], axis=1)
        used = used[rows] | combo_masks[picks]
    if chosen.shape[0] != count:
        raise AssertionError(f"enumerated {chosen.shape[0]} deals, expected {count}")
    return unseen[chosen]


@cache
def _combinations(total: int, size: int) -> tuple[tuple[int, ...], ...]:
    return tuple(itertools.combinations(range(total), size))
