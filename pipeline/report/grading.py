"""The coaching report's decision-grading section (from ``ofc analyze``'s tables).

Read with the grading questions of :mod:`pipeline.read` for the player's names in the
report's scope; absent (None) when none of the player's decisions or Fantasyland hands has been
graded. Several names (aliases) are pooled.
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


@dataclass(frozen=True, slots=True)
class GradingLine:
    """Graded decisions of one street or situation."""

    key: str
    decisions: int
    mistakes: int
    correct_share: float
    ev_loss_per_decision: float


@dataclass(frozen=True, slots=True)
class GradedDecision:
    """One of the costliest decisions."""

    hand_id: str
    started_at: str | None
    street: int
    situation: str
    chosen: str
    best: str
    ev_loss: float
    loss_se: float
    mistake: bool


@dataclass(frozen=True, slots=True)
class DecisionGrading:
    """The player's graded decisions (EV loss against the best play, by rollouts)."""

    decisions: int
    hands: int
    mistakes: int
    correct_share: float | None
    ev_loss_per_decision: float | None
    ev_loss_se: float | None
    ev_loss_per_hand: float | None
    rollouts: float | None
    fl_hands: int
    fl_given_up_per_hand: float | None
    by_street: tuple[GradingLine, ...]
    by_situation: tuple[GradingLine, ...]
    worst: tuple[GradedDecision, ...]


def gather_grading(db: Database, filters: Filters) -> dict[str, pl.DataFrame]:
    """The grading frames of the heroes in ``filters`` (empty frames before any grading)."""
    return {
        "summary": read.grading.grading_summary(db, filters),
        "by_street": read.grading.grading_by_street(db, filters),
        "by_situation": read.grading.grading_by_situation(db, filters),
        "worst": read.grading.worst_decisions(db, filters, WORST_SHOWN),
    }


def _lines(frame: pl.DataFrame, column: str) -> tuple[GradingLine, ...]:
    if frame.is_empty():
        return ()
    pooled = frame.group_by(column).agg(
        pl.col("decisions").sum(), pl.col("mistakes").sum(), pl.col("total_loss").sum()
    ).sort(column)
    return tuple(
        GradingLine(str(row[column]), int(row["decisions"]), int(row["mistakes"]),
                    1 - row["mistakes"] / row["decisions"], row["total_loss"] / row["decisions"])
        for row in pooled.iter_rows(named=True)
    )


def _when(value: Any) -> str | None:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else None


def grading_section(frames: dict[str, pl.DataFrame]) -> DecisionGrading | None:
    """Pool the frames of :func:`gather_grading` into the report's section (None: nothing graded)."""
    summary = frames.get("summary")
    if summary is None or summary.is_empty():
        return None
    decisions = int(summary["decisions"].sum())
    hands = int(summary["hands"].sum())
    mistakes = int(summary["mistakes"].sum())
    loss = float(summary["total_loss"].sum())
    variance = sum(
        (row["decisions"] * row["ev_loss_se"]) ** 2 for row in summary.iter_rows(named=True)
        if row["decisions"]
    )
    rollouts = sum((row["rollouts"] or 0) * row["decisions"] for row in summary.iter_rows(named=True))
    fl_hands = int(summary["fl_hands"].sum())
    fl_given_up = float(summary["fl_given_up"].sum())
    worst = frames.get("worst", pl.DataFrame())
    return DecisionGrading(
        decisions=decisions, hands=hands, mistakes=mistakes,
        correct_share=1 - mistakes / decisions if decisions else None,
        ev_loss_per_decision=loss / decisions if decisions else None,
        ev_loss_se=math.sqrt(variance) / decisions if decisions else None,
        ev_loss_per_hand=loss / hands if hands else None,
        rollouts=rollouts / decisions if decisions else None,
        fl_hands=fl_hands, fl_given_up_per_hand=fl_given_up / fl_hands if fl_hands else None,
        by_street=_lines(frames.get("by_street", pl.DataFrame()), "street"),
        by_situation=_lines(frames.get("by_situation", pl.DataFrame()), "situation"),
        worst=tuple(
            GradedDecision(row["hand_id"], _when(row["started_at"]), int(row["street"]),
                           row["situation"], row["chosen_placement"], row["best_placement"],
                           float(row["ev_loss"]), float(row["loss_se"]), bool(row["mistake"]))
            for row in worst.iter_rows(named=True)
        ) if not worst.is_empty() else (),
    )
