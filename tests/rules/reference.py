"""An independent, deliberately plain reading of docs/rules.md, used as an oracle by the tests.

Nothing here imports the implementation's values, boards or scoring: cards are (rank, suit)
pairs taken from card codes by the documented encoding (code = rank * 4 + suit, rank 0 = deuce,
12 = ace). Keys compare with Python tuple order, which is exactly the spec's rule for rows of
different sizes: category first, then ranks in order, and a row whose ranks are a prefix of the
other's (every card of the shorter row ties) is the weaker one.
"""

from __future__ import annotations

from collections import Counter

HIGH, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH, ROYAL = range(10)
CLASS_NAMES = (
    "high_card", "pair", "two_pair", "trips", "straight", "flush", "full_house", "quads",
    "straight_flush", "royal_flush",
)

# docs/rules.md, "Royalties (preset standard)"
STANDARD_BOTTOM = {STRAIGHT: 2, FLUSH: 4, FULL_HOUSE: 6, QUADS: 10, STRAIGHT_FLUSH: 15, ROYAL: 25}
STANDARD_MIDDLE = {
    TRIPS: 2, STRAIGHT: 4, FLUSH: 8, FULL_HOUSE: 12, QUADS: 20, STRAIGHT_FLUSH: 30, ROYAL: 50,
}
# 66 = 1 ... AA = 9 (rank index 4 = six ... 12 = ace); 222 = 10 ... AAA = 22
STANDARD_TOP_PAIR = {rank: rank - 3 for rank in range(4, 13)}
STANDARD_TOP_TRIPS = {rank: 10 + rank for rank in range(13)}
LOW_ROYALTY = {"ten_low": 0, "nine_low": 1, "eight_low": 2, "seven_low": 4, "perfect_low": 8}


def rank(card: int) -> int:
    return card // 4


def suit(card: int) -> int:
    return card % 4


def _groups(cards) -> list[int]:
    """Ranks ordered by (count, rank) descending, one entry per distinct rank."""
    counts = Counter(rank(card) for card in cards)
    return [r for r, _ in sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def five_key(cards) -> tuple[int, tuple[int, ...]]:
    """(category, ranks) of a five-card high hand."""
    ranks = sorted((rank(card) for card in cards), reverse=True)
    counts = sorted(Counter(ranks).values(), reverse=True)
    flush = len({suit(card) for card in cards}) == 1
    straight_high = None
    if len(set(ranks)) == 5:
        if ranks[0] - ranks[4] == 4:
            straight_high = ranks[0]
        elif ranks == [12, 3, 2, 1, 0]:  # A-2-3-4-5: the five-high straight
            straight_high = 3
    if straight_high is not None and flush:
        return (ROYAL if straight_high == 12 else STRAIGHT_FLUSH, (straight_high,))
    if counts == [4, 1]:
        return (QUADS, tuple(_groups(cards)))
    if counts == [3, 2]:
        return (FULL_HOUSE, tuple(_groups(cards)))
    if flush:
        return (FLUSH, tuple(ranks))
    if straight_high is not None:
        return (STRAIGHT, (straight_high,))
    if counts == [3, 1, 1]:
        return (TRIPS, tuple(_groups(cards)))
    if counts == [2, 2, 1]:
        return (TWO_PAIR, tuple(_groups(cards)))
    if counts == [2, 1, 1, 1]:
        return (PAIR, tuple(_groups(cards)))
    return (HIGH, tuple(ranks))


def three_key(cards) -> tuple[int, tuple[int, ...]]:
    """(category, ranks) of a top row: trips, pair or high card only."""
    counts = sorted(Counter(rank(card) for card in cards).values(), reverse=True)
    category = {3: TRIPS, 2: PAIR, 1: HIGH}[counts[0]]
    return (category, tuple(_groups(cards)))


def comparable(key: tuple[int, tuple[int, ...]]) -> tuple[int, tuple[int, ...]]:
    """A royal flush ranks as the ace-high straight flush."""
    category, ranks = key
    return (STRAIGHT_FLUSH if category == ROYAL else category, ranks)


def low_key(cards) -> tuple[int, ...] | None:
    """Descending ranks of a qualifying 2-7 low (smaller tuple = better low), or None.

    Qualifies: five distinct ranks, not a flush, not a straight (ace always high, so A-2-3-4-5 is
    just ace-high), ten-high or better.
    """
    ranks = sorted((rank(card) for card in cards), reverse=True)
    if len(set(ranks)) != 5 or len({suit(card) for card in cards}) == 1:
        return None
    if ranks[0] - ranks[4] == 4:
        return None
    if ranks[0] > 8:  # above ten
        return None
    return tuple(ranks)


def low_class_name(key: tuple[int, ...] | None) -> str:
    if key is None:
        return "no_low"
    if key == (5, 3, 2, 1, 0):
        return "perfect_low"
    return {8: "ten_low", 7: "nine_low", 6: "eight_low", 5: "seven_low"}[key[0]]


def board_verdict(top, middle, bottom, lowball: bool = False) -> dict:
    """Foul and standard royalties of a board, straight from the spec."""
    top_key = comparable(three_key(top))
    bottom_key = comparable(five_key(bottom))
    if lowball:
        low = low_key(middle)
        foul = low is None or not bottom_key > top_key
        middle_royalty = LOW_ROYALTY.get(low_class_name(low), 0)
        middle_strength = low
    else:
        middle_key = comparable(five_key(middle))
        foul = not (bottom_key >= middle_key >= top_key)
        middle_royalty = STANDARD_MIDDLE.get(five_key(middle)[0], 0)
        middle_strength = middle_key
    top_category, top_ranks = three_key(top)
    if top_category == TRIPS:
        top_royalty = STANDARD_TOP_TRIPS[top_ranks[0]]
    elif top_category == PAIR:
        top_royalty = STANDARD_TOP_PAIR.get(top_ranks[0], 0)
    else:
        top_royalty = 0
    raw = (top_royalty, middle_royalty, STANDARD_BOTTOM.get(five_key(bottom)[0], 0))
    return {
        "foul": foul,
        "raw": raw,
        "royalties": (0, 0, 0) if foul else raw,
        "strength": (top_key, middle_strength, bottom_key),
    }


def _row_result(first, second, row: int, lowball: bool) -> int:
    a, b = first["strength"][row], second["strength"][row]
    if lowball and row == 1:
        a, b = b, a  # a smaller low key is the better low
    return (a > b) - (a < b)


def pair_points(first: dict, second: dict, lowball: bool = False, scoop_bonus: int = 3) -> int:
    """Standard 1-6 netted points of ``first`` against ``second`` (verdicts from board_verdict)."""
    if first["foul"] and second["foul"]:
        return 0
    if first["foul"]:
        return -(3 + scoop_bonus + sum(second["royalties"]))
    if second["foul"]:
        return 3 + scoop_bonus + sum(first["royalties"])
    results = [_row_result(first, second, row, lowball) for row in range(3)]
    points = sum(results)
    if results.count(1) == 3:
        points += scoop_bonus
    elif results.count(-1) == 3:
        points -= scoop_bonus
    return points + sum(first["royalties"]) - sum(second["royalties"])


def fantasyland_cards(top, middle, bottom, variant: str, progressive: bool, in_fantasyland: bool) -> int:
    """Cards dealt next hand under the standard Fantasyland rules (0 = no Fantasyland).

    variant: "classic", "pineapple" or "2-7-pineapple". Entry: QQ+ on top (2-7: KK+ top or
    7-5-4-3-2 middle, both 15). Stay: trips top, full house+ middle (not in 2-7), quads+ bottom;
    13 cards in classic, 14 otherwise. A fouled board never gets Fantasyland.
    """
    lowball = variant == "2-7-pineapple"
    if board_verdict(top, middle, bottom, lowball)["foul"]:
        return 0
    top_category, top_ranks = three_key(top)
    bottom_category = five_key(bottom)[0]
    if in_fantasyland:
        stays = top_category == TRIPS or bottom_category >= QUADS
        if not lowball and five_key(middle)[0] >= FULL_HOUSE:
            stays = True
        if not stays:
            return 0
        return 13 if variant == "classic" else 14
    if lowball:
        top_ok = top_category == TRIPS or (top_category == PAIR and top_ranks[0] >= 11)
        perfect = low_key(middle) == (5, 3, 2, 1, 0)
        return 15 if top_ok and perfect else 14 if top_ok or perfect else 0
    if not (top_category == TRIPS or (top_category == PAIR and top_ranks[0] >= 10)):
        return 0
    if variant == "classic":
        return 13
    if not progressive:
        return 14
    if top_category == TRIPS:
        return 17
    return {10: 14, 11: 15, 12: 16}[top_ranks[0]]
