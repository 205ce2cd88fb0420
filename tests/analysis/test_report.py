"""The coaching report's decision-grading section: per variant, with its scope, and the
trainer's printable quizzes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipeline import read
from pipeline.analysis.grade import GradeSettings
from pipeline.analysis.runner import analyze_database
from pipeline.report import ReportRequest, create_report
from pipeline.report.render import render


def test_the_report_carries_the_grades(certain_db: Path, tmp_path: Path) -> None:
    database = tmp_path / "graded.duckdb"
    shutil.copy(certain_db, database)
    analyze_database(database, player="ann", settings=GradeSettings(rollouts=20))
    report = create_report(database, ReportRequest("ann"))
    grading = report.grading
    assert grading is not None
    summary = read.grading.grading_summary(database, read.scope.Filters(players=("ann",)))
    assert summary["variant"].to_list() == ["pineapple"]
    row = summary.row(0, named=True)
    assert [block.variant for block in grading.variants] == ["pineapple"]
    block = grading.variants[0]
    assert block.decisions == row["decisions"] == grading.decisions
    assert block.mistakes == row["mistakes"] and block.exact == row["exact"]
    assert block.ev_loss_per_decision == row["ev_loss_per_decision"]
    assert abs(block.ev_loss_se - row["ev_loss_se"]) < 1e-12
    assert abs(block.ev_loss_per_hand_se - row["ev_loss_per_hand_se"]) < 1e-12
    assert block.fl_hands == 1 and block.fl_given_up_per_hand == row["fl_given_up_per_hand"]
    assert block.policy_decisions == row["policy_decisions"] == row["decisions"]
    assert block.policy_gap_per_decision == pytest.approx(row["policy_gap_per_decision"])
    assert block.policy_gap_se == pytest.approx(row["policy_gap_se"])
    assert [line.key for line in block.by_street] == [str(n) for n in range(1, 6)][: len(block.by_street)]
    streets = read.grading.grading_by_street(database, read.scope.Filters(players=("ann",)))
    for line, shown in zip(block.by_street, streets.iter_rows(named=True), strict=True):
        assert line.gap_per_decision == pytest.approx(shown["policy_gap_per_decision"])
        assert line.gap_se == pytest.approx(shown["policy_gap_se"])
    # the scope names the hands, their dates and the variant
    assert f"{row['decisions']} graded decisions in {row['hands']} hands" in grading.scope
    assert "2026-11-01" in grading.scope and "pineapple" in grading.scope
    worst = grading.worst[0]
    assert worst.hand_id == "A" and worst.street == 5 and worst.mistake and worst.exact
    # the printable trainer: hand A's last street as ann saw it (bob acts after her)
    quiz = next(quiz for quiz in grading.quizzes if quiz.hand_id == "A" and quiz.street == 5)
    assert quiz.dealt == ("Kh", "2c", "5d")
    assert quiz.own == (("Ks", "3h"), ("Qc", "Qd", "4h", "6s"), ("As", "Ad", "Ac", "7s", "7d"))
    assert quiz.discarded == ("9c", "Tc", "Jc")
    assert [name for name, _ in quiz.opponents] == ["bob"]
    assert sum(len(cards) for cards in quiz.opponents[0][1]) == 11
    assert quiz.played == "top Kh · middle 2c · bottom – · discard 5d"
    markdown = render(report, "md")
    assert "## Decision grading" in markdown and "top Kh · middle 2c" in markdown
    assert "Scope: " in markdown and "| pineapple |" in markdown
    gap = f"{block.policy_gap_per_decision:.2f} ± {block.policy_gap_se:.2f}"
    assert "Behind the grader's bot / decision" in markdown and f"| {gap} |" in markdown
    last = block.by_street[-1]
    assert f"| {last.gap_per_decision:.2f} ± {last.gap_se:.2f} |" in markdown
    assert "**Quiz 1.**" in markdown and "Dealt: **K♥ 2♣ 5♦**" in markdown
    assert markdown.index("Dealt: **K♥ 2♣ 5♦**") < markdown.index("**Answers**")
    html = render(report, "html")
    assert 'id="grading"' in html and 'id="trainer"' in html
    assert json.loads(render(report, "json"))["grading"]["decisions"] == grading.decisions


def test_no_grading_section_before_any_grading(certain_db: Path) -> None:
    report = create_report(certain_db, ReportRequest("ann"))
    assert report.grading is None
    assert "Decision grading" not in render(report, "md")
    assert json.loads(render(report, "json"))["grading"] is None
