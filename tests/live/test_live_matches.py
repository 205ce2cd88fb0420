"""A live session is played in matches: the hands carry the match's id, the host ends a match
and starts the next, each match is settled with the match cap, and the running money follows.

Worked out by hand from the scenario's hands (tests/live/scenario.py) under a match cap of 30 and
0.10 a point:

* match 1 = hands 1 and 2: mara 23 + 39 = +62, jun 12 - 37 = -25, ivo -35 - 2 = -37. ivo is below
  -30: he pays 30, and the shortfall 7 comes off the only winner, mara: +55. In money mara +5.50,
  jun -2.50, ivo -3.00;
* match 2 = hand 3: mara +13, jun -22, ivo +9: nobody below -30, plain totals: +1.30, -2.20, +0.90;
* the session's running money: mara +6.80, jun -4.70, ivo -2.10 (where points x stake would say
  +7.50, -4.70, -2.80).
"""

from __future__ import annotations

import io
from decimal import Decimal
from pathlib import Path

import pytest

from pipeline import read
from pipeline.cli.record_prompt import RecordLoop, match_line
from pipeline.live.session import (
    LiveError,
    delete_last_hand,
    end_match,
    record_hand,
    reopen_match,
    session_from_mapping,
    session_mapping,
)
from pipeline.live.state import ActionKind, LiveState
from pipeline.live.storage import finish_match, persist, resume, save_entry, undo_last
from pipeline.rules.ruleset import ruleset_from_mapping
from tests.live import scenario as sc
from tests.live.test_live import new_session

CLUB = ruleset_from_mapping(
    {"name": "club-match", "scoring": {"cap": 30, "cap_scope": "match", "stake": 0.1}})


def _played():
    session = new_session(rules=CLUB, stake=None)
    session, _ = record_hand(session, sc.HAND_1)
    session, _ = record_hand(session, sc.HAND_2)
    session = end_match(session)
    session, _ = record_hand(session, sc.HAND_3)
    return session


def _money(settlement) -> dict[str, Decimal]:
    return {player.player: player.money for player in settlement.players}


def test_hands_carry_their_match_and_each_match_settles_with_the_cap() -> None:
    session = _played()
    sid = session.session_id
    assert [hand.record["match_id"] for hand in session.hands] == [sid, sid, f"{sid}-m2"]
    assert session.stake == Decimal("0.1")  # the rules' stake
    (first, one), (second, two) = session.settlements()
    assert (first, second) == (1, 2)
    assert {p.player: (p.points, p.settled, p.capped) for p in one.players} == {
        "mara": (62, 55, False), "jun": (-25, -25, False), "ivo": (-37, -30, True)}
    assert _money(one) == {"mara": Decimal("5.50"), "jun": Decimal("-2.50"),
                           "ivo": Decimal("-3.00")}
    assert _money(two) == {"mara": Decimal("1.30"), "jun": Decimal("-2.20"),
                           "ivo": Decimal("0.90")}
    assert session.money == {"mara": Decimal("6.80"), "jun": Decimal("-4.70"),
                             "ivo": Decimal("-2.10")}
    assert session.totals == {"mara": 75, "jun": -47, "ivo": -28}  # hand points never change
    assert match_line(session, 1) == ("Match 1 (2 hands, match cap 30): mara +62 → +55.00 "
                                      "(+5.50) · jun -25 (-2.50) · ivo -37 → -30.00 (-3.00) "
                                      "pays the cap")


def test_ending_a_match_is_refused_without_a_hand_and_can_be_taken_back() -> None:
    session = new_session(rules=CLUB)
    with pytest.raises(LiveError, match="match 1 has no hand yet"):
        end_match(session)
    session, _ = record_hand(session, sc.HAND_1)
    ended = end_match(session)
    assert (ended.match_number, ended.match_hands) == (2, ())
    assert reopen_match(ended) == session
    with pytest.raises(LiveError):
        reopen_match(session)
    # taking back the last hand of an ended match puts the session back into that match
    played = _played()
    before, _hand = delete_last_hand(played)
    assert before.match_number == 2 and not before.match_hands
    back, _hand = delete_last_hand(before)
    assert back.match_number == 1 and len(back.match_hands) == 1


def test_matches_survive_the_mapping() -> None:
    session = _played()
    rebuilt = session_from_mapping(session_mapping(session), rules=CLUB)
    assert [hand.match for hand in rebuilt.hands] == [1, 1, 2]
    assert rebuilt.match_number == 2 and rebuilt.money == session.money
    older = session_mapping(session)
    for hand in older["hands"]:
        del hand["match"]
    del older["match"]  # a session kept before matches: one match
    assert {hand.match for hand in session_from_mapping(older, rules=CLUB).hands} == {1}
    broken = session_mapping(session)
    broken["hands"][2]["match"] = 1
    broken["hands"][1]["match"] = 2
    with pytest.raises(LiveError, match="hand 3 is in match 1, after a hand of match 2"):
        session_from_mapping(broken, rules=CLUB)


def test_stored_matches_settle_as_the_session_does(tmp_path: Path) -> None:
    database = tmp_path / "live.duckdb"
    state = persist(database, LiveState(new_session(rules=CLUB, stake=None)))
    state, _ = save_entry(database, state, sc.HAND_1)
    state, _ = save_entry(database, state, sc.HAND_2)
    state = finish_match(database, state)
    assert state.last_action.kind is ActionKind.MATCH_ENDED
    assert state.last_action.text == "Match 1 ended"
    state, message = undo_last(database, state)
    assert (message, state.session.match_number) == ("Match 1 goes on: it is not ended.", 1)
    state = finish_match(database, state)
    state, _ = save_entry(database, state, sc.HAND_3)
    # the database, read by the read model, settles exactly as the session in memory
    stored = read.matches.match_settlements(database)
    sid = state.session.session_id
    assert [(m.match_id, set(m.settlement.players)) for m in stored] == [
        (sid if number == 1 else f"{sid}-m{number}", set(settlement.players))
        for number, settlement in state.session.settlements()]
    assert stored[0].rules == "club-match" and stored[0].cap == 30
    resumed = resume(database, state.session.session_id, rules=CLUB)
    assert resumed.session.match_number == 2 and resumed.session.money == state.session.money


def test_the_prompt_ends_a_match_and_shows_the_settlement(tmp_path: Path) -> None:
    database = tmp_path / "live.duckdb"
    session = new_session(rules=CLUB, stake=None)
    state = persist(database, LiveState(session))
    answers = [sc.HAND_1[name] for name in ("mara", "jun", "ivo")]
    answers += [sc.HAND_2[name] for name in ("jun", "ivo", "mara")]
    answers += ["match", "totals", "quit"]
    out = io.StringIO()
    RecordLoop(session, database, io.StringIO("\n".join(answers) + "\n"), out, state=state).run()
    text = out.getvalue()
    sid = session.session_id
    assert f"Match 1 ended and settled ({sid})." in text
    assert ("Match 1 (2 hands, match cap 30): mara +62 → +55.00 (+5.50) · jun -25 (-2.50) · "
            "ivo -37 → -30.00 (-3.00) pays the cap") in text
    assert f"Match 2 starts now ({sid}-m2)." in text
    assert "Totals after 2 hands: mara +62 (+5.50) · jun -25 (-2.50) · ivo -37 (-3.00)" in text


def test_a_live_match_is_paid_at_the_sessions_own_stake(tmp_path: Path) -> None:
    # standard rules carry no stake; the table agreed 0.10 a point: the stored match says so
    from pipeline.live.session import LIVE_SITE

    assert read.live.LIVE_SITE == LIVE_SITE
    database = tmp_path / "live.duckdb"
    state = persist(database, LiveState(new_session()))
    for hand in (sc.HAND_1, sc.HAND_2):
        state, _ = save_entry(database, state, hand)
    (stored,) = read.matches.match_settlements(database)
    assert stored.rules == "standard" and stored.stake == Decimal("0.10")
    assert {p.player: p.money for p in stored.settlement.players} == state.session.money == {
        "mara": Decimal("6.20"), "jun": Decimal("-2.50"), "ivo": Decimal("-3.70")}
