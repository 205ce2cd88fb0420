"""Variants, rows and the street structure of each variant (docs/rules.md, "Variants and the deal")."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Row(StrEnum):
    """A row of an OFC board."""

    TOP = "top"
    MIDDLE = "middle"
    BOTTOM = "bottom"

    @property
    def size(self) -> int:
        """Number of cards the full row holds (3, 5, 5).

        >>> [row.size for row in ROWS]
        [3, 5, 5]
        """
        return 3 if self is Row.TOP else 5


ROWS: tuple[Row, Row, Row] = (Row.TOP, Row.MIDDLE, Row.BOTTOM)
ROW_SIZES: dict[Row, int] = {row: row.size for row in ROWS}
"""Cards a full row holds, by row."""
ROW_LENGTHS: tuple[int, int, int] = (Row.TOP.size, Row.MIDDLE.size, Row.BOTTOM.size)
"""Cards a full row holds, in row order: ``(3, 5, 5)``."""


@dataclass(frozen=True, slots=True)
class StreetShape:
    """One street of the deal: cards dealt, and how many of them are discarded."""

    dealt: int
    discarded: int

    @property
    def placed(self) -> int:
        """Cards placed on the board from this street."""
        return self.dealt - self.discarded


class Variant(StrEnum):
    """The three games of docs/rules.md. Progressive Fantasyland is a rules setting, not a variant."""

    CLASSIC = "classic"
    PINEAPPLE = "pineapple"
    LOWBALL_PINEAPPLE = "2-7-pineapple"

    @classmethod
    def parse(cls, text: str) -> Variant:
        """Parse a variant name; accepts a few common spellings (``2-7``, ``ofc-27``...).

        >>> Variant.parse("ofc-27"), Variant.parse("Pineapple")
        (<Variant.LOWBALL_PINEAPPLE: '2-7-pineapple'>, <Variant.PINEAPPLE: 'pineapple'>)
        >>> Variant.parse("progressive").value  # progressive is a rules setting, not a variant
        'pineapple'
        """
        key = str(text).strip().lower().replace("_", "-").replace(" ", "-")
        aliases = {
            "classic": cls.CLASSIC, "ofc": cls.CLASSIC, "regular": cls.CLASSIC,
            "pineapple": cls.PINEAPPLE, "ofc-pineapple": cls.PINEAPPLE,
            "progressive": cls.PINEAPPLE, "ofc-progressive": cls.PINEAPPLE,
            "progressive-pineapple": cls.PINEAPPLE,
            "2-7-pineapple": cls.LOWBALL_PINEAPPLE, "2-7": cls.LOWBALL_PINEAPPLE,
            "ofc-27": cls.LOWBALL_PINEAPPLE, "27-pineapple": cls.LOWBALL_PINEAPPLE,
            "lowball-pineapple": cls.LOWBALL_PINEAPPLE,
        }
        if key not in aliases:
            raise ValueError(
                f"unknown variant {text!r} (expected classic, pineapple or 2-7-pineapple)"
            )
        return aliases[key]

    @property
    def min_players(self) -> int:
        """Fewest players at a table of this variant."""
        return 2

    @property
    def max_players(self) -> int:
        """Most players at a table of this variant (4 classic, 3 pineapple family).

        >>> Variant.CLASSIC.max_players, Variant.LOWBALL_PINEAPPLE.max_players
        (4, 3)
        """
        return 4 if self is Variant.CLASSIC else 3

    @property
    def is_pineapple_family(self) -> bool:
        """True for Pineapple and 2-7 Pineapple (3 cards a street, one discarded)."""
        return self is not Variant.CLASSIC

    @property
    def lowball_middle(self) -> bool:
        """True when the middle row is a 2-7 lowball hand."""
        return self is Variant.LOWBALL_PINEAPPLE

    @property
    def fantasyland_deal_sizes(self) -> frozenset[int]:
        """Cards a Fantasyland player may be dealt (classic 13; pineapple 14, progressive up to
        17; 2-7 pineapple 14 or 15), whatever the house rules within the spec.

        >>> sorted(Variant.LOWBALL_PINEAPPLE.fantasyland_deal_sizes)
        [14, 15]
        """
        if self is Variant.CLASSIC:
            return frozenset((13,))
        if self is Variant.PINEAPPLE:
            return frozenset((14, 15, 16, 17))
        return frozenset((14, 15))

    @property
    def streets(self) -> tuple[StreetShape, ...]:
        """The street structure of a normal (non-Fantasyland) hand.

        >>> [(street.dealt, street.placed) for street in Variant.PINEAPPLE.streets]
        [(5, 5), (3, 2), (3, 2), (3, 2), (3, 2)]
        >>> sum(street.dealt for street in Variant.CLASSIC.streets)
        13
        """
        if self is Variant.CLASSIC:
            return (StreetShape(5, 0),) + (StreetShape(1, 0),) * 8
        return (StreetShape(5, 0),) + (StreetShape(3, 1),) * 4


VARIANTS_BY_NAME: dict[str, Variant] = {variant.value: variant for variant in Variant}
"""Each variant by its name in records (``"2-7-pineapple"``), for lookups without the enum call."""
