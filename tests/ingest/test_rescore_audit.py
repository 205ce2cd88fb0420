"""Re-scoring under another rule set from the database alone, and the audit of disagreements."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.ingest.driver import ingest_paths
from pipeline.ingest.evaluate import score_record
from pipeline.ingest.rescore import rescore
from pipeline.read.audit import audit_rows
from pipeline.records.validate import parse_hand
from pipeline.rules.ruleset import preset, ruleset_from_mapping
from pipeline.store import connect, hand_key
from tests.ingest.conftest import count, deal_hand, query, table_rows, write_jsonl


def _points(database: Path) -> dict[tuple[int, str], int]:
    return {(key, player): points for key, player, points in
            query(database, "SELECT hand_key, player, points FROM results")}


def test_rescore_with_scoop_six_without_reading_files(tmp_path: Path, database: Path) -> None:
    records = [deal_hand(seed) for seed in range(30)]
    source = write_jsonl(tmp_path / "a.jsonl", records)
    ingest_paths([source], database)
    standard = _points(database)
    source.unlink()  # nothing to re-read: the re-score works from the database
    scoop_six = ruleset_from_mapping({"name": "scoop-6", "scoring": {"scoop_bonus": 6}})

    summary = rescore(database, scoop_six, batch_size=7)

    assert (summary.hands, summary.players, summary.rules) == (30, 90, "scoop-6")
    expected = {}
    for record in records:
        scored = score_record(parse_hand(record), scoop_six)
        for player in scored.players:
            expected[(hand_key("homegame", record["hand_id"]), player.name)] = player.points
    assert _points(database) == expected
    assert expected != standard  # scoops happened, so the totals moved
    assert query(database, "SELECT DISTINCT ruleset FROM evaluations") == [("scoop-6",)]
    scoops = query(database, "SELECT count(*) FROM matchups WHERE scoop = 1")[0][0]
    assert scoops > 0
    # Session points follow the new results.
    assert query(database, "SELECT sum(points) FROM sessions WHERE player = 'mara'") == [
        (sum(points for (_, player), points in expected.items() if player == "mara"),)
    ]
    # Without rules, each hand goes back to the rules its record named.
    rescore(database)
    assert _points(database) == standard
    assert query(database, "SELECT DISTINCT ruleset FROM evaluations") == [("standard",)]


def _tampered_log(source: Path, target: Path, edits: dict[tuple[str, int], dict]) -> None:
    """Copy a poker-arena log changing the first (event kind, seat) events listed."""
    done = set()
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        value = json.loads(line)
        event = value.get("ev")
        if isinstance(event, dict):
            key = (event.get("event"), event.get("seat"))
            if key in edits and key not in done and value["hand"] == 3:
                event.update(edits[key])
                done.add(key)
        lines.append(json.dumps(value))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_audit_names_foul_royalty_fantasyland_and_points(
    arena_logs: Path, tmp_path: Path, database: Path
) -> None:
    tampered = tmp_path / "tampered" / "ofc.jsonl"
    tampered.parent.mkdir()
    _tampered_log(arena_logs / "ofc.jsonl", tampered, {
        ("showdown", 1): {"fouled": True},
        ("showdown", 2): {"royalties": {"top": 0, "middle": 4, "bottom": 0}},
        ("showdown", 3): {"next_fantasyland": 14},
        ("score", 0): {"points": 99},
    })
    ingest_paths([tampered], database)
    connection = connect(database, read_only=True)
    try:
        rows = audit_rows(connection).to_dicts()
    finally:
        connection.close()

    by_player = {row["player"]: row for row in rows}
    assert set(by_player) == {"random", "filler", "random-2", "greedy"}
    assert by_player["filler"]["disagreement"] == (
        "foul: the source says fouled, the re-score says not fouled"
    )
    assert by_player["random-2"]["disagreement"] == (
        "royalty: the source says 0/4/0 (top/middle/bottom), the re-score says 0/0/0"
    )
    assert by_player["greedy"]["disagreement"] == (
        "fantasyland: the source says 14 cards next hand, the re-score says no Fantasyland"
    )
    assert by_player["random"]["disagreement"].startswith("points: reported 99, re-scored -11")
    assert by_player["random"]["source"] == f"{tampered}:1"
    assert count(database, "results", "disagrees") == 4  # only the tampered hand


def test_points_disagreement_in_canonical_records(tmp_path: Path, database: Path) -> None:
    record = deal_hand(4, players=2)
    truth = score_record(parse_hand(record), preset("standard"))
    record["players"][0]["reported_points"] = truth.players[0].points
    record["players"][1]["reported_points"] = truth.players[1].points + 3
    ingest_paths([write_jsonl(tmp_path / "a.jsonl", [record])], database)

    rows = query(database, "SELECT player, disagrees, disagreement FROM results ORDER BY player")

    assert rows == [
        ("jun", True, f"points: reported {truth.players[1].points + 3}, "
                      f"re-scored {truth.players[1].points}"),
        ("mara", False, None),
    ]


def test_rescore_columns_equal_the_ingest_verdicts(
    tmp_path: Path, arena_logs: Path, database: Path
) -> None:
    """The re-score (columns from stored boards) gives exactly what ingest stored (record by
    record through score_records), for 2-4 players, Fantasyland, classic, and a per-hand cap."""
    capped = ruleset_from_mapping({"name": "capped", "scoring": {"cap": 9, "scoop_bonus": 6}})
    records = [deal_hand(seed, players=2 + seed % 2) for seed in range(40)]
    for record in records[::7]:
        record["players"][0]["reported_points"] = 5
    source = write_jsonl(tmp_path / "a.jsonl", records)
    for rules in (None, capped):
        if database.exists():
            database.unlink()
        ingest_paths([source, arena_logs], database, rules=rules)
        tables = {
            name: table_rows(database, name)
            for name in ("evaluations", "matchups", "results", "sessions")
        }
        assert any(row[5] for row in tables["results"])  # some hands disagree
        rescore(database, rules, batch_size=20)
        for name, rows in tables.items():
            assert table_rows(database, name) == rows, (rules, name)
    # The cap was binding somewhere: settled differs from points.
    assert count(database, "matchups", "settled <> points") > 0


def test_rescore_accounts_for_hands_stored_or_deleted_meanwhile(
    tmp_path: Path, database: Path, monkeypatch
) -> None:
    """Between reading the keys and its last transaction a re-score lets other writers in:
    hands they store are scored in the last transaction, hands they delete leave no rows."""
    import pipeline.ingest.rescore as rescore_module

    records = [deal_hand(seed) for seed in range(30)]
    ingest_paths([write_jsonl(tmp_path / "a.jsonl", records)], database)
    all_keys = [row[0] for row in query(database, "SELECT hand_key FROM hands ORDER BY 1")]
    late, gone = all_keys[-2:], all_keys[0]
    real_hand_keys = rescore_module._hand_keys
    real_stored_boards = rescore_module._stored_boards
    monkeypatch.setattr(  # as if the last two hands were stored after the keys were read
        rescore_module, "_hand_keys", lambda connection: real_hand_keys(connection)[:-2])

    def boards_then_delete(connection, condition, parameters):
        boards = real_stored_boards(connection, condition, parameters)
        connection.execute("DELETE FROM hands WHERE hand_key = ?", [gone])
        return boards

    monkeypatch.setattr(rescore_module, "_stored_boards", boards_then_delete)
    summary = rescore(database, preset("flat-trips"), batch_size=10)

    assert summary.hands == 30  # 28 in batches and the 2 late ones at the end
    for table, per_hand in (("evaluations", 3), ("results", 3), ("matchups", 6)):
        assert count(database, table, f"hand_key = {gone}") == 0, table
        for key in late:
            assert count(database, table, f"hand_key = {key}") == per_hand, table
        assert count(database, table) == 29 * per_hand, table
    assert count(database, "evaluations", "ruleset <> 'flat-trips'") == 0
    tables = {row[0] for row in query(database, "SELECT table_name FROM duckdb_tables()")}
    assert not any(name.startswith("_rescore_") for name in tables)
