"""A simulated database for the aggregate tests: several variants, rules and table sizes, with
fouls and Fantasyland, written by the real ingest path in small batches (so the aggregates are
added to many times), and the questions that must give the same answer from the aggregates and
from a full pass over the boards."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from pipeline import read
from pipeline.ingest import aggregates
from pipeline.ingest.sessions import update_session_points
from pipeline.read.scope import Filters, HandFlags, has_hand_filters
from pipeline.read.totals import AggregatesUnavailable, Route

BATCH = 61
"""Records per ingest batch: small, so each file's hands reach the aggregates in many merges
(batch by batch: ``bulk=False``)."""


@dataclass(frozen=True)
class Mixed:
    """The simulated database and the files it was ingested from."""

    database: Path
    files: tuple[Path, ...]

    def copy(self, folder: Path) -> Path:
        """A copy of the database to change."""
        target = folder / "copy.duckdb"
        shutil.copy(self.database, target)
        return target

    def records(self) -> list[dict[str, Any]]:
        """Every record of the files."""
        return [json.loads(line) for path in self.files
                for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def build_mixed(folder: Path) -> Mixed:
    """Simulate three games into three files and ingest them into one database.

    3-handed Pineapple and Classic (standard rules), heads-up Classic under progressive
    Fantasyland, 3-handed 2-7 Pineapple; solid, chasing and random bots (fouls and Fantasyland
    in every game). The player pool's names repeat across the games, so players are compared
    across variants, rules and table sizes.
    """
    from pipeline.ingest.driver import ingest_paths
    from pipeline.rules.game import Variant
    from pipeline.rules.ruleset import preset
    from pipeline.simulate.simulation import SimulationConfig
    from pipeline.simulate.writer import write_simulation

    configs = (
        SimulationConfig(hands=240, tables=2, players=3,
                         variants=(Variant.PINEAPPLE, Variant.CLASSIC),
                         bots=("solid", "chaser", "random"), seed=3, pool_size=6),
        SimulationConfig(hands=160, tables=1, players=2, variants=(Variant.CLASSIC,),
                         bots=("random", "chaser"), seed=5, pool_size=4,
                         rules=preset("progressive")),
        SimulationConfig(hands=150, tables=1, players=3,
                         variants=(Variant.LOWBALL_PINEAPPLE,), bots=("chaser", "solid"),
                         seed=7, pool_size=5),
    )
    files = []
    for number, config in enumerate(configs):
        path = folder / f"games-{number}.jsonl"
        write_simulation(config, path)
        files.append(path)
    database = folder / "mixed.duckdb"
    summary = ingest_paths(files, database, batch_size=BATCH, bulk=False)
    assert summary.stored == sum(config.hands for config in configs), summary
    assert summary.rejected == 0, summary
    return Mixed(database, tuple(files))


@pytest.fixture(scope="session")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Mixed:
    """The simulated database (built once for the session: copy it before changing it)."""
    return build_mixed(tmp_path_factory.mktemp("mixed"))


AGGREGATE_TABLES = ("board_totals", "pair_totals", "fantasyland_draws", "session_totals",
                    "play_order", "hand_summaries")


def stored_aggregates(connection: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    """Every row of the aggregate tables, sorted."""
    return {table: connection.sql(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
            for table in AGGREGATE_TABLES}


def rebuilt_aggregates(database: Path) -> tuple[dict[str, list[tuple]], dict[str, list[tuple]]]:
    """(the aggregates as kept, the aggregates computed again from the stored hands) — the
    rebuild runs in a transaction that is rolled back."""
    connection = duckdb.connect(str(database))
    try:
        kept = stored_aggregates(connection)
        connection.execute("BEGIN TRANSACTION")
        aggregates.rebuild(connection)
        update_session_points(connection)
        again = stored_aggregates(connection)
        connection.execute("ROLLBACK")
    finally:
        connection.close()
    return kept, again


def players_of(database: Path) -> list[str]:
    """The database's players, most hands first."""
    connection = duckdb.connect(str(database), read_only=True)
    try:
        return [row[0] for row in connection.sql(
            "SELECT player FROM seats GROUP BY player ORDER BY count(*) DESC, player").fetchall()]
    finally:
        connection.close()


def served_filters(players: list[str]) -> list[Filters]:
    """Filter choices the aggregates serve: none, heroes, variants, rules, dates and mixes."""
    return [
        Filters(),
        Filters(players=(players[0],)),
        Filters(players=tuple(players[1:4]), variants=("classic",)),
        Filters(rules=("progressive",)),
        Filters(variants=("2-7-pineapple", "pineapple")),
        Filters(date_from=date(2026, 10, 6), date_to=date(2026, 10, 9)),
        Filters(players=(players[2],), date_from=date(2026, 10, 7)),
    ]


Question = Callable[[duckdb.DuckDBPyConnection, Filters, Route], pl.DataFrame]


def questions(players: list[str]) -> dict[str, Question]:
    """Every question that reads the aggregates, by name, as ``(connection, filters, route)``."""
    report = read.report
    one_out = (players[0],)
    several_out = tuple(players[:4])
    return {
        "report_player_totals": lambda c, f, r: report.report_player_totals(c, f, route=r),
        "report_pair_totals": lambda c, f, r: report.report_pair_totals(c, f, route=r),
        "report_matchup_totals": lambda c, f, r: report.report_matchup_totals(c, f, route=r),
        "report_matchup_totals (left out)":
            lambda c, f, r: report.report_matchup_totals(c, f, several_out, route=r),
        "report_state_totals": lambda c, f, r: report.report_state_totals(c, f, route=r),
        "report_state_totals (one left out)":
            lambda c, f, r: report.report_state_totals(c, f, one_out, route=r),
        "report_state_totals (several left out, two at one table)":
            lambda c, f, r: report.report_state_totals(c, f, several_out, route=r),
        "player_kpis": lambda c, f, r: read.players.player_kpis(c, f, route=r),
        "points_by_variant": lambda c, f, r: read.players.points_by_variant(c, f, route=r),
        "points_by_position": lambda c, f, r: read.players.points_by_position(c, f, route=r),
        "player_leaderboard": lambda c, f, r: read.overview.player_leaderboard(c, f, route=r),
        "pair_net_points": lambda c, f, r: read.flow.pair_net_points(c, f, route=r),
        "overview_totals (no filter)":
            lambda c, f, r: read.overview.overview_totals(c, Filters(), route=r),
        "session_results (every hand of a session)":
            lambda c, f, r: read.sessions.session_results(c, Filters(players=f.players),
                                                          route=r),
        "report_session_cells":
            lambda c, f, r: report.report_session_cells(
                c, f if f.players else f.with_players(tuple(players[:3])), route=r),
        "report_progress_series":
            lambda c, f, r: report.report_progress_series(
                c, f if f.players else f.with_players(tuple(players[:3])), route=r),
        "hand_list": lambda c, f, r: read.hands.hand_list(c, f, route=r),
        "hand_list (fouls, royalties >= 1)": lambda c, f, r: read.hands.hand_list(
            c, f, HandFlags(fouls_only=True, min_royalties=1), limit=40, route=r),
        "hand_list (Fantasyland)": lambda c, f, r: read.hands.hand_list(
            c, f, HandFlags(fantasyland=True), route=r),
        "cumulative_points": lambda c, f, r: read.players.cumulative_points(c, f, route=r),
        "rolling_foul_rate": lambda c, f, r: read.players.rolling_foul_rate(c, f, route=r),
        "rolling_foul_rate (window 7)":
            lambda c, f, r: read.players.rolling_foul_rate(c, f, 7, route=r),
        "filter_options (players)":
            lambda c, f, r: pl.DataFrame(
                {"player": list(read.overview.filter_options(c, route=r).players)}),
    }


UNORDERED = {"report_session_cells"}
"""Questions whose rows come in no particular order."""

DAYS_FINER = {"report_session_cells"}
"""Questions whose aggregates are kept per session, not per day: a date filter (which may cut
a session) takes the full pass."""

WHOLE_PLAYERS = {"cumulative_points", "rolling_foul_rate", "rolling_foul_rate (window 7)",
                 "report_progress_series"}
"""Questions answered from the kept play order, which numbers every hand of a player: any
hand-level filter (dates, variants, rules) takes the full pass."""


def assert_routes_agree(database: Path) -> int:
    """Every question, with every filter the aggregates serve, gives the same frame from the
    aggregates as from the full pass (exactly: integers and floats alike). Returns the number
    of comparisons."""
    players = players_of(database)
    connection = read.source.open_reader(database)
    compared = 0
    try:
        assert read.totals.aggregates_ready(connection)
        for filters in served_filters(players):
            for name, question in questions(players).items():
                full = question(connection, filters, Route.FULL_PASS)
                finer = (name in DAYS_FINER and (filters.date_from or filters.date_to)
                         or name in WHOLE_PLAYERS and has_hand_filters(filters))
                if finer:
                    with pytest.raises(AggregatesUnavailable):
                        question(connection, filters, Route.AGGREGATES)
                    kept = question(connection, filters, Route.AUTO)
                else:
                    try:
                        kept = question(connection, filters, Route.AGGREGATES)
                    except AggregatesUnavailable as error:  # pragma: no cover - a failure
                        raise AssertionError(f"{name} {filters}: {error}") from error
                try:
                    assert_frame_equal(kept, full, check_exact=True,
                                       check_row_order=name not in UNORDERED)
                except AssertionError as error:
                    raise AssertionError(f"{name} {filters}: {error}") from error
                compared += 1
    finally:
        connection.close()
    return compared
