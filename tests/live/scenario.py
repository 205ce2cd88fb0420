"""A live session of three players worked out by hand, shared by the live, CLI and page tests.

Seats clockwise: mara (1), jun (2), ivo (3); the button starts on ivo, so mara acts first.
Pineapple, standard rules (1-6 scoring, scoop bonus 3, royalties netted), 0.10 per point.

* Hand 1 (button ivo): mara QQ on top -> enters Fantasyland (14 cards); ivo fouls (a full house
  in the middle over a seven-high bottom). mara +23, jun +12, ivo -35. The button moves to mara.
* Hand 2 (button mara; mara in Fantasyland): mara sets trips on top -> stays (14 cards).
  jun -37, ivo -2, mara +39. Fantasyland was played, so the button stays with mara.
* Hand 3 (button mara; mara in Fantasyland): mara does not stay. jun -22, ivo +9, mara +13.
  The button stays again (Fantasyland was played).
* Hand 3, edited: ivo's middle and bottom swapped -> ivo fouls. jun -6, ivo -18, mara +24.
* Hand 4 (button mara, nobody in Fantasyland): hand 1's boards again; it is deleted.

Every number below was worked out on paper from docs/rules.md; :func:`independent_points`
re-derives them from row values alone (no pipeline scoring code), so a wrong constant fails.
"""

from __future__ import annotations

from decimal import Decimal

from pipeline.rules import STANDARD, Variant, evaluate_board, parse_cards

PLAYERS = ("mara", "jun", "ivo")
STAKE = Decimal("0.10")

HAND_1 = {
    "mara": "Qs Qh 5d / Kc Kd 4h 3s 2c / Ac Ad Ah 9s 9c",
    "jun": "Jd Jh 2d / 6c 6d 7h 7s 8c / Tc Jc Qc 4c 5c",
    "ivo": "As 3h 4d / 5h 5s 8h 8s 8d / 2h 3d 4s 6h 7d",
}
HAND_1_TYPO = "Jd Jh 2d / 6c 6d 7h 7s 8c / Tc Jc Qx 4c 5c"  # Qx is not a card
HAND_1_DUPLICATE = "As 3h 4d / 5h 5s 8h 8s 8d / 2h 3d 4s Ah 7d"  # Ah is mara's
HAND_1_POINTS = {"mara": 23, "jun": 12, "ivo": -35}
HAND_1_ROYALTIES = {"mara": (7, 0, 6), "jun": (6, 0, 4), "ivo": (0, 0, 0)}
# Pairs in settlement order (left of the button first): points for the first player.
HAND_1_PAIRS = {("mara", "jun"): 4, ("mara", "ivo"): 19, ("jun", "ivo"): 16}

HAND_2 = {
    "mara": "3s 3h 3d / 4c 5d 6h 7s 8c / 2h 9h Jh Kh Ah",
    "jun": "Td 9c 4d / Qs Qc 2s 6d 7d / As Ac Kd Kc 2d",
    "ivo": "5s 5h Jc / 8d 8h 9d 9s 2c / Ts Tc Th 4s 4h",
}
HAND_2_POINTS = {"mara": 39, "jun": -37, "ivo": -2}
HAND_2_PAIRS = {("jun", "ivo"): -12, ("jun", "mara"): -25, ("ivo", "mara"): -14}

HAND_3 = {
    "mara": "4h 4d 9c / 5s 5h Td Tc 2d / 6c 6d 6s Js Jd",
    "jun": "As Kd 2c / 3s 3h 7c 8d 9h / Qs Qh Qd 5c 7h",
    "ivo": "7s 7d 2h / Ah Ac 4s 4c 8h / 9s Th Jc Qc Kh",
}
HAND_3_POINTS = {"mara": 13, "jun": -22, "ivo": 9}

HAND_3_EDITED_IVO = "7s 7d 2h / 9s Th Jc Qc Kh / Ah Ac 4s 4c 8h"
HAND_3_EDITED_POINTS = {"mara": 24, "jun": -6, "ivo": -18}

HAND_4 = HAND_1

# Totals after hands 1-3 with hand 3 edited (hand 4 deleted): 23+39+24, 12-37-6, -35-2-18.
FINAL_TOTALS = {"mara": 86, "jun": -31, "ivo": -55}
FINAL_MONEY = {"mara": Decimal("8.60"), "jun": Decimal("-3.10"), "ivo": Decimal("-5.50")}


def _rows(text: str) -> tuple[tuple[int, ...], ...]:
    return tuple(parse_cards(part) for part in text.split("/"))


def independent_points(boards: dict[str, str], in_fantasyland: set[str] = frozenset()) -> dict[str, int]:
    """Points per player for a hand, from the rules core's row values and plain arithmetic.

    Re-implements 1-6 scoring (rows, scoop 3, netted royalties, fouls) here on purpose, so the
    expectation does not come from the code under test.
    """
    verdicts = {
        name: evaluate_board(*_rows(text), Variant.PINEAPPLE, STANDARD, name in in_fantasyland)
        for name, text in boards.items()
    }
    points = dict.fromkeys(boards, 0)
    names = list(boards)
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            a, b = verdicts[first], verdicts[second]
            if a.foul and b.foul:
                continue
            if a.foul or b.foul:
                rows = [-1 if a.foul else 1] * 3
            else:
                rows = [(x > y) - (x < y) for x, y in zip(a.values, b.values, strict=True)]
            result = sum(rows)
            if abs(result) == 3:
                result += 3 if result > 0 else -3
            result += sum(a.royalties) - sum(b.royalties)
            points[first] += result
            points[second] -= result
    return points
