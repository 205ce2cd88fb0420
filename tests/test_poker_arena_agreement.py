"""Re-scoring the real poker-arena logs reproduces the engine's own verdicts.

The logs (shared/formats/poker-arena, MIT) record, per seat, the engine's foul flag, raw royalties
per row, the Fantasyland card count earned and the points. Our rules core, under a rules file
matching the engine's house rule, must agree on every one of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.formats.poker_arena import read_poker_arena
from pipeline.ingest.evaluate import score_record, score_records
from pipeline.records.rules_file import load_rules_file
from pipeline.records.validate import parse_hand
from pipeline.rules.ruleset import preset

DATA = Path(__file__).parent / "formats" / "data"
LOGS = {
    "ofc.jsonl": preset("standard"),
    "ofc-pineapple.jsonl": load_rules_file(DATA / "poker-arena-pineapple.toml"),
}


def _hands(name: str):
    path = DATA / name
    if not path.exists():
        path = Path(__file__).resolve().parents[2] / "shared" / "formats" / "poker-arena" / name
    records = list(read_poker_arena(path))
    assert records and all(record.error is None for record in records)
    return [parse_hand(record.record) for record in records]


@pytest.mark.parametrize("name", sorted(LOGS))
def test_rescore_reproduces_engine_verdicts(name: str) -> None:
    rules = LOGS[name]
    hands = _hands(name)
    checked = fantasyland_seen = fouls_seen = 0
    for hand in hands:
        scored = score_record(hand, rules)
        for player, verdict in zip(hand.players, scored.players, strict=True):
            engine = player.extra["source_showdown"]
            assert verdict.foul == engine["fouled"], (hand.hand_id, player.name)
            engine_royalties = engine["royalties"]
            assert verdict.raw_royalties == (
                engine_royalties["top"], engine_royalties["middle"], engine_royalties["bottom"]
            ), (hand.hand_id, player.name)
            assert verdict.fantasyland_cards == (engine["next_fantasyland"] or 0), (hand.hand_id, player.name)
            assert verdict.points == player.reported_points, (hand.hand_id, player.name)
            checked += 1
            fantasyland_seen += verdict.fantasyland_cards > 0
            fouls_seen += verdict.foul
        assert sum(verdict.points for verdict in scored.players) == 0
    assert checked >= 9 and fantasyland_seen >= 1 and fouls_seen >= 2


@pytest.mark.parametrize("name", sorted(LOGS))
def test_records_name_presets_that_match_the_engine(name: str) -> None:
    """Scoring each record under the rules it names (a poker-arena preset) agrees too, batch path."""
    from pipeline.records.rules_file import RulesResolver

    hands = _hands(name)
    for hand, scored in zip(hands, score_records(hands, RulesResolver()), strict=True):
        assert [verdict.points for verdict in scored.players] == [p.reported_points for p in hand.players]


def test_middle_full_house_stay_is_the_house_rule_that_matters() -> None:
    """Under the standard stay rule, a Fantasyland board with a middle full house would stay;
    the engine's pineapple rule says it does not. Checked on a constructed board."""
    from pipeline.rules.board import evaluate_board
    from pipeline.rules.cards import parse_cards
    from pipeline.rules.game import Variant

    board = (parse_cards("2c 3d 4h"), parse_cards("9c 9d 9h 5s 5c"), parse_cards("Kc Kd Kh 7s 7c"))
    standard = evaluate_board(*board, Variant.PINEAPPLE, preset("standard"), in_fantasyland=True)
    engine = evaluate_board(*board, Variant.PINEAPPLE, LOGS["ofc-pineapple.jsonl"], in_fantasyland=True)
    assert standard.fantasyland_cards == 14
    assert engine.fantasyland_cards == 0
