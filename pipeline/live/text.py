"""How live results are written as text: a board as one types it, points and money with a sign.

Shared by ``ofc record`` and the dashboard's Record page so both show the same figures.
"""

from __future__ import annotations

from decimal import Decimal

from pipeline.records.record import FinalBoard
from pipeline.rules.board import BoardEvaluation
from pipeline.rules.cards import card_text
from pipeline.rules.game import ROWS

__all__ = ["board_text", "format_money", "format_points", "verdict_text"]


def board_text(board: FinalBoard) -> str:
    """A board as the text one types: ``Qs Qh 5d / Kc Kd 4h 3s 2c / Ac Ad Ah 9s 9c``."""
    return " / ".join(" ".join(card_text(card) for card in board.row(row)) for row in ROWS)


def format_points(points: int) -> str:
    """Points with a sign: ``+7``, ``-9``, ``0``."""
    return f"{points:+d}" if points else "0"


def format_money(amount: Decimal) -> str:
    """Money with a sign and two decimals, or as many as the amount has (a stake of 0.005 is
    settled in thousandths): ``+0.70``, ``-0.90``, ``0.00``, ``+0.029``."""
    exponent = amount.as_tuple().exponent
    places = max(2, -exponent) if isinstance(exponent, int) else 2
    return f"{amount:+.{places}f}" if amount else f"{Decimal(0):.{places}f}"


def verdict_text(verdict: BoardEvaluation, in_fantasyland: bool = False) -> str:
    """A board's verdict in one line, as shown while it is entered.

    ``Foul: top (pair of queens) beats middle (...)``, or
    ``royalties 7/0/6 = 13 · enters Fantasyland (14 cards)``.
    """
    if verdict.foul:
        return f"Foul: {verdict.foul_reason or 'the rows are out of order'}"
    royalties = "/".join(str(value) for value in verdict.royalties)
    text = f"royalties {royalties} = {verdict.royalty_total}"
    if verdict.fantasyland_cards:
        verb = "stays in" if in_fantasyland else "enters"
        text += f" · {verb} Fantasyland ({verdict.fantasyland_cards} cards)"
    return text
