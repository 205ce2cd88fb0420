"""The coaching report as plain, frozen values, and their one dictionary form.

Every renderer (HTML, Markdown, JSON) starts from :func:`report_dict`, where floats are rounded
once, so the three forms carry the same numbers.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from pipeline.read.scope import Filters
from pipeline.report.reference import FIELD, ReferenceSpec

if TYPE_CHECKING:
    from pipeline.report.grading import DecisionGrading
    from pipeline.report.money import MatchMoney

REPORT_FORMAT_VERSION = 3
"""3: one summary of items (``summary``: one deviation, one item; trade-offs with their net),
the corrected tests listed (``family``), components with an interval for their difference,
chasing compared both ways, errors clustered by session (see docs/coaching-report.md)."""
DECIMALS = 6


@dataclass(frozen=True, slots=True)
class ReportRequest:
    """Whose report, over which hands: a player (plus aliases), inclusive dates, one variant;
    against which reference group; and, for "did I improve?", the date of a change (a lesson,
    a rule change) to compare before and after."""

    player: str
    aliases: tuple[str, ...] = ()
    since: date | None = None
    until: date | None = None
    variant: str | None = None
    reference: ReferenceSpec = FIELD
    change_date: date | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The player's screen names: the player first, then each alias once."""
        names = [self.player]
        for alias in self.aliases:
            if alias not in names:
                names.append(alias)
        return tuple(names)

    def scope_filters(self) -> Filters:
        """The report's scope (dates and variant) as dashboard filters, for every player."""
        return Filters(date_from=self.since, date_to=self.until,
                       variants=(self.variant,) if self.variant else ())


@dataclass(frozen=True, slots=True)
class ReportSettings:
    """Thresholds of the report.

    ``min_sample``: a finding needs at least this many observations (hands, chasing hands,
    Fantasyland hands, pairings, hands against an opponent) from the player, and the reference
    group as many to be compared; also the hands a player needs to be judged by the outlier
    rule. ``min_sessions``: sessions needed for a trend. ``percentile_min_hands``: hands a
    player needs in a variant for a percentile there. ``notable_hands``: hands shown per kind.
    ``max_opponents``: regular opponents shown (the most frequent first). ``fdr``: the
    false-discovery rate of the Benjamini-Hochberg correction over every test of the report.
    ``rolling_window``: hands per rolling window.
    """

    min_sample: int = 30
    min_sessions: int = 5
    percentile_min_hands: int = 100
    notable_hands: int = 3
    max_opponents: int = 8
    fdr: float = 0.05
    rolling_window: int = 200


DEFAULT_SETTINGS = ReportSettings()


@dataclass(frozen=True, slots=True)
class Estimate:
    """One statistic: value, 95 % interval, standard error and sample size."""

    value: float | None
    low: float | None
    high: float | None
    se: float | None
    sample: int


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule with its evidence: the player's statistic against the reference group's.

    ``unit``: ``rate`` (a share of ``sample_unit``), ``points`` (points per hand or per pairing),
    ``royalties`` (royalty points per hand), ``points_slope`` / ``rate_slope`` (change per
    session). ``reference_label``: the group compared with (named on every finding).
    ``points_per_100``: the estimated effect on the player's points per 100 hands (positive a
    gain); these estimates overlap (a foul also loses scoops) and are never added up - the
    causes of :class:`Cause` are the ones that add up. ``p_value`` is the test's own,
    ``q_value`` the Benjamini-Hochberg adjusted one over every test of the report; ``survives``
    when it is at most the report's false-discovery rate. ``verdict``: strength, leak, different,
    improving, getting worse, changed (surviving); exploratory (tested, did not survive); not
    compared; not enough data (``shown`` is False then). ``cause``: the cause of the ranked list
    this finding is evidence for, if any.
    """

    key: str
    topic: str
    title: str
    unit: str
    sample_unit: str
    minimum: int
    shown: bool
    player: Estimate
    reference: Estimate | None
    reference_label: str
    difference: float | None
    z: float | None
    p_value: float | None
    verdict: str
    confidence: str
    points_per_100: float | None
    basis: str
    note: str = ""
    higher_is_better: bool | None = None
    cause: str | None = None
    q_value: float | None = None
    survives: bool = False
    difference_low: float | None = None
    difference_high: float | None = None
    reference_sample: int | None = None


@dataclass(frozen=True, slots=True)
class CauseShare:
    """One variant's part of a cause, in points per 100 of the player's hands in that variant."""

    variant: str
    hands: int
    points_per_100: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class Cause:
    """One root cause of the ranked list, in points per 100 hands against the reference group.

    The causes never overlap and add up to the difference in points per 100 hands (see
    :mod:`pipeline.report.balance`). ``scope`` says what the cause covers; ``by_variant`` its
    part in each variant; ``evidence`` the keys of the findings that bear on it.
    """

    key: str
    title: str
    scope: str
    reference_label: str
    points_per_100: float
    low: float
    high: float
    se: float
    z: float | None
    p_value: float | None
    q_value: float | None
    survives: bool
    verdict: str
    confidence: str
    by_variant: tuple[CauseShare, ...]
    evidence: tuple[str, ...]
    df: float | None = None


@dataclass(frozen=True, slots=True)
class BalanceLine:
    """One line of a balance sheet: the player's figure, the group's, and the difference.

    ``unit``: ``per_100`` (events per 100 hands, or per 100 hands outside / in Fantasyland) or
    ``points`` (points per hand, per foul, per Fantasyland hand...).
    """

    key: str
    label: str
    unit: str
    player: float | None
    reference: float | None


@dataclass(frozen=True, slots=True)
class BalanceSheet:
    """The Fantasyland balance sheet of one variant (or ``all`` variants), per 100 hands against
    the reference group: the extra fouls and their cost, the extra Fantasyland and its worth,
    the royalty difference, the rest of the standing boards' results, and the net - which is
    the difference in points per 100 hands to the last digit."""

    variant: str
    hands: int
    reference_hands: int
    reference_label: str
    lines: tuple[BalanceLine, ...]
    causes: tuple[tuple[str, float], ...]
    net_per_100: float
    net_low: float
    net_high: float
    player_per_hand: float
    reference_per_hand: float
    chasing_per_100: float
    chasing_low: float
    chasing_high: float


@dataclass(frozen=True, slots=True)
class ChasingAnswer:
    """Does chasing Fantasyland pay? How often the player chases against the group (both
    ways: more or less), and what fouls and Fantasyland together come to.

    ``direction``: ``more``, ``less`` or ``about as often`` (the rate difference's 95 %
    interval excludes no difference, or it does not); rates are shares of the hands outside
    Fantasyland, the difference in percentage points.
    """

    points_per_100: float
    low: float
    high: float
    p_value: float | None
    q_value: float | None
    survives: bool
    answer: str
    player_rate: float | None = None
    group_rate: float | None = None
    rate_low: float | None = None
    rate_high: float | None = None
    direction: str = ""
    hands: int = 0


@dataclass(frozen=True, slots=True)
class TestLine:
    """One test of the report's false-discovery correction: what it asks, its p- and q-value,
    and whether it is clear."""

    key: str
    kind: str
    title: str
    p_value: float | None
    q_value: float | None
    clear: bool


@dataclass(frozen=True, slots=True)
class SummaryItem:
    """One item of the summary: one deviation of the player from the group (or over time).

    ``kind``: ``leak`` or ``strength`` (one clear cause), ``trade-off`` (causes that offset each
    other: what costs, what gains, and the net), ``chasing`` (the chasing answer on its own),
    ``seats``, ``head-to-head``, ``over time``. ``leaks`` / ``gains``: the causes that cost /
    gain in it. ``points_per_100`` (and its 95 % interval): the item's net in points per 100
    hands (None when it is not in points). ``tests``: the clear tests behind it. ``advice``:
    what the player can do about it.
    """

    key: str
    kind: str
    title: str
    text: str
    advice: str
    points_per_100: float | None
    low: float | None
    high: float | None
    leaks: tuple[str, ...]
    gains: tuple[str, ...]
    tests: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LeftOutView:
    """A player the outlier rule left out of the group."""

    player: str
    hands: int
    points_per_opponent: float
    robust_z: float


@dataclass(frozen=True, slots=True)
class ReferenceView:
    """The reference group as the report names it."""

    kind: str
    label: str
    description: str
    members: tuple[str, ...]
    left_out: tuple[LeftOutView, ...]
    outlier_rule: str
    player_robust_z: float | None
    player_is_outlier: bool
    basis: str
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StrengthView:
    """The player's points per hand pulled toward the group's mean by how noisy it is."""

    raw: float
    raw_se: float
    value: float | None
    low: float | None
    high: float | None
    weight: float | None
    group_mean: float
    group_spread: float
    group_players: int
    rank: int | None
    ranked: int
    note: str
    separation_p: float | None = None


@dataclass(frozen=True, slots=True)
class RollingView:
    """Rolling windows over the player's hands, raw and with the mix held fixed."""

    window: int
    hand_number: tuple[int, ...]
    foul_raw: tuple[float, ...]
    foul_adjusted: tuple[float, ...]
    points_raw: tuple[float, ...]
    points_adjusted: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class VariantLine:
    """The headline of one variant."""

    variant: str
    hands: int
    sessions: int
    points: int
    points_per_hand: float
    points_se: float | None
    percentile: float | None
    players_ranked: int
    percentile_note: str
    percentile_label: str = ""


@dataclass(frozen=True, slots=True)
class Headline:
    """Who, how much, how well."""

    player: str
    names: tuple[str, ...]
    names_with_hands: tuple[str, ...]
    hands: int
    sessions: int
    undated_hands: int
    first_hand: str | None
    last_hand: str | None
    points: int
    points_per_hand: float
    points_se: float | None
    low: float | None
    high: float | None
    variants: tuple[VariantLine, ...]


@dataclass(frozen=True, slots=True)
class BoardView:
    """One player's board in a notable hand."""

    player: str
    is_player: bool
    position: int
    is_button: bool
    fantasyland: bool
    cards_dealt: int | None
    top: tuple[str, ...]
    middle: tuple[str, ...]
    bottom: tuple[str, ...]
    classes: tuple[str, str, str]
    foul: bool
    royalties: tuple[int, int, int]
    royalty_total: int
    fantasyland_next: bool
    points: int
    foul_reason: str | None = None


@dataclass(frozen=True, slots=True)
class PairingView:
    """How the player settled with one opponent in a notable hand."""

    opponent: str
    rows_won: int
    rows_lost: int
    scoop: int
    royalty_points: int
    points: int
    settled: int


@dataclass(frozen=True, slots=True)
class GradeView:
    """A graded decision (``ofc analyze``) of the player in a notable hand."""

    street: int
    situation: str
    chosen: str
    best: str
    ev_loss: float
    loss_se: float
    mistake: bool


@dataclass(frozen=True, slots=True)
class NotableHand:
    """A hand worth looking at, with every board and the player's scoring breakdown."""

    kind: str
    site: str
    hand_id: str
    table: str | None
    started_at: str | None
    variant: str
    player_count: int
    seat_name: str
    points: int
    reason: str
    boards: tuple[BoardView, ...]
    pairings: tuple[PairingView, ...]
    grades: tuple[GradeView, ...] = ()


@dataclass(frozen=True, slots=True)
class SessionLine:
    """One of the player's sessions, in play order."""

    number: int
    session_id: str
    started_at: str | None
    hands: int
    points: int
    points_per_hand: float
    fouls: int
    foul_rate: float


@dataclass(frozen=True, slots=True)
class Report:
    """The whole coaching report.

    ``causes``: the ranked list (every cause, most costly first); ``summary``: the items of the
    summary, one per deviation (built from the clear tests); ``family``: every test of the
    false-discovery correction; ``exploratory``: the keys of the tests that are not clear (the
    appendix). ``tests``: how many tests the correction covered.
    """

    title: str
    player: str
    aliases: tuple[str, ...]
    since: str | None
    until: str | None
    variant: str | None
    change_date: str | None
    settings: ReportSettings
    reference: ReferenceView
    headline: Headline
    strength: StrengthView | None
    causes: tuple[Cause, ...]
    balance: tuple[BalanceSheet, ...]
    chasing: ChasingAnswer | None
    findings: tuple[Finding, ...]
    summary: tuple[SummaryItem, ...]
    family: tuple[TestLine, ...]
    exploratory: tuple[str, ...]
    tests: int
    notable: tuple[NotableHand, ...]
    sessions: tuple[SessionLine, ...]
    cumulative: tuple[tuple[int, int], ...]
    rolling: RollingView | None
    definitions: tuple[tuple[str, str], ...]
    data_notes: tuple[str, ...] = field(default_factory=tuple)
    grading: DecisionGrading | None = None  # ofc analyze's grades (pipeline.report.grading)
    money: MatchMoney | None = None  # money per match when a stake is set (pipeline.report.money)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {item.name: _plain(getattr(value, item.name)) for item in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        rounded = round(value, DECIMALS)
        return 0.0 if rounded == 0 else rounded
    if isinstance(value, enum.Enum):
        return value.value
    return value


def report_dict(report: Report) -> dict[str, Any]:
    """The report as JSON-ready data (floats rounded to six decimals), the source of every form."""
    return {"format_version": REPORT_FORMAT_VERSION, **_plain(report)}
