"""The kept play order (``play_order``): after hands arrive out of order, undated, with equal
start times, in many small batches, and after a delete, every player's numbering and running
totals equal the ones worked out here in plain Python from the stored results; the dashboard's
cumulative and rolling charts read it and give what the full pass gives; a numbering that does
not cover every result is not trusted."""

from __future__ import annotations

import random
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
from polars.testing import assert_frame_equal

from pipeline import read
from pipeline.ingest.delete import delete_hand
from pipeline.ingest.driver import ingest_mappings
from pipeline.read.scope import Filters
from pipeline.read.totals import AggregatesUnavailable, Route
from pipeline.store.aggregates import play_order_ready
from tests.simulated_mix import Mixed, mixed

__all__ = ["mixed"]


def _expected(database: Path) -> list[tuple]:
    """Every player's hands numbered in play order, computed here without SQL windows:
    (player, hand_number, hand_key, started_at, cumulative points, cumulative fouls, variant,
    table size, points, foul)."""
    connection = duckdb.connect(str(database), read_only=True)
    try:
        rows = connection.sql(
            "SELECT r.player, r.hand_key, h.started_at, r.points, e.foul, h.variant, "
            "h.player_count FROM results r "
            "JOIN hands h USING (hand_key) "
            "JOIN evaluations e ON e.hand_key = r.hand_key AND e.player = r.player").fetchall()
    finally:
        connection.close()
    by_player: dict[str, list[tuple]] = {}
    for player, key, started, points, foul, variant, size in rows:
        by_player.setdefault(player, []).append((started, key, points, foul, variant, size))
    expected = []
    for player, hands in by_player.items():
        hands.sort(key=lambda hand: (hand[0] is not None, hand[0] or datetime.min, hand[1]))
        points_so_far = fouls_so_far = 0
        for number, (started, key, points, foul, variant, size) in enumerate(hands, start=1):
            points_so_far += points
            fouls_so_far += int(foul)
            expected.append((player, number, key, started, points_so_far, fouls_so_far,
                             variant, size, points, foul))
    return sorted(expected)


def _kept(database: Path) -> list[tuple]:
    connection = duckdb.connect(str(database), read_only=True)
    try:
        return connection.sql("SELECT player, hand_number, hand_key, started_at, cumulative, "
                              "fouls, variant, player_count, points, foul FROM play_order "
                              "ORDER BY ALL").fetchall()
    finally:
        connection.close()


def _charts_agree(database: Path, players: tuple[str, ...]) -> None:
    connection = read.source.open_reader(database)
    try:
        assert play_order_ready(connection)
        for filters in (Filters(), Filters(players=players[:1]), Filters(players=players)):
            for question in (read.players.cumulative_points, read.players.rolling_foul_rate,
                             *([read.report.report_progress_series] if filters.players
                               else [])):
                kept = question(connection, filters, route=Route.AGGREGATES)
                full = question(connection, filters, route=Route.FULL_PASS)
                assert kept.height > 0
                assert_frame_equal(kept, full, check_exact=True)
    finally:
        connection.close()


@pytest.fixture(scope="module")
def scrambled(mixed: Mixed, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The simulated hands, some undated and some sharing one start time, ingested newest
    chunk first and shuffled within chunks, in batches of 17."""
    records = mixed.records()
    chooser = random.Random(11)
    for record in chooser.sample(records, 40):
        record["started_at"] = None
    shared = records[100]["started_at"]
    for record in records[101:110]:
        record["started_at"] = shared
    chunks = [records[start:start + 90] for start in range(0, len(records), 90)]
    database = tmp_path_factory.mktemp("play-order") / "scrambled.duckdb"
    for number, chunk in enumerate(reversed(chunks)):
        chooser.shuffle(chunk)
        summary = ingest_mappings(chunk, database, f"chunk-{number}", batch_size=17)
        assert summary.stored == len(chunk), summary
    return database


def test_hands_out_of_order_are_numbered_in_play_order(scrambled: Path) -> None:
    kept = _kept(scrambled)
    assert kept == _expected(scrambled)
    assert any(row[3] is None for row in kept)  # undated hands come first, and are numbered
    players = tuple(sorted({row[0] for row in kept}))
    _charts_agree(scrambled, players[:3])


def test_a_deleted_hand_renumbers_the_later_ones(scrambled: Path, tmp_path: Path) -> None:
    database = tmp_path / "deleted.duckdb"
    database.write_bytes(scrambled.read_bytes())
    connection = duckdb.connect(str(database), read_only=True)
    player, site, hand_id, number, total = connection.sql(
        "SELECT p.player, h.site, h.hand_id, p.hand_number, "
        "(SELECT max(hand_number) FROM play_order q WHERE q.player = p.player) "
        "FROM play_order p JOIN hands h USING (hand_key) "
        "WHERE p.hand_number = 20 ORDER BY p.player LIMIT 1").fetchall()[0]
    connection.close()
    assert delete_hand(database, site, hand_id)
    kept = _kept(database)
    assert kept == _expected(database)
    assert max(row[1] for row in kept if row[0] == player) == total - 1
    _charts_agree(database, (player,))


def test_a_numbering_that_misses_a_result_is_not_trusted(scrambled: Path,
                                                          tmp_path: Path) -> None:
    database = tmp_path / "stale.duckdb"
    database.write_bytes(scrambled.read_bytes())
    connection = duckdb.connect(str(database))
    connection.execute("DELETE FROM play_order WHERE hand_number = 3")
    connection.close()
    connection = read.source.open_reader(database)
    try:
        assert not play_order_ready(connection)
        with pytest.raises(AggregatesUnavailable):
            read.players.cumulative_points(connection, Filters(), route=Route.AGGREGATES)
        assert_frame_equal(read.players.cumulative_points(connection, Filters()),
                           read.players.cumulative_points(connection, Filters(),
                                                          route=Route.FULL_PASS))
    finally:
        connection.close()


def test_hand_filters_take_the_full_pass(scrambled: Path) -> None:
    connection = read.source.open_reader(scrambled)
    try:
        with pytest.raises(AggregatesUnavailable):
            read.players.rolling_foul_rate(connection, Filters(variants=("classic",)),
                                           route=Route.AGGREGATES)
    finally:
        connection.close()


def test_a_database_with_aggregates_but_no_numbering_gets_it_at_its_next_write(
        mixed: Mixed, scrambled: Path, tmp_path: Path) -> None:
    """A database whose aggregates were made before ``play_order``, ``hand_summaries`` and the
    day-free rollups: its next batch builds them (the numbering and the summaries from the
    stored hands, that batch included, and not counted twice; the rollups from the per-day
    tables, that batch added after)."""
    from tests.simulated_mix import rebuilt_aggregates

    database = tmp_path / "older.duckdb"
    database.write_bytes(scrambled.read_bytes())
    connection = duckdb.connect(str(database))
    for table in ("play_order", "board_totals_all", "pair_totals_all", "hand_summaries"):
        connection.execute(f"DELETE FROM {table}")
    connection.execute("DELETE FROM meta WHERE key IN ('play_order_version', 'rollup_version', "
                       "'hand_summary_version')")
    connection.close()
    later = mixed.records()[:12]
    for record in later:
        record["hand_id"] = f"later-{record['hand_id']}"
    assert ingest_mappings(later, database, "later", batch_size=5).stored == 12
    assert _kept(database) == _expected(database)
    kept, again = rebuilt_aggregates(database)
    assert kept == again


def test_a_numbering_without_the_hands_own_columns_is_rebuilt_at_the_next_write(
        mixed: Mixed, scrambled: Path, tmp_path: Path) -> None:
    """A database numbered by the first definition (no game, points or foul per row): readers
    do not trust it (a player's progress reads the hand tables, with the same result), and its
    next write adds the columns and numbers every hand again."""
    database = tmp_path / "first-definition.duckdb"
    database.write_bytes(scrambled.read_bytes())
    later = mixed.records()[:7]
    for record in later:
        record["hand_id"] = f"after-{record['hand_id']}"
    player = (later[0]["players"][0]["name"],)
    connection = duckdb.connect(str(database))
    for column in ("variant", "player_count", "points", "foul"):
        connection.execute(f"ALTER TABLE play_order DROP COLUMN {column}")
    connection.execute("UPDATE meta SET value = '1' WHERE key = 'play_order_version'")
    connection.execute("DELETE FROM meta WHERE key = 'schema_fingerprint'")
    connection.close()
    reader = read.source.open_reader(database)
    try:
        assert not play_order_ready(reader)
        with pytest.raises(AggregatesUnavailable):
            read.report.report_progress_series(reader, Filters(players=player),
                                               route=Route.AGGREGATES)
        before = read.report.report_progress_series(reader, Filters(players=player))
    finally:
        reader.close()
    assert ingest_mappings(later, database, "after", batch_size=3).stored == 7
    assert _kept(database) == _expected(database)
    reader = read.source.open_reader(database)
    try:
        assert play_order_ready(reader)
        after = read.report.report_progress_series(reader, Filters(players=player),
                                                   route=Route.AGGREGATES)
    finally:
        reader.close()
    assert after.height > before.height
    assert_frame_equal(after.filter(~after["hand_key"].is_in(
        [int(key) for key in set(after["hand_key"]) - set(before["hand_key"])])), before,
        check_exact=True)
