"""The Trainer page in a real browser at phone width (390 × 844): a quiz answered with taps.

Needs Debian's chromium at /usr/bin/chromium (Playwright with ``executable_path``; nothing is
downloaded). The screenshots land in tests/artifacts/ (gitignored).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from pipeline import read
from pipeline.analysis.grade import GradeSettings
from pipeline.analysis.runner import analyze_database
from tests.serving import served

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parents[1] / "artifacts"
PHONE = {"width": 390, "height": 844}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]


def _idle(page) -> None:  # noqa: ANN001
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=60_000)
    page.wait_for_timeout(400)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=60_000)


def test_a_quiz_on_a_phone(certain_db: Path, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    database = tmp_path / "graded.duckdb"
    shutil.copy(certain_db, database)
    analyze_database(database, player="ann", settings=GradeSettings(rollouts=20))
    ARTIFACTS.mkdir(exist_ok=True)
    with served(["dashboard", "--db", str(database)]) as (url, _), sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless=new", "--no-sandbox", "--disable-background-networking",
                  "--disable-gpu"])
        try:
            page = browser.new_page(viewport=PHONE, device_scale_factor=2, is_mobile=True,
                                    has_touch=True)
            page.goto(f"{url}/trainer")
            page.wait_for_selector("h1:has-text('Trainer')", timeout=60_000)
            _idle(page)
            main = page.locator('[data-testid="stMain"]')
            assert "Hand A" in main.inner_text()
            # every card button of the picker is on screen, none cut off at the right edge
            cards = main.locator('[class*="st-key-quiz_cards"] button')
            assert cards.count() == 3
            for index in range(3):
                box = cards.nth(index).bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
                assert box["height"] >= 40  # a thumb-sized target
            page.screenshot(path=str(ARTIFACTS / "trainer-phone-question.png"), full_page=True)
            for placed, (card, row) in enumerate((("K", "middle"), ("2", "top"), ("5", "discard")), 1):
                main.locator("button").filter(has_text=re.compile(rf"^{row} \d/\d$")).first.click()
                _idle(page)
                cards.filter(has_text=card).first.click()
                # the tapped card's button now says where it went
                cards.filter(has_text=f"→ {row}").first.wait_for(timeout=60_000)
                assert cards.filter(has_text="→").count() == placed
                _idle(page)
            check = main.get_by_role("button", name="Check my answer")
            check.scroll_into_view_if_needed()
            check.click()
            main.get_by_text("played at the table").first.wait_for(timeout=60_000)
            _idle(page)
            text = main.inner_text()
            assert "best play" in text and ("Right" in text or "Good" in text), text[-1500:]
            assert main.locator('[data-testid="stException"]').count() == 0
            chart = main.locator('[data-testid="stPlotlyChart"]')
            assert chart.count() == 1
            chart.scroll_into_view_if_needed()
            page.wait_for_selector(".js-plotly-plot", timeout=30_000)
            box = chart.bounding_box()
            assert box is not None and box["width"] <= PHONE["width"]
            page.screenshot(path=str(ARTIFACTS / "trainer-phone-answer.png"), full_page=True)
        finally:
            browser.close()
    answers = read.grading.trainer_answers(database, read.scope.Filters(players=("ann",)))
    assert answers["answer_placement"].to_list() == ["top 2c · middle Kh · bottom – · discard 5d"]
