"""What the coaching report reads from the database: the report's questions of pipeline.read.

This is the report's only I/O. Everything it gathers is a polars frame (and the reference group
chosen from them); :mod:`pipeline.report.findings` turns them into a report without touching the
database.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import polars as pl

from pipeline import read
from pipeline.read.source import Database
from pipeline.read.totals import readiness_checked_once
from pipeline.report.grading import gather_grading
from pipeline.report.model import DEFAULT_SETTINGS, ReportRequest, ReportSettings
from pipeline.report.reference import ReferenceGroup, choose_reference


class NoHandsError(LookupError):
    """The player (and aliases) has no hands in the report's scope."""


@dataclass(frozen=True, slots=True)
class ReportData:
    """Every frame the findings engine needs (see the query functions for the columns).

    ``player_totals``: one row per player, variant, table size, position and rules, for
    everyone in scope. ``pair_totals``: every ordered pair's hands and points (the outlier
    rule, the regular opponents). ``player_sessions`` / ``reference_sessions``: the session
    sums of :func:`pipeline.read.report.report_session_sums` of the player (pairings against
    the players left out not counted, unless the player is beyond the outlier rule too) and of
    the group's players (pairings against the player and the players left out not counted);
    ``player_states`` / ``reference_states``: the same summed over sessions (the board states
    of :func:`pipeline.read.report.report_state_totals`). ``pair_sessions``: everyone's
    pairings with the player's regular opponents, per session
    (:func:`pipeline.read.report.report_pair_sessions`). ``player_seat_blocks`` /
    ``reference_seat_blocks``: the results per block of consecutive hands and seat, the
    player's and everyone's (:func:`pipeline.read.report.report_seat_blocks`, the same leave-out
    as the session sums), for the seat test.

    ``hands``: the player's hands (:func:`pipeline.read.report.report_own_hands`: what the
    report reads of every hand). ``details`` maps a notable hand's key to its players
    (``hand_players``) and the scoring breakdown (``hand_matchups``); ``headers`` holds those
    hands' own rows (``hand_header``: site, hand id, table); ``hand_grades`` the player's graded
    decisions in them.
    """

    player_totals: pl.DataFrame
    pair_totals: pl.DataFrame
    hands: pl.DataFrame
    details: dict[int, tuple[pl.DataFrame, pl.DataFrame]]
    reference: ReferenceGroup
    player_sessions: pl.DataFrame
    reference_sessions: pl.DataFrame
    player_states: pl.DataFrame
    reference_states: pl.DataFrame
    pair_sessions: pl.DataFrame
    player_seat_blocks: pl.DataFrame = field(default_factory=pl.DataFrame)
    reference_seat_blocks: pl.DataFrame = field(default_factory=pl.DataFrame)
    hand_grades: pl.DataFrame = field(default_factory=pl.DataFrame)
    headers: pl.DataFrame = field(default_factory=pl.DataFrame)
    grading: dict[str, pl.DataFrame] = field(default_factory=dict)  # pipeline.report.grading


def pick_notable(hands: pl.DataFrame, count: int) -> dict[str, list[int]]:
    """The hand keys to show, per kind, from the player's hands (``report_own_hands``).

    costliest_fouls: fouled hands, most points lost first; biggest_wins: hands won, most points
    first; fantasyland: hands played in Fantasyland, largest result (either sign) first. Ties go
    to the earlier hand, then the smaller key.
    """
    ordered = hands.with_columns(
        pl.col("started_at").is_null().alias("_undated"),
        pl.col("points").abs().alias("_size"),
    )
    picks = {
        "costliest_fouls": ordered.filter(pl.col("foul")).sort(
            ["points", "_undated", "started_at", "hand_key"], descending=[False, False, False, False]
        ),
        "biggest_wins": ordered.filter(pl.col("points") > 0).sort(
            ["points", "_undated", "started_at", "hand_key"], descending=[True, False, False, False]
        ),
        "fantasyland": ordered.filter(pl.col("fantasyland")).sort(
            ["_size", "_undated", "started_at", "hand_key"], descending=[True, False, False, False]
        ),
    }
    return {kind: frame["hand_key"].head(count).to_list() for kind, frame in picks.items()}


def gather_report_data(db: Database, request: ReportRequest,
                       settings: ReportSettings = DEFAULT_SETTINGS) -> ReportData:
    """Ask the database every question of the report, on one read-only connection.

    Raises NoHandsError when none of the player's names has a hand in scope, and
    :class:`~pipeline.report.reference.ReferenceError` for a reference group that cannot be
    used.
    """
    request.reference.check()
    scope = request.scope_filters()
    names = request.names
    mine = scope.with_players(names)
    with read.source.reading(db) as connection, readiness_checked_once():
        hands = read.report.report_own_hands(connection, mine)
        if hands.is_empty():
            untimed = 0
            if request.since or request.until:  # hands without a start time are in no range
                undated = replace(mine, date_from=None, date_to=None)
                untimed = read.report.report_own_hands(connection, undated)[
                    "started_at"].null_count()
            raise NoHandsError(_no_hands_message(request, untimed))
        player_totals = read.report.report_player_totals(connection, scope)
        pair_totals = read.report.report_pair_totals(connection, scope)
        reference = choose_reference(player_totals, pair_totals, request.reference, names,
                                     settings.min_sample)
        left_out = reference.left_out_names
        player_leave_out = () if reference.player_is_outlier else left_out
        player_sessions = read.report.report_session_sums(connection, mine, player_leave_out)
        # everyone's (the group's rows are picked later): one pass without a list of names
        # is cheaper than filtering every placement by the members' names
        reference_sessions = read.report.report_session_sums(
            connection, scope, (*names, *left_out)) \
            if reference.members else player_sessions.clear()
        player_seat_blocks = read.report.report_seat_blocks(connection, mine, player_leave_out)
        reference_seat_blocks = read.report.report_seat_blocks(
            connection, scope, (*names, *left_out)) \
            if reference.members else player_seat_blocks.clear()
        player_states = read.report.state_totals_of_sessions(player_sessions)
        reference_states = read.report.state_totals_of_sessions(reference_sessions)
        regulars = (pair_totals.filter(pl.col("player").is_in(list(names))
                                       & ~pl.col("opponent").is_in(list(names)))
                    .group_by("opponent").agg(pl.col("hands").sum())
                    .filter(pl.col("hands") >= settings.min_sample)
                    .sort(["hands", "opponent"], descending=[True, False])
                    .head(settings.max_opponents)["opponent"].to_list()) \
            if not pair_totals.is_empty() else []
        pair_sessions = read.report.report_pair_sessions(connection, scope, tuple(regulars))
        keys = sorted({key for picked in pick_notable(hands, settings.notable_hands).values()
                       for key in picked})
        headers = read.hands.headers_of_hands(connection, keys)
        players = read.hands.players_of_hands(connection, keys)
        matchups = read.hands.matchups_of_hands(connection, keys)
        details = {
            key: (players.filter(pl.col("hand_key") == key).drop("hand_key"),
                  matchups.filter(pl.col("hand_key") == key).drop("hand_key"))
            for key in keys
        }
        hand_grades = read.report.report_hand_grades(connection, tuple(keys), names)
        grading = gather_grading(connection, mine)
    return ReportData(
        player_totals=player_totals, pair_totals=pair_totals, hands=hands, details=details,
        reference=reference, player_sessions=player_sessions,
        reference_sessions=reference_sessions, player_states=player_states,
        reference_states=reference_states, pair_sessions=pair_sessions,
        player_seat_blocks=player_seat_blocks, reference_seat_blocks=reference_seat_blocks,
        hand_grades=hand_grades, headers=headers, grading=grading,
    )


def _no_hands_message(request: ReportRequest, untimed: int = 0) -> str:
    names = ", ".join(request.names)
    where = []
    if request.variant:
        where.append(f"variant {request.variant}")
    if request.since:
        where.append(f"since {request.since.isoformat()}")
    if request.until:
        where.append(f"until {request.until.isoformat()}")
    if untimed:
        where.append(f"{untimed:,} of their hands have no start time, and a date range leaves "
                     "such hands out")
    scope = f" ({'; '.join(where)})" if where else ""
    return f"no hands for {names}{scope}"
