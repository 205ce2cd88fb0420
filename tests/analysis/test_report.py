"""The coaching report's decision-grading section."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

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
    summary = read.grading.grading_summary(database, read.scope.Filters(players=("ann",))).row(0, named=True)
    assert grading.decisions == summary["decisions"] and grading.mistakes == summary["mistakes"]
    assert grading.ev_loss_per_decision == summary["ev_loss_per_decision"]
    assert abs(grading.ev_loss_se - summary["ev_loss_se"]) < 1e-12
    assert grading.fl_hands == 1 and grading.fl_given_up_per_hand == summary["fl_given_up_per_hand"]
    assert [line.key for line in grading.by_street] == [str(n) for n in range(1, 6)][: len(grading.by_street)]
    assert grading.worst[0].hand_id == "A" and grading.worst[0].street == 5 and grading.worst[0].mistake
    markdown = render(report, "md")
    assert "## Decision grading" in markdown and "top Kh · middle 2c" in markdown
    assert 'id="grading"' in render(report, "html")
    assert json.loads(render(report, "json"))["grading"]["decisions"] == grading.decisions


def test_no_grading_section_before_any_grading(certain_db: Path) -> None:
    report = create_report(certain_db, ReportRequest("ann"))
    assert report.grading is None
    assert "Decision grading" not in render(report, "md")
    assert json.loads(render(report, "json"))["grading"] is None
