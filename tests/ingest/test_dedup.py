"""Identity: a hand is stored once; conflicts name both sources; re-reading is a no-op."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pipeline.ingest.driver import ingest_paths
from tests.ingest.conftest import HAND_TABLES, count, deal_hand, query, table_rows, write_jsonl


def _snapshot(database: Path) -> dict[str, list[tuple]]:
    return {table: table_rows(database, table) for table in HAND_TABLES}


def test_reingesting_a_file_stores_nothing_and_says_so(tmp_path: Path, database: Path) -> None:
    source = write_jsonl(tmp_path / "a.jsonl", [deal_hand(seed) for seed in range(5)])
    ingest_paths([source], database)
    before = _snapshot(database)

    again = ingest_paths([source], database)

    assert again.stored == 0 and again.nothing_new
    assert again.files[0].status == "unchanged"
    assert "already ingested" in again.files[0].message
    assert _snapshot(database) == before


def test_reingesting_a_folder_is_a_no_op(tmp_path: Path, arena_logs: Path, database: Path) -> None:
    folder = tmp_path / "histories"
    write_jsonl(folder / "night1.jsonl", [deal_hand(seed) for seed in range(3)])
    write_jsonl(folder / "deeper" / "night2.jsonl", [deal_hand(seed) for seed in range(3, 6)])
    shutil.copy(arena_logs / "ofc.jsonl", folder / "deeper" / "ofc.jsonl")
    (folder / "README.md").write_text("# not a hand history\n", encoding="utf-8")
    first = ingest_paths([folder], database)
    assert first.stored == 10 and first.rejected == 0  # README.md is not read
    before = _snapshot(database)
    rejects = count(database, "rejects")

    second = ingest_paths([folder], database)

    assert second.stored == 0 and second.duplicates == 0 and second.rejected == 0
    assert [item.status for item in second.files] == ["unchanged"] * 3
    assert _snapshot(database) == before
    assert count(database, "rejects") == rejects


def test_the_same_hand_in_two_files_is_stored_once(tmp_path: Path, database: Path) -> None:
    first = write_jsonl(tmp_path / "a.jsonl", [deal_hand(1), deal_hand(2)])
    # Same hands written differently (key order, spacing, card case) are the same content.
    second_record = deal_hand(2)
    for player in second_record["players"]:
        player["streets"][0]["dealt"] = [card.upper() for card in player["streets"][0]["dealt"]]
    second = tmp_path / "b.jsonl"
    second.write_text(
        json.dumps(dict(reversed(list(second_record.items()))), indent=None, separators=(" ,", " : "))
        + "\n" + json.dumps(deal_hand(3)) + "\n",
        encoding="utf-8",
    )
    ingest_paths([first], database)

    summary = ingest_paths([second], database)

    assert (summary.stored, summary.duplicates, summary.rejected) == (1, 1, 0)
    assert count(database, "hands") == 3
    assert query(database, "SELECT source_path FROM hands WHERE hand_id = 'H2'") == [(str(first),)]


def test_same_key_different_content_is_a_conflict_naming_both_sources(
    tmp_path: Path, database: Path
) -> None:
    first = write_jsonl(tmp_path / "a.jsonl", [deal_hand(1), deal_hand(2)])
    changed = deal_hand(2)
    changed["players"][0]["reported_points"] = 99
    second = write_jsonl(tmp_path / "b.jsonl", [deal_hand(3), changed])
    ingest_paths([first], database)

    summary = ingest_paths([second], database)

    assert (summary.stored, summary.duplicates, summary.rejected) == (1, 0, 1)
    rows = query(database, "SELECT path, line, hand_id, reason, kind, conflict_with FROM rejects")
    assert rows == [(
        str(second), 2, "H2",
        f"conflict: hand 'H2' of site 'homegame' is already stored from {first}:2 with "
        f"different content (this record: {second}:2)",
        "conflict", f"{first}:2",
    )]
    assert query(database, "SELECT reported_points FROM seats WHERE player = 'mara' AND "
                 "hand_key = (SELECT hand_key FROM hands WHERE hand_id = 'H2')") == [(None,)]


def test_duplicates_and_conflicts_within_one_batch(tmp_path: Path, database: Path) -> None:
    changed = deal_hand(1)
    changed["table"] = "T9"
    source = write_jsonl(
        tmp_path / "a.jsonl", [deal_hand(1), deal_hand(2), deal_hand(1), changed, deal_hand(2)]
    )

    summary = ingest_paths([source], database, batch_size=100)

    assert (summary.stored, summary.duplicates, summary.rejected) == (2, 2, 1)
    assert count(database, "hands") == 2
    assert query(database, "SELECT line, conflict_with FROM rejects") == [(4, f"{source}:1")]


def test_conflict_in_a_batch_names_the_stored_source(tmp_path: Path, database: Path) -> None:
    """A batch's first copy is a duplicate of a stored hand: a later conflicting copy in the
    batch names where the stored hand came from, as it would in any other batch size."""
    stored = write_jsonl(tmp_path / "old.jsonl", [deal_hand(1)])
    ingest_paths([stored], database)
    changed = deal_hand(1)
    changed["table"] = "T9"
    source = write_jsonl(tmp_path / "new.jsonl", [deal_hand(1), changed])

    ingest_paths([source], database, batch_size=100)

    assert query(database, "SELECT conflict_with FROM rejects") == [(f"{stored}:1",)]
