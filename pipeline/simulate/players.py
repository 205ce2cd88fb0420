"""The pool of named players a simulation seats at its tables, each with a bot style.

The same names come back session after session (and across tables), so that comparing players
over sessions means something. Names are fixed and in a fixed order (a given pool size always
gives the same people); bot styles are dealt to them in turn from the ``--bots`` list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.simulate.bots import BOTS

NAMES: tuple[str, ...] = (
    "mara", "jun", "lee", "ana", "tomas", "priya", "kofi", "sven",
    "ines", "hugo", "yuki", "omar", "lena", "raj", "noor", "pablo",
    "greta", "malik", "sofia", "chen", "ivan", "zoe", "amir", "elsa",
    "diego", "hana", "felix", "rosa", "tariq", "mila", "oscar", "wen",
    "nadia", "bruno", "aiko", "jonas", "leila", "marco", "nina", "samir",
    "olga", "ravi", "ida", "kenji", "vera", "luca", "esme", "dmitri",
)


@dataclass(frozen=True, slots=True)
class Player:
    """A named player and the bot that plays for them."""

    name: str
    bot: str


def default_pool_size(tables: int, players_per_table: int) -> int:
    """Enough players to fill every table at once with a few to spare (at least 8)."""
    seats = tables * players_per_table
    return max(8, seats + max(2, seats // 4))


def player_pool(size: int, bots: Sequence[str]) -> tuple[Player, ...]:
    """``size`` players named from :data:`NAMES` (then ``name2``, ``name3``...), bots in turn.

    Raises :class:`ValueError` for an unknown bot name or an empty bot list.
    """
    if not bots:
        raise ValueError("at least one bot is needed")
    unknown = [bot for bot in bots if bot not in BOTS]
    if unknown:
        raise ValueError(f"unknown bot {unknown[0]!r} (bots: {', '.join(BOTS)})")
    if size < 1:
        raise ValueError(f"the player pool needs at least one player, got {size}")
    players = []
    for index in range(size):
        lap, position = divmod(index, len(NAMES))
        name = NAMES[position] if lap == 0 else f"{NAMES[position]}{lap + 1}"
        players.append(Player(name, bots[index % len(bots)]))
    return tuple(players)
