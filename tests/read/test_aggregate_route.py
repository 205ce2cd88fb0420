"""The aggregates answer exactly as a full pass over the boards does: every question, every filter
the aggregates serve, the whole coaching report and the comparison pages' tables; filters finer
than their grain take the full pass."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb
import pytest
from polars.testing import assert_frame_equal

from pipeline import read
from pipeline.read.scope import Filters
from pipeline.read.totals import AggregatesUnavailable, Route, preferred_route
from pipeline.report import ReportRequest, create_report
from pipeline.report.compare import compare_players, player_progress
from pipeline.report.model import ReportSettings
from pipeline.report.reference import ReferenceSpec
from pipeline.report.render import render_markdown
from tests.simulated_mix import Mixed, assert_routes_agree, mixed, players_of, questions

__all__ = ["mixed"]

SETTINGS = ReportSettings(min_sample=20, min_sessions=3, percentile_min_hands=20,
                          notable_hands=3, max_opponents=8)


def test_the_simulated_database_has_what_the_aggregates_must_handle(mixed: Mixed) -> None:
    connection = duckdb.connect(str(mixed.database), read_only=True)
    try:
        games = connection.sql(
            "SELECT DISTINCT variant, rules, player_count FROM hands ORDER BY ALL").fetchall()
        fouls, fantasyland, entries, days = connection.sql(
            "SELECT count(*) FILTER (WHERE e.foul), count(*) FILTER (WHERE s.fantasyland), "
            "count(*) FILTER (WHERE e.fantasyland_next), count(DISTINCT h.started_at::DATE) "
            "FROM seats s JOIN evaluations e USING (hand_key, player) "
            "JOIN hands h USING (hand_key)").fetchall()[0]
        two_out = connection.sql(
            "SELECT count(*) FROM (SELECT hand_key FROM seats WHERE player IN "
            f"({', '.join(repr(p) for p in players_of(mixed.database)[:4])}) "
            "GROUP BY hand_key HAVING count(*) >= 2)").fetchall()[0][0]
    finally:
        connection.close()
    assert {variant for variant, _, _ in games} == {"classic", "pineapple", "2-7-pineapple"}
    assert {count for _, _, count in games} == {2, 3}
    assert {rules for _, rules, _ in games} == {"standard", "progressive"}
    assert fouls > 50 and fantasyland > 20 and entries > 20 and days >= 3
    assert two_out > 0  # the several-left-out question meets two of them at one table


def test_every_question_is_the_same_from_the_aggregates_as_from_a_full_pass(
        mixed: Mixed) -> None:
    assert assert_routes_agree(mixed.database) == 7 * len(questions(["a"] * 4))


@pytest.mark.parametrize("filters", [
    Filters(tables=("T1",)),
    Filters(sessions=("S0",)),
    Filters(opponents=("mara",)),
], ids=["tables", "sessions", "opponents"])
def test_filters_finer_than_the_grain_take_the_full_pass(mixed: Mixed, filters: Filters) -> None:
    connection = read.source.open_reader(mixed.database)
    try:
        sessions = connection.sql("SELECT session_id FROM sessions ORDER BY session_id LIMIT 2"
                                  ).fetchall()
        if filters.sessions:
            filters = Filters(sessions=tuple(row[0] for row in sessions))
        with pytest.raises(AggregatesUnavailable):
            read.players.player_kpis(connection, filters, route=Route.AGGREGATES)
        automatic = read.players.player_kpis(connection, filters)
        full = read.players.player_kpis(connection, filters, route=Route.FULL_PASS)
        assert_frame_equal(automatic, full, check_exact=True)
        assert not automatic.is_empty()
        if filters.tables:
            with pytest.raises(AggregatesUnavailable):
                read.report.report_player_totals(connection, filters, route=Route.AGGREGATES)
    finally:
        connection.close()


def test_the_coaching_report_is_the_same_either_way(mixed: Mixed) -> None:
    players = players_of(mixed.database)
    requests = [
        ReportRequest(players[0]),
        ReportRequest(players[1], aliases=(players[5],), variant="classic"),
        ReportRequest(players[2], reference=ReferenceSpec.parse(f"named:{players[3]},{players[4]}"),
                      change_date=date(2026, 10, 7)),
        ReportRequest(players[0], reference=ReferenceSpec.parse("stake:progressive")),
    ]
    for request in requests:
        with preferred_route(Route.AGGREGATES):
            kept = create_report(mixed.database, request, SETTINGS)
        with preferred_route(Route.FULL_PASS):
            full = create_report(mixed.database, request, SETTINGS)
        assert render_markdown(kept) == render_markdown(full)
        assert kept == full


def test_the_comparison_pages_are_the_same_either_way(mixed: Mixed) -> None:
    players = tuple(players_of(mixed.database)[:6])
    for spec in (ReferenceSpec(), ReferenceSpec(outlier_sd=None),
                 ReferenceSpec.parse("qualified:50:60")):
        with preferred_route(Route.AGGREGATES):
            kept = compare_players(mixed.database, Filters(), players, spec, SETTINGS)
        with preferred_route(Route.FULL_PASS):
            full = compare_players(mixed.database, Filters(), players, spec, SETTINGS)
        assert_frame_equal(kept.table, full.table, check_exact=True)
        assert kept.group == full.group
    with preferred_route(Route.AGGREGATES):
        kept_progress = player_progress(mixed.database, Filters(), players[0], date(2026, 10, 7))
    with preferred_route(Route.FULL_PASS):
        full_progress = player_progress(mixed.database, Filters(), players[0], date(2026, 10, 7))
    assert kept_progress == full_progress


def test_the_aggregate_answer_is_what_the_records_say(mixed: Mixed) -> None:
    """Not only the same as the full pass: each player's hands, points and fouls counted from
    the simulated records themselves (scored by the rules core) match."""
    from pipeline.ingest.evaluate import score_record
    from pipeline.records.validate import parse_hand
    from pipeline.rules.ruleset import preset

    expected: dict[str, list[int]] = {}
    for record in mixed.records():
        scored = score_record(parse_hand(record), preset(record["rules"]))
        for verdict in scored.players:
            row = expected.setdefault(verdict.name, [0, 0, 0])
            row[0] += 1
            row[1] += verdict.points
            row[2] += int(verdict.foul)
    connection = read.source.open_reader(mixed.database)
    try:
        kpis = read.players.player_kpis(connection, Filters(), route=Route.AGGREGATES)
    finally:
        connection.close()
    found = {row["player"]: [row["hands"], row["points"], row["fouls"]]
             for row in kpis.iter_rows(named=True)}
    assert found == expected


def test_the_comparison_is_the_same_every_time(mixed: Mixed) -> None:
    """Found while comparing the two ways: the group's per-player sums came out of an unordered
    group-by, so the prior (and every shrunk strength) moved in the last bits from one call to
    the next. Each call now sums in the same order."""
    players = tuple(players_of(mixed.database)[:6])
    tables = [compare_players(mixed.database, Filters(), players, ReferenceSpec(), SETTINGS).table
              for _ in range(8)]
    for table in tables[1:]:
        assert_frame_equal(table, tables[0], check_exact=True)


def test_the_trend_from_session_totals_is_the_fit_of_the_hands(mixed: Mixed) -> None:
    """The comparison's trend across sessions, fitted from the totals kept per session, is the
    fit of the players' hands themselves."""
    from pipeline.report.compare import _hand_trend, _session_trend

    players = tuple(players_of(mixed.database))
    connection = read.source.open_reader(mixed.database)
    try:
        cells = read.report.report_session_cells(connection, Filters(players=players),
                                                 route=Route.AGGREGATES)
        hands = read.report.report_progress_hands(connection, Filters(players=players))
    finally:
        connection.close()
    fitted = 0
    for player in players:
        for column in ("points", "foul"):
            from_totals = _session_trend(cells.filter(cells["player"] == player), column)
            from_hands = _hand_trend(hands.filter(hands["player"] == player), column)
            assert from_totals == from_hands
            fitted += from_totals is not None
    assert fitted >= 2


def _count_readiness_looks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The connections (ids) the aggregates' readiness is looked up on, one entry a look."""
    from pipeline.read import totals

    looked: list[int] = []
    real = totals._aggregates_ready

    def counting(connection: duckdb.DuckDBPyConnection) -> bool:
        looked.append(id(connection))
        return real(connection)

    monkeypatch.setattr(totals, "_aggregates_ready", counting)
    return looked


def test_readiness_is_checked_once_per_connection_inside_a_block(
        mixed: Mixed, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report and the comparison ask several questions through one read-only connection;
    inside :func:`readiness_checked_once` the aggregates' readiness is looked up once per
    connection (the same answer), outside it at every question."""
    from pipeline.read import totals

    looked = _count_readiness_looks(monkeypatch)
    first = read.source.open_reader(mixed.database)
    second = read.source.open_reader(mixed.database)
    try:
        with totals.readiness_checked_once():
            answers = [totals.aggregates_ready(c) for c in (first, first, second, first)]
            read.players.player_kpis(first, Filters())
        assert answers == [True] * 4
        assert sorted(looked) == sorted([id(first), id(second)])
        looked.clear()
        assert totals.aggregates_ready(first) and totals.aggregates_ready(first)
        assert looked == [id(first), id(first)]
    finally:
        first.close()
        second.close()


def test_readiness_memory_outlives_its_block_and_inner_blocks_share_it(
        mixed: Mixed, monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory passed in (the dashboard's, one per page view) keeps the answers across
    blocks; a block inside another (the report's, inside a page view's) asks nothing again."""
    from pipeline.read import totals

    looked = _count_readiness_looks(monkeypatch)
    connection = read.source.open_reader(mixed.database)
    try:
        memory: dict[tuple[int, str], bool] = {}
        with totals.readiness_checked_once(memory):
            assert totals.aggregates_ready(connection)
            with totals.readiness_checked_once():
                assert totals.aggregates_ready(connection)
        with totals.readiness_checked_once(memory):
            assert totals.aggregates_ready(connection)
        assert looked == [id(connection)]
        with totals.readiness_checked_once():  # a fresh block: looks again
            assert totals.aggregates_ready(connection)
        assert looked == [id(connection)] * 2
    finally:
        connection.close()


def test_questions_without_a_date_read_the_day_free_rollups(mixed: Mixed,
                                                           tmp_path: Path) -> None:
    """The rollups answer whenever no date is filtered (the same frames, above); a date filter
    reads the per-day tables; rollups that no longer sum to the per-day tables are not used."""
    from pipeline.read.totals import totals_tables

    connection = read.source.open_reader(mixed.database)
    try:
        assert totals_tables(connection, Filters()) == ("board_totals_all", "pair_totals_all")
        assert totals_tables(connection, Filters(variants=("classic",))) == (
            "board_totals_all", "pair_totals_all")
        assert totals_tables(connection, Filters(date_from=date(2026, 10, 6))) == (
            "board_totals", "pair_totals")
        kept = read.players.player_kpis(connection, Filters())
    finally:
        connection.close()
    stale = mixed.copy(tmp_path)
    writer = duckdb.connect(str(stale))
    writer.execute("DELETE FROM board_totals_all WHERE rowid IN "
                   "(SELECT min(rowid) FROM board_totals_all)")
    writer.close()
    connection = read.source.open_reader(stale)
    try:
        assert totals_tables(connection, Filters()) == ("board_totals", "pair_totals")
        assert_frame_equal(read.players.player_kpis(connection, Filters()), kept)
    finally:
        connection.close()


def test_a_question_asked_alongside_answers_as_asked_directly(
        mixed: Mixed, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison reads its players' session cells on a second cursor in a background thread
    while it asks the rest: the same frame as asked directly, with this context's route (a
    forced full pass reaches the thread) and its connection's readiness answers (no second
    look), an error raised where the answer is taken, and the cursor closed afterwards."""
    from pipeline.read.source import asked_alongside
    from pipeline.read.totals import aggregates_ready, readiness_checked_once, use_aggregates

    filters = Filters(players=tuple(players_of(mixed.database)[:3]))
    connection = read.source.open_reader(mixed.database)
    try:
        direct = read.report.report_session_cells(connection, filters)
        assert direct.height > 0
        cursors: list[duckdb.DuckDBPyConnection] = []

        def cells(cursor: duckdb.DuckDBPyConnection):  # noqa: ANN202
            cursors.append(cursor)
            return read.report.report_session_cells(cursor, filters)

        with asked_alongside(connection, cells) as answer:
            assert read.report.report_player_totals(connection, filters).height > 0
            assert_frame_equal(answer().sort(["player", "session_id", "variant"]),
                               direct.sort(["player", "session_id", "variant"]))
        assert cursors[0] is not connection
        with pytest.raises(duckdb.Error):
            cursors[0].sql("SELECT 1").fetchall()  # closed
        assert connection.sql("SELECT 1").fetchall() == [(1,)]  # the block's own stays open

        def route(cursor: duckdb.DuckDBPyConnection) -> bool:
            return use_aggregates(cursor, Route.AUTO, True)

        with asked_alongside(connection, route) as answer:
            assert answer() is True
        with preferred_route(Route.FULL_PASS), asked_alongside(connection, route) as answer:
            assert answer() is False

        def failing(cursor: duckdb.DuckDBPyConnection) -> None:
            cursor.sql("SELECT * FROM no_such_table").fetchall()

        with asked_alongside(connection, failing) as answer, pytest.raises(duckdb.Error):
            answer()

        looked = _count_readiness_looks(monkeypatch)
        with readiness_checked_once():
            assert aggregates_ready(connection)
            with asked_alongside(connection, aggregates_ready) as answer:
                assert answer() is True
        assert looked == [id(connection)]  # the cursor took its connection's answer
    finally:
        connection.close()
