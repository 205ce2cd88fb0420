"""The pure rules core: cards, row values, rule sets, board verdicts and scoring. No I/O.

Layer: the ground floor. It imports nothing else of the project and no storage, table, chart or
page library (import-linter checks it); every other part may import it.

A two-player hand in a few lines: evaluate each board, then settle the hand.

>>> from pipeline.rules import STANDARD, Variant, evaluate_board, parse_cards, score_hand
>>> def board(text):
...     return evaluate_board(*(parse_cards(row) for row in text.split("/")), Variant.CLASSIC)
>>> mara = board("Qh Qd 2h / 5c 6c 7h 8c 9c / 2s 4s 6s Ts Ks")
>>> jun = board("2c 3d 5h / Jc Jd 4c 6d 8h / Ac Ad 7c 7d 9h")
>>> mara.royalties, mara.fantasyland_cards
((7, 4, 4), 13)
>>> score_hand([mara, jun], STANDARD).points
(21, -21)
"""

from __future__ import annotations

from pipeline.rules.board import BoardEvaluation, evaluate_board, fantasyland_cards_next
from pipeline.rules.cards import Card, CardError, card_text, cards_text, parse_card, parse_cards
from pipeline.rules.game import ROWS, Row, Variant
from pipeline.rules.ruleset import (
    PRESET_NAMES,
    STANDARD,
    RulesError,
    RuleSet,
    preset,
    ruleset_from_mapping,
)
from pipeline.rules.scoring import HandScore, Matchup, PairOutcome, score_hand, score_pair

__all__ = [
    "PRESET_NAMES", "ROWS", "STANDARD", "BoardEvaluation", "Card", "CardError", "HandScore",
    "Matchup", "PairOutcome", "Row", "RuleSet", "RulesError", "Variant", "card_text",
    "cards_text", "evaluate_board", "fantasyland_cards_next", "parse_card", "parse_cards",
    "preset", "ruleset_from_mapping", "score_hand", "score_pair",
]
