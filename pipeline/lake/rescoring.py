"""Stored boards re-scored in chunks: the verdict tables of a lake re-score.

Both engines stream the lake's boards (one row per seat, hands contiguous, seats in settlement
order) through :func:`scored_chunks`, which scores whole hands with ingest's
:func:`pipeline.ingest.rescore.score_stored` (the batch rules core, exactly as ``ofc rescore``)
and gives each verdict row its hand's site and month for the partitioned write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.ingest.rescore import score_stored
from pipeline.rules.ruleset import RuleSet

__all__ = ["BOARD_COLUMNS", "CHUNK_ROWS", "RescoreCounts", "VERDICT_TABLES", "scored_chunks"]

BOARD_COLUMNS = ("hand_key", "variant", "rules", "player", "position", "fantasyland",
                 "reported_points", "extra", "top", "middle", "bottom", "site", "month")
"""Columns of the stored boards a re-score reads, in this order."""

VERDICT_TABLES = ("evaluations", "matchups", "results")
"""The tables a re-score rewrites (and sessions' points, and the player totals)."""

CHUNK_ROWS = 200_000
"""Seats scored together."""


@dataclass(slots=True)
class RescoreCounts:
    """What a re-score scored: hands, player results, disagreements, rule set names."""

    hands: int = 0
    players: int = 0
    disagreements: int = 0
    rules: set[str] = field(default_factory=set)


def _score(boards: pa.Table, rules_for: Callable[[str], RuleSet],
           counts: RescoreCounts) -> dict[str, pa.Table]:
    tables = score_stored(boards, rules_for)
    keys = boards.column("hand_key").combine_chunks()
    starts = np.flatnonzero(np.r_[True, keys.to_numpy()[1:] != keys.to_numpy()[:-1]])
    hand_keys = keys.take(pa.array(starts))
    sites = boards.column("site").take(pa.array(starts))
    months = boards.column("month").take(pa.array(starts))
    out = {}
    for name in VERDICT_TABLES:
        table = tables[name]
        where = pc.index_in(table.column("hand_key"), value_set=hand_keys)
        out[name] = table.append_column("site", sites.take(where)).append_column(
            "month", months.take(where))
    counts.hands += len(starts)
    counts.players += boards.num_rows
    counts.disagreements += int(pc.sum(tables["results"].column("disagrees")).as_py() or 0)
    counts.rules.update(tables["evaluations"].column("ruleset").unique().to_pylist())
    return out


def scored_chunks(
    batches: Iterable[pa.RecordBatch], rules_for: Callable[[str], RuleSet],
    counts: RescoreCounts, chunk_rows: int = CHUNK_ROWS,
) -> Iterator[dict[str, pa.Table]]:
    """Verdict tables (with site and month) of the boards in ``batches``, chunk by chunk; a hand
    whose seats straddle two batches is scored whole. ``counts`` adds up what was scored."""
    pending: list[pa.RecordBatch] = []
    pending_rows = 0
    for batch in batches:
        if not batch.num_rows:
            continue
        pending.append(batch)
        pending_rows += batch.num_rows
        if pending_rows < chunk_rows:
            continue
        table = pa.Table.from_batches(pending).combine_chunks()
        keys = table.column("hand_key").to_numpy()
        last = int(np.flatnonzero(keys != keys[-1])[-1]) + 1 if (keys != keys[-1]).any() else 0
        if last == 0:  # one hand so far: wait for more
            continue
        yield _score(table.slice(0, last), rules_for, counts)
        rest = table.slice(last)
        pending = rest.to_batches()
        pending_rows = rest.num_rows
    if pending_rows:
        yield _score(pa.Table.from_batches(pending).combine_chunks(), rules_for, counts)
