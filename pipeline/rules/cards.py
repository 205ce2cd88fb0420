"""Cards: parsing, normalising and the integer encoding used throughout the rules core.

A card is an ``int`` from 0 to 51: ``rank * 4 + suit`` with ranks ``23456789TJQKA`` (0..12)
and suits ``cdhs`` (0..3). The canonical text form is two characters, rank then suit (``Ah``).
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "23456789TJQKA"
SUITS = "cdhs"
SUIT_SYMBOLS = {"♣": "c", "♦": "d", "♥": "h", "♠": "s", "♧": "c", "♢": "d", "♡": "h", "♤": "s"}
RANK_NAMES = (
    "two", "three", "four", "five", "six", "seven", "eight",
    "nine", "ten", "jack", "queen", "king", "ace",
)
RANK_PLURALS = (
    "twos", "threes", "fours", "fives", "sixes", "sevens", "eights",
    "nines", "tens", "jacks", "queens", "kings", "aces",
)

Card = int
"""A card code, 0..51 (``rank * 4 + suit``)."""

FULL_DECK: tuple[Card, ...] = tuple(range(52))


class CardError(ValueError):
    """A token that is not a card, or a card list that breaks a card rule."""


def _build_lookup() -> dict[str, Card]:
    lookup: dict[str, Card] = {}
    for rank_index, rank in enumerate(RANKS):
        rank_spellings = {rank, rank.lower()}
        if rank == "T":
            rank_spellings |= {"10"}
        for suit_index, suit in enumerate(SUITS):
            suit_spellings = {suit, suit.upper()} | {
                symbol for symbol, letter in SUIT_SYMBOLS.items() if letter == suit
            }
            for rank_text in rank_spellings:
                for suit_text in suit_spellings:
                    lookup[rank_text + suit_text] = rank_index * 4 + suit_index
    return lookup


_LOOKUP = _build_lookup()
_TEXT = tuple(rank + suit for rank in RANKS for suit in SUITS)


def parse_card(token: str) -> Card:
    """Parse one card token (``Ah``, ``10h``, ``ah``, ``A♥``) into its card code.

    Raises :class:`CardError` naming the token when it is not a card.
    """
    if not isinstance(token, str):
        raise CardError(f"not a card: {token!r} (expected text such as 'Ah')")
    card = _LOOKUP.get(token.strip())
    if card is None:
        raise CardError(f"not a card: {token!r} (ranks 23456789TJQKA or 10, suits cdhs or ♣♦♥♠)")
    return card


def parse_cards(tokens: str | Iterable[str]) -> tuple[Card, ...]:
    """Parse a space/comma separated string or an iterable of tokens into card codes."""
    if isinstance(tokens, str):
        tokens = tokens.replace(",", " ").split()
    return tuple(parse_card(token) for token in tokens)


def card_text(card: Card) -> str:
    """The canonical two-character form of a card code (``Ah``)."""
    if not 0 <= card < 52:
        raise CardError(f"not a card code: {card!r}")
    return _TEXT[card]


def cards_text(cards: Iterable[Card]) -> list[str]:
    """Canonical texts of several card codes, in order."""
    return [card_text(card) for card in cards]


def normalise_card(token: str) -> str:
    """Parse any accepted spelling of a card and return its canonical text."""
    return _TEXT[parse_card(token)]


def rank_of(card: Card) -> int:
    """Rank index of a card: 0 for a deuce up to 12 for an ace."""
    return card >> 2


def suit_of(card: Card) -> int:
    """Suit index of a card: 0 clubs, 1 diamonds, 2 hearts, 3 spades."""
    return card & 3


def find_duplicate(cards: Iterable[Card]) -> Card | None:
    """The first card that appears a second time, or ``None`` when all are distinct."""
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            return card
        seen.add(card)
    return None
