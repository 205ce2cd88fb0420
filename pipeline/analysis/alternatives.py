"""The legal alternatives at a decision, and pruning of the ones that are worth exactly the same.

A decision is one street of one player: the cards dealt on it go to rows with room (Pineapple:
all but one; the other is discarded). An *alternative* is one such assignment, written as a
*pattern*: for each dealt card its row (0 top, 1 middle, 2 bottom) or -1 for the discard.

Symmetric alternatives are pruned exactly (each class is rolled out once, through one
representative, and remembers how many placements it stands for):

* **identical-rank swaps / suits that cannot matter.** What an alternative changes is the
  player's own board (the set of known cards, and so the unseen deck, is the same whichever
  way the street is played). A row's future and final value depend only on its rank multiset
  and, for a middle or bottom that is still all of one suit, that suit. A top never counts a
  flush and a row holding two suits can no longer make one, so the suits of their cards do not
  matter: two alternatives whose rows agree on (ranks, one-suit state) are worth exactly the
  same — sample by sample under the rollout policy too, whose bots see rows the same way.
* **suit isomorphism.** A permutation of the suits that maps every known card set onto itself
  (the known cards as a whole, and each visible row of every opponent) maps the position onto
  itself; alternatives that it maps onto each other are worth the same in expectation.

The canonical key of an alternative is the smallest (rank multisets, one-suit states) of its
board over that group of suit permutations.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from pipeline.rules.cards import Card, card_text
from pipeline.rules.game import ROW_LENGTHS

ROW_NAMES = ("top", "middle", "bottom")
DISCARD = -1
MIXED = 4
"""Suit state of a row holding two or more suits (-1: empty row, 0-3: all of that suit)."""

Rows = tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]
Pattern = tuple[int, ...]


@cache
def street_patterns(dealt: int, discards: int) -> tuple[Pattern, ...]:
    """Every way to send ``dealt`` cards to a row (0, 1, 2) or the discard (-1), with exactly
    ``discards`` discarded, in a fixed order (discards first, then top, middle, bottom)."""
    return tuple(
        pattern for pattern in itertools.product((DISCARD, 0, 1, 2), repeat=dealt)
        if pattern.count(DISCARD) == discards
    )


def fits(rows: Rows, pattern: Pattern) -> bool:
    """True when every row has room for the cards the pattern sends to it."""
    return all(len(rows[row]) + pattern.count(row) <= ROW_LENGTHS[row] for row in range(3))


def apply_pattern(rows: Rows, dealt: Sequence[Card], pattern: Pattern) -> tuple[Rows, tuple[Card, ...]]:
    """The rows after the street and the discarded cards."""
    new_rows = [list(row) for row in rows]
    thrown = []
    for card, row in zip(dealt, pattern, strict=True):
        if row == DISCARD:
            thrown.append(card)
        else:
            new_rows[row].append(card)
    return (tuple(new_rows[0]), tuple(new_rows[1]), tuple(new_rows[2])), tuple(thrown)


def suit_state(cards: Iterable[Card]) -> int:
    """-1 for no cards, the suit when all cards share it, :data:`MIXED` otherwise."""
    suits = {card & 3 for card in cards}
    if not suits:
        return -1
    return suits.pop() if len(suits) == 1 else MIXED


_PERMUTATIONS = tuple(itertools.permutations(range(4)))


def _permute(card: Card, permutation: Sequence[int]) -> Card:
    return (card & ~3) | permutation[card & 3]


def symmetry_group(known: Iterable[Card], fixed_sets: Iterable[Iterable[Card]] = ()) -> tuple[tuple[int, ...], ...]:
    """Suit permutations that map the known cards, and each of ``fixed_sets``, onto themselves."""
    known_set = frozenset(known)
    sets = [frozenset(cards) for cards in fixed_sets]
    group = []
    for permutation in _PERMUTATIONS:
        if frozenset(_permute(card, permutation) for card in known_set) != known_set:
            continue
        if all(frozenset(_permute(card, permutation) for card in cards) == cards for cards in sets):
            group.append(permutation)
    return tuple(group)


def board_key(rows: Rows, permutation: Sequence[int] = (0, 1, 2, 3)) -> tuple:
    """What the future of a board depends on: rank multisets, and the one-suit state of the
    middle and bottom (suits relabelled by ``permutation``)."""
    key: list[tuple] = [tuple(sorted(card >> 2 for card in rows[0]))]
    for row in (1, 2):
        state = suit_state(rows[row])
        if 0 <= state < 4:
            state = permutation[state]
        key.append((tuple(sorted(card >> 2 for card in rows[row])), state))
    return tuple(key)


def canonical_key(rows: Rows, group: Sequence[Sequence[int]]) -> tuple:
    """The smallest :func:`board_key` of the board over the suit permutations of ``group``."""
    return min(board_key(rows, permutation) for permutation in group or ((0, 1, 2, 3),))


@dataclass(frozen=True, slots=True)
class Alternative:
    """One class of equivalent placements, played through its representative ``pattern``."""

    pattern: Pattern
    rows_after: Rows
    placed: Rows  # the cards this street sends to each row
    discards: tuple[Card, ...]
    equivalents: int  # legal placements in the class (1 when nothing was pruned)

    def describe(self) -> str:
        """``top Qs · middle 7c 7s · bottom – · discard 3d`` (cards this street)."""
        parts = [
            f"{name} {' '.join(card_text(card) for card in cards) or '–'}"
            for name, cards in zip(ROW_NAMES, self.placed, strict=True)
        ]
        if self.discards:
            parts.append("discard " + " ".join(card_text(card) for card in self.discards))
        return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class AlternativeSet:
    """The distinct alternatives of a decision; ``chosen`` indexes the one the player made."""

    alternatives: tuple[Alternative, ...]
    chosen: int
    legal: int  # legal placements before pruning


def enumerate_alternatives(
    rows: Rows,
    dealt: Sequence[Card],
    discards: int,
    chosen_pattern: Pattern,
    group: Sequence[Sequence[int]] = ((0, 1, 2, 3),),
    prune: bool = True,
) -> AlternativeSet:
    """Every legal way to play ``dealt`` on ``rows``, equivalent ones merged (see the module).

    The chosen placement represents its own class. Raises ValueError when the chosen pattern
    is not legal.
    """
    if not fits(rows, chosen_pattern) or chosen_pattern.count(DISCARD) != discards:
        raise ValueError("the chosen placement does not fit the board")
    classes: dict[tuple, list[Pattern]] = {}
    order: list[tuple] = []
    chosen_key = None
    for pattern in street_patterns(len(dealt), discards):
        if not fits(rows, pattern):
            continue
        after, _ = apply_pattern(rows, dealt, pattern)
        key = canonical_key(after, group) if prune else pattern
        if key not in classes:
            classes[key] = []
            order.append(key)
        classes[key].append(pattern)
        if pattern == tuple(chosen_pattern):
            chosen_key = key
    alternatives = []
    chosen_index = -1
    for index, key in enumerate(order):
        members = classes[key]
        representative = tuple(chosen_pattern) if key == chosen_key else members[0]
        after, thrown = apply_pattern(rows, dealt, representative)
        placed, _ = apply_pattern(((), (), ()), dealt, representative)
        alternatives.append(Alternative(representative, after, placed, thrown, len(members)))
        if key == chosen_key:
            chosen_index = index
    return AlternativeSet(tuple(alternatives), chosen_index, sum(len(v) for v in classes.values()))
