"""The coaching report's money section: what the player won or paid per match, when a stake is set.

A match (the hands carrying one ``match_id``, docs/rules.md section 9) is settled by the read
model (:func:`pipeline.read.matches.match_settlements`, the figure ``ofc settle`` prints): the
player's points over the match, after the match cap, and the money at the match's stake. The
section lists the player's matches in the report's dates (a match is taken whole, by its first
hand's day) and is left out when none of them has a stake: points alone are the report's
business everywhere else. A match that cannot be settled is listed with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from pipeline import read
from pipeline.read.source import Database

__all__ = ["MatchMoney", "MatchMoneyLine", "match_money_section"]


@dataclass(frozen=True, slots=True)
class MatchMoneyLine:
    """One match of the player: points, points after the match cap, money (text and number)."""

    match: str
    site: str
    started_at: str | None
    hands: int
    points: int
    settled: float | None
    money: float | None
    money_text: str
    """Money with its sign in the match's unit (``+1.60``), or ``–`` when not settled."""
    stake: str
    capped: bool
    note: str


@dataclass(frozen=True, slots=True)
class MatchMoney:
    """The money section: one line per match and the sum of the money won or paid."""

    lines: tuple[MatchMoneyLine, ...]
    total: float
    total_text: str
    unsettled: int


def _signed(amount: Decimal) -> str:
    return f"{amount:+}" if amount else f"{amount}"


def match_money_section(db: Database, names: Sequence[str], since: date | None = None,
                        until: date | None = None) -> MatchMoney | None:
    """The money the player (any of ``names``) won or paid per match, or None when none of the
    player's matches in the dates has a stake."""
    matches = [match for match in read.matches.match_settlements(db, players=tuple(names))
               if (since is None or (match.started_at is not None
                                     and match.started_at.date() >= since))
               and (until is None or (match.started_at is not None
                                      and match.started_at.date() <= until))]
    if not any(match.stake for match in matches):
        return None
    lines = []
    total = Decimal(0)
    for match in matches:
        mine = [total_ for total_ in match.players if total_.player in names]
        if not mine:
            continue
        player = mine[0]
        settled = (match.settlement.player(player.player) if match.settlement is not None
                   else None)
        if settled is not None:
            total += settled.money
        lines.append(MatchMoneyLine(
            match=match.match_id, site=match.site,
            started_at=match.started_at.isoformat(sep=" ", timespec="minutes")
            if match.started_at is not None else None,
            hands=player.hands, points=player.points,
            settled=None if settled is None else float(settled.settled_shown),
            money=None if settled is None else float(settled.money),
            money_text="–" if settled is None else _signed(settled.money),
            stake="–" if match.stake is None else str(match.stake),
            capped=bool(settled is not None and settled.capped),
            note=(f"not settled: {match.problem}" if match.problem
                  else f"paid the match cap {match.cap}" if settled is not None and settled.capped
                  else ""),
        ))
    return MatchMoney(lines=tuple(lines), total=float(total), total_text=_signed(total),
                      unsettled=sum(line.money is None for line in lines))
