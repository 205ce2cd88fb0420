"""The batch evaluator (pipeline/rules/batch.py) and the record scorer (pipeline/ingest/evaluate.py) on
hand-derived examples; the large random agreement checks live in test_properties.py.

Boards P, Q, R, F are those of test_scoring.py (derivations there):
P v Q = P -1, x v R = R +21, F pays P 6, Q 6, R 21; 4 players: P -16, Q -14, R 63, F -33."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pipeline.ingest.evaluate import score_output, score_record, score_records
from pipeline.records.record import FinalBoard, HandRecord, PlayerRecord
from pipeline.rules.batch import evaluate_boards, score_pairs, settle_hands
from pipeline.rules.ruleset import preset, ruleset_from_mapping
from pipeline.rules.values import HandClass, LowClass
from tests.rules.generate import dealt_hands
from tests.rules.helpers import CLASSIC, LOWBALL, PINEAPPLE, rows
from tests.rules.test_scoring import F_TEXT, P_TEXT, Q_TEXT, R_TEXT

STANDARD = preset("standard")


def as_array(*texts: str) -> np.ndarray:
    return np.asarray([sum(rows(text), ()) for text in texts], dtype=np.int16)


BOARDS = as_array(P_TEXT, Q_TEXT, R_TEXT, F_TEXT)


def test_evaluate_boards_hand_examples():
    columns = evaluate_boards(BOARDS, CLASSIC, STANDARD)
    assert len(columns) == 4
    assert columns.foul.tolist() == [False, False, False, True]
    assert columns.classes.tolist() == [
        [HandClass.HIGH_CARD, HandClass.PAIR, HandClass.TWO_PAIR],
        [HandClass.HIGH_CARD, HandClass.PAIR, HandClass.TRIPS],
        [HandClass.PAIR, HandClass.STRAIGHT, HandClass.FLUSH],
        [HandClass.PAIR, HandClass.PAIR, HandClass.PAIR],
    ]
    assert columns.raw_royalties.tolist() == [[0, 0, 0], [0, 0, 0], [7, 4, 4], [9, 0, 0]]
    assert columns.royalties.tolist() == [[0, 0, 0], [0, 0, 0], [7, 4, 4], [0, 0, 0]]
    # R enters Fantasyland with QQ (13 in classic); the fouled AA never does
    assert columns.fantasyland_cards.tolist() == [0, 0, 13, 0]
    pineapple = evaluate_boards(BOARDS, PINEAPPLE, preset("progressive"))
    assert pineapple.fantasyland_cards.tolist() == [0, 0, 14, 0]


def test_evaluate_boards_in_fantasyland_flags():
    # trips on top stays (13 classic), a QQ top does not
    cards = as_array("2c 2d 2h / 5c 6c 7h 8c 9c / 2s 4s 6s Ts Ks", R_TEXT)
    columns = evaluate_boards(cards, CLASSIC, STANDARD, np.asarray([True, True]))
    assert columns.fantasyland_cards.tolist() == [13, 0]
    columns = evaluate_boards(cards, CLASSIC, STANDARD, np.asarray([False, False]))
    assert columns.fantasyland_cards.tolist() == [13, 13]


def test_evaluate_boards_lowball_classes_are_low_classes():
    cards = as_array(
        "Kh Kd 3h / 7c 5d 4h 3s 2c / Ac Ad Ah 9s 6c",  # perfect low, KK: 15 cards
        "Kh Kd 3h / Jc 9d 8h 7s 5c / Ac Ad Ah 4s 6c",  # J-low: foul
    )
    columns = evaluate_boards(cards, LOWBALL, STANDARD)
    assert columns.classes[:, 1].tolist() == [LowClass.PERFECT_LOW, LowClass.NO_LOW]
    assert columns.foul.tolist() == [False, True]
    assert columns.royalties.tolist() == [[8, 8, 0], [0, 0, 0]]
    assert columns.fantasyland_cards.tolist() == [15, 0]


def test_evaluate_boards_rejects_a_wrong_shape():
    with pytest.raises(ValueError):
        evaluate_boards(np.zeros((3, 12), dtype=np.int16), CLASSIC, STANDARD)


def test_evaluate_boards_empty():
    columns = evaluate_boards(np.zeros((0, 13), dtype=np.int16), CLASSIC, STANDARD)
    assert len(columns) == 0


def test_score_pairs_hand_examples():
    columns = evaluate_boards(BOARDS, CLASSIC, STANDARD)
    first = np.asarray([0, 0, 1, 3, 3, 3])
    second = np.asarray([1, 2, 2, 0, 2, 3])
    pairs = score_pairs(columns, first, second, STANDARD)
    # P v Q -1; P v R -21; Q v R -21; F v P -6; F v R -21; F v F 0
    assert pairs.points.tolist() == [-1, -21, -21, -6, -21, 0]
    assert pairs.rows.tolist() == [[-1, 1, -1], [-1, -1, -1], [-1, -1, -1], [-1, -1, -1], [-1, -1, -1], [0, 0, 0]]
    assert pairs.scoop.tolist() == [0, -1, -1, -1, -1, 0]
    assert pairs.royalty_points.tolist() == [0, -15, -15, 0, -15, 0]


def test_settle_hands_hand_examples():
    columns = evaluate_boards(BOARDS, CLASSIC, STANDARD)
    seats = np.asarray([
        [0, 1, 2, 3],  # P, Q, R, F
        [2, 0, -1, -1],  # R v P
        [0, -1, 2, -1],  # P v R with gaps
        [0, 1, 2, -1],  # P, Q, R
    ])
    totals = settle_hands(columns, seats, STANDARD)
    assert totals.tolist() == [[-16, -14, 63, -33], [21, -21, 0, 0], [-21, 0, 21, 0], [-22, -20, 42, 0]]


def test_settle_hands_with_a_cap_follows_the_strict_order():
    columns = evaluate_boards(BOARDS, CLASSIC, STANDARD)
    cap20 = ruleset_from_mapping({"scoring": {"cap": 20}})
    cap10 = ruleset_from_mapping({"scoring": {"cap": 10}})
    # test_scoring: [P, F, R] in order P, F, R -> -15, -20, 35; in order R, P, F -> 40, -20, -20
    totals = settle_hands(columns, np.asarray([[0, 3, 2], [2, 0, 3]]), cap20)
    assert totals.tolist() == [[-15, -20, 35], [40, -20, -20]]
    # 4 players, cap 10, order P, Q, R, F -> -10, -10, 30, -10
    assert settle_hands(columns, np.asarray([[0, 1, 2, 3]]), cap10).tolist() == [[-10, -10, 30, -10]]


# --- pipeline.ingest.evaluate: score_record (scalar) == score_records (batch) -----------------------
NAMES = ("mara", "jun", "lee", "ola")


def _record(hand_id: str, variant, boards, rules: str, button: int, seats, fantasyland) -> HandRecord:
    players = tuple(
        PlayerRecord(
            name=NAMES[index], seat=seats[index], fantasyland=fantasyland[index],
            board=FinalBoard(tuple(board[:3]), tuple(board[3:8]), tuple(board[8:])),
        )
        for index, board in enumerate(boards)
    )
    return HandRecord(hand_id=hand_id, site="test", variant=variant, rules=rules, players=players,
                      button=NAMES[button])


def test_score_record_four_players_hand_example():
    boards = [list(sum(rows(text), ())) for text in (P_TEXT, Q_TEXT, R_TEXT, F_TEXT)]
    # ola (F) on the button: settlement starts with mara (P)
    record = _record("h1", CLASSIC, boards, "standard", 3, [1, 2, 3, 4], [False] * 4)
    scored = score_record(record, STANDARD)
    assert [p.points for p in scored.players] == [-16, -14, 63, -33]
    assert [(pair.first, pair.second) for pair in scored.pairs] == [
        ("mara", "jun"), ("mara", "lee"), ("mara", "ola"), ("jun", "lee"), ("jun", "ola"), ("lee", "ola")
    ]
    capped = ruleset_from_mapping({"name": "cap10", "scoring": {"cap": 10}})
    assert [p.points for p in score_record(record, capped).players] == [-10, -10, 30, -10]
    # lee (R) on the button: the order is ola (F), mara (P), jun (Q), lee (R)
    record = _record("h2", CLASSIC, boards, "standard", 2, [1, 2, 3, 4], [False] * 4)
    scored = score_record(record, capped)
    assert scored.pairs[0].first == "ola"
    # (F,P) P +6: F -6.  (F,Q) Q +6 but F pays 4: F -10.  (F,R) 0.  (P,Q) P -1: P +5, Q +5.
    # (P,R) P pays 15: P -10, R +15.  (Q,R) Q pays 15: Q -10, R +30
    assert [p.points for p in scored.players] == [-10, -10, 30, -10]
    assert [pair.settled for pair in scored.pairs] == [-6, -4, 0, -1, -15, -15]
    output = score_output(scored)
    assert output["players"][2] == {
        "name": "lee", "foul": False, "royalties": {"top": 7, "middle": 4, "bottom": 4},
        "points": 30, "fantasyland_next": True, "fantasyland_cards": 13,
        "classes": {"top": "pair", "middle": "straight", "bottom": "flush"},
    }


def test_score_records_equals_score_record_on_random_hands():
    rng = random.Random(11)
    rules_by_name = {
        "standard": STANDARD,
        "progressive": preset("progressive"),
        "cap": ruleset_from_mapping({"name": "cap", "scoring": {"cap": 12, "method": "2-4"}}),
        "winner": ruleset_from_mapping({"name": "winner", "scoring": {"royalties": "winner-only"},
                                        "fantasyland": {"stay_requalify": True}}),
    }
    records = []
    for variant, players in ((CLASSIC, 4), (PINEAPPLE, 3), (LOWBALL, 3)):
        for number, boards in enumerate(dealt_hands(rng, 400, 2, players)):
            count = len(boards)
            seats = sorted(rng.sample(range(1, 10), count))
            records.append(_record(
                f"{variant.value}-{number}", variant, boards, rng.choice(list(rules_by_name)),
                rng.randrange(count), seats, [rng.random() < 0.3 for _ in range(count)],
            ))
    rng.shuffle(records)
    batch = score_records(records, rules_by_name.__getitem__)
    assert len(batch) == len(records)
    for record, scored in zip(records, batch, strict=True):
        assert scored == score_record(record, rules_by_name[record.rules]), record.hand_id
        assert sum(player.points for player in scored.players) == 0


def test_score_records_keeps_rule_sets_apart_even_when_they_share_a_name():
    # a rules file may call itself anything, e.g. a "friday.toml" saying name = "standard" with a
    # scoop bonus of 6; records naming "standard" and "friday" must still each get their own rules
    boards = [list(sum(rows(text), ())) for text in (R_TEXT, P_TEXT)]
    rules_by_name = {
        "standard": STANDARD,
        "friday": ruleset_from_mapping({"name": "standard", "scoring": {"scoop_bonus": 6}}),
    }
    records = [
        _record("a", CLASSIC, boards, "standard", 1, [1, 2], [False, False]),
        _record("b", CLASSIC, boards, "friday", 1, [1, 2], [False, False]),
    ]
    # R scoops P: 3 + 3 + 15 = 21 under standard, 3 + 6 + 15 = 24 with the scoop bonus 6
    assert [p.points for p in score_record(records[0], STANDARD).players] == [21, -21]
    assert [p.points for p in score_record(records[1], rules_by_name["friday"]).players] == [24, -24]
    batch = score_records(records, rules_by_name.__getitem__)
    assert [[p.points for p in scored.players] for scored in batch] == [[21, -21], [24, -24]]


def test_the_stored_lookup_tables_are_what_the_scalar_evaluator_builds():
    """pipeline/rules/batch_tables.py (read at start-up instead of running the scalar evaluator
    14,000 times) holds exactly the tables the evaluator gives; regenerate it with
    ``stored_tables_source()`` when the evaluator changes."""
    from pathlib import Path

    from pipeline.rules import batch, batch_tables

    assert Path(batch_tables.__file__).read_text(encoding="utf-8") == batch.stored_tables_source()
    stored, computed = batch._tables(), batch._computed_tables()
    for name in stored.__slots__:
        assert getattr(stored, name).dtype == getattr(computed, name).dtype
        assert np.array_equal(getattr(stored, name), getattr(computed, name)), name
    assert np.count_nonzero(stored.five_high) == 6175  # every five-card rank multiset
