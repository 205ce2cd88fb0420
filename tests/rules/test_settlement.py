"""Settling a match (docs/rules.md, section 9): the worked examples, derived by hand, and the
properties every settlement keeps.

Worked examples (the numbers of docs/rules.md; each test is named there):

* one loser capped — cap 30, ann +30, bob +15, cy -45: cy pays 30; the shortfall 15 is taken
  from ann and bob in proportion to 30 : 15, so 10 and 5: ann +20, bob +10, cy -30;
* two losers capped, with rounding — cap 25, ann +50, bob +20, cy -40, dee -30: cy and dee pay
  25 each (shortfall 15 + 5 = 20); ann and bob share 50 as 50 : 20, that is 250/7 and 100/7 =
  35.714... and 14.285...; shown to the hundredth 35.71 and 14.29 (the hundredth left over goes
  to the larger remainder, bob's .5714); in money at 0.10 a point 357.14... and 142.85... cents
  become 3.57 and 1.43;
* nobody capped — cap 50, ann +30, bob -10, cy -20: plain totals;
* a match cap with a per-hand cap — hand cap 15, match cap 20, ann and bob heads-up over three
  hands played with the boards of tests/rules/test_scoring.py: R v P (ann +21, capped to 15 in
  the hand), F v P (ann fouls: bob +6), R v Q (ann +21, capped to 15): ann +24, bob -24; at the
  end of the match bob pays the match cap 20 and ann receives 20.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.rules.ruleset import CapScope, RulesError, ruleset_from_mapping, ruleset_to_mapping
from pipeline.rules.scoring import score_hand
from pipeline.rules.settlement import (
    MatchTotal,
    SettlementError,
    apportion,
    match_cap_of,
    money_unit,
    settle_match,
    settle_under_rules,
)
from tests.rules.test_scoring import F, P, Q, R


def _summary(settlement):
    return {p.player: (p.settled, p.settled_shown, p.money, p.capped) for p in settlement.players}


# --- worked examples ---------------------------------------------------------------------------
def test_settle_one_loser_capped():
    settled = settle_match({"ann": 30, "bob": 15, "cy": -45}, cap=30, stake="0.10")
    assert _summary(settled) == {
        "ann": (Fraction(20), Decimal("20.00"), Decimal("2.00"), False),
        "bob": (Fraction(10), Decimal("10.00"), Decimal("1.00"), False),
        "cy": (Fraction(-30), Decimal("-30.00"), Decimal("-3.00"), True),
    }
    assert settled.shortfall == 15


def test_settle_two_losers_capped_with_rounding():
    settled = settle_match({"ann": 50, "bob": 20, "cy": -40, "dee": -30}, cap=25, stake=0.1)
    assert _summary(settled) == {
        "ann": (Fraction(250, 7), Decimal("35.71"), Decimal("3.57"), False),
        "bob": (Fraction(100, 7), Decimal("14.29"), Decimal("1.43"), False),
        "cy": (Fraction(-25), Decimal("-25.00"), Decimal("-2.50"), True),
        "dee": (Fraction(-25), Decimal("-25.00"), Decimal("-2.50"), True),
    }
    assert settled.shortfall == 20
    assert settled.money_unit == Decimal("0.01")


def test_settle_nobody_capped_is_the_plain_totals():
    settled = settle_match({"ann": 30, "bob": -10, "cy": -20}, cap=50, stake="0.25")
    assert _summary(settled) == {
        "ann": (Fraction(30), Decimal("30.00"), Decimal("7.50"), False),
        "bob": (Fraction(-10), Decimal("-10.00"), Decimal("-2.50"), False),
        "cy": (Fraction(-20), Decimal("-20.00"), Decimal("-5.00"), False),
    }
    assert settled.shortfall == 0


def test_settle_a_loser_exactly_at_the_cap_pays_it_and_is_not_capped():
    settled = settle_match({"ann": 30, "bob": -30}, cap=30, stake=1)
    assert [(p.settled, p.capped) for p in settled.players] == [(30, False), (-30, False)]


def test_settle_match_cap_with_a_per_hand_cap():
    rules = ruleset_from_mapping(
        {"name": "club", "scoring": {"cap": 20, "cap_scope": "match", "hand_cap": 15, "stake": 1}})
    assert (rules.scoring.cap, rules.scoring.match_cap, match_cap_of(rules)) == (15, 20, 20)
    # ann's board first, bob's second; ann is seat 1 and acts first
    hands = [score_hand([R, P], rules, [0, 1]), score_hand([F, P], rules, [0, 1]),
             score_hand([R, Q], rules, [0, 1])]
    assert [hand.points for hand in hands] == [(15, -15), (-6, 6), (15, -15)]
    totals = {"ann": sum(hand.points[0] for hand in hands),
              "bob": sum(hand.points[1] for hand in hands)}
    assert totals == {"ann": 24, "bob": -24}
    settled = settle_under_rules(totals, rules)
    assert _summary(settled) == {
        "ann": (Fraction(20), Decimal("20.00"), Decimal("20.00"), False),
        "bob": (Fraction(-20), Decimal("-20.00"), Decimal("-20.00"), True),
    }


def test_a_match_cap_leaves_the_hand_points_as_they_are():
    # the match cap acts only on the settlement: every hand scores as without any cap
    plain = ruleset_from_mapping({"name": "plain"})
    match = ruleset_from_mapping({"name": "match", "scoring": {"cap": 20, "cap_scope": "match"}})
    for boards in ([R, P], [F, P], [R, Q], [P, Q, R, F]):
        order = list(range(len(boards)))
        assert score_hand(boards, match, order).points == score_hand(boards, plain, order).points
    totals = {"ann": 21 - 6 + 21, "bob": -36}
    assert settle_under_rules(totals, match).player("bob").settled == -20


def test_a_per_hand_cap_settles_a_match_to_its_totals():
    per_hand = ruleset_from_mapping({"scoring": {"cap": 15, "stake": 0.5}})
    assert match_cap_of(per_hand) == 0
    settled = settle_under_rules({"ann": 45, "bob": -45}, per_hand)
    assert [p.money for p in settled.players] == [Decimal("22.50"), Decimal("-22.50")]


def test_stake_with_more_decimals_than_a_cent_settles_in_its_own_unit():
    settled = settle_match({"ann": 7, "bob": 5, "cy": -12}, cap=10, stake="0.005")
    assert settled.money_unit == Decimal("0.001")
    # cy pays 10 x 0.005 = 0.050 exactly; 10 points shared 7 : 5 = 35/6 and 25/6 points
    assert [p.money for p in settled.players] == [Decimal("0.029"), Decimal("0.021"),
                                                   Decimal("-0.050")]


# --- rules files -------------------------------------------------------------------------------
def test_rules_mapping_round_trip_keeps_the_caps():
    for mapping in ({"scoring": {"cap": 30}},
                    {"scoring": {"cap": 30, "cap_scope": "match", "hand_cap": 12, "stake": 0.2}},
                    {"extends": "progressive", "fantasyland": {"entry_top_pair": "K"}}):
        rules = ruleset_from_mapping(mapping, "friday")
        assert ruleset_from_mapping(ruleset_to_mapping(rules)) == rules
    assert ruleset_from_mapping({"scoring": {"cap_scope": "match"}}).scoring.cap_scope is \
        CapScope.MATCH


@pytest.mark.parametrize(("scoring", "message"), [
    ({"cap": 30, "hand_cap": 10}, r'scoring\.hand_cap: only with cap_scope = "match"'),
    ({"cap": 30, "cap_scope": "match", "match_hands": 10}, r"scoring\.match_hands"),
    ({"cap_scope": "match", "hand_cap": -1}, r"scoring\.hand_cap: -1 is outside"),
    ({"cap_scope": "game"}, r"scoring\.cap_scope: expected one of hand, match"),
])
def test_bad_cap_keys_are_refused_naming_the_key(scoring, message):
    with pytest.raises(RulesError, match=message):
        ruleset_from_mapping({"scoring": scoring})


# --- bad totals --------------------------------------------------------------------------------
def test_totals_that_do_not_sum_to_zero_are_refused():
    with pytest.raises(SettlementError, match=r"sum to \+5"):
        settle_match({"ann": 10, "bob": -5}, cap=3)


def test_a_player_twice_is_refused():
    with pytest.raises(SettlementError, match="'ann' appears twice"):
        settle_match([MatchTotal("ann", 1, 5), MatchTotal("ann", 1, -5)])


@pytest.mark.parametrize("stake", ["-1", "nan", "inf", "ten", "1e400", "1000000.01",
                                   "0.0000000000001"])
def test_a_bad_stake_is_refused(stake):
    """Also a stake past a rules file's largest (1,000,000 per point; 1e400 used to stop
    with decimal.InvalidOperation) or finer than twelve decimals."""
    with pytest.raises(SettlementError, match="stake"):
        settle_match({"ann": 1, "bob": -1}, stake=stake)


def test_no_stake_settles_to_zero_money_without_a_sign():
    """Points only (stake 0): every player's money is 0.00, the loser's too (it printed as
    ``-0.00`` in ``ofc settle``)."""
    settled = settle_match({"ann": 45, "bob": -45})
    assert [str(p.money) for p in settled.players] == ["0.00", "0.00"]
    capped = settle_match({"ann": 45, "bob": -45}, cap=30)
    assert [str(p.money) for p in capped.players] == ["0.00", "0.00"]


@pytest.mark.parametrize(("stake", "message"), [
    (1e-13, "has more than 12 decimals"), (float("nan"), "must be a finite number"),
    (1_000_001, "at most 1,000,000"), ("0.1", "expected a number")])
def test_a_rules_file_stake_has_the_bounds_of_a_settlement(stake, message):
    """A rules file is refused a stake no settlement could pay, with the same words."""
    with pytest.raises(RulesError, match=f"scoring\\.stake: .*{message}"):
        ruleset_from_mapping({"scoring": {"stake": stake}})
    assert ruleset_from_mapping({"scoring": {"stake": 1e-12}}).scoring.stake == 1e-12


def test_the_largest_and_finest_stakes_settle_exactly():
    """Money is worked out with the digits it needs: the largest stake against a big total,
    and the finest stake, both exactly (quantizing at 28 digits used to fail)."""
    settled = settle_match({"ann": 123_456_789_012, "bob": -123_456_789_012},
                           stake="999999.000000000001")
    assert [p.money for p in settled.players] == [
        Decimal("123456665555210988.123456789012"),
        Decimal("-123456665555210988.123456789012")]
    fine = settle_match({"ann": 7, "bob": 5, "cy": -12}, cap=10, stake="999999.000000000001")
    assert fine.money_unit == Decimal("1e-12")
    assert sum(p.money for p in fine.players) == 0
    assert fine.players[2].money == Decimal("-9999990.00000000001")


def test_a_rounding_tie_goes_to_the_same_player_in_any_order():
    # dee pays the cap 50 of 60; three equal winners share 50: 16.666... each, 16.66 rounded
    # down, two hundredths left over and a three-way tie: they go to the names that sort first,
    # whatever the order the totals come in
    totals = {"cy": 20, "ann": 20, "bob": 20, "dee": -60}
    for order in (["cy", "ann", "bob", "dee"], ["dee", "bob", "ann", "cy"]):
        settled = settle_match({name: totals[name] for name in order}, cap=50, stake=1)
        assert {p.player: (p.settled_shown, p.money) for p in settled.players} == {
            "ann": (Decimal("16.67"), Decimal("16.67")), "bob": (Decimal("16.67"), Decimal("16.67")),
            "cy": (Decimal("16.66"), Decimal("16.66")), "dee": (Decimal("-50.00"), Decimal("-50.00"))}


def test_money_unit_and_apportion():
    assert money_unit(Decimal("0.10")) == Decimal("0.01")
    assert money_unit(Decimal(0)) == Decimal("0.01")
    assert apportion([Fraction(1, 3)] * 3, Fraction(1, 100)) == [
        Fraction(34, 100), Fraction(33, 100), Fraction(33, 100)]
    with pytest.raises(SettlementError):
        apportion([Fraction(1, 3)], Fraction(1, 100))


# --- properties --------------------------------------------------------------------------------
@st.composite
def matches(draw):
    """Zero-sum match totals for 2-6 players, a cap (sometimes 0), a stake."""
    count = draw(st.integers(2, 6))
    points = draw(st.lists(st.integers(-500, 500), min_size=count - 1, max_size=count - 1))
    points.append(-sum(points))
    totals = [MatchTotal(f"p{index}", draw(st.integers(1, 40)), value)
              for index, value in enumerate(points)]
    cap = draw(st.one_of(st.just(0), st.integers(1, 600)))
    stake = draw(st.sampled_from(["0", "0.01", "0.1", "0.25", "1", "2.5", "0.005", "0.333"]))
    return totals, cap, stake


@settings(max_examples=400, deadline=None)
@given(matches())
def test_settlement_properties(match):
    totals, cap, stake = match
    settled = settle_match(totals, cap=cap, stake=stake)
    stake_value = Decimal(stake)
    by_name = {total.player: total for total in totals}
    # zero sum: exact points, shown points, money
    assert sum(p.settled for p in settled.players) == 0
    assert sum(p.settled_shown for p in settled.players) == 0
    assert sum(p.money for p in settled.players) == 0
    for player in settled.players:
        total = by_name[player.player]
        assert (player.hands, player.points) == (total.hands, total.points)  # never changed
        # money is the settled points times the stake, within one money unit
        assert abs(player.money - Decimal(player.settled.numerator) / player.settled.denominator
                   * stake_value) < settled.money_unit
        if total.points < 0:
            # cap respected; a loser pays exactly min(loss, cap), in points and in money
            paid = min(-total.points, cap) if cap else -total.points
            assert player.settled == -paid
            assert player.money == -paid * stake_value
            assert player.capped == (bool(cap) and -total.points > cap)
        else:
            # winners never receive more than their winnings, nor lose anything
            assert 0 <= player.settled <= total.points
            assert 0 <= player.money <= total.points * stake_value
            assert 0 <= player.settled_shown <= total.points
    if not cap or all(total.points >= -cap for total in totals):
        assert [p.settled for p in settled.players] == [t.points for t in totals]
        assert settled.shortfall == 0
    else:
        # the shortfall is taken from the winners in proportion to their winnings
        winners = [(p, by_name[p.player].points) for p in settled.players
                   if by_name[p.player].points > 0]
        winnings = sum(points for _p, points in winners)
        for player, points in winners:
            assert points - player.settled == settled.shortfall * points / winnings
