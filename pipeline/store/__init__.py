"""The DuckDB database: this module alone owns the schema (documented in schemas/database.md).

Everything else reads through :mod:`pipeline.read` or writes hand data through
:mod:`pipeline.ingest` (its :mod:`~pipeline.ingest.writer`). Connections are short-lived: DuckDB
lets one process write at a time, so readers (the dashboard) open, query and close, and writers
retry briefly while a reader holds the file.

Modules: this one (schema, migrations, connections, keys, meta, frame inserts),
:mod:`~pipeline.store.aggregates` (what the kept aggregates are: versions, grains, sums, the
SQL the writers and the read model share), :mod:`~pipeline.store.export` (the database as
partitioned Parquet) and :mod:`~pipeline.store.live_sessions` (the live sessions being
recorded, for resuming them).

Layer: imports no other part of :mod:`pipeline` (but the rules core, for one value of the
aggregates' definition). May be imported by the layers above it: ingest,
simulate, analysis, read, report, live, cli and the dashboard. Importing it loads DuckDB, so the
rules, solver, records and formats layers never do.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

SCHEMA_VERSION = 2
DEFAULT_DATABASE = "ofc.duckdb"

# Player tables carry no PRIMARY KEY: (hand_key, player[, opponent]) is unique by construction
# (ingest stores each hand_key once; validation makes names unique within a hand), and keeping
# ART indexes up to date costs more than half of the insert time at a million hands.
SCHEMA_STATEMENTS: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS meta (
        key VARCHAR PRIMARY KEY,
        value VARCHAR
    )""",
    # One row per file ingest run that read a file (a re-run of an unchanged file is recorded as
    # a no-op with zero stored).
    """CREATE TABLE IF NOT EXISTS ingested_files (
        path VARCHAR NOT NULL,
        content_hash VARCHAR NOT NULL,   -- sha256 of the file's bytes
        format VARCHAR,
        size_bytes BIGINT,
        ingested_at TIMESTAMP NOT NULL,
        records INTEGER NOT NULL,        -- records found in the file
        stored INTEGER NOT NULL,         -- new hands stored
        duplicates INTEGER NOT NULL,     -- hands already in the database (same content)
        rejected INTEGER NOT NULL,       -- records quarantined
        status VARCHAR NOT NULL,         -- complete | unchanged | empty | failed
        message VARCHAR                  -- why a file failed / what it repeats (null otherwise)
    )""",
    """CREATE TABLE IF NOT EXISTS hands (
        hand_key BIGINT PRIMARY KEY,     -- hand_key(site, hand_id)
        site VARCHAR NOT NULL,
        hand_id VARCHAR NOT NULL,
        table_name VARCHAR,
        started_at TIMESTAMP,            -- UTC
        variant VARCHAR NOT NULL,        -- classic | pineapple | 2-7-pineapple
        rules VARCHAR NOT NULL,          -- rules named by the record
        button VARCHAR,
        player_count TINYINT NOT NULL,
        has_streets BOOLEAN NOT NULL,
        any_fantasyland BOOLEAN NOT NULL,
        content_hash VARCHAR NOT NULL,   -- hash of the canonical record (conflict detection)
        source_path VARCHAR,
        source_line INTEGER,
        extra JSON,                      -- unknown hand-level fields, kept verbatim
        match_id VARCHAR                 -- the match the hand belongs to (null: none)
    )""",
    """CREATE TABLE IF NOT EXISTS seats (
        hand_key BIGINT NOT NULL,
        player VARCHAR NOT NULL,
        seat SMALLINT NOT NULL,
        position TINYINT NOT NULL,       -- settlement/action order: 0 = left of the button
        is_button BOOLEAN NOT NULL,
        fantasyland BOOLEAN NOT NULL,    -- dealt a Fantasyland hand
        cards_dealt TINYINT,             -- null when streets are unknown
        reported_points DOUBLE,          -- what the source recorded, null when it did not
        session_id VARCHAR,              -- see sessions
        extra JSON
    )""",
    """CREATE TABLE IF NOT EXISTS placements (
        hand_key BIGINT NOT NULL,
        player VARCHAR NOT NULL,
        street TINYINT NOT NULL,         -- 1-based, deal order
        card_order TINYINT NOT NULL,     -- order within the street's placements
        card VARCHAR NOT NULL,
        row_name VARCHAR NOT NULL        -- top | middle | bottom
    )""",
    """CREATE TABLE IF NOT EXISTS discards (
        hand_key BIGINT NOT NULL,
        player VARCHAR NOT NULL,
        street TINYINT NOT NULL,
        card VARCHAR NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS boards (
        hand_key BIGINT NOT NULL,
        player VARCHAR NOT NULL,
        top VARCHAR NOT NULL,            -- cards space-separated, placement order
        middle VARCHAR NOT NULL,
        bottom VARCHAR NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS evaluations (
        hand_key BIGINT NOT NULL,
        player VARCHAR NOT NULL,
        ruleset VARCHAR NOT NULL,        -- rule set the verdict was computed under
        top_class VARCHAR NOT NULL,
        middle_class VARCHAR NOT NULL,
        bottom_class VARCHAR NOT NULL,
        top_value INTEGER NOT NULL,
        middle_value INTEGER NOT NULL,
        bottom_value INTEGER NOT NULL,
        foul BOOLEAN NOT NULL,
        royalty_top SMALLINT NOT NULL,   -- collected (0 when fouled)
        royalty_middle SMALLINT NOT NULL,
        royalty_bottom SMALLINT NOT NULL,
        royalties SMALLINT NOT NULL,
        fantasyland_next BOOLEAN NOT NULL,
        fantasyland_cards TINYINT NOT NULL,
        raw_royalty_top SMALLINT,        -- royalties the rows earn before a foul voids them
        raw_royalty_middle SMALLINT,
        raw_royalty_bottom SMALLINT
    )""",
    # One row per ordered pair (both directions), from `player`'s point of view.
    """CREATE TABLE IF NOT EXISTS matchups (
        hand_key BIGINT NOT NULL,
        player VARCHAR NOT NULL,
        opponent VARCHAR NOT NULL,
        rows_won TINYINT NOT NULL,
        rows_lost TINYINT NOT NULL,
        scoop TINYINT NOT NULL,          -- +1 player scooped, -1 was scooped, 0 neither
        royalty_points INTEGER NOT NULL,
        points INTEGER NOT NULL,         -- before any cap
        settled INTEGER NOT NULL         -- after the cap (= points without one)
    )""",
    """CREATE TABLE IF NOT EXISTS results (
        hand_key BIGINT NOT NULL,
        player VARCHAR NOT NULL,
        points INTEGER NOT NULL,         -- re-scored
        reported_points DOUBLE,
        disagrees BOOLEAN NOT NULL,
        disagreement VARCHAR             -- why, when the source disagrees (foul, royalty, fantasyland, points)
    )""",
    """CREATE TABLE IF NOT EXISTS sessions (
        session_id VARCHAR PRIMARY KEY,
        player VARCHAR NOT NULL,
        site VARCHAR NOT NULL,
        table_name VARCHAR,
        started_at TIMESTAMP,
        ended_at TIMESTAMP,
        hands INTEGER NOT NULL,
        points BIGINT NOT NULL,
        fouls BIGINT,                    -- boards fouled in the session
        royalties BIGINT                 -- royalty points collected in the session
    )""",
    # Per session and game (kept with sessions, pipeline/ingest/sessions.py): the sums a trend
    # across sessions needs, so it reads no hand of the players compared.
    """CREATE TABLE IF NOT EXISTS session_totals (
        session_id VARCHAR NOT NULL,
        player VARCHAR NOT NULL,
        variant VARCHAR NOT NULL,
        rules VARCHAR NOT NULL,
        player_count TINYINT NOT NULL,
        hands BIGINT NOT NULL,
        points BIGINT NOT NULL,
        points_sq BIGINT NOT NULL,
        fouls BIGINT NOT NULL,
        first_started_at TIMESTAMP NOT NULL,  -- the first of these hands (start, then key)
        first_hand_key BIGINT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS rejects (
        path VARCHAR NOT NULL,
        line INTEGER,
        hand_id VARCHAR,
        reason VARCHAR NOT NULL,
        raw VARCHAR,
        rejected_at TIMESTAMP NOT NULL,
        kind VARCHAR,                    -- read | damaged | invalid | rules | conflict | file
        conflict_with VARCHAR,           -- conflict: "path:line" of the hand already stored
        reject_key VARCHAR,              -- hash of (path, line, reason, raw): makes rejects idempotent
        site VARCHAR,                    -- the record's site when it could be read
        resolved_at TIMESTAMP,           -- when a hand of this id was stored after all (null: open)
        resolved_by VARCHAR              -- "path:line" of the stored hand that resolved it
    )""",
    # Aggregates kept by the writers in the transaction that changes the hands they count
    # (pipeline/ingest/aggregates.py): exact integer sums, so any set of rows adds up to what a
    # pass over the boards gives. No key constraint: the grain is unique by construction.
    """CREATE TABLE IF NOT EXISTS board_totals (
        player VARCHAR NOT NULL,
        day DATE,                        -- started_at's day (UTC); null for undated hands
        variant VARCHAR NOT NULL,
        rules VARCHAR NOT NULL,
        player_count TINYINT NOT NULL,
        position TINYINT NOT NULL,
        fantasyland BOOLEAN NOT NULL,    -- dealt Fantasyland
        foul BOOLEAN NOT NULL,
        boards BIGINT NOT NULL,
        buttons BIGINT NOT NULL,         -- boards on the button
        with_streets BIGINT NOT NULL,    -- boards of hands whose streets are known
        chasing BIGINT NOT NULL,         -- boards chasing Fantasyland (see the documentation)
        fantasyland_next BIGINT NOT NULL,
        disagreements BIGINT NOT NULL,
        points BIGINT NOT NULL,          -- results.points, summed
        points_sq BIGINT NOT NULL,
        royalty_top BIGINT NOT NULL,
        royalty_top_sq BIGINT NOT NULL,
        royalty_middle BIGINT NOT NULL,
        royalty_middle_sq BIGINT NOT NULL,
        royalty_bottom BIGINT NOT NULL,
        royalty_bottom_sq BIGINT NOT NULL,
        matchups BIGINT NOT NULL,        -- pairings (matchups rows) of the boards
        scoops BIGINT NOT NULL,
        scooped BIGINT NOT NULL,
        paired_boards BIGINT NOT NULL,   -- boards with at least one pairing
        settled BIGINT NOT NULL,         -- per board: its pairings' settled points; summed
        settled_sq BIGINT NOT NULL,
        royalty_points BIGINT NOT NULL,  -- per board: its pairings' royalty points; summed
        royalty_points_sq BIGINT NOT NULL,
        royalty_settled BIGINT NOT NULL  -- per board: royalty points times settled; summed
    )""",
    # Per pairing of a board with one opponent: s = its settled points against the opponent,
    # u = its royalty points against the opponent, S and U = the board's totals over all its
    # pairings; every column is summed over the pairings of the row's grain.
    """CREATE TABLE IF NOT EXISTS pair_totals (
        player VARCHAR NOT NULL,
        opponent VARCHAR NOT NULL,
        day DATE,
        variant VARCHAR NOT NULL,
        rules VARCHAR NOT NULL,
        player_count TINYINT NOT NULL,
        position TINYINT NOT NULL,       -- the player's
        fantasyland BOOLEAN NOT NULL,    -- the player's
        foul BOOLEAN NOT NULL,           -- the player's
        hands BIGINT NOT NULL,           -- pairings (hands together)
        points BIGINT NOT NULL,          -- s
        points_sq BIGINT NOT NULL,       -- s * s
        scoops BIGINT NOT NULL,
        scooped BIGINT NOT NULL,
        scoop_points BIGINT NOT NULL,    -- s of pairings the player scooped
        scooped_points BIGINT NOT NULL,
        neither_points BIGINT NOT NULL,
        fantasyland_next BIGINT NOT NULL,  -- the player's board earns or keeps Fantasyland
        royalty BIGINT NOT NULL,         -- u
        royalty_sq BIGINT NOT NULL,      -- u * u
        royalty_points BIGINT NOT NULL,  -- u * s
        board_points BIGINT NOT NULL,    -- S
        board_points_sq BIGINT NOT NULL,   -- S * S
        board_royalty BIGINT NOT NULL,     -- U
        board_royalty_sq BIGINT NOT NULL,  -- U * U
        board_royalty_points BIGINT NOT NULL,  -- U * S
        cross_points BIGINT NOT NULL,          -- S * s
        cross_royalty BIGINT NOT NULL,         -- U * u
        cross_royalty_points BIGINT NOT NULL,  -- U * s
        cross_points_royalty BIGINT NOT NULL   -- S * u
    )""",
    # Each player's hands in play order (started_at, undated first, then hand_key), kept with
    # the aggregates (pipeline/ingest/play_order.py): one row per result.
    """CREATE TABLE IF NOT EXISTS play_order (
        player VARCHAR NOT NULL,
        hand_number BIGINT NOT NULL,     -- 1-based among the player's hands
        hand_key BIGINT NOT NULL,
        started_at TIMESTAMP,
        cumulative BIGINT NOT NULL,      -- results.points over hands 1..hand_number
        fouls BIGINT NOT NULL,           -- fouled boards over hands 1..hand_number
        -- the hand itself (what a rolling window needs; null only in a numbering older than
        -- these columns, which is rebuilt before any reader trusts it)
        variant VARCHAR,
        player_count TINYINT,
        points INTEGER,                  -- results.points
        foul BOOLEAN                     -- the board fouled
    )""",
    # One row per hand: what the hand browser shows beside each hand, kept with the aggregates
    # (pipeline/ingest/aggregates.py; rebuilt by a re-score: fouls and disagreements follow
    # the rules), so that a page of hands reads one row each instead of every board's.
    """CREATE TABLE IF NOT EXISTS hand_summaries (
        hand_key BIGINT NOT NULL,
        players VARCHAR,                 -- the players in seat order, ", " between them
        disagreements BIGINT,            -- results whose source recorded another result
        fouls BIGINT,                    -- fouled boards (null: the hand has no evaluation)
        max_royalties SMALLINT           -- the most royalties on one board
    )""",
    """CREATE TABLE IF NOT EXISTS fantasyland_draws (
        hand_key BIGINT NOT NULL,        -- a board that put a Q, K or A on top on street 1
        player VARCHAR NOT NULL
    )""",
    # Decision grading (`ofc analyze`, pipeline/analysis): one row per graded street of a player.
    """CREATE TABLE IF NOT EXISTS decision_grades (
        hand_key BIGINT NOT NULL,
        player VARCHAR NOT NULL,
        street TINYINT NOT NULL,         -- 1-based, as placements.street
        variant VARCHAR NOT NULL,
        ruleset VARCHAR NOT NULL,
        situation VARCHAR NOT NULL,      -- fantasyland_made | fantasyland_draw | standard
        legal_placements SMALLINT NOT NULL,
        alternatives SMALLINT NOT NULL,  -- distinct alternatives after symmetry pruning
        chosen SMALLINT NOT NULL,        -- decision_alternatives.alternative of the play made
        best SMALLINT NOT NULL,
        chosen_placement VARCHAR NOT NULL,
        best_placement VARCHAR NOT NULL,
        chosen_ev DOUBLE NOT NULL,
        chosen_se DOUBLE,
        best_ev DOUBLE NOT NULL,
        best_se DOUBLE,
        ev_loss DOUBLE NOT NULL,         -- best minus chosen (paired estimate), 0 when chosen is best
        loss_se DOUBLE NOT NULL,
        z DOUBLE NOT NULL,               -- threshold: mistake when ev_loss > z * loss_se
        mistake BOOLEAN NOT NULL,
        rollouts INTEGER NOT NULL,       -- samples behind the chosen placement
        policy VARCHAR NOT NULL,
        fantasyland_value DOUBLE NOT NULL,
        seed BIGINT NOT NULL,
        fingerprint VARCHAR NOT NULL,    -- what the samples depend on (refined only when equal)
        graded_at TIMESTAMP NOT NULL,
        exact BOOLEAN,                   -- every deal of the unseen cards enumerated (SE 0)
        evaluation_rollouts INTEGER,     -- independent samples behind ev_loss (0: best = chosen)
        mistake_type VARCHAR,            -- what the best play changes (null when best = chosen)
        policy_alternative SMALLINT,     -- the alternative the rollout policy itself plays
        policy_gap DOUBLE,               -- its value minus the play made's (null: not measured)
        policy_gap_se DOUBLE,
        uncertain BOOLEAN,               -- a mistake the second continuation does not confirm
        second_policy VARCHAR,           -- the second continuation's bot (null: no second look)
        second_loss DOUBLE,              -- the loss under it (null: not looked: not a mistake)
        second_loss_se DOUBLE,
        grader_version INTEGER           -- the grader that wrote the row (null: before versions)
    )""",
    """CREATE TABLE IF NOT EXISTS decision_alternatives (
        hand_key BIGINT NOT NULL,
        player VARCHAR NOT NULL,
        street TINYINT NOT NULL,
        alternative SMALLINT NOT NULL,   -- 0-based index within the decision
        placement VARCHAR NOT NULL,      -- "top Qs · middle 7c 7s · bottom – · discard 3d"
        top VARCHAR NOT NULL,            -- cards this street sends to each row, space-separated
        middle VARCHAR NOT NULL,
        bottom VARCHAR NOT NULL,
        discards VARCHAR NOT NULL,
        equivalents SMALLINT NOT NULL,   -- legal placements this one stands for
        is_chosen BOOLEAN NOT NULL,
        is_best BOOLEAN NOT NULL,
        samples INTEGER NOT NULL,
        total DOUBLE NOT NULL,           -- running sums (refined by later runs)
        total_sq DOUBLE NOT NULL,
        diff_total DOUBLE NOT NULL,      -- of the paired difference to the chosen placement
        diff_total_sq DOUBLE NOT NULL,
        ev DOUBLE NOT NULL,
        se DOUBLE,
        diff DOUBLE NOT NULL,
        diff_se DOUBLE,
        eval_samples INTEGER,            -- the evaluation stream (selected and chosen play only)
        eval_total DOUBLE,
        eval_total_sq DOUBLE,
        eval_diff_total DOUBLE,
        eval_diff_total_sq DOUBLE,
        eval_ev DOUBLE,
        eval_se DOUBLE,
        exact BOOLEAN                    -- samples are every possible deal, each once
    )""",
    # How far `ofc watch` has read each file it follows: written in the same transaction as the
    # hands read up to there, so a watcher killed at any moment goes on where it stopped.
    """CREATE TABLE IF NOT EXISTS file_offsets (
        path VARCHAR PRIMARY KEY,        -- absolute path of the file (as hands.source_path)
        format VARCHAR,                  -- its reader (null until the format is known)
        bytes_read BIGINT NOT NULL,      -- bytes [0, bytes_read) are read (of the decompressed data for gzip)
        lines_read BIGINT NOT NULL,      -- the number of the last line read (0: none)
        mid_line BOOLEAN NOT NULL,       -- the bytes read end inside that line (taken as it was once the file went idle)
        read_hash VARCHAR NOT NULL,      -- SHA-256 of the bytes read: a file whose start changed is read again
        reader_state JSON,               -- what the reader needs to go on (poker-arena game and match, boards-CSV header and hands seen)
        records BIGINT NOT NULL,         -- counts since the file was first read (or last replaced)
        stored BIGINT NOT NULL,
        duplicates BIGINT NOT NULL,
        rejected BIGINT NOT NULL,
        notes JSON,                      -- unreadable records, why the file ends early, first warnings
        size_bytes BIGINT,               -- the file's size and modification time when last read
        modified_ns BIGINT,
        recorded_hash VARCHAR,           -- content hash of the version last recorded in ingested_files
        updated_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS fantasyland_grades (
        hand_key BIGINT NOT NULL,
        player VARCHAR NOT NULL,
        variant VARCHAR NOT NULL,
        ruleset VARCHAR NOT NULL,
        cards_dealt TINYINT NOT NULL,
        dealt VARCHAR NOT NULL,
        played_top VARCHAR NOT NULL,
        played_middle VARCHAR NOT NULL,
        played_bottom VARCHAR NOT NULL,
        played_discards VARCHAR NOT NULL,
        played_foul BOOLEAN NOT NULL,
        played_royalties SMALLINT NOT NULL,
        played_stays BOOLEAN NOT NULL,
        played_value DOUBLE NOT NULL,    -- royalties + stay_value when the board stays
        solver_top VARCHAR NOT NULL,
        solver_middle VARCHAR NOT NULL,
        solver_bottom VARCHAR NOT NULL,
        solver_discards VARCHAR NOT NULL,
        solver_royalties SMALLINT NOT NULL,
        solver_stays BOOLEAN NOT NULL,
        solver_value DOUBLE NOT NULL,
        points_given_up DOUBLE NOT NULL, -- solver_value - played_value
        stay_value DOUBLE NOT NULL,
        graded_at TIMESTAMP NOT NULL
    )""",
    # Live sessions being recorded (pipeline.live): one row per session, rewritten after every
    # change, so a reload or another device can resume it. Its saved hands are ordinary hands.
    """CREATE TABLE IF NOT EXISTS live_sessions (
        session_id VARCHAR PRIMARY KEY,
        players VARCHAR NOT NULL,        -- names in seat order, ", " between them
        started_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        ended_at TIMESTAMP,              -- null while open (offered for resume)
        hands INTEGER NOT NULL,          -- hands saved so far
        totals JSON NOT NULL,            -- {player: points} over the saved hands
        revision INTEGER NOT NULL,       -- +1 per write; a stale writer is refused
        writer VARCHAR,                  -- who wrote that revision (a page view, a terminal)
        state JSON NOT NULL              -- pipeline.live.state: session, draft hand, last action
    )""",
    # The trainer (dashboard page Trainer): one row per quiz answer on a graded decision.
    """CREATE TABLE IF NOT EXISTS trainer_answers (
        hand_key BIGINT NOT NULL,
        player VARCHAR NOT NULL,         -- whose decision the quiz replays
        street TINYINT NOT NULL,
        variant VARCHAR NOT NULL,
        mistake_type VARCHAR NOT NULL,   -- decision_grades.mistake_type of the replayed decision
        answered_at TIMESTAMP NOT NULL,  -- UTC
        answer_placement VARCHAR NOT NULL,
        answer_alternative SMALLINT,     -- decision_alternatives.alternative the answer matches
        answer_ev DOUBLE,
        best_ev DOUBLE,
        answer_loss DOUBLE NOT NULL,     -- best play's value minus the answer's (0: the best play)
        correct BOOLEAN NOT NULL         -- the best play, or not clearly worse than it
    )""",
)


def _rollup_statement(table: str) -> str:
    """The day-free rollup of an aggregate table: its statement with the name
    ``{table}_all`` and without the ``day`` column."""
    marker = f"CREATE TABLE IF NOT EXISTS {table} ("
    statement = next(item for item in SCHEMA_STATEMENTS if item.startswith(marker))
    lines = [line for line in statement.splitlines() if not line.strip().startswith("day DATE")]
    return "\n".join(lines).replace(marker, f"CREATE TABLE IF NOT EXISTS {table}_all (", 1)


ROLLUP_TABLES: tuple[str, ...] = ("board_totals_all", "pair_totals_all")
"""``board_totals`` and ``pair_totals`` summed over every day (pipeline/ingest/aggregates.py):
the grain without ``day``, a few hundred rows per player instead of one per day, for the
questions that filter no date (the comparison pages, the report over all hands)."""

SCHEMA_STATEMENTS = (*SCHEMA_STATEMENTS, *(_rollup_statement(table[:-len("_all")])
                                           for table in ROLLUP_TABLES))


def hand_key(site: str, hand_id: str) -> int:
    """The deterministic 64-bit key of a hand from (site, hand_id)."""
    digest = hashlib.blake2b(f"{site}\x1f{hand_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


MIGRATIONS: tuple[tuple[str, str, str], ...] = (
    ("ingested_files", "message", "VARCHAR"),
    ("evaluations", "raw_royalty_top", "SMALLINT"),
    ("evaluations", "raw_royalty_middle", "SMALLINT"),
    ("evaluations", "raw_royalty_bottom", "SMALLINT"),
    ("rejects", "kind", "VARCHAR"),
    ("rejects", "conflict_with", "VARCHAR"),
    ("rejects", "reject_key", "VARCHAR"),
    ("rejects", "site", "VARCHAR"),
    ("rejects", "resolved_at", "TIMESTAMP"),
    ("rejects", "resolved_by", "VARCHAR"),
    ("decision_grades", "exact", "BOOLEAN"),
    ("decision_grades", "evaluation_rollouts", "INTEGER"),
    ("decision_grades", "mistake_type", "VARCHAR"),
    ("decision_grades", "policy_alternative", "SMALLINT"),
    ("decision_grades", "policy_gap", "DOUBLE"),
    ("decision_grades", "policy_gap_se", "DOUBLE"),
    ("decision_grades", "uncertain", "BOOLEAN"),
    ("decision_grades", "second_policy", "VARCHAR"),
    ("decision_grades", "second_loss", "DOUBLE"),
    ("decision_grades", "second_loss_se", "DOUBLE"),
    ("decision_grades", "grader_version", "INTEGER"),
    ("decision_alternatives", "eval_samples", "INTEGER"),
    ("decision_alternatives", "eval_total", "DOUBLE"),
    ("decision_alternatives", "eval_total_sq", "DOUBLE"),
    ("decision_alternatives", "eval_diff_total", "DOUBLE"),
    ("decision_alternatives", "eval_diff_total_sq", "DOUBLE"),
    ("decision_alternatives", "eval_ev", "DOUBLE"),
    ("decision_alternatives", "eval_se", "DOUBLE"),
    ("decision_alternatives", "exact", "BOOLEAN"),
    ("sessions", "fouls", "BIGINT"),
    ("sessions", "royalties", "BIGINT"),
    ("play_order", "variant", "VARCHAR"),
    ("play_order", "player_count", "TINYINT"),
    ("play_order", "points", "INTEGER"),
    ("play_order", "foul", "BOOLEAN"),
    ("hands", "match_id", "VARCHAR"),
)
"""Columns added after schema version 1: (table, column, type), applied to older databases."""

MIGRATION_FILLS: dict[tuple[str, str], str] = {
    # A hand stored before matches were known kept a record's match_id among its extras: the
    # column takes it from there (a text or a whole number, as validation reads it now) and the
    # extras let go of it. Its content hash already counts it the same way.
    ("hands", "match_id"): """
        UPDATE hands SET
            match_id = trim(json_extract_string(extra, '$.match_id')),
            extra = CASE WHEN json_merge_patch(extra, '{"match_id": null}')::VARCHAR = '{}'
                         THEN NULL ELSE json_merge_patch(extra, '{"match_id": null}') END
        WHERE json_type(extra, '$.match_id') IN ('VARCHAR', 'BIGINT', 'UBIGINT')
          AND trim(json_extract_string(extra, '$.match_id')) <> ''
    """,
}
"""Statements that fill a column of :data:`MIGRATIONS` from what older rows hold, run once: when
the column is added to an existing table."""

HAND_DATA_TABLES: tuple[str, ...] = (
    "hands", "seats", "placements", "discards", "boards",
    "evaluations", "matchups", "results", "sessions",
)
"""Tables derived from hand records (everything except meta, ingested_files and rejects)."""

AGGREGATE_TABLES: tuple[str, ...] = ("board_totals", "pair_totals", "fantasyland_draws",
                                     "session_totals", "play_order", "hand_summaries",
                                     *ROLLUP_TABLES)
"""Tables the writers keep from the hand tables (pipeline/ingest/aggregates.py): rebuilt by a
re-score, built once in a database made before them (its next write)."""

GRADER_VERSION = 4
"""The version of the decision grader (``decision_grades.grader_version``): 2 adds the second
look (uncertain verdicts); 3 rolls out with the learned policy's later weights (expert
iteration's rounds 2 and on: a grade of version 2 was made with round 1's); 4 with the
live-card rounds (round 4's weights in Pineapple, round 5's in 2-7 Pineapple). A stored grade
of an older version, or made with another rollout policy than :data:`GRADER_POLICY`, is
*outdated*: left out of the figures, shown as such and regraded by ``ofc analyze``
(docs/grading.md)."""

GRADER_POLICY = "learned"
"""The grader's default rollout policy (``pipeline.analysis.rollout.DEFAULT_POLICY`` is this one;
``ofc analyze`` keeps a copy so that its options load without the grader, and a test checks that
they agree)."""

def current_grades(columns: set[str], alias: str = "g") -> str:
    """The SQL condition on ``decision_grades`` (as ``alias``, whose columns are ``columns``)
    that keeps the current grader's rows: graded by the unbiased estimator (``exact`` set), by
    :data:`GRADER_VERSION` or later, with :data:`GRADER_POLICY`. FALSE in a database graded
    before grader versions (every row there is outdated)."""
    if "grader_version" not in columns or "exact" not in columns:
        return "FALSE"
    policy = GRADER_POLICY.replace("'", "''")
    return (f"({alias}.exact IS NOT NULL AND coalesce({alias}.grader_version, 0) >= "
            f"{int(GRADER_VERSION)} AND {alias}.policy = '{policy}')")


GRADE_TABLES: tuple[str, ...] = ("decision_grades", "decision_alternatives", "fantasyland_grades",
                                  "trainer_answers")
"""Tables of decision grades and trainer answers (written by pipeline.analysis, keyed by hand_key
like the above)."""

VERDICT_TABLES: dict[str, tuple[str, ...]] = {
    "evaluations": ("hand_key", "player"),
    "matchups": ("hand_key", "player", "opponent"),
    "results": ("hand_key", "player"),
}
"""Tables that depend on the rule set (rebuilt by a re-score), with their key columns."""


def _schema_fingerprint() -> str:
    """A hash of every schema statement and migration: a table added to SCHEMA_STATEMENTS
    reaches existing databases even without a version bump."""
    text = "\n".join((*SCHEMA_STATEMENTS, *(" ".join(step) for step in MIGRATIONS)))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def schema_is_current(connection: duckdb.DuckDBPyConnection) -> bool:
    """Whether the database holds this version's schema (version and fingerprint recorded by
    :func:`ensure_schema`); works on a read-only connection."""
    try:
        rows = connection.execute(
            "SELECT key, value FROM meta WHERE key IN ('schema_version', 'schema_fingerprint')"
        ).fetchall()
    except duckdb.CatalogException:
        return False
    values = dict(rows)
    return (
        values.get("schema_version") == str(SCHEMA_VERSION)
        and values.get("schema_fingerprint") == _schema_fingerprint()
    )


def ensure_schema(connection: duckdb.DuckDBPyConnection) -> None:
    """Create every missing table, add columns newer than the database, record the version.

    Cheap when the database already has this exact schema (one meta lookup)."""
    if schema_is_current(connection):
        return
    existing = set(connection.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = 'main'").fetchall())
    tables = {table for table, _column in existing}
    for statement in SCHEMA_STATEMENTS:
        connection.execute(statement)
    for table, column, column_type in MIGRATIONS:
        connection.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {column_type}")
        fill = MIGRATION_FILLS.get((table, column))
        if fill is not None and table in tables and (table, column) not in existing:
            connection.execute(fill)
    connection.execute(
        "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)]
    )
    connection.execute(
        "INSERT OR REPLACE INTO meta VALUES ('schema_fingerprint', ?)", [_schema_fingerprint()]
    )


RULESET_META_PREFIX = "ruleset:"
"""``meta`` keys ``ruleset:<name>`` hold the definition (a rules mapping as JSON) of a rule set
the database was scored with by override (``--rules``, a live session's rules): written with the
hands it scored and by ``ofc rescore``, read to settle matches (schemas/database.md)."""


SESSIONS_PENDING_META_KEY = "sessions_pending"
"""meta key present while stored seats with a start time wait for their sessions: a run of
several files works them out once, after its last file
(:func:`pipeline.ingest.sessions.defer_sessions`); should it die first, the next write finds
them. Readers say how many hands wait (:func:`pipeline.read.sessions.hands_waiting_for_sessions`)."""

SEATS_WAITING_FOR_SESSIONS = (
    "seats se JOIN hands h ON h.hand_key = se.hand_key "
    "WHERE se.session_id IS NULL AND h.started_at IS NOT NULL")
"""``FROM`` and ``WHERE`` of the stored seats (``se``, their hands ``h``) that have a start time
and no session yet: the seats :data:`SESSIONS_PENDING_META_KEY` marks as waiting."""


def get_meta(connection: duckdb.DuckDBPyConnection, key: str) -> str | None:
    """A value of the meta table, or None."""
    rows = connection.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchall()
    return rows[0][0] if rows else None


def kept_and_counts_agree(connection: duckdb.DuckDBPyConnection, key: str, version: str,
                          *pairs: tuple[str, str]) -> bool:
    """Whether a kept table may be trusted: the meta ``key`` holds ``version`` and each pair of
    SQL scalar subqueries (a count or sum over the kept table, the same over what it is kept
    from) gives equal numbers. False when a table is missing (a database made before it)."""
    counts = ", ".join(f"({kept}), ({source})" for kept, source in pairs)
    try:
        row = connection.sql(f"SELECT (SELECT value FROM meta WHERE key = ?), {counts}",
                             params=[key]).fetchall()[0]
    except duckdb.Error:
        return False
    values = [int(value or 0) for value in row[1:]]
    return row[0] == version and values[0::2] == values[1::2]


def set_meta(connection: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    """Set a value of the meta table."""
    connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])


def insert_frame(
    connection: duckdb.DuckDBPyConnection,
    table: str,
    frame: Any,
    only_keys: str | None = None,
) -> None:
    """Insert a columnar frame (Arrow table or polars DataFrame) into ``table``, matching by name.

    With ``only_keys`` (the name of a registered relation with a ``hand_key`` column) only the
    rows whose hand_key is in it are inserted. One statement, no row-by-row work.
    """
    name = f"_frame_{table}"
    connection.register(name, frame)
    try:
        if only_keys is None:
            connection.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {name}")
        else:
            connection.execute(
                f"INSERT INTO {table} BY NAME SELECT f.* FROM {name} f "
                f"SEMI JOIN {only_keys} k ON f.hand_key = k.hand_key"
            )
    finally:
        connection.unregister(name)


DUCKDB_MAGIC = b"DUCK"
"""The bytes a DuckDB database file carries at :data:`DUCKDB_MAGIC_OFFSET`."""

DUCKDB_MAGIC_OFFSET = 8


class NotADatabase(duckdb.Error):
    """The path exists but is not a DuckDB database (a hand-history file, a folder...).

    DuckDB would open such a file as an empty in-memory database and every write would be lost,
    so :func:`connect` refuses it before DuckDB sees it."""


def check_database_file(path: str | Path) -> None:
    """Raise :class:`NotADatabase` when ``path`` exists and is not a DuckDB database file.

    A missing path, or an empty file, is fine: DuckDB creates the database there.
    """
    path = Path(path)
    if not path.exists():
        return
    if path.is_dir():
        raise NotADatabase(f"{path} is a folder, not a DuckDB database file")
    try:
        with open(path, "rb") as stream:
            head = stream.read(DUCKDB_MAGIC_OFFSET + len(DUCKDB_MAGIC))
    except OSError as error:
        raise NotADatabase(f"cannot read {path}: {error.strerror or error}") from error
    if not head:
        return
    if head[DUCKDB_MAGIC_OFFSET:] != DUCKDB_MAGIC:
        raise NotADatabase(
            f"{path} exists and is not a DuckDB database (a hand-history file?); it is left "
            "untouched: give a new file name or an ofc database"
        )


def _is_lock_error(error: Exception) -> bool:
    text = str(error).lower()
    return "lock" in text or "conflicting" in text or "being used" in text


def connect(
    path: str | Path,
    read_only: bool = False,
    wait_seconds: float = 30.0,
) -> duckdb.DuckDBPyConnection:
    """Open the database file; a writer waits (up to ``wait_seconds``) while another process holds it.

    A read-only open of a missing file raises FileNotFoundError; an existing file that is not a
    DuckDB database raises :class:`NotADatabase` (a ``duckdb.Error``).
    """
    path = Path(path)
    if read_only and not path.exists():
        raise FileNotFoundError(f"no database at {path}")
    check_database_file(path)
    deadline = time.monotonic() + wait_seconds
    delay = 0.02
    while True:
        try:
            connection = duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as error:
            if not _is_lock_error(error) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
            continue
        connection.execute("SET enable_progress_bar = false")
        if not read_only:
            ensure_schema(connection)
        return connection


@contextmanager
def open_database(
    path: str | Path, read_only: bool = False, wait_seconds: float = 30.0
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Context manager around :func:`connect` that always closes the connection."""
    connection = connect(path, read_only=read_only, wait_seconds=wait_seconds)
    try:
        yield connection
    finally:
        connection.close()


def create_staging_table(
    connection: duckdb.DuckDBPyConnection, table: str, staging: str
) -> None:
    """Create (or empty) ``staging`` with exactly the columns and constraints of ``table``."""
    marker = f"CREATE TABLE IF NOT EXISTS {table} ("
    for statement in SCHEMA_STATEMENTS:
        if statement.startswith(marker):
            connection.execute(statement.replace(marker, f"CREATE OR REPLACE TABLE {staging} (", 1))
            return
    raise KeyError(f"no table {table} in the schema")


def replace_table(connection: duckdb.DuckDBPyConnection, staging: str, table: str) -> None:
    """Drop ``table`` and give ``staging`` its name (in the caller's transaction)."""
    connection.execute(f"DROP TABLE {table}")
    connection.execute(f"ALTER TABLE {staging} RENAME TO {table}")

