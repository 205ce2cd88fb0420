"""Cards: parsing, normalising and the integer encoding used throughout the rules core.

A card is an ``int`` from 0 to 51: ``rank * 4 + suit`` with ranks ``23456789TJQKA`` (0..12)
and suits ``cdhs`` (0..3). The canonical text form is two characters, rank then suit (``Ah``).

>>> parse_card("Ah")                 # ace (12) * 4 + hearts (2)
50
>>> card_text(parse_card("10♠"))     # any accepted spelling reads; the canonical form is written
'Ts'
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "23456789TJQKA"
SUITS = "cdhs"
SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
"""The symbol each suit letter is shown with (the one place the project spells them)."""
_OUTLINE_SYMBOLS = {"c": "♧", "d": "♢", "h": "♡", "s": "♤"}
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
            suit_spellings = {suit, suit.upper(), SUIT_SYMBOLS[suit], _OUTLINE_SYMBOLS[suit]}
            for rank_text in rank_spellings:
                for suit_text in suit_spellings:
                    lookup[rank_text + suit_text] = rank_index * 4 + suit_index
    return lookup


_LOOKUP = _build_lookup()
_TEXT = tuple(rank + suit for rank in RANKS for suit in SUITS)


def parse_card(token: str) -> Card:
    """Parse one card token (``Ah``, ``10h``, ``ah``, ``A♥``) into its card code.

    Raises :class:`CardError` naming the token when it is not a card.

    >>> parse_card("Ah"), parse_card("ah"), parse_card("A♥")
    (50, 50, 50)
    >>> parse_card("10h") == parse_card("Th")
    True
    >>> parse_card("1h")
    Traceback (most recent call last):
        ...
    pipeline.rules.cards.CardError: not a card: '1h' (ranks 23456789TJQKA or 10, suits cdhs or ♣♦♥♠)
    """
    if not isinstance(token, str):
        raise CardError(f"not a card: {token!r} (expected text such as 'Ah')")
    card = _LOOKUP.get(token.strip())
    if card is None:
        raise CardError(f"not a card: {token!r} (ranks 23456789TJQKA or 10, suits cdhs or ♣♦♥♠)")
    return card


def parse_cards(tokens: str | Iterable[str]) -> tuple[Card, ...]:
    """Parse a space/comma separated string or an iterable of tokens into card codes.

    >>> parse_cards("Ah Kd 10c")
    (50, 45, 32)
    >>> parse_cards("Ah, Kd,10c") == parse_cards(["Ah", "kd", "T♣"])
    True
    """
    if isinstance(tokens, str):
        tokens = tokens.replace(",", " ").split()
    return tuple(parse_card(token) for token in tokens)


def card_text(card: Card) -> str:
    """The canonical two-character form of a card code (``Ah``).

    >>> card_text(0), card_text(34), card_text(51)
    ('2c', 'Th', 'As')
    """
    if not 0 <= card < 52:
        raise CardError(f"not a card code: {card!r}")
    return _TEXT[card]


def card_symbol(card: str) -> str:
    """A card's text with its suit as a symbol, for display; other text is returned as it is.

    >>> card_symbol("Qh"), card_symbol("Tc"), card_symbol("?")
    ('Q♥', 'T♣', '?')
    """
    if len(card) >= 2 and card[-1] in SUIT_SYMBOLS:
        return card[:-1] + SUIT_SYMBOLS[card[-1]]
    return card


def cards_text(cards: Iterable[Card]) -> list[str]:
    """Canonical texts of several card codes, in order.

    >>> cards_text(parse_cards("10h as 2♣ Kd"))
    ['Th', 'As', '2c', 'Kd']
    """
    return [card_text(card) for card in cards]


def normalise_card(token: str) -> str:
    """Parse any accepted spelling of a card and return its canonical text.

    >>> normalise_card("10♥"), normalise_card("qd")
    ('Th', 'Qd')
    """
    return _TEXT[parse_card(token)]


def rank_of(card: Card) -> int:
    """Rank index of a card: 0 for a deuce up to 12 for an ace.

    >>> rank_of(parse_card("2c")), rank_of(parse_card("Ts")), rank_of(parse_card("Ah"))
    (0, 8, 12)
    """
    return card >> 2


def suit_of(card: Card) -> int:
    """Suit index of a card: 0 clubs, 1 diamonds, 2 hearts, 3 spades.

    >>> [suit_of(card) for card in parse_cards("Ac Ad Ah As")]
    [0, 1, 2, 3]
    """
    return card & 3


def find_duplicate(cards: Iterable[Card]) -> Card | None:
    """The first card that appears a second time, or ``None`` when all are distinct.

    >>> card_text(find_duplicate(parse_cards("Ah Kd 7c Ah")))
    'Ah'
    >>> find_duplicate(parse_cards("Ah Kd 7c")) is None
    True
    """
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            return card
        seen.add(card)
    return None
