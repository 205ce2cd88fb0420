"""The coaching report as plain, frozen values, and their one dictionary form.

Every renderer (HTML, Markdown, JSON) starts from :func:`report_dict`, where floats are rounded
once, so the three forms carry the same numbers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from pipeline.read.scope import Filters

if TYPE_CHECKING:
    from pipeline.report.grading import DecisionGrading

REPORT_FORMAT_VERSION = 1
DECIMALS = 6


@dataclass(frozen=True, slots=True)
class ReportRequest:
    """Whose report, over which hands: a player (plus aliases), inclusive dates, one variant."""

    player: str
    aliases: tuple[str, ...] = ()
    since: date | None = None
    until: date | None = None
    variant: str | None = None

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
    Fantasyland hands, pairings, hands against an opponent) from the player, and the field as
    many to be compared. ``min_sessions``: sessions needed for a trend. ``percentile_min_hands``:
    hands a player needs in a variant to be ranked there. ``notable_hands``: hands shown per kind.
    ``max_opponents``: regular opponents shown (the most frequent first).
    """

    min_sample: int = 30
    min_sessions: int = 5
    percentile_min_hands: int = 100
    notable_hands: int = 3
    max_opponents: int = 8


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
    """A rule with its evidence: the player's statistic against the field's, and what it costs.

    ``unit``: ``rate`` (a share of ``sample_unit``), ``points`` (points per hand or per pairing),
    ``royalties`` (royalty points per hand), ``points_slope`` / ``rate_slope`` (change per
    session). ``points_per_hand``: the estimated effect on the player's overall points per hand
    compared with the field (positive: a gain, negative: a cost), None when it cannot be
    estimated. ``verdict``: strength, leak, likely strength, likely leak, in line, different,
    not compared, or not enough data (``shown`` is False then).
    """

    key: str
    topic: str
    title: str
    unit: str
    sample_unit: str
    minimum: int
    shown: bool
    player: Estimate
    field: Estimate | None
    difference: float | None
    z: float | None
    p_value: float | None
    verdict: str
    confidence: str
    points_per_hand: float | None
    basis: str
    note: str = ""
    higher_is_better: bool | None = None


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
    """The whole coaching report."""

    title: str
    player: str
    aliases: tuple[str, ...]
    since: str | None
    until: str | None
    variant: str | None
    settings: ReportSettings
    headline: Headline
    findings: tuple[Finding, ...]
    strengths: tuple[str, ...]
    leaks: tuple[str, ...]
    notable: tuple[NotableHand, ...]
    sessions: tuple[SessionLine, ...]
    cumulative: tuple[tuple[int, int], ...]
    definitions: tuple[tuple[str, str], ...]
    data_notes: tuple[str, ...] = field(default_factory=tuple)
    grading: DecisionGrading | None = None  # ofc analyze's grades (pipeline.report.grading)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {item.name: _plain(getattr(value, item.name)) for item in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, float):
        rounded = round(value, DECIMALS)
        return 0.0 if rounded == 0 else rounded
    return value


def report_dict(report: Report) -> dict[str, Any]:
    """The report as JSON-ready data (floats rounded to six decimals), the source of every form."""
    return {"format_version": REPORT_FORMAT_VERSION, **_plain(report)}
