"""The hand browser: matching hands, and one hand's header, players, streets and matchups."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from pipeline.read.grading import grades_current
from pipeline.read.scope import (
    NO_FLAGS,
    Filters,
    HandFlags,
    hand_scope,
    placeholders,
    run_scoped,
)
from pipeline.read.source import Database, frame, named_frame, reading
from pipeline.read.totals import Route, use_hand_summaries
from pipeline.store.aggregates import summaries_sql


def hand_list(
    db: Database, filters: Filters, flags: HandFlags = NO_FLAGS, limit: int = 500,
    route: Route = Route.AUTO,
) -> pl.DataFrame:
    """Hands matching the filters and flags, most recent first (at most ``limit``).

    Flags look at the heroes' boards (and graded decisions) when heroes are chosen, else at
    every board of the hand.
    Columns: hand_key, hand_id, started_at, table_name, variant, rules, players, fouls,
    max_royalties, any_fantasyland, disagreements, hero_points (null without one hero),
    total (hands matching, before the limit). The players, fouls, royalties and
    disagreements of the hands shown come from the kept ``hand_summaries`` (one row a hand)
    when they are current, else from the hands' boards, results and seats.
    """
    hero_condition = ""
    hero_params: list[Any] = []
    if filters.players:
        hero_condition = f" AND player IN ({placeholders(filters.players)})"
        hero_params = list(filters.players)
    # a hero's flag (a hero's foul, royalties, Fantasyland, disagreement or graded decision)
    # already keeps only hands a hero sat in: the scope then leaves the heroes out (a pass over
    # every seat fewer)
    hero_flagged = bool(filters.players) and (
        flags.fouls_only or flags.min_royalties > 0 or flags.fantasyland
        or flags.disagreements or flags.graded)
    scope = hand_scope(filters, include_players=not hero_flagged)
    conditions = [scope.keeps("h")]
    params: list[Any] = []
    hero = filters.players[0] if len(filters.players) == 1 else None
    shown = "hand_key IN (SELECT hand_key FROM picked)"
    with reading(db) as connection:
        summarised = use_hand_summaries(connection, route)
        # without heroes a flag looks at every board of the hand: the kept summaries (one row
        # a hand) answer the foul, royalty and disagreement flags from a third of the rows
        by_summary = summarised and not filters.players
        if flags.fouls_only:
            conditions.append(
                "h.hand_key IN (SELECT hand_key FROM hand_summaries WHERE fouls > 0)" if by_summary
                else f"h.hand_key IN (SELECT hand_key FROM evaluations WHERE foul{hero_condition})")
            params += hero_params
        if flags.min_royalties > 0:
            conditions.append(
                "h.hand_key IN (SELECT hand_key FROM hand_summaries WHERE max_royalties >= ?)"
                if by_summary else "h.hand_key IN (SELECT hand_key FROM evaluations "
                                   f"WHERE royalties >= ?{hero_condition})")
            params += [flags.min_royalties, *hero_params]
        if flags.fantasyland:
            if filters.players:
                conditions.append(
                    "h.hand_key IN (SELECT hand_key FROM seats WHERE fantasyland"
                    f"{hero_condition} UNION ALL SELECT hand_key FROM evaluations "
                    f"WHERE fantasyland_next{hero_condition})"
                )
                params += [*hero_params, *hero_params]
            else:
                conditions.append(
                    "(h.any_fantasyland OR h.hand_key IN "
                    "(SELECT hand_key FROM evaluations WHERE fantasyland_next))"
                )
        if flags.disagreements:
            conditions.append(
                "h.hand_key IN (SELECT hand_key FROM hand_summaries WHERE disagreements > 0)"
                if by_summary else
                f"h.hand_key IN (SELECT hand_key FROM results WHERE disagrees{hero_condition})")
            params += hero_params
        if flags.graded:
            if grades_current(connection):
                conditions.append("h.hand_key IN (SELECT hand_key FROM decision_grades "
                                  f"WHERE exact IS NOT NULL{hero_condition})")
                params += hero_params
            else:  # nothing graded yet (or only by a grader before the unbiased estimator)
                conditions.append("FALSE")
        where = " AND ".join(conditions)
        summaries = ("hand_summaries" if summarised
                     else f"({summaries_sql('results', 'seats', 'evaluations', shown)})")
        sql = f"""
            WITH matched AS NOT MATERIALIZED (
                SELECT h.hand_key, h.started_at FROM hands h WHERE {where}
            ), top_keys AS (
                SELECT hand_key FROM matched
                ORDER BY started_at DESC NULLS LAST, hand_key LIMIT ?
            ), picked AS (
                SELECT h.hand_key, h.hand_id, h.started_at, h.table_name, h.variant, h.rules,
                       h.any_fantasyland
                FROM hands h WHERE h.hand_key IN (SELECT hand_key FROM top_keys)
            ), summary AS (
                SELECT * FROM {summaries} WHERE {shown}
            ), hero AS (
                SELECT hand_key, points AS hero_points FROM results
                WHERE player = ? AND {shown}
            )
            SELECT p.hand_key, p.hand_id, p.started_at, p.table_name, p.variant, p.rules,
                   q.players, q.fouls, q.max_royalties, p.any_fantasyland, q.disagreements,
                   x.hero_points, (SELECT count(*) FROM matched) AS total
            FROM picked p LEFT JOIN summary q USING (hand_key) LEFT JOIN hero x USING (hand_key)
            ORDER BY p.started_at DESC NULLS LAST, p.hand_key
        """
        return run_scoped(connection, scope, sql, [*params, limit, hero])


def hand_header(db: Database, hand_key: int) -> pl.DataFrame:
    """One hand's own row (site, id, table, time, variant, rules, button, player count)."""
    sql = """
        SELECT hand_key, site, hand_id, table_name, started_at, variant, rules, button,
               player_count, has_streets, any_fantasyland, source_path, source_line
        FROM hands WHERE hand_key = ?
    """
    return frame(db, sql, [hand_key])


def _keys_match(keys: list[int]) -> tuple[str, dict[str, Any]]:
    """SQL for "``hand_key`` is one of ``keys``" and its named parameter: one list parameter
    (a third cheaper than an IN list of as many parameters), or for a single key an equality
    (cheaper still)."""
    if len(keys) == 1:
        return "hand_key = $key", {"key": keys[0]}
    return "hand_key = ANY($keys::BIGINT[])", {"keys": keys}


def headers_of_hands(db: Database, hand_keys: Sequence[int]) -> pl.DataFrame:
    """:func:`hand_header` of several hands at once (one read), by hand key."""
    match, params = _keys_match([int(key) for key in hand_keys])
    sql = f"""
        SELECT hand_key, site, hand_id, table_name, started_at, variant, rules, button,
               player_count, has_streets, any_fantasyland, source_path, source_line
        FROM hands WHERE {match} ORDER BY hand_key
    """
    return named_frame(db, sql, params)


def hand_players(db: Database, hand_key: int) -> pl.DataFrame:
    """Each player of one hand in action order: seat, board, verdict and result."""
    return players_of_hands(db, (hand_key,)).drop("hand_key")


def players_of_hands(db: Database, hand_keys: Sequence[int]) -> pl.DataFrame:
    """:func:`hand_players` of several hands at once (one read of each table, not one per
    hand), with their ``hand_key`` first; by hand key, then action order."""
    match, params = _keys_match([int(key) for key in hand_keys])
    sql = f"""
        WITH s AS (SELECT * FROM seats WHERE {match}),
             b AS (SELECT * FROM boards WHERE {match}),
             e AS (SELECT * FROM evaluations WHERE {match}),
             r AS (SELECT * FROM results WHERE {match})
        SELECT s.hand_key, s.player, s.seat, s.position, s.is_button, s.fantasyland,
               s.cards_dealt, b.top, b.middle, b.bottom,
               e.top_class, e.middle_class, e.bottom_class, e.foul,
               e.royalty_top, e.royalty_middle, e.royalty_bottom, e.royalties,
               e.fantasyland_next, e.fantasyland_cards,
               r.points, r.reported_points, r.disagrees, r.disagreement
        FROM s
        LEFT JOIN b ON b.hand_key = s.hand_key AND b.player = s.player
        LEFT JOIN e ON e.hand_key = s.hand_key AND e.player = s.player
        LEFT JOIN r ON r.hand_key = s.hand_key AND r.player = s.player
        ORDER BY s.hand_key, s.position
    """
    return named_frame(db, sql, params)


def hand_streets(db: Database, hand_key: int) -> pl.DataFrame:
    """Every card of one hand as it was played: player, street, placed row or discarded.

    Columns: player, street, card_order, card, row_name (``discard`` for a discarded card).
    """
    sql = """
        WITH placed AS (SELECT player, street, card_order, card, row_name
                        FROM placements WHERE hand_key = ?),
             thrown AS (SELECT player, street, card FROM discards WHERE hand_key = ?)
        SELECT player, street, card_order, card, row_name FROM placed
        UNION ALL
        SELECT player, street, (100 + row_number() OVER (PARTITION BY player, street))::TINYINT,
               card, 'discard' FROM thrown
        ORDER BY player, street, card_order
    """
    return frame(db, sql, [hand_key, hand_key])


def hand_matchups(db: Database, hand_key: int) -> pl.DataFrame:
    """The scoring breakdown of one hand: every ordered pair's rows, scoop, royalties, points."""
    return matchups_of_hands(db, (hand_key,)).drop("hand_key")


def matchups_of_hands(db: Database, hand_keys: Sequence[int]) -> pl.DataFrame:
    """:func:`hand_matchups` of several hands at once, with their ``hand_key`` first; by hand
    key, then as :func:`hand_matchups` orders them."""
    match, params = _keys_match([int(key) for key in hand_keys])
    sql = f"""
        WITH m AS (SELECT * FROM matchups WHERE {match}),
             s AS (SELECT hand_key, player, position FROM seats WHERE {match})
        SELECT m.hand_key, m.player, m.opponent, m.rows_won, m.rows_lost, m.scoop,
               m.royalty_points, m.points, m.settled
        FROM m JOIN s ON s.hand_key = m.hand_key AND s.player = m.player
        ORDER BY m.hand_key, s.position, m.opponent
    """
    return named_frame(db, sql, params)
