"""Small helpers shared by the rules tests: boards written as text, hand-built rule sets."""

from __future__ import annotations

from pipeline.rules.board import BoardEvaluation, evaluate_board
from pipeline.rules.cards import parse_cards
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import RuleSet, preset

STANDARD = preset("standard")
CLASSIC = Variant.CLASSIC
PINEAPPLE = Variant.PINEAPPLE
LOWBALL = Variant.LOWBALL_PINEAPPLE


def rows(text: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``"top / middle / bottom"`` as three card tuples."""
    top, middle, bottom = (parse_cards(part) for part in text.split("/"))
    return top, middle, bottom


def board(
    text: str,
    variant: Variant = CLASSIC,
    rules: RuleSet = STANDARD,
    fantasyland: bool = False,
) -> BoardEvaluation:
    """Evaluate a board written as ``"top / middle / bottom"``."""
    top, middle, bottom = rows(text)
    return evaluate_board(top, middle, bottom, variant, rules, fantasyland)
