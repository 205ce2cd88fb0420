"""Decision grading (tables written by ``ofc analyze``, :mod:`pipeline.analysis`): summaries,
splits by street and situation, the costliest decisions, Fantasyland against the solver."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from pipeline.read.scope import (
    Filters,
    Scope,
    hand_scope,
    player_conditions,
    standard_error_sql,
)
from pipeline.read.source import Database, reading

GRADING_TABLES = ("decision_grades", "decision_alternatives", "fantasyland_grades")


def _grading_frame(db: Database, scope: Scope, body: str, params: Sequence[Any] = ()) -> pl.DataFrame:
    """Like :func:`run_scoped`; an empty frame (no columns) while nothing has been graded yet."""
    with reading(db) as connection:
        present = {row[0] for row in connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()}
        if not set(GRADING_TABLES) <= present:
            return pl.DataFrame()
        return connection.sql(scope.sql(body), params=[*scope.params, *params]).pl()


def grading_summary(db: Database, filters: Filters) -> pl.DataFrame:
    """Decision grades per player (the heroes, or everyone graded).

    Columns: player, decisions, hands, mistakes, correct_share (decisions not graded a
    mistake), ev_loss_per_decision, ev_loss_se, ev_loss_per_hand (summed over a hand's graded
    decisions), total_loss, rollouts (mean samples behind the chosen play), fl_hands (Fantasyland
    hands compared with the solver), fl_given_up, fl_given_up_per_hand, fl_optimal_share.
    """
    scope = hand_scope(filters, include_players=False)
    g_players, g_params = player_conditions(filters, "g")
    f_players, f_params = player_conditions(filters, "f")
    sql = f"""
        WITH per_hand AS (
            SELECT g.player, g.hand_key, sum(g.ev_loss) AS loss, count(*) AS decisions,
                   count(*) FILTER (WHERE g.mistake) AS mistakes,
                   sum(g.ev_loss * g.ev_loss) AS loss_squares, sum(g.rollouts) AS rollouts
            FROM decision_grades g WHERE {scope.keeps('g')}{g_players}
            GROUP BY g.player, g.hand_key
        ), decisions AS (
            SELECT player, sum(decisions)::BIGINT AS decisions, count(*) AS hands,
                   sum(mistakes)::BIGINT AS mistakes, sum(loss) AS total_loss,
                   sum(loss_squares) AS loss_squares, sum(rollouts) AS rollouts
            FROM per_hand GROUP BY player
        ), fantasyland AS (
            SELECT f.player, count(*) AS fl_hands, sum(f.points_given_up) AS fl_given_up,
                   count(*) FILTER (WHERE f.points_given_up < 1e-9) AS fl_optimal
            FROM fantasyland_grades f WHERE {scope.keeps('f')}{f_players} GROUP BY f.player
        )
        SELECT coalesce(d.player, f.player) AS player,
               coalesce(d.decisions, 0) AS decisions, coalesce(d.hands, 0) AS hands,
               coalesce(d.mistakes, 0) AS mistakes,
               1 - coalesce(d.mistakes, 0) / nullif(d.decisions, 0) AS correct_share,
               d.total_loss / nullif(d.decisions, 0) AS ev_loss_per_decision,
               coalesce(sqrt(greatest(0, (d.loss_squares - d.total_loss * d.total_loss / d.decisions)
                                      / nullif(d.decisions - 1, 0)) / d.decisions), 0) AS ev_loss_se,
               d.total_loss / nullif(d.hands, 0) AS ev_loss_per_hand,
               coalesce(d.total_loss, 0) AS total_loss,
               d.rollouts / nullif(d.decisions, 0) AS rollouts,
               coalesce(f.fl_hands, 0) AS fl_hands, coalesce(f.fl_given_up, 0) AS fl_given_up,
               f.fl_given_up / nullif(f.fl_hands, 0) AS fl_given_up_per_hand,
               f.fl_optimal / nullif(f.fl_hands, 0) AS fl_optimal_share
        FROM decisions d FULL OUTER JOIN fantasyland f USING (player)
        ORDER BY decisions DESC, player
    """
    return _grading_frame(db, scope, sql, [*g_params, *f_params])


def _grading_split(db: Database, filters: Filters, column: str) -> pl.DataFrame:
    scope = hand_scope(filters, include_players=False)
    g_players, g_params = player_conditions(filters, "g")
    sql = f"""
        SELECT g.player, g.{column}, count(*) AS decisions,
               count(*) FILTER (WHERE g.mistake) AS mistakes,
               1 - count(*) FILTER (WHERE g.mistake) / count(*) AS correct_share,
               avg(g.ev_loss) AS ev_loss_per_decision, {standard_error_sql('g.ev_loss')} AS ev_loss_se,
               sum(g.ev_loss) AS total_loss
        FROM decision_grades g WHERE {scope.keeps('g')}{g_players}
        GROUP BY g.player, g.{column} ORDER BY g.player, g.{column}
    """
    return _grading_frame(db, scope, sql, g_params)


def grading_by_street(db: Database, filters: Filters) -> pl.DataFrame:
    """Decision grades per player and street (1-based): decisions, mistakes, correct_share,
    ev_loss_per_decision, ev_loss_se, total_loss."""
    return _grading_split(db, filters, "street")


def grading_by_situation(db: Database, filters: Filters) -> pl.DataFrame:
    """Decision grades per player and situation (``fantasyland_made``, ``fantasyland_draw``:
    going for Fantasyland, ``standard``): same columns as :func:`grading_by_street`."""
    return _grading_split(db, filters, "situation")


def worst_decisions(db: Database, filters: Filters, limit: int = 20,
                    mistakes_only: bool = False) -> pl.DataFrame:
    """The graded decisions with the largest EV loss, largest first.

    Columns: hand_key, hand_id, started_at, variant, player, street, situation, chosen,
    best, chosen_placement, best_placement, chosen_ev, best_ev, ev_loss, loss_se, mistake,
    rollouts, alternatives.
    """
    scope = hand_scope(filters, include_players=False)
    g_players, g_params = player_conditions(filters, "g")
    only = " AND g.mistake" if mistakes_only else ""
    sql = f"""
        SELECT g.hand_key, h.hand_id, h.started_at, g.variant, g.player, g.street, g.situation,
               g.chosen, g.best, g.chosen_placement, g.best_placement, g.chosen_ev, g.best_ev,
               g.ev_loss, g.loss_se, g.mistake, g.rollouts, g.alternatives
        FROM decision_grades g JOIN hands h ON h.hand_key = g.hand_key
        WHERE {scope.keeps('g')}{g_players}{only}
        ORDER BY g.ev_loss DESC, g.hand_key, g.player, g.street
        LIMIT ?
    """
    return _grading_frame(db, scope, sql, [*g_params, limit])


def decision_alternatives(db: Database, hand_key: int, player: str, street: int) -> pl.DataFrame:
    """Every alternative of one graded decision, best estimate first.

    Columns: alternative, placement, top, middle, bottom, discards (cards this street sends to
    each row), equivalents, is_chosen, is_best, samples, ev, se, diff (vs the chosen play), diff_se.
    """
    sql = """
        SELECT alternative, placement, top, middle, bottom, discards, equivalents, is_chosen,
               is_best, samples, ev, se, diff, diff_se
        FROM decision_alternatives WHERE hand_key = ? AND player = ? AND street = ?
        ORDER BY diff DESC, alternative
    """
    return _grading_frame(db, Scope(None, ()), sql, [hand_key, player, street])


def fantasyland_comparisons(db: Database, filters: Filters, limit: int = 200) -> pl.DataFrame:
    """Fantasyland hands compared with the exact setter, most points given up first.

    Columns: hand_key, hand_id, started_at, player, variant, cards_dealt, dealt, played rows
    and discards, played_foul, played_royalties, played_stays, played_value, solver rows and
    discards, solver_royalties, solver_stays, solver_value, points_given_up, stay_value.
    """
    scope = hand_scope(filters, include_players=False)
    f_players, f_params = player_conditions(filters, "f")
    sql = f"""
        SELECT f.hand_key, h.hand_id, h.started_at, f.player, f.variant, f.cards_dealt, f.dealt,
               f.played_top, f.played_middle, f.played_bottom, f.played_discards, f.played_foul,
               f.played_royalties, f.played_stays, f.played_value,
               f.solver_top, f.solver_middle, f.solver_bottom, f.solver_discards,
               f.solver_royalties, f.solver_stays, f.solver_value, f.points_given_up, f.stay_value
        FROM fantasyland_grades f JOIN hands h ON h.hand_key = f.hand_key
        WHERE {scope.keeps('f')}{f_players}
        ORDER BY f.points_given_up DESC, h.started_at DESC NULLS LAST, f.hand_key, f.player
        LIMIT ?
    """
    return _grading_frame(db, scope, sql, [*f_params, limit])
