"""Rule sets (docs/rules.md: "everything marked house rule must be a setting"): presets, the
standard tables as data, building from mappings with ``extends``, rules files validated against
schemas/rules.schema.json, and errors that name the offending key."""

from __future__ import annotations

import dataclasses
import os

import pytest

from pipeline.records.rules_file import load_rules_file, resolve_rules
from pipeline.rules.ruleset import (
    PRESET_NAMES,
    RoyaltyMode,
    RulesError,
    ScoringMethod,
    preset,
    ruleset_from_mapping,
)
from pipeline.rules.values import HandClass, LowClass

RANKS = "23456789TJQKA"


def test_presets_named_in_the_spec_exist():
    for name in ("standard", "progressive", "flat-trips", "poker-arena-pineapple"):
        assert name in PRESET_NAMES
        assert preset(name).name == name


def test_unknown_preset_raises_naming_it():
    with pytest.raises(RulesError, match="no-such-preset"):
        preset("no-such-preset")


def test_standard_scoring():
    scoring = preset("standard").scoring
    assert scoring.method is ScoringMethod.ONE_SIX
    assert scoring.scoop_bonus == 3
    assert scoring.royalty_mode is RoyaltyMode.NETTED
    assert scoring.cap == 0


def test_standard_royalty_tables_are_the_spec_table():
    royalties = preset("standard").royalties
    bottom = {HandClass.STRAIGHT: 2, HandClass.FLUSH: 4, HandClass.FULL_HOUSE: 6, HandClass.QUADS: 10,
              HandClass.STRAIGHT_FLUSH: 15, HandClass.ROYAL_FLUSH: 25}
    middle = {HandClass.TRIPS: 2, HandClass.STRAIGHT: 4, HandClass.FLUSH: 8, HandClass.FULL_HOUSE: 12,
              HandClass.QUADS: 20, HandClass.STRAIGHT_FLUSH: 30, HandClass.ROYAL_FLUSH: 50}
    for hand_class in HandClass:
        assert royalties.bottom[hand_class] == bottom.get(hand_class, 0), hand_class
        assert royalties.middle[hand_class] == middle.get(hand_class, 0), hand_class
    # 66 = 1 ... AA = 9, nothing below; 222 = 10 ... AAA = 22
    assert royalties.top_pairs == (0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
    assert royalties.top_trips == tuple(range(10, 23))
    low = {LowClass.NINE_LOW: 1, LowClass.EIGHT_LOW: 2, LowClass.SEVEN_LOW: 4, LowClass.PERFECT_LOW: 8}
    for low_class in LowClass:
        assert royalties.lowball_middle[low_class] == low.get(low_class, 0), low_class


def test_standard_fantasyland():
    fl = preset("standard").fantasyland
    assert fl.enabled
    assert fl.entry_top_pair == RANKS.index("Q")
    assert not fl.progressive
    assert (fl.cards_classic, fl.cards_pineapple) == (13, 14)
    assert fl.progressive_cards == (14, 15, 16, 17)
    assert fl.stay_top_trips and fl.stay_middle_full_house and fl.stay_bottom_quads
    assert not fl.stay_requalify
    assert fl.lowball_entry_top_pair == RANKS.index("K")
    assert (fl.lowball_cards, fl.lowball_cards_both) == (14, 15)


def test_preset_differences():
    standard = preset("standard")
    progressive = preset("progressive")
    assert progressive.fantasyland.progressive
    assert progressive.royalties == standard.royalties and progressive.scoring == standard.scoring
    flat = preset("flat-trips")
    assert flat.royalties.top_trips == (20,) * 13
    assert flat.royalties.middle[HandClass.TRIPS] == 0
    assert flat.royalties.top_pairs == standard.royalties.top_pairs
    assert flat.royalties.bottom == standard.royalties.bottom
    arena = preset("poker-arena-pineapple")
    assert not arena.fantasyland.stay_middle_full_house


def test_rule_sets_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        preset("standard").scoring.cap = 5  # type: ignore[misc]


# --- mappings --------------------------------------------------------------------------------
def test_mapping_extends_a_preset_and_overrides_only_what_it_names():
    rules = ruleset_from_mapping(
        {"name": "mine", "extends": "flat-trips", "scoring": {"scoop_bonus": 6, "cap": 30}}
    )
    assert rules.name == "mine"
    assert rules.scoring.scoop_bonus == 6
    assert rules.scoring.cap == 30
    assert rules.scoring.method is ScoringMethod.ONE_SIX  # untouched
    assert rules.royalties.top_trips == (20,) * 13  # from flat-trips


def test_mapping_table_merges_key_by_key():
    rules = ruleset_from_mapping({"royalties": {"top": {"pairs": {"A": 12}}}})
    assert rules.royalties.top_pairs == (0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 12)
    assert rules.royalties.top_trips == tuple(range(10, 23))


def test_empty_mapping_is_standard():
    rules = ruleset_from_mapping({})
    standard = preset("standard")
    assert (rules.scoring, rules.royalties, rules.fantasyland) == (
        standard.scoring, standard.royalties, standard.fantasyland
    )


@pytest.mark.parametrize(
    ("mapping", "key"),
    [
        ({"bogus": 1}, "bogus"),
        ({"scoring": {"bogus": 1}}, "scoring.bogus"),
        ({"scoring": {"cap": "x"}}, "scoring.cap"),
        ({"scoring": {"cap": -1}}, "scoring.cap"),
        ({"scoring": {"scoop_bonus": True}}, "scoring.scoop_bonus"),
        ({"scoring": {"method": "3-3"}}, "scoring.method"),
        ({"scoring": {"royalties": "loser-only"}}, "scoring.royalties"),
        ({"scoring": 5}, "scoring"),
        ({"extends": "nope"}, "extends"),
        ({"extends": 3}, "extends"),
        ({"royalties": {"middle": {"bogus": 1}}}, "royalties.middle.bogus"),
        ({"royalties": {"bottom": {"flush": "4"}}}, "royalties.bottom.flush"),
        ({"royalties": {"top": {"pairs": {"Z": 1}}}}, "royalties.top.pairs"),
        ({"royalties": {"lowball_middle": {"six_low": 1}}}, "royalties.lowball_middle.six_low"),
        ({"fantasyland": {"entry_top_pair": "X"}}, "fantasyland.entry_top_pair"),
        ({"fantasyland": {"cards_pineapple": 20}}, "fantasyland.cards_pineapple"),
        ({"fantasyland": {"stay_requalify": "yes"}}, "fantasyland.stay_requalify"),
        ({"fantasyland": {"progressive_cards": {"J": 14}}}, "fantasyland.progressive_cards"),
    ],
)
def test_mapping_errors_name_the_key(mapping, key):
    with pytest.raises(RulesError) as error:
        ruleset_from_mapping(mapping)
    assert key in str(error.value)


# --- rules files -----------------------------------------------------------------------------
EVERY_KEY = """\
name = "everything"
description = "every key of schemas/rules.schema.json"
extends = "standard"

[scoring]
method = "2-4"
scoop_bonus = 6
royalties = "winner-only"
cap = 40
cap_scope = "hand"
hand_cap = 0
match_hands = 0
stake = 0.1

[royalties.top.pairs]
"6" = 2
A = 10
[royalties.top.trips]
"2" = 11
[royalties.middle]
high_card = 0
pair = 0
two_pair = 0
trips = 3
straight = 5
flush = 9
full_house = 13
quads = 21
straight_flush = 31
royal_flush = 51
[royalties.bottom]
high_card = 0
pair = 0
two_pair = 0
trips = 1
straight = 3
flush = 5
full_house = 7
quads = 11
straight_flush = 16
royal_flush = 26
[royalties.lowball_middle]
ten_low = 1
nine_low = 2
eight_low = 3
seven_low = 5
perfect_low = 9

[fantasyland]
enabled = true
entry_top_pair = "K"
progressive = true
cards_classic = 13
cards_pineapple = 15
stay_top_trips = false
stay_middle_full_house = false
stay_bottom_quads = false
stay_requalify = true
stay_cards_classic = 13
stay_cards_pineapple = 15
lowball_entry_top_pair = "A"
lowball_cards = 15
lowball_cards_both = 16
[fantasyland.progressive_cards]
Q = 14
K = 14
A = 15
trips = 16
"""


def test_rules_file_with_every_key(tmp_path):
    path = tmp_path / "all.toml"
    path.write_text(EVERY_KEY, encoding="utf-8")
    rules = load_rules_file(path)
    assert rules.name == "everything"
    assert rules.scoring.method is ScoringMethod.TWO_FOUR
    assert rules.scoring.scoop_bonus == 6
    assert rules.scoring.royalty_mode is RoyaltyMode.WINNER_ONLY
    assert rules.scoring.cap == 40
    assert rules.scoring.stake == pytest.approx(0.1)
    assert rules.royalties.top_pairs[RANKS.index("6")] == 2
    assert rules.royalties.top_pairs[RANKS.index("A")] == 10
    assert rules.royalties.top_pairs[RANKS.index("K")] == 8  # untouched
    assert rules.royalties.top_trips[0] == 11
    assert rules.royalties.middle == (0, 0, 0, 3, 5, 9, 13, 21, 31, 51)
    assert rules.royalties.bottom == (0, 0, 0, 1, 3, 5, 7, 11, 16, 26)
    assert rules.royalties.lowball_middle == (0, 1, 2, 3, 5, 9)
    fl = rules.fantasyland
    assert fl.entry_top_pair == RANKS.index("K") and fl.progressive
    assert fl.cards_pineapple == 15 and fl.stay_cards_pineapple == 15
    assert not (fl.stay_top_trips or fl.stay_middle_full_house or fl.stay_bottom_quads)
    assert fl.stay_requalify
    assert fl.lowball_entry_top_pair == RANKS.index("A")
    assert (fl.lowball_cards, fl.lowball_cards_both) == (15, 16)
    assert fl.progressive_cards == (14, 14, 15, 16)


def test_rules_file_is_named_after_the_file_unless_it_says(tmp_path):
    path = tmp_path / "friday-game.toml"
    path.write_text('extends = "progressive"\n', encoding="utf-8")
    rules = load_rules_file(path)
    assert rules.name == "friday-game"
    assert rules.fantasyland.progressive


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[scoring]\nbogus = 1\n", "scoring.bogus"),
        ('[scoring]\ncap = "x"\n', "scoring.cap"),
        ('[scoring]\nmethod = "3-3"\n', "scoring.method"),
        ('[scoring]\nroyalties = "both"\n', "scoring.royalties"),
        ("[scoring]\nscoop_bonus = -1\n", "scoring.scoop_bonus"),
        ('[royalties.middle]\nflush = "8"\n', "royalties.middle.flush"),
        ("[royalties.middle]\nfive_of_a_kind = 8\n", "five_of_a_kind"),
        ("[royalties.top.pairs]\nZ = 1\n", "royalties.top.pairs"),
        ('extends = "nope"\n', "extends"),
        ('[fantasyland]\nentry_top_pair = "X"\n', "fantasyland.entry_top_pair"),
        ("[fantasyland]\ncards_pineapple = 12\n", "fantasyland.cards_pineapple"),
        ("bogus = 1\n", "bogus"),
    ],
)
def test_rules_file_errors_name_the_key(tmp_path, text, key):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RulesError) as error:
        load_rules_file(path)
    assert key in str(error.value)


def test_rules_file_not_toml(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("scoring = [", encoding="utf-8")
    with pytest.raises(RulesError, match="TOML"):
        load_rules_file(path)


def test_rules_file_missing(tmp_path):
    with pytest.raises(RulesError):
        load_rules_file(tmp_path / "absent.toml")


def test_a_rules_file_is_read_only_up_to_its_size_limit(tmp_path):
    """A rules file is a few hundred bytes: one past 1 MiB is refused before it is read whole,
    and a device or a pipe is no rules file (``--rules /dev/zero`` used to read until the
    machine ran out of memory: 24 GB in 30 s)."""
    path = tmp_path / "huge.toml"
    path.write_bytes(b"# " + b"x" * (1 << 20) + b"\n[scoring]\nscoop_bonus = 6\n")
    with pytest.raises(RulesError, match="larger than 1 MiB"):
        load_rules_file(path)
    with pytest.raises(RulesError, match="not a regular file"):
        resolve_rules("/dev/zero")
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    with pytest.raises(RulesError, match="not a regular file"):  # and no wait for a writer
        load_rules_file(fifo)
    path.write_bytes(b"# " + b"x" * 1000 + b"\n[scoring]\nscoop_bonus = 6\n")
    assert load_rules_file(path).scoring.scoop_bonus == 6


def test_resolve_rules_by_preset_name_or_path(tmp_path):
    assert resolve_rules("flat-trips").name == "flat-trips"
    path = tmp_path / "house.toml"
    path.write_text("[scoring]\nscoop_bonus = 6\n", encoding="utf-8")
    assert resolve_rules(str(path)).scoring.scoop_bonus == 6
    with pytest.raises(RulesError):
        resolve_rules("neither-a-preset-nor-a-file")


def test_a_match_cap_is_read_from_a_rules_file(tmp_path):
    # the cap limits a player's loss over a match; the hands themselves stay uncapped
    path = tmp_path / "match.toml"
    path.write_text('[scoring]\ncap = 30\ncap_scope = "match"\nstake = 0.1\n', encoding="utf-8")
    scoring = load_rules_file(path).scoring
    assert (scoring.cap_scope.value, scoring.match_cap, scoring.cap, scoring.stake) == (
        "match", 30, 0, 0.1)


@pytest.mark.parametrize(("scoring", "message"), [
    ('cap = 30\ncap_scope = "match"\nmatch_hands = 20', r"scoring\.match_hands: a match is not"),
    ("cap = 30\nmatch_hands = 10", r"scoring\.match_hands"),
    ("cap = 30\nhand_cap = 10", r'scoring\.hand_cap: only with cap_scope = "match"'),
])
def test_match_hands_and_a_stray_hand_cap_are_refused_not_ignored(tmp_path, scoring, message):
    # matches are marked in the records; a count of hands would silently draw other boundaries
    path = tmp_path / "match.toml"
    path.write_text(f'extends = "standard"\n[scoring]\n{scoring}\n', encoding="utf-8")
    with pytest.raises(RulesError, match=message):
        load_rules_file(path)


def test_a_hand_cap_scope_is_still_accepted(tmp_path):
    path = tmp_path / "hand.toml"
    path.write_text('[scoring]\ncap = 30\ncap_scope = "hand"\n', encoding="utf-8")
    assert load_rules_file(path).scoring.cap == 30
