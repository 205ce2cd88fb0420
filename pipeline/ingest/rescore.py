"""Re-scoring: evaluations, matchups and results of every stored hand recomputed from the stored
boards, under another rule set or the rules each record named, without reading any file.

The boards are scored as columns by the batch rules core, as at ingest
(:func:`pipeline.ingest.columns.verdict_tables`), into staging tables that replace the verdict
tables in the last transaction.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from pipeline import store
from pipeline.ingest.aggregates import rebuild
from pipeline.ingest.columns import RANK_OF_BYTE, SUIT_OF_BYTE, scoring_columns, verdict_tables
from pipeline.ingest.progress import Progress
from pipeline.ingest.sessions import update_session_points
from pipeline.ingest.writer import Writer, record_rule_set
from pipeline.records.rules_file import RulesResolver
from pipeline.rules.cards import parse_cards
from pipeline.rules.game import VARIANTS_BY_NAME
from pipeline.rules.ruleset import RuleSet

__all__ = ["RescoreSummary", "rescore", "score_stored"]


@dataclass(frozen=True, slots=True)
class RescoreSummary:
    """What a re-score did."""

    rules: str
    hands: int
    players: int
    disagreements: int
    seconds: float


_STAGING_PREFIX = "_rescore_"
"""Name prefix of the tables a re-score fills before they replace the verdict tables."""


def _stored_boards(
    connection: duckdb.DuckDBPyConnection, condition: str, parameters: list[Any]
) -> pa.Table:
    """Every seat of the hands matching ``condition`` (on ``s.hand_key``), in hand then
    settlement order, with its board's rows as stored text."""
    return connection.sql(
        "SELECT s.hand_key, h.variant, h.rules, s.player, s.position, s.fantasyland, "
        "s.reported_points, s.extra, b.top, b.middle, b.bottom "
        "FROM seats s JOIN boards b ON b.hand_key = s.hand_key AND b.player = s.player "
        f"JOIN hands h ON h.hand_key = s.hand_key WHERE {condition} "
        "ORDER BY s.hand_key, s.position",
        params=parameters,
    ).to_arrow_table()


def _board_codes(boards: pa.Table) -> np.ndarray:
    """The 13 card codes (top, middle, bottom) of each stored board.

    Stored rows are canonical card texts joined by single spaces ("Ah Kd Qs"), so a row of n
    cards is 3n - 1 bytes and its cards sit at fixed offsets: parsed for all boards at once.
    A row that is not in that form (edited by hand, say) is parsed card by card."""
    count = boards.num_rows
    codes = np.zeros((count, 13), np.int64)
    column = 0
    for name, size in (("top", 3), ("middle", 5), ("bottom", 5)):
        texts = boards.column(name).combine_chunks().cast(pa.large_string())
        width = 3 * size - 1
        offsets = np.frombuffer(texts.buffers()[1], np.int64)[texts.offset:texts.offset + count + 1]
        data = np.frombuffer(texts.buffers()[2], np.uint8)
        fixed = np.diff(offsets) == width
        starts = offsets[:-1, None] + 3 * np.arange(size)
        starts = np.where(fixed[:, None], starts, 0)
        ranks = RANK_OF_BYTE[data[starts]] if len(data) else np.full(starts.shape, -1)
        suits = SUIT_OF_BYTE[data[starts + 1]] if len(data) else np.full(starts.shape, -1)
        row_codes = ranks * 4 + suits
        odd = np.flatnonzero(~fixed | (ranks < 0).any(axis=1) | (suits < 0).any(axis=1))
        for index in odd.tolist():
            row_codes[index] = parse_cards(texts[index].as_py())
        codes[:, column:column + size] = row_codes
        column += size
    return codes


def _hand_keys(connection: duckdb.DuckDBPyConnection) -> np.ndarray:
    """Every stored hand's key, in order."""
    return connection.sql(
        "SELECT hand_key FROM hands ORDER BY hand_key"
    ).to_arrow_table().column(0).to_numpy()


def score_stored(boards: pa.Table, rules_for: Callable[[str], RuleSet]) -> dict[str, pa.Table]:
    """Evaluations, matchups and results for stored boards: the batch's columns scored by
    :func:`pipeline.ingest.columns.verdict_tables`, as at ingest.

    ``boards`` has one row per seat, hand after hand and each hand's seats in settlement order:
    hand_key, variant, rules, player, position, fantasyland, reported_points, extra (JSON text),
    top, middle, bottom (the stored rows' card texts). The Parquet lake's re-score scores its
    stored boards with it too."""
    keys = boards.column("hand_key").to_numpy()
    count = len(keys)
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if count else np.zeros(0, int)
    player_counts = np.diff(np.r_[starts, count]).astype(np.int64)
    variants = boards.column("variant").take(pa.array(starts)).to_pylist()
    extra_column = boards.column("extra")
    extras: list[dict[str, Any] | None] = [None] * count
    if extra_column.null_count < count:
        for index, text in enumerate(extra_column.to_pylist()):
            if text:
                extras[index] = json.loads(text)
    columns = scoring_columns(
        keys=keys[starts], variants=[VARIANTS_BY_NAME[name] for name in variants],
        rules=boards.column("rules").take(pa.array(starts)).to_pylist(),
        player_counts=player_counts, names=boards.column("player").to_pylist(),
        positions=boards.column("position").to_numpy().astype(np.int64),
        fantasyland=boards.column("fantasyland").to_numpy(zero_copy_only=False).astype(bool),
        reported=boards.column("reported_points").to_pylist(),
        player_extras=extras,
        boards=_board_codes(boards),
    )
    return verdict_tables(columns, rules_for)


def rescore(
    database: str | os.PathLike[str],
    rules: RuleSet | None = None,
    batch_size: int = 250_000,
    progress: bool = False,
) -> RescoreSummary:
    """Recompute evaluations, matchups and results of every stored hand, from stored boards.

    ``rules`` (resolved by the caller, e.g. from ``--rules``) applies to every hand; None
    scores each hand under the rules its record named. No file is read: the boards come from the
    database and are scored as columns by the batch rules core, ``batch_size`` hands per
    transaction, into staging tables that replace the verdict tables in the last transaction
    (inserting is several times faster than updating every row in place; readers see the old
    verdicts until then). Hands another process stores or deletes meanwhile are accounted
    for in that last transaction. Sessions' points and the aggregates follow, and so does every
    match's settlement (read from the results and the rule set kept in ``meta``).
    Raises :class:`~pipeline.ingest.errors.DatabaseError` when the database cannot be used,
    RulesError for a record's unknown rules.
    """
    started = time.perf_counter()
    resolver = RulesResolver(override=rules)
    writer = Writer(database)
    connection = writer.connect()
    try:
        keys = _hand_keys(connection)
    finally:
        connection.close()
    display = Progress(progress)
    display.describe("rescore")
    hands_done = players_done = disagreeing = 0
    names: set[str] = set()

    def stage(connection: duckdb.DuckDBPyConnection, boards: pa.Table) -> None:
        nonlocal hands_done, players_done, disagreeing
        tables = score_stored(boards, resolver)
        for name in store.VERDICT_TABLES:
            store.insert_frame(connection, _STAGING_PREFIX + name, tables[name])
        names.update(tables["evaluations"].column("ruleset").unique().to_pylist())
        disagreeing += tables["results"].column("disagrees").to_numpy(
            zero_copy_only=False).sum()
        hands_done += len(np.unique(boards.column("hand_key").to_numpy()))
        players_done += boards.num_rows

    try:
        with writer.transaction() as connection:
            for name in store.VERDICT_TABLES:
                store.create_staging_table(connection, name, _STAGING_PREFIX + name)
        for start in range(0, len(keys), max(1, batch_size)):
            chunk = keys[start:start + batch_size]
            with writer.transaction() as connection:
                stage(connection, _stored_boards(
                    connection, "s.hand_key BETWEEN ? AND ?", [int(chunk[0]), int(chunk[-1])]))
            display.advance(len(chunk))
        with writer.transaction(release=True) as connection:
            # Hands stored or deleted by another process since the keys were read.
            staged = f"{_STAGING_PREFIX}evaluations"
            stage(connection, _stored_boards(
                connection, f"s.hand_key IN (SELECT hand_key FROM hands "
                f"ANTI JOIN {staged} USING (hand_key))", []))
            for name in store.VERDICT_TABLES:
                connection.execute(
                    f"DELETE FROM {_STAGING_PREFIX}{name} "
                    "WHERE hand_key NOT IN (SELECT hand_key FROM hands)"
                )
                store.replace_table(connection, _STAGING_PREFIX + name, name)
            update_session_points(connection)
            rebuild(connection, keep_draws=True)
            label = ", ".join(sorted(names)) if names else (rules.name if rules else "")
            store.set_meta(connection, "rescored_with", label)
            # every verdict now follows ``rules`` (or the presets the records name): the rule
            # sets kept from earlier scorings no longer describe any hand
            connection.execute("DELETE FROM meta WHERE starts_with(key, ?)",
                               [store.RULESET_META_PREFIX])
            if rules is not None:
                record_rule_set(connection, rules)
    finally:
        writer.close()
        display.stop()
    label = rules.name if rules is not None else ", ".join(sorted(names)) or "record rules"
    return RescoreSummary(label, hands_done, players_done, int(disagreeing),
                          time.perf_counter() - started)
