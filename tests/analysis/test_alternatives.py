"""Legal alternatives and the pruning of symmetric ones."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from pipeline import store
from pipeline.analysis.alternatives import (
    apply_pattern,
    board_key,
    enumerate_alternatives,
    fits,
    street_patterns,
    symmetry_group,
)
from pipeline.analysis.decisions import decision_at, load_hands, select_hands
from pipeline.analysis.rollout import Rollouts
from pipeline.rules.cards import parse_cards
from pipeline.rules.ruleset import STANDARD

EMPTY = ((), (), ())


def test_an_opening_has_232_legal_placements() -> None:
    dealt = parse_cards("As Kd 7c 5h 2s")
    # 3^5 assignments minus those with 4 or 5 cards on the top: 243 - 5*2 - 1
    options = enumerate_alternatives(EMPTY, dealt, 0, (2, 2, 2, 1, 1), prune=False)
    assert options.legal == 232
    assert len(options.alternatives) == 232
    assert options.alternatives[options.chosen].pattern == (2, 2, 2, 1, 1)
    # five different ranks: no two placements leave the same board, nothing is merged
    assert len(enumerate_alternatives(EMPTY, dealt, 0, (2, 2, 2, 1, 1)).alternatives) == 232


def test_pineapple_street_alternatives_respect_room_and_discard_one() -> None:
    rows = (parse_cards("Ks 3h"), parse_cards("Qc Qd 4h 6s"), parse_cards("As Ad Ac 7s 7d"))
    dealt = parse_cards("Kh 2c 5d")
    options = enumerate_alternatives(rows, dealt, 1, (0, 1, -1), prune=False)
    patterns = {alternative.pattern for alternative in options.alternatives}
    # one card to the top, one to the middle, one discarded: 3 discards x 2 orders
    assert len(patterns) == 6
    for alternative in options.alternatives:
        assert len(alternative.discards) == 1
        assert tuple(len(row) for row in alternative.rows_after) == (3, 5, 5)


def test_identical_ranks_merge_where_no_flush_is_possible() -> None:
    rows = ((), parse_cards("Kd 9s"), parse_cards("Th"))
    dealt = parse_cards("Ah Ac 3d")
    options = enumerate_alternatives(rows, dealt, 1, (0, 1, -1))
    by_placement = {alternative.describe(): alternative for alternative in options.alternatives}
    # Ah top + Ac middle and Ac top + Ah middle: the middle holds two suits already, the top
    # never counts a flush -> one class of two placements
    merged = [a for a in options.alternatives if a.equivalents == 2 and "discard 3d" in a.describe()
              and sorted(a.placed[0] + a.placed[1]) == sorted(parse_cards("Ah Ac"))]
    assert len(merged) == 1
    assert options.alternatives[options.chosen].describe() == "top Ah · middle Ac · bottom – · discard 3d"
    # Ah or Ac to the bottom (one heart there): different flush chances, never merged
    assert "top – · middle Ac · bottom Ah · discard 3d" in by_placement
    assert "top – · middle Ah · bottom Ac · discard 3d" in by_placement
    assert sum(a.equivalents for a in options.alternatives) == options.legal


def test_every_class_is_one_board_state() -> None:
    rows = (parse_cards("Qs"), parse_cards("8c 8d"), parse_cards("2h 5h"))
    dealt = parse_cards("Qh Qd 9h")
    options = enumerate_alternatives(rows, dealt, 1, (0, 0, -1))
    keys = [board_key(alternative.rows_after) for alternative in options.alternatives]
    assert len(set(keys)) == len(keys)
    every = [pattern for pattern in street_patterns(3, 1) if fits(rows, pattern)]
    assert options.legal == len(every)
    assert {board_key(apply_pattern(rows, dealt, pattern)[0]) for pattern in every} == set(keys)


def test_suit_isomorphism_merges_mirror_placements() -> None:
    dealt = parse_cards("As Ah Kd 7c 2d")
    group = symmetry_group(dealt)
    assert sorted(group) == [(0, 1, 2, 3), (0, 1, 3, 2)]  # identity, hearts <-> spades
    plain = enumerate_alternatives(EMPTY, dealt, 0, (0, 1, 2, 2, 2))
    mirrored = enumerate_alternatives(EMPTY, dealt, 0, (0, 1, 2, 2, 2), group)
    assert len(mirrored.alternatives) < len(plain.alternatives)
    chosen = mirrored.alternatives[mirrored.chosen]
    assert chosen.pattern == (0, 1, 2, 2, 2) and chosen.equivalents == 2  # As/Ah swapped
    # an opponent's visible row that the permutation would move breaks the symmetry
    assert symmetry_group(dealt, [parse_cards("Qs")]) == ((0, 1, 2, 3),)


def test_merged_placements_roll_out_identically(simulated_db: Path) -> None:
    """Pruning is exact: every placement of a class is worth the same on every sample."""
    connection = store.connect(simulated_db, read_only=True)
    try:
        hands = load_hands(connection, select_hands(connection, limit=6))
    finally:
        connection.close()
    checked = 0
    for hand, street, seat in itertools.product(hands, (1, 2, 3, 4), (0, 1, 2)):
        if hand.seats[seat].fantasyland:
            continue
        decision = decision_at(hand, seat, street)
        everything = decision.alternatives(prune=False)
        classes: dict[tuple, list] = {}
        for alternative in everything.alternatives:
            classes.setdefault(board_key(alternative.rows_after), []).append(alternative)
        groups = [members for members in classes.values() if len(members) > 1]
        if not groups:
            continue
        rollouts = Rollouts(decision, STANDARD, 0, 6, seed=3)
        for members in groups:
            values = rollouts.values(members)
            assert np.array_equal(values, np.repeat(values[:1], len(members), axis=0))
            checked += 1
    assert checked >= 3
