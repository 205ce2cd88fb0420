"""``ofc board``: a readable verdict for one board typed on the command line."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from pipeline.cli import CommandError
from pipeline.cli.common import add_rules_option, rules_from_option
from pipeline.rules.board import evaluate_board
from pipeline.rules.cards import SUIT_SYMBOLS, CardError, cards_text, parse_cards
from pipeline.rules.game import ROWS, Variant
from pipeline.rules.ruleset import PRESET_NAMES, STANDARD

BOARD_RULES_HELP = (
    f"a rules preset ({', '.join(PRESET_NAMES)}) or a TOML rules file to judge the board by "
    "(default: standard)"
)

SUIT_STYLES = {"c": "green", "d": "blue", "h": "red", "s": "white"}

if TYPE_CHECKING:
    from rich.text import Text


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``board`` command."""
    parser = subparsers.add_parser(
        "board",
        help="explain one board: classes per row, foul and why, royalties, Fantasyland",
        description='Example: ofc board "Qs Qh 5d / Kc Kd 4h 3s 2c / Ac Ad Ah 9s 9c"',
    )
    parser.add_argument("board", help='three rows separated by "/": top (3) / middle (5) / bottom (5)')
    parser.add_argument(
        "--variant", default="pineapple",
        help="classic, pineapple or 2-7-pineapple (default pineapple)",
    )
    parser.add_argument(
        "--fantasyland", action="store_true",
        help="the board was set in Fantasyland (decides stay instead of entry)",
    )
    add_rules_option(parser, BOARD_RULES_HELP)
    parser.set_defaults(handler=run)


def parse_board_text(text: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Parse ``"top / middle / bottom"`` into three card tuples; raises CardError with the reason."""
    parts = text.split("/")
    if len(parts) != 3:
        raise CardError(f'a board is three rows separated by "/", got {len(parts)} part(s)')
    top, middle, bottom = (parse_cards(part) for part in parts)
    for name, row, size in (("top", top, 3), ("middle", middle, 5), ("bottom", bottom, 5)):
        if len(row) != size:
            raise CardError(f"{name} row needs {size} cards, got {len(row)}")
    return top, middle, bottom


def _card_markup(card: str) -> Text:
    from rich.text import Text

    return Text(card[0] + SUIT_SYMBOLS[card[1]], style=f"bold {SUIT_STYLES[card[1]]}")


def run(arguments: argparse.Namespace) -> int:
    """Print the verdict; exit 2 on a bad board, variant or rules."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    rules = rules_from_option(arguments.rules) or STANDARD
    try:
        variant = Variant.parse(arguments.variant)
        top, middle, bottom = parse_board_text(arguments.board)
        verdict = evaluate_board(top, middle, bottom, variant, rules, arguments.fantasyland)
    except (CardError, ValueError) as error:
        raise CommandError(str(error), code=2) from error
    console = Console(highlight=False)
    table = Table(title=f"{variant.value} board under rules '{rules.name}'", show_lines=False)
    for column in ("row", "cards", "hand", "class", "royalty"):
        table.add_column(column)
    for index, (row, cards) in enumerate(zip(ROWS, (top, middle, bottom), strict=True)):
        card_text = Text(" ").join(_card_markup(card) for card in cards_text(cards))
        table.add_row(
            row.value, card_text, verdict.descriptions[index], verdict.classes[index],
            str(verdict.royalties[index]) if not verdict.foul else f"0 (void, {verdict.raw_royalties[index]})",
        )
    console.print(table)
    if verdict.foul:
        console.print(f"[bold red]FOUL[/]: {verdict.foul_reason}. The board collects no royalties "
                      "and pays every legal board the scoop plus its royalties.")
    else:
        console.print(f"[bold green]Legal[/]. Royalties: {verdict.royalty_total}.")
    if verdict.fantasyland_next:
        state = "stays in" if arguments.fantasyland else "enters"
        console.print(f"Fantasyland: {state} Fantasyland next hand with {verdict.fantasyland_cards} cards.")
    else:
        console.print("Fantasyland: not next hand.")
    return 0
