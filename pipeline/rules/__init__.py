"""The pure rules core: cards, row values, rule sets, board verdicts and scoring. No I/O."""

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
