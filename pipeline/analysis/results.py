"""Storing grades: the ``decision_grades``, ``decision_alternatives`` and ``fantasyland_grades``
tables (DDL in :mod:`pipeline.store`, documented in schemas/database.md).

Rows are keyed by (hand_key, player, street) — (hand_key, player) for Fantasyland — without a
PRIMARY KEY index, like the other player tables. A write replaces the rows of the decisions it
carries in one transaction. Alternatives keep running sums, so a later run with more rollouts
(under the same fingerprint: policy, Fantasyland value, seed, rules) continues from them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import duckdb
import pyarrow as pa

from pipeline import store
from pipeline.analysis.grade import DecisionGrade, Tally
from pipeline.rules.cards import card_text

ANALYSIS_TABLES = store.GRADE_TABLES


def ensure_tables(connection: duckdb.DuckDBPyConnection) -> None:
    """Create the grading tables when missing (also in databases made before they existed)."""
    for statement in store.SCHEMA_STATEMENTS:
        head = statement.split("(", 1)[0]
        if any(head.rstrip().endswith(f" {name}") for name in ANALYSIS_TABLES):
            connection.execute(statement)


def has_tables(connection: duckdb.DuckDBPyConnection) -> bool:
    """True when the grading tables exist."""
    names = {row[0] for row in connection.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
    ).fetchall()}
    return all(name in names for name in ANALYSIS_TABLES)


DecisionKey = tuple[int, str, int]


def load_prior(
    connection: duckdb.DuckDBPyConnection, keys: Iterable[DecisionKey]
) -> dict[DecisionKey, tuple[str, dict[str, tuple[Tally, Tally]]]]:
    """Stored sums of these decisions: key -> (fingerprint, {placement: (selection, evaluation)}).

    Exact grades are not returned (they are recomputed: enumeration is cheap and deterministic)."""
    keys = list(keys)
    if not keys or not has_tables(connection):
        return {}
    frame = pa.table({
        "hand_key": pa.array([key[0] for key in keys], pa.int64()),
        "player": pa.array([key[1] for key in keys], pa.string()),
        "street": pa.array([key[2] for key in keys], pa.int8()),
    })
    connection.register("_wanted_grades", frame)
    try:
        fingerprints = {
            (key, player, street): fingerprint
            for key, player, street, fingerprint in connection.execute(
                "SELECT g.hand_key, g.player, g.street, g.fingerprint FROM decision_grades g "
                "SEMI JOIN _wanted_grades w USING (hand_key, player, street) "
                "WHERE NOT coalesce(g.exact, false)"
            ).fetchall()
        }
        prior: dict[DecisionKey, tuple[str, dict[str, tuple[Tally, Tally]]]] = {
            key: (fingerprint, {}) for key, fingerprint in fingerprints.items()
        }
        for (key, player, street, placement, samples, total, total_sq, diff_total,
             diff_total_sq, eval_samples, eval_total, eval_total_sq, eval_diff_total,
             eval_diff_total_sq) in connection.execute(
            "SELECT a.hand_key, a.player, a.street, a.placement, a.samples, a.total, a.total_sq, "
            "a.diff_total, a.diff_total_sq, coalesce(a.eval_samples, 0), "
            "coalesce(a.eval_total, 0), coalesce(a.eval_total_sq, 0), "
            "coalesce(a.eval_diff_total, 0), coalesce(a.eval_diff_total_sq, 0) "
            "FROM decision_alternatives a "
            "SEMI JOIN _wanted_grades w USING (hand_key, player, street)"
        ).fetchall():
            entry = prior.get((key, player, street))
            if entry is not None:
                entry[1][placement] = (
                    Tally(samples, total, total_sq, diff_total, diff_total_sq),
                    Tally(eval_samples, eval_total, eval_total_sq, eval_diff_total,
                          eval_diff_total_sq),
                )
    finally:
        connection.unregister("_wanted_grades")
    return prior


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _cards(cards: Sequence[int]) -> str:
    return " ".join(card_text(card) for card in cards)


def grade_tables(grades: Sequence[DecisionGrade], when: datetime | None = None) -> tuple[pa.Table, pa.Table]:
    """The rows of both decision tables for these grades, as Arrow tables."""
    when = when or datetime.now(UTC).replace(tzinfo=None)
    decision_rows: dict[str, list[Any]] = {name: [] for name in (
        "hand_key", "player", "street", "variant", "ruleset", "situation", "legal_placements",
        "alternatives", "chosen", "best", "chosen_placement", "best_placement", "chosen_ev",
        "chosen_se", "best_ev", "best_se", "ev_loss", "loss_se", "z", "mistake", "rollouts",
        "policy", "fantasyland_value", "seed", "fingerprint", "graded_at", "exact",
        "evaluation_rollouts", "mistake_type", "policy_alternative", "policy_gap",
        "policy_gap_se", "uncertain", "second_policy", "second_loss", "second_loss_se",
        "grader_version")}
    alternative_rows: dict[str, list[Any]] = {name: [] for name in (
        "hand_key", "player", "street", "alternative", "placement", "top", "middle", "bottom",
        "discards", "equivalents", "is_chosen", "is_best", "samples", "total", "total_sq",
        "diff_total", "diff_total_sq", "ev", "se", "diff", "diff_se", "eval_samples",
        "eval_total", "eval_total_sq", "eval_diff_total", "eval_diff_total_sq", "eval_ev",
        "eval_se", "exact")}
    for grade in grades:
        chosen = grade.value(grade.chosen)
        best = grade.value(grade.best)
        evaluations = grade.evaluations or [Tally() for _ in grade.alternatives]
        settings = grade.settings
        for name, value in (
            ("hand_key", grade.hand_key), ("player", grade.player), ("street", grade.street),
            ("variant", grade.variant), ("ruleset", grade.ruleset), ("situation", grade.situation),
            ("legal_placements", grade.legal), ("alternatives", len(grade.alternatives)),
            ("chosen", grade.chosen), ("best", grade.best),
            ("chosen_placement", grade.alternatives[grade.chosen].describe()),
            ("best_placement", grade.alternatives[grade.best].describe()),
            ("chosen_ev", chosen.ev), ("chosen_se", _finite(chosen.se)),
            ("best_ev", best.ev), ("best_se", _finite(best.se)),
            ("ev_loss", grade.ev_loss), ("loss_se", grade.loss_se if math.isfinite(grade.loss_se) else 0.0),
            ("z", grade.z), ("mistake", grade.mistake),
            ("rollouts", grade.tallies[grade.chosen].samples),
            ("policy", settings.policy), ("fantasyland_value", settings.fantasyland_value),
            ("seed", settings.seed), ("fingerprint", grade.fingerprint), ("graded_at", when),
            ("exact", grade.exact), ("evaluation_rollouts", grade.evaluation_samples),
            ("mistake_type", grade.mistake_type), ("policy_alternative", grade.policy_choice),
            ("policy_gap", None if grade.policy_gap is None else _finite(grade.policy_gap)),
            ("policy_gap_se", None if grade.policy_gap_se is None
             else _finite(grade.policy_gap_se)),
            ("uncertain", grade.uncertain),
            ("second_policy", settings.second_policy if grade.second_loss is not None else None),
            ("second_loss", grade.second_loss),
            ("second_loss_se", None if grade.second_loss_se is None
             else _finite(grade.second_loss_se)),
            ("grader_version", store.GRADER_VERSION),
        ):
            decision_rows[name].append(value)
        for index, (alternative, tally, evaluated) in enumerate(
                zip(grade.alternatives, grade.tallies, evaluations, strict=True)):
            for name, value in (
                ("hand_key", grade.hand_key), ("player", grade.player), ("street", grade.street),
                ("alternative", index), ("placement", alternative.describe()),
                ("top", _cards(alternative.placed[0])), ("middle", _cards(alternative.placed[1])),
                ("bottom", _cards(alternative.placed[2])), ("discards", _cards(alternative.discards)),
                ("equivalents", alternative.equivalents), ("is_chosen", index == grade.chosen),
                ("is_best", index == grade.best), ("samples", tally.samples),
                ("total", tally.total), ("total_sq", tally.total_sq),
                ("diff_total", tally.diff_total), ("diff_total_sq", tally.diff_total_sq),
                ("ev", tally.ev), ("se", _finite(tally.se)), ("diff", tally.diff),
                ("diff_se", _finite(tally.diff_se)), ("eval_samples", evaluated.samples),
                ("eval_total", evaluated.total), ("eval_total_sq", evaluated.total_sq),
                ("eval_diff_total", evaluated.diff_total),
                ("eval_diff_total_sq", evaluated.diff_total_sq),
                ("eval_ev", evaluated.ev if evaluated.samples else None),
                ("eval_se", _finite(evaluated.se) if evaluated.samples else None),
                ("exact", tally.exact),
            ):
                alternative_rows[name].append(value)
    return _arrow(decision_rows, {"street": pa.int8(), "legal_placements": pa.int16(),
                                  "alternatives": pa.int16(), "chosen": pa.int16(),
                                  "best": pa.int16(), "rollouts": pa.int32(),
                                  "graded_at": pa.timestamp("us"),
                                  "evaluation_rollouts": pa.int32(),
                                  "mistake_type": pa.string(),
                                  "policy_alternative": pa.int16(),
                                  "policy_gap": pa.float64(),
                                  "policy_gap_se": pa.float64(),
                                  "second_policy": pa.string(),
                                  "second_loss": pa.float64(),
                                  "second_loss_se": pa.float64(),
                                  "grader_version": pa.int32()}), \
        _arrow(alternative_rows, {"street": pa.int8(), "alternative": pa.int16(),
                                  "equivalents": pa.int16(), "samples": pa.int32(),
                                  "eval_samples": pa.int32(), "eval_ev": pa.float64(),
                                  "eval_se": pa.float64()})


def _arrow(columns: dict[str, list[Any]], types: dict[str, pa.DataType]) -> pa.Table:
    return pa.table({
        name: pa.array(values, types[name]) if name in types else pa.array(values)
        for name, values in columns.items()
    })


def _replace(connection: duckdb.DuckDBPyConnection, table: str, frame: pa.Table,
             keys: Sequence[str]) -> None:
    name = f"_new_{table}"
    connection.register(name, frame)
    try:
        match = " AND ".join(f"{table}.{key} = n.{key}" for key in keys)
        connection.execute(
            f"DELETE FROM {table} WHERE EXISTS (SELECT 1 FROM (SELECT DISTINCT "
            f"{', '.join(keys)} FROM {name}) n WHERE {match})"
        )
        connection.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {name}")
    finally:
        connection.unregister(name)


def write_grades(connection: duckdb.DuckDBPyConnection, grades: Sequence[DecisionGrade]) -> None:
    """Replace the stored rows of these decisions with their new grades (one transaction)."""
    if not grades:
        return
    ensure_tables(connection)
    decisions, alternatives = grade_tables(grades)
    connection.execute("BEGIN TRANSACTION")
    try:
        keys = ("hand_key", "player", "street")
        _replace(connection, "decision_grades", decisions, keys)
        _replace(connection, "decision_alternatives", alternatives, keys)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def write_fantasyland(connection: duckdb.DuckDBPyConnection, rows: Sequence[dict[str, Any]]) -> None:
    """Replace the stored Fantasyland comparisons of these (hand, player) pairs."""
    if not rows:
        return
    ensure_tables(connection)
    columns = {name: [row[name] for row in rows] for name in rows[0]}
    frame = _arrow(columns, {"cards_dealt": pa.int8(), "played_royalties": pa.int16(),
                             "solver_royalties": pa.int16(), "graded_at": pa.timestamp("us")})
    connection.execute("BEGIN TRANSACTION")
    try:
        _replace(connection, "fantasyland_grades", frame, ("hand_key", "player"))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
