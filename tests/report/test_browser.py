"""The HTML report in a real browser (Debian's chromium, headless, driven by Playwright).

Opened from a file with the network cut off: the page must fetch nothing, raise no script error,
never run a script from a player name, draw every chart, and show the hostile name as text.
Screenshots land in tests/artifacts/ (gitignored).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.report import ReportRequest, create_report
from pipeline.report.render import render_html
from tests.report.conftest import SETTINGS
from tests.report.hands import ALIAS, HERO, SCRIPT

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parents[1] / "artifacts"
ARGS = ["--headless=new", "--no-sandbox", "--disable-background-networking", "--disable-gpu"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not at /usr/bin/chromium"),
]


@pytest.mark.parametrize(("player", "aliases", "shot"), [
    (HERO, (ALIAS,), "report-ana.png"),
    (SCRIPT, (), "report-hostile-name.png"),
])
def test_report_in_chromium(report_db: Path, tmp_path: Path, player: str,
                            aliases: tuple[str, ...], shot: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    report = create_report(report_db, ReportRequest(player, aliases=aliases), SETTINGS)
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(report), encoding="utf-8")
    charts = page_file.read_text(encoding="utf-8").count("Plotly.newPlot(")
    ARTIFACTS.mkdir(exist_ok=True)
    requests: list[str] = []
    problems: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})

            def block(route) -> None:  # noqa: ANN001
                requests.append(route.request.url)
                if route.request.url.startswith("file://"):
                    route.continue_()
                else:
                    route.abort()

            page.route("**/*", block)
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.on("console", lambda message: problems.append(f"console: {message.text}")
                    if message.type == "error" else None)
            page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"),
                                              dialog.dismiss()))
            page.goto(page_file.as_uri(), wait_until="load")
            page.wait_for_function(
                f"document.querySelectorAll('.chart .main-svg').length >= {charts}",
                timeout=20_000)
            title = page.locator("h1").inner_text()
            drawn = page.evaluate("document.querySelectorAll('.chart .plot-container').length")
            boards = page.locator(".board").count()
            findings = page.locator("table.findings tbody tr").count()
            page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
        finally:
            browser.close()
    assert requests == [page_file.as_uri()], requests  # the file itself, nothing else
    assert problems == []
    assert title == f"Coaching report: {player}"
    assert drawn == charts >= 6
    assert boards >= 2 * len(report.notable) and findings >= 10
