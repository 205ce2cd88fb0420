"""Players against a reference group, and a player's progress: the dashboard's pages ask these.

* :func:`compare_players` — several players side by side against a chosen reference group:
  results as measured and against the players not left out, strength shrunk toward the group
  (empirical Bayes, so small samples are not ranked on luck), foul rate, royalties and
  Fantasyland against the group's (weighted by each player's own mix of variants), and the fair
  trend across sessions; every test of the table through one Benjamini-Hochberg correction.
* :func:`player_progress` — one player's fair trend, before/after around a date (an interval for
  the difference) and rolling windows, with the mix of games held fixed.

Reads through :mod:`pipeline.read` only (the same questions as the report), then pure.
"""

from __future__ import annotations

import math
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
from pipeline.report.stats import (
    Prior,
    benjamini_hochberg,
    estimate_prior,
    shrink,
    two_sided_p,
    z_score,
)
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
    "player": pl.String, "status": pl.String, "hands": pl.Int64, "points_per_hand": pl.Float64,
    "basis_per_hand": pl.Float64, "basis_se": pl.Float64, "strength": pl.Float64,
    "strength_low": pl.Float64, "strength_high": pl.Float64, "kept": pl.Float64,
    "rank": pl.Int64, "foul_rate": pl.Float64, "group_foul_rate": pl.Float64,
    "foul_difference": pl.Float64, "foul_q": pl.Float64, "foul_clear": pl.Boolean,
    "royalties_per_hand": pl.Float64, "group_royalties_per_hand": pl.Float64,
    "fl_entry_rate": pl.Float64, "group_fl_entry_rate": pl.Float64,
    "trend_points": pl.Float64, "trend_points_q": pl.Float64, "trend_fouls": pl.Float64,
    "trend_fouls_q": pl.Float64, "trend_clear": pl.Boolean,
}
"""The columns of :attr:`PlayerComparison.table` (per session trends: change per session)."""


@dataclass(frozen=True, slots=True)
class PlayerComparison:
    """Players against a reference group: one row per player, and what the group is."""

    group: ReferenceGroup
    prior: Prior | None
    table: pl.DataFrame
    tests: int
    fdr: float

    @property
    def label(self) -> str:
        """The group's short name."""
        return self.group.label


def _sums(rows: pl.DataFrame, columns: tuple[str, ...]) -> dict[str, dict[str, float]]:
    if rows.is_empty():
        return {}
    summed = rows.group_by("variant", maintain_order=True).agg([pl.col(c).sum() for c in columns])
    return {row["variant"]: {c: float(row[c] or 0) for c in columns}
            for row in summed.iter_rows(named=True)}


def _sums_by_player(rows: pl.DataFrame, columns: tuple[str, ...]
                    ) -> dict[str, dict[str, dict[str, float]]]:
    """:func:`_sums` of each player's rows, in one pass."""
    if rows.is_empty():
        return {}
    summed = rows.group_by(["player", "variant"], maintain_order=True).agg(
        [pl.col(c).sum() for c in columns])
    result: dict[str, dict[str, dict[str, float]]] = {}
    for row in summed.iter_rows(named=True):
        result.setdefault(row["player"], {})[row["variant"]] = {
            c: float(row[c] or 0) for c in columns}
    return result


def _without(everyone: dict[str, dict[str, float]], one: dict[str, dict[str, float]]
             ) -> dict[str, dict[str, float]]:
    """``everyone``'s sums per variant less ``one``'s (integer counts and points: exact), a
    variant nobody else has left out, as :func:`_sums` of the others' rows would give."""
    result: dict[str, dict[str, float]] = {}
    for variant, sums in everyone.items():
        mine = one.get(variant)
        if mine is None:
            result[variant] = sums
            continue
        rest = {column: value - mine[column] for column, value in sums.items()}
        if rest["hands"] > 0:
            result[variant] = rest
    return result


def _mix_rate(mine: dict[str, dict[str, float]], group: dict[str, dict[str, float]],
              hits: str, trials: str) -> tuple[float | None, float | None, float | None]:
    """(player's rate, the group's rate weighted by the player's mix, z of the difference)."""
    strata = [(v, t) for v, t in mine.items() if t[trials] > 0 and group.get(v, {}).get(trials)]
    if not strata:
        return None, None, None
    total = sum(t[trials] for _, t in strata)
    player = sum(t[hits] for _, t in strata) / total
    reference = 0.0
    variance_player = variance_group = 0.0
    for variant, t in strata:
        weight = t[trials] / total
        g = group[variant]
        reference += weight * g[hits] / g[trials]
        adjusted = (t[hits] + 1) / (t[trials] + 2)
        variance_player += weight ** 2 * adjusted * (1 - adjusted) / (t[trials] + 2)
        adjusted = (g[hits] + 1) / (g[trials] + 2)
        variance_group += weight ** 2 * adjusted * (1 - adjusted) / (g[trials] + 2)
    z = z_score(player - reference, math.sqrt(variance_player), math.sqrt(variance_group))
    return player, reference, z


def _mix_mean(mine: dict[str, dict[str, float]], group: dict[str, dict[str, float]],
              total_column: str, count_column: str) -> tuple[float | None, float | None]:
    strata = [(v, t) for v, t in mine.items()
              if t[count_column] > 0 and group.get(v, {}).get(count_column)]
    if not strata:
        return None, None
    total = sum(t[count_column] for _, t in strata)
    player = sum(t[total_column] for _, t in strata) / total
    reference = sum(t[count_column] / total * group[v][total_column] / group[v][count_column]
                    for v, t in strata)
    return player, reference


def _basis(states: pl.DataFrame) -> dict[str, tuple[int, float, float | None]]:
    """Per player: boards, mean value, its standard error (from report_state_totals)."""
    if states.is_empty():
        return {}
    summed = states.group_by("player", maintain_order=True).agg(pl.col("boards").sum(), pl.col("value").sum(),
                                           pl.col("value_sq").sum())
    result = {}
    for player, boards, total, total_sq in summed.select(
            "player", "boards", "value", "value_sq").rows():
        se = None
        if boards > 1:
            variance = (total_sq - total * total / boards) / (boards - 1)
            se = math.sqrt(max(variance, 0.0) / boards)
        result[player] = (int(boards), total / boards, se)
    return result


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
    """``players`` side by side against the reference group ``spec`` over the hands the
    filters keep (dates, variants, rules, tables: everyone's hands, whoever sat).

    The outlier rule judges the whole field; a player's results against the players it leaves
    out do not count in the comparison (``basis_per_hand``), unless the player is one of them.
    Each player's foul rate, royalties and Fantasyland entries are compared with the group's
    (without the player), weighted by the player's own mix of variants. The strength is the
    basis result shrunk toward the group's players (empirical Bayes over the group's players
    with at least ``settings.min_sample`` hands); a player the outlier rule left out is not
    drawn from the group, so is neither shrunk nor ranked. The fair trend is the change per session
    within each variant and table size. The foul-rate and trend tests of every player go
    through one Benjamini-Hochberg correction at ``settings.fdr``.
    """
    scope = Filters(date_from=filters.date_from, date_to=filters.date_to,
                    variants=filters.variants, rules=filters.rules, tables=filters.tables)
    with (read.source.reading(db) as connection, readiness_checked_once(),
          read.source.asked_alongside(  # the players' trends across sessions, meanwhile
              connection, lambda cursor: _trends_of(cursor, scope, players),
          ) as session_trends):
        totals = read.report.report_player_totals(connection, scope)
        pairs = read.report.report_pair_totals(connection, scope)
        group = choose_reference(totals, pairs, spec, (), settings.min_sample)
        left_out = group.left_out_names
        states = read.report.report_state_totals(connection, scope, left_out)
        everyone = read.report.report_state_totals(
            connection, scope.with_players(players)) if left_out else states
        basis = _basis(states)
        basis_all = _basis(everyone)
        members = member_rows(states, group)
        member_basis = {p: v for p, v in _basis(members).items()
                        if v[0] >= settings.min_sample and v[2]}
        prior = estimate_prior([v[1] for v in member_basis.values()],
                               [v[2] for v in member_basis.values()])  # type: ignore[misc]
        totals_columns = ("hands", "points", "fouls", "royalty_top", "royalty_middle",
                          "royalty_bottom", "fl_entries", "normal_hands")
        shrunk_members = {p: shrink(v[1], v[2], prior).value  # type: ignore[arg-type]
                          for p, v in member_basis.items()} if prior else {}
        summed_columns = (*totals_columns, "royalties")
        with_royalties = totals.with_columns(
            (pl.col("royalty_top") + pl.col("royalty_middle") + pl.col("royalty_bottom"))
            .alias("royalties"))
        own_sums = _sums_by_player(with_royalties.filter(pl.col("player").is_in(list(players))),
                                   summed_columns)
        group_totals = member_rows(with_royalties, group)
        member_sums = _sums_by_player(group_totals, summed_columns)
        all_member_sums = _sums(group_totals, summed_columns)
        trends = session_trends()
    rows = []
    tests: list[float | None] = []
    for player in players:
        mine = own_sums.get(player)
        if mine is None:
            continue
        theirs = _without(all_member_sums, member_sums.get(player, {}))
        foul_rate, group_foul, foul_z = _mix_rate(mine, theirs, "fouls", "hands")
        royalties, group_royalties = _mix_mean(mine, theirs, "royalties", "hands")
        entry, group_entry, _ = _mix_rate(mine, theirs, "fl_entries", "normal_hands")
        is_outlier = player in left_out
        own = basis_all.get(player) if is_outlier else basis.get(player)
        strength = low = high = kept = None
        rank = None
        if own and own[2] and prior is not None and not is_outlier:
            value = shrink(own[1], own[2], prior)
            strength, kept = value.value, value.weight
            low, high = value.interval()
            if prior.spread > 0:
                rank = 1 + sum(v > value.value for p, v in shrunk_members.items()
                               if p != player)
        trend_points = trends.get(player, {}).get("points")
        trend_fouls = trends.get(player, {}).get("foul")
        hand_count = int(sum(sums["hands"] for sums in mine.values()))
        status = ("left out (outlier)" if is_outlier else
                  "member" if player in group.members else "not a member")
        rows.append({
            "player": player, "status": status, "hands": hand_count,
            "points_per_hand": int(sum(sums["points"] for sums in mine.values())) / hand_count,
            "basis_per_hand": own[1] if own else None, "basis_se": own[2] if own else None,
            "strength": strength, "strength_low": low, "strength_high": high, "kept": kept,
            "rank": rank, "foul_rate": foul_rate, "group_foul_rate": group_foul,
            "foul_difference": None if foul_rate is None or group_foul is None
            else foul_rate - group_foul,
            "foul_q": None, "foul_clear": False,
            "royalties_per_hand": royalties, "group_royalties_per_hand": group_royalties,
            "fl_entry_rate": entry, "group_fl_entry_rate": group_entry,
            "trend_points": trend_points.estimate if trend_points else None,
            "trend_points_q": None,
            "trend_fouls": trend_fouls.estimate if trend_fouls else None,
            "trend_fouls_q": None, "trend_clear": False,
            "_p": (two_sided_p(foul_z) if foul_z is not None else None,
                   trend_points.p_value if trend_points else None,
                   trend_fouls.p_value if trend_fouls else None),
        })
        tests.extend(rows[-1]["_p"])
    q_values = benjamini_hochberg(tests)
    for index, row in enumerate(rows):
        foul_q, points_q, fouls_q = q_values[3 * index:3 * index + 3]
        row["foul_q"], row["trend_points_q"], row["trend_fouls_q"] = foul_q, points_q, fouls_q
        row["foul_clear"] = foul_q is not None and foul_q <= settings.fdr
        row["trend_clear"] = any(q is not None and q <= settings.fdr for q in (points_q, fouls_q))
        del row["_p"]
    table = pl.DataFrame(rows, schema=COMPARISON_COLUMNS)
    return PlayerComparison(group, prior, table, sum(p is not None for p in tests), settings.fdr)


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
