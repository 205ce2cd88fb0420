"""Players against a reference group, and a player's progress: the dashboard's pages ask these.

* :func:`compare_players` — several players side by side, each against a chosen reference
  group without himself, with the coaching report's own figures (the same functions:
  :mod:`pipeline.report.standing`): results against the players not left out, strength shrunk
  toward the group (none when the group's players differ no more than luck makes them; a rank
  only when they can be told apart and there are enough of them), foul
  rate, royalties and Fantasyland entries against the group's (weighted by each player's own mix
  of variants and table sizes), and the fair trend across sessions (its tests through one
  Benjamini-Hochberg correction over the table).
* :func:`player_progress` — one player's fair trend, before/after around a date (an interval for
  the difference) and rolling windows, with the mix of games held fixed.

Reads through :mod:`pipeline.read` only (the same questions as the report), then pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

import numpy as np
import polars as pl
import pyarrow.compute as pc

from pipeline import read
from pipeline.read.scope import Filters
from pipeline.read.source import Database
from pipeline.read.totals import readiness_checked_once
from pipeline.report.model import DEFAULT_SETTINGS, ReportSettings
from pipeline.report.reference import (
    ReferenceGroup,
    ReferenceSpec,
    choose_reference,
    member_rows,
)
from pipeline.report.standing import mix_rate, strength
from pipeline.report.stats import Mean, benjamini_hochberg
from pipeline.report.trends import (
    Cells,
    RollingSeries,
    WithinFit,
    raw_difference,
    rolling_series,
    strata_codes,
    value_codes,
    within_effect,
    within_effect_of_cells,
)

COMPARISON_COLUMNS: dict[str, type[pl.DataType]] = {
    "player": pl.String, "status": pl.String, "group_players": pl.Int64, "hands": pl.Int64,
    "points_per_hand": pl.Float64, "basis_per_hand": pl.Float64, "basis_se": pl.Float64,
    "strength": pl.Float64, "strength_low": pl.Float64, "strength_high": pl.Float64,
    "kept": pl.Float64, "rank": pl.Int64, "ranked": pl.Int64, "standing": pl.String,
    "foul_rate": pl.Float64, "group_foul_rate": pl.Float64, "foul_difference": pl.Float64,
    "royalties_per_hand": pl.Float64, "group_royalties_per_hand": pl.Float64,
    "fl_entry_rate": pl.Float64, "group_fl_entry_rate": pl.Float64,
    "trend_points": pl.Float64, "trend_points_q": pl.Float64, "trend_fouls": pl.Float64,
    "trend_fouls_q": pl.Float64, "trend_clear": pl.Boolean,
}
"""The columns of :attr:`PlayerComparison.table`: ``group_players`` the members of the
player's group (never the player), ``standing`` the strength and rank in words (or why there
is none), ``foul_difference`` in percentage points / 100 (a share), trends per session."""


@dataclass(frozen=True, slots=True)
class PlayerComparison:
    """Players against a reference group: one row per player, each against the group without
    himself (as his coaching report compares him); ``groups`` each player's group, ``group``
    the first player's."""

    groups: tuple[tuple[str, ReferenceGroup], ...]
    table: pl.DataFrame
    tests: int
    fdr: float

    @property
    def group(self) -> ReferenceGroup | None:
        """The first player's group (the only one on a one-player page)."""
        return self.groups[0][1] if self.groups else None

    @property
    def label(self) -> str:
        """The group's short name."""
        return self.groups[0][1].label if self.groups else ""


def _strata(rows: pl.DataFrame, numerator: str, denominator: str
            ) -> dict[tuple[str, int], tuple[float, float]]:
    """(numerator, denominator) per variant and table size of ``rows`` (player totals)."""
    if rows.is_empty():
        return {}
    summed = rows.group_by("variant", "player_count").agg(pl.col(numerator).sum(),
                                                          pl.col(denominator).sum())
    return {(str(r[0]), int(r[1])): (float(r[2]), float(r[3]))
            for r in summed.select("variant", "player_count", numerator, denominator).rows()}


def _means(states: pl.DataFrame) -> dict[str, Mean]:
    """Per player: boards, value and value² (points per hand on the results basis)."""
    if states.is_empty():
        return {}
    summed = (states.group_by("player", maintain_order=True)
              .agg(pl.col("boards").sum(), pl.col("value").sum(), pl.col("value_sq").sum())
              .sort("player"))
    return {player: Mean(int(boards), float(value), float(value_sq))
            for player, boards, value, value_sq in summed.select(
                "player", "boards", "value", "value_sq").rows()}


def _session_trend(cells: pl.DataFrame, column: str) -> WithinFit | None:
    """The fair trend across one player's sessions (change per session) from the player's
    session cells (:func:`pipeline.read.report.report_session_cells`): the same fit as from
    the hands (:func:`_hand_trend`), without reading them."""
    if cells.is_empty():
        return None
    player = cells["player"][0]
    return _session_trends(cells).get(player, {}).get(column)


def _session_trends(cells: pl.DataFrame) -> dict[str, dict[str, WithinFit | None]]:
    """:func:`_session_trend` of every player of ``cells`` (points and foul), in any order: one
    sort of the cells (by player, then their first hand: start, then key) and one numbering of
    every player's sessions and coding of strata and sessions (in order of first appearance, as
    :func:`~pipeline.report.trends.cells_from_totals` codes them), all on integer codes
    (encoding the texts by hashing is several times cheaper than sorting them), then one small
    fit per player."""
    if cells.is_empty():
        return {}
    players = cells["player"].to_arrow().dictionary_encode()
    start = cells["first_started_at"].cast(pl.Int64).fill_null(np.iinfo(np.int64).min)
    order = np.lexsort((cells["first_hand_key"].to_numpy(), start.to_numpy(),
                        players.indices.to_numpy()))
    player = players.indices.to_numpy().astype(np.int64)[order]
    start_sorted = start.to_numpy()[order]
    count = len(players.dictionary)
    # each player's sessions numbered 1, 2, ... by their first start, then by id (the
    # tie-break of sessions that start together, as for the hands: _hand_trends)
    session_ids = cells["session_id"].to_arrow().dictionary_encode()
    id_rank = pc.rank(session_ids.dictionary, sort_keys="ascending",
                      tiebreaker="dense").to_numpy().astype(np.int64)
    session_key = (player * (len(session_ids.dictionary) + 1)
                   + id_rank[session_ids.indices.to_numpy()[order]])
    sessions, first_row, session_of_row = np.unique(session_key, return_index=True,
                                                    return_inverse=True)
    session_player = player[first_row]
    in_play_order = np.lexsort((sessions, start_sorted[first_row], session_player))
    number = _rank_within(in_play_order, session_player, count)[session_of_row] + 1
    session_code = _first_appearance_within(first_row, session_player, count)[session_of_row]
    variants = cells["variant"].to_arrow().dictionary_encode()
    stratum = (variants.indices.to_numpy().astype(np.int64) * 256
               + cells["player_count"].cast(pl.Int64).to_numpy())[order]
    stratum_key = player * (int(stratum.max()) + 1) + stratum
    _, first_stratum_row, stratum_of_row = np.unique(stratum_key, return_index=True,
                                                     return_inverse=True)
    stratum_code = _first_appearance_within(first_stratum_row, player[first_stratum_row],
                                            count)[stratum_of_row]
    bounds = np.searchsorted(player, np.arange(count + 1))
    sums = {column: cells[column].to_numpy()[order].astype(float)
            for column in ("hands", "points", "points_sq", "fouls")}
    numbers = number.astype(float)
    fits: dict[str, dict[str, WithinFit | None]] = {}
    for code, name in enumerate(players.dictionary.to_pylist()):
        rows = slice(bounds[code], bounds[code + 1])
        fits[str(name)] = {
            column: within_effect_of_cells(Cells(
                sums["hands"][rows], sums[total][rows], sums[squares][rows], numbers[rows],
                stratum_code[rows], session_code[rows]))
            for column, total, squares in (("points", "points", "points_sq"),
                                           ("foul", "fouls", "fouls"))
        }
    return fits


def _trends_of(db: Database, scope: Filters,
               players: tuple[str, ...]) -> dict[str, dict[str, WithinFit | None]]:
    """:func:`_session_trends` of ``players`` (their session cells in ``scope``)."""
    if not players:
        return {}
    return _session_trends(read.report.report_session_cells(db, scope.with_players(players)))


def _kept_trend(db: Database, scope: Filters) -> tuple[int, dict[str, WithinFit | None]]:
    """The sessions and fair trends (points, foul) of the one player of ``scope`` from the
    totals kept per session."""
    cells = read.report.report_session_cells(db, scope)
    trends = _session_trends(cells).get(scope.players[0], dict.fromkeys(("points", "foul")))
    return cells["session_id"].n_unique(), trends


def _rank_within(order: np.ndarray, group: np.ndarray, groups: int) -> np.ndarray:
    """Each item's position 0, 1, ... within its group, in ``order`` (an ordering of the items
    that keeps each group's items together, groups ascending)."""
    position = np.empty(order.size, dtype=np.int64)
    position[order] = np.arange(order.size)
    group_start = np.searchsorted(group[order], np.arange(groups))
    return position - group_start[group]


def _first_appearance_within(first_row: np.ndarray, group: np.ndarray,
                             groups: int) -> np.ndarray:
    """Codes 0, 1, ... of items within their group, in order of their first row (rows of one
    group are contiguous)."""
    return _rank_within(np.argsort(first_row, kind="stable"), group, groups)


def _hand_trend(hands: pl.DataFrame, column: str) -> WithinFit | None:
    """The fair trend across sessions from the player's hands (in play order)."""
    return _hand_trends(hands, (column,))[column]


def _hand_trends(hands: pl.DataFrame, columns: tuple[str, ...]) -> dict[str, WithinFit | None]:
    """:func:`_hand_trend` of each of ``columns``, numbering the sessions once."""
    dated = hands.filter(pl.col("session_id").is_not_null())
    if dated.is_empty():
        return dict.fromkeys(columns)
    order = (dated.group_by("session_id").agg(pl.col("started_at").min())
             .sort(["started_at", "session_id"])
             .with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("_number")))
    number = dated.select("session_id").join(order.select("session_id", "_number"),
                                             on="session_id", how="left",
                                             maintain_order="left")["_number"]
    x = number.cast(pl.Float64).to_numpy()
    strata = strata_codes(dated)
    sessions = value_codes(dated["session_id"])
    return {column: within_effect(dated[column].cast(pl.Float64).to_numpy(), x, strata, sessions)
            for column in columns}


def compare_players(db: Database, filters: Filters, players: tuple[str, ...],
                    spec: ReferenceSpec,
                    settings: ReportSettings = DEFAULT_SETTINGS) -> PlayerComparison:
    """``players`` side by side, each against the reference group ``spec`` without himself,
    over the hands the filters keep (dates, variants, rules, tables: everyone's hands, whoever
    sat) - the group, the rates and the strength of the player's coaching report, by the same
    functions (:mod:`pipeline.report.standing`).

    For each player: his group (:func:`choose_reference`, the outlier rule judging the field
    without him); his results against the players not left out (``basis_per_hand``; all of them
    when he is beyond the rule himself); his foul rate, royalties and Fantasyland entries
    against the group's, weighted by his own mix of variants and table sizes
    (:func:`~pipeline.report.standing.mix_rate`); his strength shrunk toward the group's
    players (:func:`~pipeline.report.standing.strength`: none when they differ no more than luck
    makes them, a rank only by its rule); the fair trend per session within variant and table size. The
    trend tests of every player go through one Benjamini-Hochberg correction at
    ``settings.fdr`` (the coaching report corrects over its own tests).
    """
    scope = Filters(date_from=filters.date_from, date_to=filters.date_to,
                    variants=filters.variants, rules=filters.rules, tables=filters.tables)
    groups: list[tuple[str, ReferenceGroup]] = []
    rows = []
    tests: list[float | None] = []
    with (read.source.reading(db) as connection, readiness_checked_once(),
          read.source.asked_alongside(  # the players' trends across sessions, meanwhile
              connection, lambda cursor: _trends_of(cursor, scope, players),
          ) as session_trends):
        totals = read.report.report_player_totals(connection, scope)
        pairs = read.report.report_pair_totals(connection, scope)
        with_royalties = totals.with_columns(
            (pl.col("royalty_top") + pl.col("royalty_middle") + pl.col("royalty_bottom"))
            .alias("royalties"))
        present = set(totals["player"].to_list()) if not totals.is_empty() else set()
        for player in players:
            if player not in present:
                continue
            group = choose_reference(totals, pairs, spec, (player,), settings.min_sample)
            groups.append((player, group))
            left_out = group.left_out_names
            own_states = read.report.report_state_totals(
                connection, scope.with_players((player,)),
                () if group.player_is_outlier else left_out)
            member_states = member_rows(read.report.report_state_totals(
                connection, scope, (player, *left_out)), group)
            own = _means(own_states).get(player, Mean(0, 0.0, 0.0))
            standing = strength(own, _means(member_states), group.player_is_outlier,
                                settings.min_sample, group.label)
            mine = with_royalties.filter(pl.col("player") == player)
            theirs = member_rows(with_royalties, group)
            fouls = mix_rate(_strata(mine, "fouls", "hands"), _strata(theirs, "fouls", "hands"))
            royalties = mix_rate(_strata(mine, "royalties", "hands"),
                                 _strata(theirs, "royalties", "hands"))
            entries = mix_rate(_strata(mine, "fl_entries", "normal_hands"),
                               _strata(theirs, "fl_entries", "normal_hands"))
            hand_count = int(mine["hands"].sum())
            status = ("beyond the outlier rule" if group.player_is_outlier else
                      "compared with the group")
            rows.append({
                "player": player, "status": status, "group_players": len(group.members),
                "hands": hand_count,
                "points_per_hand": int(mine["points"].sum()) / hand_count,
                "basis_per_hand": own.value, "basis_se": own.se,
                "strength": standing.value if standing else None,
                "strength_low": standing.low if standing else None,
                "strength_high": standing.high if standing else None,
                "kept": standing.weight if standing else None,
                "rank": standing.rank if standing else None,
                "ranked": standing.ranked if standing else None,
                "standing": standing.note if standing else (
                    "not shrunk: beyond the outlier rule, the group says nothing about this "
                    "player" if group.player_is_outlier else "no strength: too few players "
                    "with enough hands in the group"),
                "foul_rate": fouls.player, "group_foul_rate": fouls.group,
                "foul_difference": fouls.difference,
                "royalties_per_hand": royalties.player,
                "group_royalties_per_hand": royalties.group,
                "fl_entry_rate": entries.player, "group_fl_entry_rate": entries.group,
            })
        trends = session_trends()
    for row in rows:
        trend_points = trends.get(row["player"], {}).get("points")
        trend_fouls = trends.get(row["player"], {}).get("foul")
        row["trend_points"] = trend_points.estimate if trend_points else None
        row["trend_fouls"] = trend_fouls.estimate if trend_fouls else None
        tests.extend((trend_points.p_value if trend_points else None,
                      trend_fouls.p_value if trend_fouls else None))
    q_values = benjamini_hochberg(tests)
    for index, row in enumerate(rows):
        points_q, fouls_q = q_values[2 * index:2 * index + 2]
        row["trend_points_q"], row["trend_fouls_q"] = points_q, fouls_q
        row["trend_clear"] = any(q is not None and q <= settings.fdr for q in (points_q, fouls_q))
    table = pl.DataFrame(rows, schema=COMPARISON_COLUMNS)
    return PlayerComparison(tuple(groups), table, sum(p is not None for p in tests),
                            settings.fdr)


@dataclass(frozen=True, slots=True)
class ProgressTest:
    """One question of :func:`player_progress`, after the correction."""

    key: str
    title: str
    unit: str
    fit: WithinFit | None
    q_value: float | None
    clear: bool
    note: str

    @property
    def verdict(self) -> str:
        """``clear``, ``not clear`` or ``not enough data``."""
        if self.fit is None or self.fit.p_value is None:
            return "not enough data"
        return "clear" if self.clear else "not clear"


@dataclass(frozen=True, slots=True)
class Progress:
    """A player's progress with the mix of games held fixed."""

    player: str
    hands: int
    sessions: int
    change_date: date | None
    before: int
    after: int
    tests: tuple[ProgressTest, ...]
    fouls: RollingSeries | None
    points: RollingSeries | None


def player_progress(db: Database, filters: Filters, player: str, change_date: date | None,
                    window: int = DEFAULT_SETTINGS.rolling_window,
                    fdr: float = DEFAULT_SETTINGS.fdr) -> Progress:
    """The fair trend across sessions (points per hand, foul rate), before/after
    ``change_date`` with an interval for the difference, and rolling windows - each within
    variant and table size. The tests go through one Benjamini-Hochberg correction."""
    scope = Filters(players=(player,), date_from=filters.date_from, date_to=filters.date_to,
                    variants=filters.variants, rules=filters.rules, tables=filters.tables)
    kept = None
    with read.source.reading(db) as connection, readiness_checked_once():
        if change_date is None and read.report.session_cells_kept(connection, scope):
            # the trend from the totals kept per session (the same fit as from the hands; read
            # and fitted on a second cursor meanwhile), and only what the rolling windows need
            # of the hands
            with read.source.asked_alongside(
                    connection, lambda cursor: _kept_trend(cursor, scope)) as trend:
                hands = read.report.report_progress_series(connection, scope)
                kept = trend()
        else:
            hands = read.report.report_progress_hands(connection, scope)
    if kept is not None:
        sessions, trends = kept
    else:
        sessions = hands["session_id"].drop_nulls().n_unique() if not hands.is_empty() else 0
        trends = _hand_trends(hands, ("points", "foul"))
    fits: list[tuple[str, str, str, WithinFit | None, str]] = []
    if not hands.is_empty():
        for column, name, unit in (("points", "points per hand", "points"),
                                   ("foul", "foul rate", "rate")):
            fit = trends[column]
            fits.append((f"trend.{column}", f"Trend in {name} (per session)", f"{unit}_slope",
                         fit, ""))
    before = after = 0
    if change_date is not None and not hands.is_empty():
        moment = datetime.combine(change_date, datetime.min.time())
        dated = hands.filter(pl.col("started_at").is_not_null())
        flags = [bool(value >= moment) for value in dated["started_at"].to_list()]
        after = sum(flags)
        before = len(flags) - after
        sessions_of = [s if s is not None else f"undated-{i}"
                       for i, s in enumerate(dated["session_id"].to_list())]
        for column, name, unit in (("points", "points per hand", "points"),
                                   ("foul", "foul rate", "rate")):
            values = [float(v) for v in dated[column].to_list()]
            fit = within_effect(values, [float(f) for f in flags], strata_codes(dated), sessions_of)
            raw = raw_difference(values, flags)
            note = ""
            if raw is not None:
                shown = f"{raw[0] * 100:+.1f} pp" if unit == "rate" else f"{raw[0]:+.2f}"
                note = f"without holding the mix: {shown}"
            fits.append((f"change.{column}", f"Change in {name} since {change_date.isoformat()}",
                         unit, fit, note))
    q_values = benjamini_hochberg([fit.p_value if fit else None for _, _, _, fit, _ in fits])
    tests = tuple(ProgressTest(key, title, unit, fit, q, q is not None and q <= fdr, note)
                  for (key, title, unit, fit, note), q in zip(fits, q_values, strict=True))
    strata = strata_codes(hands) if not hands.is_empty() else []
    size = min(window, max(10, hands.height // 4)) if hands.height else window
    fouls = rolling_series(hands["foul"].cast(pl.Float64).to_numpy(), strata, size) \
        if hands.height else None
    points = rolling_series(hands["points"].cast(pl.Float64).to_numpy(), strata, size) \
        if hands.height else None
    return Progress(player, hands.height, sessions, change_date, before, after, tests,
                    fouls, points)
