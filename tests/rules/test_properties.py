"""Properties over many seeded random boards (and hypothesis-drawn decks):

* the scalar core (evaluate_board / score_pair / score_hand) and the batch core
  (evaluate_boards / score_pairs / settle_hands) agree exactly on >= 20,000 boards per variant,
  including boards built to hit every royalty class, fouls and ties — and every class is covered;
* both agree with the independent reference reading of the spec (tests/rules/reference.py)
  on fouls, royalties, Fantasyland and standard pair points;
* a hand's points sum to zero (with and without a cap), nobody goes below -cap, a fouled board
  earns nothing, two fouled boards tie at 0, and swapping two players negates their points.
"""

from __future__ import annotations

import random
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.rules.batch import evaluate_boards, score_pairs, settle_hands
from pipeline.rules.board import evaluate_board
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import preset, ruleset_from_mapping
from pipeline.rules.scoring import score_hand, score_pair
from pipeline.rules.values import HandClass, LowClass
from tests.rules import reference
from tests.rules.generate import built_boards, dealt_hands, permute_suits

CLASSIC, PINEAPPLE, LOWBALL = Variant.CLASSIC, Variant.PINEAPPLE, Variant.LOWBALL_PINEAPPLE
STANDARD = preset("standard")
PROGRESSIVE = preset("progressive")
HOUSE = ruleset_from_mapping({
    "name": "house-2-4",
    "scoring": {"method": "2-4", "royalties": "winner-only", "cap": 25},
    "fantasyland": {"entry_top_pair": "K", "stay_requalify": True},
})
CAPPED = ruleset_from_mapping({"name": "cap-15-scoop-6", "scoring": {"scoop_bonus": 6, "cap": 15}})
MAX_PLAYERS = {CLASSIC: 4, PINEAPPLE: 3, LOWBALL: 3}


class Corpus:
    """Boards of one variant: dealt hands plus built boards plus suit-permuted twins."""

    def __init__(self, variant: Variant, seed: int, hands: int, built: int):
        rng = random.Random(seed)
        self.variant = variant
        hand_boards = dealt_hands(rng, hands, 2, MAX_PLAYERS[variant])
        boards: list[list[int]] = []
        self.hands: list[list[int]] = []  # board indexes per hand, in seat order
        for hand in hand_boards:
            self.hands.append(list(range(len(boards), len(boards) + len(hand))))
            boards += hand
        self.built_start = len(boards)
        boards += built_boards(rng, built, lowball=variant is LOWBALL)
        # ties: a suit-relabelled twin of some boards (same value in every row)
        self.twins: list[tuple[int, int]] = []
        for index in rng.sample(range(len(boards)), 1500):
            self.twins.append((index, len(boards)))
            boards.append(permute_suits(boards[index], rng))
        self.boards = boards
        self.cards = np.asarray(boards, dtype=np.int16)
        self.in_fantasyland = np.asarray([rng.random() < 0.3 for _ in boards])
        self.buttons = [rng.randrange(len(hand)) for hand in self.hands]
        self.pairs = [(i, j) for hand in self.hands for i in hand for j in hand if i < j]
        built_indexes = range(self.built_start, len(boards))
        self.pairs += [tuple(rng.sample(built_indexes, 2)) for _ in range(5000)]
        self.pairs += self.twins

    def __len__(self) -> int:
        return len(self.boards)


@cache
def corpus(variant: Variant) -> Corpus:
    # dealt hands give about 2.5-3 boards each; together with built boards and twins >= 20,000
    hands = {CLASSIC: 4000, PINEAPPLE: 4500, LOWBALL: 4500}[variant]
    return Corpus(variant, seed={CLASSIC: 1, PINEAPPLE: 2, LOWBALL: 3}[variant], hands=hands, built=8000)


@cache
def scalar(variant: Variant, rules_name: str) -> list:
    rules = RULES[rules_name]
    data = corpus(variant)
    return [
        evaluate_board(board[:3], board[3:8], board[8:], variant, rules, bool(flag))
        for board, flag in zip(data.boards, data.in_fantasyland, strict=True)
    ]


RULES = {rules.name: rules for rules in (STANDARD, PROGRESSIVE, HOUSE, CAPPED)}
CONFIGS = [
    (CLASSIC, "standard"),
    (CLASSIC, "house-2-4"),
    (PINEAPPLE, "progressive"),
    (PINEAPPLE, "cap-15-scoop-6"),
    (LOWBALL, "standard"),
]
CONFIG_IDS = [f"{variant.value}-{name}" for variant, name in CONFIGS]


def _class_number(label: str, lowball_middle: bool) -> int:
    return LowClass[label.upper()] if lowball_middle else HandClass[label.upper()]


def _first_mismatch(expected: np.ndarray, actual: np.ndarray) -> int | None:
    rows = np.nonzero((np.asarray(expected) != np.asarray(actual)).reshape(len(expected), -1).any(axis=1))[0]
    return int(rows[0]) if len(rows) else None


@pytest.mark.parametrize(("variant", "rules_name"), CONFIGS, ids=CONFIG_IDS)
def test_batch_boards_equal_scalar_boards(variant, rules_name):
    data = corpus(variant)
    assert len(data) >= 20_000
    rules = RULES[rules_name]
    columns = evaluate_boards(data.cards, variant, rules, data.in_fantasyland)
    evaluations = scalar(variant, rules_name)
    lowball = variant is LOWBALL
    expected = {
        "values": np.asarray([e.values for e in evaluations]),
        "classes": np.asarray([
            [_class_number(e.classes[0], False), _class_number(e.classes[1], lowball),
             _class_number(e.classes[2], False)]
            for e in evaluations
        ]),
        "foul": np.asarray([e.foul for e in evaluations]),
        "raw_royalties": np.asarray([e.raw_royalties for e in evaluations]),
        "royalties": np.asarray([e.royalties for e in evaluations]),
        "fantasyland_cards": np.asarray([e.fantasyland_cards for e in evaluations]),
    }
    for field, wanted in expected.items():
        index = _first_mismatch(wanted, getattr(columns, field))
        assert index is None, (
            f"{field} differs on board {index} {data.boards[index]}: scalar {wanted[index]}, "
            f"batch {getattr(columns, field)[index]}"
        )


EXTRA_RULES = {
    "flat-trips": preset("flat-trips"),
    "poker-arena-progressive": preset("poker-arena-progressive"),
    "odd-house": ruleset_from_mapping({
        "name": "odd-house",
        "scoring": {"royalties": "winner-only", "scoop_bonus": 6, "cap": 20},
        "royalties": {"top": {"pairs": {"2": 1, "A": 12}, "trips": {"K": 30}},
                      "middle": {"two_pair": 1, "straight": 5},
                      "bottom": {"trips": 1, "quads": 8},
                      "lowball_middle": {"ten_low": 1, "perfect_low": 10}},
        "fantasyland": {"entry_top_pair": "J", "progressive": True, "stay_requalify": True,
                        "stay_bottom_quads": False, "lowball_entry_top_pair": "A",
                        "progressive_cards": {"Q": 15, "K": 15, "A": 16, "trips": 16},
                        "cards_classic": 14, "stay_cards_classic": 15, "lowball_cards": 16,
                        "lowball_cards_both": 17},
    }),
    "no-fantasyland": ruleset_from_mapping({"name": "no-fantasyland", "fantasyland": {"enabled": False}}),
}
EXTRA_CONFIGS = [(variant, name) for variant in (CLASSIC, PINEAPPLE, LOWBALL) for name in EXTRA_RULES]


@pytest.mark.parametrize(("variant", "rules_name"), EXTRA_CONFIGS,
                         ids=[f"{v.value}-{n}" for v, n in EXTRA_CONFIGS])
def test_batch_equals_scalar_under_other_rule_sets(variant, rules_name):
    # a 6,000-board slice of each corpus (dealt and built boards), every output column and pair
    data = corpus(variant)
    rules = EXTRA_RULES[rules_name]
    rng = random.Random(rules_name)
    picks = sorted(rng.sample(range(len(data)), 6000))
    cards = data.cards[picks]
    flags = data.in_fantasyland[picks]
    columns = evaluate_boards(cards, variant, rules, flags)
    evaluations = [
        evaluate_board(data.boards[k][:3], data.boards[k][3:8], data.boards[k][8:], variant, rules, bool(flag))
        for k, flag in zip(picks, flags, strict=True)
    ]
    for field in ("values", "foul", "raw_royalties", "royalties", "fantasyland_cards"):
        wanted = np.asarray([getattr(e, field) for e in evaluations])
        index = _first_mismatch(wanted, getattr(columns, field))
        assert index is None, f"{field} differs on board {data.boards[picks[index]]}"
    first = np.asarray(rng.choices(range(6000), k=6000))
    second = np.asarray(rng.choices(range(6000), k=6000))
    pairs = score_pairs(columns, first, second, rules)
    wanted = [score_pair(evaluations[i], evaluations[j], rules).points for i, j in zip(first, second, strict=True)]
    assert pairs.points.tolist() == wanted
    seats = np.asarray([rng.sample(range(6000), MAX_PLAYERS[variant]) for _ in range(1500)])
    totals = settle_hands(columns, seats, rules)
    for row, hand in enumerate(seats.tolist()):
        result = score_hand([evaluations[k] for k in hand], rules)
        assert totals[row].tolist() == list(result.points)


STANDARD_TABLE_CONFIGS = [(CLASSIC, "standard"), (PINEAPPLE, "progressive"), (LOWBALL, "standard")]


@pytest.mark.parametrize(("variant", "rules_name"), STANDARD_TABLE_CONFIGS,
                         ids=[f"{v.value}-{n}" for v, n in STANDARD_TABLE_CONFIGS])
def test_boards_agree_with_the_reference_and_cover_every_class(variant, rules_name):
    data = corpus(variant)
    evaluations = scalar(variant, rules_name)
    lowball = variant is LOWBALL
    bottom_royalties, middle_royalties, top_royalties = set(), set(), set()
    middle_classes, bottom_classes, top_pairs, top_trips, cards_dealt = set(), set(), set(), set(), set()
    fouls = 0
    for board, flag, evaluation in zip(data.boards, data.in_fantasyland, evaluations, strict=True):
        top, middle, bottom = board[:3], board[3:8], board[8:]
        verdict = reference.board_verdict(top, middle, bottom, lowball)
        assert evaluation.foul is verdict["foul"], board
        assert evaluation.raw_royalties == verdict["raw"], board
        assert evaluation.royalties == verdict["royalties"], board
        expected_cards = reference.fantasyland_cards(
            top, middle, bottom, variant.value, rules_name == "progressive", bool(flag)
        )
        assert evaluation.fantasyland_cards == expected_cards, (board, bool(flag))
        fouls += evaluation.foul
        cards_dealt.add(evaluation.fantasyland_cards)
        if evaluation.foul:
            continue
        top_royalties.add(evaluation.royalties[0])
        middle_royalties.add(evaluation.royalties[1])
        bottom_royalties.add(evaluation.royalties[2])
        middle_classes.add(evaluation.classes[1])
        bottom_classes.add(evaluation.classes[2])
        category, ranks = reference.three_key(top)
        if category == reference.PAIR:
            top_pairs.add(ranks[0])
        elif category == reference.TRIPS:
            top_trips.add(ranks[0])
    # every royalty line was hit on a legal board, plus plenty of fouls
    assert 0.15 * len(data) < fouls < 0.85 * len(data)
    assert bottom_royalties == {0, 2, 4, 6, 10, 15, 25}
    assert bottom_classes == set(reference.CLASS_NAMES)
    assert top_pairs == set(range(13)) and top_trips == set(range(13))
    assert top_royalties == set(range(0, 23))
    if lowball:
        assert middle_royalties == {0, 1, 2, 4, 8}
        assert middle_classes == {"ten_low", "nine_low", "eight_low", "seven_low", "perfect_low"}
        assert cards_dealt == {0, 14, 15}
    else:
        assert middle_royalties == {0, 2, 4, 8, 12, 20, 30, 50}
        assert middle_classes == set(reference.CLASS_NAMES)
        assert cards_dealt == ({0, 13} if variant is CLASSIC else {0, 14, 15, 16, 17})


@pytest.mark.parametrize(("variant", "rules_name"), CONFIGS, ids=CONFIG_IDS)
def test_batch_pairs_equal_scalar_pairs(variant, rules_name):
    data = corpus(variant)
    rules = RULES[rules_name]
    evaluations = scalar(variant, rules_name)
    columns = evaluate_boards(data.cards, variant, rules, data.in_fantasyland)
    first = np.asarray([i for i, _ in data.pairs])
    second = np.asarray([j for _, j in data.pairs])
    batch = score_pairs(columns, first, second, rules)
    reverse = score_pairs(columns, second, first, rules)
    outcomes = [score_pair(evaluations[i], evaluations[j], rules) for i, j in data.pairs]
    for name, wanted in (
        ("rows", np.asarray([o.rows for o in outcomes])),
        ("scoop", np.asarray([o.scoop for o in outcomes])),
        ("royalty_points", np.asarray([o.royalty_points for o in outcomes])),
        ("points", np.asarray([o.points for o in outcomes])),
    ):
        index = _first_mismatch(wanted, getattr(batch, name))
        assert index is None, f"{name} differs on pair {data.pairs[index]}"
    # swapping the two players negates everything
    assert np.array_equal(reverse.points, -batch.points)
    assert np.array_equal(reverse.rows, -batch.rows)
    for (i, j), outcome in zip(data.pairs, outcomes, strict=True):
        a, b = evaluations[i], evaluations[j]
        assert score_pair(b, a, rules).points == -outcome.points
        if a.foul and b.foul:
            assert outcome.points == 0 and outcome.rows == (0, 0, 0)
        elif a.foul:
            # the fouled side earns nothing and pays at least the three rows
            assert outcome.points <= -3 and outcome.rows == (-1, -1, -1)
        elif b.foul:
            assert outcome.points >= 3 and outcome.rows == (1, 1, 1)
    # twins tie every row
    for i, j in data.twins:
        outcome = score_pair(evaluations[i], evaluations[j], rules)
        assert outcome.rows == (0, 0, 0) and outcome.points == 0


@pytest.mark.parametrize(("variant", "rules_name"), STANDARD_TABLE_CONFIGS,
                         ids=[f"{v.value}-{n}" for v, n in STANDARD_TABLE_CONFIGS])
def test_pair_points_agree_with_the_reference(variant, rules_name):
    data = corpus(variant)
    evaluations = scalar(variant, rules_name)
    lowball = variant is LOWBALL
    verdicts = {}
    for i, j in data.pairs[:6000]:
        for k in (i, j):
            if k not in verdicts:
                board = data.boards[k]
                verdicts[k] = reference.board_verdict(board[:3], board[3:8], board[8:], lowball)
        expected = reference.pair_points(verdicts[i], verdicts[j], lowball)
        assert score_pair(evaluations[i], evaluations[j], RULES[rules_name]).points == expected, (
            data.boards[i], data.boards[j]
        )


@pytest.mark.parametrize(("variant", "rules_name"), CONFIGS, ids=CONFIG_IDS)
def test_settle_hands_equals_score_hand(variant, rules_name):
    data = corpus(variant)
    rules = RULES[rules_name]
    evaluations = scalar(variant, rules_name)
    columns = evaluate_boards(data.cards, variant, rules, data.in_fantasyland)
    players = MAX_PLAYERS[variant]
    seats = np.full((len(data.hands), players), -1, dtype=np.int64)
    orders = []
    for row, (hand, button) in enumerate(zip(data.hands, data.buttons, strict=True)):
        # settlement starts left of the button and goes clockwise
        order = [(button + 1 + k) % len(hand) for k in range(len(hand))]
        orders.append(order)
        seats[row, : len(hand)] = [hand[position] for position in order]
    totals = settle_hands(columns, seats, rules)
    cap = rules.scoring.cap
    for row, (hand, order) in enumerate(zip(data.hands, orders, strict=True)):
        result = score_hand([evaluations[k] for k in hand], rules, order)
        assert tuple(int(totals[row, k]) for k in range(len(hand))) == tuple(
            result.points[position] for position in order
        ), (row, hand)
        assert (totals[row, len(hand):] == 0).all()
        assert sum(result.points) == 0
        if cap:
            assert min(result.points) >= -cap
            # capping only ever shrinks a pair's settlement, never flips it
            for matchup in result.matchups:
                assert abs(matchup.settled) <= abs(matchup.outcome.points)
                assert matchup.settled * matchup.outcome.points >= 0
    assert (totals.sum(axis=1) == 0).all()


# --- hypothesis: small, fast, drawn decks ----------------------------------------------------
@settings(max_examples=100, deadline=None, database=None)
@given(
    deck=st.permutations(range(52)),
    players=st.integers(2, 4),
    cap=st.sampled_from([0, 5, 12, 30]),
    method=st.sampled_from(["1-6", "2-4"]),
    royalties=st.sampled_from(["netted", "winner-only"]),
    start=st.integers(0, 3),
)
def test_hand_invariants(deck, players, cap, method, royalties, start):
    rules = ruleset_from_mapping({"scoring": {"method": method, "royalties": royalties, "cap": cap}})
    evaluations = [
        evaluate_board(deck[13 * p: 13 * p + 3], deck[13 * p + 3: 13 * p + 8], deck[13 * p + 8: 13 * p + 13],
                       CLASSIC, rules)
        for p in range(players)
    ]
    order = [(start + k) % players for k in range(players)]
    result = score_hand(evaluations, rules, order)
    uncapped_rules = ruleset_from_mapping({"scoring": {"method": method, "royalties": royalties}})
    uncapped = score_hand(evaluations, uncapped_rules, order)
    assert sum(result.points) == 0
    assert sum(uncapped.points) == 0
    if cap:
        assert min(result.points) >= -cap
        # a player who is at -cap settles nothing afterwards
        running = [0] * players
        for matchup in result.matchups:
            if running[matchup.first] <= -cap or running[matchup.second] <= -cap:
                assert matchup.settled == 0
            running[matchup.first] += matchup.settled
            running[matchup.second] -= matchup.settled
    else:
        assert result.points == uncapped.points
    for index, evaluation in enumerate(evaluations):
        if evaluation.foul:
            assert evaluation.royalties == (0, 0, 0)
            assert evaluation.fantasyland_cards == 0
            for other in evaluations:
                if other is not evaluation:
                    assert score_pair(evaluation, other, rules).points <= 0
        # the uncapped hand result is the sum of the player's pairwise results
        assert uncapped.points[index] == sum(
            score_pair(evaluation, other, rules).points
            for other in evaluations if other is not evaluation
        )
