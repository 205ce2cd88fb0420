"""The Record page in a real browser at a phone viewport (390x844), with a screenshot.

Serves the app with ``streamlit run`` on a fresh database, drives Debian's Chromium through
Playwright like a player between two hands: set up three players, type two boards, tap the third
in on the card picker, save. Checks the page fits the phone's width, the picker's cards are big
enough to tap, used cards are disabled, and the hand reached the database. The screenshots go to
tests/artifacts/ (ignored by git).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.live import scenario as sc
from tests.serving import served

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``ofc dashboard`` on an empty database: (base URL, database path)."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM}")
    database = tmp_path / "live.duckdb"
    with served(["dashboard", "--db", str(database)]) as (url, _):
        yield url, database


def whole_page(page, path: Path) -> None:  # noqa: ANN001
    """Screenshot all of the page at the phone's width (Streamlit scrolls an inner container, so
    the viewport is made as tall as the content for the shot, then restored)."""
    height = page.evaluate(
        "document.querySelector('[data-testid=stMainBlockContainer]').scrollHeight")
    page.set_viewport_size({"width": PHONE["width"], "height": int(height) + 120})
    page.wait_for_timeout(300)
    page.screenshot(path=str(path))
    page.set_viewport_size(PHONE)


def test_record_page_on_a_phone(server: tuple[str, Path]) -> None:
    playwright_api = pytest.importorskip("playwright.sync_api")
    url, database = server
    ARTIFACTS.mkdir(exist_ok=True)
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless=new", "--no-sandbox", "--disable-background-networking",
                  "--disable-gpu"],
        )
        try:
            context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True,
                                          has_touch=True)
            page = context.new_page()
            page.set_default_timeout(30_000)
            expect = playwright_api.expect
            page.goto(f"{url}/record")
            expect(page.get_by_role("heading", name="Record")).to_be_visible()

            players = page.locator(".st-key-rec_setup_players input")
            players.fill("mara, jun, ivo")
            players.press("Enter")
            stake = page.locator(".st-key-rec_setup_stake input")
            stake.fill("0.10")
            stake.press("Enter")
            expect(page.locator(".st-key-rec_setup_button")).to_be_visible()
            page.locator(".st-key-rec_start button").tap()
            expect(page.get_by_role("heading", name="Hand 1")).to_be_visible()

            for index, name in ((0, "mara"), (1, "jun")):
                field = page.locator(f".st-key-rec_board_{index} input")
                field.fill(sc.HAND_1[name])
                field.press("Enter")
                expect(page.locator(".st-key-rec_card_" + sc.HAND_1[name].split()[0] + " button")
                       ).to_be_disabled()
            # A typo shows its message next to the field.
            ivo = page.locator(".st-key-rec_board_2 input")
            ivo.fill("As 3h 4x")
            ivo.press("Enter")
            expect(page.get_by_text("'4x' is not a card", exact=False)).to_be_visible()
            ivo.fill("")
            ivo.press("Enter")
            expect(page.get_by_text("'4x' is not a card", exact=False)).to_have_count(0)

            # ivo's board tapped in on the picker.
            page.locator(".st-key-rec_player button", has_text="ivo").tap()
            for token in sc.HAND_1["ivo"].replace("/", " ").split():
                button = page.locator(f".st-key-rec_card_{token} button")
                button.tap()
                expect(button).to_be_disabled()
            expect(ivo).to_have_value(sc.HAND_1["ivo"])

            # Phone fit: nothing wider than the screen, tap targets at least 44 px.
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], width
            box = page.locator(".st-key-rec_card_Ks button").bounding_box()
            assert box is not None and box["height"] >= 44 and box["width"] >= 44, box
            page.screenshot(path=str(ARTIFACTS / "record-phone-entry.png"))
            whole_page(page, ARTIFACTS / "record-phone-entry-full.png")

            page.locator(".st-key-rec_save_button button").tap()
            expect(page.get_by_text("Hand 1 saved: mara +23, jun +12, ivo -35.", exact=False)
                   ).to_be_visible()
            expect(page.get_by_text("enters Fantasyland", exact=False)).to_be_visible()
            expect(page.get_by_role("heading", name="Hand 2")).to_be_visible()
            expect(page.locator(".st-key-rec_fl_0 input")).to_be_checked()  # mara pre-marked
            page.wait_for_timeout(300)
            page.screenshot(path=str(ARTIFACTS / "record-phone-result.png"))
            whole_page(page, ARTIFACTS / "record-phone-result-full.png")
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        finally:
            browser.close()

    with duckdb.connect(str(database), read_only=True) as connection:
        assert dict(connection.execute("SELECT player, points FROM results").fetchall()) \
            == sc.HAND_1_POINTS
