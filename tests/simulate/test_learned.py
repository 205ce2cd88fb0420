"""The learned rollout policy: its weights load and match their hash, it is deterministic, plays
only valid options, beats random, and its training round is reproducible."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD
from pipeline.simulate.bots import BOTS, EXPERT, pattern_subsets, street_patterns
from pipeline.simulate.dealer import StreetRows
from pipeline.simulate.learned import (
    FEATURES,
    STAGES,
    LearnedBot,
    PolicyWeights,
    family,
    load_weights,
    parse_weights,
)
from pipeline.simulate.outlook import row_outlooks
from pipeline.simulate.simulation import SimulationConfig, simulate

from .helpers import lines_of


def test_the_shipped_weights_load_and_match_their_hash() -> None:
    weights = load_weights()
    assert set(weights.tables) == set(Variant)
    for variant, table in weights.tables.items():
        assert table.shape == (STAGES, len(FEATURES[family(variant)]))
        assert np.isfinite(table).all() and np.abs(table).sum() > 0
    # the file records the hash of what it holds, and the bot registered plays these weights
    recorded = json.loads(weights.to_json())["digest"]
    assert recorded == weights.digest()
    assert BOTS["learned"].weights.digest() == weights.digest()
    assert BOTS["learned"].uses_chance is False


def test_a_damaged_weights_file_is_refused_with_its_name(tmp_path) -> None:  # noqa: ANN001
    text = load_weights().to_json()
    body = json.loads(text)
    first = next(iter(body["variants"].values()))
    stage = next(iter(first["weights"]))
    first["weights"][stage][0] += 1.0  # a changed weight no longer matches the recorded hash
    damaged = tmp_path / "weights.json"
    damaged.write_text(json.dumps(body))
    with pytest.raises(ValueError, match="weights.json.*hash"):
        load_weights(damaged)
    with pytest.raises(ValueError, match="not a learned policy"):
        parse_weights("{not json", "broken.json")


def _random_options(variant: Variant, boards: int, seed: int, street: int):  # noqa: ANN202
    """Options of ``boards`` random boards on a street (cards dealt at random; the rows hold
    what a random earlier play left)."""
    from pipeline.analysis.policy import BoardBatch

    rng = np.random.default_rng(seed)
    shapes = variant.streets
    rows_list, dealt = [], []
    for _ in range(boards):
        deck = rng.permutation(52).tolist()
        rows: list[list[int]] = [[], [], []]
        for shape in shapes[:street]:
            cards = [deck.pop() for _ in range(shape.dealt)]
            for card in cards[:shape.dealt - shape.discarded]:
                room = [row for row, size in enumerate((3, 5, 5)) if len(rows[row]) < size]
                rows[int(rng.choice(room))].append(card)
        rows_list.append(rows)
        dealt.append([deck.pop() for _ in range(shapes[street].dealt)])
    board = BoardBatch.from_rows(rows_list)
    shape = shapes[street]
    street_rows = StreetRows(np.asarray(dealt), board.keys, board.counts, board.suits)
    return street_rows.options(variant, street_patterns(shape.dealt, shape.discarded),
                               pattern_subsets(shape.dealt, shape.discarded),
                               row_outlooks(variant, STANDARD))


@pytest.mark.parametrize("variant", list(Variant))
def test_choices_are_valid_and_the_same_alone_or_in_a_column(variant: Variant) -> None:
    bot = BOTS["learned"]
    for street in range(len(variant.streets)):
        options = _random_options(variant, 60, seed=street, street=street)
        together = bot.choose(options, np.zeros(60))
        assert options.valid[np.arange(60), together].all()
        alone = [int(bot.choose(options.take(slice(board, board + 1)), np.zeros(1))[0])
                 for board in range(60)]
        assert together.tolist() == alone
        assert bot.choose(options, np.ones(60) * 0.7).tolist() == together.tolist()


def test_heuristic_weights_play_as_the_expert() -> None:
    """The scorer is the expert's formula when given the expert's weights: a check that the
    features are what their names say (the same hands, but for near-ties, where the features'
    faster normal CDF, within 1.5e-4 of the exact one, may pick the other play)."""
    from pipeline.analysis.training import heuristic_weights

    BOTS["expert-as-learned"] = LearnedBot("expert-as-learned", "the expert's formula",
                                           heuristic_weights(EXPERT))
    try:
        for variant in Variant:
            hands = {}
            for name in ("expert", "expert-as-learned"):
                config = SimulationConfig(hands=60, seed=4, variants=(variant,), players=3,
                                          pool_size=3, bots=(name,) * 3)
                hands[name] = [line.replace(name, "bot") for line in lines_of(config)]
            same = sum(a == b for a, b in zip(hands["expert"], hands["expert-as-learned"],
                                              strict=True))
            assert same >= 0.93 * len(hands["expert"]), variant
    finally:
        del BOTS["expert-as-learned"]


def test_the_learned_policy_beats_random_clearly() -> None:
    from pipeline.analysis.training import head_to_head

    mean, error = head_to_head("learned", "random", Variant.PINEAPPLE, 300, seed=5)
    assert mean - 3 * error > 5.0


def test_a_small_training_round_is_reproducible() -> None:
    from pipeline.analysis.training import FitSettings, LabelSettings, Recipe, train_round

    recipe = Recipe(rounds=1, hands=(("pineapple", 1),),
                    labels=LabelSettings(samples=8, top_k=6, extra=2),
                    fit=FitSettings(steps=8), match_hands=50)
    first, report = train_round(1, "expert", {}, recipe)
    second, _ = train_round(1, "expert", {}, recipe)
    assert report.positions > 20
    assert first.digest() == second.digest()
    assert np.abs(first.tables[Variant.PINEAPPLE]).sum() > 0
    assert isinstance(first, PolicyWeights)


def test_every_simulated_board_of_the_learned_bot_is_legal_to_place() -> None:
    config = SimulationConfig(hands=60, seed=9, variants=(Variant.PINEAPPLE,), players=3,
                              pool_size=3, bots=("learned", "solid", "random"))
    played = sum(output.hands for output in simulate(config))
    assert played == 60


def test_the_fast_normal_cdf_is_within_its_stated_error() -> None:
    """:func:`fast_normal_cdf` against the exact normal CDF (math.erf) on a fine grid."""
    import math

    from pipeline.simulate.learned import fast_normal_cdf

    grid = np.linspace(-8.0, 8.0, 4001, dtype=np.float32)
    exact = np.asarray([0.5 * (1.0 + math.erf(float(value) / math.sqrt(2.0))) for value in grid])
    assert np.abs(fast_normal_cdf(grid.copy()) - exact).max() < 1.5e-4


def test_earlier_rounds_weights_load_with_their_features_in_place() -> None:
    """Round 1's file (linear, 2-7's ``qualify`` feature) and round 2's (linear) load: each
    weight lands on its feature's column under today's name, the quadratic columns stay 0,
    and a changed weight in such a file is still refused (its hash is checked as written)."""
    from pathlib import Path

    from pipeline.simulate.learned import BASE_FEATURES

    rounds = Path(__file__).resolve().parents[2] / "pipeline" / "analysis" / "policy_rounds"
    for name in ("round-1.json", "round-2.json"):
        body = json.loads((rounds / name).read_text())
        weights = load_weights(rounds / name)
        for variant in Variant:
            entry = body["variants"][variant.value]
            names = FEATURES[family(variant)]
            for stage, row in entry["weights"].items():
                for feature, value in zip(entry["features"], row, strict=True):
                    column = names.index("upper" if feature == "qualify" else feature)
                    assert weights.tables[variant][int(stage), column] == value
            base = len(BASE_FEATURES[family(variant)])
            assert not weights.tables[variant][:, base:].any()
        first = next(iter(body["variants"].values()))
        first["weights"][next(iter(first["weights"]))][0] += 1.0
        with pytest.raises(ValueError, match="hash"):
            parse_weights(json.dumps(body), name)


def _constant_weights(value: float) -> PolicyWeights:
    tables = {variant: np.full((STAGES, len(FEATURES[family(variant)])), value)
              for variant in Variant}
    return PolicyWeights(tables, {variant: value for variant in Variant})


def test_a_round_is_kept_in_the_variants_where_it_wins_and_nowhere_else() -> None:
    from pipeline.analysis.training import kept_by_variant

    new, previous = _constant_weights(2.0), _constant_weights(1.0)
    # pineapple wins by 3 SEs; classic by 1.5 SEs (not clear); 2-7 loses
    matches = {"pineapple": (0.24, 0.08), "classic": (0.075, 0.05), "2-7-pineapple": (-0.1, 0.08)}
    confirmed = {"pineapple": (0.2, 0.08)}
    kept, won = kept_by_variant(new, previous, matches, confirmed)
    assert won == ("pineapple",)
    assert kept is not None
    assert np.all(kept.tables[Variant.PINEAPPLE] == 2.0)
    assert kept.steer[Variant.PINEAPPLE] == 2.0
    for variant in (Variant.CLASSIC, Variant.LOWBALL_PINEAPPLE):
        assert np.all(kept.tables[variant] == 1.0)
        assert kept.steer[variant] == 1.0
    assert kept.digest() not in (new.digest(), previous.digest())
    # a screening win that the confirmation on other deals does not repeat is not kept,
    # nor one with no confirmation match at all
    assert kept_by_variant(new, previous, matches, {"pineapple": (0.02, 0.08)}) == (None, ())
    assert kept_by_variant(new, previous, matches, {}) == (None, ())
    # a confirmation win where the screening was not won keeps nothing either
    assert kept_by_variant(new, previous, matches, {"classic": (0.3, 0.05)}) == (None, ())
    # winning everywhere keeps the new weights whole; winning nowhere keeps nothing
    everywhere = {name: (0.3, 0.05) for name in matches}
    assert kept_by_variant(new, previous, everywhere, everywhere) == (new, tuple(everywhere))
    nowhere = {name: (0.05, 0.05) for name in matches}
    assert kept_by_variant(new, previous, nowhere, everywhere) == (None, ())
    # from a heuristic bot (no weights to keep) the round must win in every variant
    assert kept_by_variant(new, None, matches, confirmed)[0] is None
    assert kept_by_variant(new, None, everywhere, everywhere)[0] is new


def test_confirming_an_old_round_keeps_only_what_wins_again_on_other_deals() -> None:
    """``confirm_round`` replays a round's screening winners on the confirmation seeds: the
    shipped weights, recorded as round 9's win in Pineapple over the expert's weights, win again
    and stay; all-zero weights (they play the first option listed), recorded as a win too, lose
    the confirmation, so the round keeps the start's weights and its history says so."""
    from pipeline.analysis.training import Recipe, confirm_round, heuristic_weights
    from pipeline.simulate.learned import WEIGHTS_FILE

    start = heuristic_weights(BOTS["expert"])
    history = {"rounds": {"9": {"positions": 10, "kept_variants": ["pineapple"],
                                "heads_up_against_labelling_policy": {
                                    "pineapple": [0.5, 0.1], "classic": [0.0, 0.1]}}}}
    recipe = Recipe(match_hands=120)
    shipped = load_weights(Path(__file__).resolve().parents[2] / "pipeline" / "simulate"
                           / WEIGHTS_FILE)
    good = PolicyWeights(shipped.tables, shipped.steer, history)
    kept, report = confirm_round(9, start, good, recipe)
    assert report.kept_variants == ("pineapple",)
    assert set(report.confirmations) == {"pineapple"}  # only the screening's winners are replayed
    assert report.confirmations["pineapple"][0] > 2 * report.confirmations["pineapple"][1]
    assert np.array_equal(kept.tables[Variant.PINEAPPLE], shipped.tables[Variant.PINEAPPLE])
    assert np.array_equal(kept.tables[Variant.CLASSIC], start.tables[Variant.CLASSIC])
    entry = kept.recipe["rounds"]["9"]
    assert entry["kept_variants"] == ["pineapple"]
    assert set(entry["confirmation_against_labelling_policy"]) == {"pineapple"}

    bad = PolicyWeights({variant: np.zeros_like(table) for variant, table in start.tables.items()},
                        dict(start.steer), history)
    kept, report = confirm_round(9, start, bad, recipe)
    assert report.kept_variants == ()
    assert report.confirmations["pineapple"][0] < 0
    assert kept.digest() == start.digest()
    assert kept.recipe["rounds"]["9"]["kept_variants"] == []


def test_the_shipped_policy_is_each_variant_s_last_kept_round() -> None:
    """The shipped weights hold, per variant, the weights of the last round kept there (round 4
    in Pineapple, round 5 in 2-7 Pineapple, round 3 in Classic: the rounds table of
    docs/grading.md), and read the live-card features only where those rounds learned them;
    round 3's file (quadratic, before the live-card features) loads with them at 0."""
    from pathlib import Path

    from pipeline.simulate.learned import WEIGHTS_FILE

    folder = Path(__file__).resolve().parents[2] / "pipeline"
    shipped = load_weights(folder / "simulate" / WEIGHTS_FILE)
    rounds = {number: load_weights(folder / "analysis" / "policy_rounds" / f"round-{number}.json")
              for number in (3, 4, 5)}
    for variant, number in ((Variant.PINEAPPLE, 4), (Variant.LOWBALL_PINEAPPLE, 5),
                            (Variant.CLASSIC, 3)):
        assert np.array_equal(shipped.tables[variant], rounds[number].tables[variant])
        assert shipped.steer[variant] == rounds[number].steer[variant]
    bot = LearnedBot("shipped-check", "", shipped)
    assert bot.live_cards_in(Variant.PINEAPPLE) and bot.live_cards_in(Variant.LOWBALL_PINEAPPLE)
    assert not bot.live_cards_in(Variant.CLASSIC)
    third = LearnedBot("round-3-check", "", rounds[3])
    assert not any(third.live_cards_in(variant) for variant in Variant)
    history = json.loads((folder / "simulate" / WEIGHTS_FILE).read_text())["recipe"]["rounds"]
    assert history["4"]["kept_variants"] == ["pineapple"]
    assert history["5"]["kept_variants"] == ["2-7-pineapple"]
    # each kept variant won its confirmation match on other deals too, and only those were played
    for number, variant in (("4", "pineapple"), ("5", "2-7-pineapple")):
        confirmations = history[number]["confirmation_against_labelling_policy"]
        assert list(confirmations) == [variant]
        mean, error = confirmations[variant]
        assert mean > 2 * error
