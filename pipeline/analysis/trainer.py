"""The trainer: a graded mistake replayed as a quiz, the answer checked and stored.

A quiz shows a decision as the player saw it and asks where the dealt cards go. An answer is a
row (or the discard) for each dealt card. :func:`check_answer` rebuilds the decision from the
stored hand, finds the answer's class among the grade's alternatives (symmetric placements are
one class, as in grading: :mod:`pipeline.analysis.alternatives`) and compares it with the best
play on the grade's own samples:

* the answer's loss is ``diff(best) − diff(answer)``: both paired with the play made on the
  same selection samples (every deal when the grade is exact), 0 when the answer is the best;
* the answer is *correct* when it is the best play, or not clearly worse than it: its loss is
  below ``max(z · SE, min_loss)`` (SE bounded by the sum of both SEs).

:func:`record_answer` appends the answer to ``trainer_answers`` (with the decision's mistake
type), so the dashboard can show how each kind of mistake fares over time.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from statistics import NormalDist

import pyarrow as pa

from pipeline import store
from pipeline.analysis.alternatives import (
    DISCARD,
    ROW_NAMES,
    apply_pattern,
    canonical_key,
    fits,
    symmetry_group,
)
from pipeline.analysis.decisions import decision_at, load_hands
from pipeline.analysis.grade import GradeSettings
from pipeline.rules.cards import CardError, card_text, parse_card

ROW_CHOICES = (*ROW_NAMES, "discard")
"""Where an answer may send a dealt card."""


class AnswerError(ValueError):
    """An answer that does not fit the quiz (the message says why)."""


@dataclass(frozen=True, slots=True)
class AnswerCheck:
    """An answer compared with the grade."""

    hand_key: int
    player: str
    street: int
    variant: str
    mistake_type: str
    placement: str  # the answer, written like the grade's placements
    alternative: int  # the grade's alternative the answer belongs to
    is_best: bool
    is_played: bool  # the answer is what the player did at the table
    answer_ev: float | None
    best_ev: float | None
    loss: float
    loss_se: float
    exact: bool
    correct: bool


def _pattern(dealt: Sequence[int], answer: Mapping[str, str]) -> tuple[int, ...]:
    """The answer as a pattern over the dealt cards (row index, -1 for the discard)."""
    rows = []
    for card in dealt:
        text = card_text(card)
        choice = answer.get(text)
        if choice is None:
            raise AnswerError(f"{text} has no row")
        if choice not in ROW_CHOICES:
            raise AnswerError(f"{text}: unknown row {choice!r}")
        rows.append(DISCARD if choice == "discard" else ROW_NAMES.index(choice))
    extra = set(answer) - {card_text(card) for card in dealt}
    if extra:
        raise AnswerError(f"{sorted(extra)[0]} was not dealt on this street")
    return tuple(rows)


def check_answer(database: str | os.PathLike[str], hand_key: int, player: str, street: int,
                 answer: Mapping[str, str], settings: GradeSettings | None = None) -> AnswerCheck:
    """Compare an answer (card text -> ``top``/``middle``/``bottom``/``discard``) with the stored
    grade of (hand, player, 1-based street). Raises AnswerError for an answer that does not fit
    (wrong cards, a full row, the wrong number of discards) or a decision that is not graded."""
    settings = settings or GradeSettings()
    normalised = {}
    for text, row in answer.items():
        try:
            normalised[card_text(parse_card(text))] = row
        except CardError as error:
            raise AnswerError(str(error)) from error
    with store.open_database(Path(database), read_only=True) as connection:
        hands = load_hands(connection, [hand_key])
        grade = connection.execute(
            "SELECT variant, coalesce(mistake_type, ''), coalesce(exact, false), chosen, best "
            "FROM decision_grades WHERE hand_key = ? AND player = ? AND street = ?",
            [hand_key, player, street]).fetchone()
        stored = connection.execute(
            "SELECT alternative, placement, diff, diff_se, "
            "CASE WHEN coalesce(eval_samples, 0) >= 2 THEN eval_ev ELSE ev END "
            "FROM decision_alternatives WHERE hand_key = ? AND player = ? AND street = ? "
            "ORDER BY alternative", [hand_key, player, street]).fetchall()
    if not hands or grade is None or not stored:
        raise AnswerError("this decision has no stored grade")
    variant, mistake_type, exact, chosen, best = grade
    hand = hands[0]
    decision = decision_at(hand, hand.seat_of(player), street - 1)
    pattern = _pattern(decision.dealt, normalised)
    if pattern.count(DISCARD) != decision.discards:
        raise AnswerError(f"discard exactly {decision.discards} card"
                          f"{'s' if decision.discards != 1 else ''}")
    if not fits(decision.rows, pattern):
        raise AnswerError("a row gets more cards than it has room for")
    options = decision.alternatives()
    if len(options.alternatives) != len(stored):
        raise AnswerError("the stored grade does not match this hand any more (grade it again)")
    opponents = [cards for index, rows in enumerate(decision.visible)
                 if rows is not None and index != decision.hero for cards in rows if cards]
    group = symmetry_group(decision.known, opponents)
    wanted = canonical_key(apply_pattern(decision.rows, decision.dealt, pattern)[0], group)
    index = next((number for number, alternative in enumerate(options.alternatives)
                  if canonical_key(alternative.rows_after, group) == wanted), None)
    if index is None:
        raise AnswerError("that placement is not legal here")
    if options.alternatives[index].describe() != stored[index][1]:
        raise AnswerError("the stored grade does not match this hand any more (grade it again)")
    _, _, best_diff, best_se, best_ev = stored[best]
    _, _, answer_diff, answer_se, answer_ev = stored[index]
    if index == best:
        loss, loss_se = 0.0, 0.0
    else:
        loss = float(best_diff - answer_diff)
        loss_se = 0.0 if exact else float((best_se or 0.0) + (answer_se or 0.0))
        if not math.isfinite(loss_se):
            loss_se = 0.0
    threshold = max(NormalDist().inv_cdf(1 - settings.alpha) * loss_se, settings.min_loss)
    placed, discards = apply_pattern(((), (), ()), decision.dealt, pattern)
    parts = [f"{name} {' '.join(card_text(card) for card in cards) or '–'}"
             for name, cards in zip(ROW_NAMES, placed, strict=True)]
    if discards:
        parts.append("discard " + " ".join(card_text(card) for card in discards))
    return AnswerCheck(
        hand_key=hand_key, player=player, street=street, variant=variant,
        mistake_type=mistake_type, placement=" · ".join(parts), alternative=index,
        is_best=index == best, is_played=index == chosen, answer_ev=answer_ev, best_ev=best_ev,
        loss=max(loss, 0.0) if index != best else 0.0, loss_se=loss_se, exact=bool(exact),
        correct=index == best or loss < threshold,
    )


def record_answer(database: str | os.PathLike[str], check: AnswerCheck,
                  when: datetime | None = None) -> None:
    """Append a checked answer to ``trainer_answers``."""
    when = when or datetime.now(UTC).replace(tzinfo=None)
    frame = pa.table({
        "hand_key": pa.array([check.hand_key], pa.int64()),
        "player": [check.player], "street": pa.array([check.street], pa.int8()),
        "variant": [check.variant], "mistake_type": [check.mistake_type],
        "answered_at": pa.array([when], pa.timestamp("us")),
        "answer_placement": [check.placement],
        "answer_alternative": pa.array([check.alternative], pa.int16()),
        "answer_ev": pa.array([check.answer_ev], pa.float64()),
        "best_ev": pa.array([check.best_ev], pa.float64()),
        "answer_loss": pa.array([check.loss], pa.float64()),
        "correct": [check.correct],
    })
    with store.open_database(Path(database)) as connection:
        store.insert_frame(connection, "trainer_answers", frame)
