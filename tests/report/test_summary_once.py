"""The summary asks "does chasing Fantasyland pay?" once: in the item that holds a clear answer,
or below the summary when no item does (on the demo database, built as ``ofc demo`` builds it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.report import ReportRequest, create_report, report_dict
from pipeline.report.render import render_html, render_markdown
from pipeline.report.summary import chasing_apart

QUESTION = "Does chasing Fantasyland pay?"


@pytest.mark.parametrize(("player", "joined"), [("tomas", True), ("jun", False)])
def test_the_chasing_question_is_asked_once(demo: Path, player: str, joined: bool) -> None:
    """tomas (random) has a clear chasing answer that joins his fouls item; jun's is not clear
    and stands below the summary. Either way every format asks the question once."""
    report = create_report(demo, ReportRequest(player))
    data = report_dict(report)
    holding = [item["key"] for item in data["summary"] if "chasing" in item["tests"]]
    assert bool(holding) is joined, holding
    assert chasing_apart(data) is not joined
    if joined:
        assert holding == ["cause.fouls"]
    markdown = render_markdown(report)
    summary = markdown.split("## Summary", 1)[1].split("\n## ", 1)[0]
    html = render_html(report)
    section = html.split('<section id="summary">', 1)[1].split("</section>", 1)[0]
    for text in (summary, section):
        assert text.count(QUESTION) == 1, text.count(QUESTION)
    opening = data["chasing"]["answer"][:40]  # the answer itself, once in the whole report
    assert markdown.count(opening) == 1


def test_no_answer_no_question() -> None:
    """A report without a chasing answer (no hands to compare) shows no question apart."""
    assert not chasing_apart({"chasing": None, "summary": []})
