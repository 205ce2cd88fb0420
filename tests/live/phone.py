"""Driving the Record page in Debian's Chromium at a phone's size (390x844, touch), for the
browser tests and the entry benchmark: start a session, tap cards on the card pad, measure every
control's height from the page's layout."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
PHONE = {"width": 390, "height": 844}
LAUNCH_ARGUMENTS = ["--headless=new", "--no-sandbox", "--disable-background-networking",
                    "--disable-gpu"]
MIN_TAP_HEIGHT = 44
EXPECT_SECONDS = 20

# Every element a finger can use, inside the page's main area and the card pad's shadow root.
# A check box or switch is hidden behind its label, and a select's text input sits inside its
# box: the label or the box is what the finger hits, so that is measured.
CONTROLS_SCRIPT = """
() => {
  const selector = 'button, input:not([type=hidden]), select, textarea, a[href], summary, ' +
    '[role=button], [role=checkbox], [role=switch], [role=combobox], [role=tab], [role=radio], ' +
    '[role=slider], [tabindex]:not([tabindex="-1"])';
  const found = new Set();
  const visit = (root) => {
    root.querySelectorAll(selector).forEach((node) => found.add(node));
    root.querySelectorAll('*').forEach((node) => { if (node.shadowRoot) visit(node.shadowRoot); });
  };
  visit(document.querySelector('[data-testid="stMain"]'));
  const measured = [];
  for (const node of found) {
    let target = node;
    if (node.tagName === 'INPUT' && (node.type === 'checkbox' || node.type === 'radio')) {
      target = node.closest('label') || node;
    } else if (node.getAttribute('role') === 'combobox') {
      target = node.closest('[role="group"]') || node;
    }
    const box = target.getBoundingClientRect();
    const style = getComputedStyle(target);
    if (box.width === 0 || box.height === 0 || style.visibility === 'hidden') continue;
    const text = (node.getAttribute('aria-label') || node.textContent || node.getAttribute('name')
                  || node.getAttribute('placeholder') || '').trim().replace(/\\s+/g, ' ');
    measured.push({control: `${node.tagName.toLowerCase()} ${text.slice(0, 40)}`,
                   height: box.height, width: box.width});
  }
  return measured;
}
"""


def chromium_available() -> bool:
    """True when Debian's Chromium is installed."""
    return os.access(CHROMIUM, os.X_OK)


@contextmanager
def phone_browser() -> Iterator[Any]:
    """A headless Chromium (Playwright) with a 390x844 touch context; yields the context."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_SECONDS * 1000)  # the machine is shared: be patient
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGUMENTS)
        try:
            context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True,
                                          has_touch=True)
            yield context
        finally:
            browser.close()


def open_record(context: Any, url: str) -> Any:
    """A new tab on the Record page."""
    from playwright.sync_api import expect

    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{url}/record")
    expect(page.get_by_role("heading", name="Record")).to_be_visible()
    # The page's own CSS (every control >= 44 px) comes in an element of its own: on a busy
    # machine the heading can be drawn before that style is in effect, and a control measured
    # then has the theme's height. Wait until the page's style applies: its column's max-width
    # is 40rem (Streamlit's own is 100%).
    page.wait_for_function(
        "() => { const page = document.querySelector('.st-key-rec_page');"
        " const rem = parseFloat(getComputedStyle(document.documentElement).fontSize);"
        " return page !== null && getComputedStyle(page).maxWidth === `${40 * rem}px`; }")
    return page


def start_session(page: Any, players: str, stake: str = "0.10") -> None:
    """Fill the setup form and start (typing names is setup, not hand entry)."""
    from playwright.sync_api import expect

    field = page.locator(".st-key-rec_setup_players input")
    field.fill(players)
    field.press("Enter")
    stake_field = page.locator(".st-key-rec_setup_stake input")
    stake_field.fill(stake)
    stake_field.press("Enter")
    expect(page.locator(".st-key-rec_setup_button")).to_be_visible()
    page.locator(".st-key-rec_start button").tap()
    expect(page.get_by_role("heading", name="Hand 1")).to_be_visible()
    expect(pad_card(page, "As")).to_be_visible()


def pad_card(page: Any, card: str) -> Any:
    """A card of the card pad (``Ah``)."""
    return page.locator(f".st-key-rec_pad_box button[data-card='{card}']")


def pad_player(page: Any, index: int) -> Any:
    """A board's tab on the card pad (by seat index)."""
    return page.locator(f".st-key-rec_pad_box button[data-player='{index}']")


def pad_note(page: Any) -> Any:
    """The verdict line under the chosen board."""
    return page.locator(".st-key-rec_pad_box .tools .note")


def settled_box(page: Any, selector: str, timeout_ms: int = 15_000) -> dict[str, float]:
    """The bounding box of ``selector`` once the layout has settled: the same box on three reads
    150 ms apart (a component's styles can arrive after its first paint on a busy machine)."""
    locator = page.locator(selector)
    boxes: list[dict[str, float] | None] = []
    waited = 0
    while waited < timeout_ms:
        boxes.append(locator.bounding_box())
        if len(boxes) >= 3 and boxes[-1] is not None and boxes[-1] == boxes[-2] == boxes[-3]:
            return boxes[-1]
        page.wait_for_timeout(150)
        waited += 150
    assert boxes and boxes[-1] is not None, f"{selector} is not on the page"
    return boxes[-1]


def board_cards(text: str) -> list[str]:
    """The cards of a board text, in the order they fill the rows."""
    return text.replace("/", " ").split()


def measure_controls(page: Any) -> list[dict[str, Any]]:
    """Every visible control on the page with its height and width in CSS pixels."""
    return page.evaluate(CONTROLS_SCRIPT)


def too_small(page: Any) -> list[dict[str, Any]]:
    """The controls shorter than 44 px."""
    return [item for item in measure_controls(page) if item["height"] < MIN_TAP_HEIGHT - 0.5]


def whole_page(page: Any, path: Path) -> None:
    """Screenshot all of the page at the phone's width (Streamlit scrolls an inner container,
    so the viewport is made as tall as the content for the shot, then restored)."""
    height = page.evaluate(
        "document.querySelector('[data-testid=stMainBlockContainer]').scrollHeight")
    page.set_viewport_size({"width": PHONE["width"], "height": int(height) + 120})
    page.wait_for_timeout(300)
    page.screenshot(path=str(path))
    page.set_viewport_size(PHONE)
