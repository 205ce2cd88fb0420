"""Reference groups: who is in, who is left out by the outlier rule, and why."""

from __future__ import annotations

import polars as pl
import pytest

from pipeline.report.reference import (
    GroupKind,
    ReferenceError,
    ReferenceSpec,
    choose_reference,
    member_rows,
)


def _totals(players: dict[str, tuple[int, int, int, str]]) -> pl.DataFrame:
    """Per-player totals (hands, points, fouls, rules), shaped like report_player_totals."""
    return pl.DataFrame(
        [{"player": name, "variant": "pineapple", "player_count": 3, "position": 0,
          "rules": rules, "hands": hands, "points": points, "fouls": fouls}
         for name, (hands, points, fouls, rules) in players.items()])


def _pairs(results: dict[tuple[str, str], tuple[int, float, float]]) -> pl.DataFrame:
    """Pairings (player, opponent) -> (hands, mean points, SD), like report_pair_totals."""
    rows = []
    for (player, opponent), (hands, mean, sd) in results.items():
        total = round(mean * hands)
        rows.append({"player": player, "opponent": opponent, "rules": "standard",
                     "hands": hands, "points": total,
                     "points_sq": round(hands * (sd * sd + mean * mean))})
    return pl.DataFrame(rows)


REGULARS = ("a", "b", "c", "d", "e")


def _field(fish: float = -6.0) -> tuple[pl.DataFrame, pl.DataFrame]:
    totals = _totals({**{name: (500, 0, 100, "standard") for name in REGULARS},
                      "fish": (500, -3000, 370, "standard"), "hero": (500, 0, 150, "standard")})
    pairs = {}
    for name in REGULARS:
        for other in REGULARS:
            if name != other:
                pairs[(name, other)] = (200, 0.1 * (REGULARS.index(name) - 2), 8.0)
        pairs[(name, "fish")] = (100, -fish, 9.0)
        pairs[("fish", name)] = (100, fish, 9.0)
        pairs[(name, "hero")] = (100, 0.0, 8.0)
        pairs[("hero", name)] = (100, 0.0, 8.0)
    return totals, _pairs(pairs)


def test_the_fish_is_left_out_and_nobody_else() -> None:
    totals, pairs = _field()
    group = choose_reference(totals, pairs, ReferenceSpec(), ("hero",), min_sample=30)
    assert group.left_out_names == ("fish",)
    assert set(group.members) == set(REGULARS)
    assert "hero" not in group.members
    assert group.left_out[0].robust_z < -3
    assert not group.player_is_outlier
    assert "fish" in group.description and "3 times the field's typical spread" in group.description


def test_the_rule_can_be_turned_off() -> None:
    totals, pairs = _field()
    group = choose_reference(totals, pairs, ReferenceSpec(outlier_sd=None), ("hero",))
    assert group.left_out == () and "fish" in group.members
    assert "off" in group.description


def test_regulars_who_fed_on_the_fish_are_not_outliers() -> None:
    """b farms the fish three times as hard as the others: judged with the fish's pairings left
    out (after the fish is out) b is a regular, not an outlier."""
    totals, _ = _field()
    pairs = {}
    for name in REGULARS:
        for other in REGULARS:
            if name != other:
                pairs[(name, other)] = (200, 0.0, 8.0)
        pairs[(name, "fish")] = (300 if name == "b" else 20, 6.0, 9.0)
        pairs[("fish", name)] = (300 if name == "b" else 20, -6.0, 9.0)
    group = choose_reference(totals, _pairs(pairs), ReferenceSpec(), ("hero",))
    assert group.left_out_names == ("fish",)


def test_noise_alone_leaves_nobody_out() -> None:
    # the regulars agree more closely than their noise allows: the spread floor is the noise
    totals = _totals({name: (60, 0, 10, "standard") for name in (*REGULARS, "f", "g")})
    pairs = {(name, other): (60, 0.01 * i, 10.0)
             for i, name in enumerate((*REGULARS, "f", "g"))
             for other in (*REGULARS, "f", "g") if other != name}
    pairs[("g", "a")] = (60, 1.5, 10.0)  # well within a standard error of ~1.3
    group = choose_reference(totals, _pairs(pairs), ReferenceSpec(), ())
    assert group.left_out == ()


def test_too_few_players_to_judge() -> None:
    totals, pairs = _field()
    small = totals.filter(pl.col("player").is_in(["a", "b", "hero"]))
    group = choose_reference(small, pairs, ReferenceSpec(), ("hero",))
    assert group.left_out == () and any("needs 4 players" in note for note in group.notes)


def test_named_stake_and_qualified_groups() -> None:
    totals, pairs = _field()
    named = choose_reference(totals, pairs, ReferenceSpec.parse("named:a,b,fish,ghost"),
                             ("hero",))
    assert set(named.members) == {"a", "b"}  # the fish is an outlier of the field
    assert any("ghost" in note for note in named.notes)
    qualified = choose_reference(totals, pairs, ReferenceSpec.parse("qualified:400:25"),
                                 ("hero",))
    assert set(qualified.members) == set(REGULARS)  # 20 % fouls; the fish fouls 74 %
    mixed = pl.concat([totals, totals.filter(pl.col("player") == "a")
                      .with_columns(pl.lit("club-50c").alias("rules"))])
    stake = choose_reference(mixed, pairs, ReferenceSpec.parse("stake:club-50c"), ("hero",))
    assert stake.members == ("a",)
    rows = member_rows(mixed, stake)
    assert rows["rules"].unique().to_list() == ["club-50c"]  # counted on the stake's hands
    assert stake.label == "players at club-50c"


def test_a_group_that_selects_nobody_says_why() -> None:
    """A rules name no hand in scope is played under, or naming the player under review, used
    to give an empty group and a report of 0 tests with nothing saying why."""
    totals, pairs = _field()
    typo = choose_reference(totals, pairs, ReferenceSpec.parse("stake:standrd,standard"),
                            ("hero",))
    assert set(typo.members) == set(REGULARS)
    assert typo.notes[0] == "no hands in scope under rules standrd (in scope: standard)"
    nobody = choose_reference(totals, pairs, ReferenceSpec.parse("stake:standrd"), ("hero",))
    assert nobody.members == ()
    assert nobody.notes[:2] == ("no hands in scope under rules standrd (in scope: standard)",
                                "nobody is in it: nothing is compared")
    own = choose_reference(totals, pairs, ReferenceSpec.parse("named:hero,a"), ("hero",))
    assert own.members == ("a",)
    assert own.notes[0] == "hero is the player under review: never in the reference group"
    alone = choose_reference(totals, pairs, ReferenceSpec.parse("named:hero"), ("hero",))
    assert alone.members == () and alone.notes[1] == "nobody is in it: nothing is compared"
    fine = choose_reference(totals, pairs, ReferenceSpec.parse("named:a,b"), ("hero",))
    assert not any("nobody" in note or "review" in note for note in fine.notes)


@pytest.mark.parametrize("text", ["named:", "stake:", "qualified:10", "qualified:x:y",
                                  "bogus", "qualified:0:20"])
def test_bad_group_specs_are_refused(text: str) -> None:
    with pytest.raises(ReferenceError):
        ReferenceSpec.parse(text)


def test_spec_labels() -> None:
    assert ReferenceSpec.parse("field").label == "the field"
    assert ReferenceSpec.parse("qualified:300:0.25").label == \
        "players with ≥ 300 hands fouling < 25 %"
    assert ReferenceSpec.parse("named:a,b,c,d,e,f").label == "regulars (a, b, c, d +2)"
    assert ReferenceSpec.parse("named:a").kind is GroupKind.NAMED
