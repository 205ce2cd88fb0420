"""The coaching report as the dashboard hands it out (HTML and Markdown downloads): charts that
are not clipped in Chromium, and Markdown that reads as text.

The dashboard's process has imported Streamlit, whose Plotly template becomes the default for
every figure built there; the downloaded HTML is drawn by plain plotly.js, so the figures must
size their own margins (tick labels and axis titles inside the chart, titles clear of ticks).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit  # noqa: F401  (imported first, as in the dashboard's process)

from pipeline.report import ReportRequest, create_report
from pipeline.report.render import render_html, render_markdown
from tests.dashboard.fixture_hands import JUN, MARA

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parents[1] / "artifacts"

CLIPPED = """() => {
  const problems = [];
  const inside = (inner, outer) => inner.left >= outer.left - 1 && inner.right <= outer.right + 1
    && inner.top >= outer.top - 1 && inner.bottom <= outer.bottom + 1;
  const overlap = (a, b) => a.left < b.right - 1 && b.left < a.right - 1
    && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  document.querySelectorAll('.chart').forEach((chart) => {
    const svg = chart.querySelector('.main-svg');
    if (!svg) { problems.push(`${chart.id}: not drawn`); return; }
    const frame = svg.getBoundingClientRect();
    chart.querySelectorAll('.xtick text, .ytick text, [class^="g-x"][class$="title"] text, '
        + '[class^="g-y"][class$="title"] text, .legendtext, .gtitle').forEach((text) => {
      const box = text.getBoundingClientRect();
      if (box.width > 0 && !inside(box, frame)) problems.push(`${chart.id}: "${text.textContent}" clipped`);
    });
    for (const axis of ['x', 'y']) {
      const titles = [...chart.querySelectorAll(`[class^="g-${axis}"][class$="title"] text`)];
      const ticks = [...chart.querySelectorAll(`.${axis}tick text`)];
      titles.forEach((title) => ticks.forEach((tick) => {
        if (overlap(title.getBoundingClientRect(), tick.getBoundingClientRect()))
          problems.push(`${chart.id}: title "${title.textContent}" over tick "${tick.textContent}"`);
      }));
    }
  });
  return problems;
}"""
"""Every tick label, axis title, legend entry and chart title inside its chart, and no axis title
over a tick label."""


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not at /usr/bin/chromium")
@pytest.mark.parametrize("player", [MARA, JUN])
def test_downloaded_html_charts_are_not_clipped(fixture_db, tmp_path, player) -> None:  # noqa: ANN001
    from playwright.sync_api import sync_playwright

    html = render_html(create_report(fixture_db, ReportRequest(player)))
    charts = html.count("Plotly.newPlot(")
    assert charts >= 4
    page_file = tmp_path / "report.html"
    page_file.write_text(html, encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless=new", "--no-sandbox", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_file.as_uri())
            page.wait_for_function(
                f"document.querySelectorAll('.chart .main-svg').length >= {charts}",
                timeout=60_000)
            problems = page.evaluate(CLIPPED)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"report-download-{len(player)}.png"),
                            full_page=True)
        finally:
            browser.close()
    assert problems == []


ESCAPES_READ_AS_TEXT = ("\\(", "\\)", "\\-", "\\.", "\\:", "\\+", "\\!", "\\$", "\\{")


@pytest.mark.parametrize("player", [MARA, JUN])
def test_downloaded_markdown_reads_as_text(fixture_db, player) -> None:  # noqa: ANN001
    """No backslash before a bracket, a minus or a dot in numbers and sentences (the file is
    read as text as often as rendered); what could make Markdown or HTML is still inert."""
    markdown = render_markdown(create_report(fixture_db, ReportRequest(player)))
    found = [escape for escape in ESCAPES_READ_AS_TEXT if escape in markdown]
    assert found == [], [line for line in markdown.splitlines()
                         if any(escape in line for escape in found)][:5]
    assert "(" in markdown and "." in markdown


def test_downloaded_markdown_keeps_names_inert(fixture_db) -> None:  # noqa: ANN001
    from tests.dashboard.fixture_hands import SCRIPT

    markdown = render_markdown(create_report(fixture_db, ReportRequest(SCRIPT)))
    assert "<script" not in markdown
    assert "# Coaching report: &lt;script>alert(1)&lt;/script>" in markdown
