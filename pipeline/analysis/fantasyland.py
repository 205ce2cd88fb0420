"""Fantasyland hands against the exact setter: what the solver sets, and what a player gave up.

The solver is the simulator's exact branch-and-bound setter
(:func:`pipeline.solver.fantasyland.solve_fantasyland`, checked against brute force). Its
objective, and the value of a Fantasyland hand here, is

    value = royalties of the board + stay_value (when the board keeps the player in Fantasyland)

where ``stay_value`` is a setting (default :data:`DEFAULT_STAY_VALUE` = 10 points: roughly what a
further Fantasyland hand is worth over a normal one). A fouled board is worth 0. The points a
player *gave up* in a Fantasyland hand are ``solver value − played value`` (never negative).
They leave out row-by-row wins against the opponents, whose boards the player did not see.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pipeline.analysis.decisions import HandView
from pipeline.rules.board import evaluate_board
from pipeline.rules.cards import Card, card_text
from pipeline.rules.game import ROW_LENGTHS, Variant
from pipeline.rules.ruleset import RuleSet
from pipeline.solver.fantasyland import (
    DEFAULT_STAY_VALUE,
    MAX_CARDS,
    MIN_CARDS,
    Arrangement,
    solve_fantasyland,
)

__all__ = ["DEFAULT_STAY_VALUE", "MAX_CARDS", "MIN_CARDS", "FantasylandGrade", "arrangement_json",
           "grade_fantasyland", "solve_deal"]


def solve_deal(
    cards: Sequence[Card], variant: Variant, rules: RuleSet, stay_value: float = DEFAULT_STAY_VALUE
) -> Arrangement:
    """The best legal board (and discards) of a Fantasyland deal of 13-17 cards.

    Raises ValueError for a wrong number of cards, repeats, a negative stay value or a rule set
    with negative royalties.
    """
    return solve_fantasyland(cards, variant, rules, stay_value)


def arrangement_json(arrangement: Arrangement, variant: Variant, rules: RuleSet,
                     stay_value: float) -> dict[str, Any]:
    """An arrangement as plain data (``ofc solve-fl --format json``)."""
    rows = arrangement.as_text()
    return {
        "variant": variant.value,
        "rules": rules.name,
        "stay_value": stay_value,
        **rows,
        "royalties": dict(zip(("top", "middle", "bottom"), arrangement.royalties, strict=True)),
        "royalty_total": arrangement.royalty_total,
        "stays": arrangement.stays,
        "foul": arrangement.foul,
        "value": arrangement.value,
    }


@dataclass(frozen=True, slots=True)
class FantasylandGrade:
    """One Fantasyland hand of one player, as played and as solved."""

    hand_key: int
    player: str
    variant: Variant
    rules: str
    dealt: tuple[Card, ...]
    played: tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]
    played_discards: tuple[Card, ...]
    played_foul: bool
    played_royalties: int
    played_stays: bool
    played_value: float
    solver: Arrangement
    stay_value: float

    @property
    def points_given_up(self) -> float:
        """Solver value minus played value."""
        return max(0.0, self.solver.value - self.played_value)

    def row(self, when: datetime | None = None) -> dict[str, Any]:
        """The ``fantasyland_grades`` row."""

        def text(cards: Sequence[Card]) -> str:
            return " ".join(card_text(card) for card in cards)

        return {
            "hand_key": self.hand_key, "player": self.player, "variant": self.variant.value,
            "ruleset": self.rules, "cards_dealt": len(self.dealt), "dealt": text(self.dealt),
            "played_top": text(self.played[0]), "played_middle": text(self.played[1]),
            "played_bottom": text(self.played[2]), "played_discards": text(self.played_discards),
            "played_foul": self.played_foul, "played_royalties": self.played_royalties,
            "played_stays": self.played_stays, "played_value": float(self.played_value),
            "solver_top": text(self.solver.top), "solver_middle": text(self.solver.middle),
            "solver_bottom": text(self.solver.bottom), "solver_discards": text(self.solver.discards),
            "solver_royalties": self.solver.royalty_total, "solver_stays": self.solver.stays,
            "solver_value": float(self.solver.value), "points_given_up": self.points_given_up,
            "stay_value": float(self.stay_value),
            "graded_at": when or datetime.now(UTC).replace(tzinfo=None),
        }


def grade_fantasyland(
    hand: HandView, seat: int, rules: RuleSet, stay_value: float = DEFAULT_STAY_VALUE
) -> FantasylandGrade | None:
    """Compare a player's Fantasyland hand with the solver; None when it cannot be (no streets,
    an impossible card count, or rules the solver does not take)."""
    play = hand.seats[seat]
    if not play.fantasyland or len(play.streets) != 1:
        return None
    street = play.streets[0]
    dealt = street.dealt
    if not MIN_CARDS <= len(dealt) <= MAX_CARDS:
        return None
    rows = play.rows_before(1)
    if tuple(len(row) for row in rows) != ROW_LENGTHS:
        return None
    try:
        solver = solve_fantasyland(dealt, hand.variant, rules, stay_value)
    except ValueError:
        return None
    verdict = evaluate_board(*rows, variant=hand.variant, rules=rules, in_fantasyland=True)
    stays = verdict.fantasyland_cards > 0
    value = verdict.royalty_total + (stay_value if stays else 0.0)
    return FantasylandGrade(
        hand_key=hand.hand_key, player=play.name, variant=hand.variant, rules=rules.name,
        dealt=dealt, played=rows, played_discards=street.discarded, played_foul=verdict.foul,
        played_royalties=verdict.royalty_total, played_stays=stays, played_value=value,
        solver=solver, stay_value=stay_value,
    )
