"""Which way a question is answered: from the aggregates the writers keep, or by a full pass.

The writers keep exact integer totals per player and per pair of players
(``board_totals``, ``pair_totals``, ``fantasyland_draws``; :mod:`pipeline.ingest.aggregates`
writes them, :mod:`pipeline.store.aggregates` defines them).
A question whose filters the aggregates' grain can serve (no filter, dates, variants, rules,
players) reads them; any other filter (tables, sessions, opponents) takes the full pass over
the boards. Both ways give the same numbers (the tests compare them on simulated databases).

The aggregates are trusted only when the database says they follow this code's definition
(meta ``aggregates_version``) and they count exactly the boards ``evaluations`` holds: a
database made before them, one written by a tool that did not keep them, or a source without
them (a Parquet lake) is answered by the full pass.

:class:`Route` lets a caller (tests, benchmarks) force one way: per question (``route=``) or
for a block of code (:func:`preferred_route`).
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
from collections.abc import Callable, Iterator
from typing import Any

import duckdb

from pipeline import store
from pipeline.read.scope import Filters, placeholders
from pipeline.read.source import asked_for
from pipeline.store.aggregates import (
    AGGREGATES_META_KEY,
    AGGREGATES_VERSION,
    ROLLUP_META_KEY,
    ROLLUP_VERSION,
    SUMMARY_META_KEY,
    SUMMARY_VERSION,
    play_order_ready,
)


class Route(enum.Enum):
    """How a question is answered."""

    AUTO = "auto"  # from the aggregates when they are current and serve the filters
    AGGREGATES = "aggregates"  # from the aggregates, or AggregatesUnavailable
    FULL_PASS = "full pass"  # from the hand tables, never the aggregates


class AggregatesUnavailable(LookupError):
    """The aggregates were asked for, and they cannot answer (missing, stale, or the filters
    are finer than their grain)."""


_PREFERRED: contextvars.ContextVar[Route] = contextvars.ContextVar("route", default=Route.AUTO)


@contextlib.contextmanager
def preferred_route(route: Route) -> Iterator[None]:
    """Answer every question asked in the block with ``route`` (unless one names its own)."""
    token = _PREFERRED.set(route)
    try:
        yield
    finally:
        _PREFERRED.reset(token)


_READINESS: contextvars.ContextVar[dict[tuple[int, str], bool] | None] = contextvars.ContextVar(
    "readiness", default=None)


@contextlib.contextmanager
def readiness_checked_once(memory: dict[tuple[int, str], bool] | None = None) -> Iterator[None]:
    """Within the block, :func:`aggregates_ready` looks at each connection once: for a block of
    questions asked through one open connection that nothing writes to meanwhile (a read-only
    connection: no other process can write the file while it is open, and the dashboard's own
    writes wait for its readers), such as the report's or a comparison's questions.

    ``memory`` keeps the answers beyond the block: the dashboard passes one per page view, made
    when it opens the view's connection and dropped when it closes it, so the readiness is
    looked at once per view instead of once per question. A block inside another block shares
    the outer block's answers.
    """
    if memory is None:
        memory = _READINESS.get()
    token = _READINESS.set({} if memory is None else memory)
    try:
        yield
    finally:
        _READINESS.reset(token)


def checked_once(connection: duckdb.DuckDBPyConnection, name: str,
                 check: Callable[[duckdb.DuckDBPyConnection], bool]) -> bool:
    """``check(connection)``: within :func:`readiness_checked_once`, looked at once per
    connection (a second cursor asking alongside counts as its connection:
    :func:`~pipeline.read.source.asked_for`) and ``name`` (a check that depends on the filters
    names them); at every call outside."""
    remembered = _READINESS.get()
    if remembered is None:
        return check(connection)
    key = (asked_for(connection), name)
    if key not in remembered:
        remembered[key] = check(connection)
    return remembered[key]


def aggregates_ready(connection: duckdb.DuckDBPyConnection) -> bool:
    """True when the aggregates exist, follow this code's definition, and count every board."""
    return checked_once(connection, "aggregates", _aggregates_ready)


def _aggregates_ready(connection: duckdb.DuckDBPyConnection) -> bool:
    return store.kept_and_counts_agree(
        connection, AGGREGATES_META_KEY, AGGREGATES_VERSION,
        ("SELECT sum(boards) FROM board_totals", "SELECT count(*) FROM evaluations"))


def _route_allows(route: Route, served: bool, ready: Callable[[], bool], finer: str,
                  missing: str) -> bool:
    """Whether ``route`` answers from kept tables: not when it forces the full pass or the
    question is not ``served`` by them, else when they are ``ready()``; raises
    :class:`AggregatesUnavailable` (``finer`` or ``missing``) when ``route`` demands them and
    they cannot."""
    if route is Route.AUTO:
        route = _PREFERRED.get()
    if route is Route.FULL_PASS:
        return False
    if not served:
        if route is Route.AGGREGATES:
            raise AggregatesUnavailable(finer)
        return False
    is_ready = ready()
    if route is Route.AGGREGATES and not is_ready:
        raise AggregatesUnavailable(missing)
    return is_ready


def use_aggregates(connection: duckdb.DuckDBPyConnection, route: Route, served: bool) -> bool:
    """Whether to answer from the aggregates: ``served`` says the question's filters fit their
    grain. Raises :class:`AggregatesUnavailable` when ``route`` demands them and they cannot."""
    return _route_allows(route, served, lambda: aggregates_ready(connection),
                         "these filters are finer than the aggregates' grain",
                         "the database holds no current aggregates")


def _rollups_ready(connection: duckdb.DuckDBPyConnection) -> bool:
    return store.kept_and_counts_agree(
        connection, ROLLUP_META_KEY, ROLLUP_VERSION,
        ("SELECT sum(boards) FROM board_totals_all", "SELECT sum(boards) FROM board_totals"),
        ("SELECT sum(hands) FROM pair_totals_all", "SELECT sum(hands) FROM pair_totals"))


def totals_tables(connection: duckdb.DuckDBPyConnection, filters: Filters) -> tuple[str, str]:
    """The aggregate tables to read for ``board_totals`` and ``pair_totals``: their day-free
    rollups (``board_totals_all``, ``pair_totals_all``: a few hundred rows a player instead of
    one per day) when the filters name no day and the rollups are kept and sum to the per-day
    tables' totals; the per-day tables otherwise. Call it once :func:`use_aggregates` said
    yes."""
    if filters.date_from is not None or filters.date_to is not None:
        return "board_totals", "pair_totals"
    if checked_once(connection, "rollups", _rollups_ready):
        return "board_totals_all", "pair_totals_all"
    return "board_totals", "pair_totals"


def use_play_order(connection: duckdb.DuckDBPyConnection, route: Route, served: bool) -> bool:
    """:func:`use_aggregates` for the kept play order (``play_order``): ``served`` says the
    question asks for whole players (no hand-level filter)."""
    return _route_allows(
        route, served, lambda: checked_once(connection, "play order", play_order_ready),
        "the play order is kept over every hand of a player; these filters keep only some",
        "the database holds no current play order")


def _summaries_ready(connection: duckdb.DuckDBPyConnection) -> bool:
    return store.kept_and_counts_agree(
        connection, SUMMARY_META_KEY, SUMMARY_VERSION,
        ("SELECT count(*) FROM hand_summaries", "SELECT count(*) FROM hands"))


def use_hand_summaries(connection: duckdb.DuckDBPyConnection, route: Route) -> bool:
    """:func:`use_aggregates` for the kept ``hand_summaries`` (any filters: a summary is per
    hand): when they follow this code's definition and hold one row per hand."""
    return _route_allows(
        route, True, lambda: checked_once(connection, "hand summaries", _summaries_ready),
        "", "the database holds no current hand summaries")


def grain_serves(filters: Filters, sessions: bool = False, opponents: bool = False) -> bool:
    """True when the filters fit the aggregates' grain: no table filter, and no session or
    opponent filter unless the question ignores them (``sessions`` / ``opponents`` True)."""
    return (not filters.tables and (sessions or not filters.sessions)
            and (opponents or not filters.opponents))


def totals_conditions(filters: Filters, alias: str = "t",
                      players: bool = True) -> tuple[str, list[Any]]:
    """`` AND ...`` conditions on aggregate rows ``alias`` for the filters' days, variants,
    rules and (with ``players``) heroes, and their parameters."""
    conditions: list[str] = []
    params: list[Any] = []
    if filters.date_from is not None:
        conditions.append(f"{alias}.day >= ?")
        params.append(filters.date_from)
    if filters.date_to is not None:
        conditions.append(f"{alias}.day <= ?")
        params.append(filters.date_to)
    for column, values in (("variant", filters.variants), ("rules", filters.rules),
                           ("player", filters.players if players else ())):
        if values:
            conditions.append(f"{alias}.{column} IN ({placeholders(values)})")
            params.extend(values)
    return "".join(f" AND {condition}" for condition in conditions), params


__all__ = [
    "AggregatesUnavailable", "Route", "aggregates_ready", "grain_serves", "preferred_route",
    "checked_once", "readiness_checked_once", "totals_conditions", "totals_tables", "use_aggregates",
    "use_play_order",
]
