"""The hand replay: the whole hand goes to the browser once, each graded decision with its street;
in Chromium a street step redraws without a server round trip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from dashboard.hand_replay import replay_data
from tests.serving import served

CHROMIUM = Path("/usr/bin/chromium")

HEADER = {"hand_key": 7, "hand_id": "H-1"}
PLAYERS = pl.DataFrame({
    "player": ["ana", "<b>bo</b>"], "is_button": [False, True], "fantasyland": [False, True],
    "cards_dealt": [17, 14],
    "top": ["Ah Ad 2c", "3s 3h 3d"], "middle": ["Ks Kd 4h 4c 9s", "7c 8c 9c Tc Jc"],
    "bottom": ["Qs Qh Qd 5c 5d", "2s 2h 2d 6c 6d"],
    "top_class": ["pair", "trips"], "middle_class": ["two_pair", "straight_flush"],
    "bottom_class": ["full_house", "full_house"], "foul": [True, False],
    "royalty_top": [0, 10], "royalty_middle": [0, 30], "royalty_bottom": [0, 6],
    "fantasyland_next": [False, True], "fantasyland_cards": [0, 14], "points": [-30, 30],
})
ANA = [["Ah", "Ad", "2c"], ["Ks", "Kd", "4h", "4c", "9s"], ["Qs", "Qh", "Qd", "5c", "5d"]]


def _cards() -> pl.DataFrame:
    rows = []
    order = [("Ah", "top"), ("Ks", "middle"), ("Kd", "middle"), ("Qs", "bottom"), ("Qh", "bottom"),
             ("Ad", "top"), ("4h", "middle"), ("Qd", "bottom"), ("4c", "middle"),
             ("2c", "top"), ("9s", "middle"), ("5c", "bottom"), ("5d", "bottom")]
    for index, (card, row) in enumerate(order):
        street = 1 if index < 5 else 2 + (index - 5) // 2
        rows.append(("ana", street, index, card, row))
    rows += [("ana", street, 100, card, "discard") for street, card in
             ((2, "Tc"), (3, "9d"), (4, "8h"), (5, "7h"))]
    bo = ["3s", "3h", "3d", "7c", "8c", "9c", "Tc", "Jc", "2s", "2h", "2d", "6c", "6d"]
    rows += [("<b>bo</b>", 1, index, card, "top" if index < 3 else "middle" if index < 8 else
              "bottom") for index, card in enumerate(bo)]
    return pl.DataFrame(rows, schema=["player", "street", "card_order", "card", "row_name"],
                        orient="row")


GRADES = pl.DataFrame({
    "player": ["ana", "ana"], "street": [2, 4], "situation": ["standard", "standard"],
    "chosen_placement": ["top Ad · middle 4h", "middle 4c · bottom –"],
    "best_placement": ["top Ad · middle 4h", "top – · middle 4c"],
    "ev_loss": [0.0, 1.25], "loss_se": [0.0, 0.2], "mistake": [False, True],
    "mistake_type": [None, "top too strong"], "exact": [False, False], "rollouts": [600, 600],
    "policy_placement": [None, "top – · middle 4c"], "policy_gap": [None, 0.8],
    "policy_gap_se": [None, 0.1],
})


def test_the_whole_hand_goes_at_once_with_each_grade_on_its_street() -> None:
    data = replay_data(HEADER, PLAYERS, _cards(), GRADES)
    assert data["last_street"] == 5 and data["street"] == 5
    ana, bo = data["players"]
    # street by street, the cards add up to the final board; discards kept on their street
    placed = {row: [c["card"] for s in ana["streets"] for c in s if c["row"] == row]
              for row in ("top", "middle", "bottom")}
    assert [placed["top"], placed["middle"], placed["bottom"]] == ANA
    assert [c["card"] for c in ana["streets"][1] if c["row"] == "discard"] == ["Tc"]
    # a Fantasyland board is set at once: one street
    assert [len(street) for street in bo["streets"]] == [13, 0, 0, 0, 0]
    assert bo["badges"] == ["button", "Fantasyland (14 cards)"]
    # verdicts in words
    assert ana["verdict"] == "foul"
    assert bo["verdict"] == "trips / straight flush / full house"
    assert "Fantasyland next (14 cards)" in bo["result"]
    # each graded decision is tied to its player and street
    assert [(g["player_index"], g["street"], g["mistake"]) for g in data["grades"]] == [
        (0, 2, False), (0, 4, True)]
    assert data["graded_streets"] == [2, 4]
    assert data["grades"][1]["kind"] == "top too strong" and data["grades"][1]["gap"] == 0.8
    # names are data (the JavaScript sets them as text)
    assert bo["name"] == "<b>bo</b>"


def test_nothing_graded_and_boards_only() -> None:
    data = replay_data(HEADER, PLAYERS, _cards().clear(), pl.DataFrame())
    assert data["last_street"] == 0 and data["grades"] == [] and data["graded_streets"] == []
    assert data["players"][0]["final"]["middle"] == ANA[1]


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
def test_a_street_step_is_drawn_in_the_browser_with_its_grades(tmp_path) -> None:  # noqa: ANN001
    """The demo (graded hands): a street step is answered in the page itself — no script run on
    the server — and the graded decisions of that street are drawn with it."""
    from playwright.sync_api import sync_playwright

    database = tmp_path / "demo.duckdb"
    subprocess.run([sys.executable, "-m", "pipeline.cli", "demo", "--no-serve", "--db",
                    str(database)], check=True, stdout=subprocess.DEVNULL)
    with served(["dashboard", "--db", str(database)], environment=os.environ) as (url, _), \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless=new", "--no-sandbox", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.goto(f"{url}/hand_browser")
            idle = '[data-testid="stApp"][data-test-script-state="notRunning"]'
            page.wait_for_selector("h1:has-text('Hand browser')", timeout=60_000)
            page.locator(".st-key-hb_graded").click()
            page.wait_for_timeout(500)
            page.wait_for_selector(idle, timeout=60_000)
            replay = page.locator(".hand-replay")
            replay.wait_for(timeout=60_000)
            graded = replay.locator("button.street.graded")
            assert graded.count() >= 1
            street = graded.first.get_attribute("data-street")
            page.evaluate("""() => { window.__runs = 0; new MutationObserver(() => {
                const app = document.querySelector('[data-testid="stApp"]');
                if (app.getAttribute('data-test-script-state') === 'running') window.__runs += 1;
            }).observe(document.querySelector('[data-testid="stApp"]'), {attributes: true}); }""")
            graded.first.click()
            assert replay.get_attribute("data-street") == street
            boxes = replay.locator(".grade")
            assert boxes.count() >= 1
            assert all(f"street {street}" in text for text in boxes.all_inner_texts())
            page.wait_for_timeout(600)
            # no rerun on the server: the step was drawn in the page (bench_pages.py times it)
            assert page.evaluate("() => window.__runs") == 0
        finally:
            browser.close()
