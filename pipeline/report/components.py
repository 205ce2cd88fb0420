"""The components of the causes: rates and means that explain a cause, never findings of their own.

A foul excess shows in the foul rate, in each variant's foul rate, in the foul rate when chasing
Fantasyland, in how often the player is scooped... These are views of one deviation: they sit
under their cause (fouls, Fantasyland, royalties, rows and scoops) with the player's figure,
the group's (weighted by the player's own mix of variants and table sizes), the difference with
its 95 % interval (errors clustered by session: :mod:`pipeline.report.inference`) and the
sample sizes. They carry no verdict and go through no test: the causes are tested.

Rates count every board of each side (the player's, the group members'), whoever the opponents
were, so a rate is the same figure on every page (:func:`pipeline.report.standing.mix_rate`).

Pure: works on the session sums of :func:`pipeline.read.report.report_session_sums`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from pipeline.report.inference import RatioCell, Sums, Test, ratio_contrast, sums_of, test_of
from pipeline.report.model import Estimate, Finding, ReportSettings
from pipeline.report.stats import wilson_interval

STRATUM = ("variant", "player_count")
FANTASYLAND = pl.col("state") == "fantasyland"
OUTSIDE = pl.col("state") != "fantasyland"
COUNTED = pl.col("pairings") > 0
_SCALE = (pl.col("player_count").cast(pl.Float64) - 1) / pl.col("pairings").cast(pl.Float64)


def _zero_unless(condition: pl.Expr, value: pl.Expr) -> pl.Expr:
    return pl.when(condition).then(value).otherwise(0)


@dataclass(frozen=True, slots=True)
class Component:
    """A ratio over boards (or pairings): ``numerator`` / ``denominator`` per stratum.

    ``squares``: the sum of the numerator's per-unit squares (None for a share of 0/1
    outcomes, where it is the numerator itself). ``variant``: only this variant's strata.
    ``unit``: ``rate`` (a share), ``points`` or ``royalties`` (means per unit).
    """

    key: str
    cause: str
    title: str
    unit: str
    sample_unit: str
    numerator: pl.Expr
    denominator: pl.Expr
    squares: pl.Expr | None = None
    variant: str | None = None
    higher_is_better: bool | None = None
    basis: str = ""


def sheet_components(variant: str | None) -> list[Component]:
    """The balance sheet's rates per 100 hands (of one variant, or all): the same figures as
    the components."""
    boards = pl.col("boards")
    outside = _zero_unless(OUTSIDE, boards)
    fantasyland = _zero_unless(FANTASYLAND, boards)
    return [
        Component("sheet.fouls", "fouls", "Fouls per 100 hands", "rate", "hands",
                  pl.col("fouls"), boards, variant=variant),
        Component("sheet.entries", "fantasyland", "Fantasyland entries per 100 hands outside it",
                  "rate", "hands outside Fantasyland",
                  _zero_unless(OUTSIDE, pl.col("fantasyland_next")), outside, variant=variant),
        Component("sheet.stays", "fantasyland", "Fantasyland stays per 100 Fantasyland hands",
                  "rate", "Fantasyland hands",
                  _zero_unless(FANTASYLAND, pl.col("fantasyland_next")), fantasyland,
                  variant=variant),
        Component("sheet.fantasyland_hands", "fantasyland", "Fantasyland hands per 100 hands",
                  "rate", "hands", fantasyland, boards, variant=variant),
    ]


def components(variants: Sequence[str]) -> list[Component]:
    """Every component of the report, the per-variant foul rates for ``variants`` (when more
    than one)."""
    boards = pl.col("boards")
    fouls = pl.col("fouls")
    outside = _zero_unless(OUTSIDE, boards)
    outside_fouls = _zero_unless(OUTSIDE & (pl.col("state") == "foul"), boards)
    every = [
        Component("fouls.overall", "fouls", "Foul rate", "rate", "hands", fouls, boards,
                  higher_is_better=False, basis="fouled boards per hand"),
    ]
    if len(variants) > 1:
        every += [Component(f"fouls.variant.{variant}", "fouls", f"Foul rate in {variant}",
                            "rate", f"{variant} hands", fouls, boards, variant=variant,
                            higher_is_better=False, basis="fouled boards per hand")
                  for variant in variants]
    every += [
        Component("fouls.chase_frequency", "fouls", "How often Fantasyland is chased", "rate",
                  "hands outside Fantasyland", pl.col("chasing"), outside,
                  basis="hands with a real Fantasyland draw (see Chasing Fantasyland) per hand "
                        "outside Fantasyland"),
        Component("fouls.chasing", "fouls", "Foul rate when chasing Fantasyland", "rate",
                  "hands chasing Fantasyland", pl.col("chasing_fouls"), pl.col("chasing"),
                  higher_is_better=False),
        Component("fouls.not_chasing", "fouls", "Foul rate when not chasing Fantasyland",
                  "rate", "hands outside Fantasyland not chasing it",
                  outside_fouls - pl.col("chasing_fouls"), outside - pl.col("chasing"),
                  higher_is_better=False),
        Component("scoops.lost", "fouls", "Scooped rate (scooped by an opponent)", "rate",
                  "pairings", pl.col("scooped"), pl.col("matchups"), higher_is_better=False,
                  basis="pairings the player was scooped in, mostly by fouling"),
        Component("fantasyland.entry", "fantasyland", "Fantasyland entry rate", "rate",
                  "hands outside Fantasyland", _zero_unless(OUTSIDE, pl.col("fantasyland_next")),
                  outside, higher_is_better=True),
        Component("fantasyland.stay", "fantasyland", "Fantasyland stay rate", "rate",
                  "Fantasyland hands", _zero_unless(FANTASYLAND, pl.col("fantasyland_next")),
                  _zero_unless(FANTASYLAND, boards), higher_is_better=True),
        Component("fantasyland.points", "fantasyland", "Points per Fantasyland hand", "points",
                  "Fantasyland hands",
                  _zero_unless(FANTASYLAND & COUNTED, pl.col("settled") * _SCALE),
                  _zero_unless(FANTASYLAND & COUNTED, boards),
                  squares=_zero_unless(FANTASYLAND & COUNTED,
                                       pl.col("settled_sq") * _SCALE * _SCALE),
                  higher_is_better=True, basis="results basis, scaled to the whole table"),
    ]
    for row in ("top", "middle", "bottom"):
        every.append(Component(
            f"royalties.{row}", "royalties", f"Royalties from the {row} row", "royalties",
            "hands", pl.col(f"royalty_{row}"), boards, squares=pl.col(f"royalty_{row}_sq"),
            higher_is_better=True, basis="royalty points on the board per hand (a fouled board "
                                         "collects none)"))
    every.append(Component("scoops.won", "rows", "Scoop rate (scooping an opponent)", "rate",
                           "pairings", pl.col("scoops"), pl.col("matchups"),
                           higher_is_better=True))
    return every


@dataclass(frozen=True, slots=True)
class Prepared:
    """One side's session sums with each component's numerator, denominator and squares summed
    per variant, table size and session (``columns``: key -> an (n, 3) array), read once for
    every component."""

    variant: np.ndarray
    player_count: np.ndarray
    columns: dict[str, np.ndarray]


def prepare(rows: pl.DataFrame, every: Sequence[Component]) -> Prepared:
    """The session sums ``rows`` (one side) summed per stratum and session for ``every``
    component."""
    keys = list(dict.fromkeys(component.key for component in every))
    if rows.is_empty():
        return Prepared(np.array([], dtype=object), np.array([], dtype=np.int64),
                        {key: np.zeros((0, 3)) for key in keys})
    expressions = []
    for component in {c.key: c for c in every}.values():
        squares = component.numerator if component.squares is None else component.squares
        expressions += [component.numerator.cast(pl.Float64).alias(f"{component.key}|a"),
                        component.denominator.cast(pl.Float64).alias(f"{component.key}|b"),
                        squares.cast(pl.Float64).alias(f"{component.key}|aa")]
    table = (rows.select(*STRATUM, "session", *expressions)
             .group_by(*STRATUM, "session").agg(pl.all().sum())
             .sort(*STRATUM, "session"))
    return Prepared(table["variant"].to_numpy().astype(object),
                    table["player_count"].cast(pl.Int64).to_numpy(),
                    {key: table.select(f"{key}|a", f"{key}|b", f"{key}|aa").to_numpy()
                     for key in keys})


def prepared_sums(prepared: Prepared, key: str,
                  variant: str | None = None) -> dict[tuple[str, int], Sums]:
    """Per stratum, a component's (numerator, denominator) sums with their covariance by board
    and by session."""
    values = prepared.columns[key]
    keep = values[:, 1] > 0
    if variant is not None:
        keep &= prepared.variant == variant
    result = {}
    for stratum in sorted({(str(v), int(c)) for v, c in
                           zip(prepared.variant[keep], prepared.player_count[keep],
                               strict=True)}):
        rows = values[keep & (prepared.variant == stratum[0])
                      & (prepared.player_count == stratum[1])]
        a, b = rows[:, 0].sum(), rows[:, 1].sum()
        moments = np.array([[rows[:, 2].sum(), a], [a, b]])
        result[stratum] = sums_of(rows[:, :2], moments, int(b))
    return result


def stratum_sums(rows: pl.DataFrame, numerator: pl.Expr, denominator: pl.Expr,
                 squares: pl.Expr | None) -> dict[tuple[str, int], Sums]:
    """Per stratum, the (numerator, denominator) sums of ``rows`` (session sums) with their
    covariance by board and by session."""
    one = Component("ratio", "rows", "", "points", "", numerator, denominator, squares)
    return prepared_sums(prepare(rows, [one]), "ratio")


def pooled(sides: Sequence[Sums]) -> Test | None:
    """The pooled ratio ``Σ a / Σ b`` of one side's strata with its error (the larger of the
    clustered and the independent one, Student's t on the sessions)."""
    hits = sum(s.totals[0] for s in sides)
    units = sum(s.totals[1] for s in sides)
    if units <= 0:
        return None
    ratio = hits / units
    gradient = np.array([1.0 / units, -hits / (units * units)])
    clustered = sum(float(gradient @ s.clustered @ gradient) for s in sides)
    independent = sum(float(gradient @ s.independent @ gradient) for s in sides)
    return test_of(ratio, [max(clustered, independent, 0.0)], [sum(s.clusters for s in sides)])


@dataclass(frozen=True, slots=True)
class Compared:
    """A component worked out: the player's figure, the group's (in the player's mix), the
    difference tested, and the units behind each - over the strata both sides have (all the
    player's when the group has none)."""

    player: Test | None
    player_hits: float
    player_units: int
    reference: float | None
    reference_units: int
    difference: Test | None


def compare(component: Component, player: Prepared, reference: Prepared) -> Compared:
    """One component of the player's prepared session sums against the group's."""
    mine = prepared_sums(player, component.key, component.variant)
    theirs = prepared_sums(reference, component.key, component.variant)
    shared = [s for s in sorted(mine) if s in theirs]
    compared = [mine[s] for s in shared] if shared else list(mine.values())
    hits = float(sum(s.totals[0] for s in compared))
    units = int(sum(s.totals[1] for s in compared))
    cells = [RatioCell(mine[s], theirs[s], float(mine[s].totals[1])) for s in shared]
    difference = ratio_contrast(cells, adjusted=component.squares is None) if cells else None
    reference_value = None
    if shared:
        total = sum(mine[s].totals[1] for s in shared)
        reference_value = float(sum(mine[s].totals[1] / total * theirs[s].totals[0]
                                    / theirs[s].totals[1] for s in shared))
    return Compared(pooled(compared), hits, units, reference_value,
                    int(sum(theirs[s].totals[1] for s in shared)), difference)


def too_few(sample: int, minimum: int, unit: str) -> str:
    """``Too few to judge: Fantasyland hands: 12, at least 30 needed.``"""
    return f"Too few to judge: {unit}: {sample:,}, at least {minimum:,} needed."


def component_finding(component: Component, player: Prepared, reference: Prepared,
                      label: str, cause_title: str, settings: ReportSettings) -> Finding:
    """The finding of one component: figures, the difference's interval, the samples; its
    verdict is ``component`` (it explains its cause), ``too few to judge`` or ``not
    compared``."""
    worked = compare(component, player, reference)
    minimum = settings.min_sample
    topic = {"fouls": "Fouls", "fantasyland": "Fantasyland", "royalties": "Royalties",
             "rows": "Scoops"}[component.cause]
    if component.key.startswith("scoops."):
        topic = "Scoops"
    base = dict(key=component.key, topic=topic, title=component.title, unit=component.unit,
                sample_unit=component.sample_unit, minimum=minimum, reference_label=label,
                basis=component.basis, higher_is_better=component.higher_is_better,
                cause=component.cause, points_per_100=None, z=None, p_value=None)
    if worked.player_units < minimum or worked.player is None:
        return Finding(**base, shown=False,
                       player=Estimate(None, None, None, None, worked.player_units),
                       reference=None, difference=None, verdict="too few to judge",
                       confidence=too_few(worked.player_units, minimum, component.sample_unit))
    estimate = _estimate(component, worked)
    if worked.reference is None or worked.difference is None:
        return Finding(**base, shown=True, player=estimate, reference=None, difference=None,
                       verdict="not compared",
                       confidence=f"{label[:1].upper() + label[1:]} has no hands here to "
                                  "compare with.")
    reference_estimate = Estimate(worked.reference, None, None, None, worked.reference_units)
    if worked.reference_units < minimum:
        return Finding(**base, shown=True, player=estimate, reference=reference_estimate,
                       difference=worked.difference.value, verdict="too few to judge",
                       confidence=(f"Too few to judge: {label} has only "
                                   f"{worked.reference_units:,} {component.sample_unit} here "
                                   f"(at least {minimum:,} needed)."),
                       reference_sample=worked.reference_units)
    difference = worked.difference
    return Finding(**base, shown=True, player=estimate, reference=reference_estimate,
                   difference=difference.value, verdict="component",
                   confidence=f"Part of the {cause_title.lower()} cause; "
                              f"{difference_text(difference, component.unit)} against {label}.",
                   difference_low=difference.low, difference_high=difference.high,
                   reference_sample=worked.reference_units)


def _estimate(component: Component, worked: Compared) -> Estimate:
    test = worked.player
    assert test is not None
    if component.squares is None:
        wilson = wilson_interval(int(round(worked.player_hits)), worked.player_units)
        low, high = max(0.0, min(wilson[0], test.low)), min(1.0, max(wilson[1], test.high))
    else:
        low, high = test.low, test.high
        if component.unit == "royalties":
            low = max(0.0, low)
    return Estimate(test.value, low, high, test.se, worked.player_units)


def difference_text(test: Test, unit: str) -> str:
    """``+4.1 percentage points (95 %: +1.2 to +7.0)`` in the unit's words."""
    if unit == "rate":
        return (f"{test.value * 100:+.1f} percentage points (95 %: {test.low * 100:+.1f} to "
                f"{test.high * 100:+.1f})")
    what = "royalty points per hand" if unit == "royalties" else "points"
    return f"{test.value:+.2f} {what} (95 %: {test.low:+.2f} to {test.high:+.2f})"
