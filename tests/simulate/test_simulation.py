"""The simulator plays by the rules: valid records, points from the rules core, the dealer's
duties (streets, Fantasyland, button, action order, sessions), and byte-identical output."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta

import pytest

from pipeline.ingest.evaluate import score_record
from pipeline.records.validate import parse_hand
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import preset, ruleset_from_mapping
from pipeline.simulate.simulation import SimulationConfig, SimulationError, simulate
from tests.simulate.helpers import lines_of, records_of, sessions_of, when

CASES = [
    pytest.param(Variant.PINEAPPLE, "standard", 3, id="pineapple-3"),
    pytest.param(Variant.PINEAPPLE, "progressive", 3, id="pineapple-progressive"),
    pytest.param(Variant.PINEAPPLE, "standard", 2, id="pineapple-2"),
    pytest.param(Variant.CLASSIC, "standard", 4, id="classic-4"),
    pytest.param(Variant.LOWBALL_PINEAPPLE, "standard", 3, id="2-7-pineapple"),
    pytest.param(Variant.PINEAPPLE, "poker-arena-pineapple", 3, id="poker-arena-rules"),
]


@pytest.mark.parametrize(("variant", "rules_name", "players"), CASES)
def test_every_record_is_valid_and_points_come_from_the_rules_core(
    variant: Variant, rules_name: str, players: int
) -> None:
    rules = preset(rules_name)
    config = SimulationConfig(
        hands=240, tables=2, players=players, variants=(variant,), rules=rules,
        bots=("solid", "chaser", "random"), seed=11,
    )
    records = records_of(config)
    assert len(records) == 240
    fantasyland_seen = 0
    for record in records:
        hand = parse_hand(record)  # raises on anything invalid
        assert hand.variant is variant and hand.rules == rules_name and hand.site == "sim"
        scored = score_record(hand, rules)
        for player, verdict in zip(record["players"], scored.players, strict=True):
            assert player["reported_points"] == verdict.points
        assert sum(player["reported_points"] for player in record["players"]) == 0
        fantasyland_seen += sum(player["fantasyland"] for player in record["players"])
    assert fantasyland_seen > 0


def test_settlement_order_starts_left_of_the_button_under_a_cap() -> None:
    """With a per-hand cap, points depend on the settlement order (left of the button first):
    the simulator's points still equal the rules core's re-score of the record."""
    rules = ruleset_from_mapping({"name": "capped", "scoring": {"cap": 5}})
    config = SimulationConfig(hands=150, rules=rules, bots=("chaser", "random"), seed=13)
    capped = 0
    for record in records_of(config):
        scored = score_record(parse_hand(record), rules)
        for player, verdict in zip(record["players"], scored.players, strict=True):
            assert player["reported_points"] == verdict.points
        capped += any(pair.points != pair.settled for pair in scored.pairs)
    assert capped > 10


def test_lines_are_canonical_compact_json() -> None:
    config = SimulationConfig(hands=60, variants=(Variant.PINEAPPLE,), seed=3)
    for line in lines_of(config):
        assert json.dumps(json.loads(line), separators=(",", ":"), ensure_ascii=False) == line


def test_street_structure_and_discards() -> None:
    config = SimulationConfig(hands=90, variants=(Variant.PINEAPPLE,), seed=5)
    for record in records_of(config):
        for player in record["players"]:
            streets = player["streets"]
            if player["fantasyland"]:
                assert len(streets) == 1
                assert len(streets[0]["dealt"]) == 14
                assert len(streets[0]["discarded"]) == 1
                continue
            assert [len(street["dealt"]) for street in streets] == [5, 3, 3, 3, 3]
            assert [len(street["discarded"]) for street in streets] == [0, 1, 1, 1, 1]
            for street in streets:
                placed = [card for cards in street["placed"].values() for card in cards]
                assert sorted(placed + street["discarded"]) == sorted(street["dealt"])
    classic = SimulationConfig(hands=40, players=4, variants=(Variant.CLASSIC,), seed=5)
    for record in records_of(classic):
        for player in record["players"]:
            if not player["fantasyland"]:
                assert [len(street["dealt"]) for street in player["streets"]] == [5] + [1] * 8


def test_fantasyland_follows_the_rules_core_and_holds_the_button() -> None:
    """Within a session: a player is dealt Fantasyland exactly when the rules core said so
    after the previous hand, with the count it said; the button moves one seat left after each
    hand, except after a hand in which anyone played Fantasyland."""
    rules = preset("progressive")
    config = SimulationConfig(
        hands=400, variants=(Variant.PINEAPPLE,), rules=rules, bots=("chaser",), seed=2
    )
    checked_counts = Counter()
    for session in sessions_of(records_of(config)):
        for previous, record in zip(session, session[1:], strict=False):
            scored = score_record(parse_hand(previous), rules)
            for player, verdict in zip(record["players"], scored.players, strict=True):
                dealt = len(player["streets"][0]["dealt"]) if player["fantasyland"] else 0
                assert dealt == verdict.fantasyland_cards
                checked_counts[dealt] += 1
            seats = [player["name"] for player in previous["players"]]
            if any(player["fantasyland"] for player in previous["players"]):
                assert record["button"] == previous["button"]
            else:
                following = seats[(seats.index(previous["button"]) + 1) % len(seats)]
                assert record["button"] == following
    assert checked_counts[14] and checked_counts[0]
    assert set(checked_counts) - {0, 14}, "progressive counts (15-17) should occur"


def test_sessions_span_days_with_breaks_and_hands_minutes_apart() -> None:
    config = SimulationConfig(hands=720, tables=2, variants=(Variant.PINEAPPLE,), seed=9)
    records = records_of(config)
    sessions = sessions_of(records)
    assert len(sessions) >= 8
    for session in sessions:
        gaps = [when(b) - when(a) for a, b in zip(session, session[1:], strict=False)]
        assert all(timedelta(seconds=30) <= gap <= timedelta(minutes=5) for gap in gaps)
    days = {when(record).date() for record in records}
    assert len(days) >= 5
    by_table = defaultdict(list)
    for session in sessions:
        by_table[session[0]["table"]].append(session)
    for table_sessions in by_table.values():
        for earlier, later in zip(table_sessions, table_sessions[1:], strict=False):
            assert when(later[0]) - when(earlier[-1]) >= timedelta(hours=6)
    # a pool of named players: the same names come back across sessions and tables
    appearances = Counter(
        player["name"] for session in sessions for player in session[0]["players"]
    )
    assert 6 <= len(appearances) <= 10
    assert all(count >= 2 for count in appearances.values())


def test_nobody_sits_at_two_tables_at_once() -> None:
    config = SimulationConfig(hands=720, tables=3, variants=(Variant.PINEAPPLE,), seed=4)
    spans: dict[str, list[tuple]] = defaultdict(list)
    for session in sessions_of(records_of(config)):
        for player in session[0]["players"]:
            spans[player["name"]].append((when(session[0]), when(session[-1])))
    for intervals in spans.values():
        intervals.sort()
        for (_, end), (start, _) in zip(intervals, intervals[1:], strict=False):
            assert start > end


def test_hand_ids_are_unique_and_carry_the_seed() -> None:
    records = records_of(SimulationConfig(hands=500, tables=3, seed=77))
    ids = [record["hand_id"] for record in records]
    assert len(set(ids)) == len(ids)
    assert all(hand_id.startswith("s77-T") for hand_id in ids)


def test_mixed_variants_rotate_over_tables_and_sessions() -> None:
    config = SimulationConfig(
        hands=500, tables=2, variants=(Variant.CLASSIC, Variant.PINEAPPLE,
                                       Variant.LOWBALL_PINEAPPLE), seed=6,
    )
    variants = Counter(record["variant"] for record in records_of(config))
    assert set(variants) == {"classic", "pineapple", "2-7-pineapple"}


def test_same_seed_same_bytes_whatever_the_jobs_and_blocks() -> None:
    config = SimulationConfig(hands=360, tables=2, bots=("solid", "chaser", "random"), seed=21)
    reference = [output.lines for output in simulate(config)]
    assert len(reference) >= 4
    assert [output.lines for output in simulate(config, jobs=2, block_sessions=2)] == reference
    assert [output.lines for output in simulate(config, block_sessions=3)] == reference
    other_seed = SimulationConfig(hands=360, tables=2, bots=("solid", "chaser", "random"), seed=22)
    assert [output.lines for output in simulate(other_seed)] != reference


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"players": 4, "variants": (Variant.PINEAPPLE,)}, "2-3 players"),
        ({"bots": ("solid", "genius")}, "unknown bot 'genius'"),
        ({"hands": 0}, "--hands"),
        ({"pool_size": 2}, "pool of 2"),
        # each used to build millions of players before the first hand (1.7 GB in 15 s)
        ({"tables": 11}, "more tables than hands"),
        # a start past 9999 stopped with OverflowError; one before 1900 wrote hands that are
        # all refused at ingest
        ({"start": datetime(9999, 12, 31, 23, tzinfo=UTC)}, "years 1900-2199"),
        ({"start": datetime(1, 1, 1, tzinfo=UTC)}, "years 1900-2199"),
        ({"hands": 10**9, "tables": 100_001}, "--tables must be at most 100,000"),
        ({"pool_size": 1_000_001}, "at most 1,000,000 players"),
        ({"hands": 10**6, "tables": 100_000, "pool_size": 1_000_000}, None),
        ({"rules": preset("progressive"), "variants": (Variant.CLASSIC,), "players": 4}, None),
    ],
)
def test_impossible_configurations_are_refused(changes: dict, message: str | None) -> None:
    config = SimulationConfig(**{"hands": 10, **changes})
    if message is None:
        config.check()
        return
    with pytest.raises(SimulationError, match=message):
        config.check()
