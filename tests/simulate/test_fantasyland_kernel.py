"""The compiled Fantasyland setter sets every board exactly as the setter does (the grader's
rollouts use it for an opponent in Fantasyland)."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from pipeline.rules.game import Variant
from pipeline.rules.ruleset import PRESET_NAMES, RuleSet, preset, ruleset_from_mapping
from pipeline.solver.fantasyland import solve_fantasyland
from pipeline.solver.fantasyland_kernel import solve_deals

REQUALIFY = ruleset_from_mapping({"name": "requalify", "fantasyland": {"stay_requalify": True}})
NO_FANTASYLAND = ruleset_from_mapping({"name": "no-fantasyland",
                                       "fantasyland": {"enabled": False}})
RULE_SETS = [*(preset(name) for name in PRESET_NAMES), REQUALIFY, NO_FANTASYLAND]


def setter_boards(deals: np.ndarray, variant: Variant, rules: RuleSet,
                  stay_value: float) -> list[list[int]]:
    """The boards the (Python) setter sets, top, middle and bottom in its order."""
    boards = []
    for deal in deals.tolist():
        arrangement = solve_fantasyland(deal, variant, rules, stay_value)
        boards.append([*arrangement.top, *arrangement.middle, *arrangement.bottom])
    return boards


@pytest.mark.parametrize("rules", RULE_SETS, ids=[rules.name for rules in RULE_SETS])
@pytest.mark.parametrize("variant", list(Variant), ids=[variant.value for variant in Variant])
def test_the_compiled_setter_sets_the_setters_boards(variant: Variant, rules: RuleSet) -> None:
    generator = random.Random(f"compiled-{variant.value}-{rules.name}")
    for count in range(13, 18):
        deals = np.asarray([generator.sample(range(52), count) for _ in range(6)])
        compiled = solve_deals(deals, variant, rules, 10.0)
        assert compiled.shape == (6, 13)
        assert compiled.tolist() == setter_boards(deals, variant, rules, 10.0), count


@pytest.mark.parametrize("stay_value", [0.0, 3.0, 40.0])
def test_the_compiled_setter_weighs_the_stay_as_the_setter_does(stay_value: float) -> None:
    generator = random.Random(f"stay-{stay_value}")
    deals = np.asarray([generator.sample(range(52), 14) for _ in range(30)])
    for variant in (Variant.PINEAPPLE, Variant.LOWBALL_PINEAPPLE):
        assert (solve_deals(deals, variant, REQUALIFY, stay_value).tolist()
                == setter_boards(deals, variant, REQUALIFY, stay_value))


def test_hands_that_score_much_and_hands_that_must_foul() -> None:
    """Trips and quads (stays and big royalties: the search's pruning at work), and a 2-7 deal
    without five low cards (no legal board: the setter's foul, rows by strength)."""
    aces_and_kings = [48, 49, 50, 51, 44, 45, 46, 40, 41, 36, 32, 28, 24, 20]
    no_low = [card for rank in (6, 7, 8, 9, 10, 11, 12) for card in (4 * rank, 4 * rank + 1)]
    for variant, deal in ((Variant.PINEAPPLE, aces_and_kings),
                          (Variant.LOWBALL_PINEAPPLE, no_low)):
        deals = np.asarray([deal, deal[::-1]])
        boards = solve_deals(deals, variant, REQUALIFY, 10.0)
        assert boards.tolist() == setter_boards(deals, variant, REQUALIFY, 10.0)
    fouled = solve_fantasyland(no_low, Variant.LOWBALL_PINEAPPLE, REQUALIFY)
    assert fouled.foul


def random_rules(generator: random.Random, index: int) -> RuleSet:
    """House rules drawn at random, as a rules file may set them: any non-negative royalty
    tables (a pair worth more than trips, a straight more than a flush, even a high card; never
    a 2-7 middle without a low, which fouls), any stay switches, any entry pairs."""
    base = preset("standard")

    def table(size: int, most: int) -> tuple[int, ...]:
        return tuple(generator.randint(0, most) for _ in range(size))

    royalties = replace(base.royalties, top_pairs=table(13, 12), top_trips=table(13, 25),
                        middle=table(10, 40), bottom=table(10, 30),
                        lowball_middle=(0, *table(5, 10)))
    fantasyland = replace(
        base.fantasyland, enabled=generator.random() < 0.9,
        entry_top_pair=generator.randint(0, 12), lowball_entry_top_pair=generator.randint(0, 12),
        stay_top_trips=generator.random() < 0.5, stay_middle_full_house=generator.random() < 0.5,
        stay_bottom_quads=generator.random() < 0.5, stay_requalify=generator.random() < 0.5)
    return replace(base, name=f"random-{index}", royalties=royalties, fantasyland=fantasyland)


def test_the_compiled_setter_follows_any_house_rules() -> None:
    generator = random.Random("house-rules")
    for index in range(12):
        rules = random_rules(generator, index)
        for variant in Variant:
            count = generator.choice((13, 14, 15))
            deals = np.asarray([generator.sample(range(52), count) for _ in range(4)])
            stay_value = generator.choice((0.0, 5.0, 10.0, 25.0))
            assert (solve_deals(deals, variant, rules, stay_value).tolist()
                    == setter_boards(deals, variant, rules, stay_value)), (rules, variant)


def test_bad_deals_and_rules_are_refused_as_the_setter_refuses_them() -> None:
    with pytest.raises(ValueError, match="13-17 cards"):
        solve_deals(np.arange(12)[None, :], Variant.PINEAPPLE, preset("standard"))
    with pytest.raises(ValueError, match="0..51"):
        solve_deals(np.arange(40, 54)[None, :], Variant.PINEAPPLE, preset("standard"))
    negative = ruleset_from_mapping({"name": "negative", "royalties": {"bottom": {"straight": -2}}})
    with pytest.raises(ValueError, match="non-negative royalties"):
        solve_deals(np.arange(14)[None, :], Variant.PINEAPPLE, negative)
