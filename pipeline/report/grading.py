"""The coaching report's decision-grading section (from ``ofc analyze``'s tables).

Read with the grading questions of :mod:`pipeline.read` for the player's names in the report's
scope; absent (None) when none of the player's decisions or Fantasyland hands has been graded.
Several names (aliases) are pooled. Every figure is given per variant, and the section says
which hands were graded (how many, their dates, their variants). It ends with the trainer's
printable list: the costliest mistakes as quizzes (the position as the player saw it), with the
answers after the questions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import polars as pl

from pipeline import read
from pipeline.read.scope import Filters
from pipeline.read.source import Database

WORST_SHOWN = 5
QUIZZES_PRINTED = 8
ROWS = ("top", "middle", "bottom")


@dataclass(frozen=True, slots=True)
class GradingLine:
    """Graded decisions of one street or situation (in one variant)."""

    key: str
    decisions: int
    mistakes: int
    correct_share: float
    ev_loss_per_decision: float
    ev_loss_se: float
    gap_per_decision: float | None = None  # behind the grader's bot (None: not measured)
    gap_se: float | None = None
    uncertain: int = 0  # mistakes by the grader's bot that the second look does not confirm


@dataclass(frozen=True, slots=True)
class GradedDecision:
    """One of the costliest decisions."""

    hand_id: str
    started_at: str | None
    variant: str
    street: int
    situation: str
    chosen: str
    best: str
    ev_loss: float
    loss_se: float
    mistake: bool
    exact: bool


@dataclass(frozen=True, slots=True)
class VariantGrading:
    """The player's graded decisions in one variant."""

    variant: str
    decisions: int
    hands: int
    mistakes: int
    exact: int
    correct_share: float | None
    ev_loss_per_decision: float | None
    ev_loss_se: float | None
    ev_loss_per_hand: float | None
    ev_loss_per_hand_se: float | None
    rollouts: float | None
    first_hand: str | None
    last_hand: str | None
    fl_hands: int
    fl_given_up_per_hand: float | None
    by_street: tuple[GradingLine, ...]
    by_situation: tuple[GradingLine, ...]
    policy_decisions: int = 0
    uncertain: int = 0  # not counted in mistakes: see GradingLine
    policy_gap_per_decision: float | None = None  # behind the rollout policy's own play
    policy_gap_se: float | None = None


@dataclass(frozen=True, slots=True)
class Quiz:
    """One printable trainer question: a costly graded mistake, as the player saw it."""

    number: int
    hand_id: str
    started_at: str | None
    variant: str
    street: int
    mistake_type: str
    own: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]  # the board before the street
    discarded: tuple[str, ...]  # the player's own earlier discards
    dealt: tuple[str, ...]
    opponents: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]  # (name, rows) seen
    played: str
    best: str
    ev_loss: float
    loss_se: float
    exact: bool


@dataclass(frozen=True, slots=True)
class DecisionGrading:
    """The player's graded decisions (EV loss against the best play, by rollouts), per variant.

    ``scope`` says which hands the figures cover; ``decisions`` and ``hands`` are the counts
    over every variant (never a pooled loss: losses are given per variant only).
    """

    scope: str
    decisions: int
    hands: int
    variants: tuple[VariantGrading, ...]
    worst: tuple[GradedDecision, ...]
    quizzes: tuple[Quiz, ...]


def gather_grading(db: Database, filters: Filters) -> dict[str, Any]:
    """The grading frames of the heroes in ``filters`` (empty frames before any grading), and
    the positions of the quizzes to print. Nothing graded for them (most databases): the
    summary alone, and no further question."""
    summary = read.grading.grading_summary(db, filters)
    if summary.is_empty():
        return {"summary": summary}
    frames: dict[str, Any] = {
        "summary": summary,
        "by_street": read.grading.grading_by_street(db, filters),
        "by_situation": read.grading.grading_by_situation(db, filters),
        "worst": read.grading.worst_decisions(db, filters, WORST_SHOWN),
        "quizzes": read.grading.trainer_quizzes(db, filters, QUIZZES_PRINTED),
    }
    quizzes = frames["quizzes"]
    frames["positions"] = {
        (row["hand_key"], row["player"], row["street"]): read.grading.quiz_position(
            db, row["hand_key"], row["player"], row["street"])
        for row in quizzes.iter_rows(named=True)
    } if not quizzes.is_empty() else {}
    return frames


def _pooled(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Rows of several names (aliases) added up per ``keys``; SEs combined as independent."""
    measured = pl.col("policy_decisions").fill_null(0)
    return frame.group_by(keys).agg(
        pl.col("decisions").sum(), pl.col("mistakes").sum(), pl.col("total_loss").sum(),
        (pl.col("uncertain").sum() if "uncertain" in frame.columns else pl.lit(0)).alias(
            "uncertain"),
        ((pl.col("ev_loss_se") * pl.col("decisions")) ** 2).sum().alias("_variance"),
        measured.sum().alias("_gap_decisions"),
        (pl.col("policy_gap_per_decision").fill_null(0) * measured).sum().alias("_gap_total"),
        ((pl.col("policy_gap_se").fill_null(0) * measured) ** 2).sum().alias("_gap_variance"),
    ).sort(keys)


def _lines(frame: pl.DataFrame, variant: str, column: str) -> tuple[GradingLine, ...]:
    if frame.is_empty():
        return ()
    mine = frame.filter(pl.col("variant") == variant)
    if mine.is_empty():
        return ()
    return tuple(
        GradingLine(str(row[column]), int(row["decisions"]), int(row["mistakes"]),
                    1 - row["mistakes"] / row["decisions"], row["total_loss"] / row["decisions"],
                    math.sqrt(row["_variance"]) / row["decisions"],
                    row["_gap_total"] / row["_gap_decisions"] if row["_gap_decisions"] else None,
                    (math.sqrt(row["_gap_variance"]) / row["_gap_decisions"]
                     if row["_gap_decisions"] else None), int(row["uncertain"]))
        for row in _pooled(mine, [column]).iter_rows(named=True)
    )


def _when(value: Any) -> str | None:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else None


def _variant_block(rows: pl.DataFrame, variant: str, frames: dict[str, Any]) -> VariantGrading:
    decisions = int(rows["decisions"].sum())
    hands = int(rows["hands"].sum())
    mistakes = int(rows["mistakes"].sum())
    loss = float(rows["total_loss"].sum())
    decision_variance = sum((row["decisions"] * row["ev_loss_se"]) ** 2
                            for row in rows.iter_rows(named=True) if row["decisions"])
    hand_variance = sum((row["hands"] * row["ev_loss_per_hand_se"]) ** 2
                        for row in rows.iter_rows(named=True) if row["hands"])
    sampled = [(row["rollouts"], row["decisions"] - row["exact"])
               for row in rows.iter_rows(named=True) if row["rollouts"] is not None]
    weight = sum(count for _, count in sampled)
    fl_hands = int(rows["fl_hands"].sum())
    fl_given_up = float(rows["fl_given_up"].sum())
    firsts = [value for value in rows["first_hand"].to_list() if value is not None]
    lasts = [value for value in rows["last_hand"].to_list() if value is not None]
    gaps = [(row["policy_decisions"], row["policy_gap_per_decision"], row["policy_gap_se"] or 0.0)
            for row in rows.iter_rows(named=True)
            if row.get("policy_decisions") and row.get("policy_gap_per_decision") is not None]
    gap_decisions = sum(count for count, _, _ in gaps)
    return VariantGrading(
        variant=variant, decisions=decisions, hands=hands, mistakes=mistakes,
        exact=int(rows["exact"].sum()),
        correct_share=1 - mistakes / decisions if decisions else None,
        ev_loss_per_decision=loss / decisions if decisions else None,
        ev_loss_se=math.sqrt(decision_variance) / decisions if decisions else None,
        ev_loss_per_hand=loss / hands if hands else None,
        ev_loss_per_hand_se=math.sqrt(hand_variance) / hands if hands else None,
        rollouts=sum(mean * count for mean, count in sampled) / weight if weight else None,
        first_hand=_when(min(firsts)) if firsts else None,
        last_hand=_when(max(lasts)) if lasts else None,
        fl_hands=fl_hands, fl_given_up_per_hand=fl_given_up / fl_hands if fl_hands else None,
        by_street=_lines(frames.get("by_street", pl.DataFrame()), variant, "street"),
        by_situation=_lines(frames.get("by_situation", pl.DataFrame()), variant, "situation"),
        policy_decisions=gap_decisions,
        uncertain=int(rows["uncertain"].sum()) if "uncertain" in rows.columns else 0,
        policy_gap_per_decision=(sum(count * mean for count, mean, _ in gaps) / gap_decisions
                                 if gap_decisions else None),
        policy_gap_se=(math.sqrt(sum((count * se) ** 2 for count, _, se in gaps)) / gap_decisions
                       if gap_decisions else None),
    )


def _scope(variants: tuple[VariantGrading, ...]) -> str:
    decisions = sum(block.decisions for block in variants)
    hands = sum(block.hands for block in variants)
    firsts = [block.first_hand for block in variants if block.first_hand]
    lasts = [block.last_hand for block in variants if block.last_hand]
    dates = f", played {min(firsts)} to {max(lasts)} UTC" if firsts and lasts else ""
    split = "; ".join(f"{block.variant}: {block.decisions:,} decisions in {block.hands:,} hands"
                      for block in variants)
    return f"{decisions:,} graded decisions in {hands:,} hands{dates} ({split})"


def _quiz(number: int, row: dict[str, Any], position: pl.DataFrame) -> Quiz:
    own: dict[str, list[str]] = {name: [] for name in ROWS}
    dealt: list[str] = []
    thrown: list[str] = []
    seen: dict[str, dict[str, list[str]]] = {}
    for line in position.iter_rows(named=True):
        if line["kind"] == "dealt":
            dealt.append(line["card"])
        elif line["kind"] == "own":
            own.get(line["row_name"], thrown).append(line["card"])
        elif line["kind"] == "opponent":
            seen.setdefault(line["player"], {name: [] for name in ROWS})[line["row_name"]].append(
                line["card"])
    return Quiz(
        number=number, hand_id=row["hand_id"], started_at=_when(row["started_at"]),
        variant=row["variant"], street=int(row["street"]),
        mistake_type=row["mistake_type"] or "", own=tuple(tuple(own[name]) for name in ROWS),
        discarded=tuple(thrown), dealt=tuple(dealt),
        opponents=tuple((name, tuple(tuple(rows[row_name]) for row_name in ROWS))
                        for name, rows in seen.items()),
        played=row["chosen_placement"], best=row["best_placement"],
        ev_loss=float(row["ev_loss"]), loss_se=float(row["loss_se"]), exact=bool(row["exact"]),
    )


def grading_section(frames: dict[str, Any]) -> DecisionGrading | None:
    """Pool the frames of :func:`gather_grading` into the report's section (None: nothing graded)."""
    summary = frames.get("summary")
    if summary is None or summary.is_empty():
        return None
    order = (summary.group_by("variant").agg(pl.col("decisions").sum())
             .sort(["decisions", "variant"], descending=[True, False])["variant"].to_list())
    variants = tuple(_variant_block(summary.filter(pl.col("variant") == variant), variant, frames)
                     for variant in order)
    worst = frames.get("worst", pl.DataFrame())
    quizzes = frames.get("quizzes", pl.DataFrame())
    positions = frames.get("positions", {})
    return DecisionGrading(
        scope=_scope(variants),
        decisions=sum(block.decisions for block in variants),
        hands=sum(block.hands for block in variants),
        variants=variants,
        worst=tuple(
            GradedDecision(row["hand_id"], _when(row["started_at"]), row["variant"],
                           int(row["street"]), row["situation"], row["chosen_placement"],
                           row["best_placement"], float(row["ev_loss"]), float(row["loss_se"]),
                           bool(row["mistake"]), bool(row["exact"]))
            for row in worst.iter_rows(named=True)
        ) if not worst.is_empty() else (),
        quizzes=tuple(
            _quiz(number, row, positions.get((row["hand_key"], row["player"], row["street"]),
                                             pl.DataFrame()))
            for number, row in enumerate(quizzes.iter_rows(named=True), 1)
        ) if not quizzes.is_empty() else (),
    )
