"""Per-player figures: the key rates (one definition for the dashboard, ``ofc players`` and the
report's totals), cumulative points, rolling foul rate, royalty sources, Fantasyland, points by
variant and position."""

from __future__ import annotations

import polars as pl

from pipeline.read.scope import (
    EVERYTHING,
    MAX_SERIES_POINTS,
    Filters,
    hand_scope,
    has_hand_filters,
    placeholders,
    player_conditions,
    run_scoped,
    standard_error_from_sums,
    standard_error_sql,
)
from pipeline.read.source import Database, reading
from pipeline.read.totals import (
    Route,
    grain_serves,
    totals_conditions,
    totals_tables,
    use_aggregates,
    use_play_order,
)

_KPI_SELECT = """
        SELECT p.player, p.hands, p.points,
               p.points / p.hands AS points_per_hand,
               coalesce(sqrt(greatest(0, (p.points_squares - p.points::DOUBLE * p.points / p.hands)
                                      / nullif(p.hands - 1, 0)) / p.hands), 0) AS points_se,
               coalesce(b.fouls, 0) AS fouls,
               coalesce(b.fouls, 0) / p.hands AS foul_rate,
               coalesce(b.royalties, 0) AS royalties,
               coalesce(b.royalties, 0) / p.hands AS royalties_per_hand,
               coalesce(sc.matchups, 0) AS matchups,
               coalesce(sc.scoops, 0) AS scoops,
               coalesce(sc.scooped, 0) AS scooped,
               coalesce(sc.scoops / nullif(sc.matchups, 0), 0) AS scoop_rate,
               p.fl_hands,
               coalesce(b.fl_next, 0) - coalesce(b.fl_stays, 0) AS fl_entries,
               p.hands - p.fl_hands AS entry_chances,
               coalesce((coalesce(b.fl_next, 0) - coalesce(b.fl_stays, 0))
                        / nullif(p.hands - p.fl_hands, 0), 0) AS fl_entry_rate,
               coalesce(b.fl_stays, 0) AS fl_stays,
               coalesce(b.fl_stays / nullif(p.fl_hands, 0), 0) AS fl_stay_rate,
               p.fl_points,
               p.disagreements
        FROM points p
        LEFT JOIN boards b USING (player)
        LEFT JOIN scoops sc USING (player)
        ORDER BY p.hands DESC, p.player
"""
"""The key rates from three per-player CTEs (points, boards, scoops), however they were read."""


def player_kpis(db: Database, filters: Filters, route: Route = Route.AUTO) -> pl.DataFrame:
    """One row per player (the heroes, or everyone): sample size and the key rates.

    Columns: hands, points, points_per_hand, points_se (standard error of the mean), fouls,
    foul_rate, royalties, royalties_per_hand, matchups, scoops, scooped, scoop_rate,
    fl_hands (dealt Fantasyland), fl_entries, entry_chances (hands not in Fantasyland),
    fl_entry_rate, fl_stays, fl_stay_rate, fl_points, disagreements. From the aggregates
    unless tables, sessions or opponents are filtered.
    """
    with reading(db) as connection:
        if use_aggregates(connection, route, grain_serves(filters)):
            conditions, params = totals_conditions(filters)
            boards = totals_tables(connection, filters)[0]
            sql = f"""
                WITH rows AS (SELECT * FROM {boards} t WHERE TRUE{conditions}),
                points AS (
                    SELECT player, sum(boards)::BIGINT AS hands, sum(points)::BIGINT AS points,
                           sum(points_sq)::DOUBLE AS points_squares,
                           sum(disagreements)::BIGINT AS disagreements,
                           coalesce(sum(boards) FILTER (WHERE fantasyland), 0)::BIGINT
                               AS fl_hands,
                           coalesce(sum(points) FILTER (WHERE fantasyland), 0)::BIGINT
                               AS fl_points
                    FROM rows GROUP BY player
                ), boards AS (
                    SELECT player, coalesce(sum(boards) FILTER (WHERE foul), 0)::BIGINT AS fouls,
                           sum(royalty_top + royalty_middle + royalty_bottom)::BIGINT
                               AS royalties,
                           sum(fantasyland_next)::BIGINT AS fl_next,
                           coalesce(sum(fantasyland_next) FILTER (WHERE fantasyland), 0)::BIGINT
                               AS fl_stays
                    FROM rows GROUP BY player
                ), scoops AS (
                    SELECT player, sum(matchups)::BIGINT AS matchups,
                           sum(scoops)::BIGINT AS scoops, sum(scooped)::BIGINT AS scooped
                    FROM rows GROUP BY player
                )
                {_KPI_SELECT}
            """
            return connection.sql(sql, params=params).pl()
        return _player_kpis_full(connection, filters)


def _player_kpis_full(db: Database, filters: Filters) -> pl.DataFrame:
    scope = hand_scope(filters, include_players=False)
    r_players, r_params = player_conditions(filters, "r")
    e_players, e_params = player_conditions(filters, "e")
    s_players, s_params = player_conditions(filters, "s")
    m_players, m_params = player_conditions(filters, "m")
    if filters.opponents:
        m_players += f" AND m.opponent IN ({placeholders(filters.opponents)})"
        m_params = [*m_params, *filters.opponents]
    sql = f"""
        WITH in_fl AS (
            SELECT s.hand_key, s.player FROM seats s
            WHERE s.fantasyland AND {scope.keeps('s')}{s_players}
        ), points AS (
            SELECT r.player, count(*) AS hands, sum(r.points)::BIGINT AS points,
                   sum(r.points * r.points)::DOUBLE AS points_squares,
                   count(*) FILTER (WHERE r.disagrees) AS disagreements,
                   count(f.player) AS fl_hands,
                   coalesce(sum(r.points) FILTER (WHERE f.player IS NOT NULL), 0)::BIGINT AS fl_points
            FROM results r LEFT JOIN in_fl f ON f.hand_key = r.hand_key AND f.player = r.player
            WHERE {scope.keeps('r')}{r_players} GROUP BY r.player
        ), boards AS (
            SELECT e.player, count(*) FILTER (WHERE e.foul) AS fouls,
                   sum(e.royalties)::BIGINT AS royalties,
                   count(*) FILTER (WHERE e.fantasyland_next) AS fl_next,
                   count(*) FILTER (WHERE e.fantasyland_next AND f.player IS NOT NULL) AS fl_stays
            FROM evaluations e
            LEFT JOIN in_fl f ON f.hand_key = e.hand_key AND f.player = e.player
            WHERE {scope.keeps('e')}{e_players} GROUP BY e.player
        ), scoops AS (
            SELECT player, count(*) AS matchups,
                   count(*) FILTER (WHERE scoop > 0) AS scoops,
                   count(*) FILTER (WHERE scoop < 0) AS scooped
            FROM matchups m WHERE {scope.keeps('m')}{m_players} GROUP BY player
        )
        {_KPI_SELECT}
    """
    return run_scoped(db, scope, sql, [*s_params, *r_params, *e_params, *m_params])


def cumulative_points(db: Database, filters: Filters, route: Route = Route.AUTO) -> pl.DataFrame:
    """Cumulative points per player (heroes or everyone) over their hands, in play order.

    Columns: player, hand_number (1-based per player), started_at, cumulative. Long series are
    thinned to about MAX_SERIES_POINTS points per player (first and last hands always kept).
    Without hand-level filters the kept play order (``play_order``) answers it.
    """
    with reading(db) as connection:
        if use_play_order(connection, route, not has_hand_filters(filters)):
            players, params = player_conditions(filters, "p")
            sql = f"""
                WITH totals AS (
                    SELECT p.player, max(p.hand_number) AS total FROM play_order p
                    WHERE TRUE{players} GROUP BY p.player
                )
                SELECT p.player, p.hand_number, p.started_at, p.cumulative::HUGEINT AS cumulative
                FROM play_order p JOIN totals t ON t.player = p.player
                WHERE (p.hand_number % greatest(1, ceil(t.total / ?)::BIGINT) = 0
                       OR p.hand_number = t.total OR p.hand_number = 1){players}
                ORDER BY p.player, p.hand_number
            """
            return connection.sql(sql, params=[*params, MAX_SERIES_POINTS, *params]).pl()
        scope = hand_scope(filters, include_players=False)
        players, params = player_conditions(filters, "r")
        sql = f"""
            WITH ordered AS (
                SELECT r.player, h.started_at,
                       row_number() OVER w AS hand_number,
                       sum(r.points) OVER w AS cumulative,
                       count(*) OVER (PARTITION BY r.player) AS total
                FROM results r JOIN hands h USING (hand_key)
                WHERE {scope.keeps('r')}{players}
                WINDOW w AS (PARTITION BY r.player ORDER BY h.started_at NULLS FIRST, r.hand_key
                             ROWS UNBOUNDED PRECEDING)
            )
            SELECT player, hand_number, started_at, cumulative FROM ordered
            WHERE hand_number % greatest(1, ceil(total / ?)::BIGINT) = 0 OR hand_number = total
               OR hand_number = 1
            ORDER BY player, hand_number
        """
        return run_scoped(connection, scope, sql, [*params, MAX_SERIES_POINTS])


def cumulative_points_by_time(db: Database, filters: Filters, bucket: str = "day") -> pl.DataFrame:
    """Cumulative points per player (heroes or everyone) over time, one point per ``bucket``.

    ``bucket`` is ``hour``, ``day``, ``week`` or ``month``. Columns: player, period, points
    (in that period), cumulative. Undated hands are left out. Without hand-level filters the
    sessions table (kept by ingestion) answers it, each session counted when it started.
    """
    if bucket not in ("hour", "day", "week", "month"):
        raise ValueError(f"unknown bucket {bucket!r}")
    scope = hand_scope(filters, include_players=False)
    if not has_hand_filters(filters):
        players, params = player_conditions(filters, "x")
        source = f"""
            SELECT x.player, date_trunc(?, x.started_at) AS period, sum(x.points) AS points
            FROM sessions x WHERE x.started_at IS NOT NULL{players} GROUP BY ALL
        """
    else:
        players, params = player_conditions(filters, "r")
        source = f"""
            SELECT r.player, date_trunc(?, h.started_at) AS period, sum(r.points) AS points
            FROM results r JOIN hands h USING (hand_key)
            WHERE {scope.keeps('r')} AND h.started_at IS NOT NULL{players}
            GROUP BY ALL
        """
    sql = f"""
        WITH periods AS ({source})
        SELECT player, period, points::BIGINT AS points,
               sum(points) OVER (PARTITION BY player ORDER BY period)::BIGINT AS cumulative
        FROM periods ORDER BY player, period
    """
    return run_scoped(db, scope, sql, [bucket, *params])


def rolling_foul_rate(db: Database, filters: Filters, window: int = 100,
                      route: Route = Route.AUTO) -> pl.DataFrame:
    """Foul rate over the last ``window`` hands, per player, over their hands in play order.

    Columns: player, hand_number, started_at, foul_rate, window_hands (hands in the window).
    Without hand-level filters the kept play order (``play_order``: fouls so far) answers it.
    """
    with reading(db) as connection:
        if use_play_order(connection, route, not has_hand_filters(filters)):
            players, params = player_conditions(filters, "p")
            sql = f"""
                WITH totals AS (
                    SELECT p.player, max(p.hand_number) AS total,
                           greatest(1, ceil(max(p.hand_number) / ?)::BIGINT) AS step
                    FROM play_order p WHERE TRUE{players} GROUP BY p.player
                ), picked AS MATERIALIZED (
                    -- the rows drawn, and the rows a window before them
                    SELECT p.player, p.hand_number, p.started_at, p.fouls,
                           p.hand_number % t.step = 0 OR p.hand_number = t.total AS drawn
                    FROM play_order p JOIN totals t ON t.player = p.player
                    WHERE (p.hand_number % t.step = 0 OR p.hand_number = t.total
                           OR (p.hand_number + ?) % t.step = 0
                           OR p.hand_number + ? = t.total){players}
                )
                SELECT s.player, s.hand_number, s.started_at,
                       (s.fouls - coalesce(before.fouls, 0))::DOUBLE
                           / least(s.hand_number, ?) AS foul_rate,
                       least(s.hand_number, ?)::BIGINT AS window_hands
                FROM picked s
                LEFT JOIN picked before ON before.player = s.player
                     AND before.hand_number = s.hand_number - ?
                WHERE s.drawn
                ORDER BY s.player, s.hand_number
            """
            return connection.sql(sql, params=[MAX_SERIES_POINTS, *params, window, window,
                                               *params, window, window, window]).pl()
        scope = hand_scope(filters, include_players=False)
        players, params = player_conditions(filters, "e")
        sql = f"""
            WITH ordered AS (
                SELECT e.player, h.started_at,
                       row_number() OVER w AS hand_number,
                       avg(e.foul::INTEGER) OVER (w ROWS BETWEEN ? PRECEDING AND CURRENT ROW)
                           AS foul_rate,
                       count(*) OVER (w ROWS BETWEEN ? PRECEDING AND CURRENT ROW) AS window_hands,
                       count(*) OVER (PARTITION BY e.player) AS total
                FROM evaluations e JOIN hands h USING (hand_key)
                WHERE {scope.keeps('e')}{players}
                WINDOW w AS (PARTITION BY e.player ORDER BY h.started_at NULLS FIRST, e.hand_key)
            )
            SELECT player, hand_number, started_at, foul_rate, window_hands FROM ordered
            WHERE hand_number % greatest(1, ceil(total / ?)::BIGINT) = 0 OR hand_number = total
            ORDER BY player, hand_number
        """
        return run_scoped(connection, scope, sql,
                          [window - 1, window - 1, *params, MAX_SERIES_POINTS])


def royalty_sources(db: Database, filters: Filters) -> pl.DataFrame:
    """Where royalties came from: row, hand class, boards, royalty points (collected only)."""
    scope = hand_scope(filters, include_players=False)
    players, params = player_conditions(filters, "e")
    sql = f"""
        WITH boards AS (
            SELECT top_class, middle_class, bottom_class,
                   royalty_top, royalty_middle, royalty_bottom
            FROM evaluations e WHERE {scope.keeps('e')}{players} AND royalties > 0
        )
        SELECT 'top' AS row_name, top_class AS hand_class, count(*) AS boards,
               sum(royalty_top) AS royalty_points
        FROM boards WHERE royalty_top > 0 GROUP BY ALL
        UNION ALL
        SELECT 'middle', middle_class, count(*), sum(royalty_middle)
        FROM boards WHERE royalty_middle > 0 GROUP BY ALL
        UNION ALL
        SELECT 'bottom', bottom_class, count(*), sum(royalty_bottom)
        FROM boards WHERE royalty_bottom > 0 GROUP BY ALL
        ORDER BY royalty_points DESC, row_name, hand_class
    """
    return run_scoped(db, scope, sql, params)


def fantasyland_funnel(db: Database, filters: Filters) -> pl.DataFrame:
    """The Fantasyland funnel for the heroes (or everyone) together, one row per stage.

    Stages, in order: entries (earned from a normal hand), hands played in Fantasyland, stays
    (earned again from a Fantasyland hand); ``points`` on the played stage is what those hands won.
    """
    kpis = player_kpis(db, filters)
    entries = int(kpis["fl_entries"].sum()) if kpis.height else 0
    played = int(kpis["fl_hands"].sum()) if kpis.height else 0
    stays = int(kpis["fl_stays"].sum()) if kpis.height else 0
    points = float(kpis["fl_points"].sum()) if kpis.height else 0.0
    return pl.DataFrame(
        {
            "stage": ["Entered", "Played in Fantasyland", "Stayed"],
            "count": [entries, played, stays],
            "points": [None, points, None],
        },
        schema={"stage": pl.String, "count": pl.Int64, "points": pl.Float64},
    )


def points_by_variant(db: Database, filters: Filters, route: Route = Route.AUTO) -> pl.DataFrame:
    """Per variant: hands, points, points per hand and its standard error."""
    with reading(db) as connection:
        if use_aggregates(connection, route, grain_serves(filters)):
            conditions, params = totals_conditions(filters)
            boards = totals_tables(connection, filters)[0]
            sql = f"""
                SELECT variant, sum(boards)::BIGINT AS hands, sum(points)::BIGINT AS points,
                       sum(points)::DOUBLE / sum(boards) AS points_per_hand,
                       {standard_error_from_sums('sum(points)', 'sum(points_sq)',
                                                 'sum(boards)')} AS points_se
                FROM {boards} t WHERE TRUE{conditions}
                GROUP BY variant ORDER BY hands DESC, variant
            """
            return connection.sql(sql, params=params).pl()
        scope = hand_scope(filters, include_players=False)
        players, params = player_conditions(filters, "r")
        sql = f"""
            SELECT h.variant, count(*) AS hands, sum(r.points)::BIGINT AS points,
                   sum(r.points)::DOUBLE / count(*) AS points_per_hand,
                   {standard_error_sql('r.points')} AS points_se
            FROM results r JOIN hands h USING (hand_key)
            WHERE {scope.keeps('r')}{players} GROUP BY h.variant ORDER BY hands DESC, h.variant
        """
        return run_scoped(connection, scope, sql, params)


def points_by_position(db: Database, filters: Filters, route: Route = Route.AUTO) -> pl.DataFrame:
    """Per table size and position relative to the button: hands, points per hand (± SE).

    ``position`` 0 acts first (left of the button); the button acts last. ``seat_label`` names it.
    """
    with reading(db) as connection:
        if use_aggregates(connection, route, grain_serves(filters)):
            conditions, params = totals_conditions(filters)
            boards = totals_tables(connection, filters)[0]
            sql = f"""
                SELECT player_count, position, sum(buttons) > 0 AS is_button,
                       sum(boards)::BIGINT AS hands, sum(points)::BIGINT AS points,
                       sum(points)::DOUBLE / sum(boards) AS points_per_hand,
                       {standard_error_from_sums('sum(points)', 'sum(points_sq)',
                                                 'sum(boards)')} AS points_se
                FROM {boards} t WHERE TRUE{conditions}
                GROUP BY player_count, position ORDER BY player_count, position
            """
            frame = connection.sql(sql, params=params).pl()
        else:
            scope = hand_scope(filters, include_players=False)
            players, params = player_conditions(filters, "r")
            sql = f"""
                SELECT h.player_count, s.position, bool_or(s.is_button) AS is_button,
                       count(*) AS hands, sum(r.points)::BIGINT AS points,
                       sum(r.points)::DOUBLE / count(*) AS points_per_hand,
                       {standard_error_sql('r.points')} AS points_se
                FROM results r
                JOIN seats s USING (hand_key, player)
                JOIN hands h USING (hand_key)
                WHERE {scope.keeps('r')}{players}
                GROUP BY h.player_count, s.position ORDER BY h.player_count, s.position
            """
            frame = run_scoped(connection, scope, sql, params)
    labels = [
        position_label(int(count), int(position), bool(button))
        for count, position, button in frame.select("player_count", "position", "is_button").rows()
    ]
    return frame.with_columns(pl.Series("seat_label", labels, dtype=pl.String))


def position_label(player_count: int, position: int, is_button: bool) -> str:
    """``3-handed · button`` / ``3-handed · 1st to act`` for a settlement position."""
    if is_button or position == player_count - 1:
        where = "button"
    else:
        ordinal = {1: "1st", 2: "2nd", 3: "3rd"}.get(position + 1, f"{position + 1}th")
        where = f"{ordinal} to act"
    return f"{player_count}-handed · {where}"


PLAYER_SUMMARY_COLUMNS: dict[str, str] = {
    "player": "player", "hands": "hands", "points": "points",
    "points_per_hand": "points_per_hand", "fouls": "fouls", "foul_rate": "foul_rate",
    "royalties": "royalties", "fantasyland_entries": "fl_entries",
    "fantasyland_hands": "fl_hands", "scoops": "scoops",
}
"""The columns ``ofc players`` shows, each named after the :func:`player_kpis` column it is."""


def player_summary(db: Database, filters: Filters = EVERYTHING) -> pl.DataFrame:
    """One row per player, best total first: :func:`player_kpis` in the columns of
    :data:`PLAYER_SUMMARY_COLUMNS` (hands, points, points per hand, fouls and foul rate,
    royalties, Fantasyland entries and hands, scoops). ``ofc players`` prints it; the dashboard
    and the coaching report read the same figures from :func:`player_kpis`."""
    kpis = player_kpis(db, filters)
    return kpis.select(
        pl.col(source).alias(name) for name, source in PLAYER_SUMMARY_COLUMNS.items()
    ).sort(["points", "player"], descending=[True, False])
