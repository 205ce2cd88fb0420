"""The findings engine: from the gathered frames to a :class:`~pipeline.report.model.Report`.

Pure: no database, no clock, no randomness; every ordering is explicit, so the same frames give
the same report.

How the player is compared (with the *reference group* of :mod:`pipeline.report.reference`):

* A statistic is computed per stratum (variant, or variant + table size + position) and the
  group's value is weighted by the player's own mix over those strata, so a player who plays
  more of a variant is compared with the group *in that variant*.
* Results (points) count the pairings that matter: the group's never include their pairings
  against the player or against the players the outlier rule left out; the player's leave out
  those against the players left out too, unless the player is beyond the same rule (then all
  of them count: against the field that makes the causes add up to the player's whole result).
* The ranked list: the difference in points per hand to the group, split into causes that
  never overlap (:mod:`pipeline.report.balance`), ranked by points per 100 hands.
* Every test of the report (findings, causes, trends, before/after) goes through one
  Benjamini-Hochberg correction; only what survives it at the report's false-discovery rate
  reaches the summary and the findings, the rest is in the appendix, marked exploratory.
* Trends hold the mix fixed (:mod:`pipeline.report.trends`); the player's strength is shrunk
  toward the group (empirical Bayes), so a small sample is not ranked on luck.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from pipeline.read.players import position_label
from pipeline.report import balance
from pipeline.report.data import ReportData, pick_notable
from pipeline.report.model import (
    DEFAULT_SETTINGS,
    BalanceLine,
    BalanceSheet,
    BoardView,
    Cause,
    CauseShare,
    ChasingAnswer,
    Estimate,
    Finding,
    GradeView,
    Headline,
    LeftOutView,
    NotableHand,
    PairingView,
    ReferenceView,
    Report,
    ReportRequest,
    ReportSettings,
    RollingView,
    SessionLine,
    StrengthView,
    VariantLine,
)
from pipeline.report.reference import ReferenceGroup, member_rows
from pipeline.report.stats import (
    Z_95,
    Mean,
    Proportion,
    benjamini_hochberg,
    estimate_prior,
    ordinal,
    percentile_rank,
    shrink,
    two_sided_p,
    z_score,
)
from pipeline.report.trends import (
    raw_difference,
    rolling_series,
    strata_codes,
    value_codes,
    within_effect,
)
from pipeline.rules.cards import RANKS
from pipeline.rules.game import Variant

TOPICS = ("Fouls", "Fantasyland", "Royalties", "Scoops", "Results", "Trend", "Did I improve?",
          "Head-to-head")
ROWS = ("top", "middle", "bottom")
MAX_CUMULATIVE_POINTS = 400
MIN_TREND_SESSIONS = 3  # a line through fewer points has no error estimate
SUMMARY_ITEMS = 6

CAUSE_OF_PREFIX = (
    ("fouls.", "fouls"), ("scoops.lost", "fouls"), ("fantasyland.", "fantasyland"),
    ("royalties.", "royalties"), ("scoops.won", "rows"),
)

DEFINITIONS: tuple[tuple[str, str], ...] = (
    ("Reference group", "Whom the player is compared with: the field (everyone else in scope), "
     "the players of a stake (everyone with hands under the named rules, on those hands), named "
     "regulars, or everyone with at least N hands whose foul rate is below X. The group is named "
     "on every finding. Where a statistic depends on the variant or the seat, the group's value "
     "is weighted by the player's own mix of variants and seats."),
    ("Outlier rule", "Players whose results (points per opponent per hand, against everyone but "
     "the player) sit more than the shown number of robust standard deviations (1.4826 × the "
     "median absolute deviation) from the group's median are left out of the group, one at a "
     "time, the most extreme first, each time judging the others again without their pairings "
     "against those left out. The spread is never taken below the typical standard error, so "
     "noise alone leaves nobody out. The rule can be turned off."),
    ("Results basis", "Points count the pairings that matter: the group's results never include "
     "their pairings against the player or against the players left out; the player's leave out "
     "those against the players left out too - unless the player is beyond the outlier rule "
     "himself, then all of them count. A board's result against fewer opponents is scaled to "
     "the whole table."),
    ("Ranked list (causes)", "The difference in points per hand to the group, split exactly "
     "into four causes that never overlap: fouls (the extra fouls × what a foul costs against a "
     "standing board - it covers the scoops suffered and rows lost when fouling - plus what the "
     "player's fouls cost beyond the group's), Fantasyland (the extra Fantasyland hands × their "
     "worth over a standing board, plus the difference in points per Fantasyland hand), "
     "royalties on standing boards, and rows and scoops on standing boards. Compared within "
     "variant and table size, weighted by the player's hands; ranked by points per 100 hands. "
     "They add up to the difference; no other figures are ever added."),
    ("Balance sheet", "Per variant and per 100 hands against the group: fouls and their cost, "
     "Fantasyland entries, stays and hands and their worth, the royalty difference, the rest of "
     "the standing boards' results, and the net - the difference in points per 100 hands."),
    ("Points per 100 hands (estimate)", "On a single finding: the difference to the group, times "
     "what one unit is worth in points (measured on the player's and the group's boards), times "
     "the share of the player's hands it concerns. Positive is a gain. These estimates overlap (a "
     "foul also loses scoops), so they are never added up: the causes are."),
    ("False discoveries", "Every test of the report goes through one Benjamini-Hochberg "
     "correction. A result is 'clear' when its adjusted p-value (q) is at most the report's "
     "false-discovery rate; only those reach the summary and the findings. The rest is in the "
     "appendix, marked exploratory: a hint at best."),
    ("Tests", "Rates and means: z = difference / combined standard error (rates use the "
     "Agresti-Caffo adjusted error so that 0 of 40 is not 'certain'); causes: the delta method "
     "over boards; trends and before/after: Student's t. Intervals are 95 % (Wilson for rates)."),
    ("Chasing Fantasyland", "A hand outside Fantasyland where the final top row qualifies for "
     "Fantasyland under the standard rule (a pair of queens or better, or trips), or - when the "
     "streets are recorded - a queen, king or ace went on the top row with the first five "
     "cards. Hands without streets are judged by their final board only. Whether chasing pays "
     "is the fouls and Fantasyland causes together."),
    ("Fantasyland entry / stay", "Entry: a hand outside Fantasyland that earns it (out of the "
     "hands outside Fantasyland). Stay: a Fantasyland hand that earns another (out of the "
     "Fantasyland hands)."),
    ("Royalties by row", "Royalty points collected per hand from each row (none on a fouled "
     "board). Each royalty point is collected from every opponent, so the estimate multiplies "
     "the difference by the player's mean number of opponents."),
    ("Scoops", "Out of the player's pairings with each opponent in each hand: scooped the "
     "opponent (won all three rows, an opponent's foul included) or was scooped (mostly by "
     "fouling: see the fouls cause)."),
    ("Minimum sample", "A finding needs a minimum number of observations from the player (and "
     "from the group to be compared); below it the report says so instead of guessing."),
    ("Fair trend", "A session is a player's run of hands at one table without a break of 30 "
     "minutes or more. The trend is the change per session within each variant and table size "
     "(one intercept per stratum, sessions' hands pooled, weighted by hands), so a change in the "
     "mix of games never reads as a change in play; its change is the fitted difference between "
     "the first and the last session. The rolling charts show the same: each hand against the "
     "player's own mean in its variant and table size."),
    ("Did I improve?", "Hands from the chosen date on against the hands before it, within each "
     "variant and table size, with a 95 % interval for the difference."),
    ("Strength (shrunk)", "Points per hand pulled toward the group's mean by how noisy it is "
     "(empirical Bayes: the group's spread of true strength is estimated from its players, "
     "after taking out their sampling noise). A player with few hands stays near the group's "
     "mean, so small samples are not ranked on luck."),
    ("Percentile", "Among the group's players with enough hands in that variant, the share whose "
     "points per hand are below the player's (ties count half)."),
)


# --- statistics over strata -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Stratum:
    """One cell of a comparison: the player's and the group's statistic, and a unit's worth."""

    player: Proportion | Mean
    reference: Proportion | Mean
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
        high=interval[1] if interval else None, se=value.se, sample=_n(value),
    )


@dataclass(frozen=True, slots=True)
class _Comparison:
    reference: Estimate
    difference: float
    z: float | None
    points_per_hand: float | None


def _compare(strata: Sequence[_Stratum], total_hands: int, is_rate: bool) -> _Comparison | None:
    """The group weighted by the player's mix, the difference, its z, and the points estimate."""
    usable = [s for s in strata if _n(s.player) > 0 and _n(s.reference) > 0]
    if not usable:
        return None
    weight_total = sum(_n(s.player) for s in usable)
    weights = [_n(s.player) / weight_total for s in usable]
    player_value = sum(w * _value(s.player) for w, s in zip(weights, usable, strict=True))  # type: ignore[misc]
    reference_value = sum(w * _value(s.reference) for w, s in zip(weights, usable, strict=True))  # type: ignore[misc]
    difference = player_value - reference_value

    def combined(ses: Iterable[float | None]) -> float | None:
        ses = list(ses)
        if any(se is None for se in ses):
            return None
        return math.sqrt(sum((w * se) ** 2 for w, se in zip(weights, ses, strict=True)))  # type: ignore[operator]

    player_test = combined(_test_se(s.player) for s in usable)
    reference_test = combined(_test_se(s.reference) for s in usable)
    reference_se = combined(s.reference.se for s in usable)
    if len(usable) == 1:
        reference_estimate = _estimate(usable[0].reference)
    else:
        low = high = None
        if reference_se is not None:
            low = reference_value - Z_95 * reference_se
            high = reference_value + Z_95 * reference_se
            if is_rate:
                low, high = max(0.0, low), min(1.0, high)
        reference_estimate = Estimate(reference_value, low, high, reference_se,
                                      sum(_n(s.reference) for s in usable))
    z = z_score(difference, player_test, reference_test)
    if difference == 0:
        z = 0.0
    points: float | None = 0.0
    for stratum in usable:
        gap = _value(stratum.player) - _value(stratum.reference)  # type: ignore[operator]
        if gap == 0:
            continue
        if stratum.worth is None:
            points = None
            break
        points += _n(stratum.player) / total_hands * gap * stratum.worth  # type: ignore[operator]
    return _Comparison(reference_estimate, difference, z, points)


def not_enough(sample: int, minimum: int, unit: str) -> str:
    """The minimum-sample message: ``Not enough data: Fantasyland hands: 1, at least 10 needed.``"""
    return f"Not enough data: {unit}: {sample:,}, at least {minimum:,} needed."


def _p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _q_text(q: float) -> str:
    return "q < 0.001" if q < 0.001 else f"q = {q:.3f}"


def _per_100(value: float | None) -> float | None:
    return None if value is None else 100.0 * value


# --- totals -----------------------------------------------------------------------------------


Totals = dict[str, dict[str, float]]
KEYS = ("player", "variant", "player_count", "position", "is_button", "rules", "state",
        "opponent")
ALL_VARIANTS = "*"


def _sums(frame: pl.DataFrame) -> Totals:
    """Column sums (every total but the keys) per variant."""
    if frame.is_empty():
        return {}
    numeric = [c for c, t in frame.schema.items() if c not in KEYS and t.is_numeric()]
    summed = frame.group_by("variant").agg([pl.col(c).sum() for c in numeric]).sort("variant")
    return {row["variant"]: {c: (row[c] or 0) for c in numeric}
            for row in summed.iter_rows(named=True)}


def _with_total(totals: Totals) -> Totals:
    """``totals`` plus every variant together under ALL_VARIANTS."""
    if not totals:
        return {}
    columns = next(iter(totals.values())).keys()
    together = {c: sum(t[c] for t in totals.values()) for c in columns}
    return {**totals, ALL_VARIANTS: together}


def _difference_of_means(total_a: float, n_a: float, total_b: float,
                         n_b: float) -> float | None:
    if n_a <= 0 or n_b <= 0:
        return None
    return total_a / n_a - total_b / n_b


@dataclass(frozen=True, slots=True)
class _Worths:
    """What one unit of each statistic is worth in points, per variant (the player's and the
    group's boards together)."""

    foul: dict[str, float | None]
    fantasyland_hand: dict[str, float | None]
    scoop: dict[str, float | None]
    scooped: dict[str, float | None]


def _worth(worths: dict[str, float | None], variant: str) -> float | None:
    """A unit's worth in ``variant``, else over every variant (when the variant has no example)."""
    value = worths.get(variant)
    return worths.get(ALL_VARIANTS) if value is None else value


def _worths(everyone: Totals, pairings: Totals) -> _Worths:
    foul: dict[str, float | None] = {}
    fantasyland: dict[str, float | None] = {}
    scoop: dict[str, float | None] = {}
    scooped: dict[str, float | None] = {}
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


def _cause_of(key: str) -> str | None:
    for prefix, cause in CAUSE_OF_PREFIX:
        if key.startswith(prefix):
            return cause
    return None


@dataclass(frozen=True, slots=True)
class _Context:
    """What every finding needs to know."""

    label: str
    total: int
    settings: ReportSettings


def _finding(spec: _Spec, strata: Sequence[_Stratum], context: _Context,
             minimum: int | None = None) -> Finding:
    """One finding from its strata, with the minimum-sample rule applied (verdict after BH)."""
    settings = context.settings
    minimum = settings.min_sample if minimum is None else minimum
    is_rate = spec.unit == "rate"
    player = _pooled([s.player for s in strata]) if strata else (
        Proportion(0, 0) if is_rate else Mean(0, 0, 0))
    sample = _n(player)
    base = dict(key=spec.key, topic=spec.topic, title=spec.title, unit=spec.unit,
                sample_unit=spec.sample_unit, minimum=minimum, reference_label=context.label,
                basis=spec.basis, note=spec.note, higher_is_better=spec.higher_is_better,
                cause=_cause_of(spec.key))
    if sample < minimum:
        return Finding(**base, shown=False, player=Estimate(None, None, None, None, sample),
                       reference=None, difference=None, z=None, p_value=None,
                       verdict="not enough data",
                       confidence=not_enough(sample, minimum, spec.sample_unit),
                       points_per_100=None)
    estimate = _estimate(player)
    if spec.unit == "royalties" and estimate.low is not None:
        estimate = replace(estimate, low=max(0.0, estimate.low))  # royalties are never negative
    comparison = _compare(strata, context.total, is_rate)
    if comparison is None:
        return Finding(**base, shown=True, player=estimate, reference=None, difference=None,
                       z=None, p_value=None, verdict="not compared",
                       confidence=f"{_capital(context.label)} has no hands here to compare with.",
                       points_per_100=None)
    if comparison.reference.sample < minimum:
        return Finding(**base, shown=True, player=estimate, reference=comparison.reference,
                       difference=comparison.difference, z=None, p_value=None,
                       verdict="not compared",
                       confidence=(f"{_capital(context.label)} has only "
                                   f"{comparison.reference.sample:,} {spec.sample_unit} here, "
                                   f"too few to compare (at least {minimum:,} needed)."),
                       points_per_100=None)
    return _tested(Finding(**base, shown=True, player=estimate, reference=comparison.reference,
                           difference=comparison.difference, z=comparison.z,
                           p_value=two_sided_p(comparison.z), verdict="", confidence="",
                           points_per_100=_per_100(comparison.points_per_hand)))


def _tested(finding: Finding) -> Finding:
    """A compared finding before the correction (a difference without variation is in line)."""
    if finding.p_value is None:
        return replace(finding, verdict="in line",
                       confidence="No variation in the data: nothing to test.")
    return finding


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _variants_of(player: Totals) -> list[str]:
    """The player's variants, most hands first."""
    return sorted(player, key=lambda v: (-player[v]["hands"], v))


def _zero(columns: Iterable[str]) -> dict[str, float]:
    return dict.fromkeys(columns, 0)


def _foul_findings(player: Totals, reference: Totals, worths: _Worths, context: _Context,
                   streets_note: str) -> list[Finding]:
    variants = _variants_of(player)
    columns = next(iter(player.values())).keys()

    def r(v: str) -> dict[str, float]:
        return reference.get(v) or _zero(columns)

    cost = "difference in foul rate × the foul cost of the variant (mean points of fouled " \
           "minus legal boards) × share of hands"
    findings = [_finding(
        _Spec("fouls.overall", "Fouls", "Foul rate", "rate", "hands", False, cost),
        [_Stratum(Proportion(int(player[v]["fouls"]), int(player[v]["hands"])),
                  Proportion(int(r(v)["fouls"]), int(r(v)["hands"])), _worth(worths.foul, v))
         for v in variants], context)]
    if len(variants) > 1:
        for v in variants:
            findings.append(_finding(
                _Spec(f"fouls.variant.{v}", "Fouls", f"Foul rate in {v}", "rate",
                      f"{v} hands", False, cost),
                [_Stratum(Proportion(int(player[v]["fouls"]), int(player[v]["hands"])),
                          Proportion(int(r(v)["fouls"]), int(r(v)["hands"])),
                          _worth(worths.foul, v))], context))
    findings.append(_finding(
        _Spec("fouls.chasing", "Fouls", "Foul rate when chasing Fantasyland", "rate",
              "hands chasing Fantasyland", False, cost, streets_note),
        [_Stratum(Proportion(int(player[v]["chasing_fouls"]), int(player[v]["chasing_hands"])),
                  Proportion(int(r(v)["chasing_fouls"]), int(r(v)["chasing_hands"])),
                  _worth(worths.foul, v)) for v in variants], context))

    def calm(t: dict[str, float]) -> Proportion:
        return Proportion(int(t["normal_fouls"] - t["chasing_fouls"]),
                          int(t["normal_hands"] - t["chasing_hands"]))

    findings.append(_finding(
        _Spec("fouls.not_chasing", "Fouls", "Foul rate when not chasing Fantasyland", "rate",
              "hands outside Fantasyland not chasing it", False, cost, streets_note),
        [_Stratum(calm(player[v]), calm(r(v)), _worth(worths.foul, v)) for v in variants],
        context))
    findings.append(_finding(
        _Spec("fouls.chase_frequency", "Fouls", "How often Fantasyland is chased", "rate",
              "hands outside Fantasyland", None,
              "no points estimate: the price of chasing shows in the fouls and Fantasyland "
              "causes", streets_note),
        [_Stratum(Proportion(int(player[v]["chasing_hands"]), int(player[v]["normal_hands"])),
                  Proportion(int(r(v)["chasing_hands"]), int(r(v)["normal_hands"])), None)
         for v in variants], context))
    return findings


def _fantasyland_findings(player: Totals, reference: Totals, worths: _Worths,
                          context: _Context) -> list[Finding]:
    variants = _variants_of(player)
    columns = next(iter(player.values())).keys()

    def r(v: str) -> dict[str, float]:
        return reference.get(v) or _zero(columns)

    worth = "× the worth of a Fantasyland hand (mean points of Fantasyland hands minus other " \
            "hands)"
    return [
        _finding(_Spec("fantasyland.entry", "Fantasyland", "Fantasyland entry rate", "rate",
                       "hands outside Fantasyland", True,
                       f"difference in entry rate {worth} × share of hands outside it"),
                 [_Stratum(Proportion(int(player[v]["fl_entries"]), int(player[v]["normal_hands"])),
                           Proportion(int(r(v)["fl_entries"]), int(r(v)["normal_hands"])),
                           _worth(worths.fantasyland_hand, v)) for v in variants], context),
        _finding(_Spec("fantasyland.stay", "Fantasyland", "Fantasyland stay rate", "rate",
                       "Fantasyland hands", True,
                       f"difference in stay rate {worth} × share of hands in Fantasyland"),
                 [_Stratum(Proportion(int(player[v]["fl_stays"]), int(player[v]["fl_hands"])),
                           Proportion(int(r(v)["fl_stays"]), int(r(v)["fl_hands"])),
                           _worth(worths.fantasyland_hand, v)) for v in variants], context),
        _finding(_Spec("fantasyland.points", "Fantasyland", "Points per Fantasyland hand",
                       "points", "Fantasyland hands", True,
                       "difference in points per Fantasyland hand × share of hands in "
                       "Fantasyland"),
                 [_Stratum(Mean(int(player[v]["fl_hands"]), player[v]["fl_points"],
                                player[v]["fl_points_sq"]),
                           Mean(int(r(v)["fl_hands"]), r(v)["fl_points"],
                                r(v)["fl_points_sq"]), 1.0)
                  for v in variants], context),
    ]


def _royalty_findings(player: Totals, reference: Totals, context: _Context) -> list[Finding]:
    variants = _variants_of(player)
    columns = next(iter(player.values())).keys()
    findings = []
    for row in ROWS:
        strata = []
        for v in variants:
            mine, theirs = player[v], reference.get(v) or _zero(columns)
            opponents = mine["opponents"] / mine["hands"] if mine["hands"] else None
            strata.append(_Stratum(
                Mean(int(mine["hands"]), mine[f"royalty_{row}"], mine[f"royalty_{row}_sq"]),
                Mean(int(theirs["hands"]), theirs[f"royalty_{row}"],
                     theirs[f"royalty_{row}_sq"]),
                opponents))
        findings.append(_finding(
            _Spec(f"royalties.{row}", "Royalties", f"Royalties from the {row} row",
                  "royalties", "hands", True,
                  "difference in royalty points per hand × mean number of opponents"),
            strata, context))
    return findings


def _scoop_findings(player: Totals, reference: Totals, worths: _Worths,
                    context: _Context) -> list[Finding]:
    variants = sorted(player, key=lambda v: (-player[v]["matchups"], v))
    columns = next(iter(player.values())).keys() if player else ()

    def r(v: str) -> dict[str, float]:
        return reference.get(v) or _zero(columns)

    return [
        _finding(_Spec("scoops.won", "Scoops", "Scoop rate (scooping an opponent)", "rate",
                       "pairings", True,
                       "difference in scoop rate × worth of a scoop (mean settled points of "
                       "scoops minus pairings without one) × pairings per hand"),
                 [_Stratum(Proportion(int(player[v]["scoops"]), int(player[v]["matchups"])),
                           Proportion(int(r(v)["scoops"]), int(r(v)["matchups"])),
                           _worth(worths.scoop, v))
                  for v in variants], context),
        _finding(_Spec("scoops.lost", "Scoops", "Scooped rate (scooped by an opponent)", "rate",
                       "pairings", False,
                       "difference in scooped rate × cost of being scooped (mean settled "
                       "points when scooped minus pairings without a scoop) × pairings per "
                       "hand; mostly fouls - see the fouls cause"),
                 [_Stratum(Proportion(int(player[v]["scooped"]), int(player[v]["matchups"])),
                           Proportion(int(r(v)["scooped"]), int(r(v)["matchups"])),
                           _worth(worths.scooped, v))
                  for v in variants], context),
    ]


def _state_mean(rows: pl.DataFrame) -> Mean:
    """Boards' values as a mean (from report_state_totals rows)."""
    if rows.is_empty():
        return Mean(0, 0.0, 0.0)
    return Mean(int(rows["boards"].sum()), float(rows["value"].sum()),
                float(rows["value_sq"].sum()))


def _result_findings(data: ReportData, members: pl.DataFrame, by_variant: dict[str, Any],
                     variants: Sequence[str], context: _Context) -> list[Finding]:
    """Points per hand by variant (the balance sheet's net, tested) and by seat."""
    findings = []
    states = data.player_states
    for v in variants:
        mine = _state_mean(states.filter(pl.col("variant") == v))
        combined = by_variant.get(v)
        spec = _Spec(f"results.variant.{v}", "Results", f"Points per hand in {v}", "points",
                     f"{v} hands", True,
                     "the balance sheet's net: the difference in points per hand × share of "
                     "hands")
        base = dict(key=spec.key, topic=spec.topic, title=spec.title, unit=spec.unit,
                    sample_unit=spec.sample_unit, minimum=context.settings.min_sample,
                    reference_label=context.label, basis=spec.basis,
                    higher_is_better=True, note="")
        if mine.n < context.settings.min_sample:
            findings.append(Finding(**base, shown=False,
                                    player=Estimate(None, None, None, None, mine.n),
                                    reference=None, difference=None, z=None, p_value=None,
                                    verdict="not enough data",
                                    confidence=not_enough(mine.n, context.settings.min_sample,
                                                          spec.sample_unit),
                                    points_per_100=None))
            continue
        if combined is None:
            findings.append(Finding(**base, shown=True, player=_estimate(mine), reference=None,
                                    difference=None, z=None, p_value=None,
                                    verdict="not compared",
                                    confidence=f"{_capital(context.label)} has no hands here "
                                               "to compare with.", points_per_100=None))
            continue
        reference_value = combined.side_mean(balance.per_hand, player=False)
        reference_se = _reference_se(combined)
        reference_hands = sum(s.reference_boards for s in combined.strata)
        net, se = combined.estimate([1, 1, 1, 1])
        z, p = balance.z_and_p(net, se)
        share = combined.hands / context.total
        low = high = None
        if reference_value is not None and reference_se is not None:
            low, high = reference_value - Z_95 * reference_se, reference_value + Z_95 * reference_se
        findings.append(_tested(Finding(
            **base, shown=True, player=_estimate(mine),
            reference=Estimate(reference_value, low, high, reference_se, reference_hands),
            difference=net, z=z, p_value=p, verdict="", confidence="",
            points_per_100=_per_100(share * net))))
    if states.is_empty():
        return findings
    keys = ["variant", "player_count", "position"]
    mine_seats = states.group_by(keys).agg(pl.col("boards").sum(), pl.col("value").sum(),
                                           pl.col("value_sq").sum())
    theirs = members.group_by(keys).agg(pl.col("boards").sum(), pl.col("value").sum(),
                                        pl.col("value_sq").sum()) if not members.is_empty() \
        else mine_seats.clear()
    order = {v: i for i, v in enumerate(variants)}
    lookup = {(r["variant"], r["player_count"], r["position"]): r
              for r in theirs.iter_rows(named=True)}
    for row in sorted(mine_seats.iter_rows(named=True),
                      key=lambda r: (order.get(r["variant"], 99), r["variant"],
                                     r["player_count"], r["position"])):
        key = (row["variant"], row["player_count"], row["position"])
        other = lookup.get(key, {"boards": 0, "value": 0.0, "value_sq": 0.0})
        where = position_label(int(row["player_count"]), int(row["position"]), False)
        findings.append(_finding(
            _Spec(f"results.position.{row['variant']}.{row['player_count']}.{row['position']}",
                  "Results", f"Points per hand, {row['variant']}, {where}", "points",
                  "hands in this seat", True,
                  "difference in points per hand to the group in the same seat × share of "
                  "hands"),
            [_Stratum(Mean(int(row["boards"]), float(row["value"]), float(row["value_sq"])),
                      Mean(int(other["boards"]), float(other["value"]),
                           float(other["value_sq"])), 1.0)],
            context))
    return findings


def _reference_se(combined: balance.Combined) -> float | None:
    """The standard error of the group's points per hand, standardised to the player's mix."""
    variance = 0.0
    for weight, stratum in zip(combined.weights, combined.strata, strict=True):
        side = stratum.reference
        boards = side.boards
        if boards < 2:
            return None
        total = side.totals[1::3].sum()
        total_sq = sum(side.moments[3 * k + 1, 3 * k + 1] for k in range(3))
        sample_variance = (total_sq - total * total / boards) / (boards - 1)
        variance += weight * weight * max(sample_variance, 0.0) / boards
    return math.sqrt(variance)


# --- sessions, trends, before/after -------------------------------------------------------------


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


def _strata_labels(hands: pl.DataFrame) -> np.ndarray:
    return strata_codes(hands)


def _as_floats(column: pl.Series) -> np.ndarray:
    return column.cast(pl.Float64).to_numpy()


def _trend_findings(hands: pl.DataFrame, sessions: Sequence[SessionLine],
                    foul_worth: float | None, context: _Context) -> list[Finding]:
    settings = context.settings
    count = len(sessions)
    numbers = pl.DataFrame({"session_id": [s.session_id for s in sessions],
                            "_number": [float(s.number) for s in sessions]},
                           schema={"session_id": hands.schema["session_id"],
                                   "_number": pl.Float64})
    dated = hands.filter(pl.col("session_id").is_not_null())
    minimum = max(settings.min_sessions, MIN_TREND_SESSIONS)
    specs = (
        ("trend.points", "Trend in points per hand", "points_slope", True,
         "fitted change in points per hand from the first to the last session, within each "
         "variant and table size", "points"),
        ("trend.fouls", "Trend in foul rate", "rate_slope", False,
         "fitted change in foul rate from the first to the last session, within each variant "
         "and table size, × foul cost", "foul"),
    )
    findings = []
    for key, title, unit, better, basis, column in specs:
        base = dict(key=key, topic="Trend", title=title, unit=unit, sample_unit="sessions",
                    minimum=minimum, basis=basis, higher_is_better=better,
                    reference_label="the player's own earlier sessions")
        if count < minimum or dated.height < settings.min_sample:
            reason = (not_enough(count, minimum, "sessions") if count < minimum else
                      not_enough(dated.height, settings.min_sample, "hands in sessions"))
            findings.append(Finding(**base, shown=False,
                                    player=Estimate(None, None, None, None, count),
                                    reference=None, difference=None, z=None, p_value=None,
                                    verdict="not enough data", confidence=reason,
                                    points_per_100=None))
            continue
        number = dated.select("session_id").join(numbers, on="session_id", how="left",
                                                 maintain_order="left")["_number"]
        fit = within_effect(_as_floats(dated[column]), number.to_numpy(),
                            _strata_labels(dated), value_codes(dated["session_id"]))
        if fit is None:
            findings.append(Finding(**base, shown=False,
                                    player=Estimate(None, None, None, None, count),
                                    reference=None, difference=None, z=None, p_value=None,
                                    verdict="not enough data",
                                    confidence="Not enough data: too few sessions within one "
                                               "variant and table size to fit a trend.",
                                    points_per_100=None))
            continue
        change = fit.estimate * (count - 1)
        points = change if key == "trend.points" else (
            None if foul_worth is None else change * foul_worth)
        findings.append(_tested(Finding(
            **base, shown=True,
            player=Estimate(fit.estimate, fit.low, fit.high, fit.se, count), reference=None,
            difference=fit.estimate, z=fit.t, p_value=fit.p_value, verdict="", confidence="",
            points_per_100=_per_100(points),
            note=(f"over {count:,} sessions and {fit.hands:,} hands within {fit.strata} "
                  f"variant/table size group{'s' if fit.strata != 1 else ''}; fitted change from "
                  f"the first to the last session: {change:+.3f}"),
        )))
    return findings


def _change_findings(hands: pl.DataFrame, change_date: Any, foul_worth: float | None,
                     context: _Context) -> list[Finding]:
    """Before and after a date: points per hand and foul rate, mix held fixed."""
    if change_date is None:
        return []
    settings = context.settings
    moment = datetime.combine(change_date, datetime.min.time())
    dated = hands.filter(pl.col("started_at").is_not_null())
    after = [bool(value >= moment) for value in dated["started_at"].to_list()]
    later = sum(after)
    earlier = len(after) - later
    findings = []
    when = change_date.isoformat()
    for key, title, unit, column, better in (
            ("change.points", f"Points per hand since {when}", "points", "points", True),
            ("change.fouls", f"Foul rate since {when}", "rate", "foul", False)):
        base = dict(key=key, topic="Did I improve?", title=title, unit=unit,
                    sample_unit="hands before / after", minimum=settings.min_sample,
                    basis="difference after minus before, within each variant and table size",
                    higher_is_better=better, reference_label=f"the player before {when}")
        if min(later, earlier) < settings.min_sample:
            findings.append(Finding(**base, shown=False,
                                    player=Estimate(None, None, None, None, min(later, earlier)),
                                    reference=None, difference=None, z=None, p_value=None,
                                    verdict="not enough data",
                                    confidence=(f"Not enough data: {earlier:,} hands before "
                                                f"and {later:,} after {when}, at least "
                                                f"{settings.min_sample:,} needed on each side."),
                                    points_per_100=None))
            continue
        values = [float(v) for v in dated[column].to_list()]
        sessions = [s if s is not None else f"undated-{i}"
                    for i, s in enumerate(dated["session_id"].to_list())]
        fit = within_effect(values, [float(a) for a in after], _strata_labels(dated), sessions)
        raw = raw_difference(values, after)
        raw_text = "" if raw is None else (
            f"; without holding the mix: {_format_unit(raw[0], unit)}")
        if fit is None:
            findings.append(Finding(**base, shown=False,
                                    player=Estimate(None, None, None, None, min(later, earlier)),
                                    reference=None, difference=None, z=None, p_value=None,
                                    verdict="not enough data",
                                    confidence="Not enough data: no variant and table size was "
                                               "played both before and after the date.",
                                    points_per_100=None))
            continue
        points = fit.estimate if key == "change.points" else (
            None if foul_worth is None else fit.estimate * foul_worth)
        findings.append(_tested(Finding(
            **base, shown=True,
            player=Estimate(fit.estimate, fit.low, fit.high, fit.se, fit.hands),
            reference=None, difference=fit.estimate, z=fit.t, p_value=fit.p_value,
            verdict="", confidence="", points_per_100=_per_100(points),
            note=(f"{earlier:,} hands before, {later:,} after; compared within "
                  f"{fit.strata} variant/table size group{'s' if fit.strata != 1 else ''} "
                  f"over {fit.sessions:,} sessions{raw_text}"),
        )))
    return findings


def _format_unit(value: float, unit: str) -> str:
    return f"{value * 100:+.1f} pp" if unit == "rate" else f"{value:+.2f}"


def _head_to_head(data: ReportData, group: ReferenceGroup, names: Sequence[str],
                  context: _Context) -> list[Finding]:
    pairs = data.pair_totals
    settings = context.settings
    if pairs.is_empty():
        return []
    names = list(names)
    mine = pairs.filter(pl.col("player").is_in(names) & ~pl.col("opponent").is_in(names))
    mine = mine.group_by("opponent").agg(
        pl.col("hands").sum(), pl.col("points").sum(), pl.col("points_sq").sum(),
    ).sort(["hands", "opponent"], descending=[True, False])
    regular = mine.filter(pl.col("hands") >= settings.min_sample).head(settings.max_opponents)
    members = member_rows(pairs, group)
    findings = []
    for row in regular.iter_rows(named=True):
        opponent = row["opponent"]
        others = members.filter((pl.col("opponent") == opponent)
                                & (pl.col("player") != opponent))
        reference = Mean(int(others["hands"].sum()), int(others["points"].sum()),
                         int(others["points_sq"].sum())) if others.height else Mean(0, 0, 0)
        findings.append(_finding(
            _Spec(f"head_to_head.{opponent}", "Head-to-head", f"Against {opponent}", "points",
                  f"hands against {opponent}", True,
                  "difference to what the group scores against this opponent, per hand "
                  "together × share of hands together",
                  note=f"group: {context.label}'s pairings with this opponent"),
            [_Stratum(Mean(int(row["hands"]), int(row["points"]), int(row["points_sq"])),
                      reference, 1.0)], context))
    if not findings:
        most = int(mine["hands"].max() or 0) if mine.height else 0
        findings.append(Finding(
            key="head_to_head.none", topic="Head-to-head", title="Regular opponents",
            unit="points", sample_unit="hands together", minimum=settings.min_sample,
            shown=False, player=Estimate(None, None, None, None, most), reference=None,
            reference_label=context.label, difference=None, z=None, p_value=None,
            verdict="not enough data",
            confidence=(f"Not enough data: no opponent shares {settings.min_sample:,} hands "
                        f"with the player (most: {most:,})."),
            points_per_100=None, basis="", higher_is_better=True))
    return findings


# --- the ranked list and the balance sheets ----------------------------------------------------


def _side_figure(function: Callable[[balance.Side], float | None]
                 ) -> Callable[[balance.Combined, bool], float | None]:
    def figure(combined: balance.Combined, player: bool) -> float | None:
        total = weight_total = 0.0
        for weight, stratum in zip(combined.weights, combined.strata, strict=True):
            value = function(stratum.player if player else stratum.reference)
            if value is None:
                continue
            total += weight * value
            weight_total += weight
        return total / weight_total if weight_total else None
    return figure


def _share(state: int) -> Callable[[balance.Side], float | None]:
    def share(side: balance.Side) -> float | None:
        value = balance.share_of(state)(side.totals)
        return None if value is None else 100 * value
    return share


def _mean(state: int, royalty: bool = False,
          rest: bool = False) -> Callable[[balance.Side], float | None]:
    def mean(side: balance.Side) -> float | None:
        return balance.mean_of(state, royalty, rest)(side.totals)
    return mean


def _over_standing(state: int) -> Callable[[balance.Side], float | None]:
    def worth(side: balance.Side) -> float | None:
        mine = balance.mean_of(state)(side.totals)
        standing = balance.mean_of(balance.STANDING)(side.totals)
        return None if mine is None or standing is None else mine - standing
    return worth


def _entries(side: balance.Side) -> float | None:
    outside = side.totals[3 * balance.FOUL] + side.totals[3 * balance.STANDING]
    if outside <= 0:
        return None
    earned = side.fantasyland_next[balance.FOUL] + side.fantasyland_next[balance.STANDING]
    return float(100 * earned / outside)


def _stays(side: balance.Side) -> float | None:
    inside = side.totals[3 * balance.FANTASYLAND]
    return float(100 * side.fantasyland_next[balance.FANTASYLAND] / inside) if inside > 0 else None


SHEET_LINES: tuple[tuple[str, str, str, Callable[[balance.Side], float | None]], ...] = (
    ("fouls", "Fouls per 100 hands", "per_100", _share(balance.FOUL)),
    ("foul_cost", "What a foul costs against a standing board (points)", "points",
     _over_standing(balance.FOUL)),
    ("entries", "Fantasyland entries per 100 hands outside it", "per_100", _entries),
    ("stays", "Fantasyland stays per 100 Fantasyland hands", "per_100", _stays),
    ("fantasyland_hands", "Fantasyland hands per 100 hands", "per_100",
     _share(balance.FANTASYLAND)),
    ("fantasyland_worth", "What a Fantasyland hand is worth over a standing board (points)",
     "points", _over_standing(balance.FANTASYLAND)),
    ("fantasyland_points", "Points per Fantasyland hand", "points",
     _mean(balance.FANTASYLAND)),
    ("royalties", "Net royalty points per standing board", "points",
     _mean(balance.STANDING, royalty=True)),
    ("rows", "Rows and scoops per standing board (points)", "points",
     _mean(balance.STANDING, rest=True)),
    ("points", "Points per hand", "points", lambda side: balance.per_hand(side.totals)),
)


def _sheet(variant: str, combined: balance.Combined, label: str) -> BalanceSheet:
    lines = tuple(
        BalanceLine(key, text, unit, _side_figure(function)(combined, True),
                    _side_figure(function)(combined, False))
        for key, text, unit, function in SHEET_LINES)
    net, net_se = combined.estimate([1, 1, 1, 1])
    chasing, chasing_se = combined.estimate([1, 1, 0, 0])
    player_value = combined.side_mean(balance.per_hand, player=True)
    reference_value = combined.side_mean(balance.per_hand, player=False)
    net_low, net_high = balance.interval(net, net_se)
    chase_low, chase_high = balance.interval(chasing, chasing_se)
    return BalanceSheet(
        variant=variant, hands=combined.hands,
        reference_hands=sum(s.reference_boards for s in combined.strata),
        reference_label=label, lines=lines,
        causes=tuple((key, 100 * float(value)) for key, value in
                     zip(balance.CAUSES, combined.terms, strict=True)),
        net_per_100=100 * net, net_low=100 * net_low, net_high=100 * net_high,
        player_per_hand=player_value or 0.0, reference_per_hand=reference_value or 0.0,
        chasing_per_100=100 * chasing, chasing_low=100 * chase_low,
        chasing_high=100 * chase_high,
    )


def _causes(overall: balance.Combined, by_variant: dict[str, balance.Combined],
            label: str) -> list[Cause]:
    causes = []
    for index, key in enumerate(balance.CAUSES):
        vector = [0.0] * 4
        vector[index] = 1.0
        value, se = overall.estimate(vector)
        z, p = balance.z_and_p(value, se)
        low, high = balance.interval(value, se)
        shares = []
        for variant, combined in by_variant.items():
            part, part_se = combined.estimate(vector)
            part_low, part_high = balance.interval(part, part_se)
            shares.append(CauseShare(variant, combined.hands, 100 * part, 100 * part_low,
                                     100 * part_high))
        causes.append(Cause(
            key=key, title=balance.CAUSE_TITLES[key], scope=balance.CAUSE_SCOPE[key],
            reference_label=label, points_per_100=100 * value, low=100 * low, high=100 * high,
            se=100 * se, z=z, p_value=p, q_value=None, survives=False, verdict="",
            confidence="", by_variant=tuple(shares), evidence=()))
    return causes


# --- the correction ----------------------------------------------------------------------------


def _direction(finding: Finding) -> str:
    difference = finding.difference or 0.0
    if finding.topic == "Trend":
        return "no change" if difference == 0 else ("rising" if difference > 0 else "falling")
    if finding.topic == "Did I improve?":
        return ("the same" if difference == 0 else
                "higher than before" if difference > 0 else "lower than before")
    if difference == 0:
        return f"the same as {finding.reference_label}"
    return f"{'higher' if difference > 0 else 'lower'} than {finding.reference_label}"


def _verdict(finding: Finding) -> str:
    difference = finding.difference or 0.0
    better = finding.higher_is_better
    good = None if better is None or difference == 0 else (difference > 0) == better
    if finding.topic == "Trend":
        return {True: "improving", False: "getting worse"}.get(good, "changing")  # type: ignore[arg-type]
    if finding.topic == "Did I improve?":
        return {True: "improved", False: "got worse"}.get(good, "changed")  # type: ignore[arg-type]
    return {True: "strength", False: "leak"}.get(good, "different")  # type: ignore[arg-type]


def _settle(findings: list[Finding], causes: list[Cause], chasing: tuple[float, float, float] | None,
            settings: ReportSettings, label: str
            ) -> tuple[list[Finding], list[Cause], ChasingAnswer | None, int]:
    """One Benjamini-Hochberg correction over every test; verdicts and confidence texts."""
    tested = [i for i, f in enumerate(findings) if f.shown and f.p_value is not None]
    p_values: list[float | None] = [findings[i].p_value for i in tested]
    p_values += [c.p_value for c in causes]
    if chasing is not None:
        p_values.append(chasing[2] if chasing[2] == chasing[2] else None)
    count = sum(p is not None for p in p_values)
    q_values = benjamini_hochberg(p_values)
    alpha = settings.fdr
    family = f"over {count} test{'s' if count != 1 else ''} at a false-discovery rate of " \
             f"{alpha * 100:g} %"
    settled = list(findings)
    for position, index in enumerate(tested):
        finding = findings[index]
        q = q_values[position]
        assert finding.p_value is not None and q is not None
        survives = q <= alpha
        stats = f"{_p_text(finding.p_value)}, {_q_text(q)} {family}"
        if survives:
            verdict = _verdict(finding)
            confidence = f"Clear: {_direction(finding)} ({stats})."
        else:
            verdict = "exploratory"
            confidence = f"Not clear: {_direction(finding)} ({stats}); exploratory."
        settled[index] = replace(finding, q_value=q, survives=survives, verdict=verdict,
                                 confidence=confidence)
    offset = len(tested)
    settled_causes = []
    for position, cause in enumerate(causes):
        q = q_values[offset + position]
        evidence = tuple(f.key for f in settled if f.cause == cause.key and f.survives)
        if cause.p_value is None or q is None:
            settled_causes.append(replace(cause, verdict="in line", evidence=evidence,
                                          confidence="No variation: nothing to test."))
            continue
        survives = q <= alpha
        direction = "a gain" if cause.points_per_100 > 0 else "a cost"
        stats = f"{_p_text(cause.p_value)}, {_q_text(q)} {family}"
        if survives:
            verdict = "strength" if cause.points_per_100 > 0 else "leak"
            confidence = f"Clear: {direction} against {label} ({stats})."
        else:
            verdict = "exploratory"
            confidence = f"Not clear: {direction} against {label} ({stats}); exploratory."
        settled_causes.append(replace(cause, q_value=q, survives=survives, verdict=verdict,
                                      confidence=confidence, evidence=evidence))
    answer = None
    if chasing is not None:
        value, se, p = chasing
        q = q_values[offset + len(causes)]
        low, high = balance.interval(value, se)
        survives = q is not None and q <= alpha
        if p != p or q is None:
            text = "Not tested: no variation."
        elif survives:
            text = (f"{'Yes' if value > 0 else 'No'}: fouls and Fantasyland together "
                    f"{'gain' if value > 0 else 'cost'} {abs(value) * 100:.1f} points per 100 "
                    f"hands against {label} ({_p_text(p)}, {_q_text(q)}).")
        else:
            text = (f"Not clear: fouls and Fantasyland together come to {value * 100:+.1f} "
                    f"points per 100 hands against {label} ({_p_text(p)}, {_q_text(q)}); "
                    "exploratory.")
        answer = ChasingAnswer(100 * value, 100 * low, 100 * high, None if p != p else p, q,
                               survives, text)
    return settled, settled_causes, answer, count


# --- headline -----------------------------------------------------------------------------------


def _when(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return str(value)


def _per_player_means(states: pl.DataFrame) -> dict[str, Mean]:
    if states.is_empty():
        return {}
    summed = states.group_by("player", maintain_order=True).agg(pl.col("boards").sum(), pl.col("value").sum(),
                                           pl.col("value_sq").sum())
    return {row["player"]: Mean(int(row["boards"]), float(row["value"]), float(row["value_sq"]))
            for row in summed.iter_rows(named=True)}


def _headline(request: ReportRequest, data: ReportData, player: Totals, members: pl.DataFrame,
              settings: ReportSettings, label: str) -> Headline:
    hands = data.hands
    names = request.names
    points = hands["points"].cast(pl.Int64)
    total = Mean(points.len(), int(points.sum()), int((points * points).sum()))
    interval = total.interval()
    dated = hands["started_at"].drop_nulls()
    lines = []
    for variant in _variants_of(player):
        mine = player[variant]
        part = hands.filter(pl.col("variant") == variant)
        sessions = part["session_id"].drop_nulls().n_unique()
        mean = Mean(int(mine["hands"]), mine["points"], mine["points_sq"])
        own = _state_mean(data.player_states.filter(pl.col("variant") == variant))
        others = _per_player_means(members.filter(pl.col("variant") == variant))
        rates = [m.value for _, m in sorted(others.items())
                 if m.n >= settings.percentile_min_hands and m.value is not None]
        percentile, note, percentile_text = None, "", ""
        if mine["hands"] < settings.percentile_min_hands:
            note = (f"not ranked: {int(mine['hands']):,} hands, at least "
                    f"{settings.percentile_min_hands:,} needed")
        elif not rates:
            note = (f"not ranked: nobody in {label} has {settings.percentile_min_hands:,} "
                    f"hands in {variant}")
        else:
            percentile = percentile_rank(own.value or 0.0, rates)
            others_text = "player" if len(rates) == 1 else "players"
            note = (f"better than {percentile:.0f} % of {len(rates):,} {others_text} of "
                    f"{label} with at least {settings.percentile_min_hands:,} hands")
            percentile_text = f"{ordinal(round(percentile))} percentile"
        lines.append(VariantLine(
            variant=variant, hands=int(mine["hands"]), sessions=sessions,
            points=int(mine["points"]), points_per_hand=mean.value or 0.0, points_se=mean.se,
            percentile=percentile, players_ranked=len(rates), percentile_note=note,
            percentile_label=percentile_text,
        ))
    with_hands = tuple(n for n in names if n in set(hands["player"].unique().to_list()))
    return Headline(
        player=request.player, names=names, names_with_hands=with_hands, hands=points.len(),
        sessions=hands["session_id"].drop_nulls().n_unique(),
        undated_hands=hands["started_at"].null_count(),
        first_hand=_when(dated.min()) if dated.len() else None,
        last_hand=_when(dated.max()) if dated.len() else None,
        points=sum(points), points_per_hand=total.value or 0.0, points_se=total.se,
        low=interval[0] if interval else None, high=interval[1] if interval else None,
        variants=tuple(lines),
    )


def _strength(data: ReportData, members: pl.DataFrame, settings: ReportSettings,
              label: str) -> StrengthView | None:
    if data.reference.player_is_outlier:
        return None  # not drawn from the group: its players say nothing about this one
    mine = _state_mean(data.player_states)
    if mine.value is None or mine.se is None:
        return None
    group = {player: mean for player, mean in _per_player_means(members).items()
             if mean.n >= settings.min_sample and mean.value is not None and mean.se}
    prior = estimate_prior([m.value for m in group.values()],  # type: ignore[misc]
                           [m.se for m in group.values()])  # type: ignore[misc]
    if prior is None:
        return None
    own = shrink(mine.value, mine.se, prior)
    low, high = own.interval()
    shrunk = sorted((shrink(m.value, m.se, prior).value  # type: ignore[arg-type]
                     for m in group.values()), reverse=True)
    rank: int | None = 1 + sum(value > own.value for value in shrunk)
    note = (f"{mine.value:+.2f} ± {mine.se:.2f} over {mine.n:,} hands, pulled toward the mean of "
            f"{label} ({prior.mean:+.2f}, {prior.players} players): "
            f"{own.weight * 100:.0f} % of the player's own figure is kept")
    if prior.spread == 0:
        rank = None
        note += ("; the group's players cannot be told apart by their results (their "
                 "differences are within the noise), so nobody is ranked")
    else:
        note += f"; true strength in the group varies by about {prior.spread:.2f} per hand"
    return StrengthView(raw=mine.value, raw_se=mine.se, value=own.value, low=low, high=high,
                        weight=own.weight, group_mean=prior.mean, group_spread=prior.spread,
                        group_players=prior.players, rank=rank, ranked=len(shrunk) + 1,
                        note=note)


# --- notable hands ----------------------------------------------------------------------------

_RANK_ORDER = {rank: index for index, rank in enumerate(RANKS)}


def sort_row(cards: Sequence[str]) -> tuple[str, ...]:
    """Cards of a row for display: pairs and sets first, then by rank, high to low.

    >>> sort_row(["2c", "Kh", "Kd"])
    ('Kh', 'Kd', '2c')
    >>> sort_row(["5s", "Ah", "9d", "5c", "Tc"])
    ('5s', '5c', 'Ah', 'Tc', '9d')
    """
    counts: dict[str, int] = {}
    for card in cards:
        counts[card[:-1]] = counts.get(card[:-1], 0) + 1
    return tuple(sorted(cards, key=lambda c: (-counts[c[:-1]], -_RANK_ORDER.get(c[:-1], -1),
                                              "shdc".find(c[-1:]))))


def foul_reason(top: Sequence[str], middle: Sequence[str], bottom: Sequence[str],
                variant: str) -> str | None:
    """Why a board fouls, in words (from the rules core), or None when it cannot say."""
    from pipeline.rules.board import evaluate_board
    from pipeline.rules.cards import CardError, parse_cards

    try:
        verdict = evaluate_board(parse_cards(list(top)), parse_cards(list(middle)),
                                 parse_cards(list(bottom)), Variant(variant))
    except (CardError, ValueError):
        return None
    return verdict.foul_reason


def _cards(text: str | None) -> tuple[str, ...]:
    return tuple((text or "").split())


def _notable(data: ReportData, settings: ReportSettings) -> list[NotableHand]:
    hands = data.hands
    picked = pick_notable(hands, settings.notable_hands)
    wanted = sorted({key for keys in picked.values() for key in keys})
    by_key = {row["hand_key"]: row
              for row in hands.filter(pl.col("hand_key").is_in(wanted)).iter_rows(named=True)}
    header_columns = ("site", "hand_id", "table_name")
    if not data.headers.is_empty():  # the hands' own rows, read for the hands shown
        for header in data.headers.select("hand_key", *header_columns).iter_rows(named=True):
            if header["hand_key"] in by_key:
                by_key[header["hand_key"]].update(
                    {column: header[column] for column in header_columns})
    grades: dict[tuple[int, str], list[GradeView]] = {}
    if not data.hand_grades.is_empty():
        for row in data.hand_grades.iter_rows(named=True):
            grades.setdefault((int(row["hand_key"]), row["player"]), []).append(GradeView(
                street=int(row["street"]), situation=row["situation"],
                chosen=row["chosen_placement"], best=row["best_placement"],
                ev_loss=float(row["ev_loss"]), loss_se=float(row["loss_se"]),
                mistake=bool(row["mistake"])))
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
                top, middle, bottom = _cards(row["top"]), _cards(row["middle"]), _cards(row["bottom"])
                fouled = bool(row["foul"])
                boards.append(BoardView(
                    player=row["player"], is_player=row["player"] == mine["player"],
                    position=int(row["position"]), is_button=bool(row["is_button"]),
                    fantasyland=bool(row["fantasyland"]),
                    cards_dealt=None if row["cards_dealt"] is None else int(row["cards_dealt"]),
                    top=sort_row(top), middle=sort_row(middle), bottom=sort_row(bottom),
                    classes=(row["top_class"] or "", row["middle_class"] or "",
                             row["bottom_class"] or ""),
                    foul=fouled,
                    royalties=(int(row["royalty_top"] or 0), int(row["royalty_middle"] or 0),
                               int(row["royalty_bottom"] or 0)),
                    royalty_total=int(row["royalties"] or 0),
                    fantasyland_next=bool(row["fantasyland_next"]),
                    points=int(row["points"] or 0),
                    foul_reason=foul_reason(top, middle, bottom, mine["variant"]) if fouled
                    else None,
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
                points=int(mine["points"]), reason=_reason(kind, mine, boards),
                boards=tuple(boards), pairings=tuple(pairings),
                grades=tuple(grades.get((int(key), mine["player"]), ())),
            ))
    return result


def _reason(kind: str, hand: dict[str, Any], boards: Sequence[BoardView]) -> str:
    points = int(hand["points"])
    if kind == "costliest_fouls":
        why = next((b.foul_reason for b in boards if b.player == hand["player"]
                    and b.foul_reason), None)
        return f"Fouled board: {points:+d} points" + (f" - {why}" if why else "")
    if kind == "biggest_wins":
        return f"Won {points:+d} points"
    stayed = ", earned another Fantasyland" if hand["fantasyland_next"] else ""
    return f"Fantasyland hand: {points:+d} points{stayed}"


# --- the report -------------------------------------------------------------------------------


def _cumulative(hands: pl.DataFrame) -> tuple[tuple[int, int], ...]:
    series = hands["points"].cast(pl.Int64).cum_sum()
    count = series.len()
    step = max(1, math.ceil(count / MAX_CUMULATIVE_POINTS))
    indexes = list(range(0, count, step))
    if indexes and indexes[-1] != count - 1:
        indexes.append(count - 1)
    values = series.gather(indexes).to_list() if indexes else []
    return tuple((index + 1, int(value)) for index, value in zip(indexes, values, strict=True))


def _rolling(hands: pl.DataFrame, settings: ReportSettings) -> RollingView | None:
    count = hands.height
    window = min(settings.rolling_window, max(10, count // 4))
    strata = _strata_labels(hands)
    fouls = rolling_series(_as_floats(hands["foul"]), strata, window)
    points = rolling_series(_as_floats(hands["points"]), strata, window)
    if fouls is None or points is None:
        return None
    return RollingView(window, fouls.hand_number, fouls.raw, fouls.adjusted, points.raw,
                       points.adjusted)


def _reference_view(group: ReferenceGroup, player_leaves_out: bool) -> ReferenceView:
    if group.player_is_outlier:
        basis = ("The group's results leave out their pairings against the player and the "
                 "players left out. The player is beyond the outlier rule too, so all of the "
                 "player's pairings count.")
    elif player_leaves_out:
        basis = ("Results count pairings against the players who are not left out: the "
                 "group's never against the player, the player's never against the players "
                 "left out.")
    else:
        basis = "The group's results leave out their pairings against the player."
    return ReferenceView(
        kind=group.spec.kind.value, label=group.label, description=group.description,
        members=group.members,
        left_out=tuple(LeftOutView(i.player, i.hands, i.points_per_opponent, i.robust_z)
                       for i in group.left_out),
        outlier_rule=group.spec.outlier_text, player_robust_z=group.player_robust_z,
        player_is_outlier=group.player_is_outlier, basis=basis, notes=group.notes)


def _summary(causes: Sequence[Cause], findings: Sequence[Finding]
             ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    leaks = sorted((c for c in causes if c.survives and c.points_per_100 < 0),
                   key=lambda c: (c.points_per_100, c.key))
    strengths = sorted((c for c in causes if c.survives and c.points_per_100 > 0),
                       key=lambda c: (-c.points_per_100, c.key))
    shown = {c.key for c in causes if c.survives}
    clear = sorted((f for f in findings if f.survives and f.cause not in shown),
                   key=lambda f: (f.q_value or 0.0, f.key))
    return (tuple(c.key for c in strengths), tuple(c.key for c in leaks),
            tuple(f.key for f in clear[:SUMMARY_ITEMS]))


def _ranked(causes: Sequence[Cause]) -> tuple[Cause, ...]:
    """Most costly first, then the gains, largest first (ties by key)."""
    return tuple(sorted(causes, key=lambda c: (c.points_per_100, c.key)))


def build_report(data: ReportData, request: ReportRequest,
                 settings: ReportSettings = DEFAULT_SETTINGS) -> Report:
    """Turn the gathered frames into the report (pure)."""
    names = request.names
    group = data.reference
    label = group.label
    player_rows = data.player_totals.filter(pl.col("player").is_in(list(names)))
    reference_rows = member_rows(data.player_totals, group)
    player = _sums(player_rows)
    reference = _sums(reference_rows)
    player_pairs = _sums(data.player_matchups)
    reference_pairs = _sums(member_rows(data.reference_matchups, group))
    worths = _worths(_sums(pl.concat([player_rows, reference_rows])),
                     _sums(pl.concat([data.player_matchups,
                                      member_rows(data.reference_matchups, group)])))
    total = int(data.hands.height)
    context = _Context(label, total, settings)
    members = member_rows(data.reference_states, group)

    normal = sum(t["normal_hands"] for t in player.values())
    with_streets = sum(t["normal_with_streets"] for t in player.values())
    streets_note = "" if with_streets == normal else (
        f"streets recorded for {int(with_streets):,} of {int(normal):,} hands outside "
        "Fantasyland; the others are judged by their final board")
    notes = []
    if with_streets < normal:
        notes.append(f"{int(normal - with_streets):,} of the player's {int(normal):,} hands "
                     "outside Fantasyland have no street record: chasing Fantasyland is judged "
                     "from their final boards only.")
    undated = int(data.hands["started_at"].null_count())
    if undated:
        notes.append(f"{undated:,} hands have no start time: they belong to no session and "
                     "are left out of the trend.")
    notes += [f"Reference group: {note}." for note in group.notes]
    if group.player_is_outlier:
        notes.append(f"The player's own results sit {group.player_robust_z:+.1f} robust SDs "
                     f"from the field's median: by the same rule the player would be left out "
                     "(so all the player's pairings count, and the strength is not shrunk "
                     f"toward {label}).")

    sessions = _sessions(data.hands)
    hand_share = {v: t["hands"] / total for v, t in player.items()}
    foul_worths = [(hand_share[v], _worth(worths.foul, v)) for v in player]
    foul_worth = (None if any(w is None for _, w in foul_worths)
                  else sum(s * w for s, w in foul_worths))  # type: ignore[misc]

    if group.left_out and not group.player_is_outlier:
        basis = _state_mean(data.player_states)
        notes.append(f"Against the players not left out ({', '.join(group.left_out_names)} "
                     f"left out), the player's results are {basis.value or 0.0:+.2f} per hand "
                     f"({data.hands.height:,} hands in all: "
                     f"{int(data.hands['points'].sum()) / max(data.hands.height, 1):+.2f}); the "
                     "standing, the strength, the ranked list and the balance sheets use those.")

    strata = balance.strata_balances(data.player_states, members)
    overall = balance.combine(strata)
    variants = _variants_of(player)
    by_variant = {v: c for v in variants
                  if (c := balance.combine([s for s in strata if s.variant == v])) is not None}
    compared = sum(s.player_boards for s in strata)
    if compared < total:
        notes.append(f"{total - compared:,} of the player's hands have nothing to compare with "
                     f"in {label} (no hands of the group at that variant and table size): the "
                     "ranked list and the balance sheets leave them out.")

    findings: list[Finding] = []
    findings += _foul_findings(player, reference, worths, context, streets_note)
    findings += _fantasyland_findings(player, reference, worths, context)
    findings += _royalty_findings(player, reference, context)
    findings += _scoop_findings(player_pairs, reference_pairs, worths, context)
    findings += _result_findings(data, members, by_variant, variants, context)
    findings += _trend_findings(data.hands, sessions, foul_worth, context)
    findings += _change_findings(data.hands, request.change_date, foul_worth, context)
    findings += _head_to_head(data, group, names, context)

    causes = _causes(overall, by_variant, label) if overall is not None else []
    chasing = None
    if overall is not None:
        value, se = overall.estimate([1, 1, 0, 0])
        _, p = balance.z_and_p(value, se)
        chasing = (value, se, float("nan") if p is None else p)
    findings, causes, chasing_answer, tests = _settle(findings, causes, chasing, settings, label)
    strengths, leaks, clear = _summary(causes, findings)
    exploratory = tuple([c.key for c in causes if c.verdict == "exploratory"]
                        + [f.key for f in findings if f.verdict == "exploratory"])
    sheets = [_sheet(v, c, label) for v, c in by_variant.items()]
    if overall is not None and len(by_variant) > 1:
        sheets.append(_sheet("all", overall, label))

    return Report(
        title=f"Coaching report: {request.player}",
        player=request.player, aliases=tuple(n for n in names if n != request.player),
        since=request.since.isoformat() if request.since else None,
        until=request.until.isoformat() if request.until else None,
        variant=request.variant,
        change_date=request.change_date.isoformat() if request.change_date else None,
        settings=settings,
        reference=_reference_view(group, bool(group.left_out) and not group.player_is_outlier),
        headline=_headline(request, data, player, members, settings, label),
        strength=_strength(data, members, settings, label),
        causes=_ranked(causes), balance=tuple(sheets), chasing=chasing_answer,
        findings=tuple(findings), strengths=strengths, leaks=leaks, clear=clear,
        exploratory=exploratory, tests=tests,
        notable=tuple(_notable(data, settings)), sessions=tuple(sessions),
        cumulative=_cumulative(data.hands), rolling=_rolling(data.hands, settings),
        definitions=DEFINITIONS, data_notes=tuple(notes),
    )
