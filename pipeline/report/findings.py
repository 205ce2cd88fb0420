"""The findings engine: from the gathered frames to a :class:`~pipeline.report.model.Report`.

Pure: no database, no clock, no randomness; every ordering is explicit, so the same frames give
the same report.

How the player is compared with the field (everyone else in the same hands' scope):

* A statistic is computed per stratum (variant, or variant + table size + position) and the
  field's value is weighted by the player's own mix over those strata, so a player who plays
  more of a variant is compared with the field *in that variant*.
* The estimated cost or gain in points per hand is the difference to the field in each stratum,
  times what one unit of the statistic is worth in points there (measured on everyone's hands in
  scope, e.g. a foul's cost = mean points of fouled boards - mean points of legal boards), times
  the stratum's share of the player's hands; summed over strata. Positive: a gain.
* Confidence comes from a z statistic (difference over the combined standard error; rates use
  the Agresti-Caffo adjusted error so that 0 of 40 is not "certain"): |z| >= 1.96 is "clear"
  (95 %), |z| >= 1.28 "probably" (80 %), otherwise "no clear difference".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import polars as pl

from pipeline.read.players import position_label
from pipeline.report.data import ReportData, pick_notable
from pipeline.report.model import (
    DEFAULT_SETTINGS,
    BoardView,
    Estimate,
    Finding,
    Headline,
    NotableHand,
    PairingView,
    Report,
    ReportRequest,
    ReportSettings,
    SessionLine,
    VariantLine,
)
from pipeline.report.stats import (
    Z_80,
    Z_95,
    Mean,
    Proportion,
    percentile_rank,
    two_sided_p,
    weighted_slope,
    z_score,
)

TOPICS = ("Fouls", "Fantasyland", "Royalties", "Scoops", "Results", "Trend", "Head-to-head")
ROWS = ("top", "middle", "bottom")
MAX_CUMULATIVE_POINTS = 400
MIN_TREND_SESSIONS = 3  # a line through fewer points has no error estimate

DEFINITIONS: tuple[tuple[str, str], ...] = (
    ("Field", "Every other player in the same scope (dates and variant) - all screen names "
     "except the player's own and the aliases. Where a statistic depends on the variant or the "
     "seat, the field's value is weighted by the player's own mix of variants and seats."),
    ("Points per hand (estimate)", "The estimated effect on the player's overall points per "
     "hand compared with a field player in the same spots: the difference to the field, times "
     "what one unit is worth in points (measured on every board in scope), times the share of "
     "the player's hands it concerns. Positive is a gain, negative a cost. Estimates overlap "
     "(a foul also loses scoops), so they do not add up to the result."),
    ("Foul cost", "Mean points of fouled boards minus mean points of legal boards, over every "
     "board in scope of that variant."),
    ("Chasing Fantasyland", "A hand outside Fantasyland where the final top row qualifies for "
     "Fantasyland under the standard rule (a pair of queens or better, or trips), or - when the "
     "streets are recorded - a queen, king or ace went on the top row with the first five "
     "cards. Hands without streets are judged by their final board only."),
    ("Fantasyland entry / stay", "Entry: a hand outside Fantasyland that earns it (out of the "
     "hands outside Fantasyland). Stay: a Fantasyland hand that earns another (out of the "
     "Fantasyland hands). A Fantasyland hand is worth the mean points of Fantasyland hands "
     "minus those of other hands, over every board in scope."),
    ("Royalties by row", "Royalty points collected per hand from each row (none on a fouled "
     "board). Each royalty point is collected from every opponent, so the estimate multiplies "
     "the difference by the player's mean number of opponents."),
    ("Scoops", "Out of the player's pairings with each opponent in each hand: scooped the "
     "opponent (won all three rows, an opponent's foul included) or was scooped. A scoop is "
     "worth the mean settled points of scooping pairings minus those of pairings without a "
     "scoop."),
    ("Confidence", "From z = difference / combined standard error (rates: Agresti-Caffo "
     "adjusted): 'clear' at |z| >= 1.96 (95 %), 'probably' at |z| >= 1.28 (80 %). Intervals "
     "shown are 95 % (Wilson for rates, mean ± 1.96 SE otherwise)."),
    ("Minimum sample", "A finding needs a minimum number of observations from the player (and "
     "from the field to be compared); below it the report says so instead of guessing."),
    ("Sessions and trend", "A session is a player's run of hands at one table without a break "
     "of 30 minutes or more. The trend is a weighted least-squares line through the sessions "
     "in play order (weights: hands per session); its change is the fitted difference between "
     "the first and the last session."),
    ("Percentile", "Among players with enough hands in that variant, the share whose points "
     "per hand are below the player's (ties count half)."),
)


# --- statistics over strata -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Stratum:
    """One cell of a comparison: the player's and the field's statistic, and a unit's worth."""

    player: Proportion | Mean
    field: Proportion | Mean
    worth: float | None  # points per unit of the statistic (per foul, per royalty point, ...)


def _n(value: Proportion | Mean) -> int:
    return value.trials if isinstance(value, Proportion) else value.n


def _value(value: Proportion | Mean) -> float | None:
    return value.rate if isinstance(value, Proportion) else value.value


def _test_se(value: Proportion | Mean) -> float | None:
    """Standard error used for tests (rates adjusted: (x + 1) / (n + 2))."""
    if isinstance(value, Proportion):
        adjusted = (value.successes + 1) / (value.trials + 2)
        return math.sqrt(adjusted * (1 - adjusted) / (value.trials + 2))
    return value.se


def _display_se(value: Proportion | Mean) -> float | None:
    return value.se


def _pooled(values: Sequence[Proportion | Mean]) -> Proportion | Mean:
    if isinstance(values[0], Proportion):
        return Proportion(sum(v.successes for v in values),  # type: ignore[union-attr]
                          sum(v.trials for v in values))  # type: ignore[union-attr]
    return Mean(sum(v.n for v in values), sum(v.total for v in values),  # type: ignore[union-attr]
                sum(v.total_sq for v in values))  # type: ignore[union-attr]


def _estimate(value: Proportion | Mean) -> Estimate:
    interval = value.interval()
    return Estimate(
        value=_value(value), low=interval[0] if interval else None,
        high=interval[1] if interval else None, se=_display_se(value), sample=_n(value),
    )


@dataclass(frozen=True, slots=True)
class _Comparison:
    field: Estimate
    difference: float
    z: float | None
    points_per_hand: float | None


def _compare(strata: Sequence[_Stratum], total_hands: int, is_rate: bool) -> _Comparison | None:
    """The field weighted by the player's mix, the difference, its z, and the points estimate."""
    usable = [s for s in strata if _n(s.player) > 0 and _n(s.field) > 0]
    if not usable:
        return None
    weight_total = sum(_n(s.player) for s in usable)
    weights = [_n(s.player) / weight_total for s in usable]
    player_value = sum(w * _value(s.player) for w, s in zip(weights, usable, strict=True))  # type: ignore[misc]
    field_value = sum(w * _value(s.field) for w, s in zip(weights, usable, strict=True))  # type: ignore[misc]
    difference = player_value - field_value

    def combined(ses: Iterable[float | None]) -> float | None:
        ses = list(ses)
        if any(se is None for se in ses):
            return None
        return math.sqrt(sum((w * se) ** 2 for w, se in zip(weights, ses, strict=True)))  # type: ignore[operator]

    player_test = combined(_test_se(s.player) for s in usable)
    field_test = combined(_test_se(s.field) for s in usable)
    field_se = combined(_display_se(s.field) for s in usable)
    if len(usable) == 1:
        field_estimate = _estimate(usable[0].field)
    else:
        low = high = None
        if field_se is not None:
            low, high = field_value - Z_95 * field_se, field_value + Z_95 * field_se
            if is_rate:
                low, high = max(0.0, low), min(1.0, high)
        field_estimate = Estimate(field_value, low, high, field_se,
                                  sum(_n(s.field) for s in usable))
    z = z_score(difference, player_test, field_test)
    if difference == 0:
        z = 0.0
    points: float | None = 0.0
    for stratum in usable:
        gap = _value(stratum.player) - _value(stratum.field)  # type: ignore[operator]
        if gap == 0:
            continue
        if stratum.worth is None:
            points = None
            break
        points += _n(stratum.player) / total_hands * gap * stratum.worth  # type: ignore[operator]
    return _Comparison(field_estimate, difference, z, points)


def not_enough(sample: int, minimum: int, unit: str) -> str:
    """The minimum-sample message: ``Not enough data: Fantasyland hands: 1, at least 10 needed.``"""
    return f"Not enough data: {unit}: {sample:,}, at least {minimum:,} needed."


def _p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


FIELD_WORDS = ("higher than the field", "lower than the field", "No clear difference from the field")
TREND_WORDS = ("rising", "falling", "No clear trend")


def judge(difference: float | None, z: float | None, higher_is_better: bool | None,
          words: tuple[str, str, str] = FIELD_WORDS) -> tuple[str, str]:
    """The verdict and a confidence statement for a difference and its z statistic.

    ``words``: how to say "up", "down" and "no clear difference".
    """
    up, down, neither = words
    if difference is None:
        return "not compared", "Not compared."
    if z is None:
        return "in line", f"{neither}: no variation in the data."
    p = two_sided_p(z)
    assert p is not None
    direction = up if difference > 0 else down
    good = None if higher_is_better is None or difference == 0 else (
        (difference > 0) == higher_is_better)
    if abs(z) >= Z_95:
        verdict = "different" if good is None else ("strength" if good else "leak")
        return verdict, f"Clear: {direction} at 95 % confidence ({_p_text(p)})."
    if abs(z) >= Z_80:
        verdict = "probably different" if good is None else (
            "likely strength" if good else "likely leak")
        return verdict, f"Probably {direction} ({_p_text(p)}); not yet certain at 95 %."
    return "in line", f"{neither} ({_p_text(p)})."


# --- totals -----------------------------------------------------------------------------------


Totals = dict[str, dict[str, int]]


KEYS = ("player", "variant", "player_count", "position", "is_button")


def _sums(frame: pl.DataFrame) -> Totals:
    """Column sums (every total but the keys) per variant."""
    numeric = [c for c, t in frame.schema.items() if c not in KEYS and t.is_numeric()]
    summed = frame.group_by("variant").agg([pl.col(c).sum() for c in numeric]).sort("variant")
    return {row["variant"]: {c: int(row[c] or 0) for c in numeric}
            for row in summed.iter_rows(named=True)}


def _by_variant(frame: pl.DataFrame, names: Sequence[str], player_side: bool) -> Totals:
    """Totals per variant for the player's names (or for everyone else)."""
    if frame.is_empty():
        return {}
    mine = pl.col("player").is_in(list(names))
    part = frame.filter(mine if player_side else ~mine)
    return _sums(part) if not part.is_empty() else {}


def _all_variants(frame: pl.DataFrame) -> Totals:
    return _sums(frame) if not frame.is_empty() else {}


def _difference_of_means(total_a: int, n_a: int, total_b: int, n_b: int) -> float | None:
    if n_a <= 0 or n_b <= 0:
        return None
    return total_a / n_a - total_b / n_b


@dataclass(frozen=True, slots=True)
class _Worths:
    """What one unit of each statistic is worth in points, per variant (everyone in scope)."""

    foul: dict[str, float | None]
    fantasyland_hand: dict[str, float | None]
    scoop: dict[str, float | None]
    scooped: dict[str, float | None]


ALL_VARIANTS = "*"


def _with_total(totals: Totals) -> Totals:
    """``totals`` plus every variant together under ALL_VARIANTS."""
    if not totals:
        return {}
    columns = next(iter(totals.values())).keys()
    together = {c: sum(t[c] for t in totals.values()) for c in columns}
    return {**totals, ALL_VARIANTS: together}


def _worth(worths: dict[str, float | None], variant: str) -> float | None:
    """A unit's worth in ``variant``, else over every variant (when the variant has no example)."""
    value = worths.get(variant)
    return worths.get(ALL_VARIANTS) if value is None else value


def _worths(everyone: Totals, pairings: Totals) -> _Worths:
    foul, fantasyland, scoop, scooped = {}, {}, {}, {}
    everyone, pairings = _with_total(everyone), _with_total(pairings)
    for variant, t in everyone.items():
        foul[variant] = _difference_of_means(
            t["foul_points"], t["fouls"], t["points"] - t["foul_points"], t["hands"] - t["fouls"])
        fantasyland[variant] = _difference_of_means(
            t["fl_points"], t["fl_hands"], t["normal_points"], t["normal_hands"])
    for variant, m in pairings.items():
        neither = m["matchups"] - m["scoops"] - m["scooped"]
        scoop[variant] = _difference_of_means(m["scoop_points"], m["scoops"],
                                              m["neither_points"], neither)
        scooped[variant] = _difference_of_means(m["scooped_points"], m["scooped"],
                                                m["neither_points"], neither)
    return _Worths(foul, fantasyland, scoop, scooped)


# --- findings ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Spec:
    key: str
    topic: str
    title: str
    unit: str
    sample_unit: str
    higher_is_better: bool | None
    basis: str
    note: str = ""


def _finding(spec: _Spec, strata: Sequence[_Stratum], total_hands: int,
             settings: ReportSettings, minimum: int | None = None) -> Finding:
    """One finding from its strata, with the minimum-sample rule applied."""
    minimum = settings.min_sample if minimum is None else minimum
    is_rate = spec.unit == "rate"
    player = _pooled([s.player for s in strata]) if strata else (
        Proportion(0, 0) if is_rate else Mean(0, 0, 0))
    sample = _n(player)
    if sample < minimum:
        return Finding(
            key=spec.key, topic=spec.topic, title=spec.title, unit=spec.unit,
            sample_unit=spec.sample_unit, minimum=minimum, shown=False,
            player=Estimate(None, None, None, None, sample), field=None, difference=None,
            z=None, p_value=None, verdict="not enough data",
            confidence=not_enough(sample, minimum, spec.sample_unit),
            points_per_hand=None, basis=spec.basis, note=spec.note,
            higher_is_better=spec.higher_is_better,
        )
    estimate = _estimate(player)
    if spec.unit == "royalties" and estimate.low is not None:
        estimate = replace(estimate, low=max(0.0, estimate.low))  # royalties are never negative
    comparison = _compare(strata, total_hands, is_rate)
    if comparison is None:
        verdict, confidence = "not compared", "The field has no hands here to compare with."
        return Finding(spec.key, spec.topic, spec.title, spec.unit, spec.sample_unit, minimum,
                       True, estimate, None, None, None, None, verdict, confidence, None,
                       spec.basis, spec.note, spec.higher_is_better)
    if comparison.field.sample < minimum:
        confidence = (f"The field has only {comparison.field.sample:,} {spec.sample_unit} here, "
                      f"too few to compare (at least {minimum:,} needed).")
        return Finding(spec.key, spec.topic, spec.title, spec.unit, spec.sample_unit, minimum,
                       True, estimate, comparison.field, comparison.difference, None, None,
                       "not compared", confidence, None, spec.basis, spec.note,
                       spec.higher_is_better)
    verdict, confidence = judge(comparison.difference, comparison.z, spec.higher_is_better)
    return Finding(
        key=spec.key, topic=spec.topic, title=spec.title, unit=spec.unit,
        sample_unit=spec.sample_unit, minimum=minimum, shown=True, player=estimate,
        field=comparison.field, difference=comparison.difference, z=comparison.z,
        p_value=two_sided_p(comparison.z), verdict=verdict, confidence=confidence,
        points_per_hand=comparison.points_per_hand, basis=spec.basis, note=spec.note,
        higher_is_better=spec.higher_is_better,
    )


def _variants_of(player: Totals) -> list[str]:
    """The player's variants, most hands first."""
    return sorted(player, key=lambda v: (-player[v]["hands"], v))


def _zero(columns: Iterable[str]) -> dict[str, int]:
    return dict.fromkeys(columns, 0)


def _foul_findings(player: Totals, field: Totals, worths: _Worths, total: int,
                   settings: ReportSettings, streets_note: str) -> list[Finding]:
    variants = _variants_of(player)
    columns = next(iter(player.values())).keys()

    def f(v: str) -> dict[str, int]:
        return field.get(v) or _zero(columns)

    cost = "difference in foul rate × the foul cost of the variant (mean points of fouled " \
           "minus legal boards) × share of hands"
    findings = [_finding(
        _Spec("fouls.overall", "Fouls", "Foul rate", "rate", "hands", False, cost),
        [_Stratum(Proportion(player[v]["fouls"], player[v]["hands"]),
                  Proportion(f(v)["fouls"], f(v)["hands"]), _worth(worths.foul, v))
         for v in variants], total, settings)]
    if len(variants) > 1:
        for v in variants:
            findings.append(_finding(
                _Spec(f"fouls.variant.{v}", "Fouls", f"Foul rate in {v}", "rate",
                      f"{v} hands", False, cost),
                [_Stratum(Proportion(player[v]["fouls"], player[v]["hands"]),
                          Proportion(f(v)["fouls"], f(v)["hands"]), _worth(worths.foul, v))],
                total, settings))
    findings.append(_finding(
        _Spec("fouls.chasing", "Fouls", "Foul rate when chasing Fantasyland", "rate",
              "hands chasing Fantasyland", False, cost, streets_note),
        [_Stratum(Proportion(player[v]["chasing_fouls"], player[v]["chasing_hands"]),
                  Proportion(f(v)["chasing_fouls"], f(v)["chasing_hands"]), _worth(worths.foul, v))
         for v in variants], total, settings))

    def calm(t: dict[str, int]) -> Proportion:
        return Proportion(t["normal_fouls"] - t["chasing_fouls"],
                          t["normal_hands"] - t["chasing_hands"])

    findings.append(_finding(
        _Spec("fouls.not_chasing", "Fouls", "Foul rate when not chasing Fantasyland", "rate",
              "hands outside Fantasyland not chasing it", False, cost, streets_note),
        [_Stratum(calm(player[v]), calm(f(v)), _worth(worths.foul, v)) for v in variants],
        total, settings))
    findings.append(_finding(
        _Spec("fouls.chase_frequency", "Fouls", "How often Fantasyland is chased", "rate",
              "hands outside Fantasyland", None,
              "no points estimate: the price of chasing shows in the foul and Fantasyland "
              "findings", streets_note),
        [_Stratum(Proportion(player[v]["chasing_hands"], player[v]["normal_hands"]),
                  Proportion(f(v)["chasing_hands"], f(v)["normal_hands"]), None)
         for v in variants], total, settings))
    return findings


def _fantasyland_findings(player: Totals, field: Totals, worths: _Worths, total: int,
                          settings: ReportSettings) -> list[Finding]:
    variants = _variants_of(player)
    columns = next(iter(player.values())).keys()

    def f(v: str) -> dict[str, int]:
        return field.get(v) or _zero(columns)

    worth = "× the worth of a Fantasyland hand (mean points of Fantasyland hands minus other " \
            "hands)"
    return [
        _finding(_Spec("fantasyland.entry", "Fantasyland", "Fantasyland entry rate", "rate",
                       "hands outside Fantasyland", True,
                       f"difference in entry rate {worth} × share of hands outside it"),
                 [_Stratum(Proportion(player[v]["fl_entries"], player[v]["normal_hands"]),
                           Proportion(f(v)["fl_entries"], f(v)["normal_hands"]),
                           _worth(worths.fantasyland_hand, v)) for v in variants],
                 total, settings),
        _finding(_Spec("fantasyland.stay", "Fantasyland", "Fantasyland stay rate", "rate",
                       "Fantasyland hands", True,
                       f"difference in stay rate {worth} × share of hands in Fantasyland"),
                 [_Stratum(Proportion(player[v]["fl_stays"], player[v]["fl_hands"]),
                           Proportion(f(v)["fl_stays"], f(v)["fl_hands"]),
                           _worth(worths.fantasyland_hand, v)) for v in variants],
                 total, settings),
        _finding(_Spec("fantasyland.points", "Fantasyland", "Points per Fantasyland hand",
                       "points", "Fantasyland hands", True,
                       "difference in points per Fantasyland hand × share of hands in "
                       "Fantasyland"),
                 [_Stratum(Mean(player[v]["fl_hands"], player[v]["fl_points"],
                                player[v]["fl_points_sq"]),
                           Mean(f(v)["fl_hands"], f(v)["fl_points"], f(v)["fl_points_sq"]), 1.0)
                  for v in variants], total, settings),
    ]


def _royalty_findings(player: Totals, field: Totals, total: int,
                      settings: ReportSettings) -> list[Finding]:
    variants = _variants_of(player)
    columns = next(iter(player.values())).keys()
    findings = []
    for row in ROWS:
        strata = []
        for v in variants:
            mine, theirs = player[v], field.get(v) or _zero(columns)
            opponents = mine["opponents"] / mine["hands"] if mine["hands"] else None
            strata.append(_Stratum(
                Mean(mine["hands"], mine[f"royalty_{row}"], mine[f"royalty_{row}_sq"]),
                Mean(theirs["hands"], theirs[f"royalty_{row}"], theirs[f"royalty_{row}_sq"]),
                opponents))
        findings.append(_finding(
            _Spec(f"royalties.{row}", "Royalties", f"Royalties from the {row} row",
                  "royalties", "hands", True,
                  "difference in royalty points per hand × mean number of opponents"),
            strata, total, settings))
    return findings


def _scoop_findings(player: Totals, field: Totals, worths: _Worths, total: int,
                    settings: ReportSettings) -> list[Finding]:
    variants = sorted(player, key=lambda v: (-player[v]["matchups"], v))
    columns = next(iter(player.values())).keys() if player else ()

    def f(v: str) -> dict[str, int]:
        return field.get(v) or _zero(columns)

    return [
        _finding(_Spec("scoops.won", "Scoops", "Scoop rate (scooping an opponent)", "rate",
                       "pairings", True,
                       "difference in scoop rate × worth of a scoop (mean settled points of "
                       "scoops minus pairings without one) × pairings per hand"),
                 [_Stratum(Proportion(player[v]["scoops"], player[v]["matchups"]),
                           Proportion(f(v)["scoops"], f(v)["matchups"]), _worth(worths.scoop, v))
                  for v in variants], total, settings),
        _finding(_Spec("scoops.lost", "Scoops", "Scooped rate (scooped by an opponent)", "rate",
                       "pairings", False,
                       "difference in scooped rate × cost of being scooped (mean settled "
                       "points when scooped minus pairings without a scoop) × pairings per hand"),
                 [_Stratum(Proportion(player[v]["scooped"], player[v]["matchups"]),
                           Proportion(f(v)["scooped"], f(v)["matchups"]), _worth(worths.scooped, v))
                  for v in variants], total, settings),
    ]


def _result_findings(player: Totals, field: Totals, positions: pl.DataFrame,
                     names: Sequence[str], total: int,
                     settings: ReportSettings) -> list[Finding]:
    findings = []
    columns = next(iter(player.values())).keys()
    for v in _variants_of(player):
        mine, theirs = player[v], field.get(v) or _zero(columns)
        findings.append(_finding(
            _Spec(f"results.variant.{v}", "Results", f"Points per hand in {v}", "points",
                  f"{v} hands", True, "difference in points per hand × share of hands"),
            [_Stratum(Mean(mine["hands"], mine["points"], mine["points_sq"]),
                      Mean(theirs["hands"], theirs["points"], theirs["points_sq"]), 1.0)],
            total, settings))
    if positions.is_empty():
        return findings
    mine_mask = pl.col("player").is_in(list(names))
    keys = ["variant", "player_count", "position"]
    sums = [pl.col("hands").sum(), pl.col("points").sum(), pl.col("points_sq").sum(),
            pl.col("is_button").any()]
    mine = positions.filter(mine_mask).group_by(keys).agg(sums)
    theirs = positions.filter(~mine_mask).group_by(keys).agg(sums)
    order = {v: i for i, v in enumerate(_variants_of(player))}
    rows = sorted(mine.iter_rows(named=True),
                  key=lambda r: (order.get(r["variant"], 99), r["variant"], r["player_count"],
                                 r["position"]))
    lookup = {(r["variant"], r["player_count"], r["position"]): r
              for r in theirs.iter_rows(named=True)}
    for row in rows:
        key = (row["variant"], row["player_count"], row["position"])
        other = lookup.get(key, {"hands": 0, "points": 0, "points_sq": 0})
        where = position_label(int(row["player_count"]), int(row["position"]),
                               bool(row["is_button"]))
        findings.append(_finding(
            _Spec(f"results.position.{row['variant']}.{row['player_count']}.{row['position']}",
                  "Results", f"Points per hand, {row['variant']}, {where}", "points",
                  "hands in this seat", True,
                  "difference in points per hand to the field in the same seat × share of "
                  "hands"),
            [_Stratum(Mean(int(row["hands"]), int(row["points"]), int(row["points_sq"])),
                      Mean(int(other["hands"]), int(other["points"]), int(other["points_sq"])),
                      1.0)],
            total, settings))
    return findings


def _sessions(hands: pl.DataFrame) -> list[SessionLine]:
    dated = hands.filter(pl.col("session_id").is_not_null())
    if dated.is_empty():
        return []
    grouped = dated.group_by("session_id").agg(
        pl.col("started_at").min().alias("started_at"), pl.len().alias("hands"),
        pl.col("points").sum().alias("points"), pl.col("foul").sum().alias("fouls"),
    ).sort(["started_at", "session_id"])
    lines = []
    for number, row in enumerate(grouped.iter_rows(named=True), start=1):
        hands_count = int(row["hands"])
        lines.append(SessionLine(
            number=number, session_id=row["session_id"], started_at=_when(row["started_at"]),
            hands=hands_count, points=int(row["points"]),
            points_per_hand=int(row["points"]) / hands_count, fouls=int(row["fouls"]),
            foul_rate=int(row["fouls"]) / hands_count,
        ))
    return lines


def _trend_findings(sessions: Sequence[SessionLine], foul_worth: float | None,
                    settings: ReportSettings) -> list[Finding]:
    count = len(sessions)
    hands = sum(s.hands for s in sessions)
    minimum = max(settings.min_sessions, MIN_TREND_SESSIONS)
    specs = (
        ("trend.points", "Trend in points per hand", "points_slope", True,
         "fitted change in points per hand from the first to the last session",
         [s.points_per_hand for s in sessions]),
        ("trend.fouls", "Trend in foul rate", "rate_slope", False,
         "fitted change in foul rate from the first to the last session × foul cost",
         [s.foul_rate for s in sessions]),
    )
    findings = []
    for key, title, unit, better, basis, values in specs:
        base = dict(key=key, topic="Trend", title=title, unit=unit, sample_unit="sessions",
                    minimum=minimum, basis=basis, higher_is_better=better)
        if count < minimum or hands < settings.min_sample:
            reason = (not_enough(count, minimum, "sessions") if count < minimum else
                      not_enough(hands, settings.min_sample, "hands in sessions"))
            findings.append(Finding(**base, shown=False,
                                    player=Estimate(None, None, None, None, count), field=None,
                                    difference=None, z=None, p_value=None,
                                    verdict="not enough data", confidence=reason,
                                    points_per_hand=None))
            continue
        fit = weighted_slope([float(s.number) for s in sessions], values,
                             [float(s.hands) for s in sessions])
        if fit is None:  # cannot happen with three sessions or more; kept as a guard
            findings.append(Finding(**base, shown=False,
                                    player=Estimate(None, None, None, None, count), field=None,
                                    difference=None, z=None, p_value=None,
                                    verdict="not enough data",
                                    confidence="Not enough data: no trend can be fitted.",
                                    points_per_hand=None))
            continue
        z = z_score(fit.slope, fit.se) if fit.slope else 0.0
        verdict, confidence = judge(fit.slope, z, better, TREND_WORDS)
        verdict = {"strength": "improving", "likely strength": "probably improving",
                   "leak": "getting worse", "likely leak": "probably getting worse",
                   "in line": "steady"}.get(verdict, verdict)
        change = fit.slope * (count - 1)
        if key == "trend.points":
            points = change
        else:
            points = None if foul_worth is None else change * foul_worth
        low = high = None
        if fit.se is not None:
            low, high = fit.slope - Z_95 * fit.se, fit.slope + Z_95 * fit.se
        findings.append(Finding(
            **base, shown=True, player=Estimate(fit.slope, low, high, fit.se, count),
            field=None, difference=fit.slope, z=z, p_value=two_sided_p(z), verdict=verdict,
            confidence=confidence, points_per_hand=points,
            note=f"over {count:,} sessions and {hands:,} hands; fitted change from the first "
                 f"to the last session: {change:+.3f}",
        ))
    return findings


def _head_to_head(pairs: pl.DataFrame, names: Sequence[str], total: int,
                  settings: ReportSettings) -> list[Finding]:
    if pairs.is_empty():
        return []
    names = list(names)
    mine = pairs.filter(pl.col("player").is_in(names) & ~pl.col("opponent").is_in(names))
    mine = mine.group_by("opponent").agg(
        pl.col("hands").sum(), pl.col("points").sum(), pl.col("points_sq").sum(),
    ).sort(["hands", "opponent"], descending=[True, False])
    regular = mine.filter(pl.col("hands") >= settings.min_sample).head(settings.max_opponents)
    findings = []
    for row in regular.iter_rows(named=True):
        opponent = row["opponent"]
        others = pairs.filter((pl.col("opponent") == opponent)
                              & ~pl.col("player").is_in([*names, opponent]))
        field = Mean(int(others["hands"].sum()), int(others["points"].sum()),
                     int(others["points_sq"].sum())) if others.height else Mean(0, 0, 0)
        findings.append(_finding(
            _Spec(f"head_to_head.{opponent}", "Head-to-head", f"Against {opponent}", "points",
                  f"hands against {opponent}", True,
                  "difference to what the field scores against this opponent, per hand "
                  "together × share of hands together",
                  note="field: every other player's pairings with this opponent"),
            [_Stratum(Mean(int(row["hands"]), int(row["points"]), int(row["points_sq"])),
                      field, 1.0)], total, settings))
    if not findings:
        most = int(mine["hands"].max() or 0) if mine.height else 0
        findings.append(Finding(
            key="head_to_head.none", topic="Head-to-head", title="Regular opponents",
            unit="points", sample_unit="hands together", minimum=settings.min_sample,
            shown=False, player=Estimate(None, None, None, None, most), field=None,
            difference=None, z=None, p_value=None, verdict="not enough data",
            confidence=(f"Not enough data: no opponent shares {settings.min_sample:,} hands "
                        f"with the player (most: {most:,})."),
            points_per_hand=None, basis="", higher_is_better=True))
    return findings


# --- headline ---------------------------------------------------------------------------------


def _when(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return str(value)


def _headline(request: ReportRequest, data: ReportData, player: Totals,
              settings: ReportSettings) -> Headline:
    hands = data.hands
    names = request.names
    points = [int(p) for p in hands["points"].to_list()]
    total = Mean(len(points), sum(points), sum(p * p for p in points))
    interval = total.interval()
    dated = hands["started_at"].drop_nulls()
    totals = data.player_totals
    lines = []
    for variant in _variants_of(player):
        mine = player[variant]
        part = hands.filter(pl.col("variant") == variant)
        sessions = part["session_id"].drop_nulls().n_unique()
        mean = Mean(mine["hands"], mine["points"], mine["points_sq"])
        others = (totals.filter((pl.col("variant") == variant)
                                & ~pl.col("player").is_in(list(names)))
                  .group_by("player").agg(pl.col("hands").sum(), pl.col("points").sum())
                  .filter(pl.col("hands") >= settings.percentile_min_hands).sort("player"))
        rates = [int(p) / int(h) for p, h in others.select("points", "hands").rows()]
        percentile, note = None, ""
        if mine["hands"] < settings.percentile_min_hands:
            note = (f"not ranked: {mine['hands']:,} hands, at least "
                    f"{settings.percentile_min_hands:,} needed")
        elif not rates:
            note = (f"not ranked: no other player has {settings.percentile_min_hands:,} "
                    f"hands in {variant}")
        else:
            percentile = percentile_rank(mean.value or 0.0, rates)
            others_text = "other player" if len(rates) == 1 else "other players"
            note = (f"better than {percentile:.0f} % of {len(rates):,} {others_text} with at "
                    f"least {settings.percentile_min_hands:,} hands")
        lines.append(VariantLine(
            variant=variant, hands=mine["hands"], sessions=sessions, points=mine["points"],
            points_per_hand=mean.value or 0.0, points_se=mean.se, percentile=percentile,
            players_ranked=len(rates), percentile_note=note,
        ))
    with_hands = tuple(n for n in names if n in set(hands["player"].to_list()))
    return Headline(
        player=request.player, names=names, names_with_hands=with_hands, hands=len(points),
        sessions=hands["session_id"].drop_nulls().n_unique(),
        undated_hands=hands["started_at"].null_count(),
        first_hand=_when(dated.min()) if dated.len() else None,
        last_hand=_when(dated.max()) if dated.len() else None,
        points=sum(points), points_per_hand=total.value or 0.0, points_se=total.se,
        low=interval[0] if interval else None, high=interval[1] if interval else None,
        variants=tuple(lines),
    )


# --- notable hands ----------------------------------------------------------------------------


def _cards(text: str | None) -> tuple[str, ...]:
    return tuple((text or "").split())


def _notable(data: ReportData, settings: ReportSettings) -> list[NotableHand]:
    hands = data.hands
    picked = pick_notable(hands, settings.notable_hands)
    wanted = sorted({key for keys in picked.values() for key in keys})
    by_key = {row["hand_key"]: row
              for row in hands.filter(pl.col("hand_key").is_in(wanted)).iter_rows(named=True)}
    result = []
    for kind, keys in picked.items():
        for key in keys:
            if key not in data.details:
                continue
            mine = by_key[key]
            players, matchups = data.details[key]
            boards = []
            position_of = {}
            for row in players.sort("position").iter_rows(named=True):
                position_of[row["player"]] = row["position"]
                boards.append(BoardView(
                    player=row["player"], is_player=row["player"] == mine["player"],
                    position=int(row["position"]), is_button=bool(row["is_button"]),
                    fantasyland=bool(row["fantasyland"]),
                    cards_dealt=None if row["cards_dealt"] is None else int(row["cards_dealt"]),
                    top=_cards(row["top"]), middle=_cards(row["middle"]),
                    bottom=_cards(row["bottom"]),
                    classes=(row["top_class"] or "", row["middle_class"] or "",
                             row["bottom_class"] or ""),
                    foul=bool(row["foul"]),
                    royalties=(int(row["royalty_top"] or 0), int(row["royalty_middle"] or 0),
                               int(row["royalty_bottom"] or 0)),
                    royalty_total=int(row["royalties"] or 0),
                    fantasyland_next=bool(row["fantasyland_next"]),
                    points=int(row["points"] or 0),
                ))
            pairings = sorted(
                (PairingView(
                    opponent=m["opponent"], rows_won=int(m["rows_won"]),
                    rows_lost=int(m["rows_lost"]), scoop=int(m["scoop"]),
                    royalty_points=int(m["royalty_points"]), points=int(m["points"]),
                    settled=int(m["settled"]))
                 for m in matchups.iter_rows(named=True) if m["player"] == mine["player"]),
                key=lambda p: (position_of.get(p.opponent, 99), p.opponent),
            )
            result.append(NotableHand(
                kind=kind, site=mine["site"], hand_id=mine["hand_id"], table=mine["table_name"],
                started_at=_when(mine["started_at"]), variant=mine["variant"],
                player_count=int(mine["player_count"]), seat_name=mine["player"],
                points=int(mine["points"]), reason=_reason(kind, mine),
                boards=tuple(boards), pairings=tuple(pairings),
            ))
    return result


def _reason(kind: str, hand: dict[str, Any]) -> str:
    points = int(hand["points"])
    if kind == "costliest_fouls":
        return f"Fouled board: {points:+d} points"
    if kind == "biggest_wins":
        return f"Won {points:+d} points"
    stayed = ", earned another Fantasyland" if hand["fantasyland_next"] else ""
    return f"Fantasyland hand: {points:+d} points{stayed}"


# --- the report -------------------------------------------------------------------------------


def _cumulative(hands: pl.DataFrame) -> tuple[tuple[int, int], ...]:
    points = [int(p) for p in hands["points"].to_list()]
    running, series = 0, []
    for value in points:
        running += value
        series.append(running)
    step = max(1, math.ceil(len(series) / MAX_CUMULATIVE_POINTS))
    kept = [(i + 1, series[i]) for i in range(0, len(series), step)]
    if series and kept[-1][0] != len(series):
        kept.append((len(series), series[-1]))
    return tuple(kept)


def _summary(findings: Sequence[Finding]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    def rank(finding: Finding) -> tuple[int, float, str]:
        clear = 0 if finding.verdict in ("strength", "leak") else 1
        return (clear, -abs(finding.points_per_hand or 0.0), finding.key)

    strengths = sorted((f for f in findings if f.shown
                        and f.verdict in ("strength", "likely strength")), key=rank)
    leaks = sorted((f for f in findings if f.shown and f.verdict in ("leak", "likely leak")),
                   key=rank)
    return tuple(f.key for f in strengths[:6]), tuple(f.key for f in leaks[:6])


def build_report(data: ReportData, request: ReportRequest,
                 settings: ReportSettings = DEFAULT_SETTINGS) -> Report:
    """Turn the gathered frames into the report (pure)."""
    names = request.names
    player = _by_variant(data.player_totals, names, True)
    field = _by_variant(data.player_totals, names, False)
    everyone = _all_variants(data.player_totals)
    player_pairs = _by_variant(data.matchup_totals, names, True)
    field_pairs = _by_variant(data.matchup_totals, names, False)
    worths = _worths(everyone, _all_variants(data.matchup_totals))
    total = int(data.hands.height)

    normal = sum(t["normal_hands"] for t in player.values())
    with_streets = sum(t["normal_with_streets"] for t in player.values())
    streets_note = "" if with_streets == normal else (
        f"streets recorded for {with_streets:,} of {normal:,} hands outside Fantasyland; the "
        "others are judged by their final board")
    notes = []
    if with_streets < normal:
        notes.append(f"{normal - with_streets:,} of the player's {normal:,} hands outside "
                     "Fantasyland have no street record: chasing Fantasyland is judged from "
                     "their final boards only.")
    undated = int(data.hands["started_at"].null_count())
    if undated:
        notes.append(f"{undated:,} hands have no start time: they belong to no session and "
                     "are left out of the trend.")

    sessions = _sessions(data.hands)
    hand_share = {v: t["hands"] / total for v, t in player.items()}
    foul_worths = [(hand_share[v], _worth(worths.foul, v)) for v in player]
    foul_worth = (None if any(w is None for _, w in foul_worths)
                  else sum(s * w for s, w in foul_worths))  # type: ignore[misc]

    findings: list[Finding] = []
    findings += _foul_findings(player, field, worths, total, settings, streets_note)
    findings += _fantasyland_findings(player, field, worths, total, settings)
    findings += _royalty_findings(player, field, total, settings)
    findings += _scoop_findings(player_pairs, field_pairs, worths, total, settings)
    findings += _result_findings(player, field, data.player_totals, names, total, settings)
    findings += _trend_findings(sessions, foul_worth, settings)
    findings += _head_to_head(data.pair_totals, names, total, settings)
    strengths, leaks = _summary(findings)

    return Report(
        title=f"Coaching report: {request.player}",
        player=request.player, aliases=tuple(n for n in names if n != request.player),
        since=request.since.isoformat() if request.since else None,
        until=request.until.isoformat() if request.until else None,
        variant=request.variant, settings=settings,
        headline=_headline(request, data, player, settings),
        findings=tuple(findings), strengths=strengths, leaks=leaks,
        notable=tuple(_notable(data, settings)), sessions=tuple(sessions),
        cumulative=_cumulative(data.hands), definitions=DEFINITIONS,
        data_notes=tuple(notes),
    )
