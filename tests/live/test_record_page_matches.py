"""The Record page with a match cap, run headless with AppTest: the setup's match cap, each
match's settlement under the totals, "End match" (and its undo), and the stored hands settling
as the page showed them.

Numbers worked out by hand in tests/live/test_live_matches.py: match 1 (hands 1 and 2) under a
match cap of 30 settles mara +55 (+5.50), jun -25 (-2.50), ivo -30 (-3.00, the cap).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import read
from tests.live import scenario as sc
from tests.live.test_record_page import record_page, save, shown_totals, texts, type_board


def _hand(app, hand: dict[str, str]) -> None:  # noqa: ANN001
    for index, name in enumerate(sc.PLAYERS):
        type_board(app, index, hand[name])
    save(app)


def test_a_match_is_ended_and_settled_on_the_record_page(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    database = tmp_path / "live.duckdb"
    app = record_page(database, monkeypatch)
    app.text_input(key="rec_setup_players").input("mara, jun, ivo").run()
    app.text_input(key="rec_setup_stake").input("0.10").run()
    app.number_input(key="rec_setup_match_cap").set_value(30).run()
    app.button(key="rec_start").click().run()
    assert not app.exception, app.exception
    assert app.button(key="rec_end_match").disabled  # nothing to end before a hand
    _hand(app, sc.HAND_1)
    html = shown_totals(app)
    assert "Match 1 — playing: 1 hand, match cap 30" in html
    _hand(app, sc.HAND_2)
    html = shown_totals(app)
    # the running money of match 1: ivo is below -30 and pays only the cap
    assert ("<td>ivo</td><td style='text-align:right'>-37</td><td style='text-align:right'>"
            "-30.00</td><td style='text-align:right'>-3.00 (cap)</td>") in html
    assert ("<td>mara</td><td style='text-align:right'>+62</td><td style='text-align:right'>"
            "+55.00</td><td style='text-align:right'>+5.50</td>") in html

    app.button(key="rec_end_match").click().run()
    assert not app.exception, app.exception
    assert texts(app.success)[0].startswith(r"Match 1 ended and settled; match 2 starts now")
    assert app.button(key="rec_end_match").label == "End match 2"
    app.button(key="rec_undo").click().run()  # undo: match 1 goes on
    assert texts(app.success)[0] == r"Match 1 goes on\: it is not ended\."
    app.button(key="rec_end_match").click().run()
    _hand(app, sc.HAND_3)
    assert "Match 2 — playing: 1 hand, match cap 30" in shown_totals(app)
    assert any(panel.label == "Matches ended (1)" for panel in app.expander)

    stored = read.matches.match_settlements(database)
    assert [(m.cap, m.hands) for m in stored] == [(30, 2), (30, 1)]
    first = {p.player: (p.settled_shown, p.money) for p in stored[0].settlement.players}
    assert {name: (str(settled), str(money)) for name, (settled, money) in first.items()} == {
        "mara": ("55.00", "5.50"), "jun": ("-25.00", "-2.50"), "ivo": ("-30.00", "-3.00")}
