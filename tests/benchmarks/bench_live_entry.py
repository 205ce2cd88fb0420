"""Benchmark: entering a 3-player hand by taps on the Record page, in Chromium at a phone's size.

Not a test. Serves ``ofc dashboard`` on a fresh database, starts a session and enters hands by
tapping every card on the card pad (390x844, touch), then Save; it prints taps and seconds per
hand in two ways, measured in the same run on the same server:

* **card pad** (what the page does): each tap shows at once in the browser; the next tap follows
  immediately; the hand is timed from the first tap until the "Hand N saved" message;
* **baseline: a server round trip per tap** (what the old picker of Streamlit buttons needed):
  after each tap, wait until the server has answered it (the pad's verdict line is current
  again) before the next tap.

::

    .venv/bin/python tests/benchmarks/bench_live_entry.py [--hands 3]

Playwright's own tap costs are in both figures; a person's thinking time is in neither. A third
figure is the pad's own response inside the page: the time from a click on a card to the card
drawn in its row (``performance.now()`` around the click handler, no Playwright in between).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.live import phone  # noqa: E402
from tests.live import scenario as sc  # noqa: E402
from tests.serving import served  # noqa: E402

HANDS = (sc.HAND_1, sc.HAND_2, sc.HAND_3)


def enter_hand(page, boards: dict[str, str], number: int, round_trip: bool) -> tuple[int, float]:  # noqa: ANN001
    """Tap a hand in (players in action order) and save it; returns (taps, seconds)."""
    from playwright.sync_api import expect

    order = [button.get_attribute("data-player")
             for button in page.locator(".st-key-rec_pad_box button[data-player]").all()]
    names = [sc.PLAYERS[int(index)] for index in order]
    taps = 0
    started = time.monotonic()
    for name in names:
        for card in phone.board_cards(boards[name]):
            phone.pad_card(page, card).tap()
            taps += 1
            if round_trip:
                expect(page.locator(".st-key-rec_pad_box .note.stale")).to_have_count(0)
    page.locator(".st-key-rec_save_button button").tap()
    taps += 1
    expect(page.get_by_text(f"Hand {number} saved:", exact=False)).to_be_visible()
    return taps, time.monotonic() - started


RESPONSE_SCRIPT = """
(cards) => {
  const box = document.querySelector('.st-key-rec_pad_box');
  const host = [...box.querySelectorAll('*')].find((node) => node.shadowRoot);
  const root = host.shadowRoot;
  const times = [];
  for (const card of cards) {
    const started = performance.now();
    root.querySelector(`button[data-card="${card}"]`).click();
    const drawn = root.querySelector('button[data-card="' + card + '"]').disabled;
    times.push({ms: performance.now() - started, drawn});
  }
  root.querySelector('button[data-player="0"]').click();
  root.querySelector('button.clear').click();
  return times;
}
"""


def pad_response(page) -> list[float]:  # noqa: ANN001
    """Milliseconds from a click on each of a board's 13 cards to the card drawn (and greyed)."""
    cards = phone.board_cards(sc.HAND_1["mara"])
    times = page.evaluate(RESPONSE_SCRIPT, cards)
    assert all(item["drawn"] for item in times), times
    return [item["ms"] for item in times]


def main() -> None:
    """Run both ways and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=3, help="hands per way (default 3)")
    arguments = parser.parse_args()
    if not phone.chromium_available():
        raise SystemExit(f"no Chromium at {phone.CHROMIUM}")
    results: dict[str, list[tuple[int, float]]] = {"card pad": [], "round trip per tap": []}
    with tempfile.TemporaryDirectory() as folder:
        database = Path(folder) / "bench.duckdb"
        with served(["dashboard", "--db", str(database)]) as (url, _), \
                phone.phone_browser() as context:
            page = phone.open_record(context, url)
            page.set_default_timeout(60_000)
            phone.start_session(page, "mara, jun, ivo")
            response = pad_response(page)
            page.wait_for_timeout(2000)  # let the server take the cleared board
            number = 1
            for repeat in range(arguments.hands):
                for way in results:  # alternate, so both see the same warm server
                    boards = HANDS[(number - 1) % len(HANDS)]
                    taps, seconds = enter_hand(page, boards, number, way != "card pad")
                    results[way].append((taps, seconds))
                    print(f"hand {number} ({way}, round {repeat + 1}): {taps} taps, "
                          f"{seconds:.2f} s", flush=True)
                    number += 1
    print()
    print(f"{'way':<22}{'taps/hand':>10}{'s/hand (median)':>17}{'s/tap':>8}")
    medians = {}
    for way, runs in results.items():
        taps = runs[0][0]
        median = statistics.median(seconds for _, seconds in runs)
        medians[way] = median
        print(f"{way:<22}{taps:>10}{median:>17.2f}{median / taps:>8.3f}")
    print(f"\ncard pad, in the page: click -> card drawn: median {statistics.median(response):.2f} "
          f"ms, max {max(response):.2f} ms over {len(response)} taps")
    print(f"baseline (round trip per tap) / card pad: "
          f"{medians['round trip per tap'] / medians['card pad']:.1f}x; 39 cards + Save = 40 taps "
          "(cards + 1)")


if __name__ == "__main__":
    main()
