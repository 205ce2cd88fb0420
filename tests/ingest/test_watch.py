"""``ofc watch`` in this process: growing files end as one ingest of the final files; unfinished
lines and hands are never quarantined; replaced files, restarts and earlier ingests."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import random
from pathlib import Path

import duckdb
import pytest

from pipeline.ingest.driver import ingest_paths
from pipeline.ingest.watch import Watcher, WatchOptions
from tests.ingest.conftest import POKER_ARENA, count, deal_hand, query
from tests.ingest.watch_data import (
    arena_log,
    boards_csv,
    canonical_lines,
    database_contents,
    sources,
)

WAIT = 1e9  # a quiet time never reached in a test


def watcher(folder: Path, database: Path, **options: object) -> tuple[Watcher, list[str]]:
    """A watcher of ``folder`` and the messages it says."""
    messages: list[str] = []
    return Watcher([folder], database, WatchOptions(**options), on_message=messages.append), messages  # type: ignore[arg-type]


def step(watch: Watcher, mode: str) -> None:
    """One pass, every file read as if it had been quiet for a moment (``open``), for the
    settle time (``settled``) or for the idle time (``final``)."""
    settle, idle = {"open": (WAIT, WAIT), "settled": (0.0, WAIT), "final": (0.0, 0.0)}[mode]
    watch.options = dataclasses.replace(watch.options, settle=settle, idle=idle)
    watch.step()
    watch.writer.close()


def ingested(database: Path, folder: Path) -> Path:
    """``database`` filled by one ingest of the folder (the reference)."""
    ingest_paths([folder], database)
    return database


def append(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as stream:
        stream.write(data.encode() if isinstance(data, str) else data)


def offsets(database: Path) -> dict[str, tuple]:
    rows = query(database, "SELECT path, bytes_read, lines_read, records, stored, duplicates, "
                           "rejected FROM file_offsets")
    return {Path(row[0]).name: row[1:] for row in rows}


@pytest.mark.parametrize(("seed", "part_bytes"), [(1, 8 << 20), (2, 700), (3, 5000)])
def test_growing_files_end_as_one_ingest_of_the_final_files(tmp_path: Path, seed: int,
                                                             part_bytes: int) -> None:
    folder = tmp_path / "hands"
    contents = sources(seed)
    rng = random.Random(seed)
    watch, _ = watcher(folder, tmp_path / "watched.duckdb", part_bytes=part_bytes)
    written = dict.fromkeys(contents, 0)
    for name in contents:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).touch()
    while any(written[name] < len(data) for name, data in contents.items()):
        name = rng.choice([name for name, data in contents.items() if written[name] < len(data)])
        size = rng.randint(1, 300)
        append(folder / name, contents[name][written[name]: written[name] + size])
        written[name] += size
        if rng.random() < 0.3:
            step(watch, "open")
    step(watch, "open")
    assert count(tmp_path / "watched.duckdb", "ingested_files") == 0  # nothing settled yet
    step(watch, "final")
    reference = ingested(tmp_path / "ingested.duckdb", folder)
    assert database_contents(tmp_path / "watched.duckdb") == database_contents(reference)
    # the comparison has teeth: hands of every source, and each kind of reject
    contents_of = database_contents(reference)
    assert len(contents_of["hands"]) > 30
    reasons = " | ".join(row[3] for row in contents_of["rejects"])
    assert "incomplete" in reasons and "seat 'x'" in reasons and "invalid JSON" in reasons


def test_a_half_written_line_is_never_quarantined(tmp_path: Path) -> None:
    folder, database = tmp_path / "hands", tmp_path / "watched.duckdb"
    first, second = (json.dumps(deal_hand(seed, hand_id=f"H{seed}")) for seed in (1, 2))
    path = folder / "hands.jsonl"
    append(path, first + "\n" + second[:100])
    watch, _ = watcher(folder, database)
    for mode in ("open", "settled", "open"):
        step(watch, mode)
        assert count(database, "hands") == 1 and count(database, "rejects") == 0
    assert offsets(database)["hands.jsonl"][:2] == (len(first) + 1, 1)
    append(path, second[100:] + "\n")
    step(watch, "open")
    assert count(database, "hands") == 2 and count(database, "rejects") == 0


def test_a_half_written_line_is_read_as_it_is_once_the_file_is_idle(tmp_path: Path) -> None:
    folder, database = tmp_path / "hands", tmp_path / "watched.duckdb"
    line = json.dumps(deal_hand(1, hand_id="H1"))
    append(folder / "hands.jsonl", line + "\n" + line[:100])
    watch, _ = watcher(folder, database)
    step(watch, "final")
    reference = ingested(tmp_path / "ingested.duckdb", folder)
    assert database_contents(database) == database_contents(reference)
    assert query(database, "SELECT reason FROM rejects")[0][0].startswith("truncated line")


def test_an_unfinished_poker_arena_hand_waits_and_lands_once_scored(tmp_path: Path) -> None:
    folder, database = tmp_path / "arena", tmp_path / "watched.duckdb"
    lines = (POKER_ARENA / "ofc.jsonl").read_text().splitlines(keepends=True)
    headers = [index for index, line in enumerate(lines) if '"seats"' in line]
    path = folder / "ofc.jsonl"
    append(path, "".join(lines[: headers[1] - 1]))  # the first hand, its last score missing
    watch, _ = watcher(folder, database)
    for mode in ("open", "settled"):
        step(watch, mode)
        assert count(database, "hands") == 0 and count(database, "rejects") == 0
    append(path, lines[headers[1] - 1])  # the last score: the hand is over
    step(watch, "open")
    assert count(database, "hands") == 1 and count(database, "rejects") == 0
    append(path, "".join(lines[headers[1]:]))
    step(watch, "open")
    step(watch, "final")
    reference = ingested(tmp_path / "ingested.duckdb", folder)
    assert database_contents(database) == database_contents(reference)


def test_a_boards_csv_hand_lands_when_the_next_begins_or_once_the_file_settles(
    tmp_path: Path,
) -> None:
    folder, database = tmp_path / "home", tmp_path / "watched.duckdb"
    sheet = boards_csv(5, 3).decode().splitlines(keepends=True)  # header, 2 + 3 + 2 rows
    path = folder / "boards.csv"
    append(path, "".join(sheet[:3]))
    watch, _ = watcher(folder, database)
    step(watch, "open")
    assert count(database, "hands") == 0  # its rows may go on
    append(path, sheet[3])
    step(watch, "open")
    assert count(database, "hands") == 1  # the next hand's first row: the first is over
    append(path, "".join(sheet[4:6]))
    step(watch, "settled")
    assert count(database, "hands") == 2  # quiet for the settle time: the last hand is taken
    append(path, "".join(sheet[6:]))
    step(watch, "settled")
    assert count(database, "hands") == 3 and count(database, "rejects") == 0
    assert database_contents(database) == database_contents(
        ingested(tmp_path / "ingested.duckdb", folder))


@pytest.mark.parametrize("how", ["renamed over", "rewritten in place"])
def test_a_file_replaced_by_a_shorter_one_is_read_again(tmp_path: Path, how: str) -> None:
    folder, database = tmp_path / "hands", tmp_path / "watched.duckdb"
    reference = tmp_path / "ingested.duckdb"  # ofc ingest of the first version, then the second
    path = folder / "hands.jsonl"
    first = canonical_lines(1, 6, broken_at=None)
    records = [json.loads(line) for line in first.decode().splitlines()]
    records[1]["table"] = "edited"  # the same hand with other content: a conflict
    shorter = ("\n".join(json.dumps(record) for record in records[:3]) + "\n").encode()
    append(path, first)
    ingest_paths([folder], reference)
    watch, messages = watcher(folder, database)
    step(watch, "settled")
    assert count(database, "hands") == 6
    if how == "renamed over":
        (folder / ".new").write_bytes(shorter)
        os.replace(folder / ".new", path)
    else:
        with open(path, "r+b") as stream:
            stream.truncate(0)
            stream.write(shorter)
    ingest_paths([folder], reference)
    step(watch, "settled")
    assert any("replaced or cut" in message for message in messages)
    watched, expected = database_contents(database), database_contents(reference)
    assert {table: rows for table, rows in watched.items() if table != "ingested_files"} == {
        table: rows for table, rows in expected.items() if table != "ingested_files"}
    # one row for the file as it is now (ingest keeps one per run: the last is the same)
    assert watched["ingested_files"] == [_last_run(reference)]
    assert count(database, "rejects", "kind = 'conflict'") == 1
    assert offsets(database)["hands.jsonl"][3:] == (0, 2, 1)  # of the new version: 2 dup, 1 conflict


def _last_run(database: Path) -> tuple:
    """The ingested_files row of the last ingest run, without its time."""
    connection = duckdb.connect(str(database), read_only=True)
    try:
        return connection.execute(
            "SELECT * EXCLUDE (ingested_at) FROM ingested_files ORDER BY ingested_at DESC LIMIT 1"
        ).fetchall()[0]
    finally:
        connection.close()


def test_a_file_replaced_by_a_longer_copy_with_the_same_start_goes_on(tmp_path: Path) -> None:
    """A sync tool or a spreadsheet saves a new file over the old one: only its end is new."""
    folder, database = tmp_path / "home", tmp_path / "watched.duckdb"
    sheet = boards_csv(6, 4)
    path = folder / "boards.csv"
    append(path, sheet[: sheet.index(b"\n3,") + 1])  # hands 1 and 2
    watch, messages = watcher(folder, database)
    step(watch, "settled")
    assert count(database, "hands") == 2
    (folder / ".boards.csv.tmp").write_bytes(sheet)
    os.replace(folder / ".boards.csv.tmp", path)  # another inode, the same first rows
    step(watch, "settled")
    assert not any("replaced" in message for message in messages)
    assert offsets(database)["boards.csv"][2:] == (4, 3, 0, 1)  # hand 4 has a bad seat
    assert database_contents(database) == database_contents(
        ingested(tmp_path / "ingested.duckdb", folder))


def test_a_restarted_watcher_reads_nothing_twice(tmp_path: Path) -> None:
    folder, database = tmp_path / "hands", tmp_path / "watched.duckdb"
    contents = sources(4)
    halves = {name: len(data) // 2 for name, data in contents.items()}
    for name, data in contents.items():
        append(folder / name, data[: halves[name]])
    first, _ = watcher(folder, database, part_bytes=900)
    step(first, "open")
    before = offsets(database)
    assert all(0 < before[Path(name).name][0] < len(data) for name, data in contents.items())
    for name, data in contents.items():
        append(folder / name, data[halves[name]:])
    second, _ = watcher(folder, database, part_bytes=900)  # a new process, as after a restart
    step(second, "open")
    step(second, "final")
    reference = ingested(tmp_path / "ingested.duckdb", folder)
    assert database_contents(database) == database_contents(reference)
    # the counts include ingest's (the arena log's second match repeats its hands): no part
    # was read twice, or its hands would count as duplicates once more
    by_file = {Path(row[0]).name: row[1:] for row in query(
        reference, "SELECT path, records, stored, duplicates, rejected FROM ingested_files")}
    assert {name: row[2:] for name, row in offsets(database).items()} == by_file


def test_a_file_ingested_before_is_followed_from_its_end(tmp_path: Path) -> None:
    folder, database = tmp_path / "hands", tmp_path / "watched.duckdb"
    path = folder / "hands.jsonl"
    append(path, canonical_lines(2, 8, broken_at=None))
    ingest_paths([folder], database)
    watch, messages = watcher(folder, database)
    step(watch, "settled")
    assert any("already ingested" in message for message in messages)
    assert offsets(database)["hands.jsonl"] == (path.stat().st_size, 8, 8, 8, 0, 0)
    assert count(database, "ingested_files") == 1  # nothing read again
    append(path, json.dumps(deal_hand(99, hand_id="new")) + "\n")
    step(watch, "settled")
    assert count(database, "hands") == 9
    assert offsets(database)["hands.jsonl"][2:] == (9, 9, 0, 0)


def test_a_gzip_file_is_read_once_it_is_idle(tmp_path: Path) -> None:
    folder, database = tmp_path / "hands", tmp_path / "watched.duckdb"
    folder.mkdir()
    (folder / "hands.jsonl.gz").write_bytes(gzip.compress(canonical_lines(3, 5)))
    (folder / "ofc.jsonl.gz").write_bytes(gzip.compress(arena_log()))
    watch, _ = watcher(folder, database)
    step(watch, "settled")
    assert count(database, "hands") == 0
    assert "compressed" in next(iter(watch.status.waiting.values()))
    step(watch, "final")
    assert database_contents(database) == database_contents(
        ingested(tmp_path / "ingested.duckdb", folder))


def test_two_watchers_of_one_file_never_both_store_a_part(tmp_path: Path) -> None:
    folder, database = tmp_path / "hands", tmp_path / "watched.duckdb"
    path = folder / "hands.jsonl"
    append(path, canonical_lines(5, 4, broken_at=None))
    first, _ = watcher(folder, database)
    second, messages = watcher(folder, database)
    second.start()  # both have read the offsets: none yet
    step(first, "open")
    step(second, "open")  # its offset was moved by the first: nothing stored twice
    assert any("another watcher" in message for message in messages)
    append(path, canonical_lines(6, 3, broken_at=None))
    step(second, "open")
    step(first, "open")
    step(first, "open")
    step(second, "settled")
    step(first, "settled")
    reference = ingested(tmp_path / "ingested.duckdb", folder)
    assert database_contents(database) == database_contents(reference)
    assert offsets(database)["hands.jsonl"][2:] == (7, 7, 0, 0)


def test_a_file_of_no_known_format_waits_then_fails_as_ingest_says(tmp_path: Path) -> None:
    folder, database = tmp_path / "notes", tmp_path / "watched.duckdb"
    append(folder / "notes.txt", "remember to buy chips\n")
    watch, _ = watcher(folder, database)
    step(watch, "settled")
    assert count(database, "rejects") == 0
    assert "not recognised" in watch.status.waiting[str((folder / "notes.txt").resolve())]
    step(watch, "final")
    step(watch, "final")
    assert database_contents(database) == database_contents(
        ingested(tmp_path / "ingested.duckdb", folder))
    assert count(database, "rejects", "kind = 'file'") == 1


def test_a_poker_arena_log_waits_for_its_game(tmp_path: Path) -> None:
    folder, database = tmp_path / "arena", tmp_path / "watched.duckdb"
    append(folder / "match.jsonl", (POKER_ARENA / "ofc-pineapple.jsonl").read_bytes())
    watch, _ = watcher(folder, database)
    step(watch, "settled")
    assert count(database, "hands") == 0 and count(database, "rejects") == 0
    assert "--variant" in next(iter(watch.status.waiting.values()))
    named, _ = watcher(folder, database, game="pineapple")
    step(named, "settled")
    assert count(database, "hands") == 3 and count(database, "rejects") == 0
    hand_ids = {row[0] for row in query(database, "SELECT hand_id FROM hands")}
    assert all(hand_id.startswith("ofc-pineapple-") for hand_id in hand_ids)


def test_a_line_taken_without_its_newline_goes_on_with_the_right_numbers(tmp_path: Path) -> None:
    folder, database = tmp_path / "hands", tmp_path / "watched.duckdb"
    path = folder / "hands.jsonl"
    lines = [json.dumps(deal_hand(seed, hand_id=f"N{seed}")) for seed in range(4)]
    append(path, "\n".join(lines[:2]))  # a tool that writes no newline after the last line
    watch, _ = watcher(folder, database)
    step(watch, "final")
    assert count(database, "hands") == 2
    append(path, "\n" + "\n".join(lines[2:]) + "\n")
    step(watch, "open")
    step(watch, "final")
    assert database_contents(database) == database_contents(
        ingested(tmp_path / "ingested.duckdb", folder))
    assert [row[0] for row in query(database, "SELECT source_line FROM hands ORDER BY 1")] == [
        1, 2, 3, 4]


def test_the_status_line_says_files_hands_and_the_last_hand(tmp_path: Path) -> None:
    folder, database = tmp_path / "hands", tmp_path / "watched.duckdb"
    append(folder / "hands.jsonl", canonical_lines(7, 5, broken_at=None))
    append(folder / "ofc.jsonl", (POKER_ARENA / "ofc.jsonl").read_bytes())
    watch, _ = watcher(folder, database)
    step(watch, "open")
    line = watch.status.line()
    assert line.startswith("following 2 files · 9 hands stored · 9 new")
    last = max(row[0] for row in query(database, "SELECT started_at FROM hands"
                                                 " WHERE started_at IS NOT NULL"))
    assert f"last hand {last:%Y-%m-%d %H:%M:%S} UTC" in line


def test_the_offsets_table_is_created_in_an_older_database(tmp_path: Path) -> None:
    folder, database = tmp_path / "hands", tmp_path / "old.duckdb"
    append(folder / "hands.jsonl", canonical_lines(8, 2, broken_at=None))
    ingest_paths([folder], database)
    connection = duckdb.connect(str(database))
    connection.execute("DROP TABLE file_offsets")
    connection.execute("UPDATE meta SET value = 'old' WHERE key = 'schema_fingerprint'")
    connection.close()
    append(folder / "more.jsonl", canonical_lines(9, 2, broken_at=None))
    watch, _ = watcher(folder, database)
    step(watch, "open")
    assert count(database, "hands") == 4 and count(database, "file_offsets") == 2
