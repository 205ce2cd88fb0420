"""The findings engine: from the gathered frames to a :class:`~pipeline.report.model.Report`.

Pure: no database, no clock, no randomness; every ordering is explicit, so the same frames give
the same report.

How the player is compared (with the *reference group* of :mod:`pipeline.report.reference`):

* Every comparison is made within variant and table size, the group's figure weighted by the
  player's own mix, so a different mix of games never passes for different play.
* Results (points) count the pairings that matter: the group's never include their pairings
  against the player or against the players the outlier rule left out; the player's leave out
  those against the players left out too, unless the player is beyond the same rule.
* The ranked list: the difference in points per hand to the group, split into four causes that
  never overlap (:mod:`pipeline.report.balance`). The rates that explain a cause (foul rate,
  entry rate, royalties by row...) are its *components* (:mod:`pipeline.report.components`):
  shown with their intervals under it, never tested on their own.
* The tests: the four causes, "does chasing Fantasyland pay?", the seats (one test: do the
  player's results depend on the seat more than the group's?), each regular opponent (within
  variant and table size), the trends and before/after. Their errors are clustered by session
  (:mod:`pipeline.report.inference`), and they go through one Benjamini-Hochberg correction.
* The summary: one deviation, one item (:mod:`pipeline.report.summary`): causes that offset each
  other are one trade-off with its net.
* Trends hold the mix fixed (:mod:`pipeline.report.trends`); the strength, ranks and
  percentiles follow the rules of :mod:`pipeline.report.standing`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from pipeline.read.players import position_label
from pipeline.read.report import session_states
from pipeline.report import balance, components
from pipeline.report.data import ReportData, pick_notable
from pipeline.report.inference import RatioCell, Test, f_p, ratio_contrast
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
    SummaryItem,
    TestLine,
    VariantLine,
)
from pipeline.report.reference import ReferenceGroup, member_rows
from pipeline.report.standing import (
    PERCENTILE_MIN_PLAYERS,
    RANK_MIN_PLAYERS,
    SEPARATION_P,
    standing_in,
    strength,
)
from pipeline.report.stats import Mean, benjamini_hochberg, ordinal
from pipeline.report.summary import (
    cause_items,
    finding_items,
    with_chasing,
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

TOPICS = ("Fouls", "Fantasyland", "Royalties", "Scoops", "Seats", "Head-to-head", "Trend",
          "Did I improve?")
MAX_CUMULATIVE_POINTS = 400
MIN_TREND_SESSIONS = 3  # a line through fewer points has no error estimate

DEFINITIONS: tuple[tuple[str, str], ...] = (
    ("Reference group", "Whom the player is compared with: the field (everyone else in scope), "
     "the players of a stake (everyone with hands under the named rules, on those hands), named "
     "regulars, or everyone with at least N hands whose foul rate is below X. The player is "
     "never in it. It is named on every figure."),
    ("Outlier rule", "A player of the field whose results are far from everyone else's (more "
     "than the shown number of times the field's typical spread from its median, allowing for "
     "his own luck) is left "
     "out of the group, and pairings against him do not count in the group's results. The rule "
     "can be turned off."),
    ("Within variant and table size", "Every comparison is made inside each variant and table "
     "size and then added up with the player's own hands as weights, so playing more of one "
     "game never passes for playing better or worse."),
    ("Causes (the ranked list)", "The difference in points per 100 hands to the group, split "
     "exactly into four parts that never overlap: fouls, Fantasyland, royalties on legal "
     "boards, and rows and scoops on legal boards. They add up to the difference; nothing else "
     "is added."),
    ("Components", "The rates under a cause (foul rate, foul rate when chasing, entry rate, "
     "royalties by row...) explain it. They are shown with their 95 % interval, never counted "
     "as findings of their own: one difference in play is one item."),
    ("Clear", "A test is clear when it survives the false-discovery correction over every test "
     "of the report (at the shown rate): among clear results, at most that share is expected to "
     "be luck. On fields of identical players the report calls something clear in at most 5 % "
     "of reports (measured: docs/coaching-report.md). The rest is in the appendix."),
    ("Sessions", "A session is a player's run of hands at one table without a break of 30 "
     "minutes or more. Hands of one session hang together (the same table, the same "
     "opponents), so every interval and test treats a session, not a hand, as one piece of "
     "evidence."),
    ("Trade-off", "Two causes that pull in opposite directions (fewer fouls but fewer "
     "royalties) are one trade-off, shown with the net: a style, not a leak."),
    ("Chasing Fantasyland", "A hand outside Fantasyland chases it when the final top row "
     "qualifies (a pair of queens or better - kings in 2-7 Pineapple - or trips) or, when the "
     "streets are known, the top row still held a live draw as the last cards were dealt: a "
     "slot left and a lone queen, king or ace (king or ace in 2-7) or a pair, with a card of that "
     "rank the player had not seen. A lone high card put on top early and then given up is not "
     "chasing."),
    ("Percentage points", "The difference between two rates: 20 % against 15 % is 5 "
     "percentage points (pp), not 5 %."),
    ("Too few to judge", "Below the minimum sample the report gives the count and no verdict."),
    ("Strength", "Points per hand pulled toward the group's mean by how much of the player's "
     "difference could be luck. None when the group's players differ no more than luck makes "
     "them (every player would be the group's mean). A rank or a percentile only when the "
     f"players can be told apart (heterogeneity test p < {SEPARATION_P:g}) and there are enough "
     f"of them: {RANK_MIN_PLAYERS} with enough hands, the player included, for a rank; "
     f"{PERCENTILE_MIN_PLAYERS} others with enough hands in the variant for a percentile."),
)


def not_enough(sample: int, minimum: int, unit: str) -> str:
    """The minimum-sample message: ``Too few to judge: 1 Fantasyland hands, at least 10 needed.``"""
    return components.too_few(sample, minimum, unit)


Totals = dict[str, dict[str, float]]
KEYS = ("player", "variant", "player_count", "position", "is_button", "rules", "state",
        "opponent")


def _sums(frame: pl.DataFrame) -> Totals:
    """Column sums (every total but the keys) per variant."""
    if frame.is_empty():
        return {}
    numeric = [c for c, t in frame.schema.items() if c not in KEYS and t.is_numeric()]
    summed = frame.group_by("variant").agg([pl.col(c).sum() for c in numeric]).sort("variant")
    return {row["variant"]: {c: (row[c] or 0) for c in numeric}
            for row in summed.iter_rows(named=True)}


class _Context:
    """What every finding needs to know."""

    def __init__(self, label: str, total: int, settings: ReportSettings) -> None:
        self.label = label
        self.total = total
        self.settings = settings


def _per_100_test(test: Test) -> Test:
    return Test(100 * test.value, 100 * test.se, test.df, test.t, test.p_value, 100 * test.low,
                100 * test.high)


# --- the seats: one test ------------------------------------------------------------------------


SeatCells = dict[tuple[str, int], tuple[list[int], np.ndarray]]


def _seat_cells(blocks: pl.DataFrame) -> SeatCells:
    """Per variant and table size: the seats, and per block (rows) and seat (columns) the
    boards, the sum of results and of their squares (an array blocks × seats × 3)."""
    if blocks.is_empty():
        return {}
    strata = blocks["variant"].to_numpy().astype(str)
    counts = blocks["player_count"].to_numpy().astype(np.int64)
    units = (blocks["player"] + "|" + blocks["block"]).to_numpy().astype(str)
    positions = blocks["position"].to_numpy().astype(np.int64)
    sums = blocks.select("boards", "value", "value_sq").to_numpy().astype(float)
    cells: SeatCells = {}
    for variant, count in sorted(set(zip(strata.tolist(), counts.tolist(), strict=True))):
        chosen = (strata == variant) & (counts == count)
        seats, seat_index = np.unique(positions[chosen], return_inverse=True)
        names, unit_index = np.unique(units[chosen], return_inverse=True)
        cube = np.zeros((len(names), len(seats), 3))
        np.add.at(cube, (unit_index, seat_index), sums[chosen])
        cells[(str(variant), int(count))] = ([int(seat) for seat in seats], cube)
    return cells


def _seat_side(cube: np.ndarray, chosen: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """One side's seat means (``chosen`` seats), their covariance and hands per seat, and the
    blocks behind them. The covariance has blocks as units (the delta method over each block's
    sums), its diagonal never below the variance with hands as units."""
    part = cube[:, chosen]
    boards, values, squares = (part[:, :, i].sum(axis=0) for i in range(3))
    means = values / boards
    independent = (squares / boards - means * means) * boards / (boards - 1) / boards
    residuals = (part[:, :, 1] - means * part[:, :, 0]) / boards
    units = part.shape[0]
    covariance = units / (units - 1) * (residuals.T @ residuals) if units > 1 \
        else np.zeros((len(means), len(means)))
    covariance += np.diag(np.maximum(0.0, independent - np.diag(covariance)))
    return means, covariance, boards, units


def seat_finding(player_blocks: pl.DataFrame, member_blocks: pl.DataFrame,
                  context: _Context) -> Finding:
    """Do the player's results depend on the seat more than the group's do?

    Within each variant and table size, the player's points per hand in each seat minus the
    group's in the same seat, each measured from the player's own average over the seats of
    that stratum (so the player's overall level, which the causes explain, is not counted
    again). One Wald test over every seat (``seats - 1`` degrees of freedom per stratum),
    against F on the player's blocks.

    The errors take blocks of consecutive hands (:func:`pipeline.read.report.report_seat_blocks`)
    as units, with the covariance between seats: the button moves every hand, but not after a
    Fantasyland hand, so a run of Fantasyland hands falls on one seat, and a player with
    Fantasyland runs (a chaser, or a chaser's opponent) sees more of his luck land on one seat
    than independent hands allow. With hands as units, on fields where the seat cannot matter
    (seat-blind bots, chasers at the tables) the test gave p < 0.10 in 13.4 % of reports and
    p < 0.05 in 6.8 % of the solid players'; with blocks 6.5 % and 1.0 %
    (docs/coaching-report.md)."""
    minimum = context.settings.min_sample
    mine, theirs = _seat_cells(player_blocks), _seat_cells(member_blocks)
    statistic, df, within = 0.0, 0, []
    lines = []
    for (variant, count), (seats, cube) in sorted(mine.items()):
        if (variant, count) not in theirs:
            continue
        group_seats, group_cube = theirs[(variant, count)]
        shared = [seat for seat in seats if seat in group_seats]
        own_boards = cube[:, [seats.index(s) for s in shared], 0].sum(axis=0)
        group_boards = group_cube[:, [group_seats.index(s) for s in shared], 0].sum(axis=0)
        chosen_seats = [seat for seat, own, group in zip(shared, own_boards, group_boards,
                                                         strict=True)
                        if own >= minimum and group >= minimum]
        if len(chosen_seats) < 2:
            continue
        own_means, own_cov, own_hands, units = _seat_side(
            cube, np.array([seats.index(s) for s in chosen_seats]))
        group_means, group_cov, _, _ = _seat_side(
            group_cube, np.array([group_seats.index(s) for s in chosen_seats]))
        contrasts = len(chosen_seats) - 1
        if units - contrasts < 2:
            continue
        covariance = own_cov + group_cov
        variances = np.diag(covariance)
        if not (variances > 0).all():
            continue
        differences = own_means - group_means
        matrix = np.hstack([np.eye(contrasts), -np.ones((contrasts, 1))])
        contrast = matrix @ differences
        wald = float(contrast @ np.linalg.pinv(matrix @ covariance @ matrix.T) @ contrast)
        statistic += wald * (units - contrasts) / (units - 1)  # Hotelling's T² on the blocks
        df += contrasts
        within.append(units - contrasts)
        weights = 1 / variances
        centre = float(weights @ differences / weights.sum())
        for position, difference, hands in zip(chosen_seats, differences, own_hands,
                                               strict=True):
            where = position_label(count, position, False)
            lines.append(f"{variant}, {count} players, {where}: {difference - centre:+.2f} "
                         f"points per hand ({int(hands):,} hands)")
    base = dict(key="seats", topic="Seats", title="Results by seat", unit="points",
                sample_unit="seats with enough hands", minimum=2, reference_label=context.label,
                basis="each seat's difference to the group's same seat, beyond the player's "
                      "own average difference", higher_is_better=None, points_per_100=None,
                cause=None)
    if df == 0:
        return Finding(**base, shown=False, player=Estimate(None, None, None, None, 0),
                       reference=None, difference=None, z=None, p_value=None,
                       verdict="too few to judge",
                       confidence=(f"Too few to judge: no variant and table size has two seats "
                                   f"with {minimum:,} hands of the player and of the group."))
    return Finding(**base, shown=True, player=Estimate(None, None, None, None, df + len(within)),
                   reference=None, difference=None, z=statistic,
                   p_value=f_p(statistic, df, min(within)),
                   verdict="", confidence="",
                   note=("Against the group's same seat, beyond the player's own average: "
                         + "; ".join(lines) + "."))


# --- head-to-head --------------------------------------------------------------------------------


def _head_to_head(data: ReportData, group: ReferenceGroup, names: Sequence[str],
                  context: _Context) -> list[Finding]:
    """Against each regular opponent: the player's points per hand together against what the
    group's players score against the same opponent, within variant and table size (weighted
    by the player's hands with him), errors clustered by session - and one test over them.

    Each opponent's difference is shown with its interval (never a finding of its own: a player
    better than the group is better against most opponents, and that is the causes' business).
    The test asks whether the player does *differently against some opponents* than against the
    others: Cochran's Q of the opponents' differences around their weighted mean, ``opponents -
    1`` degrees of freedom (the differences share the player's boards, so treating them as
    independent errs on the careful side).
    """
    settings = context.settings
    pairs = data.pair_totals
    if pairs.is_empty():
        return []
    names = list(names)
    mine = (pairs.filter(pl.col("player").is_in(names) & ~pl.col("opponent").is_in(names))
            .group_by("opponent").agg(pl.col("hands").sum())
            .sort(["hands", "opponent"], descending=[True, False]))
    regular = mine.filter(pl.col("hands") >= settings.min_sample).head(settings.max_opponents)
    sessions = data.pair_sessions
    members = member_rows(sessions, group) if not sessions.is_empty() else sessions
    left_out = set(group.left_out_names)
    findings = []
    differences: list[tuple[str, Test]] = []
    points, hands, squares = pl.col("points"), pl.col("hands"), pl.col("points_sq")
    for opponent in regular["opponent"].to_list():
        own = components.stratum_sums(
            sessions.filter(pl.col("player").is_in(names) & (pl.col("opponent") == opponent)),
            points, hands, squares)
        theirs = components.stratum_sums(
            members.filter((pl.col("opponent") == opponent) & (pl.col("player") != opponent)),
            points, hands, squares)
        shared = [s for s in sorted(own) if s in theirs]
        together = int(sum(s.totals[1] for s in own.values()))
        compared = int(sum(own[s].totals[1] for s in shared))
        group_hands = int(sum(theirs[s].totals[1] for s in shared))
        counted = ("every hand together counts, for the player and for the group's players"
                   + (f" ({opponent} is left out of the group as an outlier, but hands against "
                      "him still count here)" if opponent in left_out else ""))
        note = (f"{compared:,} of the player's {together:,} hands against {opponent} are "
                f"compared, within variant and table size, with {group_hands:,} hands of "
                f"{context.label} against {opponent}; {counted}.")
        base = dict(key=f"head_to_head.{opponent}", topic="Head-to-head",
                    title=f"Against {opponent}", unit="points",
                    sample_unit=f"hands against {opponent}", minimum=settings.min_sample,
                    reference_label=context.label, higher_is_better=True,
                    basis="points per hand together against the group's, within variant and "
                          "table size", points_per_100=None, cause=None, note=note)
        if compared < settings.min_sample or group_hands < settings.min_sample:
            findings.append(Finding(
                **base, shown=False, player=Estimate(None, None, None, None, compared),
                reference=None, difference=None, z=None, p_value=None,
                verdict="too few to judge",
                confidence=(f"Too few to judge: of the player's {together:,} hands against "
                            f"{opponent}, {compared:,} share a variant and table size with the "
                            f"group's ({group_hands:,} hands there), at least "
                            f"{settings.min_sample:,} each needed.")))
            continue
        test = ratio_contrast([RatioCell(own[s], theirs[s], float(own[s].totals[1]))
                               for s in shared])
        player = components.pooled([own[s] for s in shared])
        total = sum(own[s].totals[1] for s in shared)
        reference = float(sum(own[s].totals[1] / total * theirs[s].totals[0] / theirs[s].totals[1]
                              for s in shared))
        assert test is not None and player is not None
        differences.append((opponent, test))
        findings.append(Finding(
            **base, shown=True,
            player=Estimate(player.value, player.low, player.high, player.se, compared),
            reference=Estimate(reference, None, None, None, group_hands),
            difference=test.value, z=None, p_value=None, verdict="component",
            confidence=(f"{test.value:+.2f} points per hand against {context.label}'s result "
                        f"against {opponent} (95 %: {test.low:+.2f} to {test.high:+.2f}); part "
                        "of the test over the regular opponents."),
            difference_low=test.low, difference_high=test.high, reference_sample=group_hands))
    return [*findings, _opponents_test(differences, context)] if findings else []


def _opponents_test(differences: Sequence[tuple[str, Test]], context: _Context) -> Finding:
    """One test over the regular opponents: does the player's difference to the group depend on
    the opponent, beyond its average? Cochran's Q against an F distribution whose second
    degrees of freedom are the fewest sessions behind any opponent's difference (its weights are
    estimated: with the chi-square alone the test called 6.5 % of identical bots' reports at
    5 %)."""
    base = dict(key="head_to_head", topic="Head-to-head", title="Against the regular opponents",
                unit="points", sample_unit="regular opponents", minimum=2,
                reference_label=context.label, higher_is_better=None, points_per_100=None,
                cause=None, basis="each opponent's difference to the group, beyond the player's "
                                  "average difference over them")
    usable = [(name, test) for name, test in differences if test.se > 0]
    if len(usable) < 2:
        return Finding(**base, shown=False, player=Estimate(None, None, None, None, len(usable)),
                       reference=None, difference=None, z=None, p_value=None,
                       verdict="too few to judge",
                       confidence=(f"Too few to judge: regular opponents to compare: "
                                   f"{len(usable)}, at least 2 needed."))
    weights = [1 / (test.se * test.se) for _, test in usable]
    centre = sum(w * t.value for w, (_, t) in zip(weights, usable, strict=True)) / sum(weights)
    statistic = sum(w * (t.value - centre) ** 2
                    for w, (_, t) in zip(weights, usable, strict=True))
    note = ("Beyond the player's average difference to the group over these opponents "
            f"({centre:+.2f} points per hand): " + "; ".join(
                f"against {name} {test.value - centre:+.2f}" for name, test in usable) + ".")
    within = [test.df for _, test in usable if test.df is not None]
    return Finding(**base, shown=True, player=Estimate(None, None, None, None, len(usable)),
                   reference=None, difference=None, z=statistic,
                   p_value=f_p(statistic, len(usable) - 1, min(within) if within else None),
                   verdict="", confidence="", note=note)


# --- the correction ----------------------------------------------------------------------------


def _p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _q_text(q: float) -> str:
    return "q < 0.001" if q < 0.001 else f"q = {q:.3f}"


def _finding_words(finding: Finding, clear: bool) -> tuple[str, str]:
    """(verdict, what it says) of a tested finding."""
    difference = finding.difference or 0.0
    if finding.topic == "Seats":
        return ("seats differ" if clear else "not clear",
                "the player's results depend on the seat differently from the group's"
                if clear else "no clear difference between the seats")
    if finding.topic == "Head-to-head":
        return ("opponents differ" if clear else "not clear",
                "the player's results against some regular opponents differ from the others, "
                "compared with the group's" if clear else
                "no clear difference between the regular opponents")
    better = finding.higher_is_better
    good = None if better is None or difference == 0 else (difference > 0) == better
    if finding.topic == "Trend":
        direction = "no change" if difference == 0 else ("rising" if difference > 0 else
                                                         "falling")
        verdict = {True: "improving", False: "getting worse"}.get(good, "changing")  # type: ignore[arg-type]
        return (verdict if clear else "not clear", direction)
    direction = ("the same" if difference == 0 else
                 "higher than before" if difference > 0 else "lower than before")
    verdict = {True: "improved", False: "got worse"}.get(good, "changed")  # type: ignore[arg-type]
    return (verdict if clear else "not clear", direction)


def _settle(tested: list[Finding], causes: list[Cause], chasing: Test | None,
            settings: ReportSettings, label: str
            ) -> tuple[list[Finding], list[Cause], float | None, list[TestLine]]:
    """One Benjamini-Hochberg correction over every test: causes, chasing, tested findings."""
    p_values: list[float | None] = [c.p_value for c in causes]
    p_values.append(None if chasing is None else chasing.p_value)
    p_values += [f.p_value for f in tested]
    q_values = benjamini_hochberg(p_values)
    count = sum(p is not None for p in p_values)
    alpha = settings.fdr
    family = f"over {count} test{'s' if count != 1 else ''} at a false-discovery rate of " \
             f"{alpha * 100:g} %"
    lines: list[TestLine] = []
    settled_causes = []
    for cause, q in zip(causes, q_values[:len(causes)], strict=True):
        if cause.p_value is None or q is None:
            settled_causes.append(replace(cause, verdict="no variation",
                                          confidence="No variation: nothing to test."))
            continue
        clear = q <= alpha
        direction = "a gain" if cause.points_per_100 > 0 else "a cost"
        stats = f"{_p_text(cause.p_value)}, {_q_text(q)} {family}"
        verdict = ("clear gain" if cause.points_per_100 > 0 else "clear cost") if clear \
            else "not clear"
        confidence = (f"{'Clear' if clear else 'Not clear'}: {direction} against {label} "
                      f"({stats}).")
        settled_causes.append(replace(cause, q_value=q, survives=clear, verdict=verdict,
                                      confidence=confidence))
        lines.append(TestLine(f"cause.{cause.key}", "cause", cause.title, cause.p_value, q,
                              clear))
    chasing_q = q_values[len(causes)]
    if chasing is not None and chasing.p_value is not None:
        lines.append(TestLine("chasing", "chasing", "Does chasing Fantasyland pay? (fouls and "
                              "Fantasyland together)", chasing.p_value, chasing_q,
                              chasing_q is not None and chasing_q <= alpha))
    settled = []
    for finding, q in zip(tested, q_values[len(causes) + 1:], strict=True):
        if finding.p_value is None or q is None:
            settled.append(finding if finding.verdict else replace(
                finding, verdict="no variation", confidence="No variation: nothing to test."))
            continue
        clear = q <= alpha
        verdict, words = _finding_words(finding, clear)
        stats = f"{_p_text(finding.p_value)}, {_q_text(q)} {family}"
        confidence = f"{'Clear' if clear else 'Not clear'}: {words} ({stats})."
        settled.append(replace(finding, q_value=q, survives=clear, verdict=verdict,
                               confidence=confidence))
        lines.append(TestLine(finding.key, finding.topic.lower(), finding.title,
                              finding.p_value, q, clear))
    return settled, settled_causes, chasing_q, lines


def _causes(overall: balance.Combined, by_variant: dict[str, balance.Combined],
            label: str) -> list[Cause]:
    causes = []
    for index, key in enumerate(balance.CAUSES):
        vector = [0.0] * 4
        vector[index] = 1.0
        test = overall.test(vector)
        shares = []
        for variant, combined in by_variant.items():
            part = combined.test(vector)
            shares.append(CauseShare(variant, combined.hands, 100 * part.value, 100 * part.low,
                                     100 * part.high))
        causes.append(Cause(
            key=key, title=balance.CAUSE_TITLES[key], scope=balance.CAUSE_SCOPE[key],
            reference_label=label, points_per_100=100 * test.value, low=100 * test.low,
            high=100 * test.high, se=100 * test.se, z=test.t, p_value=test.p_value,
            q_value=None, survives=False, verdict="", confidence="", by_variant=tuple(shares),
            evidence=(), df=test.df))
    return causes


def _chasing_answer(test: Test, q: float | None, rate: Finding, settings: ReportSettings,
                    label: str) -> ChasingAnswer:
    """Does chasing Fantasyland pay? The player's chase rate against the group's (both ways),
    and what fouls and Fantasyland together come to."""
    value = _per_100_test(test)
    clear = q is not None and q <= settings.fdr
    direction = ""
    if rate.verdict == "component" and rate.difference is not None:
        assert rate.difference_low is not None and rate.difference_high is not None
        direction = ("more" if rate.difference_low > 0 else
                     "less" if rate.difference_high < 0 else "about as often")
        how = (f"more often than {label}" if direction == "more" else
               f"less often than {label}" if direction == "less" else
               f"about as often as {label}")
        opening = (f"You chase Fantasyland in {rate.player.value * 100:.1f} % of your "  # type: ignore[operator]
                   f"{rate.player.sample:,} hands outside it, {label} in "
                   f"{rate.reference.value * 100:.1f} % in your mix of games "  # type: ignore[union-attr]
                   f"({rate.difference * 100:+.1f} percentage points, 95 %: "
                   f"{rate.difference_low * 100:+.1f} to {rate.difference_high * 100:+.1f}): "
                   f"{how}. ")
    else:
        opening = f"How often you chase Fantasyland: {rate.confidence} "
    net = (f"fouls and Fantasyland together come to {value.value:+.1f} points per 100 hands "
           f"against {label} (95 %: {value.low:+.1f} to {value.high:+.1f}")
    stats = "" if test.p_value is None or q is None else \
        f"; {_p_text(test.p_value)}, {_q_text(q)}"
    if test.p_value is None:
        answer = opening + "Not tested: no variation."
    elif not clear:
        answer = opening + f"Not clear whether that pays: {net}{stats})."
    else:
        pays = value.value > 0
        way = {"more": "Chasing more than the group", "less": "Chasing less than the group",
               "about as often": "Chasing as you do"}.get(direction, "Chasing as you do")
        answer = opening + f"{way} {'pays' if pays else 'costs'}: {net}{stats})."
    player_rate = rate.player.value if rate.verdict == "component" else None
    group_rate = rate.reference.value if rate.reference is not None else None
    return ChasingAnswer(value.value, value.low, value.high, test.p_value, q, clear, answer,
                         player_rate=player_rate, group_rate=group_rate,
                         rate_low=rate.difference_low, rate_high=rate.difference_high,
                         direction=direction, hands=rate.player.sample)


# --- small helpers --------------------------------------------------------------------------


def _per_100(value: float | None) -> float | None:
    return None if value is None else 100.0 * value


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


def _state_mean(rows: pl.DataFrame) -> Mean:
    """Boards' values as a mean (from report_state_totals rows)."""
    if rows.is_empty():
        return Mean(0, 0.0, 0.0)
    return Mean(int(rows["boards"].sum()), float(rows["value"].sum()),
                float(rows["value_sq"].sum()))


def _per_player_means(states: pl.DataFrame) -> dict[str, Mean]:
    if states.is_empty():
        return {}
    summed = states.group_by("player", maintain_order=True).agg(pl.col("boards").sum(), pl.col("value").sum(),
                                           pl.col("value_sq").sum())
    return {row["player"]: Mean(int(row["boards"]), float(row["value"]), float(row["value_sq"]))
            for row in summed.iter_rows(named=True)}


def _when(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return str(value)

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
                    context: _Context) -> list[Finding]:
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
                                    verdict="too few to judge", confidence=reason,
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
                                    verdict="too few to judge",
                                    confidence="Too few to judge: too few sessions within one "
                                               "variant and table size to fit a trend.",
                                    points_per_100=None))
            continue
        change = fit.estimate * (count - 1)
        points = change if key == "trend.points" else None
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


def _change_findings(hands: pl.DataFrame, change_date: Any,
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
                                    verdict="too few to judge",
                                    confidence=(f"Too few to judge: {earlier:,} hands before "
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
                                    verdict="too few to judge",
                                    confidence="Too few to judge: no variant and table size was "
                                               "played both before and after the date.",
                                    points_per_100=None))
            continue
        points = fit.estimate if key == "change.points" else None
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


def _ranked(causes: Sequence[Cause]) -> tuple[Cause, ...]:
    """Most costly first, then the gains, largest first (ties by key)."""
    return tuple(sorted(causes, key=lambda c: (c.points_per_100, c.key)))

# --- the balance sheets --------------------------------------------------------------------------


def _rate_lines(variant: str | None, player: components.Prepared,
                reference: components.Prepared) -> list[BalanceLine]:
    """The sheet's rates per 100 hands: the same figures as the components (every board)."""
    lines = []
    for component in components.sheet_components(variant):
        worked = components.compare(component, player, reference)
        lines.append(BalanceLine(
            component.key.removeprefix("sheet."), component.title, "per_100",
            None if worked.player is None else 100 * worked.player.value,
            None if worked.reference is None else 100 * worked.reference))
    return lines


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


POINT_LINES: tuple[tuple[str, str, Callable[[balance.Side], float | None]], ...] = (
    ("foul_cost", "What a foul costs against a legal board (points)",
     _over_standing(balance.FOUL)),
    ("fantasyland_worth", "What a Fantasyland hand is worth over a legal board (points)",
     _over_standing(balance.FANTASYLAND)),
    ("fantasyland_points", "Points per Fantasyland hand", _mean(balance.FANTASYLAND)),
    ("royalties", "Net royalty points per legal board", _mean(balance.STANDING, royalty=True)),
    ("rows", "Rows and scoops per legal board (points)", _mean(balance.STANDING, rest=True)),
    ("points", "Points per hand", lambda side: balance.per_hand(side.totals)),
)
"""The sheet's lines in points: boards on the results basis (pairings that count)."""


def _sheet(variant: str, combined: balance.Combined, label: str, player: components.Prepared,
           reference: components.Prepared) -> BalanceSheet:
    lines = tuple(_rate_lines(None if variant == "all" else variant, player, reference)) + tuple(
        BalanceLine(key, text, "points", _side_figure(function)(combined, True),
                    _side_figure(function)(combined, False))
        for key, text, function in POINT_LINES)
    net = combined.test([1, 1, 1, 1])
    chasing = combined.test([1, 1, 0, 0])
    player_value = combined.side_mean(balance.per_hand, player=True)
    reference_value = combined.side_mean(balance.per_hand, player=False)
    return BalanceSheet(
        variant=variant, hands=combined.hands,
        reference_hands=sum(s.reference_boards for s in combined.strata),
        reference_label=label, lines=lines,
        causes=tuple((key, 100 * float(value)) for key, value in
                     zip(balance.CAUSES, combined.terms, strict=True)),
        net_per_100=100 * net.value, net_low=100 * net.low, net_high=100 * net.high,
        player_per_hand=player_value or 0.0, reference_per_hand=reference_value or 0.0,
        chasing_per_100=100 * chasing.value, chasing_low=100 * chasing.low,
        chasing_high=100 * chasing.high,
    )


# --- headline -----------------------------------------------------------------------------------


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
        others = [m for _, m in sorted(_per_player_means(
            members.filter(pl.col("variant") == variant)).items())
            if m.n >= settings.percentile_min_hands and m.value is not None]
        percentile, percentile_text = None, ""
        if mine["hands"] < settings.percentile_min_hands:
            note = (f"no percentile: {int(mine['hands']):,} hands, at least "
                    f"{settings.percentile_min_hands:,} needed")
        else:
            percentile, note = standing_in(own, others)
            if percentile is not None:
                percentile_text = f"{ordinal(round(percentile))} percentile"
        lines.append(VariantLine(
            variant=variant, hands=int(mine["hands"]), sessions=sessions,
            points=int(mine["points"]), points_per_hand=mean.value or 0.0, points_se=mean.se,
            percentile=percentile, players_ranked=len(others), percentile_note=note,
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


# --- the report -------------------------------------------------------------------------------


def build_report(data: ReportData, request: ReportRequest,
                 settings: ReportSettings = DEFAULT_SETTINGS) -> Report:
    """Turn the gathered frames into the report (pure)."""
    names = request.names
    group = data.reference
    label = group.label
    player_rows = data.player_totals.filter(pl.col("player").is_in(list(names)))
    player = _sums(player_rows)
    total = int(data.hands.height)
    context = _Context(label, total, settings)
    members = member_rows(data.reference_states, group)
    member_sessions = member_rows(data.reference_sessions, group)

    normal = sum(t["normal_hands"] for t in player.values())
    with_streets = sum(t["normal_with_streets"] for t in player.values())
    notes = []
    if with_streets < normal:
        notes.append(f"{int(normal - with_streets):,} of the player's {int(normal):,} hands "
                     "outside Fantasyland have no street record: chasing Fantasyland is judged "
                     "from their final boards only.")
    undated = int(data.hands["started_at"].null_count())
    if undated:
        notes.append(f"{undated:,} hands have no start time: they belong to no session (each "
                     "counts as a session of its own) and are left out of the trend.")
    notes += [f"Reference group: {note}." for note in group.notes]
    if group.player_is_outlier:
        notes.append(f"The player's own results sit {group.player_robust_z:+.1f} times the "
                     "field's typical spread from its median: by the same rule the player "
                     "would be left out (so all the player's pairings count, and there is no "
                     f"strength shrunk toward {label}).")
    sessions = _sessions(data.hands)
    if group.left_out and not group.player_is_outlier:
        basis = _state_mean(data.player_states)
        notes.append(f"Against the players not left out ({', '.join(group.left_out_names)} "
                     f"left out), the player's results are {basis.value or 0.0:+.2f} points per "
                     f"hand ({data.hands.height:,} hands in all: "
                     f"{int(data.hands['points'].sum()) / max(data.hands.height, 1):+.2f}); the "
                     "strength, the causes and the balance sheets use those.")

    strata = balance.strata_balances(data.player_states, members,
                                     session_states(data.player_sessions),
                                     session_states(member_sessions))
    overall = balance.combine(strata)
    variants = _variants_of(player)
    by_variant = {v: c for v in variants
                  if (c := balance.combine([s for s in strata if s.variant == v])) is not None}
    compared = sum(s.player_boards for s in strata)
    if compared < total:
        notes.append(f"{total - compared:,} of the player's hands have nothing to compare with "
                     f"in {label} (no hands of the group at that variant and table size, or no "
                     "opponent whose pairings count): the causes and the balance sheets leave "
                     "them out.")

    cause_titles = {key: balance.CAUSE_TITLES[key] for key in balance.CAUSES}
    every = components.components(variants) + components.sheet_components(None)
    mine = components.prepare(data.player_sessions, every)
    theirs = components.prepare(member_sessions, every)
    findings = [components.component_finding(component, mine, theirs, label,
                                              cause_titles[component.cause], settings)
                for component in components.components(variants)]
    tested: list[Finding] = [seat_finding(data.player_seat_blocks,
                                           member_rows(data.reference_seat_blocks, group),
                                           context)]
    tested += _head_to_head(data, group, names, context)
    tested += _trend_findings(data.hands, sessions, context)
    tested += _change_findings(data.hands, request.change_date, context)
    causes = _causes(overall, by_variant, label) if overall is not None else []
    chasing_test = overall.test([1, 1, 0, 0]) if overall is not None else None
    tested, causes, chasing_q, family = _settle(tested, causes, chasing_test, settings, label)
    causes = [replace(c, evidence=tuple(f.key for f in findings
                                        if f.cause == c.key and f.verdict == "component"))
              for c in causes]
    rate = next(f for f in findings if f.key == "fouls.chase_frequency")
    chasing = (None if chasing_test is None else
               _chasing_answer(chasing_test, chasing_q, rate, settings, label))
    net = None if overall is None else _per_100_test(overall.test([1, 1, 1, 1]))
    items: list[SummaryItem] = with_chasing(cause_items(causes, net, label), chasing)
    items += finding_items(tested)
    exploratory = tuple(line.key for line in family if not line.clear)
    sheets = [_sheet(v, c, label, mine, theirs) for v, c in by_variant.items()]
    if overall is not None and len(by_variant) > 1:
        sheets.append(_sheet("all", overall, label, mine, theirs))
    own_strength = strength(_state_mean(data.player_states), _per_player_means(members),
                            group.player_is_outlier, settings.min_sample, label)

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
        strength=own_strength,
        causes=_ranked(causes), balance=tuple(sheets), chasing=chasing,
        findings=tuple(findings + tested), summary=tuple(items), family=tuple(family),
        exploratory=exploratory, tests=len(family),
        notable=tuple(_notable(data, settings)), sessions=tuple(sessions),
        cumulative=_cumulative(data.hands), rolling=_rolling(data.hands, settings),
        definitions=DEFINITIONS, data_notes=tuple(notes),
    )

