"""The coaching report's totals.

The report compares one player (several screen names merged) with everyone else, so these
questions return per-player totals for every player in scope (dates and variants only; the
heroes are picked out in :mod:`pipeline.report`). Totals are integer sums (and sums of squares
for standard errors): exact, so the same database always gives the same report.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from pipeline.read.scope import (
    Filters,
    day_bounds,
    in_list,
    placeholders,
)
from pipeline.read.source import Database, frame


def _report_conditions(filters: Filters) -> tuple[str, list[Any]]:
    """Conditions on hands ``h`` for the report's scope: dates, variants, rules and tables.

    Never the players, opponents or sessions: a comparison needs everyone's hands in scope.
    """
    conditions = ["TRUE"]
    params: list[Any] = []
    start, end = day_bounds(filters)
    if start is not None:
        conditions.append("h.started_at >= ?")
        params.append(start)
    if end is not None:
        conditions.append("h.started_at < ?")
        params.append(end)
    for column, values in (("variant", filters.variants), ("rules", filters.rules),
                           ("table_name", filters.tables)):
        if values:
            conditions.append(f"h.{column} IN ({placeholders(values)})")
            params.extend(values)
    return " AND ".join(conditions), params


FANTASYLAND_CARD_RANKS = ("Q", "K", "A")


"""A card of these ranks on the top row with the first five cards counts as chasing Fantasyland."""


def fantasyland_top_value() -> int:
    """The weakest top row that earns Fantasyland under the standard rule (QQ2), as a row value.

    ``evaluations.top_value`` at or above it means a pair of queens or better, or trips.
    """
    from pipeline.rules.cards import parse_cards
    from pipeline.rules.values import evaluate_row

    return evaluate_row(parse_cards("Qc Qd 2h"))


def _report_seats_cte(filters: Filters) -> tuple[str, list[Any]]:
    """``report_seats``: one row per board in scope with its verdict, result and chasing flag.

    With ``filters.players`` only their boards. ``chasing`` (a hand outside Fantasyland only):
    the final top row qualifies for Fantasyland under the standard rule (a pair of queens or
    better, or trips), or, when the streets are known, a queen, king or ace was placed on the
    top row with the first five cards. Joins use ON (not USING) and the row value instead of
    the board text: on a million hands that halves the time.
    """
    where, params = _report_conditions(filters)
    scoped = where != "TRUE"
    players = ""
    player_params: list[Any] = []
    if filters.players:
        players = f" AND {{alias}}.player IN ({placeholders(filters.players)})"
        player_params = list(filters.players)
    ranks = " OR ".join("prefix(p.card, ?)" for _ in FANTASYLAND_CARD_RANKS)
    cte = f"""
        report_hands AS MATERIALIZED (
            SELECT h.hand_key, h.variant, h.player_count, h.has_streets, h.rules
            FROM hands h WHERE {where}
        ), report_early AS (
            SELECT DISTINCT p.hand_key, p.player FROM placements p
            {"SEMI JOIN report_hands k ON k.hand_key = p.hand_key" if scoped else ""}
            WHERE p.street = 1 AND p.row_name = 'top' AND ({ranks}){players.format(alias="p")}
        ), report_seats AS (
            SELECT s.hand_key, s.player, k.variant, k.player_count, k.rules, k.has_streets,
                   s.position,
                   s.is_button, s.fantasyland, e.foul, e.royalty_top, e.royalty_middle,
                   e.royalty_bottom, e.fantasyland_next, r.points::BIGINT AS points,
                   NOT s.fantasyland AND (e.top_value >= ? OR x.player IS NOT NULL) AS chasing
            FROM seats s
            JOIN report_hands k ON k.hand_key = s.hand_key
            JOIN evaluations e ON e.hand_key = s.hand_key AND e.player = s.player
            JOIN results r ON r.hand_key = s.hand_key AND r.player = s.player
            LEFT JOIN report_early x ON x.hand_key = s.hand_key AND x.player = s.player
            WHERE TRUE{players.format(alias="s")}
        )"""
    return cte, [*params, *FANTASYLAND_CARD_RANKS, *player_params, fantasyland_top_value(),
                 *player_params]


def report_player_totals(db: Database, filters: Filters) -> pl.DataFrame:
    """Per player, variant, table size, position and rules, every total the coaching report compares.

    Integer sums, so that adding rows up (per variant, per player) stays exact; one pass over
    the boards serves the player, the reference group and the seats. Columns: player, variant,
    player_count, position (0 acts first), rules (the rules the hands were played under: a
    game's stake and house rules), is_button, hands, points, points_sq, fouls,
    foul_points (points won in fouled hands), normal_hands (outside Fantasyland), normal_fouls,
    chasing_hands, chasing_fouls, normal_points, normal_with_streets, fl_hands, fl_entries,
    fl_stays, fl_points, fl_points_sq, royalty_top, royalty_top_sq, royalty_middle,
    royalty_middle_sq, royalty_bottom, royalty_bottom_sq, opponents (sum over hands of the other
    players at the table).
    """
    cte, params = _report_seats_cte(filters)
    sql = f"""
        WITH {cte}
        SELECT player, variant, player_count, position, rules, bool_or(is_button) AS is_button,
            count(*) AS hands,
            sum(points)::BIGINT AS points, sum(points * points)::BIGINT AS points_sq,
            count(*) FILTER (WHERE foul) AS fouls,
            coalesce(sum(points) FILTER (WHERE foul), 0)::BIGINT AS foul_points,
            count(*) FILTER (WHERE NOT fantasyland) AS normal_hands,
            count(*) FILTER (WHERE NOT fantasyland AND foul) AS normal_fouls,
            count(*) FILTER (WHERE chasing) AS chasing_hands,
            count(*) FILTER (WHERE chasing AND foul) AS chasing_fouls,
            coalesce(sum(points) FILTER (WHERE NOT fantasyland), 0)::BIGINT AS normal_points,
            count(*) FILTER (WHERE NOT fantasyland AND has_streets) AS normal_with_streets,
            count(*) FILTER (WHERE fantasyland) AS fl_hands,
            count(*) FILTER (WHERE NOT fantasyland AND fantasyland_next) AS fl_entries,
            count(*) FILTER (WHERE fantasyland AND fantasyland_next) AS fl_stays,
            coalesce(sum(points) FILTER (WHERE fantasyland), 0)::BIGINT AS fl_points,
            coalesce(sum(points * points) FILTER (WHERE fantasyland), 0)::BIGINT AS fl_points_sq,
            sum(royalty_top)::BIGINT AS royalty_top,
            sum(royalty_top * royalty_top)::BIGINT AS royalty_top_sq,
            sum(royalty_middle)::BIGINT AS royalty_middle,
            sum(royalty_middle * royalty_middle)::BIGINT AS royalty_middle_sq,
            sum(royalty_bottom)::BIGINT AS royalty_bottom,
            sum(royalty_bottom * royalty_bottom)::BIGINT AS royalty_bottom_sq,
            sum(player_count - 1)::BIGINT AS opponents
        FROM report_seats GROUP BY player, variant, player_count, position, rules
        ORDER BY player, variant, player_count, position, rules
    """
    return frame(db, sql, params)


def report_matchup_totals(db: Database, filters: Filters,
                          leave_out: tuple[str, ...] = ()) -> pl.DataFrame:
    """Per player, variant and rules, their pairings with opponents: counts and settled points by
    scoop.

    Pairings against the players in ``leave_out`` are not counted; with ``filters.players``,
    only their pairings. Columns: player, variant,
    rules, matchups, scoops (player scooped the opponent, fouls included), scooped,
    scoop_points, scooped_points, neither_points (settled points in each kind).
    """
    where, params = _report_conditions(filters)
    left_out, left_params = in_list("m.opponent", leave_out, negate=True)
    players, player_params = in_list("m.player", filters.players)
    sql = f"""
        SELECT m.player, h.variant, h.rules, count(*) AS matchups,
            count(*) FILTER (WHERE m.scoop > 0) AS scoops,
            count(*) FILTER (WHERE m.scoop < 0) AS scooped,
            coalesce(sum(m.settled) FILTER (WHERE m.scoop > 0), 0)::BIGINT AS scoop_points,
            coalesce(sum(m.settled) FILTER (WHERE m.scoop < 0), 0)::BIGINT AS scooped_points,
            coalesce(sum(m.settled) FILTER (WHERE m.scoop = 0), 0)::BIGINT AS neither_points
        FROM matchups m JOIN hands h ON h.hand_key = m.hand_key
        WHERE {where}{left_out}{players}
        GROUP BY m.player, h.variant, h.rules ORDER BY m.player, h.variant, h.rules
    """
    return frame(db, sql, [*params, *left_params, *player_params])


def report_pair_totals(db: Database, filters: Filters) -> pl.DataFrame:
    """Per ordered pair (player, opponent) and rules: hands together and the player's settled
    points.

    Columns: player, opponent, rules, hands, points, points_sq, scoops, scooped.
    """
    where, params = _report_conditions(filters)
    sql = f"""
        SELECT m.player, m.opponent, h.rules, count(*) AS hands,
            sum(m.settled)::BIGINT AS points,
            sum(m.settled * m.settled)::BIGINT AS points_sq,
            count(*) FILTER (WHERE m.scoop > 0) AS scoops,
            count(*) FILTER (WHERE m.scoop < 0) AS scooped
        FROM matchups m JOIN hands h ON h.hand_key = m.hand_key
        WHERE {where}
        GROUP BY m.player, m.opponent, h.rules ORDER BY m.player, m.opponent, h.rules
    """
    return frame(db, sql, params)


def report_player_hands(db: Database, filters: Filters) -> pl.DataFrame:
    """Every hand of the heroes (``filters.players``, required) in scope, in play order.

    Columns: hand_key, site, hand_id, table_name, started_at, variant, player_count, player,
    position, is_button, fantasyland, session_id, has_streets, foul, top_class, middle_class,
    bottom_class, royalty_top, royalty_middle, royalty_bottom, royalties, fantasyland_next,
    fantasyland_cards, points, chasing.
    """
    if not filters.players:
        raise ValueError("report_player_hands needs the heroes in filters.players")
    cte, params = _report_seats_cte(filters)
    sql = f"""
        WITH {cte}
        SELECT h.hand_key, h.site, h.hand_id, h.table_name, h.started_at, h.variant,
            h.player_count, x.player, x.position, x.is_button, x.fantasyland, s.session_id,
            h.has_streets, x.foul, e.top_class, e.middle_class, e.bottom_class,
            e.royalty_top, e.royalty_middle, e.royalty_bottom, e.royalties,
            e.fantasyland_next, e.fantasyland_cards, x.points, x.chasing
        FROM report_seats x
        JOIN hands h ON h.hand_key = x.hand_key
        JOIN seats s ON s.hand_key = x.hand_key AND s.player = x.player
        JOIN evaluations e ON e.hand_key = x.hand_key AND e.player = x.player
        ORDER BY h.started_at NULLS FIRST, h.hand_key, x.player
    """
    return frame(db, sql, params)


BOARD_STATES = ("fantasyland", "foul", "standing")
"""A board's state in the balance sheet: played in Fantasyland; fouled outside it; standing
(a legal board outside Fantasyland)."""


def report_state_totals(db: Database, filters: Filters,
                        leave_out: tuple[str, ...] = ()) -> pl.DataFrame:
    """Per player, variant, table size, position, rules and board state: each board's result
    against the opponents who count, as a whole-table figure.

    A board's *value* is the points it settled against the opponents not in ``leave_out``,
    scaled to the whole table: ``(player_count - 1) × settled / opponents counted`` (its points
    in the hand when nobody is left out). Its *royalty part* is the same for the royalty points
    settled (``matchups.royalty_points``); the rest is rows and scoops. Boards with no opponent
    left to count are not included. With ``filters.players``, only their boards.

    Columns: player, variant, player_count, position, rules, state (:data:`BOARD_STATES`),
    boards, value, value_sq, royalty, royalty_sq, value_royalty (sums over boards of v, v², u,
    u², u·v), fantasyland_next (boards that earn or keep Fantasyland), pairings (opponents
    counted, summed), settled (their settled points, summed).
    """
    where, params = _report_conditions(filters)
    left_out, left_params = in_list("m.opponent", leave_out, negate=True)
    players, player_params = in_list("m.player", filters.players)
    seat_players, seat_params = in_list("s.player", filters.players)
    sql = f"""
        WITH report_hands AS MATERIALIZED (
            SELECT h.hand_key, h.variant, h.player_count, h.rules FROM hands h WHERE {where}
        ), counted AS (
            SELECT m.hand_key, m.player, count(*) AS pairings,
                   sum(m.settled)::BIGINT AS settled,
                   sum(m.royalty_points)::BIGINT AS royalty_points
            FROM matchups m SEMI JOIN report_hands k ON k.hand_key = m.hand_key
            WHERE TRUE{left_out}{players}
            GROUP BY m.hand_key, m.player
        ), boards AS (
            SELECT s.player, k.variant, k.player_count, s.position, k.rules,
                   CASE WHEN s.fantasyland THEN 'fantasyland' WHEN e.foul THEN 'foul'
                        ELSE 'standing' END AS state,
                   e.fantasyland_next, c.pairings, c.settled,
                   (k.player_count - 1) * c.settled::DOUBLE / c.pairings AS v,
                   (k.player_count - 1) * c.royalty_points::DOUBLE / c.pairings AS u
            FROM counted c
            JOIN report_hands k ON k.hand_key = c.hand_key
            JOIN seats s ON s.hand_key = c.hand_key AND s.player = c.player
            JOIN evaluations e ON e.hand_key = c.hand_key AND e.player = c.player
            WHERE TRUE{seat_players}
        )
        SELECT player, variant, player_count, position, rules, state, count(*) AS boards,
               sum(v) AS value, sum(v * v) AS value_sq, sum(u) AS royalty,
               sum(u * u) AS royalty_sq, sum(u * v) AS value_royalty,
               count(*) FILTER (WHERE fantasyland_next) AS fantasyland_next,
               sum(pairings)::BIGINT AS pairings, sum(settled)::BIGINT AS settled
        FROM boards
        GROUP BY player, variant, player_count, position, rules, state
        ORDER BY player, variant, player_count, position, rules, state
    """
    return frame(db, sql, [*params, *left_params, *player_params, *seat_params])


def report_hand_grades(db: Database, hand_keys: tuple[int, ...],
                       players: tuple[str, ...]) -> pl.DataFrame:
    """The graded decisions (``ofc analyze``) of ``players`` in the hands ``hand_keys``.

    Empty before any grading (also when the grading tables do not exist yet). Columns: hand_key,
    player, street, situation, chosen_placement, best_placement, ev_loss, loss_se, mistake.
    """
    columns = {"hand_key": pl.Int64, "player": pl.String, "street": pl.Int64,
               "situation": pl.String, "chosen_placement": pl.String,
               "best_placement": pl.String, "ev_loss": pl.Float64, "loss_se": pl.Float64,
               "mistake": pl.Boolean}
    if not hand_keys or not players:
        return pl.DataFrame(schema=columns)
    exists = frame(db, "SELECT count(*) AS n FROM information_schema.tables "
                       "WHERE table_schema = 'main' AND table_name = 'decision_grades'")
    if not exists["n"][0]:
        return pl.DataFrame(schema=columns)
    sql = f"""
        SELECT hand_key, player, street::BIGINT AS street, situation, chosen_placement,
               best_placement, ev_loss, loss_se, mistake
        FROM decision_grades
        WHERE hand_key IN ({placeholders(hand_keys)}) AND player IN ({placeholders(players)})
        ORDER BY hand_key, player, street
    """
    return frame(db, sql, [*hand_keys, *players]).cast(columns)  # type: ignore[arg-type]


def report_progress_hands(db: Database, filters: Filters) -> pl.DataFrame:
    """Every hand of ``filters.players`` (required) in scope, in play order, with what a trend
    needs and nothing more (lighter than :func:`report_player_hands`).

    Columns: hand_key, started_at, session_id, variant, player_count, player, points, foul.
    """
    if not filters.players:
        raise ValueError("report_progress_hands needs the players in filters.players")
    where, params = _report_conditions(filters)
    sql = f"""
        SELECT h.hand_key, h.started_at, s.session_id, h.variant, h.player_count, s.player,
               r.points, e.foul
        FROM seats s
        JOIN hands h ON h.hand_key = s.hand_key
        JOIN results r ON r.hand_key = s.hand_key AND r.player = s.player
        JOIN evaluations e ON e.hand_key = s.hand_key AND e.player = s.player
        WHERE s.player IN ({placeholders(filters.players)}) AND {where}
        ORDER BY h.started_at NULLS FIRST, h.hand_key, s.player
    """
    return frame(db, sql, [*filters.players, *params])
