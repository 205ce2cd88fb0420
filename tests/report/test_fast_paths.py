"""The fast paths of the comparison pages and the report give exactly what the plain
computation gives.

:func:`~pipeline.report.compare.compare_players` weighs each player's group (without the
player) by the player's mix through :func:`~pipeline.report.standing.mix_rate`, and numbers every
player's sessions in one pass; :func:`~pipeline.report.compare.player_progress` numbers the
sessions and strata without a Python loop over the hands. Here the plain computation (one
player at a time, as the code read before) is written out again, independently, and every
figure must be the same to the last bit, on the simulated database of three games, 2 and 3
players, standard and progressive rules. The report reads only the columns it uses of the
player's hands (:func:`~pipeline.read.report.report_own_hands`) and the shown hands' own rows
apart (:func:`~pipeline.read.hands.headers_of_hands`): the same rows and values as the wide
read.
"""

from __future__ import annotations

import math
from datetime import date

import polars as pl
import pytest

from pipeline import read
from pipeline.read.scope import Filters
from pipeline.report.compare import compare_players, player_progress
from pipeline.report.model import ReportSettings
from pipeline.report.reference import ReferenceSpec, choose_reference, member_rows
from pipeline.report.trends import (
    WithinFit,
    cells_from_totals,
    rolling_series,
    within_effect,
    within_effect_of_cells,
)
from tests.simulated_mix import Mixed, mixed, players_of

__all__ = ["mixed"]

SETTINGS = ReportSettings(min_sample=20, min_sessions=3, percentile_min_hands=20,
                          notable_hands=3, max_opponents=8)
COLUMNS = ("hands", "points", "fouls", "royalty_top", "royalty_middle", "royalty_bottom",
           "fl_entries", "normal_hands", "royalties")


def _plain_sums(rows: pl.DataFrame) -> dict[tuple[str, int], dict[str, float]]:
    """Per variant and table size, the sums of ``rows`` (a player's, or the group's)."""
    rows = rows.with_columns(
        (pl.col("royalty_top") + pl.col("royalty_middle") + pl.col("royalty_bottom"))
        .alias("royalties"))
    result: dict[tuple[str, int], dict[str, float]] = {}
    for row in rows.iter_rows(named=True):
        sums = result.setdefault((row["variant"], row["player_count"]),
                                 dict.fromkeys(COLUMNS, 0.0))
        for column in COLUMNS:
            sums[column] += float(row[column] or 0)
    return result


def _plain_rate(mine: dict, group: dict, hits: str, trials: str
                ) -> tuple[float | None, float | None]:
    strata = sorted((v, t) for v, t in mine.items()
                    if t[trials] > 0 and group.get(v, {}).get(trials))
    if not strata:
        return None, None
    total = sum(t[trials] for _, t in strata)
    return (sum(t[hits] for _, t in strata) / total,
            math.fsum(t[trials] / total * group[v][hits] / group[v][trials] for v, t in strata))


def _plain_session_trend(cells: pl.DataFrame, column: str) -> WithinFit | None:
    """One player's trend across sessions from its session cells, with Python loops."""
    if cells.is_empty():
        return None
    rows = sorted(cells.to_dicts(), key=lambda row: (row["first_started_at"] is not None,
                                                     row["first_started_at"],
                                                     row["first_hand_key"]))
    first: dict[str, object] = {}
    for row in rows:
        start = row["first_started_at"]
        if row["session_id"] not in first or (start is not None and (
                first[row["session_id"]] is None or start < first[row["session_id"]])):
            first[row["session_id"]] = start
    order = sorted(first, key=lambda session: (first[session] is not None, first[session],
                                               session))
    number = {session: index for index, session in enumerate(order, start=1)}
    total, squares = ("points", "points_sq") if column == "points" else ("fouls", "fouls")
    return within_effect_of_cells(cells_from_totals(
        [row["hands"] for row in rows], [row[total] for row in rows],
        [row[squares] for row in rows], [float(number[row["session_id"]]) for row in rows],
        [f"{row['variant']}/{row['player_count']}" for row in rows],
        [row["session_id"] for row in rows]))


@pytest.mark.parametrize("spec", ["field", "stake:standard", "named:FIRST3"])
def test_the_comparison_is_the_plain_per_player_computation(mixed: Mixed, spec: str) -> None:
    everyone = players_of(mixed.database)
    if spec == "named:FIRST3":
        spec = "named:" + ",".join(everyone[:3])
    reference = ReferenceSpec.parse(spec)
    players = tuple(everyone)
    table = compare_players(mixed.database, Filters(), players, reference, SETTINGS).table
    connection = read.source.open_reader(mixed.database)
    try:
        totals = read.report.report_player_totals(connection, Filters())
        pairs = read.report.report_pair_totals(connection, Filters())
        cells = read.report.report_session_cells(connection, Filters(players=players))
    finally:
        connection.close()
    assert table.height == len(players)
    checked = 0
    for row in table.iter_rows(named=True):
        player = row["player"]
        # the player's own group: the spec without him, as his coaching report
        group = choose_reference(totals, pairs, reference, (player,), SETTINGS.min_sample)
        assert player not in group.members and row["group_players"] == len(group.members)
        mine_rows = totals.filter(pl.col("player") == player)
        mine = _plain_sums(mine_rows)
        theirs = _plain_sums(member_rows(totals, group))
        assert row["hands"] == int(mine_rows["hands"].sum())
        assert row["points_per_hand"] == int(mine_rows["points"].sum()) / row["hands"]
        assert (row["foul_rate"], row["group_foul_rate"]) == _plain_rate(
            mine, theirs, "fouls", "hands")
        assert (row["fl_entry_rate"], row["group_fl_entry_rate"]) == _plain_rate(
            mine, theirs, "fl_entries", "normal_hands")
        royalties = _plain_rate(mine, theirs, "royalties", "hands")
        assert (row["royalties_per_hand"], row["group_royalties_per_hand"]) == royalties
        own_cells = cells.filter(pl.col("player") == player)
        for column, name in (("points", "trend_points"), ("foul", "trend_fouls")):
            fit = _plain_session_trend(own_cells, column)
            assert row[name] == (fit.estimate if fit else None)
            checked += fit is not None
    assert checked >= 2


def test_session_trends_of_shuffled_cells_with_sessions_that_start_together() -> None:
    """Cells in any order, sessions of one player that start at the same moment (two tables
    opened together: the session id breaks the tie), several strata, a player whose name sorts
    first listed last: every player's trend is the plain computation's, to the last bit."""
    from datetime import datetime, timedelta

    from pipeline.report.compare import _session_trends

    rows = []
    for player, seed in (("zed", 1), ("amy", 2), ("mo", 3)):
        for index in range(24):
            started = datetime(2026, 3, 1) + timedelta(hours=index // 2 * 5)  # pairs tie
            session = f"S{(seed * 7919 + index * 104729) % 99991:05d}{player}"
            for stratum, (variant, size) in enumerate(
                    (("pineapple", 3), ("classic", 3), ("pineapple", 2))):
                if (index + stratum + seed) % 3 == 0:
                    continue
                hands = 3 + (index * seed + stratum) % 9
                points = (index * 13 + seed * 5 + stratum * 7) % 23 - 11
                rows.append({
                    "player": player, "session_id": session, "variant": variant,
                    "player_count": size, "hands": hands, "points": points,
                    "points_sq": points * points + hands, "fouls": (index + seed) % hands,
                    "first_started_at": started + timedelta(minutes=stratum),
                    "first_hand_key": seed * 100_000 + index * 10 + stratum})
    cells = pl.DataFrame(rows).cast(read.report.SESSION_CELL_COLUMNS).sample(
        fraction=1.0, shuffle=True, seed=11)
    trends = _session_trends(cells)
    assert set(trends) == {"zed", "amy", "mo"}
    for player in trends:
        own = cells.filter(pl.col("player") == player)
        for column in ("points", "foul"):
            plain = _plain_session_trend(own, column)
            assert plain is not None
            assert trends[player][column] == plain


@pytest.mark.parametrize("change_date", [date(2026, 10, 7), None])
def test_progress_is_the_plain_computation(mixed: Mixed, change_date: date | None) -> None:
    """With a change date the trend is fitted from the hands; without one from the totals kept
    per session, and the hands are read without their seats: the same figures either way."""
    player = players_of(mixed.database)[0]
    assert read.report.session_cells_kept(mixed.database, Filters(players=(player,)))
    progress = player_progress(mixed.database, Filters(), player, change_date, 20)
    hands = read.report.report_progress_hands(mixed.database, Filters(players=(player,)))
    series = read.report.report_progress_series(mixed.database, Filters(players=(player,)))
    assert series.equals(hands.drop("session_id"))
    assert progress.hands == hands.height
    assert progress.sessions == hands["session_id"].drop_nulls().n_unique()
    strata = [f"{variant}/{count}" for variant, count in
              zip(hands["variant"].to_list(), hands["player_count"].to_list(), strict=True)]
    dated = [index for index, session in enumerate(hands["session_id"].to_list())
             if session is not None]
    first: dict[str, object] = {}
    for index in dated:
        session, start = hands["session_id"][index], hands["started_at"][index]
        if session not in first or (start is not None and (first[session] is None
                                                           or start < first[session])):
            first[session] = start
    order = sorted(first, key=lambda session: (first[session] is not None, first[session],
                                               session))
    number = {session: index for index, session in enumerate(order, start=1)}
    tests = {test.key: test for test in progress.tests}
    for column in ("points", "foul"):
        values = [float(v) for v in hands[column].to_list()]
        fit = within_effect([values[i] for i in dated],
                            [float(number[hands["session_id"][i]]) for i in dated],
                            [strata[i] for i in dated], [hands["session_id"][i] for i in dated])
        assert fit is not None
        assert tests[f"trend.{column}"].fit == fit
    size = min(20, max(10, hands.height // 4))
    assert progress.fouls == rolling_series([float(v) for v in hands["foul"].to_list()],
                                            strata, size)
    assert progress.points == rolling_series([float(v) for v in hands["points"].to_list()],
                                             strata, size)
    assert progress.fouls is not None


def _plain_own_hands(mixed: Mixed, filters: Filters) -> pl.DataFrame:
    """The players' hands written out plainly: every seat joined with its hand, board and
    result, then filtered and sorted in polars (the scopes of the test below)."""
    with read.source.reading(mixed.database) as connection:
        everything = connection.sql("""
            SELECT h.hand_key, h.started_at, h.variant, h.player_count, s.player, s.position,
                s.is_button, s.fantasyland, s.session_id, e.foul, e.royalties,
                e.fantasyland_next, r.points::BIGINT AS points, h.rules
            FROM seats s JOIN hands h USING (hand_key)
            JOIN evaluations e USING (hand_key, player) JOIN results r USING (hand_key, player)
        """).pl()
    kept = everything.filter(pl.col("player").is_in(list(filters.players)))
    if filters.variants:
        kept = kept.filter(pl.col("variant").is_in(list(filters.variants)))
    if filters.rules:
        kept = kept.filter(pl.col("rules").is_in(list(filters.rules)))
    if filters.date_from:
        kept = kept.filter(pl.col("started_at").dt.date() >= filters.date_from)
    return (kept.sort(["started_at", "hand_key", "player"], nulls_last=False)
            .select(read.report.REPORT_HAND_COLUMNS))


@pytest.mark.parametrize("filters", [
    Filters(),
    Filters(variants=("classic",), date_from=date(2026, 10, 7)),
    Filters(rules=("progressive",)),
])
def test_the_narrow_read_of_own_hands_is_the_wide_one(mixed: Mixed, filters: Filters) -> None:
    names = tuple(players_of(mixed.database)[:2])  # a player and an alias
    mine = filters.with_players(names)
    narrow = read.report.report_own_hands(mixed.database, mine)
    assert narrow.height > 0
    assert narrow.columns == list(read.report.REPORT_HAND_COLUMNS)
    assert narrow.equals(_plain_own_hands(mixed, mine))
    keys = narrow["hand_key"].head(5).to_list()
    headers = read.hands.headers_of_hands(mixed.database, keys)
    assert sorted(headers["hand_key"].to_list()) == sorted(set(keys))
    for key in keys:
        one = read.hands.hand_header(mixed.database, key)
        assert headers.filter(pl.col("hand_key") == key).equals(one)
    assert read.hands.headers_of_hands(mixed.database, []).is_empty()
    players = read.hands.players_of_hands(mixed.database, keys)
    matchups = read.hands.matchups_of_hands(mixed.database, keys)
    for key in keys:  # several keys at once (one list parameter), one key (an equality)
        assert players.filter(pl.col("hand_key") == key).drop("hand_key").equals(
            read.hands.hand_players(mixed.database, key))
        assert matchups.filter(pl.col("hand_key") == key).drop("hand_key").equals(
            read.hands.hand_matchups(mixed.database, key))
    assert read.hands.players_of_hands(mixed.database, []).is_empty()
