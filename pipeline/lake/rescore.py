"""``ofc lake rescore``: every stored board of a lake re-scored under another rule set.

"What would my results be with scoop 6?" over the whole lake, from the stored boards, without
reading a raw file: the boards (seats, boards and hands joined) are scored by the batch rules
core in chunks of whole hands (:mod:`pipeline.lake.rescoring`, on the engine's workers), the
new evaluations, matchups and results are staged, sessions' points and the per-player totals
are recomputed from them, and one commit replaces those five tables. Readers see the old
verdicts until that commit, as with ``ofc rescore`` on a database.
"""

from __future__ import annotations

import os
import time
from typing import Any

from pipeline.ingest.rescore import RescoreSummary
from pipeline.ingest.writer import rule_set_meta
from pipeline.lake import queries
from pipeline.lake.build import register_lake_tables
from pipeline.lake.engine import Engine
from pipeline.lake.rescoring import VERDICT_TABLES
from pipeline.lake.storage import Lake, LakeError
from pipeline.records.rules_file import RulesResolver
from pipeline.rules.ruleset import RuleSet
from pipeline.store import RULESET_META_PREFIX

__all__ = ["BOARDS_SQL", "rescore_lake"]

BOARDS_SQL = """
    SELECT s.hand_key, h.variant, h.rules, s.player, s.position, s.fantasyland,
           s.reported_points, s.extra, b.top, b.middle, b.bottom, h.site, h.month
    FROM lake_seats s
    JOIN lake_boards b ON b.hand_key = s.hand_key AND b.player = s.player
    JOIN lake_hands h ON h.hand_key = s.hand_key
"""
"""Every stored seat with its board and its hand's variant, rules, site and month."""


def rescore_lake(
    lake: str | os.PathLike[str], engine: Engine, rules: RuleSet | None = None,
    progress: Any = None,
) -> RescoreSummary:
    """Re-score every hand of the lake on ``engine``: under ``rules``, or (None) under the rules
    each record named. Raises :class:`~pipeline.lake.storage.LakeError` when there is no lake,
    RulesError for a record's unknown rules."""
    started = time.perf_counter()
    store = Lake(lake)
    if not store.exists():
        raise LakeError(f"no lake at {store.root} (build one with: ofc lake build PATH "
                        f"--lake {store.root})")
    resolver = RulesResolver(override=rules)
    with store.writing() as manifest:
        staging = store.staging()
        engine.begin(staging)
        prefix = f"{manifest.version + 1:06d}-{staging.name}"
        register_lake_tables(engine, store, manifest)

        def on_records(count: int) -> None:
            if progress is not None:
                progress.advance(count)

        if progress is not None:
            progress.describe("re-scoring stored boards")
            progress.reading()
        counts = engine.rescore(BOARDS_SQL, resolver, staging, prefix, on_records)
        for table in VERDICT_TABLES:
            staged = sorted((staging / table).rglob("*.parquet")) if (
                staging / table).is_dir() else []
            engine.register_lake(f"lake_{table}", table, staged, staging)
        if progress is not None:
            progress.describe("sessions and player totals")
        engine.write(queries.rescored_sessions(), "sessions", staging / "sessions", prefix)
        engine.write(queries.player_totals("lake_seats", "lake_results", "lake_evaluations",
                                           "lake_matchups", None),
                     "player_totals", staging / "player_totals", prefix)
        names = sorted(counts.rules)
        label = ", ".join(names) if names else (rules.name if rules else "")
        replaced = {table: list(manifest.files(table))
                    for table in (*VERDICT_TABLES, "sessions", "player_totals")}
        # as a database's re-score: the rule sets kept from earlier scorings go, the override
        # (if any) is kept (pipeline.ingest.rescore)
        meta: dict[str, str | None] = {
            key: None for key in manifest.meta if key.startswith(RULESET_META_PREFIX)}
        if rules is not None:
            key, value = rule_set_meta(rules)
            meta[key] = value
        store.commit(manifest, staging, replaced, {**meta, "rescored_with": label})
    summary_label = rules.name if rules is not None else ", ".join(names) or "record rules"
    return RescoreSummary(summary_label, counts.hands, counts.players, counts.disagreements,
                          time.perf_counter() - started)
