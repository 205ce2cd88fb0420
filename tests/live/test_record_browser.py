"""The Record page in a real browser at a phone's size (390x844, touch), with screenshots.

Serves the app with ``ofc dashboard`` on a fresh database and drives Debian's Chromium through
Playwright like a player at the table: a whole hand entered by taps only (counted), a foul shown
before saving, every control measured from the page's layout, a delete undone, and a session
that survives a reload. Screenshots go to tests/artifacts/ (ignored by git).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline import store
from tests.live import phone
from tests.live import scenario as sc
from tests.serving import served

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``ofc dashboard`` on an empty database: (base URL, database path)."""
    if not phone.chromium_available():
        pytest.skip(f"no Chromium at {phone.CHROMIUM}")
    pytest.importorskip("playwright.sync_api")
    database = tmp_path / "live.duckdb"
    with served(["dashboard", "--db", str(database)]) as (url, _):
        yield url, database


def stored_points(database: Path) -> dict[str, dict[str, int]]:
    """Points per player per hand number, as stored."""
    if not database.exists():
        return {}
    with store.open_database(database, read_only=True) as connection:  # waits for the server
        rows = connection.execute(
            "SELECT h.hand_id, r.player, r.points FROM results r JOIN hands h USING (hand_key)"
        ).fetchall()
    points: dict[str, dict[str, int]] = {}
    for hand_id, player, value in rows:
        points.setdefault(hand_id[-4:], {})[player] = value
    return points


class Taps:
    """Counts every tap made on the page."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, locator) -> None:  # noqa: ANN001
        locator.tap()
        self.count += 1


def test_a_hand_by_taps_only_shows_the_foul_before_saving(server: tuple[str, Path]) -> None:
    from playwright.sync_api import expect

    url, database = server
    ARTIFACTS.mkdir(exist_ok=True)
    with phone.phone_browser() as context:
        page = phone.open_record(context, url)
        assert not phone.too_small(page), phone.too_small(page)  # the setup form
        phone.start_session(page, "mara, jun, ivo")
        page.screenshot(path=str(ARTIFACTS / "record-phone-start.png"))

        # One player's entry and Save fit in one phone screen (measured, not assumed).
        expect(phone.pad_note(page)).to_have_text("No cards yet.")
        pad_box = phone.settled_box(page, ".st-key-rec_pad_box")
        save_box = phone.settled_box(page, ".st-key-rec_save_button button")
        assert pad_box is not None and save_box is not None
        assert save_box["y"] + save_box["height"] - pad_box["y"] <= phone.PHONE["height"] - 60, \
            (pad_box, save_box)
        assert save_box["y"] + save_box["height"] <= phone.PHONE["height"], save_box

        taps = Taps()
        cards = 0
        started = time.monotonic()
        for name in sc.PLAYERS:  # mara acts first: the pad moves on to jun, then ivo, by itself
            for card in phone.board_cards(sc.HAND_1[name]):
                taps(phone.pad_card(page, card))
                cards += 1
        tapped = time.monotonic() - started
        # Every card shows at once in the browser; used cards are disabled.
        expect(phone.pad_card(page, "Qs")).to_be_disabled()
        expect(phone.pad_player(page, 0)).to_contain_text("13/13")
        expect(phone.pad_player(page, 2)).to_contain_text("13/13")
        # ivo's board is a foul: the verdict shows before anything is saved.
        expect(phone.pad_note(page)).to_have_text(
            "Foul: middle (full house, eights full of fives) beats bottom (seven high)")
        expect(page.locator(".st-key-rec_save").get_by_text("Foul:", exact=False)).to_have_count(0)
        assert stored_points(database) == {}
        taps(phone.pad_player(page, 0))
        expect(phone.pad_note(page)).to_have_text(
            "royalties 7/0/6 = 13 · enters Fantasyland (14 cards)")
        page.screenshot(path=str(ARTIFACTS / "record-phone-entry.png"))

        # Every control is at least 44 px tall, measured from the layout: the pad, the fields,
        # the toggles behind "More" (opened), the result panel and the end-of-session question.
        assert phone.too_small(page) == []
        taps(page.locator(".st-key-rec_more summary"))
        expect(page.get_by_text("jun plays Fantasyland (14 cards)")).to_be_visible()
        assert phone.too_small(page) == []

        taps(page.locator(".st-key-rec_save_button button"))
        expect(page.get_by_text("Hand 1 saved: mara +23, jun +12, ivo -35.", exact=False)
               ).to_be_visible()
        elapsed = time.monotonic() - started
        hand_taps = taps.count - 2  # the two taps above that only looked (a tab, "More")
        assert hand_taps <= cards + 2, (hand_taps, cards)
        print(f"\nA 3-player hand by taps: {cards} cards, {hand_taps} taps, "
              f"{tapped:.1f} s of taps, {elapsed:.1f} s until saved")
        expect(page.get_by_role("heading", name="Hand 2")).to_be_visible()
        expect(page.get_by_text("mara plays Fantasyland (14 cards)")).to_be_visible()
        pad_box = phone.settled_box(page, ".st-key-rec_pad_box")
        save_box = phone.settled_box(page, ".st-key-rec_save_button button")
        assert save_box["y"] + save_box["height"] - pad_box["y"] <= phone.PHONE["height"] - 60
        expect(page.locator(".st-key-rec_fl_0 input")).to_be_checked()
        page.locator(".st-key-rec_page details summary", has_text="hand 1 result").tap()
        page.locator(".st-key-rec_end button").tap()  # nothing entered: ends without a question
        expect(page.get_by_role("heading", name="New live session")).to_be_visible()
        phone.whole_page(page, ARTIFACTS / "record-phone-after-end.png")
        assert page.evaluate("document.documentElement.scrollWidth") <= phone.PHONE["width"]
    assert stored_points(database) == {"0001": sc.HAND_1_POINTS}


def test_a_deleted_hand_is_undone_and_controls_stay_thumb_sized(server: tuple[str, Path]) -> None:
    from playwright.sync_api import expect

    url, database = server
    with phone.phone_browser() as context:
        page = phone.open_record(context, url)
        phone.start_session(page, "mara, jun, ivo")
        # "top 4/3" shows all four cards, the fourth marked as extra.
        field = page.locator(".st-key-rec_type_0 input")
        field.fill("Qs Qh 5d 2c / Kc")
        field.press("Enter")
        top = page.locator(".st-key-rec_pad_box button[data-row='top']")
        expect(top).to_contain_text("top 4/3")
        expect(top.locator(".chip.extra")).to_have_text("2♣")
        expect(top.locator(".tag")).to_have_text("1 extra")
        expect(top.locator(".chip:not(.slot)")).to_have_count(4)
        for index, name in enumerate(sc.PLAYERS):
            field = page.locator(f".st-key-rec_type_{index} input")
            field.fill(sc.HAND_1[name].replace(" / ", " "))  # 13 cards, no separators
            field.press("Enter")
        expect(phone.pad_player(page, 2)).to_contain_text("13/13")
        page.locator(".st-key-rec_save_button button").tap()
        expect(page.get_by_role("heading", name="Hand 2")).to_be_visible()
        assert stored_points(database) == {"0001": sc.HAND_1_POINTS}

        page.locator(".st-key-rec_delete button").tap()
        expect(page.get_by_text("Hand 1 deleted: its boards are back in the fields",
                                exact=False)).to_be_visible()
        expect(page.get_by_role("heading", name="Hand 1")).to_be_visible()
        for index in range(3):
            expect(phone.pad_player(page, index)).to_contain_text("13/13")
        assert stored_points(database) == {}
        assert phone.too_small(page) == []  # with the undo bar
        page.screenshot(path=str(ARTIFACTS / "record-phone-deleted.png"))

        page.locator(".st-key-rec_undo button").tap()
        expect(page.get_by_text("Hand 1 is back.")).to_be_visible()
        expect(page.get_by_role("heading", name="Hand 2")).to_be_visible()
        assert stored_points(database) == {"0001": sc.HAND_1_POINTS}

        # Ending with cards entered asks first (primary action on the right: keep recording).
        phone.pad_card(page, "2s").tap()
        expect(phone.pad_player(page, 1)).to_contain_text("1/13")
        page.locator(".st-key-rec_end button").tap()
        expect(page.get_by_text("Hand 2 has 1 card entered and not saved", exact=False)
               ).to_be_visible()
        assert phone.too_small(page) == []
        keep = page.locator(".st-key-rec_end_no button").bounding_box()
        lose = page.locator(".st-key-rec_end_yes button").bounding_box()
        assert keep is not None and lose is not None and keep["x"] > lose["x"]


def test_a_session_survives_a_reload(server: tuple[str, Path]) -> None:
    from playwright.sync_api import expect

    url, database = server
    with phone.phone_browser() as context:
        page = phone.open_record(context, url)
        phone.start_session(page, "mara, jun, ivo")
        for name in sc.PLAYERS:
            for card in phone.board_cards(sc.HAND_1[name]):
                phone.pad_card(page, card).tap()
        page.locator(".st-key-rec_save_button button").tap()
        expect(page.get_by_role("heading", name="Hand 2")).to_be_visible()
        # Part of hand 2 tapped in, then the phone drops the tab.
        for card in phone.board_cards(sc.HAND_2["jun"])[:4]:
            phone.pad_card(page, card).tap()
        # jun acts first on hand 2 (the button moved to mara): his top and one middle card.
        expect(phone.pad_note(page)).to_have_text("To go: middle 4 more, bottom 5 more")
        page.wait_for_timeout(500)  # the draft reaches the database with the pad's report

        page.reload()
        expect(page.get_by_role("heading", name="Record")).to_be_visible()
        offer = page.locator(".st-key-rec_offer_0")
        expect(offer).to_contain_text("mara, jun, ivo")
        expect(offer).to_contain_text("1 hand · mara +23, jun +12, ivo -35")
        page.screenshot(path=str(ARTIFACTS / "record-phone-resume.png"))
        assert phone.too_small(page) == []
        offer.locator("button").tap()
        expect(page.get_by_role("heading", name="Hand 2")).to_be_visible()
        expect(page.get_by_text("Resumed session", exact=False)).to_be_visible()
        expect(phone.pad_player(page, 1)).to_contain_text("4/13")
        expect(page.locator(".st-key-rec_fl_0 input")).to_be_checked()  # mara's mark is kept
        expect(page.locator(".rec-totals")).to_contain_text("+2.30")

        # Another device sees the same offer.
        other = phone.open_record(context, url)
        expect(other.locator(".st-key-rec_offer_0")).to_contain_text("1 hand")


def in_view(page, selector: str) -> bool:  # noqa: ANN001
    """True when the element is wholly on the phone's screen (no scrolling needed)."""
    box = phone.settled_box(page, selector)
    return box["y"] >= 0 and box["y"] + box["height"] <= phone.PHONE["height"]


SCROLL_DOWN = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  main.scrollTop = main.scrollHeight;
  return main.scrollTop;
}"""


def test_the_recorder_forgives(server: tuple[str, Path]) -> None:
    """At the table: setup without knowing to press Enter, a foul seen from every tab, a board
    cleared only on a second tap and then brought back, a double tap on Save saving once, the
    tabs and running totals back in view after an action taken low on the page, and taps kept
    through reloads that come right after them."""
    from playwright.sync_api import expect

    url, database = server
    ARTIFACTS.mkdir(exist_ok=True)
    with phone.phone_browser() as context:
        page = phone.open_record(context, url)
        # the heading is not under Streamlit's header
        header = page.locator('[data-testid="stHeader"]').bounding_box()
        heading = phone.settled_box(page, ".st-key-rec_page h1")
        assert header is not None and heading["y"] >= header["y"] + header["height"] - 1
        # the button picker is there at once; names typed without Enter still start the session
        expect(page.locator(".st-key-rec_setup_button")).to_be_visible()
        page.locator(".st-key-rec_setup_players input").fill("mara, jun, ivo")
        page.locator(".st-key-rec_start button").tap()
        expect(page.get_by_role("heading", name="Hand 1")).to_be_visible()
        expect(page.get_by_text("Button ivo · mara acts first")).to_be_visible()

        for name in sc.PLAYERS:
            for card in phone.board_cards(sc.HAND_1[name]):
                phone.pad_card(page, card).tap()
        # ivo fouls: his tab says so, and mara's board shows it too
        expect(phone.pad_player(page, 2)).to_contain_text("13/13 · BTN · foul")
        phone.pad_player(page, 0).tap()
        other = page.locator(".st-key-rec_pad_box .note.other")
        expect(other).to_contain_text("ivo: Foul: middle (full house")

        # clearing a board: far from the take-back key, asks first, can be undone
        back = phone.settled_box(page, ".st-key-rec_pad_box button.back")
        clear_button = page.locator(".st-key-rec_pad_box button.clear")
        clear_box = phone.settled_box(page, ".st-key-rec_pad_box button.clear")
        apart = max(clear_box["y"] - (back["y"] + back["height"]),
                    back["y"] - (clear_box["y"] + clear_box["height"]),
                    clear_box["x"] - (back["x"] + back["width"]),
                    back["x"] - (clear_box["x"] + clear_box["width"]))
        assert apart >= 44, (back, clear_box)
        clear_button.tap()
        expect(clear_button).to_have_text("Tap again to clear")
        expect(phone.pad_player(page, 0)).to_contain_text("13/13")
        clear_button.tap()
        expect(phone.pad_player(page, 0)).to_contain_text("0/13")
        page.locator(".st-key-rec_pad_box button.undo-clear").tap()
        expect(phone.pad_player(page, 0)).to_contain_text("13/13")
        assert phone.too_small(page) == []

        # a double tap on Save, from low on the page: saved once, its message kept, the tabs
        # and the running totals back in view
        assert page.evaluate(SCROLL_DOWN) > 0
        page.locator(".st-key-rec_save_button button").evaluate(
            "(button) => { button.click(); setTimeout(() => button.click(), 80); }")
        expect(page.get_by_role("heading", name="Hand 2")).to_be_visible()
        expect(page.get_by_text("Hand 1 saved: mara +23, jun +12, ivo -35.", exact=False)
               ).to_be_visible()
        page.wait_for_timeout(1500)  # the second tap has been answered
        expect(page.get_by_text("Not saved", exact=False)).to_have_count(0)
        assert stored_points(database) == {"0001": sc.HAND_1_POINTS}
        expect(page.locator(".st-key-rec_pad_box .summary")).to_have_text(
            "After hand 1: mara +23 · jun +12 · ivo -35")
        assert in_view(page, ".st-key-rec_pad_box .summary")
        assert in_view(page, ".st-key-rec_pad_box button[data-player='1']")
        page.screenshot(path=str(ARTIFACTS / "record-phone-after-save.png"))
        # a Fantasyland hand is coming: no surprise when the button stays afterwards
        assert in_view(page, ".st-key-rec_delete button")  # Edit and Delete in reach

        # delete (from low on the page), then undo: the top comes back each time
        page.evaluate(SCROLL_DOWN)
        page.locator(".st-key-rec_delete button").dispatch_event("click")
        expect(page.get_by_text("Hand 1 deleted: its boards", exact=False)).to_be_visible()
        assert in_view(page, ".st-key-rec_pad_box button[data-player='0']")
        page.evaluate(SCROLL_DOWN)
        page.locator(".st-key-rec_undo button").dispatch_event("click")
        expect(page.get_by_text("Hand 1 is back.")).to_be_visible()
        assert in_view(page, ".st-key-rec_pad_box .summary")
        assert in_view(page, ".st-key-rec_pad_box button[data-player='0']")

        # a tap, then a reload within milliseconds, four times over: no tap is lost
        cards = phone.board_cards(sc.HAND_2["jun"])[:4]
        for count, card in enumerate(cards, start=1):
            phone.pad_card(page, card).tap()
            page.reload()
            expect(page.get_by_role("heading", name="Record")).to_be_visible()
            page.locator(".st-key-rec_offer_0 button").tap()
            expect(page.get_by_role("heading", name="Hand 2")).to_be_visible()
            expect(phone.pad_player(page, 1)).to_contain_text(f"{count}/13")
        page.wait_for_timeout(800)  # the restored taps reached the server
        page.reload()
        page.locator(".st-key-rec_offer_0 button").tap()
        expect(phone.pad_player(page, 1)).to_contain_text(f"{len(cards)}/13")
