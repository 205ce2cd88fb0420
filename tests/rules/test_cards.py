"""Cards (docs/rules.md, "Cards"): 52 cards written rank + suit, ranks 23456789TJQKA, suits cdhs;
readers also accept 10, lower-case ranks and the suit symbols; writers use the two-character form.
Card code = rank * 4 + suit with ranks 2..A = 0..12 and suits c, d, h, s = 0..3."""

from __future__ import annotations

import pytest

from pipeline.rules.cards import CardError, card_text, cards_text, parse_card, parse_cards

RANK_TEXT = "23456789TJQKA"
SUIT_TEXT = "cdhs"


def test_every_canonical_card_parses_to_rank_times_four_plus_suit_and_back():
    seen = set()
    for rank, rank_char in enumerate(RANK_TEXT):
        for suit, suit_char in enumerate(SUIT_TEXT):
            text = rank_char + suit_char
            code = parse_card(text)
            assert code == rank * 4 + suit, text
            assert card_text(code) == text
            seen.add(code)
    # 52 distinct cards, no jokers: codes are exactly 0..51
    assert seen == set(range(52))


@pytest.mark.parametrize(
    ("token", "code"),
    [
        ("2c", 0),  # deuce 0 * 4 + clubs 0
        ("Ah", 50),  # ace 12 * 4 + hearts 2
        ("As", 51),  # ace 12 * 4 + spades 3
        ("Td", 33),  # ten 8 * 4 + diamonds 1
        ("10h", 34),  # "10" is the ten: 8 * 4 + 2
        ("10s", 35),
        ("ah", 50),  # lower-case rank
        ("kd", 45),  # king 11 * 4 + 1
        ("th", 34),  # lower-case ten
        ("A♥", 50),  # suit symbols
        ("K♠", 47),
        ("Q♦", 41),  # queen 10 * 4 + 1
        ("2♣", 0),
        ("10♣", 32),
        ("j♠", 39),  # jack 9 * 4 + 3, lower-case rank with symbol
    ],
)
def test_accepted_spellings(token, code):
    assert parse_card(token) == code


@pytest.mark.parametrize("token", ["10h", "th", "Th", "T♥"])
def test_writes_the_canonical_two_character_form(token):
    assert card_text(parse_card(token)) == "Th"


@pytest.mark.parametrize("token", ["1h", "11h", "Xh", "Ax", "A", "h", "", "Ahh", "AA", "0c", "Jo"])
def test_bad_token_raises_card_error_naming_it(token):
    with pytest.raises(CardError) as error:
        parse_card(token)
    assert repr(token) in str(error.value) or (token and token in str(error.value))


def test_card_error_is_a_value_error():
    with pytest.raises(ValueError):
        parse_card("Zz")


def test_parse_cards_space_and_comma_separated_and_iterables():
    # Ah 50, Kd 45, 10c 32
    assert parse_cards("Ah Kd 10c") == (50, 45, 32)
    assert parse_cards("Ah, Kd,10c") == (50, 45, 32)
    assert parse_cards(["Ah", "kd", "T♣"]) == (50, 45, 32)
    assert parse_cards("") == ()


def test_parse_cards_names_the_bad_token_in_a_list():
    with pytest.raises(CardError, match="Qx"):
        parse_cards("Ah Kd Qx 2c")


@pytest.mark.parametrize("code", [-1, 52, 100])
def test_card_text_rejects_codes_outside_the_deck(code):
    with pytest.raises(CardError):
        card_text(code)


def test_cards_text_round_trips_in_order():
    assert cards_text(parse_cards("10h as 2♣ Kd")) == ["Th", "As", "2c", "Kd"]
