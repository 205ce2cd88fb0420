"""Decision grading (tables written by ``ofc analyze``, :mod:`pipeline.analysis`): summaries per
player *and variant*, splits by street and situation, the costliest decisions, Fantasyland
against the solver, and the trainer (quizzes from graded mistakes, answers over time).

Every summary is split by variant: a Classic street and a Pineapple street are different
decisions, and pooling them hides both. Only grades of the current grader count: written by
this grader version (:data:`pipeline.store.GRADER_VERSION`) with the default rollout policy
(:data:`pipeline.store.GRADER_POLICY`). Older grades are *outdated*: left out of every figure,
counted by :func:`outdated_grades`, regraded by ``ofc analyze`` (``--outdated``).

A mistake the second continuation does not confirm is *uncertain* (``uncertain``): never a
mistake, never a quiz; the summaries count it apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import polars as pl

from pipeline import store
from pipeline.read.scope import (
    Filters,
    Scope,
    hand_scope,
    player_conditions,
    standard_error_from_sums,
    standard_error_sql,
)
from pipeline.read.source import Database, reading

GRADING_TABLES = ("decision_grades", "decision_alternatives", "fantasyland_grades")
TRAINER_TABLE = "trainer_answers"
CURRENT = "g.__current__"
"""Rows written by the current grader (:func:`current_condition`; put in place by
:func:`_grading_frame`)."""


def current_condition(columns: set[str], alias: str = "g") -> str:
    """The SQL condition that keeps the current grader's rows of ``decision_grades``
    (:func:`pipeline.store.current_grades`)."""
    return store.current_grades(columns, alias)


def _present(connection: Any) -> set[str]:
    return {row[0] for row in connection.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
    ).fetchall()}


def grade_columns(connection: Any) -> set[str]:
    """The columns of ``decision_grades`` (none when nothing has been graded yet)."""
    return {row[0] for row in connection.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' "
        "AND table_name = 'decision_grades'").fetchall()}


def grades_current(connection: Any) -> bool:
    """Whether ``decision_grades`` has the columns of graded rows (its ``exact`` column:
    grades written before the unbiased estimator have none and count nowhere)."""
    return "exact" in grade_columns(connection)


_UNMEASURED = {"alternative": "CAST(NULL AS SMALLINT)", "gap": "CAST(NULL AS DOUBLE)",
               "gap_se": "CAST(NULL AS DOUBLE)"}
"""The policy-gap columns of ``decision_grades`` in a database graded before them."""

_UNLOOKED = {"uncertain": "false", "second_policy": "CAST(NULL AS VARCHAR)",
             "second_loss": "CAST(NULL AS DOUBLE)", "second_loss_se": "CAST(NULL AS DOUBLE)"}
"""The second-look columns in a database graded before them."""


def _grading_frame(db: Database, scope: Scope, body: str, params: Sequence[Any] = (),
                   tables: Sequence[str] = GRADING_TABLES) -> pl.DataFrame:
    """Like :func:`run_scoped`; an empty frame (no columns) while nothing has been graded yet."""
    with reading(db) as connection:
        present = _present(connection)
        if not set(tables) <= present:
            return pl.DataFrame()
        columns = grade_columns(connection)
        if "exact" not in columns:  # a database graded before the unbiased estimator
            return pl.DataFrame()
        if "policy_gap" not in columns:  # graded (and not opened for writing) since: unmeasured
            body = re.sub(r"\bg\.policy_(alternative|gap_se|gap)\b",
                          lambda match: _UNMEASURED[match.group(1)], body)
        if "uncertain" not in columns:
            body = re.sub(r"\bg\.(uncertain|second_policy|second_loss_se|second_loss)\b",
                          lambda match: _UNLOOKED[match.group(1)], body)
        body = body.replace(CURRENT, current_condition(columns))
        return connection.sql(scope.sql(body), params=[*scope.params, *params]).pl()


def grading_summary(db: Database, filters: Filters) -> pl.DataFrame:
    """Decision grades per player and variant (the heroes, or everyone graded).

    Columns: player, variant, decisions, hands (with graded decisions), mistakes, uncertain
    (mistakes by the rollout policy that the second continuation does not confirm: not
    mistakes), exact (decisions graded by enumeration), correct_share (decisions not graded a mistake),
    ev_loss_per_decision, ev_loss_se, ev_loss_per_hand, ev_loss_per_hand_se (the spread of the
    hands' summed losses), total_loss, rollouts (mean samples behind the chosen play of the
    sampled decisions), first_hand, last_hand (started_at range of the graded hands), fl_hands
    (Fantasyland hands compared with the solver), fl_given_up, fl_given_up_per_hand,
    fl_optimal_share, policy_decisions (decisions whose policy gap was measured),
    policy_gap_per_decision, policy_gap_se (the rollout policy's own play against the play made:
    what the grader's bot would have kept; null when none was measured). Largest groups first.
    """
    scope = hand_scope(filters, include_players=False)
    g_players, g_params = player_conditions(filters, "g")
    f_players, f_params = player_conditions(filters, "f")
    sql = f"""
        WITH per_hand AS (
            SELECT g.player, g.variant, g.hand_key, sum(g.ev_loss) AS loss, count(*) AS decisions,
                   count(*) FILTER (WHERE g.mistake) AS mistakes,
                   count(*) FILTER (WHERE g.uncertain) AS uncertain,
                   count(*) FILTER (WHERE g.exact) AS exact,
                   sum(g.ev_loss * g.ev_loss) AS loss_squares,
                   sum(g.rollouts) FILTER (WHERE NOT g.exact) AS rollouts,
                   count(*) FILTER (WHERE NOT g.exact) AS sampled,
                   count(g.policy_gap) AS gap_decisions, sum(g.policy_gap) AS gap,
                   sum(g.policy_gap * g.policy_gap) AS gap_squares
            FROM decision_grades g WHERE {scope.keeps('g')}{g_players} AND {CURRENT}
            GROUP BY g.player, g.variant, g.hand_key
        ), decisions AS (
            SELECT p.player, p.variant, sum(p.decisions)::BIGINT AS decisions, count(*) AS hands,
                   sum(p.mistakes)::BIGINT AS mistakes, sum(p.uncertain)::BIGINT AS uncertain,
                   sum(p.exact)::BIGINT AS exact,
                   sum(p.loss) AS total_loss, sum(p.loss_squares) AS loss_squares,
                   {standard_error_sql('p.loss')} AS ev_loss_per_hand_se,
                   sum(p.rollouts) AS rollouts, sum(p.sampled) AS sampled,
                   sum(p.gap_decisions)::BIGINT AS gap_decisions, sum(p.gap) AS gap,
                   sum(p.gap_squares) AS gap_squares,
                   min(h.started_at) AS first_hand, max(h.started_at) AS last_hand
            FROM per_hand p JOIN hands h ON h.hand_key = p.hand_key
            GROUP BY p.player, p.variant
        ), fantasyland AS (
            SELECT f.player, f.variant, count(*) AS fl_hands,
                   sum(f.points_given_up) AS fl_given_up,
                   count(*) FILTER (WHERE f.points_given_up < 1e-9) AS fl_optimal
            FROM fantasyland_grades f WHERE {scope.keeps('f')}{f_players}
            GROUP BY f.player, f.variant
        )
        SELECT coalesce(d.player, f.player) AS player, coalesce(d.variant, f.variant) AS variant,
               coalesce(d.decisions, 0) AS decisions, coalesce(d.hands, 0) AS hands,
               coalesce(d.mistakes, 0) AS mistakes, coalesce(d.uncertain, 0) AS uncertain,
               coalesce(d.exact, 0) AS exact,
               1 - coalesce(d.mistakes, 0) / nullif(d.decisions, 0) AS correct_share,
               d.total_loss / nullif(d.decisions, 0) AS ev_loss_per_decision,
               coalesce(sqrt(greatest(0, (d.loss_squares - d.total_loss * d.total_loss / d.decisions)
                                      / nullif(d.decisions - 1, 0)) / d.decisions), 0) AS ev_loss_se,
               d.total_loss / nullif(d.hands, 0) AS ev_loss_per_hand,
               coalesce(d.ev_loss_per_hand_se, 0) AS ev_loss_per_hand_se,
               coalesce(d.total_loss, 0) AS total_loss,
               d.rollouts / nullif(d.sampled, 0) AS rollouts,
               d.first_hand, d.last_hand,
               coalesce(f.fl_hands, 0) AS fl_hands, coalesce(f.fl_given_up, 0) AS fl_given_up,
               f.fl_given_up / nullif(f.fl_hands, 0) AS fl_given_up_per_hand,
               f.fl_optimal / nullif(f.fl_hands, 0) AS fl_optimal_share,
               coalesce(d.gap_decisions, 0) AS policy_decisions,
               d.gap / nullif(d.gap_decisions, 0) AS policy_gap_per_decision,
               {standard_error_from_sums('d.gap', 'd.gap_squares', 'd.gap_decisions')}
                   AS policy_gap_se
        FROM decisions d FULL OUTER JOIN fantasyland f ON d.player = f.player AND d.variant = f.variant
        ORDER BY decisions DESC, player, variant
    """
    return _grading_frame(db, scope, sql, [*g_params, *f_params])


def _grading_split(db: Database, filters: Filters, column: str) -> pl.DataFrame:
    scope = hand_scope(filters, include_players=False)
    g_players, g_params = player_conditions(filters, "g")
    sql = f"""
        SELECT g.player, g.variant, g.{column}, count(*) AS decisions,
               count(*) FILTER (WHERE g.mistake) AS mistakes,
               count(*) FILTER (WHERE g.uncertain) AS uncertain,
               count(*) FILTER (WHERE g.uncertain) / count(*) AS uncertain_share,
               1 - count(*) FILTER (WHERE g.mistake) / count(*) AS correct_share,
               avg(g.ev_loss) AS ev_loss_per_decision, {standard_error_sql('g.ev_loss')} AS ev_loss_se,
               sum(g.ev_loss) AS total_loss, count(*) FILTER (WHERE g.exact) AS exact,
               count(g.policy_gap) AS policy_decisions,
               avg(g.policy_gap) AS policy_gap_per_decision,
               {standard_error_from_sums('sum(g.policy_gap)', 'sum(g.policy_gap * g.policy_gap)',
                                         'count(g.policy_gap)')} AS policy_gap_se
        FROM decision_grades g WHERE {scope.keeps('g')}{g_players} AND {CURRENT}
        GROUP BY g.player, g.variant, g.{column} ORDER BY g.player, g.variant, g.{column}
    """
    return _grading_frame(db, scope, sql, g_params)


def grading_by_street(db: Database, filters: Filters) -> pl.DataFrame:
    """Decision grades per player, variant and street (1-based): decisions, mistakes,
    uncertain, uncertain_share, correct_share, ev_loss_per_decision, ev_loss_se, total_loss, exact, policy_decisions,
    policy_gap_per_decision, policy_gap_se (the gap to the grader's bot: null when not
    measured)."""
    return _grading_split(db, filters, "street")


def grading_by_situation(db: Database, filters: Filters) -> pl.DataFrame:
    """Decision grades per player, variant and situation (``fantasyland_made``,
    ``fantasyland_draw``: going for Fantasyland, ``standard``): same columns as
    :func:`grading_by_street`."""
    return _grading_split(db, filters, "situation")


def mistakes_over_time(db: Database, filters: Filters) -> pl.DataFrame:
    """Graded mistakes per player, variant, mistake type and month of play, so that a mistake a
    player keeps making shows as a line over time.

    Columns: player, variant, mistake_type, month (first day, date), decisions (graded that
    month, every type), mistakes (of this type), share (mistakes / decisions), loss (summed).
    """
    scope = hand_scope(filters, include_players=False)
    g_players, g_params = player_conditions(filters, "g")
    sql = f"""
        WITH graded AS (
            SELECT g.player, g.variant, g.mistake, g.mistake_type, g.ev_loss,
                   date_trunc('month', h.started_at)::DATE AS month
            FROM decision_grades g JOIN hands h ON h.hand_key = g.hand_key
            WHERE {scope.keeps('g')}{g_players} AND {CURRENT} AND h.started_at IS NOT NULL
        ), monthly AS (
            SELECT player, variant, month, count(*) AS decisions FROM graded
            GROUP BY player, variant, month
        )
        SELECT m.player, m.variant, g.mistake_type, m.month, m.decisions,
               count(*) AS mistakes, count(*) / m.decisions AS share, sum(g.ev_loss) AS loss
        FROM graded g JOIN monthly m USING (player, variant, month)
        WHERE g.mistake
        GROUP BY m.player, m.variant, g.mistake_type, m.month, m.decisions
        ORDER BY m.player, m.variant, g.mistake_type, m.month
    """
    return _grading_frame(db, scope, sql, g_params)


def worst_decisions(db: Database, filters: Filters, limit: int = 20,
                    mistakes_only: bool = False) -> pl.DataFrame:
    """The graded decisions with the largest EV loss, largest first.

    Columns: hand_key, hand_id, started_at, variant, player, street, situation, mistake_type,
    chosen, best, chosen_placement, best_placement, chosen_ev, best_ev, ev_loss, loss_se,
    mistake, exact, rollouts, evaluation_rollouts, alternatives, policy_alternative,
    policy_gap, policy_gap_se (the grader's bot's own play and its gap to the play made; null
    when not measured), uncertain, second_policy, second_loss, second_loss_se (the second look
    at a mistake: the loss with every seat finishing under another bot).
    """
    scope = hand_scope(filters, include_players=False)
    g_players, g_params = player_conditions(filters, "g")
    only = " AND g.mistake" if mistakes_only else ""
    sql = f"""
        SELECT g.hand_key, h.hand_id, h.started_at, g.variant, g.player, g.street, g.situation,
               g.mistake_type, g.chosen, g.best, g.chosen_placement, g.best_placement,
               g.chosen_ev, g.best_ev, g.ev_loss, g.loss_se, g.mistake, g.exact, g.rollouts,
               g.evaluation_rollouts, g.alternatives,
               g.policy_alternative AS policy_alternative, g.policy_gap AS policy_gap,
               g.policy_gap_se AS policy_gap_se, coalesce(g.uncertain, false) AS uncertain,
               g.second_policy AS second_policy, g.second_loss AS second_loss,
               g.second_loss_se AS second_loss_se
        FROM decision_grades g JOIN hands h ON h.hand_key = g.hand_key
        WHERE {scope.keeps('g')}{g_players}{only} AND {CURRENT}
        ORDER BY g.ev_loss DESC, g.hand_key, g.player, g.street
        LIMIT ?
    """
    return _grading_frame(db, scope, sql, [*g_params, limit])


def hand_grades(db: Database, hand_key: int) -> pl.DataFrame:
    """Every graded decision of one hand (the current grader's), by player and street: what a
    player reviewing the hand wants beside its replay.

    Columns: player, street, situation, chosen_placement, best_placement, ev_loss, loss_se,
    mistake, mistake_type, exact, rollouts, policy_placement (what the grader's bot would have
    played; null when not measured), policy_gap, policy_gap_se, uncertain, second_loss,
    second_loss_se (the second look at a mistake), outdated (made by an older grader or another
    rollout policy: regrade it). An empty frame (no columns) while nothing has been graded.
    """
    sql = f"""
        SELECT g.player, g.street, g.situation, g.chosen_placement, g.best_placement, g.ev_loss,
               g.loss_se, g.mistake, g.mistake_type, g.exact, g.rollouts,
               a.placement AS policy_placement, g.policy_gap AS policy_gap,
               g.policy_gap_se AS policy_gap_se, coalesce(g.uncertain, false) AS uncertain,
               g.second_loss AS second_loss, g.second_loss_se AS second_loss_se,
               NOT {CURRENT} AS outdated
        FROM decision_grades g
        LEFT JOIN decision_alternatives a ON a.hand_key = g.hand_key AND a.player = g.player
            AND a.street = g.street AND a.alternative = g.policy_alternative
        WHERE g.hand_key = ? AND g.exact IS NOT NULL
        ORDER BY g.player, g.street
    """
    return _grading_frame(db, Scope(None, ()), sql, [hand_key])


def decision_alternatives(db: Database, hand_key: int, player: str, street: int) -> pl.DataFrame:
    """Every alternative of one graded decision, best estimate first.

    Columns: alternative, placement, top, middle, bottom, discards (cards this street sends to
    each row), equivalents, is_chosen, is_best, exact, samples, ev, se (selection samples; every
    deal when exact), diff, diff_se (against the chosen play on the same samples), eval_samples,
    eval_ev, eval_se (the independent evaluation samples of the selected and the chosen play),
    value, value_se (the unbiased estimate shown: the evaluation one when there is one).
    """
    sql = """
        SELECT alternative, placement, top, middle, bottom, discards, equivalents, is_chosen,
               is_best, coalesce(exact, false) AS exact, samples, ev, se, diff, diff_se,
               coalesce(eval_samples, 0) AS eval_samples, eval_ev, eval_se,
               CASE WHEN coalesce(eval_samples, 0) >= 2 THEN eval_ev ELSE ev END AS value,
               CASE WHEN coalesce(eval_samples, 0) >= 2 THEN eval_se ELSE se END AS value_se
        FROM decision_alternatives WHERE hand_key = ? AND player = ? AND street = ?
        ORDER BY is_best DESC, diff DESC, alternative
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


def outdated_grades(db: Database) -> int:
    """Stored decision grades that are outdated: made by an older grader (before the unbiased
    estimator, before grader versions, or of an older version) or with another rollout policy
    than the grader's default. They count in no figure; ``ofc analyze --outdated`` (or the
    Decision grading page's **Regrade**) replaces them."""
    return outdated_summary(db)[0]


def outdated_summary(db: Database) -> tuple[int, int]:
    """(outdated decision grades, hands holding them): see :func:`outdated_grades`."""
    with reading(db) as connection:
        columns = grade_columns(connection)
        if not columns:
            return (0, 0)
        condition = current_condition(columns, "g")
        decisions, hands = connection.execute(
            f"SELECT count(*), count(DISTINCT g.hand_key) FROM decision_grades g "
            f"WHERE NOT coalesce({condition}, false)").fetchone()
        return (int(decisions), int(hands))


# --- the trainer ----------------------------------------------------------------------------


def trainer_quizzes(db: Database, filters: Filters, limit: int = 20) -> pl.DataFrame:
    """The heroes' costliest graded mistakes, to replay as quizzes (largest loss first).

    Columns: hand_key, hand_id, started_at, variant, player, street, situation, mistake_type,
    chosen_placement, best_placement, ev_loss, loss_se, exact, alternatives, chosen,
    policy_alternative, policy_gap, policy_gap_se (the grader's bot's own play, null when not
    measured), attempts (answers given so far), solved (answers that were right),
    last_answered.
    """
    scope = hand_scope(filters, include_players=False)
    g_players, g_params = player_conditions(filters, "g")
    with reading(db) as connection:
        answers = TRAINER_TABLE in _present(connection)
    tried = (f"LEFT JOIN (SELECT hand_key, player, street, count(*) AS attempts, "
             f"count(*) FILTER (WHERE correct) AS solved, max(answered_at) AS last_answered "
             f"FROM {TRAINER_TABLE} GROUP BY ALL) t ON t.hand_key = g.hand_key "
             f"AND t.player = g.player AND t.street = g.street"
             if answers else "")
    counts = ("coalesce(t.attempts, 0) AS attempts, coalesce(t.solved, 0) AS solved, "
              "t.last_answered" if answers
              else "0 AS attempts, 0 AS solved, NULL::TIMESTAMP AS last_answered")
    sql = f"""
        SELECT g.hand_key, h.hand_id, h.started_at, g.variant, g.player, g.street, g.situation,
               g.mistake_type, g.chosen_placement, g.best_placement, g.ev_loss, g.loss_se,
               g.exact, g.alternatives, g.chosen,
               g.policy_alternative AS policy_alternative, g.policy_gap AS policy_gap,
               g.policy_gap_se AS policy_gap_se, {counts}
        FROM decision_grades g JOIN hands h ON h.hand_key = g.hand_key {tried}
        WHERE {scope.keeps('g')}{g_players} AND {CURRENT} AND g.mistake
        ORDER BY g.ev_loss DESC, g.hand_key, g.player, g.street
        LIMIT ?
    """
    return _grading_frame(db, scope, sql, [*g_params, limit])


def quiz_position(db: Database, hand_key: int, player: str, street: int) -> pl.DataFrame:
    """What the player saw at one decision, card by card.

    Columns: player, position, fantasyland, street, card_order, card, row_name (``discard`` for
    the player's own earlier discards), kind: ``own`` (the player's board before the street),
    ``dealt`` (the street's cards, in the order dealt: placed ones, then the discards),
    ``opponent`` (an opponent's card placed on an earlier street, or on this street by an
    opponent who acted first). An opponent in Fantasyland shows nothing (set in private).
    """
    sql = """
        WITH me AS (SELECT position FROM seats WHERE hand_key = ? AND player = ?),
        cards AS (
            SELECT player, street, card_order, card, row_name FROM placements WHERE hand_key = ?
            UNION ALL
            SELECT player, street, (100 + row_number() OVER (PARTITION BY player, street))::TINYINT,
                   card, 'discard' FROM discards WHERE hand_key = ?
        )
        SELECT c.player, s.position, s.fantasyland, c.street, c.card_order, c.card, c.row_name,
               CASE WHEN c.player = ? AND c.street = ? THEN 'dealt'
                    WHEN c.player = ? THEN 'own' ELSE 'opponent' END AS kind
        FROM cards c JOIN seats s ON s.hand_key = ? AND s.player = c.player
        WHERE (c.player = ? AND c.street <= ?)
           OR (c.player <> ? AND NOT s.fantasyland AND c.row_name <> 'discard'
               AND (c.street < ? OR (c.street = ? AND s.position < (SELECT position FROM me))))
        ORDER BY s.position, c.street, c.card_order
    """
    params = [hand_key, player, hand_key, hand_key, player, street, player, hand_key, player,
              street, player, street, street]
    with reading(db) as connection:
        return connection.sql(sql, params=params).pl()


def trainer_answers(db: Database, filters: Filters) -> pl.DataFrame:
    """Every quiz answer on the heroes' decisions, oldest first.

    Columns: hand_key, player, street, variant, mistake_type, answered_at, answer_placement,
    answer_loss, correct.
    """
    scope = hand_scope(filters, include_players=False)
    t_players, t_params = player_conditions(filters, "t")
    sql = f"""
        SELECT t.hand_key, t.player, t.street, t.variant, t.mistake_type, t.answered_at,
               t.answer_placement, t.answer_loss, t.correct
        FROM {TRAINER_TABLE} t WHERE {scope.keeps('t')}{t_players}
        ORDER BY t.answered_at, t.hand_key, t.street
    """
    return _grading_frame(db, scope, sql, t_params, tables=(*GRADING_TABLES, TRAINER_TABLE))


def trainer_progress(db: Database, filters: Filters) -> pl.DataFrame:
    """Quiz answers per player, variant and mistake type: how a kind of mistake fares over time.

    Columns: player, variant, mistake_type, answers, correct, correct_share, first_answered,
    last_answered, recent_correct_share (over the type's last five answers), graded_mistakes
    (of that type among the graded decisions).
    """
    scope = hand_scope(filters, include_players=False)
    t_players, t_params = player_conditions(filters, "t")
    g_players, g_params = player_conditions(filters, "g")
    sql = f"""
        WITH answers AS (
            SELECT t.*, row_number() OVER (PARTITION BY t.player, t.variant, t.mistake_type
                                           ORDER BY t.answered_at DESC) AS recency
            FROM {TRAINER_TABLE} t WHERE {scope.keeps('t')}{t_players}
        ), graded AS (
            SELECT g.player, g.variant, g.mistake_type, count(*) AS graded_mistakes
            FROM decision_grades g WHERE {scope.keeps('g')}{g_players} AND {CURRENT} AND g.mistake
            GROUP BY ALL
        )
        SELECT a.player, a.variant, a.mistake_type, count(*) AS answers,
               count(*) FILTER (WHERE a.correct) AS correct,
               count(*) FILTER (WHERE a.correct) / count(*) AS correct_share,
               min(a.answered_at) AS first_answered, max(a.answered_at) AS last_answered,
               avg(a.correct::INTEGER) FILTER (WHERE a.recency <= 5) AS recent_correct_share,
               coalesce(any_value(g.graded_mistakes), 0) AS graded_mistakes
        FROM answers a LEFT JOIN graded g USING (player, variant, mistake_type)
        GROUP BY a.player, a.variant, a.mistake_type
        ORDER BY a.player, a.variant, answers DESC, a.mistake_type
    """
    return _grading_frame(db, scope, sql, [*t_params, *g_params],
                          tables=(*GRADING_TABLES, TRAINER_TABLE))


def gradable_players(db: Database, filters: Filters) -> pl.DataFrame:
    """Players with hands whose streets are recorded (what ``ofc analyze`` can grade), most hands
    first. Columns: player, hands, variants (comma-separated)."""
    scope = hand_scope(filters, include_players=False)
    s_players, s_params = player_conditions(filters, "s")
    sql = f"""
        SELECT s.player, count(*) AS hands, string_agg(DISTINCT h.variant, ', ') AS variants
        FROM seats s JOIN hands h ON h.hand_key = s.hand_key
        WHERE h.has_streets AND NOT s.fantasyland AND {scope.keeps('s')}{s_players}
        GROUP BY s.player ORDER BY hands DESC, s.player
    """
    with reading(db) as connection:
        if "hands" not in _present(connection):
            return pl.DataFrame()
        return connection.sql(scope.sql(sql), params=[*scope.params, *s_params]).pl()
