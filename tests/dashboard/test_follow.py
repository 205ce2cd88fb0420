"""The "Follow new hands" switch of the Overview and the Hand browser, beside a real ``ofc watch``.

AppTest: a page opened before a hand was appended (and stored by ``ofc watch`` in its own
process) shows that hand when it runs again. Chromium: with the switch on, the page runs again
by itself, without a click, once the watcher has stored a hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.conftest import APP
from tests.ingest.conftest import deal_hand
from tests.serving import served

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")


def hand_line(number: int) -> str:
    return json.dumps(deal_hand(number, hand_id=f"F{number:03d}",
                                started_at=f"2026-11-01T20:{number:02d}:00Z")) + "\n"


def watch_once(folder: Path, database: Path) -> None:
    """``ofc watch FOLDER --once`` in its own process (files written an hour ago: idle)."""
    old = time.time() - 3600
    for path in folder.iterdir():
        os.utime(path, (old, old))
    subprocess.run([sys.executable, "-m", "pipeline.cli", "watch", str(folder), "--db",
                    str(database), "--once"], cwd=REPO, check=True, timeout=120,
                   env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.DEVNULL)


@pytest.fixture
def watched(tmp_path: Path) -> tuple[Path, Path]:
    """A folder with five hands, and the database ``ofc watch`` filled from it."""
    folder = tmp_path / "hands"
    folder.mkdir()
    (folder / "session.jsonl").write_text("".join(hand_line(number) for number in range(5)))
    database = tmp_path / "watched.duckdb"
    watch_once(folder, database)
    return folder, database


def shown_hands(app: AppTest) -> str:
    return {metric.label: metric.value for metric in app.metric}["Hands"]


def test_the_pages_show_a_hand_appended_after_they_opened(watched, monkeypatch) -> None:  # noqa: ANN001
    folder, database = watched
    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    assert not app.exception
    switch = app.toggle(key="follow_overview")
    assert switch.label == "Follow new hands" and switch.value is False  # opt-in
    assert not any("Following new hands" in caption.value for caption in app.caption)
    switch.set_value(True).run()
    assert any("Following new hands" in caption.value for caption in app.caption)
    assert shown_hands(app) == "5"
    app.switch_page("views/hand_browser.py").run()
    app.toggle(key="follow_hand_browser").set_value(True).run()
    assert "F005" not in app.dataframe[0].value["hand_id"].to_list()

    with open(folder / "session.jsonl", "a", encoding="utf-8") as stream:
        stream.write(hand_line(5))  # played after the page opened
    watch_once(folder, database)
    app.run()  # what the switch does once the database file changed
    assert not app.exception
    table = app.dataframe[0].value
    assert table["hand_id"].to_list()[0] == "F005"  # the newest hand, at the top
    assert any("6 hands match" in caption.value for caption in app.caption)
    app.switch_page("views/overview.py").run()
    assert shown_hands(app) == "6"


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not at /usr/bin/chromium")
def test_with_the_switch_on_the_overview_refreshes_by_itself(watched) -> None:  # noqa: ANN001
    from playwright.sync_api import sync_playwright

    from tests.dashboard.test_browser import ARTIFACTS, wait_until_idle

    folder, database = watched
    with served(["dashboard", "--db", str(database)]) as (url, _), sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless=new", "--no-sandbox", "--disable-background-networking",
                  "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            page.goto(url)
            page.wait_for_selector("h1:has-text('Overview')", timeout=30_000)
            wait_until_idle(page)
            hands = page.locator('[data-testid="stMetric"]').filter(has_text="Hands").first
            assert hands.inner_text().split()[-1] == "5"
            page.get_by_text("Follow new hands").click()
            page.wait_for_selector("text=Following new hands", timeout=30_000)
            with open(folder / "session.jsonl", "a", encoding="utf-8") as stream:
                stream.write(hand_line(5) + hand_line(6))
            watch_once(folder, database)
            # no click, no reload: the page runs again by itself
            deadline = time.monotonic() + 30
            while hands.inner_text().split()[-1] != "7" and time.monotonic() < deadline:
                page.wait_for_timeout(500)
            wait_until_idle(page)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "dashboard-follow-new-hands.png"))
            assert hands.inner_text().split()[-1] == "7"
            assert page.locator('[data-testid="stException"]').count() == 0
        finally:
            browser.close()
