"""Bots: the styles show in the data, options are placed legally, the registry is the only list."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.rules.cards import parse_cards
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import preset
from pipeline.simulate.bots import (
    BOTS,
    DISCARD,
    SOLID,
    RandomBot,
    normal_cdf,
    pattern_subsets,
    street_patterns,
)
from pipeline.simulate.dealer import StreetRows
from pipeline.simulate.outlook import row_outlooks
from pipeline.simulate.simulation import BotStats, SimulationConfig, merge_stats, simulate


def bot_stats(config: SimulationConfig) -> dict[str, BotStats]:
    """Per-bot figures of a simulation."""
    total: dict[str, BotStats] = {}
    for output in simulate(config):
        merge_stats(total, output.stats)
    return total


def test_styles_show_on_a_small_sample() -> None:
    stats = bot_stats(SimulationConfig(
        hands=1200, variants=(Variant.PINEAPPLE,), bots=("solid", "chaser", "random"), seed=8,
    ))
    solid, chaser, random_bot = stats["solid"], stats["chaser"], stats["random"]
    assert min(solid.hands, chaser.hands, random_bot.hands) >= 800
    assert solid.foul_rate < chaser.foul_rate < random_bot.foul_rate
    assert random_bot.foul_rate > 2 * solid.foul_rate
    assert chaser.fantasyland_entry_rate > solid.fantasyland_entry_rate > 0.05
    assert random_bot.fantasyland_entry_rate < 0.01
    assert solid.foul_rate <= 0.3


@pytest.mark.slow
def test_styles_meet_the_figures_over_ten_thousand_hands() -> None:
    stats = bot_stats(SimulationConfig(
        hands=10_000, variants=(Variant.PINEAPPLE,), bots=("solid", "chaser", "random"), seed=1,
    ))
    solid, chaser, random_bot = stats["solid"], stats["chaser"], stats["random"]
    assert solid.foul_rate <= 0.25
    assert solid.fantasyland_entry_rate >= 0.08
    assert chaser.fantasyland_entry_rate > solid.fantasyland_entry_rate
    assert random_bot.foul_rate > 2 * max(solid.foul_rate, chaser.foul_rate) - 0.1


def test_every_bot_is_registered_with_a_description() -> None:
    assert {"solid", "chaser", "random"} <= set(BOTS)
    for name, bot in BOTS.items():
        assert bot.name == name
        assert bot.description


def test_patterns_place_or_discard_every_card() -> None:
    pineapple = street_patterns(3, 1)
    assert pineapple.shape == (27, 3)
    assert ((pineapple == DISCARD).sum(axis=1) == 1).all()
    assert len({tuple(row) for row in pineapple.tolist()}) == 27
    assert street_patterns(5, 0).shape == (243, 5)
    assert street_patterns(1, 0).tolist() == [[0], [1], [2]]
    subsets = pattern_subsets(3, 1)
    for pattern, masks in zip(pineapple.tolist(), subsets.tolist(), strict=True):
        for row in range(3):
            assert masks[row] == sum(1 << column for column, target in enumerate(pattern)
                                     if target == row)


def options_for(dealt_text: str, rows_text: tuple[str, str, str], variant: Variant):
    """The options of one board holding ``rows_text`` when ``dealt_text`` is dealt."""
    from pipeline.solver.tables import RANK_KEY_OF_CARD

    rows = [list(parse_cards(text)) if text else [] for text in rows_text]
    keys = np.asarray([[sum(RANK_KEY_OF_CARD[card] for card in row) for row in rows]])
    counts = np.asarray([[len(row) for row in rows]])
    suits = np.asarray([[
        -1 if not row else (row[0] & 3 if len({card & 3 for card in row}) == 1 else 4)
        for row in rows
    ]])
    dealt = np.asarray([list(parse_cards(dealt_text))])
    discards = 1 if dealt.shape[1] == 3 else 0
    patterns = street_patterns(dealt.shape[1], discards)
    street = StreetRows(dealt, keys, counts, suits)
    return street.options(variant, patterns, pattern_subsets(dealt.shape[1], discards),
                          row_outlooks(variant, preset("standard"))), patterns


def test_options_respect_room_and_bots_pick_valid_ones() -> None:
    options, patterns = options_for(
        "Ah Ad 2c", ("Ks Kd", "7c 7d 9s 9h", "5s 6s 7s 8s"), Variant.PINEAPPLE
    )
    valid = options.valid[0]
    for pattern, ok in zip(patterns.tolist(), valid.tolist(), strict=True):
        counts = [pattern.count(row) for row in range(3)]
        assert ok == (counts[0] <= 1 and counts[1] <= 1 and counts[2] <= 1)
    uniforms = np.linspace(0, 0.999, 40)
    for uniform in uniforms:
        choice = RandomBot().choose(options, np.asarray([uniform]))[0]
        assert valid[choice]
    assert valid[SOLID.choose(options, np.zeros(1))[0]]


def test_solid_takes_the_straight_flush() -> None:
    # One slot per row: the nine of spades makes 5-9 of spades (a straight flush) in the bottom;
    # the deuce and trey fill the top (KKx) and the middle (nines and sevens) legally.
    options, patterns = options_for(
        "9s 2h 3d", ("Ks Kd", "7c 7d 9c 9h", "5s 6s 7s 8s"), Variant.PINEAPPLE
    )
    choice = patterns[SOLID.choose(options, np.zeros(1))[0]].tolist()
    placed = dict(zip(choice, parse_cards("9s 2h 3d"), strict=True))
    assert placed.get(2) == parse_cards("9s")[0]  # the straight flush goes to the bottom


def test_the_last_street_is_judged_exactly() -> None:
    # One slot in the top, one in the middle (a pair of fours so far): the queen on top would
    # make queens there, above the fours, a foul; the bot keeps it off the top.
    options, patterns = options_for(
        "Qh 3c 2d", ("Qs Jd", "4c 4d 8h 9c", "Ts Js Qd Kc Ah"), Variant.PINEAPPLE
    )
    choice = patterns[SOLID.choose(options, np.zeros(1))[0]].tolist()
    queen_row = choice[0]
    assert queen_row != 0


def test_normal_cdf_matches_known_values() -> None:
    values = normal_cdf(np.asarray([-3.0, -1.0, 0.0, 0.5, 1.96, 4.0]))
    expected = [0.0013499, 0.1586553, 0.5, 0.6914625, 0.9750021, 0.9999683]
    assert np.allclose(values, expected, atol=2e-7)
    assert normal_cdf(1.96) == pytest.approx(0.9750021, abs=2e-7)  # a plain number too


def _formula_cdf(values: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26 written as the formula, one temporary per step."""
    scaled = np.abs(values) * 0.7071067811865476
    t = 1.0 / (1.0 + 0.3275911 * scaled)
    polynomial = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (
        -1.453152027 + t * 1.061405429))))
    return 0.5 + 0.5 * np.copysign(1.0 - polynomial * np.exp(-scaled * scaled), values)


def _formula_chance(top_mean, top_variance, middle_mean, middle_low, middle_variance,  # noqa: ANN001, ANN202
                    bottom_mean, bottom_variance):
    spread = np.sqrt(top_variance + middle_variance + 1e-6)
    alpha = (top_mean - middle_mean) / spread
    above = 1.0 - _formula_cdf(alpha)
    mills = 0.3989422804014327 * np.exp(-0.5 * alpha * alpha) / np.maximum(above, 1e-12)
    share = middle_variance / (spread * spread)
    conditional_mean = middle_low + share * spread * mills
    conditional_variance = middle_variance * np.maximum(1.0 - share * mills * (mills - alpha), 0.0)
    return above * _formula_cdf(
        (bottom_mean - conditional_mean) / np.sqrt(bottom_variance + conditional_variance + 1e-6))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_chance_maths_gives_the_formulas_bits(dtype: type) -> None:
    """The in-place normal CDF and ordered-rows chance equal the plain formulas bit for bit
    (a bot's choices, and so every simulated hand, stay the same)."""
    from pipeline.simulate.bots import _ordered_chance

    rng = np.random.default_rng(3)
    values = (rng.normal(size=(40, 30)) * 4).astype(dtype)
    values[0, :3] = [np.inf, -np.inf, 0.0]
    assert np.array_equal(normal_cdf(values), _formula_cdf(values))
    assert normal_cdf(values).dtype == dtype
    rows = [(rng.normal(size=(40, 30)) * 10).astype(dtype) for _ in range(7)]
    for variance in (1, 4, 6):
        rows[variance] = np.abs(rows[variance]) * 5
    with np.errstate(all="ignore"):
        assert np.array_equal(_ordered_chance(*rows), _formula_chance(*rows), equal_nan=True)
