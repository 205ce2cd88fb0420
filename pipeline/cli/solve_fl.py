"""``ofc solve-fl``: the best Fantasyland board for 13-17 cards (exact), with its value."""

from __future__ import annotations

import argparse
import json
import sys

from pipeline.cli import CommandError
from pipeline.cli.common import rules_from_option
from pipeline.rules.cards import CardError, card_text, parse_cards
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD

DEFAULT_STAY_VALUE = 10.0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``solve-fl`` command."""
    parser = subparsers.add_parser(
        "solve-fl",
        help="the best Fantasyland arrangement of 13-17 cards (exact), with discards and value",
        description=(
            "Set a Fantasyland hand exactly: of every legal way to put 13 of the cards on the "
            "board (the rest are discarded) print the one worth most, where a board is worth its "
            "royalties plus --stay-value when it keeps the player in Fantasyland (trips on top, "
            "full house or better in the middle, quads or better on the bottom, as the rules "
            "say). The search is a branch-and-bound that never drops the optimum (checked "
            "against brute force). Cards: Ah Kd 7c ... (10h, lower case and ♣♦♥♠ also work)."
        ),
    )
    parser.add_argument("cards", nargs="+", metavar="CARD", help="13 to 17 distinct cards")
    parser.add_argument(
        "--rules", metavar="NAME|FILE",
        help="a rules preset or a TOML rules file (default: standard)",
    )
    parser.add_argument(
        "--variant", help="classic, pineapple or 2-7-pineapple (default: classic for 13 cards, "
                          "else pineapple)",
    )
    parser.add_argument(
        "--stay-value", type=float, default=DEFAULT_STAY_VALUE, metavar="X",
        help="points a board that stays in Fantasyland is worth on top of its royalties "
             "(default: %(default)g)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="output format (default: %(default)s)")
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    """Solve and print the arrangement."""
    from pipeline.analysis.fantasyland import MAX_CARDS, MIN_CARDS, arrangement_json, solve_deal

    try:
        cards = parse_cards(" ".join(arguments.cards))
    except CardError as error:
        raise CommandError(str(error), code=2) from error
    if not MIN_CARDS <= len(cards) <= MAX_CARDS:
        raise CommandError(f"a Fantasyland hand has {MIN_CARDS}-{MAX_CARDS} cards, got {len(cards)}",
                           code=2)
    repeated = sorted({card for card in cards if cards.count(card) > 1})
    if repeated:
        raise CommandError(f"card {card_text(repeated[0])} appears twice", code=2)
    try:
        variant = (Variant.parse(arguments.variant) if arguments.variant
                   else Variant.CLASSIC if len(cards) == 13 else Variant.PINEAPPLE)
    except ValueError as error:
        raise CommandError(str(error), code=2) from error
    rules = rules_from_option(arguments.rules) or STANDARD
    try:
        arrangement = solve_deal(cards, variant, rules, arguments.stay_value)
    except ValueError as error:
        raise CommandError(str(error), code=2) from error
    data = arrangement_json(arrangement, variant, rules, arguments.stay_value)
    if arguments.format == "json":
        json.dump(data, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    width = max(len(name) for name in ("top", "middle", "bottom", "discards"))
    print(f"{len(cards)} cards · {variant.value} · rules {rules.name} · stay value "
          f"{arguments.stay_value:g}")
    for row in ("top", "middle", "bottom"):
        print(f"{row:<{width}}  {' '.join(data[row]):<15} royalty {data['royalties'][row]}")
    print(f"{'discards':<{width}}  {' '.join(data['discards']) or '–'}")
    if arrangement.foul:
        print("no legal board exists: every arrangement fouls (value 0)")
    stay = f" + stay {arguments.stay_value:g}" if arrangement.stays else " (does not stay)"
    print(f"value {arrangement.value:g} = royalties {arrangement.royalty_total}{stay}")
    return 0
