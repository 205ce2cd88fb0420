"""The balance sheet: the difference to the reference group, split into causes that never overlap.

Each board is in one *state*: played in Fantasyland, fouled (outside it), or standing (a legal
board outside Fantasyland). A side's points per hand (the player's, or the reference group's) is
``sum over states of share × mean value``. The difference between the two sides is split exactly
(Kitagawa's decomposition, with the averages of both sides as weights)::

    f_p·m_p − f_r·m_r = (f_p − f_r)·(m_p + m_r)/2 + (f_p + f_r)/2·(m_p − m_r)

per state; because the shares of both sides add up to one, the first part is measured against a
standing board. That gives four causes, which add up to the difference to the last digit:

* **fouls** — the extra fouls × what a foul costs against a standing board (it covers the
  scoops suffered and the rows lost on fouled boards), plus what the player's fouls cost beyond
  the group's;
* **Fantasyland** — the extra Fantasyland hands (entries and stays) × what a Fantasyland hand
  is worth over a standing board, plus the difference in points per Fantasyland hand;
* **royalties** — the difference in net royalty points on standing boards;
* **rows and scoops** — the difference in the rest of a standing board's result.

Comparisons are made within a stratum (variant and table size) and weighted by the player's own
hands, so a different mix of games never passes for a difference in play. Standard errors come
from the delta method, with boards as independent units (numerical derivatives of the exact
formulas, exact second moments from the database), and again with sessions as units when the
sessions' sums are given (:mod:`pipeline.report.inference`: each side counts the larger of the
two; tests use Student's t on the sessions' degrees of freedom). The player's side is never
counted as less variable than the group's hands would be: its variance is at least the one his
figure would have if his hands had the group's covariance per hand (:func:`like_group_covariance`),
so a player with few sessions, or whose hands happened to spread little, is not judged on an
error smaller than the group's own play gives.

Pure: works on the frames of :func:`pipeline.read.report.report_state_totals`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from pipeline.report.inference import Test, clustered_covariance, test_of
from pipeline.report.stats import Z_95, two_sided_p

STATES = ("fantasyland", "foul", "standing")
FANTASYLAND, FOUL, STANDING = 0, 1, 2
CAUSES = ("fouls", "fantasyland", "royalties", "rows")
CAUSE_TITLES = {
    "fouls": "Fouls",
    "fantasyland": "Fantasyland",
    "royalties": "Royalties on legal boards",
    "rows": "Rows and scoops on legal boards",
}
CAUSE_SCOPE = {
    "fouls": "extra fouls × what a foul costs against a legal board, plus what a fouled board "
             "cost beyond the group's; covers the scoops suffered and the rows lost when fouling",
    "fantasyland": "extra Fantasyland hands (entries and stays) × what a Fantasyland hand is "
                   "worth over a legal board, plus the difference in points per Fantasyland "
                   "hand",
    "royalties": "difference in net royalty points (collected minus paid) on legal boards "
                 "outside Fantasyland",
    "rows": "difference in the rest of a legal board's result: rows won and lost, scoops",
}
STRATUM = ("variant", "player_count")


@dataclass(frozen=True, slots=True)
class Side:
    """One side (player or group) in one stratum: board counts and sums per state.

    ``totals``: for each state the boards, the sum of values and the sum of royalty parts (9
    numbers); ``moments``: their sums of products over boards (9 × 9; states never mix);
    ``boards``; ``fantasyland_next``: boards earning or keeping Fantasyland, per state.
    """

    boards: int
    totals: np.ndarray
    moments: np.ndarray
    fantasyland_next: np.ndarray
    clustered: np.ndarray | None = None
    clusters: int = 0

    @property
    def covariance(self) -> np.ndarray:
        """The covariance of the totals (boards as independent units)."""
        if self.boards <= 0:
            return np.zeros((9, 9))
        return self.moments - np.outer(self.totals, self.totals) / self.boards


def side_of(rows: pl.DataFrame) -> Side:
    """A :class:`Side` from rows of :func:`report_state_totals` (one stratum, any players)."""
    totals = np.zeros(9)
    moments = np.zeros((9, 9))
    following = np.zeros(3)
    boards = 0
    if not rows.is_empty():
        summed = rows.group_by("state").agg(
            pl.col("boards").sum(), pl.col("value").sum(), pl.col("value_sq").sum(),
            pl.col("royalty").sum(), pl.col("royalty_sq").sum(),
            pl.col("value_royalty").sum(), pl.col("fantasyland_next").sum())
        for row in summed.iter_rows(named=True):
            k = STATES.index(row["state"])
            n, v, u = float(row["boards"]), float(row["value"]), float(row["royalty"])
            base = 3 * k
            totals[base:base + 3] = (n, v, u)
            moments[base:base + 3, base:base + 3] = (
                (n, v, u),
                (v, float(row["value_sq"]), float(row["value_royalty"])),
                (u, float(row["value_royalty"]), float(row["royalty_sq"])),
            )
            following[k] = float(row["fantasyland_next"])
            boards += int(row["boards"])
    return Side(boards, totals, moments, following)


def with_sessions(side: Side, sessions: pl.DataFrame) -> Side:
    """``side`` with the covariance of its totals clustered by session, from the sessions' sums
    (rows of one stratum: session, state, boards, value, royalty)."""
    if sessions.is_empty():
        return Side(side.boards, side.totals, side.moments, side.fantasyland_next,
                    np.zeros((9, 9)), 0)
    names = sorted(set(sessions["session"].to_list()))
    index = {name: row for row, name in enumerate(names)}
    per_session = np.zeros((len(names), 9))
    for session, state, boards, value, royalty in sessions.select(
            "session", "state", "boards", "value", "royalty").iter_rows():
        base = 3 * STATES.index(state)
        per_session[index[session], base:base + 3] += (boards, value, royalty)
    return Side(side.boards, side.totals, side.moments, side.fantasyland_next,
                clustered_covariance(per_session), len(names))


def like_group_covariance(player: Side, reference: Side) -> np.ndarray:
    """The covariance the player's totals would have if his hands had the group's covariance
    per hand: the group's covariance of its totals (boards as units) per board, times the
    player's boards. The floor of the player's side in :meth:`Combined.test` (the causes' slopes
    taken at the group's mix over the player's boards: the variance of his figure if he played
    like the group, which is what luck gives when nothing differs): a player whose own hands
    (or sessions) happen to spread less than the group's is still judged on the spread the
    group's play gives over as many hands; zeros when either side has no board."""
    if player.boards <= 0 or reference.boards <= 0:
        return np.zeros((9, 9))
    return reference.covariance * (player.boards / reference.boards)


def _parts(totals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    counts, values, royalties = totals[0::3], totals[1::3], totals[2::3]
    boards = counts.sum()
    shares = counts / boards if boards > 0 else np.zeros(3)
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.where(counts > 0, values / np.where(counts > 0, counts, 1), np.nan)
        royalty = np.where(counts > 0, royalties / np.where(counts > 0, counts, 1), np.nan)
    return shares, means, royalty


def _filled(mine: np.ndarray, theirs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Means where one side has no board in a state take the other side's (its share is 0
    there, so the split stays exact); with neither, 0."""
    mine_filled = np.where(np.isnan(mine), theirs, mine)
    theirs_filled = np.where(np.isnan(theirs), mine, theirs)
    return np.nan_to_num(mine_filled), np.nan_to_num(theirs_filled)


def cause_terms(player: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The four causes (fouls, Fantasyland, royalties, rows) in points per hand, from the two
    sides' totals; they add up to the difference in points per hand exactly."""
    fp, mp, up = _parts(player)
    fr, mr, ur = _parts(reference)
    mp, mr = _filled(mp, mr)
    up, ur = _filled(up, ur)
    mean_m = (mp + mr) / 2
    mean_f = (fp + fr) / 2
    fouls = ((fp[FOUL] - fr[FOUL]) * (mean_m[FOUL] - mean_m[STANDING])
             + mean_f[FOUL] * (mp[FOUL] - mr[FOUL]))
    fantasyland = ((fp[FANTASYLAND] - fr[FANTASYLAND])
                   * (mean_m[FANTASYLAND] - mean_m[STANDING])
                   + mean_f[FANTASYLAND] * (mp[FANTASYLAND] - mr[FANTASYLAND]))
    royalties = mean_f[STANDING] * (up[STANDING] - ur[STANDING])
    rows = mean_f[STANDING] * ((mp[STANDING] - up[STANDING]) - (mr[STANDING] - ur[STANDING]))
    return np.array([fouls, fantasyland, royalties, rows])


def per_hand(totals: np.ndarray) -> float | None:
    """A side's points per hand (mean value over its boards)."""
    boards = totals[0::3].sum()
    return float(totals[1::3].sum() / boards) if boards > 0 else None


def _jacobian(function: Callable[[np.ndarray], np.ndarray], point: np.ndarray,
              covariance: np.ndarray) -> np.ndarray:
    """Central-difference derivatives of ``function`` at ``point`` (columns with no variance
    are left at zero: they cannot move)."""
    base = function(point)
    jacobian = np.zeros((base.size, point.size))
    for j in range(point.size):
        if covariance[j, j] <= 0:
            continue
        step = 1e-6 * max(1.0, abs(point[j]))
        up, down = point.copy(), point.copy()
        up[j] += step
        down[j] -= step
        jacobian[:, j] = (function(up) - function(down)) / (2 * step)
    return jacobian


@dataclass(frozen=True, slots=True)
class StratumBalance:
    """The causes in one stratum, with their covariance, and both sides' figures."""

    variant: str
    player_count: int
    player_boards: int
    reference_boards: int
    terms: np.ndarray
    covariance: np.ndarray
    player: Side
    reference: Side
    parts: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    """The causes' covariance by side and kind: (player independent, player clustered,
    group independent, group clustered); None without the sessions' sums."""
    player_part: np.ndarray | None = None
    """The player's side of ``covariance`` (boards as units)."""
    like_group: np.ndarray | None = None
    """The causes' covariance from the player's side if his hands had the group's covariance
    per hand (:func:`like_group_covariance`): the floor of the player's side in the tests."""


def stratum_balance(variant: str, player_count: int, player: Side,
                    reference: Side) -> StratumBalance:
    """The four causes in a stratum and their covariance (delta method, both sides)."""
    terms = cause_terms(player.totals, reference.totals)
    covariance = np.zeros((4, 4))
    parts: list[np.ndarray] = []
    player_part = np.zeros((4, 4))
    for side, function in ((player, lambda y: cause_terms(y, reference.totals)),
                           (reference, lambda y: cause_terms(player.totals, y))):
        own = side.covariance
        reach = own if side.clustered is None else own + np.diag(np.diag(side.clustered))
        jacobian = _jacobian(function, side.totals, reach)
        covariance += jacobian @ own @ jacobian.T
        parts.append(jacobian @ own @ jacobian.T)
        if side is player:
            player_part = parts[-1]
        if side.clustered is not None:
            parts.append(jacobian @ side.clustered @ jacobian.T)
    # the floor: the player's figure as if his hands were the group's (its mix of states and
    # its covariance per hand, over the player's boards): what luck gives if he plays like them
    like = like_group_covariance(player, reference)
    jacobian = _jacobian(lambda y: cause_terms(y, reference.totals),
                         reference.totals * (player.boards / max(reference.boards, 1)), like)
    floor = jacobian @ like @ jacobian.T
    both = len(parts) == 4
    return StratumBalance(variant, player_count, player.boards, reference.boards, terms,
                          covariance, player, reference,
                          tuple(parts) if both else None,  # type: ignore[arg-type]
                          player_part, floor)


def _in_stratum(rows: pl.DataFrame | None, variant: str, player_count: int) -> pl.DataFrame | None:
    if rows is None or rows.is_empty():
        return rows
    return rows.filter((pl.col("variant") == variant) & (pl.col("player_count") == player_count))


def strata_balances(player_rows: pl.DataFrame, reference_rows: pl.DataFrame,
                    player_sessions: pl.DataFrame | None = None,
                    reference_sessions: pl.DataFrame | None = None) -> list[StratumBalance]:
    """Every stratum where the player has boards and the group has some to compare with.

    With the sessions' sums of both sides (rows: variant, player_count, session, state, boards,
    value, royalty), the causes' errors are also clustered by session.
    """
    if player_rows.is_empty():
        return []
    result = []
    keys = player_rows.select(STRATUM).unique().sort(STRATUM).rows()
    clustered = player_sessions is not None and reference_sessions is not None
    for variant, player_count in keys:
        mine = side_of(_in_stratum(player_rows, variant, player_count))  # type: ignore[arg-type]
        theirs = side_of(_in_stratum(reference_rows, variant, player_count)  # type: ignore[arg-type]
                         if not reference_rows.is_empty() else reference_rows)
        if clustered:
            mine = with_sessions(mine, _in_stratum(  # type: ignore[arg-type]
                player_sessions, variant, player_count))
            theirs = with_sessions(theirs, _in_stratum(  # type: ignore[arg-type]
                reference_sessions, variant, player_count))
        if mine.boards and theirs.boards:
            result.append(stratum_balance(variant, int(player_count), mine, theirs))
    return result


@dataclass(frozen=True, slots=True)
class Combined:
    """Causes combined over strata with the player's hands as weights."""

    hands: int
    terms: np.ndarray
    covariance: np.ndarray
    weights: tuple[float, ...]
    strata: tuple[StratumBalance, ...]

    def test(self, combination: Sequence[float]) -> Test:
        """A combination of the causes (e.g. fouls + Fantasyland) tested against zero.

        With the sessions' sums, each side's variance is the larger of the clustered and the
        independent-boards one and the degrees of freedom are the sessions' (Welch); without
        them, boards are the units (a normal test). The player's side is never taken below
        "like the group": the variance his figure would have if his hands had the group's
        covariance per hand (:func:`like_group_covariance`).
        """
        vector = np.asarray(combination, dtype=float)
        value = float(vector @ self.terms)
        like_group = self._spread(vector, lambda s: s.like_group)
        if all(s.parts is not None for s in self.strata):
            variances = []
            for offset in (0, 2):
                independent = self._spread(vector, lambda s, k=offset: s.parts[k])  # type: ignore[index,misc]
                clustered = self._spread(vector, lambda s, k=offset + 1: s.parts[k])  # type: ignore[index,misc]
                variances.append(max(independent, clustered,
                                     like_group if offset == 0 else 0.0, 0.0))
            clusters = [sum(s.player.clusters for s in self.strata),
                        sum(s.reference.clusters for s in self.strata)]
            return test_of(value, variances, clusters)
        player = self._spread(vector, lambda s: s.player_part)
        variance = max(float(vector @ self.covariance @ vector) + max(like_group - player, 0.0),
                       0.0)
        se = math.sqrt(variance)
        z, p = z_and_p(value, se)
        low, high = interval(value, se)
        return Test(value, se, None, z, p if se > 0 else (None if value else 1.0), low, high)

    def _spread(self, vector: np.ndarray,
                part: Callable[[StratumBalance], np.ndarray | None]) -> float:
        """The variance of ``vector`` · causes from one part of the strata's covariance (0 where
        a stratum has none), weighted by the player's hands."""
        total = 0.0
        for weight, stratum in zip(self.weights, self.strata, strict=True):
            matrix = part(stratum)
            if matrix is not None:
                total += weight * weight * float(vector @ matrix @ vector)
        return total

    def estimate(self, combination: Sequence[float]) -> tuple[float, float]:
        """(value, standard error) of a combination of the causes (e.g. fouls + Fantasyland),
        the error as :meth:`test` gives it."""
        result = self.test(combination)
        return result.value, result.se

    def side_mean(self, function: Callable[[np.ndarray], float | None],
                  player: bool) -> float | None:
        """A per-stratum figure of one side, weighted by the player's hands."""
        total = 0.0
        for weight, stratum in zip(self.weights, self.strata, strict=True):
            value = function((stratum.player if player else stratum.reference).totals)
            if value is None:
                return None
            total += weight * value
        return total


def combine(strata: Sequence[StratumBalance]) -> Combined | None:
    """The causes over several strata (None when there are none)."""
    hands = sum(s.player_boards for s in strata)
    if not hands:
        return None
    weights = tuple(s.player_boards / hands for s in strata)
    terms = sum((w * s.terms for w, s in zip(weights, strata, strict=True)), np.zeros(4))
    covariance = sum((w * w * s.covariance for w, s in zip(weights, strata, strict=True)),
                     np.zeros((4, 4)))
    return Combined(hands, terms, covariance, weights, tuple(strata))


# --- figures of one side (for the sheet's lines) ------------------------------------------------


def share_of(state: int) -> Callable[[np.ndarray], float | None]:
    """A side's share of boards in ``state``."""
    def share(totals: np.ndarray) -> float | None:
        boards = totals[0::3].sum()
        return float(totals[3 * state] / boards) if boards > 0 else None
    return share


def mean_of(state: int, royalty: bool = False,
            rest: bool = False) -> Callable[[np.ndarray], float | None]:
    """A side's mean value (or royalty part, or the rest) of its boards in ``state``."""
    def mean(totals: np.ndarray) -> float | None:
        count = totals[3 * state]
        if count <= 0:
            return None
        value = totals[3 * state + 1] / count
        part = totals[3 * state + 2] / count
        return float(part if royalty else value - part if rest else value)
    return mean


def interval(value: float, se: float) -> tuple[float, float]:
    """value ± 1.96 SE."""
    return value - Z_95 * se, value + Z_95 * se


def z_and_p(value: float, se: float) -> tuple[float | None, float | None]:
    """The z statistic and its two-sided p (None without an error estimate)."""
    if se <= 0:
        return None, None
    z = value / se
    return z, two_sided_p(z)
