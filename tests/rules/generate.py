"""Seeded board generators for the property tests: random boards dealt from a shuffled deck, and
boards built to hit every row class (straights, flushes, full houses, quads, straight flushes,
royals, top trips and pairs, every 2-7 low), fouls and ties. Cards are codes rank * 4 + suit."""

from __future__ import annotations

import random
from collections.abc import Sequence

from tests.rules import reference

FIVE_CARD_KINDS = (
    "high_card", "pair", "two_pair", "trips", "straight", "flush", "full_house", "quads",
    "straight_flush", "royal_flush",
)
TOP_KINDS = ("top_high", "top_pair", "top_trips")
LOW_KINDS = ("ten_low", "nine_low", "eight_low", "seven_low", "perfect_low")


def _card(rank: int, suit: int) -> int:
    return rank * 4 + suit


def _is_straight(ranks: Sequence[int]) -> bool:
    ordered = sorted(set(ranks))
    return len(ordered) == 5 and (ordered[4] - ordered[0] == 4 or ordered == [0, 1, 2, 3, 12])


def _mixed_suits(rng: random.Random, count: int) -> list[int]:
    while True:
        suits = [rng.randrange(4) for _ in range(count)]
        if count < 5 or len(set(suits)) > 1:
            return suits


def _distinct_suits(rng: random.Random, count: int) -> list[int]:
    return rng.sample(range(4), count)


def row_of_kind(rng: random.Random, kind: str) -> list[int]:
    """Cards of one row of the given kind (may reuse cards of other rows: callers check)."""
    if kind in ("straight", "straight_flush", "royal_flush"):
        if kind == "royal_flush":
            high = 12
        elif kind == "straight_flush":
            high = rng.randrange(3, 12)
        else:
            high = rng.randrange(3, 13)
        ranks = [12, 0, 1, 2, 3] if high == 3 else list(range(high - 4, high + 1))
        suits = _mixed_suits(rng, 5) if kind == "straight" else [rng.randrange(4)] * 5
        return [_card(r, s) for r, s in zip(ranks, suits, strict=True)]
    if kind == "flush":
        while True:
            ranks = rng.sample(range(13), 5)
            if not _is_straight(ranks):
                suit = rng.randrange(4)
                return [_card(r, suit) for r in ranks]
    if kind == "full_house":
        big, small = rng.sample(range(13), 2)
        return [_card(big, s) for s in _distinct_suits(rng, 3)] + [
            _card(small, s) for s in _distinct_suits(rng, 2)
        ]
    if kind == "quads":
        big, kicker = rng.sample(range(13), 2)
        return [_card(big, s) for s in range(4)] + [_card(kicker, rng.randrange(4))]
    if kind == "trips":
        big, a, b = rng.sample(range(13), 3)
        return [_card(big, s) for s in _distinct_suits(rng, 3)] + [
            _card(a, rng.randrange(4)), _card(b, rng.randrange(4))
        ]
    if kind == "two_pair":
        p, q, k = rng.sample(range(13), 3)
        return (
            [_card(p, s) for s in _distinct_suits(rng, 2)]
            + [_card(q, s) for s in _distinct_suits(rng, 2)]
            + [_card(k, rng.randrange(4))]
        )
    if kind == "pair":
        p, a, b, c = rng.sample(range(13), 4)
        return [_card(p, s) for s in _distinct_suits(rng, 2)] + [
            _card(r, rng.randrange(4)) for r in (a, b, c)
        ]
    if kind == "high_card":
        while True:
            ranks = rng.sample(range(13), 5)
            if not _is_straight(ranks):
                return [_card(r, s) for r, s in zip(ranks, _mixed_suits(rng, 5), strict=True)]
    if kind == "top_trips":
        rank = rng.randrange(13)
        return [_card(rank, s) for s in _distinct_suits(rng, 3)]
    if kind == "top_pair":
        p, k = rng.sample(range(13), 2)
        return [_card(p, s) for s in _distinct_suits(rng, 2)] + [_card(k, rng.randrange(4))]
    if kind == "top_high":
        ranks = rng.sample(range(13), 3)
        return [_card(r, rng.randrange(4)) for r in ranks]
    if kind in LOW_KINDS:
        if kind == "perfect_low":
            ranks = [5, 3, 2, 1, 0]
        else:
            high = {"ten_low": 8, "nine_low": 7, "eight_low": 6, "seven_low": 5}[kind]
            while True:
                ranks = [high] + rng.sample(range(high), 4)
                if not _is_straight(ranks) and sorted(ranks, reverse=True) != [5, 3, 2, 1, 0]:
                    break
        return [_card(r, s) for r, s in zip(ranks, _mixed_suits(rng, 5), strict=True)]
    raise ValueError(kind)


def built_board(rng: random.Random, kinds: tuple[str | None, str | None, str | None]) -> list[int] | None:
    """A board with the given kind per row (None = random cards), or None if the rows collide."""
    used: set[int] = set()
    rows: list[list[int] | None] = []
    for kind in kinds:
        if kind is None:
            rows.append(None)
            continue
        row = row_of_kind(rng, kind)
        if used & set(row) or len(set(row)) != len(row):
            return None
        used |= set(row)
        rows.append(row)
    rest = [card for card in range(52) if card not in used]
    rng.shuffle(rest)
    sizes = (3, 5, 5)
    board: list[int] = []
    for row, size in zip(rows, sizes, strict=True):
        if row is None:
            row = [rest.pop() for _ in range(size)]
        board += row
    return board


def arrange_legal(board: list[int]) -> list[int]:
    """Swap middle and bottom when the middle is stronger (by the reference), often making it legal."""
    middle, bottom = board[3:8], board[8:13]
    if reference.comparable(reference.five_key(middle)) > reference.comparable(reference.five_key(bottom)):
        return board[:3] + bottom + middle
    return board


def permute_suits(board: Sequence[int], rng: random.Random) -> list[int]:
    """The same board with suits relabelled: every row keeps its value (a tie in every row)."""
    mapping = rng.sample(range(4), 4)
    return [(card // 4) * 4 + mapping[card % 4] for card in board]


def built_boards(rng: random.Random, count: int, lowball: bool = False) -> list[list[int]]:
    """``count`` boards cycling through every row kind, in random rows and arrangements."""
    boards: list[list[int]] = []
    middle_kinds = LOW_KINDS + ("pair", "straight", "flush", None) if lowball else FIVE_CARD_KINDS
    index = 0
    while len(boards) < count:
        bottom_kind = FIVE_CARD_KINDS[index % len(FIVE_CARD_KINDS)]
        middle_kind = middle_kinds[(index // 3) % len(middle_kinds)]
        top_kind = TOP_KINDS[index % len(TOP_KINDS)] if rng.random() < 0.8 else None
        index += 1
        board = built_board(rng, (top_kind, middle_kind, bottom_kind))
        if board is None:
            continue
        if not lowball and rng.random() < 0.6:
            board = arrange_legal(board)
        boards.append(board)
    return boards


def dealt_hands(rng: random.Random, hands: int, min_players: int, max_players: int,
                legal_bias: float = 0.5) -> list[list[list[int]]]:
    """Hands of 2-4 boards dealt from one shuffled deck each (so no card repeats in a hand)."""
    result = []
    for _ in range(hands):
        players = rng.randint(min_players, max_players)
        deck = list(range(52))
        rng.shuffle(deck)
        boards = []
        for player in range(players):
            board = deck[13 * player: 13 * player + 13]
            if rng.random() < legal_bias:
                board = arrange_legal(board)
            boards.append(board)
        result.append(boards)
    return result
