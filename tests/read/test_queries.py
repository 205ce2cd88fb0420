"""pipeline.read on the ingested fixture database, against numbers computed from the records."""

from __future__ import annotations

import math
from datetime import date

import polars as pl
import pytest

from pipeline import read
from pipeline.read.scope import Filters, HandFlags
from tests.dashboard.fixture_hands import JUN, MARA, OBRIEN, SCRIPT


def test_status_of_missing_empty_and_full_databases(tmp_path, fixture_db) -> None:  # noqa: ANN001
    from pipeline import store
    missing = read.overview.database_status(tmp_path / "none.duckdb")
    assert (missing.exists, missing.empty) == (False, True)
    empty_path = tmp_path / "empty.duckdb"
    store.connect(empty_path).close()
    empty = read.overview.database_status(empty_path)
    assert (empty.exists, empty.has_schema, empty.hands, empty.empty) == (True, True, 0, True)
    full = read.overview.database_status(fixture_db)
    assert (full.hands, full.rejects, full.empty) == (47, 2, False)


def test_player_kpis_match_the_records(fixture_db, expected) -> None:  # noqa: ANN001
    kpis = {row["player"]: row for row in read.players.player_kpis(fixture_db, Filters()).iter_rows(named=True)}
    assert set(kpis) == {MARA, JUN, SCRIPT, OBRIEN}
    for name, totals in expected.players.items():
        row = kpis[name]
        assert row["hands"] == totals.hands
        assert row["points"] == totals.points
        assert row["fouls"] == totals.fouls
        assert row["royalties"] == totals.royalties
        assert row["fl_hands"] == totals.fl_hands
        assert row["fl_entries"] == totals.fl_entries
        assert row["fl_stays"] == totals.fl_stays
        assert row["fl_points"] == totals.fl_points
        assert row["matchups"] == totals.matchups
        assert row["scoops"] == totals.scoops
        mean = totals.points / totals.hands
        sd = math.sqrt(sum((p - mean) ** 2 for p in totals.point_list) / (totals.hands - 1))
        assert row["points_per_hand"] == pytest.approx(mean)
        assert row["points_se"] == pytest.approx(sd / math.sqrt(totals.hands))
    # mara's hand-made run: QQ entry, trips-on-top stay, then out of Fantasyland
    assert (kpis[MARA]["fl_entries"], kpis[MARA]["fl_hands"], kpis[MARA]["fl_stays"]) == (1, 2, 1)


def test_results_sum_to_zero_and_pairs_match(fixture_db, expected) -> None:  # noqa: ANN001
    pairs = read.flow.pair_net_points(fixture_db, Filters())
    got = {(p, o): v for p, o, v in pairs.select("player", "opponent", "points").rows()}
    assert got == {key: value for key, value in expected.net.items()}
    assert sum(got.values()) == 0


def test_filters_narrow_the_hands(fixture_db, expected) -> None:  # noqa: ANN001
    classic = read.overview.overview_totals(fixture_db, Filters(variants=("classic",))).row(0, named=True)
    assert classic["hands"] == 12
    assert classic["players"] == 2
    first_day = read.overview.overview_totals(
        fixture_db, Filters(date_from=date(2026, 3, 1), date_to=date(2026, 3, 1))).row(0, named=True)
    assert first_day["hands"] == 35
    with_obrien = read.players.player_kpis(fixture_db, Filters(players=(MARA,), opponents=(OBRIEN,)))
    assert with_obrien["hands"].to_list() == [12]
    # a name with quotes is a parameter like any other
    obrien = read.players.player_kpis(fixture_db, Filters(players=(OBRIEN,))).row(0, named=True)
    assert obrien["points"] == expected.players[OBRIEN].points
    sessions = read.sessions.session_results(fixture_db, Filters(players=(JUN,)))
    assert sessions.height == 2
    assert sessions["hands"].sum() == 35
    one = sessions["session_id"][0]
    only = read.overview.overview_totals(fixture_db, Filters(sessions=(one,))).row(0, named=True)
    assert only["hands"] == sessions["hands"][0]
    # the widest range there is keeps every timed hand (9999-12-31 used to overflow a date)
    every = read.overview.overview_totals(fixture_db, Filters()).row(0, named=True)
    widest = read.overview.overview_totals(
        fixture_db, Filters(date_from=date.min, date_to=date.max)).row(0, named=True)
    assert widest["hands"] == every["hands"] > 35


def test_session_points_add_up(fixture_db, expected) -> None:  # noqa: ANN001
    sessions = read.sessions.session_results(fixture_db, Filters())
    assert sessions.height == 8
    per_player = sessions.group_by("player").agg(pl.col("points").sum(), pl.col("hands").sum())
    for player, points, hands in per_player.rows():
        assert points == expected.players[player].points
        assert hands == expected.players[player].hands


def test_hand_list_flags(fixture_db, fixture_source) -> None:  # noqa: ANN001
    everything = read.hands.hand_list(fixture_db, Filters())
    assert everything["total"][0] == 47
    disagreements = read.hands.hand_list(fixture_db, Filters(), HandFlags(disagreements=True))
    assert disagreements["hand_id"].to_list() == ["T1-010"]
    fantasyland = read.hands.hand_list(fixture_db, Filters(players=(MARA,)), HandFlags(fantasyland=True))
    assert sorted(fantasyland["hand_id"].to_list()) == ["T1-005", "T1-006", "T1-007"]
    big = read.hands.hand_list(fixture_db, Filters(players=(MARA,)), HandFlags(min_royalties=15))
    assert "T1-006" in big["hand_id"].to_list()  # trips on top 11 + straight 4 + flush 4


def test_hand_list_of_a_hero_keeps_only_the_hands_the_hero_sat_in(fixture_db, fixture_source) -> None:  # noqa: ANN001
    """A hero keeps the hands the hero sat in (from the records); with a flag, the hands where
    the hero's own board fouled (from the stored boards): never another player's hand."""
    import duckdb

    records = fixture_source[1]
    connection = duckdb.connect(str(fixture_db), read_only=True)
    try:
        for hero in (MARA, JUN, SCRIPT, OBRIEN):
            seated = {r["hand_id"] for r in records if any(p["name"] == hero for p in r["players"])}
            shown = read.hands.hand_list(fixture_db, Filters(players=(hero,)))
            assert set(shown["hand_id"].to_list()) == seated
            assert shown["total"][0] == len(seated)
            fouled = {row[0] for row in connection.execute(
                "SELECT h.hand_id FROM evaluations e JOIN hands h USING (hand_key) "
                "WHERE e.player = ? AND e.foul", [hero]).fetchall()}
            flagged = read.hands.hand_list(fixture_db, Filters(players=(hero,)),
                                           HandFlags(fouls_only=True))
            assert set(flagged["hand_id"].to_list()) == fouled <= seated
        assert any(connection.execute(
            "SELECT count(*) FROM evaluations WHERE player = ? AND foul", [hero]).fetchall()[0][0]
            for hero in (MARA, JUN, SCRIPT, OBRIEN))
    finally:
        connection.close()


def test_hand_list_reads_the_kept_summaries_as_the_boards_give_them(fixture_db) -> None:  # noqa: ANN001
    """The players, fouls, royalties and disagreements beside each hand come from
    ``hand_summaries`` (kept at ingest): the same rows the hands' boards give, flags or not."""
    from polars.testing import assert_frame_equal

    from pipeline.read.totals import Route

    for filters, flags in ((Filters(), HandFlags()),
                           (Filters(), HandFlags(disagreements=True)),
                           (Filters(players=(MARA,)), HandFlags(fouls_only=True)),
                           (Filters(players=(MARA,)), HandFlags(min_royalties=15)),
                           # without heroes the flags are read from the summaries too
                           (Filters(), HandFlags(fouls_only=True)),
                           (Filters(), HandFlags(min_royalties=15)),
                           (Filters(), HandFlags(fouls_only=True, min_royalties=1)),
                           (Filters(), HandFlags(fouls_only=True, disagreements=True))):
        kept = read.hands.hand_list(fixture_db, filters, flags, route=Route.AGGREGATES)
        full = read.hands.hand_list(fixture_db, filters, flags, route=Route.FULL_PASS)
        assert kept.height > 0
        assert_frame_equal(kept, full, check_exact=True)
    disagreeing = read.hands.hand_list(fixture_db, Filters(), HandFlags(disagreements=True),
                                       route=Route.AGGREGATES).row(0, named=True)
    assert disagreeing["disagreements"] >= 1
    assert len(disagreeing["players"].split(", ")) == 3


def test_the_kept_hand_summaries_are_the_plain_computation(fixture_db) -> None:  # noqa: ANN001
    """Each hand's summary row, worked out here in plain Python from its seats, results and
    boards: players in seat order, disagreeing results, fouled boards, best royalties."""
    import duckdb

    connection = duckdb.connect(str(fixture_db), read_only=True)
    try:
        seats = connection.sql("SELECT hand_key, player, position FROM seats").fetchall()
        results = dict(((key, player), disagrees) for key, player, disagrees in connection.sql(
            "SELECT hand_key, player, disagrees FROM results").fetchall())
        boards = connection.sql("SELECT hand_key, foul, royalties FROM evaluations").fetchall()
        kept = connection.sql("SELECT * FROM hand_summaries ORDER BY hand_key").fetchall()
    finally:
        connection.close()
    expected: dict[int, list] = {}
    for key, player, _position in sorted(seats, key=lambda seat: seat[2]):
        entry = expected.setdefault(key, [[], 0, 0, None])
        entry[0].append(player)
        entry[1] += int(results[(key, player)])
    for key, foul, royalties in boards:
        entry = expected[key]
        entry[2] += int(foul)
        entry[3] = royalties if entry[3] is None else max(entry[3], royalties)
    assert kept == [(key, ", ".join(names), disagreements, fouls, best)
                    for key, (names, disagreements, fouls, best) in sorted(expected.items())]
    assert any(row[2] for row in kept) and any(row[3] for row in kept)


def test_royalty_sources_and_funnel(fixture_db, expected) -> None:  # noqa: ANN001
    mara = Filters(players=(MARA,))
    sources = read.players.royalty_sources(fixture_db, mara)
    by_row = sources.group_by("row_name").agg(pl.col("royalty_points").sum())
    got = dict(by_row.rows())
    want = {row: value for row, value in expected.players[MARA].royalty_by_row.items() if value}
    assert got == want
    funnel = read.players.fantasyland_funnel(fixture_db, mara)
    assert funnel["count"].to_list() == [1, 2, 1]
    assert funnel["points"][1] == expected.players[MARA].fl_points


def test_hand_replay_data(fixture_db) -> None:  # noqa: ANN001
    hand_key = int(read.hands.hand_list(fixture_db, Filters(), HandFlags(disagreements=True))["hand_key"][0])
    players = read.hands.hand_players(fixture_db, hand_key)
    assert players["player"].to_list()[-1] in {MARA, JUN, SCRIPT}
    cards = read.hands.hand_streets(fixture_db, hand_key)
    # pineapple: 13 placed + 4 discarded per player, over 5 streets
    assert cards.height == 3 * 17
    assert cards["street"].max() == 5
    assert cards.filter(pl.col("row_name") == "discard").height == 12
    matchups = read.hands.hand_matchups(fixture_db, hand_key)
    assert matchups.height == 6
    assert matchups["settled"].sum() == 0


def test_audit_lists_the_one_disagreement(fixture_db) -> None:  # noqa: ANN001
    reasons = read.audit.disagreement_reasons(fixture_db, Filters())
    assert reasons.rows() == [("points", 1)]
    found = read.audit.audit_disagreements(fixture_db, Filters()).row(0, named=True)
    assert (found["hand_id"], found["player"], found["total"]) == ("T1-010", JUN, 1)
    assert found["reported"] - found["rescored"] == 5


def test_readers_writer_lock_times_out_instead_of_hanging() -> None:
    lock = read.source._ReadersWriter()
    with lock.read(), lock.read(), pytest.raises(read.source.DatabaseBusy), lock.write(timeout=0.05):
        pass
    with lock.write(timeout=0.05):
        pass  # free again once the readers are gone
