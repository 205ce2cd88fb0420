"""Every question the dashboard asks the database: one function per question, all SQL here.

Each function takes a database (a path, opened read-only for the one query and closed again, or an
open connection) and usually a :class:`Filters` value, and returns a polars DataFrame (or a small
typed value). Values always travel as parameters, never inside the SQL text. Nothing here knows
about Streamlit, so the coaching report can ask the same questions.

The dashboard holds no long-lived connection: DuckDB lets one process write at a time and a
read-only connection blocks writers, so a terminal ``ofc ingest`` must find the file free between
two queries. :func:`database_state` gives a cheap key that changes whenever the file does, for
caching results until the next ingest.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipeline import store

Database = str | Path | duckdb.DuckDBPyConnection

class _ReadersWriter:
    """Many readers or one writer: DuckDB refuses a read-write connection to a file that the same
    process has open read-only (and the reverse), so the Data page's ingest waits for readers."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._readers = 0
        self._writing = False

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._condition:
            while self._writing:
                self._condition.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._condition:
                self._readers -= 1
                self._condition.notify_all()

    @contextmanager
    def write(self, timeout: float) -> Iterator[None]:
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._writing or self._readers:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DatabaseBusy("the dashboard is still reading the database; "
                                       "try again in a moment")
                self._condition.wait(left)
            self._writing = True
        try:
            yield
        finally:
            with self._condition:
                self._writing = False
                self._condition.notify_all()


_PROCESS_LOCK = _ReadersWriter()

# How long a read waits for a writer (a terminal ``ofc ingest``) before giving up.
READ_WAIT_SECONDS = 5.0

# How long an ingest from the dashboard waits for the page views that are reading.
WRITE_WAIT_SECONDS = 30.0

# Downsampled series (cumulative points, rolling foul rate) keep at most this many points.
MAX_SERIES_POINTS = 1500


class DatabaseBusy(RuntimeError):
    """Another process is writing the database; try again in a moment."""


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


@dataclass(frozen=True, slots=True)
class HandFlags:
    """Hand browser filters: each true flag narrows the list (they combine with AND)."""

    fouls_only: bool = False
    min_royalties: int = 0  # a board collecting at least this many royalty points (0: off)
    fantasyland: bool = False
    disagreements: bool = False


@dataclass(frozen=True, slots=True)
class DatabaseStatus:
    """Whether there is anything to show."""

    exists: bool
    has_schema: bool
    hands: int
    rejects: int

    @property
    def empty(self) -> bool:
        """True when the dashboard should show the start page instead of the pages."""
        return not self.exists or not self.has_schema or self.hands == 0


@dataclass(frozen=True, slots=True)
class FilterOptions:
    """Values offered by the sidebar filters."""

    players: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    first_day: date | None = None
    last_day: date | None = None
    sessions: pl.DataFrame = field(default_factory=pl.DataFrame)


# --- connections ------------------------------------------------------------------------------


def database_state(path: str | Path) -> tuple[int, int, int, int]:
    """A key that changes whenever the database file (or its write-ahead log) changes."""
    path = Path(path)
    parts: list[int] = []
    for candidate in (path, path.with_name(path.name + ".wal")):
        try:
            stat = candidate.stat()
        except OSError:
            parts.extend((0, 0))
        else:
            parts.extend((stat.st_mtime_ns, stat.st_size))
    return (parts[0], parts[1], parts[2], parts[3])


_BEFORE_WRITE: list[Callable[[], None]] = []


def before_write(release: Callable[[], None]) -> None:
    """Register a function that closes the calling thread's open read connection (if any).

    :func:`database_lock` calls them first, so a page that read the database can then write.
    """
    if release not in _BEFORE_WRITE:
        _BEFORE_WRITE.append(release)


@contextmanager
def database_lock() -> Iterator[None]:
    """Write access for this process: waits until no connection of the dashboard is open.

    The Data and Record pages ingest under it. The calling thread's own read connection is closed
    first (see :func:`before_write`); other page views finish their reads.
    """
    for release in _BEFORE_WRITE:
        release()
    with _PROCESS_LOCK.write(timeout=WRITE_WAIT_SECONDS):
        yield


def open_reader(path: str | Path) -> duckdb.DuckDBPyConnection:
    """Open ``path`` read-only (waiting briefly for a writer), or raise DatabaseBusy."""
    try:
        return store.connect(path, read_only=True, wait_seconds=READ_WAIT_SECONDS)
    except duckdb.IOException as error:
        raise DatabaseBusy(
            f"the database {path} is being written by another process; refresh in a moment"
        ) from error


@contextmanager
def read_access() -> Iterator[None]:
    """Hold read access for this process (while a connection of ours is open)."""
    with _PROCESS_LOCK.read():
        yield


@contextmanager
def reading(db: Database) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection for one question: borrowed as is, or opened and closed here."""
    if isinstance(db, duckdb.DuckDBPyConnection):
        yield db
        return
    with _PROCESS_LOCK.read():
        connection = open_reader(db)
        try:
            yield connection
        finally:
            connection.close()


def _frame(db: Database, sql: str, params: Sequence[Any] = ()) -> pl.DataFrame:
    with reading(db) as connection:
        return connection.sql(sql, params=list(params)).pl()


def _placeholders(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


# --- filters as SQL ---------------------------------------------------------------------------


def _day_bounds(filters: Filters) -> tuple[datetime | None, datetime | None]:
    start = datetime.combine(filters.date_from, datetime.min.time()) if filters.date_from else None
    end = (
        datetime.combine(filters.date_to + timedelta(days=1), datetime.min.time())
        if filters.date_to
        else None
    )
    return start, end


@dataclass(frozen=True, slots=True)
class _Scope:
    """The hands the hand-level filters keep, as a CTE named ``_scope`` (None: every hand)."""

    cte: str | None
    params: tuple[Any, ...]

    def keeps(self, alias: str) -> str:
        """SQL condition: ``{alias}.hand_key`` is one of the kept hands."""
        return f"{alias}.hand_key IN (SELECT hand_key FROM _scope)" if self.cte else "TRUE"

    def sql(self, body: str) -> str:
        """``body`` with the ``_scope`` CTE in front (merged into its own WITH, if any)."""
        if not self.cte:
            return body
        stripped = body.lstrip()
        if stripped[:4].upper() == "WITH":
            return f"WITH {self.cte},{stripped[4:]}"
        return f"WITH {self.cte}\n{stripped}"


def _scope(filters: Filters, include_players: bool = True) -> _Scope:
    """The hand-level filters (dates, variant, rules, table, session, opponents and, when
    ``include_players``, the heroes) as one materialised CTE, computed once per query."""
    conditions: list[str] = []
    params: list[Any] = []
    start, end = _day_bounds(filters)
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
            conditions.append(f"h.{column} IN ({_placeholders(values)})")
            params.extend(values)
    for column, values in (
        ("session_id", filters.sessions),
        ("player", filters.opponents),
        ("player", filters.players if include_players else ()),
    ):
        if values:
            conditions.append(
                f"h.hand_key IN (SELECT hand_key FROM seats WHERE {column} IN "
                f"({_placeholders(values)}))"
            )
            params.extend(values)
    if not conditions:
        return _Scope(None, ())
    cte = (f"_scope AS MATERIALIZED (SELECT h.hand_key FROM hands h "
           f"WHERE {' AND '.join(conditions)})")
    return _Scope(cte, tuple(params))


def _in_list(column: str, values: Sequence[Any], negate: bool = False) -> tuple[str, list[Any]]:
    """`` AND column [NOT] IN (?, ...)`` with its parameters; nothing for no values."""
    if not values:
        return "", []
    return f" AND {column} {'NOT IN' if negate else 'IN'} ({_placeholders(values)})", list(values)


def _both(first: tuple[str, list[Any]], second: tuple[str, list[Any]]) -> tuple[str, list[Any]]:
    return first[0] + second[0], first[1] + second[1]


def _players(filters: Filters, alias: str) -> tuple[str, list[Any]]:
    """Row conditions for player-level tables: the heroes' rows, never the opponents' own."""
    return _both(_in_list(f"{alias}.player", filters.players),
                 _in_list(f"{alias}.player", filters.opponents, negate=True))


def _run(db: Database, scope: _Scope, body: str, params: Sequence[Any] = ()) -> pl.DataFrame:
    return _frame(db, scope.sql(body), [*scope.params, *params])


def _standard_error(column: str) -> str:
    """SQL for the standard error of the mean of ``column`` in a group (0 for one value).

    From the sum of squares: three times cheaper than ``stddev_samp`` on millions of rows.
    """
    return (f"coalesce(sqrt(greatest(0, (sum({column} * {column})::DOUBLE "
            f"- sum({column})::DOUBLE * sum({column}) / count(*)) / nullif(count(*) - 1, 0)) "
            f"/ count(*)), 0)")


def _has_hand_filters(filters: Filters) -> bool:
    return bool(filters.date_from or filters.date_to or filters.variants or filters.rules
                or filters.tables or filters.sessions or filters.opponents)


# --- status and options -----------------------------------------------------------------------


def database_status(path: str | Path) -> DatabaseStatus:
    """Does the database exist, carry the schema, and hold any hands (and rejects)?"""
    path = Path(path)
    if not path.exists():
        return DatabaseStatus(False, False, 0, 0)
    with reading(path) as connection:
        tables = {
            row[0]
            for row in connection.sql(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
            ).fetchall()
        }
        if "hands" not in tables:
            return DatabaseStatus(True, False, 0, 0)
        hands = connection.sql("SELECT count(*) FROM hands").fetchall()[0][0]
        rejects = (
            connection.sql("SELECT count(*) FROM rejects").fetchall()[0][0]
            if "rejects" in tables else 0
        )
    return DatabaseStatus(True, True, int(hands), int(rejects))


def filter_options(db: Database) -> FilterOptions:
    """Players, variants, rules, tables, the date span and the sessions, for the sidebar."""
    with reading(db) as connection:
        players = tuple(row[0] for row in connection.sql(
            "SELECT player FROM seats GROUP BY player ORDER BY count(*) DESC, player").fetchall())
        hand_values = connection.sql(
            "SELECT list(DISTINCT variant ORDER BY variant), list(DISTINCT rules ORDER BY rules), "
            "list(DISTINCT table_name ORDER BY table_name) FILTER (WHERE table_name IS NOT NULL), "
            "min(started_at)::DATE, max(started_at)::DATE FROM hands"
        ).fetchall()[0]
        sessions = connection.sql(
            "SELECT session_id, player, table_name, started_at, hands, points FROM sessions "
            "ORDER BY started_at DESC NULLS LAST, session_id"
        ).pl()
    variants, rules, tables, first_day, last_day = hand_values
    return FilterOptions(
        players=players,
        variants=tuple(variants or ()),
        rules=tuple(rules or ()),
        tables=tuple(tables or ()),
        first_day=first_day,
        last_day=last_day,
        sessions=sessions,
    )


# --- overview ---------------------------------------------------------------------------------


def overview_totals(db: Database, filters: Filters) -> pl.DataFrame:
    """One row: hands, players, boards, sessions, date span, fouls, audit disagreements, rejects."""
    scope = _scope(filters)
    sql = f"""
        SELECT
            (SELECT count(*) FROM hands h WHERE {scope.keeps('h')}) AS hands,
            (SELECT min(started_at) FROM hands h WHERE {scope.keeps('h')}) AS first_hand,
            (SELECT max(started_at) FROM hands h WHERE {scope.keeps('h')}) AS last_hand,
            (SELECT count(DISTINCT player) FROM seats s WHERE {scope.keeps('s')}) AS players,
            (SELECT count(DISTINCT session_id) FROM seats s WHERE {scope.keeps('s')}) AS sessions,
            (SELECT count(*) FROM evaluations e WHERE {scope.keeps('e')}) AS boards,
            (SELECT count(*) FILTER (WHERE foul) FROM evaluations e WHERE {scope.keeps('e')})
                AS fouls,
            (SELECT count(*) FILTER (WHERE disagrees) FROM results r WHERE {scope.keeps('r')})
                AS disagreements,
            (SELECT count(*) FROM rejects) AS rejects,
            (SELECT count(*) FROM ingested_files) AS files
    """
    return _run(db, scope, sql)


def hands_by_day(db: Database, filters: Filters) -> pl.DataFrame:
    """Hands played per day and variant."""
    scope = _scope(filters)
    sql = f"""
        SELECT started_at::DATE AS day, variant, count(*) AS hands
        FROM hands h WHERE {scope.keeps('h')} AND started_at IS NOT NULL
        GROUP BY ALL ORDER BY day, variant
    """
    return _run(db, scope, sql)


def player_leaderboard(db: Database, filters: Filters, limit: int = 50) -> pl.DataFrame:
    """Players by hands played: hands, points, points per hand, foul rate."""
    scope = _scope(filters, include_players=False)
    r_players, r_params = _players(filters, "r")
    e_players, e_params = _players(filters, "e")
    sql = f"""
        WITH points AS (
            SELECT player, count(*) AS hands, sum(points)::BIGINT AS points
            FROM results r WHERE {scope.keeps('r')}{r_players} GROUP BY player
        ), fouls AS (
            SELECT player, count(*) FILTER (WHERE foul) AS fouls
            FROM evaluations e WHERE {scope.keeps('e')}{e_players} GROUP BY player
        )
        SELECT p.player, p.hands, p.points, p.points / p.hands AS points_per_hand,
               coalesce(f.fouls, 0) / p.hands AS foul_rate
        FROM points p LEFT JOIN fouls f USING (player)
        ORDER BY p.hands DESC, p.player LIMIT ?
    """
    return _run(db, scope, sql, [*r_params, *e_params, limit])


def data_health(db: Database) -> pl.DataFrame:
    """Rejected records by reason (most frequent first), for the overview's data health."""
    sql = """
        SELECT reason, count(*) AS records, count(DISTINCT path) AS files
        FROM rejects GROUP BY reason ORDER BY records DESC, reason LIMIT 20
    """
    return _frame(db, sql)


# --- player review and comparison -------------------------------------------------------------


def player_kpis(db: Database, filters: Filters) -> pl.DataFrame:
    """One row per player (the heroes, or everyone): sample size and the key rates.

    Columns: hands, points, points_per_hand, points_se (standard error of the mean), fouls,
    foul_rate, royalties, royalties_per_hand, matchups, scoops, scooped, scoop_rate,
    fl_hands (dealt Fantasyland), fl_entries, entry_chances (hands not in Fantasyland),
    fl_entry_rate, fl_stays, fl_stay_rate, fl_points, disagreements.
    """
    scope = _scope(filters, include_players=False)
    r_players, r_params = _players(filters, "r")
    e_players, e_params = _players(filters, "e")
    s_players, s_params = _players(filters, "s")
    m_players, m_params = _players(filters, "m")
    if filters.opponents:
        m_players += f" AND m.opponent IN ({_placeholders(filters.opponents)})"
        m_params = [*m_params, *filters.opponents]
    sql = f"""
        WITH in_fl AS (
            SELECT s.hand_key, s.player FROM seats s
            WHERE s.fantasyland AND {scope.keeps('s')}{s_players}
        ), points AS (
            SELECT r.player, count(*) AS hands, sum(r.points)::BIGINT AS points,
                   sum(r.points * r.points)::DOUBLE AS points_squares,
                   count(*) FILTER (WHERE r.disagrees) AS disagreements,
                   count(f.player) AS fl_hands,
                   coalesce(sum(r.points) FILTER (WHERE f.player IS NOT NULL), 0)::BIGINT AS fl_points
            FROM results r LEFT JOIN in_fl f ON f.hand_key = r.hand_key AND f.player = r.player
            WHERE {scope.keeps('r')}{r_players} GROUP BY r.player
        ), boards AS (
            SELECT e.player, count(*) FILTER (WHERE e.foul) AS fouls,
                   sum(e.royalties)::BIGINT AS royalties,
                   count(*) FILTER (WHERE e.fantasyland_next) AS fl_next,
                   count(*) FILTER (WHERE e.fantasyland_next AND f.player IS NOT NULL) AS fl_stays
            FROM evaluations e
            LEFT JOIN in_fl f ON f.hand_key = e.hand_key AND f.player = e.player
            WHERE {scope.keeps('e')}{e_players} GROUP BY e.player
        ), scoops AS (
            SELECT player, count(*) AS matchups,
                   count(*) FILTER (WHERE scoop > 0) AS scoops,
                   count(*) FILTER (WHERE scoop < 0) AS scooped
            FROM matchups m WHERE {scope.keeps('m')}{m_players} GROUP BY player
        )
        SELECT p.player, p.hands, p.points,
               p.points / p.hands AS points_per_hand,
               coalesce(sqrt(greatest(0, (p.points_squares - p.points::DOUBLE * p.points / p.hands)
                                      / nullif(p.hands - 1, 0)) / p.hands), 0) AS points_se,
               coalesce(b.fouls, 0) AS fouls,
               coalesce(b.fouls, 0) / p.hands AS foul_rate,
               coalesce(b.royalties, 0) AS royalties,
               coalesce(b.royalties, 0) / p.hands AS royalties_per_hand,
               coalesce(sc.matchups, 0) AS matchups,
               coalesce(sc.scoops, 0) AS scoops,
               coalesce(sc.scooped, 0) AS scooped,
               coalesce(sc.scoops / nullif(sc.matchups, 0), 0) AS scoop_rate,
               p.fl_hands,
               coalesce(b.fl_next, 0) - coalesce(b.fl_stays, 0) AS fl_entries,
               p.hands - p.fl_hands AS entry_chances,
               coalesce((coalesce(b.fl_next, 0) - coalesce(b.fl_stays, 0))
                        / nullif(p.hands - p.fl_hands, 0), 0) AS fl_entry_rate,
               coalesce(b.fl_stays, 0) AS fl_stays,
               coalesce(b.fl_stays / nullif(p.fl_hands, 0), 0) AS fl_stay_rate,
               p.fl_points,
               p.disagreements
        FROM points p
        LEFT JOIN boards b USING (player)
        LEFT JOIN scoops sc USING (player)
        ORDER BY p.hands DESC, p.player
    """
    return _run(db, scope, sql, [*s_params, *r_params, *e_params, *m_params])


def cumulative_points(db: Database, filters: Filters) -> pl.DataFrame:
    """Cumulative points per player (heroes or everyone) over their hands, in play order.

    Columns: player, hand_number (1-based per player), started_at, cumulative. Long series are
    thinned to about MAX_SERIES_POINTS points per player (first and last hands always kept).
    """
    scope = _scope(filters, include_players=False)
    players, params = _players(filters, "r")
    sql = f"""
        WITH ordered AS (
            SELECT r.player, h.started_at,
                   row_number() OVER w AS hand_number,
                   sum(r.points) OVER w AS cumulative,
                   count(*) OVER (PARTITION BY r.player) AS total
            FROM results r JOIN hands h USING (hand_key)
            WHERE {scope.keeps('r')}{players}
            WINDOW w AS (PARTITION BY r.player ORDER BY h.started_at NULLS FIRST, r.hand_key
                         ROWS UNBOUNDED PRECEDING)
        )
        SELECT player, hand_number, started_at, cumulative FROM ordered
        WHERE hand_number % greatest(1, ceil(total / ?)::BIGINT) = 0 OR hand_number = total
           OR hand_number = 1
        ORDER BY player, hand_number
    """
    return _run(db, scope, sql, [*params, MAX_SERIES_POINTS])


def cumulative_points_by_time(db: Database, filters: Filters, bucket: str = "day") -> pl.DataFrame:
    """Cumulative points per player (heroes or everyone) over time, one point per ``bucket``.

    ``bucket`` is ``hour``, ``day``, ``week`` or ``month``. Columns: player, period, points
    (in that period), cumulative. Undated hands are left out. Without hand-level filters the
    sessions table (kept by ingestion) answers it, each session counted when it started.
    """
    if bucket not in ("hour", "day", "week", "month"):
        raise ValueError(f"unknown bucket {bucket!r}")
    scope = _scope(filters, include_players=False)
    if not _has_hand_filters(filters):
        players, params = _players(filters, "x")
        source = f"""
            SELECT x.player, date_trunc(?, x.started_at) AS period, sum(x.points) AS points
            FROM sessions x WHERE x.started_at IS NOT NULL{players} GROUP BY ALL
        """
    else:
        players, params = _players(filters, "r")
        source = f"""
            SELECT r.player, date_trunc(?, h.started_at) AS period, sum(r.points) AS points
            FROM results r JOIN hands h USING (hand_key)
            WHERE {scope.keeps('r')} AND h.started_at IS NOT NULL{players}
            GROUP BY ALL
        """
    sql = f"""
        WITH periods AS ({source})
        SELECT player, period, points::BIGINT AS points,
               sum(points) OVER (PARTITION BY player ORDER BY period)::BIGINT AS cumulative
        FROM periods ORDER BY player, period
    """
    return _run(db, scope, sql, [bucket, *params])


def rolling_foul_rate(db: Database, filters: Filters, window: int = 100) -> pl.DataFrame:
    """Foul rate over the last ``window`` hands, per player, over their hands in play order.

    Columns: player, hand_number, started_at, foul_rate, window_hands (hands in the window).
    """
    scope = _scope(filters, include_players=False)
    players, params = _players(filters, "e")
    sql = f"""
        WITH ordered AS (
            SELECT e.player, h.started_at,
                   row_number() OVER w AS hand_number,
                   avg(e.foul::INTEGER) OVER (w ROWS BETWEEN ? PRECEDING AND CURRENT ROW)
                       AS foul_rate,
                   count(*) OVER (w ROWS BETWEEN ? PRECEDING AND CURRENT ROW) AS window_hands,
                   count(*) OVER (PARTITION BY e.player) AS total
            FROM evaluations e JOIN hands h USING (hand_key)
            WHERE {scope.keeps('e')}{players}
            WINDOW w AS (PARTITION BY e.player ORDER BY h.started_at NULLS FIRST, e.hand_key)
        )
        SELECT player, hand_number, started_at, foul_rate, window_hands FROM ordered
        WHERE hand_number % greatest(1, ceil(total / ?)::BIGINT) = 0 OR hand_number = total
        ORDER BY player, hand_number
    """
    return _run(db, scope, sql, [window - 1, window - 1, *params, MAX_SERIES_POINTS])


def royalty_sources(db: Database, filters: Filters) -> pl.DataFrame:
    """Where royalties came from: row, hand class, boards, royalty points (collected only)."""
    scope = _scope(filters, include_players=False)
    players, params = _players(filters, "e")
    sql = f"""
        WITH boards AS (
            SELECT top_class, middle_class, bottom_class,
                   royalty_top, royalty_middle, royalty_bottom
            FROM evaluations e WHERE {scope.keeps('e')}{players} AND royalties > 0
        )
        SELECT 'top' AS row_name, top_class AS hand_class, count(*) AS boards,
               sum(royalty_top) AS royalty_points
        FROM boards WHERE royalty_top > 0 GROUP BY ALL
        UNION ALL
        SELECT 'middle', middle_class, count(*), sum(royalty_middle)
        FROM boards WHERE royalty_middle > 0 GROUP BY ALL
        UNION ALL
        SELECT 'bottom', bottom_class, count(*), sum(royalty_bottom)
        FROM boards WHERE royalty_bottom > 0 GROUP BY ALL
        ORDER BY royalty_points DESC, row_name, hand_class
    """
    return _run(db, scope, sql, params)


def fantasyland_funnel(db: Database, filters: Filters) -> pl.DataFrame:
    """The Fantasyland funnel for the heroes (or everyone) together, one row per stage.

    Stages, in order: entries (earned from a normal hand), hands played in Fantasyland, stays
    (earned again from a Fantasyland hand); ``points`` on the played stage is what those hands won.
    """
    kpis = player_kpis(db, filters)
    entries = int(kpis["fl_entries"].sum()) if kpis.height else 0
    played = int(kpis["fl_hands"].sum()) if kpis.height else 0
    stays = int(kpis["fl_stays"].sum()) if kpis.height else 0
    points = float(kpis["fl_points"].sum()) if kpis.height else 0.0
    return pl.DataFrame(
        {
            "stage": ["Entered", "Played in Fantasyland", "Stayed"],
            "count": [entries, played, stays],
            "points": [None, points, None],
        },
        schema={"stage": pl.String, "count": pl.Int64, "points": pl.Float64},
    )


def points_by_variant(db: Database, filters: Filters) -> pl.DataFrame:
    """Per variant: hands, points, points per hand and its standard error."""
    scope = _scope(filters, include_players=False)
    players, params = _players(filters, "r")
    sql = f"""
        SELECT h.variant, count(*) AS hands, sum(r.points)::BIGINT AS points,
               avg(r.points) AS points_per_hand,
               {_standard_error('r.points')} AS points_se
        FROM results r JOIN hands h USING (hand_key)
        WHERE {scope.keeps('r')}{players} GROUP BY h.variant ORDER BY hands DESC, h.variant
    """
    return _run(db, scope, sql, params)


def points_by_position(db: Database, filters: Filters) -> pl.DataFrame:
    """Per table size and position relative to the button: hands, points per hand (± SE).

    ``position`` 0 acts first (left of the button); the button acts last. ``seat_label`` names it.
    """
    scope = _scope(filters, include_players=False)
    players, params = _players(filters, "r")
    sql = f"""
        SELECT h.player_count, s.position, bool_or(s.is_button) AS is_button,
               count(*) AS hands, sum(r.points)::BIGINT AS points,
               avg(r.points) AS points_per_hand,
               {_standard_error('r.points')} AS points_se
        FROM results r
        JOIN seats s USING (hand_key, player)
        JOIN hands h USING (hand_key)
        WHERE {scope.keeps('r')}{players}
        GROUP BY h.player_count, s.position ORDER BY h.player_count, s.position
    """
    frame = _run(db, scope, sql, params)
    labels = [
        position_label(int(count), int(position), bool(button))
        for count, position, button in frame.select("player_count", "position", "is_button").rows()
    ]
    return frame.with_columns(pl.Series("seat_label", labels, dtype=pl.String))


def position_label(player_count: int, position: int, is_button: bool) -> str:
    """``3-handed · button`` / ``3-handed · 1st to act`` for a settlement position."""
    if is_button or position == player_count - 1:
        where = "button"
    else:
        ordinal = {1: "1st", 2: "2nd", 3: "3rd"}.get(position + 1, f"{position + 1}th")
        where = f"{ordinal} to act"
    return f"{player_count}-handed · {where}"


def session_results(db: Database, filters: Filters, limit: int = 500) -> pl.DataFrame:
    """The most recent sessions (per player) matching the filters, with their results.

    Only hands matching the filters count. Columns: session_id, player, table_name, started_at,
    ended_at, hands, points, points_per_hand, fouls, foul_rate, royalties.
    """
    scope = _scope(filters, include_players=False)
    picked = ["TRUE"]
    picked_params: list[Any] = []
    if filters.players:
        picked.append(f"x.player IN ({_placeholders(filters.players)})")
        picked_params.extend(filters.players)
    if filters.sessions:
        picked.append(f"x.session_id IN ({_placeholders(filters.sessions)})")
        picked_params.extend(filters.sessions)
    if scope.cte:
        picked.append(f"x.session_id IN (SELECT session_id FROM seats s WHERE {scope.keeps('s')})")
    sql = f"""
        WITH picked AS (
            SELECT session_id FROM sessions x WHERE {' AND '.join(picked)}
            ORDER BY x.started_at DESC NULLS LAST, x.session_id LIMIT ?
        ), rows AS (
            SELECT s.session_id, s.hand_key, s.player FROM seats s
            WHERE s.session_id IN (SELECT session_id FROM picked) AND {scope.keeps('s')}
        ), boards AS (
            SELECT w.session_id, count(*) AS hands, count(*) FILTER (WHERE e.foul) AS fouls,
                   sum(e.royalties)::BIGINT AS royalties
            FROM rows w JOIN evaluations e USING (hand_key, player) GROUP BY w.session_id
        ), points AS (
            SELECT w.session_id, sum(r.points)::BIGINT AS points
            FROM rows w JOIN results r USING (hand_key, player) GROUP BY w.session_id
        )
        SELECT b.session_id, x.player, x.table_name, x.started_at, x.ended_at, b.hands,
               coalesce(q.points, 0) AS points,
               coalesce(q.points, 0) / b.hands AS points_per_hand,
               b.fouls, b.fouls / b.hands AS foul_rate, b.royalties
        FROM boards b
        LEFT JOIN points q USING (session_id)
        JOIN sessions x USING (session_id)
        ORDER BY x.started_at DESC NULLS LAST, b.session_id
    """
    return _run(db, scope, sql, [*picked_params, limit])


def session_hands(db: Database, session_id: str) -> pl.DataFrame:
    """The hands of one session from its player's seat: time, id, points, foul, royalties."""
    sql = """
        WITH mine AS (SELECT hand_key, player, position, fantasyland FROM seats
                      WHERE session_id = ?)
        SELECT h.hand_key, h.hand_id, h.started_at, h.table_name, h.variant,
               h.player_count AS players, m.player, m.position, m.fantasyland,
               r.points, e.foul, e.royalties, e.fantasyland_next, r.disagrees
        FROM mine m
        JOIN hands h ON h.hand_key = m.hand_key
        JOIN results r ON r.hand_key = m.hand_key AND r.player = m.player
        JOIN evaluations e ON e.hand_key = m.hand_key AND e.player = m.player
        ORDER BY h.started_at NULLS FIRST, h.hand_key
    """
    return _frame(db, sql, [session_id])


# --- point flow -------------------------------------------------------------------------------


def _pair_conditions(filters: Filters) -> tuple[str, list[Any]]:
    """Matchup conditions: the heroes against the chosen opponents."""
    return _both(_in_list("m.player", filters.players), _in_list("m.opponent", filters.opponents))


def pair_net_points(db: Database, filters: Filters) -> pl.DataFrame:
    """Net points between every pair, from ``player``'s side: hands together, points won.

    Rows are ordered pairs (both directions, so ``points`` of (a, b) is minus that of (b, a)).
    With heroes chosen, ``player`` is one of them; with opponents chosen, ``opponent`` is one of
    them.
    """
    scope = _scope(filters, include_players=False)
    pairs, params = _pair_conditions(filters)
    sql = f"""
        SELECT player, opponent, count(*) AS hands, sum(settled)::BIGINT AS points,
               count(*) FILTER (WHERE scoop > 0) AS scoops
        FROM matchups m WHERE {scope.keeps('m')}{pairs}
        GROUP BY player, opponent ORDER BY player, opponent
    """
    return _run(db, scope, sql, params)


def points_by_session_pair(db: Database, filters: Filters, limit: int = 2000) -> pl.DataFrame:
    """Net points between pairs per session (sessions of ``player``), most recent first."""
    scope = _scope(filters, include_players=False)
    pairs, params = _pair_conditions(filters)
    sql = f"""
        SELECT s.session_id, x.started_at, m.player, m.opponent, count(*) AS hands,
               sum(m.settled)::BIGINT AS points
        FROM matchups m
        JOIN seats s ON s.hand_key = m.hand_key AND s.player = m.player
        LEFT JOIN sessions x ON x.session_id = s.session_id
        WHERE {scope.keeps('m')}{pairs}
        GROUP BY ALL ORDER BY x.started_at DESC NULLS LAST, s.session_id, m.player, m.opponent
        LIMIT ?
    """
    return _run(db, scope, sql, [*params, limit])


# --- hand browser -----------------------------------------------------------------------------


def hand_list(
    db: Database, filters: Filters, flags: HandFlags = HandFlags(), limit: int = 500
) -> pl.DataFrame:
    """Hands matching the filters and flags, most recent first (at most ``limit``).

    Flags look at the heroes' boards when heroes are chosen, else at every board of the hand.
    Columns: hand_key, hand_id, started_at, table_name, variant, rules, players, fouls,
    max_royalties, any_fantasyland, disagreements, hero_points (null without one hero),
    total (hands matching, before the limit).
    """
    scope = _scope(filters)
    conditions = [scope.keeps("h")]
    params: list[Any] = []
    hero_condition = ""
    hero_params: list[Any] = []
    if filters.players:
        hero_condition = f" AND player IN ({_placeholders(filters.players)})"
        hero_params = list(filters.players)
    if flags.fouls_only:
        conditions.append(f"h.hand_key IN (SELECT hand_key FROM evaluations WHERE foul{hero_condition})")
        params += hero_params
    if flags.min_royalties > 0:
        conditions.append(
            f"h.hand_key IN (SELECT hand_key FROM evaluations WHERE royalties >= ?{hero_condition})"
        )
        params += [flags.min_royalties, *hero_params]
    if flags.fantasyland:
        if filters.players:
            conditions.append(
                "h.hand_key IN (SELECT hand_key FROM seats WHERE fantasyland"
                f"{hero_condition} UNION ALL SELECT hand_key FROM evaluations "
                f"WHERE fantasyland_next{hero_condition})"
            )
            params += [*hero_params, *hero_params]
        else:
            conditions.append(
                "(h.any_fantasyland OR h.hand_key IN "
                "(SELECT hand_key FROM evaluations WHERE fantasyland_next))"
            )
    if flags.disagreements:
        conditions.append(
            f"h.hand_key IN (SELECT hand_key FROM results WHERE disagrees{hero_condition})"
        )
        params += hero_params
    where = " AND ".join(conditions)
    hero = filters.players[0] if len(filters.players) == 1 else None
    sql = f"""
        WITH matched AS NOT MATERIALIZED (
            SELECT h.hand_key, h.started_at FROM hands h WHERE {where}
        ), top_keys AS (
            SELECT hand_key FROM matched ORDER BY started_at DESC NULLS LAST, hand_key LIMIT ?
        ), picked AS (
            SELECT h.hand_key, h.hand_id, h.started_at, h.table_name, h.variant, h.rules,
                   h.any_fantasyland
            FROM hands h WHERE h.hand_key IN (SELECT hand_key FROM top_keys)
        ), boards AS (
            SELECT e.hand_key, count(*) FILTER (WHERE e.foul) AS fouls,
                   max(e.royalties) AS max_royalties
            FROM evaluations e WHERE e.hand_key IN (SELECT hand_key FROM picked)
            GROUP BY e.hand_key
        ), people AS (
            SELECT r.hand_key,
                   string_agg(r.player, ', ' ORDER BY s.position) AS players,
                   count(*) FILTER (WHERE r.disagrees) AS disagreements,
                   max(r.points) FILTER (WHERE r.player = ?) AS hero_points
            FROM results r JOIN seats s USING (hand_key, player)
            WHERE r.hand_key IN (SELECT hand_key FROM picked)
              AND s.hand_key IN (SELECT hand_key FROM picked)
            GROUP BY r.hand_key
        )
        SELECT p.hand_key, p.hand_id, p.started_at, p.table_name, p.variant, p.rules,
               q.players, b.fouls, b.max_royalties, p.any_fantasyland, q.disagreements,
               q.hero_points, (SELECT count(*) FROM matched) AS total
        FROM picked p LEFT JOIN boards b USING (hand_key) LEFT JOIN people q USING (hand_key)
        ORDER BY p.started_at DESC NULLS LAST, p.hand_key
    """
    return _run(db, scope, sql, [*params, limit, hero])


def hand_header(db: Database, hand_key: int) -> pl.DataFrame:
    """One hand's own row (site, id, table, time, variant, rules, button, player count)."""
    sql = """
        SELECT hand_key, site, hand_id, table_name, started_at, variant, rules, button,
               player_count, has_streets, any_fantasyland, source_path, source_line
        FROM hands WHERE hand_key = ?
    """
    return _frame(db, sql, [hand_key])


def hand_players(db: Database, hand_key: int) -> pl.DataFrame:
    """Each player of one hand in action order: seat, board, verdict and result."""
    sql = """
        WITH s AS (SELECT * FROM seats WHERE hand_key = ?),
             b AS (SELECT * FROM boards WHERE hand_key = ?),
             e AS (SELECT * FROM evaluations WHERE hand_key = ?),
             r AS (SELECT * FROM results WHERE hand_key = ?)
        SELECT s.player, s.seat, s.position, s.is_button, s.fantasyland, s.cards_dealt,
               b.top, b.middle, b.bottom,
               e.top_class, e.middle_class, e.bottom_class, e.foul,
               e.royalty_top, e.royalty_middle, e.royalty_bottom, e.royalties,
               e.fantasyland_next, e.fantasyland_cards,
               r.points, r.reported_points, r.disagrees, r.disagreement
        FROM s
        LEFT JOIN b USING (player)
        LEFT JOIN e USING (player)
        LEFT JOIN r USING (player)
        ORDER BY s.position
    """
    return _frame(db, sql, [hand_key] * 4)


def hand_streets(db: Database, hand_key: int) -> pl.DataFrame:
    """Every card of one hand as it was played: player, street, placed row or discarded.

    Columns: player, street, card_order, card, row_name (``discard`` for a discarded card).
    """
    sql = """
        WITH placed AS (SELECT player, street, card_order, card, row_name
                        FROM placements WHERE hand_key = ?),
             thrown AS (SELECT player, street, card FROM discards WHERE hand_key = ?)
        SELECT player, street, card_order, card, row_name FROM placed
        UNION ALL
        SELECT player, street, (100 + row_number() OVER (PARTITION BY player, street))::TINYINT,
               card, 'discard' FROM thrown
        ORDER BY player, street, card_order
    """
    return _frame(db, sql, [hand_key, hand_key])


def hand_matchups(db: Database, hand_key: int) -> pl.DataFrame:
    """The scoring breakdown of one hand: every ordered pair's rows, scoop, royalties, points."""
    sql = """
        WITH m AS (SELECT * FROM matchups WHERE hand_key = ?),
             s AS (SELECT player, position FROM seats WHERE hand_key = ?)
        SELECT m.player, m.opponent, m.rows_won, m.rows_lost, m.scoop, m.royalty_points,
               m.points, m.settled
        FROM m JOIN s USING (player)
        ORDER BY s.position, m.opponent
    """
    return _frame(db, sql, [hand_key, hand_key])


# --- data -------------------------------------------------------------------------------------


def ingested_files(db: Database, limit: int = 200) -> pl.DataFrame:
    """Files read by ingest runs, most recent first."""
    sql = """
        SELECT path, format, size_bytes, ingested_at, records, stored, duplicates, rejected, status
        FROM ingested_files ORDER BY ingested_at DESC LIMIT ?
    """
    return _frame(db, sql, [limit])


def rejected_records(db: Database, limit: int = 500) -> pl.DataFrame:
    """Quarantined records with their reasons, most recent first."""
    sql = """
        SELECT path, line, hand_id, reason, left(raw, 400) AS raw, rejected_at
        FROM rejects ORDER BY rejected_at DESC, path, line LIMIT ?
    """
    return _frame(db, sql, [limit])


def audit_disagreements(db: Database, filters: Filters, limit: int = 500) -> pl.DataFrame:
    """Boards where the source's reported points differ from the re-score, most recent first."""
    scope = _scope(filters, include_players=False)
    players, params = _players(filters, "r")
    sql = f"""
        WITH found AS (
            SELECT r.hand_key, r.player, r.points, r.reported_points, r.disagreement
            FROM results r WHERE r.disagrees AND {scope.keeps('r')}{players}
        )
        SELECT h.hand_key, h.hand_id, h.site, h.started_at, f.player, f.points AS rescored,
               f.reported_points AS reported, f.disagreement,
               (SELECT count(*) FROM found) AS total
        FROM found f JOIN hands h ON h.hand_key = f.hand_key
        ORDER BY h.started_at DESC NULLS LAST, h.hand_key, f.player
        LIMIT ?
    """
    return _run(db, scope, sql, [*params, limit])


def disagreement_reasons(db: Database, filters: Filters) -> pl.DataFrame:
    """Audit disagreements counted by kind (the text before the first colon: foul, royalty,
    fantasyland, points...)."""
    scope = _scope(filters, include_players=False)
    players, params = _players(filters, "r")
    sql = f"""
        SELECT trim(split_part(coalesce(disagreement, 'points'), ':', 1)) AS disagreement,
               count(*) AS boards
        FROM results r WHERE r.disagrees AND {scope.keeps('r')}{players}
        GROUP BY ALL ORDER BY boards DESC, disagreement
    """
    return _run(db, scope, sql, params)


# --- small statistics (pure) ------------------------------------------------------------------


# --- coaching report --------------------------------------------------------------------------
# The report compares one player (several screen names merged) with everyone else, so these
# questions return per-player totals for every player in scope (dates and variants only; the
# heroes are picked out in pipeline.report). Totals are integer sums (and sums of squares for
# standard errors): exact, so the same database always gives the same report.


def _report_conditions(filters: Filters) -> tuple[str, list[Any]]:
    """Conditions on hands ``h`` for the report's scope: dates and variants."""
    conditions = ["TRUE"]
    params: list[Any] = []
    start, end = _day_bounds(filters)
    if start is not None:
        conditions.append("h.started_at >= ?")
        params.append(start)
    if end is not None:
        conditions.append("h.started_at < ?")
        params.append(end)
    if filters.variants:
        conditions.append(f"h.variant IN ({_placeholders(filters.variants)})")
        params.extend(filters.variants)
    return " AND ".join(conditions), params


FANTASYLAND_CARD_RANKS = ("Q", "K", "A")
"""A card of these ranks on the top row with the first five cards counts as chasing Fantasyland."""


def fantasyland_top_value() -> int:
    """The weakest top row that earns Fantasyland under the standard rule (QQ2), as a row value.

    ``evaluations.top_value`` at or above it means a pair of queens or better, or trips.
    """
    from pipeline.rules.cards import parse_cards
    from pipeline.rules.values import evaluate_row

    return evaluate_row(parse_cards("Qc Qd 2h"))


def _report_seats_cte(filters: Filters) -> tuple[str, list[Any]]:
    """``report_seats``: one row per board in scope with its verdict, result and chasing flag.

    With ``filters.players`` only their boards. ``chasing`` (a hand outside Fantasyland only):
    the final top row qualifies for Fantasyland under the standard rule (a pair of queens or
    better, or trips), or, when the streets are known, a queen, king or ace was placed on the
    top row with the first five cards. Joins use ON (not USING) and the row value instead of
    the board text: on a million hands that halves the time.
    """
    where, params = _report_conditions(filters)
    scoped = where != "TRUE"
    players = ""
    player_params: list[Any] = []
    if filters.players:
        players = f" AND {{alias}}.player IN ({_placeholders(filters.players)})"
        player_params = list(filters.players)
    ranks = " OR ".join("prefix(p.card, ?)" for _ in FANTASYLAND_CARD_RANKS)
    cte = f"""
        report_hands AS MATERIALIZED (
            SELECT h.hand_key, h.variant, h.player_count, h.has_streets FROM hands h WHERE {where}
        ), report_early AS (
            SELECT DISTINCT p.hand_key, p.player FROM placements p
            {"SEMI JOIN report_hands k ON k.hand_key = p.hand_key" if scoped else ""}
            WHERE p.street = 1 AND p.row_name = 'top' AND ({ranks}){players.format(alias="p")}
        ), report_seats AS (
            SELECT s.hand_key, s.player, k.variant, k.player_count, k.has_streets, s.position,
                   s.is_button, s.fantasyland, e.foul, e.royalty_top, e.royalty_middle,
                   e.royalty_bottom, e.fantasyland_next, r.points::BIGINT AS points,
                   NOT s.fantasyland AND (e.top_value >= ? OR x.player IS NOT NULL) AS chasing
            FROM seats s
            JOIN report_hands k ON k.hand_key = s.hand_key
            JOIN evaluations e ON e.hand_key = s.hand_key AND e.player = s.player
            JOIN results r ON r.hand_key = s.hand_key AND r.player = s.player
            LEFT JOIN report_early x ON x.hand_key = s.hand_key AND x.player = s.player
            WHERE TRUE{players.format(alias="s")}
        )"""
    return cte, [*params, *FANTASYLAND_CARD_RANKS, *player_params, fantasyland_top_value(),
                 *player_params]


def report_player_totals(db: Database, filters: Filters) -> pl.DataFrame:
    """Per player, variant, table size and position, every total the coaching report compares.

    Integer sums, so that adding rows up (per variant, per player) stays exact; one pass over
    the boards serves the player, the field, the percentiles and the seats. Columns: player,
    variant, player_count, position (0 acts first), is_button, hands, points, points_sq, fouls,
    foul_points (points won in fouled hands), normal_hands (outside Fantasyland), normal_fouls,
    chasing_hands, chasing_fouls, normal_points, normal_with_streets, fl_hands, fl_entries,
    fl_stays, fl_points, fl_points_sq, royalty_top, royalty_top_sq, royalty_middle,
    royalty_middle_sq, royalty_bottom, royalty_bottom_sq, opponents (sum over hands of the other
    players at the table).
    """
    cte, params = _report_seats_cte(filters)
    sql = f"""
        WITH {cte}
        SELECT player, variant, player_count, position, bool_or(is_button) AS is_button,
            count(*) AS hands,
            sum(points)::BIGINT AS points, sum(points * points)::BIGINT AS points_sq,
            count(*) FILTER (WHERE foul) AS fouls,
            coalesce(sum(points) FILTER (WHERE foul), 0)::BIGINT AS foul_points,
            count(*) FILTER (WHERE NOT fantasyland) AS normal_hands,
            count(*) FILTER (WHERE NOT fantasyland AND foul) AS normal_fouls,
            count(*) FILTER (WHERE chasing) AS chasing_hands,
            count(*) FILTER (WHERE chasing AND foul) AS chasing_fouls,
            coalesce(sum(points) FILTER (WHERE NOT fantasyland), 0)::BIGINT AS normal_points,
            count(*) FILTER (WHERE NOT fantasyland AND has_streets) AS normal_with_streets,
            count(*) FILTER (WHERE fantasyland) AS fl_hands,
            count(*) FILTER (WHERE NOT fantasyland AND fantasyland_next) AS fl_entries,
            count(*) FILTER (WHERE fantasyland AND fantasyland_next) AS fl_stays,
            coalesce(sum(points) FILTER (WHERE fantasyland), 0)::BIGINT AS fl_points,
            coalesce(sum(points * points) FILTER (WHERE fantasyland), 0)::BIGINT AS fl_points_sq,
            sum(royalty_top)::BIGINT AS royalty_top,
            sum(royalty_top * royalty_top)::BIGINT AS royalty_top_sq,
            sum(royalty_middle)::BIGINT AS royalty_middle,
            sum(royalty_middle * royalty_middle)::BIGINT AS royalty_middle_sq,
            sum(royalty_bottom)::BIGINT AS royalty_bottom,
            sum(royalty_bottom * royalty_bottom)::BIGINT AS royalty_bottom_sq,
            sum(player_count - 1)::BIGINT AS opponents
        FROM report_seats GROUP BY player, variant, player_count, position
        ORDER BY player, variant, player_count, position
    """
    return _frame(db, sql, params)


def report_matchup_totals(db: Database, filters: Filters) -> pl.DataFrame:
    """Per player and variant, their pairings with opponents: counts and settled points by scoop.

    Columns: player, variant, matchups, scoops (player scooped the opponent, fouls included),
    scooped, scoop_points, scooped_points, neither_points (settled points in each kind).
    """
    where, params = _report_conditions(filters)
    sql = f"""
        SELECT m.player, h.variant, count(*) AS matchups,
            count(*) FILTER (WHERE m.scoop > 0) AS scoops,
            count(*) FILTER (WHERE m.scoop < 0) AS scooped,
            coalesce(sum(m.settled) FILTER (WHERE m.scoop > 0), 0)::BIGINT AS scoop_points,
            coalesce(sum(m.settled) FILTER (WHERE m.scoop < 0), 0)::BIGINT AS scooped_points,
            coalesce(sum(m.settled) FILTER (WHERE m.scoop = 0), 0)::BIGINT AS neither_points
        FROM matchups m JOIN hands h ON h.hand_key = m.hand_key
        WHERE {where}
        GROUP BY m.player, h.variant ORDER BY m.player, h.variant
    """
    return _frame(db, sql, params)


def report_pair_totals(db: Database, filters: Filters) -> pl.DataFrame:
    """Per ordered pair (player, opponent): hands together and the player's settled points.

    Columns: player, opponent, hands, points, points_sq, scoops, scooped.
    """
    where, params = _report_conditions(filters)
    sql = f"""
        SELECT m.player, m.opponent, count(*) AS hands, sum(m.settled)::BIGINT AS points,
            sum(m.settled * m.settled)::BIGINT AS points_sq,
            count(*) FILTER (WHERE m.scoop > 0) AS scoops,
            count(*) FILTER (WHERE m.scoop < 0) AS scooped
        FROM matchups m JOIN hands h ON h.hand_key = m.hand_key
        WHERE {where}
        GROUP BY m.player, m.opponent ORDER BY m.player, m.opponent
    """
    return _frame(db, sql, params)


def report_player_hands(db: Database, filters: Filters) -> pl.DataFrame:
    """Every hand of the heroes (``filters.players``, required) in scope, in play order.

    Columns: hand_key, site, hand_id, table_name, started_at, variant, player_count, player,
    position, is_button, fantasyland, session_id, has_streets, foul, top_class, middle_class,
    bottom_class, royalty_top, royalty_middle, royalty_bottom, royalties, fantasyland_next,
    fantasyland_cards, points, chasing.
    """
    if not filters.players:
        raise ValueError("report_player_hands needs the heroes in filters.players")
    cte, params = _report_seats_cte(filters)
    sql = f"""
        WITH {cte}
        SELECT h.hand_key, h.site, h.hand_id, h.table_name, h.started_at, h.variant,
            h.player_count, x.player, x.position, x.is_button, x.fantasyland, s.session_id,
            h.has_streets, x.foul, e.top_class, e.middle_class, e.bottom_class,
            e.royalty_top, e.royalty_middle, e.royalty_bottom, e.royalties,
            e.fantasyland_next, e.fantasyland_cards, x.points, x.chasing
        FROM report_seats x
        JOIN hands h ON h.hand_key = x.hand_key
        JOIN seats s ON s.hand_key = x.hand_key AND s.player = x.player
        JOIN evaluations e ON e.hand_key = x.hand_key AND e.player = x.player
        ORDER BY h.started_at NULLS FIRST, h.hand_key, x.player
    """
    return _frame(db, sql, params)


# --- decision grading (ofc analyze; tables of pipeline/analysis) ------------------------------

GRADING_TABLES = ("decision_grades", "decision_alternatives", "fantasyland_grades")


def _grading_frame(db: Database, scope: _Scope, body: str, params: Sequence[Any] = ()) -> pl.DataFrame:
    """Like :func:`_run`; an empty frame (no columns) while nothing has been graded yet."""
    with reading(db) as connection:
        present = {row[0] for row in connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()}
        if not set(GRADING_TABLES) <= present:
            return pl.DataFrame()
        return connection.sql(scope.sql(body), params=[*scope.params, *params]).pl()


def grading_summary(db: Database, filters: Filters) -> pl.DataFrame:
    """Decision grades per player (the heroes, or everyone graded).

    Columns: player, decisions, hands, mistakes, correct_share (decisions not graded a
    mistake), ev_loss_per_decision, ev_loss_se, ev_loss_per_hand (summed over a hand's graded
    decisions), total_loss, rollouts (mean samples behind the chosen play), fl_hands (Fantasyland
    hands compared with the solver), fl_given_up, fl_given_up_per_hand, fl_optimal_share.
    """
    scope = _scope(filters, include_players=False)
    g_players, g_params = _players(filters, "g")
    f_players, f_params = _players(filters, "f")
    sql = f"""
        WITH per_hand AS (
            SELECT g.player, g.hand_key, sum(g.ev_loss) AS loss, count(*) AS decisions,
                   count(*) FILTER (WHERE g.mistake) AS mistakes,
                   sum(g.ev_loss * g.ev_loss) AS loss_squares, sum(g.rollouts) AS rollouts
            FROM decision_grades g WHERE {scope.keeps('g')}{g_players}
            GROUP BY g.player, g.hand_key
        ), decisions AS (
            SELECT player, sum(decisions)::BIGINT AS decisions, count(*) AS hands,
                   sum(mistakes)::BIGINT AS mistakes, sum(loss) AS total_loss,
                   sum(loss_squares) AS loss_squares, sum(rollouts) AS rollouts
            FROM per_hand GROUP BY player
        ), fantasyland AS (
            SELECT f.player, count(*) AS fl_hands, sum(f.points_given_up) AS fl_given_up,
                   count(*) FILTER (WHERE f.points_given_up < 1e-9) AS fl_optimal
            FROM fantasyland_grades f WHERE {scope.keeps('f')}{f_players} GROUP BY f.player
        )
        SELECT coalesce(d.player, f.player) AS player,
               coalesce(d.decisions, 0) AS decisions, coalesce(d.hands, 0) AS hands,
               coalesce(d.mistakes, 0) AS mistakes,
               1 - coalesce(d.mistakes, 0) / nullif(d.decisions, 0) AS correct_share,
               d.total_loss / nullif(d.decisions, 0) AS ev_loss_per_decision,
               coalesce(sqrt(greatest(0, (d.loss_squares - d.total_loss * d.total_loss / d.decisions)
                                      / nullif(d.decisions - 1, 0)) / d.decisions), 0) AS ev_loss_se,
               d.total_loss / nullif(d.hands, 0) AS ev_loss_per_hand,
               coalesce(d.total_loss, 0) AS total_loss,
               d.rollouts / nullif(d.decisions, 0) AS rollouts,
               coalesce(f.fl_hands, 0) AS fl_hands, coalesce(f.fl_given_up, 0) AS fl_given_up,
               f.fl_given_up / nullif(f.fl_hands, 0) AS fl_given_up_per_hand,
               f.fl_optimal / nullif(f.fl_hands, 0) AS fl_optimal_share
        FROM decisions d FULL OUTER JOIN fantasyland f USING (player)
        ORDER BY decisions DESC, player
    """
    return _grading_frame(db, scope, sql, [*g_params, *f_params])


def _grading_split(db: Database, filters: Filters, column: str) -> pl.DataFrame:
    scope = _scope(filters, include_players=False)
    g_players, g_params = _players(filters, "g")
    sql = f"""
        SELECT g.player, g.{column}, count(*) AS decisions,
               count(*) FILTER (WHERE g.mistake) AS mistakes,
               1 - count(*) FILTER (WHERE g.mistake) / count(*) AS correct_share,
               avg(g.ev_loss) AS ev_loss_per_decision, {_standard_error('g.ev_loss')} AS ev_loss_se,
               sum(g.ev_loss) AS total_loss
        FROM decision_grades g WHERE {scope.keeps('g')}{g_players}
        GROUP BY g.player, g.{column} ORDER BY g.player, g.{column}
    """
    return _grading_frame(db, scope, sql, g_params)


def grading_by_street(db: Database, filters: Filters) -> pl.DataFrame:
    """Decision grades per player and street (1-based): decisions, mistakes, correct_share,
    ev_loss_per_decision, ev_loss_se, total_loss."""
    return _grading_split(db, filters, "street")


def grading_by_situation(db: Database, filters: Filters) -> pl.DataFrame:
    """Decision grades per player and situation (``fantasyland_made``, ``fantasyland_draw``:
    going for Fantasyland, ``standard``): same columns as :func:`grading_by_street`."""
    return _grading_split(db, filters, "situation")


def worst_decisions(db: Database, filters: Filters, limit: int = 20,
                    mistakes_only: bool = False) -> pl.DataFrame:
    """The graded decisions with the largest EV loss, largest first.

    Columns: hand_key, hand_id, started_at, variant, player, street, situation, chosen,
    best, chosen_placement, best_placement, chosen_ev, best_ev, ev_loss, loss_se, mistake,
    rollouts, alternatives.
    """
    scope = _scope(filters, include_players=False)
    g_players, g_params = _players(filters, "g")
    only = " AND g.mistake" if mistakes_only else ""
    sql = f"""
        SELECT g.hand_key, h.hand_id, h.started_at, g.variant, g.player, g.street, g.situation,
               g.chosen, g.best, g.chosen_placement, g.best_placement, g.chosen_ev, g.best_ev,
               g.ev_loss, g.loss_se, g.mistake, g.rollouts, g.alternatives
        FROM decision_grades g JOIN hands h ON h.hand_key = g.hand_key
        WHERE {scope.keeps('g')}{g_players}{only}
        ORDER BY g.ev_loss DESC, g.hand_key, g.player, g.street
        LIMIT ?
    """
    return _grading_frame(db, scope, sql, [*g_params, limit])


def decision_alternatives(db: Database, hand_key: int, player: str, street: int) -> pl.DataFrame:
    """Every alternative of one graded decision, best estimate first.

    Columns: alternative, placement, top, middle, bottom, discards (cards this street sends to
    each row), equivalents, is_chosen, is_best, samples, ev, se, diff (vs the chosen play), diff_se.
    """
    sql = """
        SELECT alternative, placement, top, middle, bottom, discards, equivalents, is_chosen,
               is_best, samples, ev, se, diff, diff_se
        FROM decision_alternatives WHERE hand_key = ? AND player = ? AND street = ?
        ORDER BY diff DESC, alternative
    """
    return _grading_frame(db, _Scope(None, ()), sql, [hand_key, player, street])


def fantasyland_comparisons(db: Database, filters: Filters, limit: int = 200) -> pl.DataFrame:
    """Fantasyland hands compared with the exact setter, most points given up first.

    Columns: hand_key, hand_id, started_at, player, variant, cards_dealt, dealt, played rows
    and discards, played_foul, played_royalties, played_stays, played_value, solver rows and
    discards, solver_royalties, solver_stays, solver_value, points_given_up, stay_value.
    """
    scope = _scope(filters, include_players=False)
    f_players, f_params = _players(filters, "f")
    sql = f"""
        SELECT f.hand_key, h.hand_id, h.started_at, f.player, f.variant, f.cards_dealt, f.dealt,
               f.played_top, f.played_middle, f.played_bottom, f.played_discards, f.played_foul,
               f.played_royalties, f.played_stays, f.played_value,
               f.solver_top, f.solver_middle, f.solver_bottom, f.solver_discards,
               f.solver_royalties, f.solver_stays, f.solver_value, f.points_given_up, f.stay_value
        FROM fantasyland_grades f JOIN hands h ON h.hand_key = f.hand_key
        WHERE {scope.keeps('f')}{f_players}
        ORDER BY f.points_given_up DESC, h.started_at DESC NULLS LAST, f.hand_key, f.player
        LIMIT ?
    """
    return _grading_frame(db, scope, sql, [*f_params, limit])
