"""Worker processes parse canonical files for speed; the database is the sequential one."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.ingest.driver import ingest_paths
from tests.ingest.conftest import HAND_TABLES, deal_hand, table_rows


def test_parallel_ingest_gives_the_sequential_database(tmp_path: Path) -> None:
    lines: list[str] = []
    for seed in range(90):
        lines.append(json.dumps(deal_hand(seed, table=f"T{seed % 2}",
                                          started_at=f"2026-11-01T20:{seed % 60:02d}:00Z")))
        if seed % 17 == 3:
            lines.append("")  # blank lines are skipped, not rejected
            lines.append('{"hand_id": "bad", "players": [')
        if seed % 23 == 4:
            lines.append(json.dumps(deal_hand(seed - 2, table=f"T{(seed - 2) % 2}",
                                              started_at=f"2026-11-01T20:{(seed - 2) % 60:02d}:00Z")))
        if seed % 29 == 5:
            lines.append(json.dumps(deal_hand(seed - 1)))  # same key, other content
    source = tmp_path / "mixed.jsonl"
    source.write_bytes(
        "\n".join(lines).encode() + b"\n" + b'{"hand_id": "\xff"}\n' + lines[0].encode()[:99]
    )

    sequential = ingest_paths([source], tmp_path / "one.duckdb", batch_size=16, workers=1)
    parallel = ingest_paths([source], tmp_path / "two.duckdb", batch_size=16, workers=2)

    counts = [(s.records, s.stored, s.duplicates, s.rejected, s.reasons) for s in
              (sequential.files[0], parallel.files[0])]
    assert counts[0] == counts[1]
    assert sequential.stored == 90 and sequential.duplicates > 0 and sequential.rejected > 6
    for table in HAND_TABLES:
        assert table_rows(tmp_path / "one.duckdb", table) == table_rows(
            tmp_path / "two.duckdb", table), table
    assert table_rows(tmp_path / "one.duckdb", "rejects", exclude=("rejected_at", "resolved_at")) == table_rows(
        tmp_path / "two.duckdb", "rejects", exclude=("rejected_at", "resolved_at"))
