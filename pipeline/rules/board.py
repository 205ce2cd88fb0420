"""One board's verdict: row values and classes, foul and why, royalties, Fantasyland next hand."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.rules.cards import Card, CardError, card_text, find_duplicate
from pipeline.rules.game import ROW_LENGTHS, Variant
from pipeline.rules.ruleset import FantasylandRules, RuleSet
from pipeline.rules.values import (
    CATEGORY_SHIFT,
    HandClass,
    LowClass,
    describe_low,
    describe_value,
    evaluate_five,
    evaluate_low,
    evaluate_three,
    low_class,
    value_ranks,
)


@dataclass(frozen=True, slots=True)
class BoardEvaluation:
    """The rules core's verdict on one set board.

    ``values`` are comparable row strengths (for a 2-7 middle: the low value, larger is better,
    0 when it does not qualify). ``royalties`` are what the board collects (zero when fouled);
    ``raw_royalties`` are the per-row values before the foul voids them.
    """

    variant: Variant
    values: tuple[int, int, int]
    classes: tuple[str, str, str]
    descriptions: tuple[str, str, str]
    foul: bool
    foul_reason: str | None
    raw_royalties: tuple[int, int, int]
    royalties: tuple[int, int, int]
    fantasyland_cards: int

    @property
    def royalty_total(self) -> int:
        """Royalties collected by this board (0 when fouled)."""
        return sum(self.royalties)

    @property
    def fantasyland_next(self) -> bool:
        """True when the player plays Fantasyland next hand."""
        return self.fantasyland_cards > 0


def top_royalty(value: int, rules: RuleSet) -> int:
    """Royalty of a top row value: pairs and trips by rank.

    >>> from pipeline.rules.cards import parse_cards
    >>> from pipeline.rules.ruleset import STANDARD
    >>> from pipeline.rules.values import evaluate_three
    >>> [top_royalty(evaluate_three(parse_cards(top)), STANDARD)
    ...  for top in ("5c 5d Ah", "6c 6d 2h", "Qh Qd 2h", "Ac Ad 2h", "2c 2d 2h", "Ac Ad Ah")]
    [0, 1, 7, 9, 10, 22]
    """
    hand_class = value >> CATEGORY_SHIFT
    rank = value_ranks(value)[0]
    if hand_class == HandClass.TRIPS:
        return rules.royalties.top_trips[rank]
    if hand_class == HandClass.PAIR:
        return rules.royalties.top_pairs[rank]
    return 0


def five_card_royalty(value: int, table: Sequence[int]) -> int:
    """Royalty of a middle or bottom high value from a per-class table.

    >>> from pipeline.rules.cards import parse_cards
    >>> from pipeline.rules.ruleset import STANDARD
    >>> from pipeline.rules.values import evaluate_five
    >>> flush = evaluate_five(parse_cards("2h 5h 8h Jh Kh"))
    >>> five_card_royalty(flush, STANDARD.royalties.middle), five_card_royalty(flush, STANDARD.royalties.bottom)
    (8, 4)
    """
    return table[value >> CATEGORY_SHIFT]


def fantasyland_cards_next(
    top_value: int,
    middle_value: int,
    bottom_value: int,
    foul: bool,
    variant: Variant,
    rules: RuleSet,
    in_fantasyland: bool,
) -> int:
    """Cards the player is dealt next hand in Fantasyland, or 0 when not in Fantasyland next.

    Entry (not in Fantasyland now): QQ+ on top (house rule: the minimum pair), with card counts by
    variant (classic 13, pineapple 14, progressive 14/15/16/17 for QQ/KK/AA/trips; 2-7: KK+ top or
    7-5-4-3-2 middle 14, both 15). Stay (in Fantasyland now): trips on top, full house+ in the
    middle (not in 2-7, and a house rule), quads+ on the bottom; house rule: re-qualifying as for
    entry also stays. A stay deals the stay count (classic 13, pineapple and progressive 14, 2-7 14).

    Trips on top in progressive Pineapple: 17 cards to enter, but a stay is 14:

    >>> from pipeline.rules.cards import parse_cards
    >>> from pipeline.rules.ruleset import preset
    >>> from pipeline.rules.values import evaluate_five, evaluate_three
    >>> top = evaluate_three(parse_cards("Ac Ad Ah"))
    >>> middle = evaluate_five(parse_cards("2c 3d 4c 5d 6c"))
    >>> bottom = evaluate_five(parse_cards("2s 4s 7s 9s Js"))
    >>> progressive = preset("progressive")
    >>> fantasyland_cards_next(top, middle, bottom, False, Variant.PINEAPPLE, progressive, False)
    17
    >>> fantasyland_cards_next(top, middle, bottom, False, Variant.PINEAPPLE, progressive, True)
    14

    The progressive tiers are a Pineapple rule: the same board enters with 13 cards in Classic.

    >>> fantasyland_cards_next(top, middle, bottom, False, Variant.CLASSIC, progressive, False)
    13
    """
    fl = rules.fantasyland
    if foul or not fl.enabled:
        return 0
    entry = _entry_cards(top_value, middle_value, variant, fl)
    if not in_fantasyland:
        return entry
    return _stay_cards(top_value, middle_value, bottom_value, variant, fl, requalified=entry > 0)


def _entry_cards(top_value: int, middle_value: int, variant: Variant, fl: FantasylandRules) -> int:
    top_class = top_value >> CATEGORY_SHIFT
    top_rank = value_ranks(top_value)[0]
    if variant is Variant.LOWBALL_PINEAPPLE:
        top_ok = top_class == HandClass.TRIPS or (
            top_class == HandClass.PAIR and top_rank >= fl.lowball_entry_top_pair
        )
        perfect = low_class(middle_value) is LowClass.PERFECT_LOW
        if top_ok and perfect:
            return fl.lowball_cards_both
        return fl.lowball_cards if (top_ok or perfect) else 0
    qualifies = top_class == HandClass.TRIPS or (
        top_class == HandClass.PAIR and top_rank >= fl.entry_top_pair
    )
    if not qualifies:
        return 0
    if variant is Variant.CLASSIC:
        return fl.cards_classic
    if not fl.progressive:
        return fl.cards_pineapple
    if top_class == HandClass.TRIPS:
        return fl.progressive_cards[3]
    # QQ 14, KK 15, AA 16; a pair below queens (house rule KK+ aside) counts as the QQ tier.
    return fl.progressive_cards[max(0, top_rank - 10)]


def _stay_cards(
    top_value: int,
    middle_value: int,
    bottom_value: int,
    variant: Variant,
    fl: FantasylandRules,
    requalified: bool,
) -> int:
    stays = (fl.stay_requalify and requalified) or (
        (fl.stay_top_trips and top_value >> CATEGORY_SHIFT == HandClass.TRIPS)
        or (fl.stay_bottom_quads and bottom_value >> CATEGORY_SHIFT >= HandClass.QUADS)
        or (
            fl.stay_middle_full_house
            and variant is not Variant.LOWBALL_PINEAPPLE
            and middle_value >> CATEGORY_SHIFT >= HandClass.FULL_HOUSE
        )
    )
    if not stays:
        return 0
    if variant is Variant.CLASSIC:
        return fl.stay_cards_classic
    if variant is Variant.LOWBALL_PINEAPPLE:
        return fl.lowball_cards
    return fl.stay_cards_pineapple


def evaluate_board(
    top: Sequence[Card],
    middle: Sequence[Card],
    bottom: Sequence[Card],
    variant: Variant = Variant.PINEAPPLE,
    rules: RuleSet | None = None,
    in_fantasyland: bool = False,
) -> BoardEvaluation:
    """Evaluate a complete board: values, classes, foul (with the reason), royalties, Fantasyland.

    Raises :class:`CardError` when rows are the wrong size or a card appears twice.

    A legal Classic board: queens on top (7), a straight in the middle (4), a flush on the
    bottom (4), and QQ on top enters Fantasyland with 13 cards:

    >>> from pipeline.rules.cards import parse_cards
    >>> verdict = evaluate_board(parse_cards("Qh Qd 2h"), parse_cards("5c 6c 7h 8c 9c"),
    ...                          parse_cards("2s 4s 6s Ts Ks"), Variant.CLASSIC)
    >>> verdict.classes
    ('pair', 'straight', 'flush')
    >>> verdict.foul, verdict.royalties, verdict.royalty_total, verdict.fantasyland_cards
    (False, (7, 4, 4), 15, 13)

    A foul: the top Q-Q-5 beats the middle Q-Q-4-3-2 on the kicker, so nothing is collected:

    >>> fouled = evaluate_board(parse_cards("Qs Qh 5d"), parse_cards("Qc Qd 4h 3s 2c"),
    ...                         parse_cards("Ac Ad Ah 9s 9c"))
    >>> fouled.foul_reason
    'top (pair of queens) beats middle (pair of queens) on kickers'
    >>> fouled.raw_royalties, fouled.royalties, fouled.fantasyland_next
    ((7, 0, 6), (0, 0, 0), False)

    In 2-7 Pineapple the middle is a low; KK on top and 7-5-4-3-2 together deal 15 cards:

    >>> low = evaluate_board(parse_cards("Kh Kd 3h"), parse_cards("7c 5d 4h 3s 2c"),
    ...                      parse_cards("Ac Ad Ah 9s 6c"), Variant.LOWBALL_PINEAPPLE)
    >>> low.classes, low.royalties, low.fantasyland_cards
    (('pair', 'perfect_low', 'trips'), (8, 8, 0), 15)
    """
    from pipeline.rules.ruleset import STANDARD

    rules = rules or STANDARD
    if (len(top), len(middle), len(bottom)) != ROW_LENGTHS:
        raise CardError(
            f"a board needs 3/5/5 cards, got {len(top)}/{len(middle)}/{len(bottom)}"
        )
    duplicate = find_duplicate([*top, *middle, *bottom])
    if duplicate is not None:
        raise CardError(f"card {card_text(duplicate)} appears twice on the board")
    top_value = evaluate_three(top)
    bottom_value = evaluate_five(bottom)
    top_text = describe_value(top_value)
    bottom_text = describe_value(bottom_value)
    if variant.lowball_middle:
        middle_value = evaluate_low(middle)
        middle_class = low_class(middle_value)
        middle_text = describe_low(middle_value)
        middle_label = middle_class.label
        middle_royalty = rules.royalties.lowball_middle[middle_class]
        foul_reason = None
        if middle_value == 0:
            foul_reason = f"middle ({_middle_high_text(middle)}) is not a ten-low or better 2-7 hand"
        elif top_value > bottom_value:
            foul_reason = _beats("top", top_text, "bottom", bottom_text)
    else:
        middle_value = evaluate_five(middle)
        middle_text = describe_value(middle_value)
        middle_label = HandClass(middle_value >> CATEGORY_SHIFT).label
        middle_royalty = five_card_royalty(middle_value, rules.royalties.middle)
        foul_reason = None
        if middle_value > bottom_value:
            foul_reason = _beats("middle", middle_text, "bottom", bottom_text)
        elif top_value > middle_value:
            foul_reason = _beats("top", top_text, "middle", middle_text)
    raw = (
        top_royalty(top_value, rules),
        middle_royalty,
        five_card_royalty(bottom_value, rules.royalties.bottom),
    )
    foul = foul_reason is not None
    return BoardEvaluation(
        variant=variant,
        values=(top_value, middle_value, bottom_value),
        classes=(HandClass(top_value >> CATEGORY_SHIFT).label, middle_label,
                 HandClass(bottom_value >> CATEGORY_SHIFT).label),
        descriptions=(top_text, middle_text, bottom_text),
        foul=foul,
        foul_reason=foul_reason,
        raw_royalties=raw,
        royalties=(0, 0, 0) if foul else raw,
        fantasyland_cards=fantasyland_cards_next(
            top_value, middle_value, bottom_value, foul, variant, rules, in_fantasyland
        ),
    )


def _middle_high_text(middle: Sequence[Card]) -> str:
    """Describe a non-qualifying 2-7 middle by its high-hand name (``pair of fives``)."""
    return describe_value(evaluate_five(middle)) if len(middle) == 5 else "incomplete"


def _beats(upper: str, upper_text: str, lower: str, lower_text: str) -> str:
    """Foul reason text; says "on kickers" when both rows have the same name."""
    reason = f"{upper} ({upper_text}) beats {lower} ({lower_text})"
    return reason + " on kickers" if upper_text == lower_text else reason
