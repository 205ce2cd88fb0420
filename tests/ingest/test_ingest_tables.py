"""Ingesting files fills every table, with the rules core's verdict beside the source's claim."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from pipeline.ingest.columns import VerdictFacts, disagreement_texts
from pipeline.ingest.columns import from_records as columns_from_records
from pipeline.ingest.driver import ingest_mappings, ingest_paths
from pipeline.ingest.evaluate import score_record
from pipeline.ingest.tables import verdict_tables
from pipeline.records.validate import parse_hand
from pipeline.rules.ruleset import preset
from pipeline.store import hand_key
from tests.ingest.conftest import REPO, count, deal_hand, query, write_jsonl


def test_every_table_gets_its_rows(tmp_path: Path, database: Path) -> None:
    records = [deal_hand(seed) for seed in range(12)]
    source = write_jsonl(tmp_path / "hands.jsonl", records)

    summary = ingest_paths([source], database, batch_size=5)

    assert (summary.records, summary.stored, summary.duplicates, summary.rejected) == (12, 12, 0, 0)
    assert summary.files[0].format == "canonical"
    assert count(database, "hands") == 12
    assert count(database, "seats") == 36
    assert count(database, "boards") == 36
    assert count(database, "evaluations") == 36
    assert count(database, "results") == 36
    assert count(database, "placements") == 36 * 13  # every card placed, street by street
    assert count(database, "discards") == 36 * 4  # one discard on each of 4 pineapple streets
    assert count(database, "matchups") == 12 * 6  # 3 pairs per hand, both directions
    assert count(database, "ingested_files", "status = 'complete' AND stored = 12") == 1


def test_stored_verdicts_are_the_rules_core_verdicts(tmp_path: Path, database: Path) -> None:
    record = deal_hand(7)
    source = write_jsonl(tmp_path / "one.jsonl", [record])
    ingest_paths([source], database)
    expected = score_record(parse_hand(record), preset("standard"))
    key = hand_key("homegame", "H7")

    results = dict(query(database, "SELECT player, points FROM results WHERE hand_key = ?", [key]))
    assert results == {player.name: player.points for player in expected.players}
    evaluations = {
        row[0]: row[1:]
        for row in query(
            database,
            "SELECT player, foul, royalty_top, royalty_middle, royalty_bottom, fantasyland_cards, "
            "top_class, ruleset FROM evaluations WHERE hand_key = ?", [key],
        )
    }
    for player in expected.players:
        assert evaluations[player.name] == (
            player.foul, *player.royalties, player.fantasyland_cards, player.classes[0], "standard"
        )
    for pair in expected.pairs:
        forward = query(
            database, "SELECT points, settled, scoop FROM matchups WHERE hand_key = ? AND "
            "player = ? AND opponent = ?", [key, pair.first, pair.second],
        )
        backward = query(
            database, "SELECT points, settled, scoop FROM matchups WHERE hand_key = ? AND "
            "player = ? AND opponent = ?", [key, pair.second, pair.first],
        )
        assert forward == [(pair.points, pair.settled, pair.scoop)]
        assert backward == [(-pair.points, -pair.settled, -pair.scoop)]


def test_placements_keep_street_order_and_rows(tmp_path: Path, database: Path) -> None:
    record = deal_hand(3)
    ingest_paths([write_jsonl(tmp_path / "h.jsonl", [record])], database)
    key = hand_key("homegame", "H3")
    rows = query(
        database, "SELECT street, card_order, card, row_name FROM placements "
        "WHERE hand_key = ? AND player = 'mara' ORDER BY street, card_order", [key],
    )
    expected = [
        (number, order, card, row)
        for number, street in enumerate(record["players"][0]["streets"], 1)
        for order, (card, row) in enumerate(
            (card, row) for row in ("top", "middle", "bottom")
            for card in street["placed"].get(row, [])
        )
    ]
    assert rows == expected
    discards = query(
        database, "SELECT street, card FROM discards WHERE hand_key = ? AND player = 'mara' "
        "ORDER BY street", [key],
    )
    assert discards == [
        (number, street["discarded"][0])
        for number, street in enumerate(record["players"][0]["streets"], 1)
        if street["discarded"]
    ]
    board = query(database, "SELECT top, middle, bottom FROM boards WHERE hand_key = ? "
                  "AND player = 'mara'", [key])
    top = [card for street in record["players"][0]["streets"] for card in street["placed"].get("top", [])]
    assert board[0][0] == " ".join(top)


def test_poker_arena_logs_keep_reported_results_and_agree(arena_logs: Path, database: Path) -> None:
    summary = ingest_paths([arena_logs], database)

    assert summary.stored == 7 and summary.rejected == 0
    assert {row[0] for row in query(database, "SELECT DISTINCT site FROM hands")} == {"poker-arena"}
    # Reported points are kept and the engine's verdicts match the re-score.
    assert count(database, "seats", "reported_points IS NULL") == 0
    assert count(database, "results", "disagrees") == 0
    # Hand numbers restart per match; keys carry the game, so the two logs cannot collide.
    ids = [row[0] for row in query(database, "SELECT hand_id FROM hands")]
    assert len(set(ids)) == 7
    assert {hand_id.rsplit("-", 2)[0] for hand_id in ids} == {"ofc", "ofc-pineapple"}
    fantasyland = query(database, "SELECT count(*) FROM seats WHERE fantasyland")
    assert fantasyland[0][0] == 2


def test_poker_arena_game_from_option_when_the_name_does_not_say(
    arena_logs: Path, tmp_path: Path, database: Path
) -> None:
    renamed = tmp_path / "match-log.jsonl"
    shutil.copy(arena_logs / "ofc-pineapple.jsonl", renamed)

    summary = ingest_paths([renamed], database, game="ofc-pineapple")

    assert summary.stored == 3
    assert {row[0] for row in query(database, "SELECT variant FROM hands")} == {"pineapple"}


def test_gzip_files_and_globs(tmp_path: Path, database: Path) -> None:
    folder = tmp_path / "in"
    write_jsonl(folder / "a.jsonl", [deal_hand(1), deal_hand(2)])
    with gzip.open(folder / "b.jsonl.gz", "wt", encoding="utf-8") as stream:
        stream.write(json.dumps(deal_hand(3)) + "\n")

    summary = ingest_paths([str(folder / "*.jsonl*")], database)

    assert sorted(Path(item.path).name for item in summary.files) == ["a.jsonl", "b.jsonl.gz"]
    assert summary.stored == 3


def test_boards_csv_has_no_streets_but_everything_else(tmp_path: Path, database: Path) -> None:
    source = tmp_path / "live-boards.csv"
    shutil.copy(REPO / "sample_data" / "live-boards.csv", source)

    summary = ingest_paths([source], database)

    assert summary.files[0].format == "boards-csv"
    assert summary.stored > 0
    assert count(database, "placements") == 0 and count(database, "discards") == 0
    assert count(database, "hands", "has_streets") == 0
    assert count(database, "evaluations") == count(database, "seats") > 0
    assert count(database, "seats", "cards_dealt IS NOT NULL") == 0


def test_mappings_take_the_same_path_and_keys(tmp_path: Path, database: Path) -> None:
    records = [deal_hand(seed, site="dashboard") for seed in range(4)]
    summary = ingest_mappings(records + [{"hand_id": "x"}], database, source_name="upload:test")

    assert (summary.stored, summary.rejected) == (4, 1)
    assert count(database, "placements") == 4 * 3 * 13
    keys = {row[0] for row in query(database, "SELECT hand_key FROM hands")}
    assert keys == {hand_key("dashboard", f"H{seed}") for seed in range(4)}
    reject = query(database, "SELECT path, line, reason FROM rejects")
    assert reject == [("upload:test", 5, "missing field 'variant'")]
    # The same hands from a file are duplicates of the mappings.
    again = ingest_paths([write_jsonl(tmp_path / "same.jsonl", records)], database)
    assert (again.stored, again.duplicates) == (0, 4)


def test_files_are_streamed_in_batches(database: Path) -> None:
    """Records are pulled lazily: when the 25th is read, the first two batches are stored."""
    seen_when_pulled: dict[int, int] = {}

    def generate():
        for seed in range(30):
            if seed == 24:
                seen_when_pulled[seed] = count(database, "hands")
            yield deal_hand(seed)

    summary = ingest_mappings(generate(), database, source_name="stream", batch_size=10)

    assert summary.stored == 30
    assert seen_when_pulled == {24: 20}


def test_an_older_database_gets_the_new_columns(tmp_path: Path, database: Path) -> None:
    import duckdb

    from pipeline.store import MIGRATIONS, ensure_schema

    connection = duckdb.connect(str(database))
    ensure_schema(connection)
    for table, column, _ in MIGRATIONS:
        connection.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    connection.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    connection.close()

    summary = ingest_paths([write_jsonl(tmp_path / "a.jsonl", [deal_hand(1), "oops"])], database)

    assert (summary.stored, summary.rejected) == (1, 1)
    assert query(database, "SELECT value FROM meta WHERE key = 'schema_version'") == [("2",)]
    assert count(database, "evaluations", "raw_royalty_top IS NOT NULL") == 3
    assert count(database, "rejects", "reject_key IS NOT NULL AND kind = 'read'") == 1


def test_a_table_added_to_the_schema_reaches_existing_databases(database: Path) -> None:
    import duckdb

    from pipeline.store import connect

    connect(database).close()
    connection = duckdb.connect(str(database))
    connection.execute("DROP TABLE sessions")  # as if the table came with a later version
    connection.execute("UPDATE meta SET value = 'older' WHERE key = 'schema_fingerprint'")
    connection.close()

    connect(database).close()

    assert count(database, "sessions") == 0  # the table is back


@pytest.mark.parametrize("workers", [1, 2])
def test_canonical_files_are_streamed(
    tmp_path: Path, database: Path, monkeypatch, workers: int
) -> None:
    """A canonical file's lines are read as batches are written, never all first: when the
    first batch commits, at most the batches in flight have been read (for workers, in packed
    batches: a block of the file at a time, cut into batches as they are handed out)."""
    import pipeline.ingest.ingestor as ingestor_module
    from pipeline.formats.source import expand_lines

    source = write_jsonl(tmp_path / "a.jsonl", [deal_hand(seed) for seed in range(200)])
    real_read_raw_lines = ingestor_module.read_raw_lines
    real_read_raw_batches = ingestor_module.read_raw_batches
    pulled = 0
    pulled_at_first_commit: list[int] = []

    def counting_lines(path, **options):
        nonlocal pulled
        for line in real_read_raw_lines(path, **options):
            pulled += 1
            yield line

    def counting_batches(path, sizes, **options):
        nonlocal pulled
        for batch in real_read_raw_batches(path, sizes, **options):
            pulled += len(expand_lines(batch))
            yield batch

    monkeypatch.setattr(ingestor_module, "read_raw_lines", counting_lines)
    monkeypatch.setattr(ingestor_module, "read_raw_batches", counting_batches)
    summary = ingest_paths(
        [source], database, batch_size=10, workers=workers,
        on_batch=lambda batch: pulled_at_first_commit.append(pulled),
    )

    assert summary.stored == 200 and pulled == 200
    in_flight = 10 * (workers + 2)  # the batches handed to workers, and the one being read
    assert pulled_at_first_commit[0] <= in_flight < 200


def test_only_hands_that_can_disagree_are_looked_at_and_none_is_missed() -> None:
    """verdict_tables looks at a hand player by player only where numpy finds a reported total
    unlike the re-score, or a source's own verdict: its disagreement texts must be exactly
    those of looking at every hand (mixed batches: agreeing, disagreeing, unreported, a
    source's verdict on an otherwise agreeing hand, a total reported as a float)."""
    records = [deal_hand(seed) for seed in range(40)]
    resolved = preset("standard")
    truth = [score_record(parse_hand(record), resolved) for record in records]
    for number, (record, scored) in enumerate(zip(records, truth, strict=True)):
        for player, verdict in zip(record["players"], scored.players, strict=True):
            kind = (number + player["seat"]) % 6
            if kind in (0, 1):
                player["reported_points"] = verdict.points  # agrees
            elif kind == 2:
                player["reported_points"] = verdict.points + 1  # disagrees
            elif kind == 3:
                player["reported_points"] = float(verdict.points)  # agrees, as a float
            elif kind == 4 and number % 3 in (1, 2):  # the source's own verdict, claimed wrongly
                player["reported_points"] = verdict.points
                player["source_showdown"] = {"fouled": not verdict.foul}
    hands = [parse_hand(record) for record in records]
    columns = columns_from_records([0] * len(hands), [""] * len(hands), hands,
                                   ["f.jsonl"] * len(hands), list(range(1, len(hands) + 1)))

    tables = verdict_tables(columns, lambda name: preset(name))

    evaluations = tables["evaluations"].to_pydict()
    results = tables["results"].to_pydict()
    expected: list[str | None] = []
    board = 0
    for hand in hands:
        facts = []
        for _ in hand.players:
            facts.append(VerdictFacts(
                columns.names[board], columns.reported[board], columns.player_extras[board] or {},
                evaluations["foul"][board],
                (evaluations["raw_royalty_top"][board], evaluations["raw_royalty_middle"][board],
                 evaluations["raw_royalty_bottom"][board]),
                evaluations["fantasyland_cards"][board], results["points"][board]))
            board += 1
        expected += disagreement_texts(facts)
    assert results["disagreement"] == expected
    assert results["disagrees"] == [text is not None for text in expected]
    # the batch holds every case: agreeing hands, point disagreements, a source's own verdict
    assert expected.count(None) > 20
    assert any(text and text.startswith("points: reported") for text in expected)
    assert any(text and text.startswith("foul: the source says") for text in expected)
    assert any(text and "(because of" in text for text in expected)
