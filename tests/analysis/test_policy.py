"""The rollout policy plays exactly as the simulator's bots do."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pipeline.analysis.policy import BoardBatch, ColumnPolicy
from pipeline.rules.cards import parse_card
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD
from pipeline.simulate.bots import BOTS
from pipeline.simulate.simulation import SimulationConfig
from tests.analysis.hands import simulated_records

ROW = {"top": 0, "middle": 1, "bottom": 2}


@pytest.mark.parametrize("variant", list(Variant))
def test_replaying_simulated_hands_gives_the_recorded_placements(variant: Variant) -> None:
    config = SimulationConfig(hands=15, seed=9, variants=(variant,), players=3)
    bots = {player.name: player.bot for plan in config.plan() for player in plan.players}
    policies: dict[str, ColumnPolicy] = {}
    streets = 0
    for record in simulated_records(15, variant=variant, seed=9):
        for player in record["players"]:
            if player["fantasyland"]:
                continue
            bot = bots[player["name"]]
            policy = policies.setdefault(bot, ColumnPolicy(bot, variant, STANDARD))
            rows: tuple[list[int], list[int], list[int]] = ([], [], [])
            for street in player["streets"]:
                boards = BoardBatch.from_rows([rows, rows])
                dealt = np.asarray([[parse_card(card) for card in street["dealt"]]] * 2)
                policy.play_street(boards, dealt, len(street["discarded"]))
                for name, cards in street["placed"].items():
                    rows[ROW[name]].extend(parse_card(card) for card in cards)
                for index in range(2):
                    assert [sorted(row) for row in boards.rows(index)] == [sorted(r) for r in rows]
                streets += 1
    assert streets >= 15 * 2 * 5  # most seats are not in Fantasyland


def _replay_live(records: list[dict], policy: ColumnPolicy, with_table: bool) -> tuple[int, int]:
    """Replay every street of every seat not in Fantasyland, in action order (left of the
    button first), through ``policy`` with what the seat had seen (its own discards; with
    ``with_table``, every board at the table as it stood at its turn: the cards placed before
    the street and those placed on it by the seats before it): (streets replayed, streets
    placed as recorded)."""
    replayed = matched = 0
    for record in records:
        players = record["players"]
        button = next(index for index, player in enumerate(players)
                      if player["name"] == record["button"])
        in_order = players[button + 1:] + players[:button + 1]
        seats = [player for player in in_order if not player["fantasyland"]]
        rows = [([], [], []) for _ in seats]
        discarded: list[list[int]] = [[] for _ in seats]
        for street in range(len(seats[0]["streets"])):
            for index, player in enumerate(seats):
                table = [card for board in rows for row in board for card in row]
                entry = player["streets"][street]
                seen = discarded[index] + (table if with_table else [])
                boards = BoardBatch.from_rows([rows[index]], [seen])
                dealt = np.asarray([[parse_card(card) for card in entry["dealt"]]])
                policy.play_street(boards, dealt, len(entry["discarded"]))
                expected = [list(row) for row in rows[index]]
                for name, cards in entry["placed"].items():
                    expected[ROW[name]].extend(parse_card(card) for card in cards)
                replayed += 1
                matched += [sorted(row) for row in boards.rows(0)] == [sorted(row) for row in
                                                                       expected]
                for name, cards in entry["placed"].items():  # the next seats see it
                    rows[index][ROW[name]].extend(parse_card(card) for card in cards)
                discarded[index].extend(parse_card(card) for card in entry["discarded"])
    return replayed, matched


def test_a_live_card_policy_sees_what_the_dealer_shows_it() -> None:
    """A learned bot whose live-card features count (weights drawn at random) places every
    street as the simulator recorded it when it sees what the dealer showed it: the table as
    it stood at its turn (the seats choose in action order and see what the seats before them
    placed on the street, as at a real table and in the grader's decisions) and its own
    discards; without the table's cards its plays differ (so the replay checks what was seen,
    not only the boards)."""
    from pipeline.analysis.training import register
    from pipeline.simulate.learned import FEATURES, STAGES, PolicyWeights, family

    generator = np.random.default_rng(21)
    name = register("live-test", PolicyWeights(
        {item: generator.normal(size=(STAGES, len(FEATURES[family(item)]))) for item in Variant},
        {item: 0.4 for item in Variant}))
    # several tables: the dealer plays their hands side by side (each hand's table its own)
    config = SimulationConfig(hands=16, tables=4, seed=5, variants=(Variant.PINEAPPLE,),
                              players=3, bots=(name,))
    from pipeline.simulate.simulation import simulate

    records = [json.loads(line) for output in simulate(config)
               for line in output.lines.decode("utf-8").splitlines()]
    assert len({record["table"] for record in records}) == 4
    policy = ColumnPolicy(name, Variant.PINEAPPLE, STANDARD)
    replayed, matched = _replay_live(records, policy, with_table=True)
    assert replayed >= 16 * 2 * 5 and matched == replayed
    replayed, matched = _replay_live(records, policy, with_table=False)
    assert matched < replayed


def test_live_fields_are_worked_out_only_in_variants_whose_weights_read_them() -> None:
    """Weights with nothing on the live-card features (here: the random weights above with
    those columns zeroed in Pineapple) say so, the dealer and the policy skip the live fields
    there, and the plays are the same whether the policy sees the table or not."""
    from pipeline.analysis.training import register
    from pipeline.simulate.learned import FEATURES, LIVE_FEATURES, STAGES, PolicyWeights, family

    generator = np.random.default_rng(21)
    tables = {item: generator.normal(size=(STAGES, len(FEATURES[family(item)])))
              for item in Variant}
    names = FEATURES[family(Variant.PINEAPPLE)]
    reading = [index for index, feature in enumerate(names)
               if set(feature.split("*")) & set(LIVE_FEATURES)]
    tables[Variant.PINEAPPLE][:, reading] = 0.0
    name = register("live-blind-pineapple", PolicyWeights(tables, {item: 0.4 for item in Variant}))
    bot = BOTS[name]
    assert not bot.live_cards_in(Variant.PINEAPPLE)
    assert bot.live_cards_in(Variant.CLASSIC) and bot.live_cards_in(Variant.LOWBALL_PINEAPPLE)
    policy = ColumnPolicy(name, Variant.PINEAPPLE, STANDARD)
    assert not policy.live and ColumnPolicy(name, Variant.CLASSIC, STANDARD).live
    config = SimulationConfig(hands=8, seed=5, variants=(Variant.PINEAPPLE,), players=3,
                              bots=(name,))
    from pipeline.simulate.simulation import simulate

    records = [json.loads(line) for output in simulate(config)
               for line in output.lines.decode("utf-8").splitlines()]
    for with_table in (True, False):
        replayed, matched = _replay_live(records, policy, with_table=with_table)
        assert replayed >= 8 * 2 * 5 and matched == replayed


def test_board_batch_keeps_cards_by_slot() -> None:
    boards = BoardBatch.from_rows([([parse_card("Ah")], [], [parse_card("2c"), parse_card("3c")])])
    assert boards.rows(0) == ([parse_card("Ah")], [], [parse_card("2c"), parse_card("3c")])
    assert boards.counts.tolist() == [[1, 0, 2]]
    assert boards.suits.tolist() == [[2, -1, 0]]
    twice = boards.repeat(2)
    assert len(twice) == 2 and twice.rows(1) == boards.rows(0)
    with pytest.raises(ValueError):
        ColumnPolicy("nobody", Variant.PINEAPPLE, STANDARD)


@pytest.mark.parametrize("variant", [Variant.PINEAPPLE, Variant.CLASSIC])
def test_the_expert_policy_beats_solid_heads_up(variant: Variant) -> None:
    """The grader's rollout policy wins clearly against solid, on the same deals the simulator
    scores (bench_policy.py measures it over 20,000 hands: +1.40 ± 0.08 in Pineapple)."""
    import json
    import math

    from pipeline.simulate.simulation import simulate

    config = SimulationConfig(hands=2500, seed=41, variants=(variant,), players=2, pool_size=2,
                              bots=("expert", "solid"))
    expert = config.plan()[0].players[0].name  # the pool deals the bots in turn
    points = [seat["reported_points"] for output in simulate(config)
              for line in output.lines.splitlines() for seat in json.loads(line)["players"]
              if seat["name"] == expert]
    mean = sum(points) / len(points)
    error = math.sqrt(sum((value - mean) ** 2 for value in points) / (len(points) - 1)
                      / len(points))
    assert mean > 3 * error and mean > 0.3, (mean, error)


def test_preparing_a_policy_compiles_its_play_and_the_setter_in_this_process() -> None:
    """:func:`prepare_policy` (what the grader's parent process does before forking its
    workers) leaves the learned bot's compiled street player and the compiled Fantasyland
    setter ready in this process: compiled for the argument types the rollouts pass, so the
    workers inherit them."""
    from pipeline.analysis.rollout import prepare_policy
    from pipeline.simulate.learned_kernel import play_learned
    from pipeline.solver.fantasyland_kernel import _solve_all, solve_deals

    assert not prepare_policy("solid", STANDARD)  # no compiled play (the setter is readied)
    assert len(_solve_all.signatures) == 1
    assert prepare_policy("learned", STANDARD)
    assert len(play_learned.signatures) == 1
    # what the rollouts pass (a column of drawn deals) needs no other specialisation
    solve_deals(np.arange(28).reshape(2, 14)[:, ::-1], Variant.PINEAPPLE, STANDARD, 10.0)
    assert len(_solve_all.signatures) == 1
    for variant in Variant:
        ColumnPolicy("learned", variant, STANDARD).prepare()
    assert len(play_learned.signatures) == 1  # one specialisation serves every variant
    boards = BoardBatch.from_rows([((), (), ())]).repeat(4)
    dealt = np.asarray([[0, 5, 10, 15, 20]] * 4)
    ColumnPolicy("learned", Variant.CLASSIC, STANDARD).play_street(boards, dealt, 0)
    assert len(play_learned.signatures) == 1  # the rollouts' calls used it
    assert (boards.counts.sum(axis=1) == 5).all()
