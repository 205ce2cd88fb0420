"""Row outlooks agree with brute force over every way to fill a row's empty slots."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pipeline.rules.board import top_royalty
from pipeline.rules.cards import parse_cards
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import preset
from pipeline.rules.values import evaluate_five, evaluate_low, evaluate_three, low_class
from pipeline.simulate.outlook import row_outlooks, state_space, strength_scale
from pipeline.solver.tables import KEY_LIMIT, RANK_KEY_OF_CARD

STANDARD = preset("standard")


def state_id(cards: tuple[int, ...]) -> int:
    """The outlook id of a row holding ``cards``."""
    key = sum(RANK_KEY_OF_CARD[card] for card in cards)
    return int(state_space().index[key + len(cards) * KEY_LIMIT])


def completions(cards: tuple[int, ...], size: int):
    """Every way to fill the row from the rest of a fresh deck."""
    rest = [card for card in range(52) if card not in cards]
    for extra in itertools.combinations(rest, size - len(cards)):
        yield cards + extra


def close(expected: float):  # noqa: ANN201
    """Equality up to the outlooks' float32 precision."""
    return pytest.approx(expected, rel=2e-6, abs=1e-6)


def scale(value: int) -> float:
    """The strength scale of one value."""
    return float(strength_scale(np.asarray([value]))[0])


@pytest.mark.parametrize("text", ["Ks Kd", "Qs", "7c 2d", "As Kd Qh"])
def test_top_outlooks_match_brute_force(text: str) -> None:
    cards = tuple(parse_cards(text))
    looks = row_outlooks(Variant.PINEAPPLE, STANDARD)
    values = [evaluate_three(row) for row in completions(cards, 3)]
    scales = np.asarray([scale(value) for value in values])
    identity = state_id(cards)
    assert looks.top_mean[identity] == close(scales.mean())
    assert looks.top_variance[identity] == close(scales.var())
    royalties = [top_royalty(value, STANDARD) for value in values]
    assert looks.top_royalty[identity] == close(np.mean(royalties))
    qualifies = [
        (value >> 20 == 3) or (value >> 20 == 1 and ((value >> 16) & 0xF) - 1 >= 10)
        for value in values
    ]
    assert looks.top_fantasyland[identity] == close(np.mean(qualifies))


@pytest.mark.parametrize("text", ["9s 9d 4c 2h", "As Kd Qh", "5c 6d 7h 8s", "Tc Td Th"])
def test_mixed_suit_five_card_outlooks_match_brute_force(text: str) -> None:
    cards = tuple(parse_cards(text))
    looks = row_outlooks(Variant.PINEAPPLE, STANDARD)
    values = [evaluate_five(row) for row in completions(cards, 5)]
    scales = np.asarray([scale(value) for value in values])
    identity = state_id(cards)
    assert looks.five_mean[identity, 0] == close(scales.mean())
    assert looks.five_variance[identity, 0] == close(scales.var())
    bottom = [STANDARD.royalties.bottom[value >> 20] for value in values]
    middle = [STANDARD.royalties.middle[value >> 20] for value in values]
    assert looks.bottom_royalty[identity, 0] == close(np.mean(bottom))
    assert looks.middle_royalty[identity, 0] == close(np.mean(middle))


def test_lowball_middle_outlook_matches_brute_force() -> None:
    cards = tuple(parse_cards("2c 4d 7h"))
    looks = row_outlooks(Variant.LOWBALL_PINEAPPLE, STANDARD)
    values = [evaluate_low(row) for row in completions(cards, 5)]
    identity = state_id(cards)
    assert looks.low_qualify[identity, 0] == close(np.mean([value > 0 for value in values]))
    royalty = [STANDARD.royalties.lowball_middle[low_class(value)] for value in values]
    assert looks.low_royalty[identity, 0] == close(np.mean(royalty))


def test_finished_rows_are_exact() -> None:
    looks = row_outlooks(Variant.PINEAPPLE, STANDARD)
    flush = tuple(parse_cards("As Ks 7s 4s 2s"))
    identity = state_id(flush)
    assert looks.five_mean[identity, 1] == close(scale(evaluate_five(flush)))
    assert looks.five_variance[identity, 1] == 0
    assert looks.bottom_royalty[identity, 1] == close(4)
    assert looks.middle_royalty[identity, 1] == close(8)
    queens = tuple(parse_cards("Qs Qd 3c"))
    assert looks.top_fantasyland[state_id(queens)] == close(1)
    assert looks.top_royalty[state_id(queens)] == close(7)


def test_suited_rows_count_the_flush_draw() -> None:
    looks = row_outlooks(Variant.PINEAPPLE, STANDARD)
    four_flush = tuple(parse_cards("As Ks 7s 2s"))
    identity = state_id(four_flush)
    chance = 9 / 48
    # the suited outlook's bottom royalty is the flush chance times 4 (no straight possible)
    assert looks.bottom_royalty[identity, 1] == close(chance * 4 + (1 - chance) * 0)
    assert looks.five_mean[identity, 1] > looks.five_mean[identity, 0]


def test_entry_rank_follows_the_variant() -> None:
    queens = state_id(tuple(parse_cards("Qs Qd")))
    assert row_outlooks(Variant.PINEAPPLE, STANDARD).top_fantasyland[queens] == close(1)
    # 2-7 Pineapple needs kings: queens qualify only by making trips
    lowball = row_outlooks(Variant.LOWBALL_PINEAPPLE, STANDARD).top_fantasyland[queens]
    assert lowball == close(2 / 50)
