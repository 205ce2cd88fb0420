"""``ofc watch`` keeps the aggregates (docs/aggregates.md): files that grow while they are read
in many small parts leave the same aggregates as one ingest of the final files, equal to a
rebuild from the stored hands, and the read model answers the same from them as by a full
pass."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb

from pipeline.read.totals import aggregates_ready
from tests.ingest.test_watch import append, ingested, step, watcher
from tests.ingest.watch_data import sources
from tests.simulated_mix import assert_routes_agree, rebuilt_aggregates, stored_aggregates


def test_a_watched_folder_keeps_the_aggregates_of_one_ingest(tmp_path: Path) -> None:
    folder = tmp_path / "hands"
    contents = sources(4)
    rng = random.Random(4)
    database = tmp_path / "watched.duckdb"
    watch, _ = watcher(folder, database, part_bytes=700)
    written = dict.fromkeys(contents, 0)
    for name in contents:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).touch()
    passes = 0
    while any(written[name] < len(data) for name, data in contents.items()):
        name = rng.choice([name for name, data in contents.items() if written[name] < len(data)])
        size = rng.randint(1, 600)
        append(folder / name, contents[name][written[name]: written[name] + size])
        written[name] += size
        if rng.random() < 0.3:
            step(watch, "open")
            passes += 1
    connection = duckdb.connect(str(database), read_only=True)
    try:  # hands were written part by part while the files grew, not all at the end
        before_the_end = connection.sql("SELECT count(*) FROM hands").fetchall()[0][0]
    finally:
        connection.close()
    step(watch, "final")
    assert passes > 5 and before_the_end > 0
    kept, again = rebuilt_aggregates(database)
    assert kept == again
    assert len(kept["board_totals"]) > 10 and kept["session_totals"]
    reference = ingested(tmp_path / "ingested.duckdb", folder)
    connection = duckdb.connect(str(reference), read_only=True)
    try:
        assert stored_aggregates(connection) == kept
    finally:
        connection.close()
    connection = duckdb.connect(str(database), read_only=True)
    try:
        assert aggregates_ready(connection)
    finally:
        connection.close()
    assert assert_routes_agree(database) > 0
