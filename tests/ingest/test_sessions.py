"""Sessions: a player's hands at one table with breaks under the gap form one session."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pipeline import store
from pipeline.ingest.driver import ingest_mappings, ingest_paths
from pipeline.ingest.sessions import DEFAULT_SESSION_GAP_MINUTES, update_sessions
from tests.ingest.conftest import deal_hand, query, write_jsonl

TIMES_T1 = ("20:00", "20:10", "20:35", "21:20", "21:40")  # 45-minute break before 21:20


def _hands() -> list[dict]:
    hands = [
        deal_hand(seed, players=2, table="T1", started_at=f"2026-11-01T{time}:00Z")
        for seed, time in enumerate(TIMES_T1)
    ]
    hands.append(deal_hand(50, players=2, table="T2", started_at="2026-11-01T20:05:00Z"))
    hands.append(deal_hand(51, players=2, table="T1", started_at=None))
    return hands


def _sessions(database: Path) -> list[tuple]:
    return query(database, "SELECT player, table_name, started_at::VARCHAR, ended_at::VARCHAR, "
                 "hands FROM sessions ORDER BY player, table_name, started_at")


def test_breaks_of_the_gap_or_more_start_a_new_session(tmp_path: Path, database: Path) -> None:
    ingest_paths([write_jsonl(tmp_path / "a.jsonl", _hands())], database)

    assert _sessions(database) == [
        ("jun", "T1", "2026-11-01 20:00:00", "2026-11-01 20:35:00", 3),
        ("jun", "T1", "2026-11-01 21:20:00", "2026-11-01 21:40:00", 2),
        ("jun", "T2", "2026-11-01 20:05:00", "2026-11-01 20:05:00", 1),
        ("mara", "T1", "2026-11-01 20:00:00", "2026-11-01 20:35:00", 3),
        ("mara", "T1", "2026-11-01 21:20:00", "2026-11-01 21:40:00", 2),
        ("mara", "T2", "2026-11-01 20:05:00", "2026-11-01 20:05:00", 1),
    ]
    # Seats carry the session id; a hand without a start time has none.
    per_session = query(database, "SELECT s.session_id, count(*), sum(r.points) FROM seats s "
                        "JOIN results r USING (hand_key, player) WHERE s.session_id IS NOT NULL "
                        "GROUP BY 1 ORDER BY 1")
    stored = query(database, "SELECT session_id, hands, points FROM sessions ORDER BY 1")
    assert per_session == stored
    assert query(database, "SELECT count(*) FROM seats WHERE session_id IS NULL") == [(2,)]


def test_session_ids_do_not_depend_on_ingest_order(tmp_path: Path) -> None:
    hands = _hands()
    forward, backward = tmp_path / "forward.duckdb", tmp_path / "backward.duckdb"
    ingest_paths([write_jsonl(tmp_path / "a.jsonl", hands)], forward)
    ingest_mappings(hands[3:], backward, source_name="late")
    ingest_mappings(hands[:3], backward, source_name="early")

    def assignment(database: Path) -> list[tuple]:
        return query(database, "SELECT h.hand_id, s.player, s.session_id FROM seats s "
                     "JOIN hands h USING (hand_key) ORDER BY 1, 2")

    assert assignment(forward) == assignment(backward)
    assert query(forward, "SELECT * FROM sessions ORDER BY 1") == query(
        backward, "SELECT * FROM sessions ORDER BY 1")


def test_the_gap_is_configurable(tmp_path: Path, database: Path) -> None:
    source = write_jsonl(tmp_path / "a.jsonl", _hands())
    ingest_paths([source], database, session_gap=60)
    assert query(database, "SELECT count(*) FROM sessions WHERE table_name = 'T1'") == [(2,)]

    # A later ingest with another gap recomputes every session with it.
    ingest_paths([write_jsonl(tmp_path / "b.jsonl", [deal_hand(99, players=2, table="T9",
                  started_at="2026-11-02T10:00:00Z")])], database, session_gap=20)
    # 20:00+20:10 | 20:35 | 21:20 | 21:40 (a break of exactly the gap splits), per player
    assert query(database, "SELECT count(*) FROM sessions WHERE table_name = 'T1'") == [(8,)]


def _stored_sessions(database: Path) -> dict[str, list[tuple]]:
    return {
        "sessions": query(database, "SELECT * FROM sessions ORDER BY session_id"),
        "totals": query(database, "SELECT * FROM session_totals ORDER BY ALL"),
        "seats": query(database, "SELECT hand_key, player, session_id FROM seats ORDER BY 1, 2"),
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sessions_kept_batch_by_batch_are_those_of_a_full_recompute(
    tmp_path: Path, seed: int
) -> None:
    # Hands on a 15-minute grid (so breaks of exactly the 30-minute gap, and hands at the same
    # minute, are common), at two tables, players coming and going, arriving in random chunks
    # out of time order: a late chunk can extend a session at either end, fill the break
    # between two sessions (merging them) or start one of its own.
    rng = random.Random(seed)
    names = ("mara", "jun", "lee", "ana")
    hands = []
    for number in range(60):
        seated = tuple(rng.sample(names, rng.choice((2, 3))))
        minute = 15 * rng.randrange(40)
        started = f"2026-11-01T{8 + minute // 60:02d}:{minute % 60:02d}:00Z"
        hands.append(deal_hand(1000 * seed + number, players=len(seated), names=seated,
                               table=rng.choice(("T1", "T2")), hand_id=f"h{number}",
                               started_at=None if number % 17 == 0 else started))
    rng.shuffle(hands)
    cuts = sorted(rng.sample(range(1, len(hands)), 7))
    database = tmp_path / "kept.duckdb"
    for start, end in zip([0, *cuts], [*cuts, len(hands)], strict=True):
        ingest_mappings(hands[start:end], database, source_name=f"chunk{start}")
        kept = _stored_sessions(database)
        with store.connect(database) as connection:
            connection.execute("BEGIN TRANSACTION")
            update_sessions(connection, None, DEFAULT_SESSION_GAP_MINUTES)
            connection.execute("COMMIT")
        assert _stored_sessions(database) == kept
    assert len(kept["sessions"]) > 10  # the data made sessions to split and merge


def test_an_append_renames_a_session_it_starts_earlier_or_joins_to_another(
        tmp_path: Path) -> None:
    """Worked example of the block merge (:func:`add_sessions`), gap 30 minutes, two players
    at T1: sessions 10:00-10:20 and 11:00-11:20. A hand at 10:40 joins them (20 minutes to
    either side): one session from 10:00, the 11:00 session's stored seats take its id. A hand
    at 09:45 then starts it earlier: a new id (its first start changed), every stored seat
    follows. A hand at 12:00 (40 minutes after the end) is a session of its own. After each
    append the database is what a full recompute from every seat gives."""
    def hand(seed: int, time: str) -> dict:
        return deal_hand(seed, players=2, table="T1", hand_id=f"h{seed}",
                         started_at=f"2026-11-01T{time}:00Z")

    database = tmp_path / "blocks.duckdb"
    ingest_mappings([hand(1, "10:00"), hand(2, "10:20"), hand(3, "11:00"), hand(4, "11:20")],
                    database, source_name="first")
    steps = [("joined", hand(5, "10:40"), [("10:00", "11:20", 5)]),
             ("earlier", hand(6, "09:45"), [("09:45", "11:20", 6)]),
             ("apart", hand(7, "12:00"), [("09:45", "11:20", 6), ("12:00", "12:00", 1)])]
    ids_before = {row[0] for row in query(database, "SELECT session_id FROM sessions")}
    assert len(ids_before) == 4  # two players × two sessions
    for name, record, expected in steps:
        ingest_mappings([record], database, source_name=name)
        for player in ("mara", "jun"):
            assert query(database, "SELECT strftime(started_at, '%H:%M'), "
                         "strftime(ended_at, '%H:%M'), hands FROM sessions WHERE player = ? "
                         "ORDER BY started_at", [player]) == expected
        kept = _stored_sessions(database)
        assert query(database, "SELECT count(*) FROM seats WHERE session_id NOT IN "
                     "(SELECT session_id FROM sessions)") == [(0,)]
        with store.connect(database) as connection:
            connection.execute("BEGIN TRANSACTION")
            update_sessions(connection, None, DEFAULT_SESSION_GAP_MINUTES)
            connection.execute("COMMIT")
        assert _stored_sessions(database) == kept, name
        if name == "joined":  # the 10:00 session's id stays; the 11:00 one's is gone
            ids = {row[0] for row in query(database, "SELECT session_id FROM sessions")}
            assert len(ids & ids_before) == 2 and len(ids) == 2
