"""Reference groups: whom a player is compared with, and who is left out as an outlier.

A :class:`ReferenceSpec` says which players form the group:

* ``field`` — everyone else in scope;
* ``stake`` — the players of a stake: everyone with hands under the named rules (a game's rules
  carry its stake and house rules), counted on those hands only;
* ``named`` — a list of regulars;
* ``qualified`` — everyone with at least N hands in scope whose foul rate is below X.

Then the outlier rule (visible, and it can be turned off): among the field's players with at
least ``min_sample`` hands, a player whose results (points per opponent per hand, against
everyone but the player under review) sit more than ``outlier_sd`` robust standard deviations
(1.4826 × the median absolute deviation) from the field's median is left out: never a member,
and pairings against him do not count in the group's results.

Pure: it works on the per-player totals and pairings of :mod:`pipeline.read.report`.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from pipeline.report.stats import robust_scale

DEFAULT_OUTLIER_SD = 3.0
MIN_JUDGED_PLAYERS = 4
"""The outlier rule needs at least this many candidates with enough hands to judge anyone."""


class GroupKind(enum.StrEnum):
    """How the reference group is chosen."""

    FIELD = "field"
    STAKE = "stake"
    NAMED = "named"
    QUALIFIED = "qualified"


class ReferenceError(ValueError):
    """A reference group that cannot be used (the message says why)."""


@dataclass(frozen=True, slots=True)
class ReferenceSpec:
    """Which players form the reference group, and the outlier rule.

    ``names``: the regulars (``named``); ``rules``: the rules names of the stake (``stake``);
    ``min_hands`` and ``max_foul_rate`` (a share, 0-1): the bar of ``qualified``.
    ``outlier_sd``: players beyond this many robust SDs are left out; None turns the rule off.
    """

    kind: GroupKind = GroupKind.FIELD
    names: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    min_hands: int = 0
    max_foul_rate: float | None = None
    outlier_sd: float | None = DEFAULT_OUTLIER_SD

    def check(self) -> None:
        """Raise :class:`ReferenceError` when the spec cannot select anyone by construction."""
        if self.kind is GroupKind.NAMED and not self.names:
            raise ReferenceError("a named reference group needs at least one player")
        if self.kind is GroupKind.STAKE and not self.rules:
            raise ReferenceError("a stake reference group needs the rules it is played under")
        if self.kind is GroupKind.QUALIFIED:
            if self.min_hands < 1:
                raise ReferenceError("a qualified reference group needs a minimum of hands ≥ 1")
            if self.max_foul_rate is None or not 0 < self.max_foul_rate <= 1:
                raise ReferenceError("a qualified reference group needs a foul rate bar in (0, 1]")
        if self.outlier_sd is not None and self.outlier_sd <= 0:
            raise ReferenceError("the outlier rule needs a positive number of robust SDs")

    @property
    def label(self) -> str:
        """A short name for the group, shown on every finding."""
        if self.kind is GroupKind.FIELD:
            return "the field"
        if self.kind is GroupKind.STAKE:
            return f"players at {', '.join(self.rules)}"
        if self.kind is GroupKind.NAMED:
            shown = ", ".join(self.names[:4]) + (f" +{len(self.names) - 4}"
                                                 if len(self.names) > 4 else "")
            return f"regulars ({shown})"
        assert self.max_foul_rate is not None
        return (f"players with ≥ {self.min_hands:,} hands fouling < "
                f"{self.max_foul_rate * 100:.0f} %")

    @property
    def outlier_text(self) -> str:
        """The outlier rule in words."""
        if self.outlier_sd is None:
            return "outlier rule off: nobody is left out"
        return (f"players whose results (points per opponent per hand) sit more than "
                f"{self.outlier_sd:g} times the field's typical spread from its median "
                "(allowing for their own luck) are left out")

    @classmethod
    def parse(cls, text: str, outlier_sd: float | None = DEFAULT_OUTLIER_SD) -> ReferenceSpec:
        """From the command line: ``field``, ``stake:RULES[,RULES]``, ``named:A,B,C`` (also
        ``players:``), ``qualified:N:X`` (X a percentage or a share, e.g. ``25`` or ``0.25``).

        >>> ReferenceSpec.parse("qualified:300:25").max_foul_rate
        0.25
        >>> ReferenceSpec.parse("named:mara,lee").names
        ('mara', 'lee')
        """
        kind, _, rest = text.strip().partition(":")
        kind = kind.strip().lower()
        if kind == "field" and not rest:
            spec = cls(GroupKind.FIELD, outlier_sd=outlier_sd)
        elif kind == "stake":
            spec = cls(GroupKind.STAKE, rules=_names(rest), outlier_sd=outlier_sd)
        elif kind in ("named", "players", "regulars"):
            spec = cls(GroupKind.NAMED, names=_names(rest), outlier_sd=outlier_sd)
        elif kind == "qualified":
            parts = rest.split(":")
            if len(parts) != 2:
                raise ReferenceError(f"qualified needs N:X (hands and foul rate), got {text!r}")
            try:
                hands = int(parts[0])
                rate = float(parts[1].rstrip("% "))
            except ValueError as error:
                raise ReferenceError(f"qualified needs N:X as numbers, got {text!r}") from error
            spec = cls(GroupKind.QUALIFIED, min_hands=hands,
                       max_foul_rate=rate / 100 if rate > 1 else rate, outlier_sd=outlier_sd)
        else:
            raise ReferenceError(
                f"unknown reference group {text!r} (use field, stake:RULES, named:A,B or "
                "qualified:N:X)")
        spec.check()
        return spec


def _names(text: str) -> tuple[str, ...]:
    names: list[str] = []
    for name in text.split(","):
        name = name.strip()
        if name and name not in names:
            names.append(name)
    return tuple(names)


FIELD = ReferenceSpec()
"""The default: everyone else in scope, outliers left out."""


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A candidate the outlier rule left out: hands, points per opponent per hand, robust z."""

    player: str
    hands: int
    points_per_opponent: float
    robust_z: float


@dataclass(frozen=True, slots=True)
class ReferenceGroup:
    """The chosen group: its members, who was left out and why, and how to describe it.

    ``rules``: the stake's rules (the members' hands are counted under them only), empty for
    every other kind. ``player_robust_z``: where the player's own points per hand sit on the
    same scale (None when the rule could not be applied); ``player_is_outlier`` when beyond it.
    """

    spec: ReferenceSpec
    members: tuple[str, ...]
    left_out: tuple[LeftOut, ...]
    rules: tuple[str, ...] = ()
    centre: float | None = None
    robust_sd: float | None = None
    player_robust_z: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def label(self) -> str:
        """The group's short name."""
        return self.spec.label

    @property
    def left_out_names(self) -> tuple[str, ...]:
        """The players left out by the outlier rule."""
        return tuple(item.player for item in self.left_out)

    @property
    def player_is_outlier(self) -> bool:
        """The player's own results are beyond the outlier rule's threshold."""
        return (self.spec.outlier_sd is not None and self.player_robust_z is not None
                and abs(self.player_robust_z) > self.spec.outlier_sd)

    @property
    def description(self) -> str:
        """The group in a sentence: who, how many, who was left out."""
        count = len(self.members)
        text = f"{self.label}: {count:,} player{'s' if count != 1 else ''}"
        if self.left_out:
            names = ", ".join(f"{item.player} ({item.points_per_opponent:+.2f} per opponent "
                              f"per hand, {item.robust_z:+.1f} times the typical spread)"
                              for item in self.left_out)
            text += f"; left out as outliers of the field (never members, and pairings against " \
                    f"them do not count): {names}"
        text += f" ({self.spec.outlier_text})"
        return text + "."


def _per_player(totals: pl.DataFrame) -> pl.DataFrame:
    if totals.is_empty():
        return pl.DataFrame(schema={"player": pl.String, "hands": pl.Int64, "points": pl.Int64,
                                    "fouls": pl.Int64})
    return (totals.group_by("player")
            .agg(pl.col("hands").sum(), pl.col("points").sum(), pl.col("fouls").sum())
            .sort("player"))


def candidates(totals: pl.DataFrame, spec: ReferenceSpec,
               exclude: Sequence[str]) -> pl.DataFrame:
    """The rows of ``totals`` (per player and stratum) that the group counts, before the
    outlier rule: the group's players (never those in ``exclude``), their stake's hands only."""
    rows = totals.filter(~pl.col("player").is_in(list(exclude)))
    if spec.kind is GroupKind.STAKE:
        rows = rows.filter(pl.col("rules").is_in(list(spec.rules)))
    elif spec.kind is GroupKind.NAMED:
        rows = rows.filter(pl.col("player").is_in(list(spec.names)))
    elif spec.kind is GroupKind.QUALIFIED:
        per_player = _per_player(rows)
        assert spec.max_foul_rate is not None
        keep = per_player.filter(
            (pl.col("hands") >= spec.min_hands)
            & (pl.col("fouls") < spec.max_foul_rate * pl.col("hands")))
        rows = rows.filter(pl.col("player").is_in(keep["player"].to_list()))
    return rows


@dataclass(frozen=True, slots=True)
class PairingResult:
    """A player's points per opponent per hand, with its standard error."""

    hands: int
    value: float
    se: float


def pairing_results(pairs: pl.DataFrame, exclude: Sequence[str] = (),
                    rules: Sequence[str] = ()) -> dict[str, PairingResult]:
    """Each player's points per opponent per hand, against everyone but ``exclude`` (from
    :func:`pipeline.read.report.report_pair_totals`; under ``rules`` only when given)."""
    if pairs.is_empty():
        return {}
    rows = pairs.filter(~pl.col("opponent").is_in(list(exclude)))
    if rules:
        rows = rows.filter(pl.col("rules").is_in(list(rules)))
    summed = rows.group_by("player", maintain_order=True).agg(pl.col("hands").sum(), pl.col("points").sum(),
                                         pl.col("points_sq").sum())
    results = {}
    for player, hands, points, points_sq in summed.select(
            "player", "hands", "points", "points_sq").rows():
        if not hands:
            continue
        se = 0.0
        if hands > 1:
            variance = (points_sq - points * points / hands) / (hands - 1)
            se = math.sqrt(max(variance, 0.0) / hands)
        results[player] = PairingResult(int(hands), points / hands, se)
    return results


def field_outliers(totals: pl.DataFrame, pairs: pl.DataFrame, outlier_sd: float | None,
                   exclude: Sequence[str] = (), min_sample: int = 30
                   ) -> tuple[list[LeftOut], float | None, float | None, float | None, list[str]]:
    """The players of the field (everyone but ``exclude``) beyond the outlier rule.

    The rule judges the players with at least ``min_sample`` hands by their results: points per
    opponent per hand, against everyone but ``exclude`` (the player under review never decides
    who counts as an outlier). It leaves out the most extreme player beyond ``outlier_sd``
    robust SDs, then judges the others again without their pairings against those left out (a
    player who fed on an outlier is not an outlier himself), until nobody is beyond it. A
    player's distance is measured against the robust SD of the results combined with the
    player's own standard error, ``(result - median) / sqrt(robust SD² + SE²)``: a player whose
    distance could be his own noise is never left out. It needs :data:`MIN_JUDGED_PLAYERS`
    players.

    Returns (left out, median, spread, the player's own robust z, notes).
    """
    notes: list[str] = []
    left_out: list[LeftOut] = []
    centre = spread = player_z = None
    if outlier_sd is None:
        return left_out, centre, spread, player_z, notes
    field = _per_player(totals.filter(~pl.col("player").is_in(list(exclude))))
    enough = {player for player, hands in field.select("player", "hands").rows()
              if hands >= max(1, min_sample)}
    if len(enough) < MIN_JUDGED_PLAYERS:
        notes.append(f"the outlier rule needs {MIN_JUDGED_PLAYERS} players with at least "
                     f"{min_sample:,} hands; it left nobody out")
        return left_out, centre, spread, player_z, notes
    while True:
        out = [item.player for item in left_out]
        results = pairing_results(pairs, [*exclude, *out])
        judged = {player: results[player] for player in sorted(enough - set(out))
                  if player in results}
        if len(judged) < MIN_JUDGED_PLAYERS:
            break
        scale = robust_scale([result.value for result in judged.values()])
        assert scale is not None
        centre, spread = scale

        def z_of(value: float, se: float) -> float | None:
            scale_of = math.sqrt(spread * spread + se * se)  # noqa: B023
            return (value - centre) / scale_of if scale_of > 0 else None  # noqa: B023

        scored = [(abs(z), player, result, z) for player, result in judged.items()
                  if (z := z_of(result.value, result.se)) is not None]
        if not scored:
            notes.append("the outlier rule found no spread among the field's players")
            break
        _, player, result, z = max(scored, key=lambda item: (item[0], item[1]))
        if abs(z) <= outlier_sd:
            mine = pairing_results(pairs.filter(pl.col("player").is_in(list(exclude)))
                                   if not pairs.is_empty() else pairs, out)
            if mine:
                hands = sum(item.hands for item in mine.values())
                value = sum(item.value * item.hands for item in mine.values()) / hands
                se = math.sqrt(sum((item.se * item.hands) ** 2 for item in mine.values())) / hands
                player_z = z_of(value, se)
            break
        left_out.append(LeftOut(player, result.hands, result.value, z))
    return left_out, centre, spread, player_z, notes


def choose_reference(totals: pl.DataFrame, pairs: pl.DataFrame, spec: ReferenceSpec,
                     exclude: Sequence[str] = (), min_sample: int = 30) -> ReferenceGroup:
    """The reference group from the per-player totals and pairings of everyone in scope.

    ``exclude``: the player's own names (never part of the group). The outlier rule
    (:func:`field_outliers`) judges the whole field, whatever the group: a player beyond it is
    never a member, and everyone's pairings against such a player are left out of the group's
    results.
    """
    spec.check()
    per_player = _per_player(candidates(totals, spec, exclude))
    left_out, centre, spread, player_z, notes = field_outliers(
        totals, pairs, spec.outlier_sd, exclude, min_sample)
    said: list[str] = []
    if spec.kind is GroupKind.NAMED:
        missing = [name for name in spec.names if name not in set(per_player["player"])
                   and name not in exclude]
        if missing:
            said.append(f"no hands in scope for {', '.join(missing)}")
        own = [name for name in spec.names if name in exclude]
        if own:
            said.append(f"{', '.join(own)} {'is' if len(own) == 1 else 'are'} the player under "
                        "review: never in the reference group")
    elif spec.kind is GroupKind.STAKE:
        played = sorted(set(totals["rules"].to_list())) if "rules" in totals.columns else []
        unplayed = [name for name in spec.rules if name not in played]
        if unplayed:
            said.append(f"no hands in scope under rules {', '.join(unplayed)} "
                        f"(in scope: {', '.join(played) or 'none'})")
    out_names = {item.player for item in left_out}
    members = tuple(name for name in per_player["player"].to_list() if name not in out_names)
    if not members:
        said.append("nobody is in it: nothing is compared")
    notes[:0] = said
    return ReferenceGroup(
        spec=spec, members=members, left_out=tuple(left_out),
        rules=spec.rules if spec.kind is GroupKind.STAKE else (),
        centre=centre, robust_sd=spread, player_robust_z=player_z, notes=tuple(notes),
    )


def member_rows(totals: pl.DataFrame, group: ReferenceGroup) -> pl.DataFrame:
    """The rows of a per-player frame that belong to the group (its stake's hands only)."""
    rows = totals.filter(pl.col("player").is_in(list(group.members)))
    if group.rules and "rules" in rows.columns:
        rows = rows.filter(pl.col("rules").is_in(list(group.rules)))
    return rows
