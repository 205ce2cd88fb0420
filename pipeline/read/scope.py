"""The shared filters and how they become SQL: the hand scope, player conditions, small SQL helpers.

Every topic module of the read model builds its WHERE clauses from these, so a filter means the
same thing on every page, in the report and on the command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import polars as pl

from pipeline.read.source import Database, frame

# Downsampled series (cumulative points, rolling foul rate) keep at most this many points.
MAX_SERIES_POINTS = 1500


@dataclass(frozen=True, slots=True)
class Filters:
    """The shared sidebar filters. Empty tuples and ``None`` mean "no restriction".

    ``players`` are the heroes: player-level questions keep only their rows, hand-level questions
    keep hands where one of them sat. ``opponents`` keeps hands where one of them sat (and, for
    head-to-head questions, only matchups against them). ``sessions`` keeps the hands of those
    sessions. Dates are inclusive days (UTC).
    """

    players: tuple[str, ...] = ()
    opponents: tuple[str, ...] = ()
    date_from: date | None = None
    date_to: date | None = None
    variants: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    sessions: tuple[str, ...] = ()

    def with_players(self, players: Sequence[str]) -> Filters:
        """The same filters for other heroes."""
        return Filters(tuple(players), self.opponents, self.date_from, self.date_to,
                       self.variants, self.rules, self.tables, self.sessions)


EVERYTHING = Filters()
"""No filter: every hand and every player."""


@dataclass(frozen=True, slots=True)
class HandFlags:
    """Hand browser filters: each true flag narrows the list (they combine with AND)."""

    fouls_only: bool = False
    min_royalties: int = 0  # a board collecting at least this many royalty points (0: off)
    fantasyland: bool = False
    disagreements: bool = False
    graded: bool = False  # a decision of the hand graded by ``ofc analyze`` (a hero's, if chosen)


NO_FLAGS = HandFlags()
"""No hand browser flag set: every hand the filters keep."""


def placeholders(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


def day_bounds(filters: Filters) -> tuple[datetime | None, datetime | None]:
    """The filters' days as [start, end) moments: from the first day's midnight to the midnight
    after the last day (none after the last day there is: 9999-12-31 used to overflow)."""
    start = datetime.combine(filters.date_from, datetime.min.time()) if filters.date_from else None
    end = (
        datetime.combine(filters.date_to + timedelta(days=1), datetime.min.time())
        if filters.date_to and filters.date_to < date.max
        else None
    )
    return start, end


@dataclass(frozen=True, slots=True)
class Scope:
    """The hands the hand-level filters keep, as a CTE named ``hand_scope`` (None: every hand)."""

    cte: str | None
    params: tuple[Any, ...]

    def keeps(self, alias: str) -> str:
        """SQL condition: ``{alias}.hand_key`` is one of the kept hands."""
        return f"{alias}.hand_key IN (SELECT hand_key FROM hand_scope)" if self.cte else "TRUE"

    def sql(self, body: str) -> str:
        """``body`` with the ``hand_scope`` CTE in front (merged into its own WITH, if any)."""
        if not self.cte:
            return body
        stripped = body.lstrip()
        if stripped[:4].upper() == "WITH":
            return f"WITH {self.cte},{stripped[4:]}"
        return f"WITH {self.cte}\n{stripped}"


def hand_scope(filters: Filters, include_players: bool = True) -> Scope:
    """The hand-level filters (dates, variant, rules, table, session, opponents and, when
    ``include_players``, the heroes) as one materialised CTE, computed once per query."""
    conditions: list[str] = []
    params: list[Any] = []
    start, end = day_bounds(filters)
    if start is not None:
        conditions.append("h.started_at >= ?")
        params.append(start)
    if end is not None:
        conditions.append("h.started_at < ?")
        params.append(end)
    for column, values in (
        ("variant", filters.variants), ("rules", filters.rules), ("table_name", filters.tables)
    ):
        if values:
            conditions.append(f"h.{column} IN ({placeholders(values)})")
            params.extend(values)
    for column, values in (
        ("session_id", filters.sessions),
        ("player", filters.opponents),
        ("player", filters.players if include_players else ()),
    ):
        if values:
            conditions.append(
                f"h.hand_key IN (SELECT hand_key FROM seats WHERE {column} IN "
                f"({placeholders(values)}))"
            )
            params.extend(values)
    if not conditions:
        return Scope(None, ())
    cte = (f"hand_scope AS MATERIALIZED (SELECT h.hand_key FROM hands h "
           f"WHERE {' AND '.join(conditions)})")
    return Scope(cte, tuple(params))


def in_list(column: str, values: Sequence[Any], negate: bool = False) -> tuple[str, list[Any]]:
    """`` AND column [NOT] IN (?, ...)`` with its parameters; nothing for no values."""
    if not values:
        return "", []
    return f" AND {column} {'NOT IN' if negate else 'IN'} ({placeholders(values)})", list(values)


def both(first: tuple[str, list[Any]], second: tuple[str, list[Any]]) -> tuple[str, list[Any]]:
    return first[0] + second[0], first[1] + second[1]


def player_conditions(filters: Filters, alias: str) -> tuple[str, list[Any]]:
    """Row conditions for player-level tables: the heroes' rows, never the opponents' own."""
    return both(in_list(f"{alias}.player", filters.players),
                 in_list(f"{alias}.player", filters.opponents, negate=True))


def run_scoped(db: Database, scope: Scope, body: str, params: Sequence[Any] = ()) -> pl.DataFrame:
    return frame(db, scope.sql(body), [*scope.params, *params])


def standard_error_sql(column: str) -> str:
    """SQL for the standard error of the mean of ``column`` in a group (0 for one value).

    From the sum of squares: three times cheaper than ``stddev_samp`` on millions of rows.
    """
    return standard_error_from_sums(f"sum({column})", f"sum({column} * {column})", "count(*)")


def standard_error_from_sums(total: str, squares: str, count: str) -> str:
    """SQL for the standard error of a mean from SQL for the sum, the sum of squares and the
    count of the values (0 for one value): the same formula as :func:`standard_error_sql`, for
    sums kept in advance (the aggregates)."""
    return (f"coalesce(sqrt(greatest(0, (({squares})::DOUBLE "
            f"- ({total})::DOUBLE * ({total}) / ({count})) / nullif(({count}) - 1, 0)) "
            f"/ ({count})), 0)")


def has_hand_filters(filters: Filters) -> bool:
    return bool(filters.date_from or filters.date_to or filters.variants or filters.rules
                or filters.tables or filters.sessions or filters.opponents)
