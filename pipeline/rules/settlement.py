"""Settling a match: each player's points over the match, the match cap, and money.

docs/rules.md, section 9. At the end of a match each player's *total* is the sum of their hand
points (the hands' own points, never changed by the match cap). With a match cap ``C``:

* a player whose total is below ``-C`` pays only ``C`` (they are *capped*); a player at or above
  ``-C`` pays their whole loss;
* what the capped players do not pay (the *shortfall*) is taken from the match's winners in
  proportion to their winnings: a winner with total ``w`` receives ``w × (W − S) / W``, where
  ``W`` is the sum of the winners' totals and ``S`` the shortfall.

So the settled points sum to zero, no loser pays more than ``C``, no winner receives more than
their winnings, and a match where nobody is below ``-C`` settles to its plain totals. Without a
cap (``C = 0``) the settlement is the plain totals.

Settled points are exact fractions (:class:`fractions.Fraction`). Money is ``settled × stake``
rounded to the *money unit*: a cent, or the stake's own last decimal when it has more decimals
(a stake of 0.005 is settled in thousandths). Rounding is by largest remainder: every amount is
its exact value rounded down or up by less than one unit, the units left over go to the largest
remainders (ties to the player whose name sorts first), so the amounts sum to exactly zero. A loser's
payment (a whole number of points × the stake) is always a whole number of units, so it is
never rounded: a capped loser pays exactly ``C × stake``, and a winner, whose exact share is at
most their winnings × the stake, never receives more than that. The settled points are shown to
the hundredth the same way (:attr:`SettledPlayer.settled_shown`).

Pure: no I/O. Used by the read model (``ofc settle``, the Sessions page, the report) and by the
live recorder (running money during a match).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation, localcontext
from fractions import Fraction

from pipeline.rules.ruleset import (
    MAX_STAKE_DECIMALS,
    CapScope,
    RuleSet,
    stake_decimals,
    stake_problem,
)

__all__ = [
    "POINTS_UNIT",
    "MatchTotal",
    "SettledPlayer",
    "Settlement",
    "SettlementError",
    "apportion",
    "match_cap_of",
    "money_unit",
    "settle_match",
    "settle_under_rules",
    "stake_value",
]

POINTS_UNIT = Decimal("0.01")
"""Settled points are shown to the hundredth (:attr:`SettledPlayer.settled_shown`)."""


class SettlementError(ValueError):
    """Totals that cannot be settled (they do not sum to zero, a player twice, a bad stake)."""


@dataclass(frozen=True, slots=True)
class MatchTotal:
    """One player's part of a match: hands played and the sum of their hand points."""

    player: str
    hands: int
    points: int


@dataclass(frozen=True, slots=True)
class SettledPlayer:
    """One player's settlement of a match."""

    player: str
    hands: int
    points: int
    """The sum of the player's hand points over the match."""
    settled: Fraction
    """Exact settled points (the cap and the shortfall applied)."""
    settled_shown: Decimal
    """``settled`` to the hundredth, the players' values summing to exactly zero."""
    money: Decimal
    """Money won (+) or paid (−), in the settlement's money unit; the players' sum is zero."""
    capped: bool
    """True when the player's total was below −cap and they paid only the cap."""


@dataclass(frozen=True, slots=True)
class Settlement:
    """A settled match: one :class:`SettledPlayer` per player, in the order given."""

    players: tuple[SettledPlayer, ...]
    cap: int
    """The match cap applied (0: none)."""
    stake: Decimal
    """Money per point."""
    money_unit: Decimal
    """The smallest amount of money paid (0.01, or the stake's last decimal)."""
    shortfall: Fraction
    """Points the capped players did not pay, taken from the winners."""

    def player(self, name: str) -> SettledPlayer:
        """The settlement of one player (KeyError when they did not play the match)."""
        for settled in self.players:
            if settled.player == name:
                return settled
        raise KeyError(name)


def stake_value(stake: Decimal | float | int | str) -> Decimal:
    """A stake (money per point) as an exact decimal: floats by their shortest text (0.1 is
    ``Decimal("0.1")``, not the binary fraction). Raises :class:`SettlementError` for a negative,
    infinite or unreadable stake, and one beyond the bounds of
    :func:`~pipeline.rules.ruleset.stake_problem`.

    >>> stake_value(0.1), stake_value("0.05"), stake_value(2)
    (Decimal('0.1'), Decimal('0.05'), Decimal('2'))
    """
    try:
        value = stake if isinstance(stake, Decimal) else Decimal(str(stake).strip())
    except InvalidOperation:
        raise SettlementError(f"stake {stake!r} is not a number") from None
    problem = stake_problem(value)
    if problem is not None:
        raise SettlementError(f"stake {stake!r} {problem}")
    return value


def money_unit(stake: Decimal) -> Decimal:
    """The money unit a stake settles in: a cent, or the stake's last decimal if finer.

    >>> money_unit(Decimal("0.1")), money_unit(Decimal("2")), money_unit(Decimal("0.005"))
    (Decimal('0.01'), Decimal('0.01'), Decimal('0.001'))
    """
    return Decimal(1).scaleb(-max(2, stake_decimals(stake)))


def apportion(amounts: Sequence[Fraction], unit: Fraction) -> list[Fraction]:
    """Exact amounts rounded to whole ``unit``s keeping their sum (largest remainder).

    Each amount is rounded down, then the units that keeps the sum exact go one each to the
    amounts with the largest remainders (ties: the earlier amount). So each result is its amount
    rounded down or up by less than one unit, and an amount that is already a whole number of
    units is returned unchanged. The sum of ``amounts`` must be a whole number of units.

    >>> apportion([Fraction(10, 3), Fraction(20, 3), Fraction(-10)], Fraction(1, 100))
    [Fraction(333, 100), Fraction(667, 100), Fraction(-10, 1)]
    """
    if unit <= 0:
        raise SettlementError(f"the rounding unit must be positive, got {unit}")
    scaled = [amount / unit for amount in amounts]
    total = sum(scaled, Fraction(0))
    if total.denominator != 1:
        raise SettlementError(f"amounts summing to {total * unit} cannot be paid in units of {unit}")
    floors = [value.numerator // value.denominator for value in scaled]
    left = int(total) - sum(floors)
    order = sorted(range(len(scaled)), key=lambda index: (-(scaled[index] - floors[index]), index))
    for index in order[:left]:
        floors[index] += 1
    return [Fraction(value) * unit for value in floors]


def _unsigned_zero(value: Decimal) -> Decimal:
    """``value``, but never a negative zero (a loser's points at a stake of 0 printed as
    ``-0.00``)."""
    return value if value else value.copy_abs()


def _decimal(value: Fraction) -> Decimal:
    """An exact fraction with a terminating decimal expansion as a Decimal."""
    return Decimal(value.numerator) / Decimal(value.denominator)


def settle_match(
    totals: Iterable[MatchTotal] | Mapping[str, int], cap: int = 0,
    stake: Decimal | float | int | str = 0,
) -> Settlement:
    """Settle a match: the cap on what a loser pays, the shortfall from the winners, money.

    ``totals`` is each player's :class:`MatchTotal` (or ``{player: points}``, one hand each);
    ``cap`` the match cap in points (0: none); ``stake`` the money per point. Raises
    :class:`SettlementError` when the totals do not sum to zero or name a player twice.

    One loser capped (cap 30): the loser's 45 is cut to 30; the shortfall of 15 is taken from
    the winners in proportion to their winnings 30 and 15 (10 and 5).

    >>> settled = settle_match({"ann": 30, "bob": 15, "cy": -45}, cap=30, stake="0.10")
    >>> [(p.player, p.settled, p.money, p.capped) for p in settled.players]
    [('ann', Fraction(20, 1), Decimal('2.00'), False), ('bob', Fraction(10, 1), Decimal('1.00'), False), ('cy', Fraction(-30, 1), Decimal('-3.00'), True)]
    """
    if isinstance(totals, Mapping):
        totals = [MatchTotal(str(name), 1, int(points)) for name, points in totals.items()]
    players = list(totals)
    names = [total.player for total in players]
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise SettlementError(f"player {twice[0]!r} appears twice in the match")
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
        raise SettlementError(f"the match cap must be a whole number ≥ 0, got {cap!r}")
    balance = sum(total.points for total in players)
    if balance != 0:
        raise SettlementError(f"the match's points sum to {balance:+d}, not 0: it cannot be settled")
    stake_decimal = stake_value(stake)
    unit = money_unit(stake_decimal)
    # Money is exact: quantizing it needs as many digits as the largest amount has before the
    # point and the unit after it (Decimal's default of 28 fell short for large totals at
    # fine stakes).
    digits = (len(str(max((abs(total.points) for total in players), default=0)))
              + len(str(int(stake_decimal))) + MAX_STAKE_DECIMALS + 4)
    with localcontext() as context:
        context.prec = max(context.prec, digits)
        return _settled(players, names, cap, stake_decimal, unit)


def _settled(players: list[MatchTotal], names: list[str], cap: int, stake_decimal: Decimal,
             unit: Decimal) -> Settlement:
    """:func:`settle_match` once its totals, cap and stake are checked."""
    capped = [bool(cap) and total.points < -cap for total in players]
    if not any(capped):
        # the plain totals: whole points, and money a whole number of units (no rounding)
        return Settlement(
            players=tuple(
                SettledPlayer(
                    player=total.player, hands=total.hands, points=total.points,
                    settled=Fraction(total.points),
                    settled_shown=Decimal(total.points).quantize(POINTS_UNIT),
                    money=_unsigned_zero((total.points * stake_decimal).quantize(unit)),
                    capped=False,
                )
                for total in players
            ),
            cap=cap, stake=stake_decimal, money_unit=unit, shortfall=Fraction(0),
        )
    settled = [Fraction(total.points) for total in players]
    shortfall = sum((Fraction(-total.points - cap) for total, over in zip(players, capped,
                                                                          strict=True) if over),
                    Fraction(0))
    if shortfall:
        winnings = sum(total.points for total in players if total.points > 0)
        for index, total in enumerate(players):
            if capped[index]:
                settled[index] = Fraction(-cap)
            elif total.points > 0:
                settled[index] = Fraction(total.points) * (winnings - shortfall) / winnings
    # rounded in the order of the players' names, so a tie goes to the same player whatever
    # order the totals come in
    by_name = sorted(range(len(players)), key=lambda index: names[index])
    money = [Fraction(0)] * len(players)
    shown = [Fraction(0)] * len(players)
    for index, value, point in zip(by_name, apportion(
            [settled[index] * Fraction(stake_decimal) for index in by_name], Fraction(unit)),
            apportion([settled[index] for index in by_name], Fraction(POINTS_UNIT)), strict=True):
        money[index], shown[index] = value, point
    return Settlement(
        players=tuple(
            SettledPlayer(
                player=total.player, hands=total.hands, points=total.points,
                settled=settled[index],
                settled_shown=_decimal(shown[index]).quantize(POINTS_UNIT),
                money=_decimal(money[index]).quantize(unit),
                capped=capped[index],
            )
            for index, total in enumerate(players)
        ),
        cap=cap, stake=stake_decimal, money_unit=unit, shortfall=shortfall,
    )


def match_cap_of(rules: RuleSet) -> int:
    """The match cap of a rule set: its ``match_cap`` under ``cap_scope = "match"``, else 0 (a
    per-hand cap acts on the hands' points, which a match then settles as they are)."""
    scoring = rules.scoring
    return scoring.match_cap if scoring.cap_scope is CapScope.MATCH else 0


def settle_under_rules(
    totals: Iterable[MatchTotal] | Mapping[str, int], rules: RuleSet,
    stake: Decimal | float | int | str | None = None,
) -> Settlement:
    """:func:`settle_match` with the rule set's match cap and stake (``stake`` overrides it, as
    a live session's own money per point does)."""
    return settle_match(totals, match_cap_of(rules), rules.scoring.stake if stake is None else stake)
