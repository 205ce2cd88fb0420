"""A real browser on a running ``ofc dashboard``: every page opens without a Streamlit exception.

Needs Debian's chromium at /usr/bin/chromium (driven by Playwright with ``executable_path``; the
test never downloads a browser). Screenshots land in tests/artifacts/ (gitignored).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dashboard.fixture_hands import OBRIEN, SCRIPT
from tests.serving import served

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parents[1] / "artifacts"
PAGES = (
    ("overview", "home", "Overview"),
    ("player-review", "player_review", "Player review"),
    ("compare-players", "compare_players", "Compare players"),
    ("point-flow", "point_flow", "Point flow"),
    ("sessions", "sessions", "Sessions"),
    ("hand-browser", "hand_browser", "Hand browser"),
    ("data", "data", "Data"),
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def served_dashboard(fixture_db):  # noqa: ANN001, ANN201
    """``ofc dashboard`` (the console script) on the fixture database, on a free port."""
    ofc = shutil.which("ofc", path=str(Path(sys.executable).parent)) or "ofc"
    with served(["dashboard", "--db", str(fixture_db)], program=[ofc],
                environment=os.environ) as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    """Headless Debian chromium through Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless=new", "--no-sandbox", "--disable-background-networking",
                  "--disable-gpu"],
        )
        try:
            yield chromium
        finally:
            chromium.close()


def wait_until_idle(page, timeout: float = 30.0) -> None:  # noqa: ANN001
    """Wait until Streamlit has finished running the page's script, then for the charts to draw."""
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=timeout * 1000)
    page.wait_for_timeout(400)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=timeout * 1000)


CUT_METRICS = """() => [...document.querySelectorAll('[data-testid="stMetricValue"]')]
    .filter(card => [card, ...card.querySelectorAll('*')]
                    .some(part => part.scrollWidth > part.clientWidth + 1))
    .map(card => card.innerText)"""
"""The values of the metric cards shown cut short (text wider than its box)."""


def test_every_page_opens_without_an_exception(served_dashboard, browser) -> None:  # noqa: ANN001
    ARTIFACTS.mkdir(exist_ok=True)
    dialogs: list[str] = []
    # a laptop's width; tall enough that a screenshot shows most of a page (Streamlit scrolls
    # inside its own pane)
    page = browser.new_page(viewport={"width": 1280, "height": 2600})
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for name, path, title in PAGES:
        page.goto(f"{served_dashboard}/{'' if path == 'home' else path}")
        page.wait_for_selector(f"h1:has-text('{title}')", timeout=30_000)
        wait_until_idle(page)
        page.screenshot(path=str(ARTIFACTS / f"dashboard-{name}.png"), full_page=True)
        exceptions = page.locator('[data-testid="stException"]')
        assert exceptions.count() == 0, (name, exceptions.first.inner_text())
        # the sidebar filters are there on every page
        assert page.locator('[data-testid="stSidebar"]').get_by_text("Filters").count() >= 1, name
        # every metric card shows its whole value (a row of too many cards cuts "2026-…")
        assert page.evaluate(CUT_METRICS) == [], name
    assert dialogs == []


def test_hostile_names_render_as_text(served_dashboard, browser) -> None:  # noqa: ANN001
    dialogs: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{served_dashboard}/player_review")
    wait_until_idle(page)
    page.wait_for_selector("h1:has-text('Player review')", timeout=30_000)
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Hero").click()
    page.keyboard.type("alert")
    page.keyboard.press("Enter")
    wait_until_idle(page)
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert SCRIPT in body  # shown as text, in the caption under the hero
    # no element was injected: the only script tags are the app's own bundles
    injected = page.evaluate(
        "() => Array.from(document.querySelectorAll('script')).filter("
        "s => (s.textContent || '').includes('alert(1)')).length")
    assert injected == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-hostile-name.png"), full_page=True)
    page.goto(f"{served_dashboard}/compare_players")
    wait_until_idle(page)
    page.wait_for_selector("h1:has-text('Compare players')", timeout=30_000)
    wait_until_idle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert OBRIEN not in dialogs
    assert dialogs == []


def test_terminal_ingest_while_the_dashboard_is_open(tmp_path, fixture_db, browser) -> None:  # noqa: ANN001
    """The dashboard holds no lock between page views: ``ofc ingest`` writes, a reload shows it."""
    import json

    from tests.dashboard.fixture_hands import fixture_records

    database = tmp_path / "live.duckdb"
    shutil.copy(fixture_db, database)
    more = tmp_path / "more-hands.jsonl"
    more.write_text("\n".join(json.dumps(dict(record, site="second-site"))
                              for record in fixture_records()) + "\n", encoding="utf-8")
    with served(["dashboard", "--db", str(database)]) as (url, _):
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        # the first request of a fresh server is a deep link: it still goes through app.py
        page.goto(f"{url}/sessions")
        page.wait_for_selector("h1:has-text('Sessions')", timeout=30_000)
        wait_until_idle(page)
        sidebar = page.locator('[data-testid="stSidebar"]')
        assert sidebar.get_by_text("Filters").count() >= 1
        assert sidebar.get_by_text("Hand browser").count() >= 1
        page.goto(url)
        page.wait_for_selector("h1:has-text('Overview')", timeout=30_000)
        wait_until_idle(page)
        hands = page.locator('[data-testid="stMetric"]').filter(has_text="Hands").first
        assert hands.locator('[data-testid="stMetricValue"]').inner_text() == "47"
        completed = subprocess.run(
            [sys.executable, "-m", "pipeline.cli", "ingest", str(more), "--db", str(database),
             "--quiet"], capture_output=True, text=True, timeout=120)
        assert completed.returncode == 0, completed.stderr
        page.reload()
        wait_until_idle(page)
        page.wait_for_selector("h1:has-text('Overview')", timeout=30_000)
        hands = page.locator('[data-testid="stMetric"]').filter(has_text="Hands").first
        assert hands.locator('[data-testid="stMetricValue"]').inner_text() == "94"


def test_start_page_on_a_missing_database(tmp_path, browser) -> None:  # noqa: ANN001
    with served(["dashboard", "--db", str(tmp_path / "none.duckdb")]) as (url, _):
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.goto(url)
        page.wait_for_selector("h1:has-text('OFC analytics')", timeout=30_000)
        wait_until_idle(page)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "dashboard-start.png"), full_page=True)
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.get_by_role("button", name="Load the demo data").count() == 1
        assert "no database" in page.locator('[data-testid="stMain"]').inner_text()
