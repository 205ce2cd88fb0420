"""One definition per figure that the report and the comparison pages both show.

The coaching report (every format), Player review, Compare players and Sessions show a player
against a group: the group itself (:func:`pipeline.report.reference.choose_reference`, the
player never in it), the rates against the group (:func:`mix_rate`), the strength shrunk toward
the group (:func:`strength`), and where a rank or a percentile may be shown (:func:`separation`
and the rule of :func:`rank_rule` / :func:`percentile_rule`). Each is computed here once and
nowhere else, so the same settings give the same numbers on every page.

A rank or a percentile is shown only when it can mean something: the group's players must be
told apart by their results (their spread is more than their noise: Cochran's heterogeneity
test, p < :data:`SEPARATION_P`), and there must be enough of them (:data:`RANK_MIN_PLAYERS` for
a rank, :data:`PERCENTILE_MIN_PLAYERS` for a percentile). Otherwise the pages and the report say
why there is none.

Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipeline.report.inference import chi_square_p
from pipeline.report.model import StrengthView
from pipeline.report.stats import Mean, estimate_prior, percentile_rank, shrink

RANK_MIN_PLAYERS = 5
"""A rank needs at least this many players (the player and the group's players with enough
hands)."""
PERCENTILE_MIN_PLAYERS = 10
"""A percentile needs at least this many of the group's players with enough hands."""
SEPARATION_P = 0.05
"""The group's players are told apart when the heterogeneity test of their results gives a
p-value below this."""

Stratum = tuple[str, int]
"""A variant and a table size: the cells every comparison is made within."""


@dataclass(frozen=True, slots=True)
class Separation:
    """Can the players be told apart by their results? Cochran's Q over their points per hand
    (weighted by their precision) against its chi-square with ``players - 1`` degrees of
    freedom."""

    players: int
    statistic: float
    p_value: float | None

    @property
    def told_apart(self) -> bool:
        """The players' results differ by more than their noise."""
        return self.p_value is not None and self.p_value < SEPARATION_P

    @property
    def text(self) -> str:
        """In words, with the test."""
        if self.p_value is None:
            return f"{self.players} player{'s' if self.players != 1 else ''}: too few to tell apart"
        verdict = "can be told apart" if self.told_apart else "cannot be told apart"
        return (f"the {self.players} players {verdict} by their results (heterogeneity test "
                f"p = {self.p_value:.3f})")


def separation(means: Sequence[Mean]) -> Separation:
    """Whether players with these results (each a :class:`Mean` of points per hand) differ by
    more than their noise."""
    usable = [(m.value, m.se) for m in means if m.value is not None and m.se]
    if len(usable) < 2:
        return Separation(len(usable), 0.0, None)
    weights = [1 / (se * se) for _, se in usable]
    centre = sum(w * v for w, (v, _) in zip(weights, usable, strict=True)) / sum(weights)
    statistic = sum(w * (v - centre) ** 2 for w, (v, _) in zip(weights, usable, strict=True))
    return Separation(len(usable), statistic, chi_square_p(statistic, len(usable) - 1))


def rank_rule(players: int, apart: Separation) -> str | None:
    """Why there is no rank (None when a rank may be shown)."""
    if players < RANK_MIN_PLAYERS:
        return (f"not ranked: {players} players with enough hands, at least "
                f"{RANK_MIN_PLAYERS} needed")
    if not apart.told_apart:
        return f"not ranked: {apart.text}"
    return None


def percentile_rule(players: int, apart: Separation) -> str | None:
    """Why there is no percentile (None when one may be shown)."""
    if players < PERCENTILE_MIN_PLAYERS:
        return (f"no percentile: {players} other player{'s' if players != 1 else ''} with "
                f"enough hands, at least {PERCENTILE_MIN_PLAYERS} needed")
    if not apart.told_apart:
        return f"no percentile: {apart.text}"
    return None


def standing_in(own: Mean, others: Sequence[Mean]) -> tuple[float | None, str]:
    """The percentile of ``own`` among ``others`` (points per hand, ties half) and the note
    saying what it means or why there is none."""
    apart = separation([own, *others])
    reason = percentile_rule(len(others), apart)
    if reason is not None:
        return None, reason
    value = percentile_rank(own.value or 0.0, [m.value for m in others if m.value is not None])
    return value, (f"better than {value:.0f} % of {len(others)} players ({apart.text})")


def strength(own: Mean, members: Mapping[str, Mean], is_outlier: bool, min_sample: int,
             label: str) -> StrengthView | None:
    """The player's points per hand (``own``, on the results basis) shrunk toward the group's
    players with at least ``min_sample`` hands (``members``, the player never among them).

    Empirical Bayes: the spread of true strength among the group's players is their spread of
    results less their noise (DerSimonian-Laird); the player keeps spread² / (spread² + SE²) of
    his own figure. When that spread is estimated at zero (the group's players differ no more
    than luck makes them), there is no strength to show (every player would be the group's
    mean) and no rank; with a spread, a rank only by :func:`rank_rule` (told apart, enough
    players). A player beyond the outlier
    rule is not drawn from the group: None. None also without an error estimate.
    """
    if is_outlier or own.value is None or not own.se:
        return None
    group = {player: mean for player, mean in sorted(members.items())
             if mean.n >= min_sample and mean.value is not None and mean.se}
    prior = estimate_prior([m.value for m in group.values()],  # type: ignore[misc]
                           [m.se for m in group.values()])  # type: ignore[misc]
    if prior is None:
        return None
    apart = separation(list(group.values()) + [own])
    ranked = len(group) + 1
    base = (f"{own.value:+.2f} ± {own.se:.2f} points per hand over {own.n:,} hands; "
            f"{label}: {prior.players} players with at least {min_sample:,} hands, mean "
            f"{prior.mean:+.2f}")
    if prior.spread == 0:
        return StrengthView(raw=own.value, raw_se=own.se, value=None, low=None, high=None,
                            weight=None, group_mean=prior.mean, group_spread=0.0,
                            group_players=prior.players, rank=None, ranked=ranked,
                            note=("none to estimate: the group's players differ no more "
                                  "than luck makes them (they cannot be told apart by their "
                                  "results), so nobody is ranked. The player's own results: "
                                  f"{base}"),
                            separation_p=apart.p_value)
    own_shrunk = shrink(own.value, own.se, prior)
    low, high = own_shrunk.interval()
    others = [shrink(m.value, m.se, prior).value for m in group.values()]  # type: ignore[arg-type]
    reason = rank_rule(ranked, apart)
    rank = None if reason else 1 + sum(value > own_shrunk.value for value in others)
    note = (f"{base}, true strength varying by about {prior.spread:.2f} points per hand; "
            f"{own_shrunk.weight * 100:.0f} % of the player's own difference from that mean is "
            "kept, the rest is taken as luck")
    note += f"; {reason}" if reason else f"; rank {rank} of {ranked} ({apart.text})"
    return StrengthView(raw=own.value, raw_se=own.se, value=own_shrunk.value, low=low,
                        high=high, weight=own_shrunk.weight, group_mean=prior.mean,
                        group_spread=prior.spread, group_players=prior.players, rank=rank,
                        ranked=ranked, note=note, separation_p=apart.p_value)


@dataclass(frozen=True, slots=True)
class MixRate:
    """A ratio of the player and the group's, the group's weighted by the player's own mix of
    variants and table sizes: ``group = Σ (player's units in s / player's units) × group's ratio
    in s`` over the strata both have."""

    player: float | None
    group: float | None
    player_units: int
    group_units: int

    @property
    def difference(self) -> float | None:
        """The player's minus the group's."""
        if self.player is None or self.group is None:
            return None
        return self.player - self.group


def mix_rate(player: Mapping[Stratum, tuple[float, float]],
             group: Mapping[Stratum, tuple[float, float]]) -> MixRate:
    """``player`` and ``group`` map each stratum to (numerator, denominator), e.g. (fouls,
    hands). The player's figure is his own ratio over the strata the group has too; the group's
    is weighted by the player's denominators there."""
    strata = [s for s, (_, units) in sorted(player.items())
              if units > 0 and group.get(s, (0, 0))[1] > 0]
    if not strata:
        units = int(sum(u for _, u in player.values()))
        return MixRate(None, None, units, int(sum(u for _, u in group.values())))
    total = sum(player[s][1] for s in strata)
    mine = sum(player[s][0] for s in strata) / total
    theirs = math.fsum(player[s][1] / total * group[s][0] / group[s][1] for s in strata)
    return MixRate(mine, theirs, int(total), int(sum(group[s][1] for s in strata)))
