"""The HTML report in a real browser (Debian's chromium, headless, driven by Playwright).

Opened from a file with the network cut off: the page must fetch nothing, raise no script error,
never run a script from a player name, draw every chart, and show the hostile name as text. At
1280 px every table fits its section (the grading section's situation table used to lose its
last column), and graded decisions show under their notable hands. Screenshots land in
tests/artifacts/ (gitignored).
"""

from __future__ import annotations

import shutil
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
    assert boards >= 2 * len(report.notable)
    # the seats and opponents table: the shown tests and each opponent's difference
    assert findings == sum(f.shown and f.topic in ("Seats", "Head-to-head")
                           for f in report.findings)
    assert findings >= (1 if aliases else 0)  # ana has seats and opponents to compare


CUT_OFF = """() => {
  const problems = [];
  for (const table of document.querySelectorAll('table')) {
    const section = table.closest('section, header').getBoundingClientRect();
    const box = table.parentElement.getBoundingClientRect();
    for (const cell of table.querySelectorAll('tr > :last-child')) {
      const right = cell.getBoundingClientRect().right;
      if (right > section.right + 0.5 || right > box.right + 0.5) {
        problems.push([table.closest('section, header').id, table.className, Math.round(right),
                       Math.round(Math.min(section.right, box.right)), cell.textContent.slice(0, 40)]);
        break;
      }
    }
  }
  return problems;
}"""


@pytest.fixture(scope="module")
def graded_db(report_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-made hands with ana's decisions graded (few rollouts: only the layout counts)."""
    from pipeline.analysis.grade import GradeSettings
    from pipeline.analysis.runner import analyze_database

    database = tmp_path_factory.mktemp("graded") / "graded.duckdb"
    shutil.copy(report_db, database)
    analyze_database(database, player=HERO, settings=GradeSettings(rollouts=4, screen=2))
    return database


def test_every_table_fits_at_1280_pixels(graded_db: Path, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    report = create_report(graded_db, ReportRequest(HERO, aliases=(ALIAS,)), SETTINGS)
    assert report.grading is not None and report.grading.variants
    assert all(variant.by_situation for variant in report.grading.variants)
    graded = [hand for hand in report.notable if hand.grades]
    assert graded  # the costliest fouls carry their graded decisions
    page_file = tmp_path / "graded.html"
    page_file.write_text(render_html(report), encoding="utf-8")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", lambda route: route.continue_()
                       if route.request.url.startswith("file://") else route.abort())
            page.goto(page_file.as_uri(), wait_until="load")
            problems = page.evaluate(CUT_OFF)
            situations = " ".join(page.locator("#grading table").filter(has_text="situation").all_inner_texts())
            grades = page.locator("table.grades").count()
            link = page.locator("#hands a[href='#grading']").count()
            page.locator("#grading").screenshot(path=str(ARTIFACTS / "report-grading-1280.png"))
        finally:
            browser.close()
    assert problems == []
    assert "EV loss" in situations and "fantasyland" in situations
    assert grades == len(graded) and link == len(graded)
