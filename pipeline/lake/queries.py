"""The SQL of a lake build and re-score, written once for both engines.

DuckDB (``--engine local``) and Spark SQL (``--engine spark``) run the same statements over the
same relations; a :class:`Dialect` supplies the few expressions they spell differently (epoch
microseconds, timestamp formatting, the timestamp type). The statements are:

* :func:`outcomes` — deduplication and conflict detection by hand key: every valid record of
  the commit against the lake's hands and each other; the first by (lake first, then file, then
  line) is the one stored, a later one with the same content is a duplicate, with other content
  a conflict naming the stored one;
* :func:`session_assignments` and :func:`session_rows` — sessions of the (site, table) pairs the
  commit touched, as :mod:`pipeline.ingest.sessions` defines them (the same ids): every seat of
  those tables again, when the gap changed;
* :func:`new_timed_seats`, :func:`near_sessions` and :func:`merged_sessions` — an append's
  sessions from the stored sessions near its new hands alone (what the commit costs does not
  grow with the lake);
* :func:`player_totals` — per-player additive sums (pre-aggregated ``ofc players``);
* helpers selecting what each table's files hold.

Relation names used: ``events`` (the units' events), ``frames_<table>`` (staged frames),
``lake_<table>`` (the committed lake), and the ones materialised along the way.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.lake.tables import (
    ORDER_COLUMN,
    PARTITION_COLUMNS,
    PARTITIONED_TABLES,
    file_schema,
)
from pipeline.store.aggregates import PLAYER_TOTAL_COLUMNS

__all__ = [
    "DUCKDB",
    "SPARK",
    "Dialect",
    "columns",
    "commit_report",
    "new_rows",
    "outcomes",
    "player_totals",
    "merged_sessions",
    "near_sessions",
    "new_timed_seats",
    "rescored_sessions",
    "session_assignments",
    "session_rows",
    "summed_player_totals",
]


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one engine spells what the other spells differently."""

    name: str
    timestamp_type: str
    epoch_micros: str  # format with {value}
    timestamp_text: str  # ISO text with microseconds, format with {value}
    month_text: str  # YYYY-MM, format with {value}
    anti_join: str  # the keywords of an anti join

    def micros(self, value: str) -> str:
        """Microseconds since the epoch of a timestamp expression."""
        return self.epoch_micros.format(value=value)

    def iso(self, value: str) -> str:
        """``YYYY-MM-DDTHH:MM:SS.ffffff`` of a timestamp expression."""
        return self.timestamp_text.format(value=value)

    def month(self, value: str) -> str:
        """``YYYY-MM`` of a timestamp expression."""
        return self.month_text.format(value=value)

    def timestamp(self, text: str) -> str:
        """A timestamp literal (naive, UTC)."""
        return f"CAST('{text}' AS {self.timestamp_type})"


DUCKDB = Dialect(
    name="duckdb", timestamp_type="TIMESTAMP",
    epoch_micros="epoch_us({value})",
    timestamp_text="strftime({value}, '%Y-%m-%dT%H:%M:%S.%f')",
    month_text="strftime({value}, '%Y-%m')",
    anti_join="ANTI JOIN",
)
SPARK = Dialect(
    name="spark", timestamp_type="TIMESTAMP_NTZ",
    epoch_micros="unix_micros(CAST({value} AS TIMESTAMP_LTZ))",
    timestamp_text="date_format({value}, \"yyyy-MM-dd'T'HH:mm:ss.SSSSSS\")",
    month_text="date_format({value}, 'yyyy-MM')",
    anti_join="LEFT ANTI JOIN",
)


def columns(table: str, alias: str = "", replace: dict[str, str] | None = None) -> str:
    """The columns a table's files hold, then its partition columns when it has them."""
    replace = replace or {}
    prefix = f"{alias}." if alias else ""
    names = [*file_schema(table).names]
    if table in PARTITIONED_TABLES:
        names += list(PARTITION_COLUMNS)
    return ", ".join(f"{replace[name]} AS {name}" if name in replace else f"{prefix}{name}"
                     for name in names)


def outcomes() -> str:
    """Each valid record of the commit (``events`` of kind ``hand``) with its outcome:
    ``stored``, ``duplicate`` or ``conflict``, and where the stored record of its key is."""
    return """
    WITH fresh AS (
        SELECT hand_key, content_hash, site, hand_id, path, line, ord, file_order
        FROM events WHERE kind = 'hand'
    ), everything AS (
        SELECT hand_key, content_hash, path, line, ord FROM fresh
        UNION ALL
        SELECT h.hand_key, h.content_hash, h.source_path, h.source_line, CAST(-1 AS BIGINT)
        FROM lake_hands h WHERE h.hand_key IN (SELECT hand_key FROM fresh)
    ), winners AS (
        SELECT hand_key, min(ord) AS ord, min_by(content_hash, ord) AS content_hash,
               min_by(path, ord) AS path, min_by(line, ord) AS line
        FROM everything GROUP BY hand_key
    )
    SELECT f.hand_key, f.content_hash, f.site, f.hand_id, f.path, f.line, f.ord, f.file_order,
           CASE WHEN f.ord = w.ord THEN 'stored'
                WHEN f.content_hash = w.content_hash THEN 'duplicate'
                ELSE 'conflict' END AS outcome,
           w.path AS winner_path, w.line AS winner_line
    FROM fresh f JOIN winners w ON w.hand_key = f.hand_key
    """


def commit_report(first_reasons: int) -> str:
    """Per file of the commit, one query (``what`` says which part a row is): ``unit`` (number =
    unit, count = records, text1 = why the reader gave up, text2 = the format read), ``outcome``
    (text1 = stored/duplicate/conflict, count), ``reason`` (the first reject reasons: number =
    line, text1 = reason, count = the file's rejects) and ``conflict`` (number = line, text1 =
    hand id, text2 = site, text3 = path, text4 and count = where the stored record is)."""
    return f"""
    SELECT 'unit' AS what, file_order, CAST(unit AS BIGINT) AS number, records AS count,
           failed AS text1, format AS text2, CAST(NULL AS STRING) AS text3,
           CAST(NULL AS STRING) AS text4
    FROM events WHERE kind = 'unit'
    UNION ALL
    SELECT 'outcome', file_order, CAST(NULL AS BIGINT), count(*), outcome, NULL, NULL, NULL
    FROM outcomes GROUP BY file_order, outcome
    UNION ALL
    SELECT 'reason', file_order, CAST(line AS BIGINT), total, reason, NULL, NULL, NULL
    FROM (
        SELECT file_order, line, reason,
               row_number() OVER (PARTITION BY file_order ORDER BY ord) AS n,
               count(*) OVER (PARTITION BY file_order) AS total
        FROM events WHERE kind = 'reject'
    ) ranked WHERE n <= {first_reasons}
    UNION ALL
    SELECT 'conflict', file_order, CAST(line AS BIGINT), CAST(winner_line AS BIGINT), hand_id,
           site, path, winner_path
    FROM outcomes WHERE outcome = 'conflict'
    """


def new_rows(table: str) -> str:
    """The staged rows of ``table`` that belong to the records stored by this commit."""
    return (f"SELECT f.* FROM frames_{table} f JOIN new_keys k "
            f"ON k.hand_key = f.hand_key AND k.ord = f.{ORDER_COLUMN}")


def session_assignments(dialect: Dialect, gap_minutes: float, every_table: bool) -> str:
    """Every timed seat of the touched (site, table) pairs (all pairs with ``every_table``),
    lake and new, with its session id: :mod:`pipeline.ingest.sessions`' definition."""
    gap = int(round(gap_minutes * 60_000_000))
    scope = "" if every_table else (
        "JOIN touched t ON t.site = h.site AND t.table_name IS NOT DISTINCT FROM h.table_name")
    return f"""
    WITH s AS (
        SELECT se.hand_key, se.player, h.site, h.table_name, h.started_at,
               coalesce(r.points, 0) AS points
        FROM lake_seats se
        JOIN lake_hands h ON h.hand_key = se.hand_key
        {scope}
        LEFT JOIN lake_results r ON r.hand_key = se.hand_key AND r.player = se.player
        WHERE h.started_at IS NOT NULL
        UNION ALL
        SELECT * FROM ({new_timed_seats()}) fresh
    ), g AS (
        SELECT s.*,
            CASE WHEN lag(started_at) OVER w IS NULL
                   OR {dialect.micros('started_at')} - {dialect.micros('lag(started_at) OVER w')}
                      >= {gap}
                 THEN 1 ELSE 0 END AS starts_session
        FROM s
        WINDOW w AS (PARTITION BY player, site, table_name ORDER BY started_at, hand_key)
    ), n AS (
        SELECT g.*,
            sum(starts_session) OVER (
                PARTITION BY player, site, table_name ORDER BY started_at, hand_key
                ROWS UNBOUNDED PRECEDING
            ) AS session_number
        FROM g
    ), k AS (
        -- the session's first start, by a window on the same partitions (no join, no shuffle)
        SELECT n.*,
            min(started_at) OVER (PARTITION BY player, site, table_name, session_number)
                AS session_start
        FROM n
    )
    SELECT hand_key, player, site, table_name, started_at, points,
        {_session_id(dialect, 'session_start')} AS session_id
    FROM k
    """


def _session_id(dialect: Dialect, start: str) -> str:
    """The session id of a row (player, site, table_name) whose session starts at ``start``:
    :mod:`pipeline.ingest.sessions`' hash."""
    return (f"'S' || substr(md5(player || chr(31) || site || chr(31) || "
            f"coalesce(table_name, '') || chr(31) || {dialect.iso(start)}), 1, 15)")


def new_timed_seats() -> str:
    """The commit's new seats with a start time: hand, player, site, table, start, points."""
    return """
    SELECT se.hand_key, se.player, h.site, h.table_name, h.started_at,
           coalesce(r.points, 0) AS points
    FROM new_seats se
    JOIN new_hands h ON h.hand_key = se.hand_key
    LEFT JOIN new_results r ON r.hand_key = se.hand_key AND r.player = se.player
    WHERE h.started_at IS NOT NULL
    """


def near_sessions(dialect: Dialect, gap_minutes: float) -> str:
    """The stored sessions (``lake_sessions``, with ``_file``) a new seat (``new_timed``) may
    join: of the same player, site and table, within the gap of the player's new hands there
    (between the first new start minus the gap and the last plus the gap). Every other stored
    session stays as it is: sessions are runs split by breaks of the gap or more, and it is
    separated by such a break from every new hand and from the sessions near them."""
    gap = int(round(gap_minutes * 60_000_000))
    return f"""
    WITH n AS (
        SELECT player, site, table_name, min(started_at) AS first_start,
               max(started_at) AS last_start
        FROM new_timed GROUP BY player, site, table_name
    )
    SELECT s.session_id, s.player, s.site, s.table_name, s.started_at, s.ended_at, s.hands,
           s.points, s._file
    FROM lake_sessions s
    JOIN n ON n.player = s.player AND n.site = s.site
          AND n.table_name IS NOT DISTINCT FROM s.table_name
    WHERE {dialect.micros('s.ended_at')} >= {dialect.micros('n.first_start')} - {gap}
      AND {dialect.micros('s.started_at')} <= {dialect.micros('n.last_start')} + {gap}
    """


def merged_sessions(dialect: Dialect, gap_minutes: float) -> str:
    """The near stored sessions (``near``) and the new timed seats (``new_timed``) as blocks
    in play order, each with the id of the session it is in now.

    A stored session is one run of hands with breaks shorter than the gap; a new seat a run of
    one. Runs in order of their starts: a run starts a new session when its start is the gap
    or more after the latest end of the runs before it (nothing lies between), and joins the
    session before it otherwise (it starts before that end, or less than the gap after it, so
    some hand of the runs before is closer than the gap). That gives the sessions a pass over
    every seat gives (:func:`session_assignments`), with the same ids. ``kind`` says what a
    row is: ``stored`` (``old_id``: its id until now) or ``new`` (``hand_key``)."""
    gap = int(round(gap_minutes * 60_000_000))
    order = ("PARTITION BY player, site, table_name "
             "ORDER BY started_at, kind, hand_key, old_id")
    return f"""
    WITH b AS (
        SELECT 'stored' AS kind, session_id AS old_id, CAST(NULL AS BIGINT) AS hand_key,
               player, site, table_name, started_at, ended_at, hands,
               CAST(points AS BIGINT) AS points
        FROM near
        UNION ALL
        SELECT 'new', CAST(NULL AS STRING), hand_key, player, site, table_name, started_at,
               started_at, 1, CAST(points AS BIGINT)
        FROM new_timed
    ), g AS (
        SELECT b.*,
            CASE WHEN max({dialect.micros('ended_at')}) OVER (
                        {order} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) IS NULL
                   OR {dialect.micros('started_at')} - max({dialect.micros('ended_at')}) OVER (
                        {order} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) >= {gap}
                 THEN 1 ELSE 0 END AS starts_session
        FROM b
    ), n AS (
        SELECT g.*, sum(starts_session) OVER ({order} ROWS UNBOUNDED PRECEDING) AS number
        FROM g
    ), k AS (
        SELECT n.*,
            min(started_at) OVER (PARTITION BY player, site, table_name, number)
                AS session_start
        FROM n
    )
    SELECT kind, old_id, hand_key, player, site, table_name, started_at, ended_at, hands,
           points, {_session_id(dialect, 'session_start')} AS session_id
    FROM k
    """


def session_rows(dialect: Dialect, source: str = "assignments") -> str:
    """The sessions of ``assignments`` (one row per seat), in the sessions table's columns
    (and month); with ``source="merged"``, of :func:`merged_sessions`' blocks."""
    if source == "merged":
        ended, hands = "max(ended_at)", "sum(hands)"
    else:
        ended, hands = "max(started_at)", "count(*)"
    return f"""
    SELECT session_id, any_value(player) AS player, any_value(table_name) AS table_name,
           min(started_at) AS started_at, {ended} AS ended_at,
           CAST({hands} AS INTEGER) AS hands, CAST(sum(points) AS BIGINT) AS points,
           any_value(site) AS site, {dialect.month('min(started_at)')} AS month
    FROM {source} GROUP BY session_id
    """


def rescored_sessions() -> str:
    """Every session with its points recomputed from ``lake_results`` (after a re-score: which
    hands form a session depends on times only)."""
    return f"""
    WITH t AS (
        SELECT se.session_id, sum(coalesce(r.points, 0)) AS points
        FROM lake_seats se
        LEFT JOIN lake_results r ON r.hand_key = se.hand_key AND r.player = se.player
        WHERE se.session_id IS NOT NULL
        GROUP BY se.session_id
    )
    SELECT {columns('sessions', 's', {'points': 'CAST(coalesce(t.points, s.points) AS BIGINT)'})}
    FROM lake_sessions s LEFT JOIN t ON t.session_id = s.session_id
    """


def player_totals(seats: str, results: str, evaluations: str, matchups: str,
                  earlier: str | None) -> str:
    """Per-player sums over the given relations, added to the ``earlier`` totals when given
    (the figures of :func:`pipeline.read.players.player_kpis`, unfiltered)."""
    fresh = f"""
        WITH in_fl AS (
            SELECT hand_key, player FROM {seats} WHERE fantasyland
        ), p AS (
            SELECT r.player, count(*) AS hands, sum(r.points) AS points,
                   sum(CAST(r.points AS BIGINT) * r.points) AS points_squares,
                   count_if(r.disagrees) AS disagreements, count(f.player) AS fl_hands,
                   coalesce(sum(CASE WHEN f.player IS NOT NULL THEN r.points END), 0)
                       AS fl_points
            FROM {results} r
            LEFT JOIN in_fl f ON f.hand_key = r.hand_key AND f.player = r.player
            GROUP BY r.player
        ), b AS (
            SELECT e.player, count_if(e.foul) AS fouls, sum(e.royalties) AS royalties,
                   count_if(e.fantasyland_next) AS fl_next,
                   count_if(e.fantasyland_next AND f.player IS NOT NULL) AS fl_stays
            FROM {evaluations} e
            LEFT JOIN in_fl f ON f.hand_key = e.hand_key AND f.player = e.player
            GROUP BY e.player
        ), m AS (
            SELECT player, count(*) AS matchups, count_if(scoop > 0) AS scoops,
                   count_if(scoop < 0) AS scooped
            FROM {matchups} GROUP BY player
        )
        SELECT p.player, p.hands, p.points, p.points_squares, p.disagreements, p.fl_hands,
               p.fl_points, coalesce(b.fouls, 0) AS fouls, coalesce(b.royalties, 0) AS royalties,
               coalesce(b.fl_next, 0) AS fl_next, coalesce(b.fl_stays, 0) AS fl_stays,
               coalesce(m.matchups, 0) AS matchups, coalesce(m.scoops, 0) AS scoops,
               coalesce(m.scooped, 0) AS scooped
        FROM p LEFT JOIN b ON b.player = p.player LEFT JOIN m ON m.player = p.player
    """
    return _added_to(fresh, earlier)


def summed_player_totals(partials: str, earlier: str | None) -> str:
    """The per-player sums of ``partials`` (several rows per player: :func:`player_totals` of
    parts of the hands, each hand in one part; every column is a sum or a count, so the parts
    add up to the whole), added to the ``earlier`` totals when given."""
    sums = ", ".join(f"sum({name}) AS {name}" for name in PLAYER_TOTAL_COLUMNS)
    return _added_to(f"SELECT player, {sums} FROM {partials} GROUP BY player", earlier)


def _added_to(fresh: str, earlier: str | None) -> str:
    """Per-player sums ``fresh`` (one row per player) as BIGINT, added to ``earlier``'s."""
    if earlier is None:
        sums = ", ".join(f"CAST(f.{name} AS BIGINT) AS {name}" for name in PLAYER_TOTAL_COLUMNS)
        return f"SELECT f.player, {sums} FROM ({fresh}) f"
    sums = ", ".join(
        f"CAST(coalesce(o.{name}, 0) + coalesce(f.{name}, 0) AS BIGINT) AS {name}"
        for name in PLAYER_TOTAL_COLUMNS
    )
    return (f"SELECT coalesce(o.player, f.player) AS player, {sums} "
            f"FROM {earlier} o FULL OUTER JOIN ({fresh}) f ON f.player = o.player")
