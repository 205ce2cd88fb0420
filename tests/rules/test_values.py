"""Row values (docs/rules.md, "Hand values"): five-card high hands, three-card tops, comparisons
across row sizes, the rank keys of the batch evaluator, and readable descriptions."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from pipeline.rules.cards import parse_cards
from pipeline.rules.values import (
    RANK_KEYS,
    HandClass,
    describe_value,
    evaluate_five,
    evaluate_three,
    value_class,
)
from tests.rules import reference


def five(text: str) -> int:
    return evaluate_five(parse_cards(text))


def three(text: str) -> int:
    return evaluate_three(parse_cards(text))


# One hand of every class, weakest first (spec: high card < pair < two pair < trips < straight <
# flush < full house < quads < straight flush; royal = ace-high straight flush).
LADDER = [
    ("Ac Kd Qh Js 9c", HandClass.HIGH_CARD),  # best high card (no straight: 9 breaks it)
    ("2c 2d 3h 4s 5c", HandClass.PAIR),  # worst pair
    ("3c 3d 2h 2s 4c", HandClass.TWO_PAIR),
    ("2c 2d 2h 3s 4c", HandClass.TRIPS),
    ("Ac 2d 3h 4s 5c", HandClass.STRAIGHT),  # wheel = lowest straight
    ("2h 3h 4h 5h 7h", HandClass.FLUSH),  # worst flush
    ("2c 2d 2h 3s 3c", HandClass.FULL_HOUSE),
    ("2c 2d 2h 2s 3c", HandClass.QUADS),
    ("Ad 2d 3d 4d 5d", HandClass.STRAIGHT_FLUSH),  # steel wheel: lowest straight flush
    ("Ts Js Qs Ks As", HandClass.ROYAL_FLUSH),
]


@pytest.mark.parametrize(("text", "hand_class"), LADDER)
def test_class_of_each_ladder_hand(text, hand_class):
    assert value_class(five(text)) is hand_class


def test_ladder_is_strictly_increasing():
    values = [five(text) for text, _ in LADDER]
    assert values == sorted(values)
    assert len(set(values)) == len(values)


def test_best_of_each_class_is_below_worst_of_the_next():
    # the strongest hand of a class still loses to the weakest of the class above
    best = [
        "Ac Kd Qh Js 9c",  # high card
        "Ac Ad Kh Qs Jc",  # pair
        "Ac Ad Kh Ks Qc",  # two pair
        "Ac Ad Ah Ks Qc",  # trips
        "Tc Jd Qh Ks Ac",  # straight (broadway)
        "Ah Kh Qh Jh 9h",  # flush
        "Ac Ad Ah Ks Kc",  # full house
        "Ac Ad Ah As Kc",  # quads
        "9s Ts Js Qs Ks",  # straight flush (king-high)
    ]
    for strongest, (weakest_next, _) in zip(best, LADDER[1:], strict=True):
        assert five(strongest) < five(weakest_next), (strongest, weakest_next)


def test_wheel_is_five_high_and_below_six_high_straight():
    wheel = five("Ac 2d 3h 4s 5c")
    six_high = five("2c 3d 4h 5s 6c")
    assert value_class(wheel) is HandClass.STRAIGHT
    assert wheel < six_high
    # but a straight still beats any trips, even aces
    assert wheel > five("Ac Ad Ah Ks Qc")


def test_steel_wheel_is_the_lowest_straight_flush_and_not_royal():
    steel = five("Ad 2d 3d 4d 5d")
    assert value_class(steel) is HandClass.STRAIGHT_FLUSH
    assert steel < five("2s 3s 4s 5s 6s")


def test_no_wraparound_straight():
    # Q-K-A-2-3 is just ace-high
    assert value_class(five("Qc Kd Ah 2s 3c")) is HandClass.HIGH_CARD


def test_broadway_above_king_high_straight():
    assert five("Tc Jd Qh Ks Ac") > five("9c Td Jh Qs Kc")


@pytest.mark.parametrize(
    ("stronger", "weaker", "why"),
    [
        ("Qc Qd Kh 3s 2c", "Qh Qs Jh 9s 8c", "pair of queens: king kicker beats jack"),
        ("Qc Qd Kh 4s 2c", "Qh Qs Kd 3s 2d", "pair of queens: third card 4 beats 3"),
        ("Kc Kd 8h 8s Ac", "Kh Ks 8c 8d Qc", "two pair K/8: ace kicker beats queen"),
        ("Kc Kd 8h 8s 2c", "Kh Ks 7c 7d Ac", "two pair: second pair 8 beats 7, kicker ignored"),
        ("Kc Kd 2h 2s 3c", "Qh Qs Jc Jd Ac", "two pair: top pair K beats Q"),
        ("7c 7d 7h 3s 2c", "6c 6d 6h As Kc", "trips: rank first"),
        ("7c 7d 7h As 2c", "7s 7d 7h Ks Qc", "trips kickers (impossible in one deck, still ordered)"),
        ("8c 8d 8h 2s 2c", "7c 7d 7h As Ac", "full house: trips rank before pair rank"),
        ("8c 8d 8h As Ac", "8c 8d 8h Ks Kc", "full house: then pair rank"),
        ("5c 5d 5h 5s 3c", "4c 4d 4h 4s Ac", "quads: rank first"),
        ("5c 5d 5h 5s Ac", "5c 5d 5h 5s Kc", "quads: then kicker"),
        ("Ah Kh 4h 3h 2h", "As Qs Js Ts 8s", "flush vs flush: second card K beats Q"),
        ("Ah Qh 9h 5h 3h", "As Qs 9s 5s 2s", "flush vs flush: decided by the last card"),
        ("3c 4d 5h 6s 7c", "2c 3d 4h 5s 6c", "7-high straight beats 6-high"),
        ("Ac Kd Qh Js 8c", "Ac Kd Qh Js 7c", "high card: fifth card"),
    ],
)
def test_five_card_kickers(stronger, weaker, why):
    assert five(stronger) > five(weaker), why


def test_suits_never_rank():
    assert five("Ac Kd Qh Js 9c") == five("As Kh Qd Jc 9s")
    assert five("Ah Kh 4h 3h 2h") == five("Ac Kc 4c 3c 2c")  # same-rank flushes tie
    assert three("Qs Qh 5d") == three("Qc Qd 5s")


def test_top_row_knows_only_trips_pair_high_card():
    # three to a straight flush is nothing
    assert value_class(three("Qh Jh Th")) is HandClass.HIGH_CARD
    assert three("Qh Jh Th") == three("Qc Jd Ts")
    assert value_class(three("2c 2d 3h")) is HandClass.PAIR
    assert value_class(three("2c 2d 2h")) is HandClass.TRIPS
    assert three("Ah Kh Qh") < three("2c 2d 3h") < three("Ac Ad Kh") < three("2c 2d 2h")
    assert three("Ac Ad Kh") > three("Ac Ad Qh")  # pair kicker


@pytest.mark.parametrize(
    ("top", "middle", "top_is_stronger"),
    [
        # spec example: pair of queens, kicker 5 > 4: the top is stronger (a foul)
        ("Qs Qh 5d", "Qc Qd 4h 3s 2c", True),
        # spec example: A-K-Q ties the first three cards, the longer row is stronger (legal)
        ("As Kh Qd", "Ac Kd Qh 3s 2c", False),
        # K-K-9 vs K-K-9-3-2: every card of the top ties, the longer row wins
        ("Ks Kh 9d", "Kc Kd 9h 3s 2c", False),
        # K-K-T vs K-K-9-3-2: first kicker decides
        ("Ks Kh Td", "Kc Kd 9h 3s 2c", True),
        # A-K-9 vs A-K-8-7-6 (high card): third card decides
        ("As Kh 9d", "Ac Kd 8h 7s 6c", True),
        # category first: any top pair beats a five-card high card, trips beat two pair
        ("2s 2h 3d", "Ac Kd Qh Js 9c", True),
        ("2s 2h 2d", "Ac Ad Kh Ks Qc", True),
        ("As Ah Ad", "2c 3d 4h 5s 6c", False),  # a straight beats any top
        ("As Ah Kd", "2c 2d 3h 3s 4c", False),  # two pair beats any top pair
        ("2s 2h 2d", "3c 3d 3h 4s 5c", False),  # trips by rank
    ],
)
def test_rows_of_different_sizes(top, middle, top_is_stronger):
    assert (three(top) > five(middle)) is top_is_stronger
    assert three(top) != five(middle)


def test_rank_keys_identify_every_five_card_rank_multiset():
    # every multiset of 5 ranks with each rank at most 4 times has a unique key sum
    sums: dict[int, tuple[int, ...]] = {}
    count = 0
    for ranks in itertools.combinations_with_replacement(range(13), 5):
        if max(Counter(ranks).values()) > 4:
            continue
        count += 1
        key = sum(RANK_KEYS[rank] for rank in ranks)
        assert key not in sums, (ranks, sums.get(key))
        sums[key] = ranks
    # C(17, 5) = 6188 multisets minus the 13 "five of a kind"
    assert count == 6175
    assert len(RANK_KEYS) == 13


def test_rank_keys_identify_every_three_card_rank_multiset():
    sums = {sum(RANK_KEYS[r] for r in ranks) for ranks in itertools.combinations_with_replacement(range(13), 3)}
    assert len(sums) == 455  # C(15, 3)


@pytest.mark.parametrize(
    ("text", "description"),
    [
        ("Qc Qd 5h 4s 2c", "pair of queens"),
        ("Ac 2d 3h 4s 5c", "five-high straight"),
        ("Tc Jd Qh Ks Ac", "ace-high straight"),
        ("Ts Js Qs Ks As", "royal flush"),
        ("9c 9d 9h 4s 4c", "full house, nines full of fours"),
        ("Kc Kd 2h 2s 3c", "two pair, kings and twos"),
        ("7c 7d 7h 7s 3c", "four sevens"),
    ],
)
def test_descriptions(text, description):
    assert describe_value(five(text)) == description


def test_description_of_a_top():
    assert describe_value(three("Qs Qh 5d")) == "pair of queens"
    assert describe_value(three("2c 2d 2h")) == "three twos"


def test_five_card_order_matches_the_reference_on_random_pairs():
    rng = random.Random(2027)
    deck = list(range(52))
    for _ in range(6000):
        a = rng.sample(deck, 5)
        b = rng.sample(deck, 5)
        expected = (reference.comparable(reference.five_key(a)) > reference.comparable(reference.five_key(b))) - (
            reference.comparable(reference.five_key(a)) < reference.comparable(reference.five_key(b))
        )
        va, vb = evaluate_five(a), evaluate_five(b)
        assert ((va > vb) - (va < vb)) == expected, (a, b)
        assert value_class(va).label == reference.CLASS_NAMES[reference.five_key(a)[0]]


def test_top_against_five_card_order_matches_the_reference():
    rng = random.Random(7)
    deck = list(range(52))
    for _ in range(6000):
        cards = rng.sample(deck, 8)
        top, middle = cards[:3], cards[3:]
        expected_top_stronger = reference.comparable(reference.three_key(top)) > reference.comparable(
            reference.five_key(middle)
        )
        assert (evaluate_three(top) > evaluate_five(middle)) is expected_top_stronger, (top, middle)


def test_wrong_row_sizes_are_rejected():
    with pytest.raises(ValueError):
        evaluate_five(parse_cards("Ac Kd Qh Js"))
    with pytest.raises(ValueError):
        evaluate_three(parse_cards("Ac Kd"))
