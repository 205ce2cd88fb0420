"""Fixtures of the lake tests: one corpus of every input, the database ``ofc ingest`` makes of
it, lakes built from it, the Spark session, and table dumps to compare them.

The corpus (``first/``, then ``later/``):

* canonical JSON Lines: the five-hand example (plain, read in three parts with a small split
  size), the 3,000 demo hands (gzip), hands of a site whose name needs escaping in a folder
  name (``home/game: #1 é``), the broken example (four bad lines), an empty file and a file in
  no known format;
* poker-arena logs of all four games (``ofc``, ``ofc-pineapple``, and the Pineapple log read as
  ``ofc-progressive`` and ``ofc-27``, whose engine verdicts then disagree with the re-score);
* the boards CSV of a live game;
* ``later/``: new hands at the demo tables that join, extend and move the start of existing
  sessions, a repeat of a stored hand (a duplicate) and a changed one (a conflict naming the
  first file); and a byte copy of the example, which is ``unchanged``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from pipeline.ingest.driver import ingest_paths
from pipeline.lake.build import build_lake
from pipeline.lake.engine import LocalEngine
from pipeline.read.lake import ParquetLake
from pipeline.store.aggregates import (
    AGGREGATES_META_KEY,
    PLAY_ORDER_META_KEY,
    ROLLUP_META_KEY,
    SUMMARY_META_KEY,
)
from tests.ingest.conftest import POKER_ARENA, deal_hand, write_jsonl

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_data"
ODD_SITE = "home/game: #1 é"
SPLIT_BYTES = 3000
"""Small enough that the plain canonical files are read in several parts."""

TABLES = ("hands", "seats", "placements", "discards", "boards", "evaluations", "matchups",
          "results", "sessions", "rejects", "ingested_files", "meta")
TIMES = {"rejects": ("rejected_at", "site", "resolved_at", "resolved_by"),
         "ingested_files": ("ingested_at", "message"),
         "sessions": ("fouls", "royalties")}
"""Columns left out of comparisons: those that hold the time of the run (and a message quoting
it), the database's own bookkeeping of rejects (their site and their resolution by a later
file), which the lake does not keep (docs/lake.md), and the sessions' fouls and royalties, which
the database keeps with its aggregates (docs/aggregates.md): a lake has no aggregates, and the
read model answers it by the full pass (the read commands' outputs are compared below)."""

DATABASE_META = (AGGREGATES_META_KEY, ROLLUP_META_KEY, PLAY_ORDER_META_KEY, SUMMARY_META_KEY)
"""Meta keys only a database has: its kept tables' definitions (docs/aggregates.md)."""


def _later_hands(first: Path) -> list[str]:
    """New hands at the demo tables, a duplicate and a conflict (see the module docstring)."""
    with gzip.open(first / "demo-hands.jsonl.gz", "rt", encoding="utf-8") as stream:
        lines = [stream.readline() for _ in range(40)]
    records = [json.loads(line) for line in lines]
    out: list[str] = []
    for index, record in enumerate(records[:12]):
        moved = dict(record, hand_id=record["hand_id"] + "-later")
        start = datetime.fromisoformat(record["started_at"].replace("Z", "+00:00"))
        # the first one starts five minutes before the session's first hand: that session's id
        # changes, and so the stored seats of the session are rewritten
        shift = timedelta(minutes=-5) if index == 0 else timedelta(seconds=30)
        moved["started_at"] = (start + shift).strftime("%Y-%m-%dT%H:%M:%SZ")
        out.append(json.dumps(moved))
    out.append(lines[20].rstrip("\n"))  # the same bytes as a stored hand: a duplicate
    changed = dict(records[21])
    changed["players"] = [dict(player) for player in records[21]["players"]]
    changed["players"][0]["reported_points"] = 999
    out.append(json.dumps(changed))  # the same hand id, other content: a conflict
    return out


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``first/`` and ``later/``: every input kind (see the module docstring)."""
    root = tmp_path_factory.mktemp("corpus")
    first = root / "first"
    first.mkdir()
    for name in ("canonical-example.jsonl", "demo-hands.jsonl.gz", "broken-example.jsonl",
                 "live-boards.csv"):
        shutil.copy(SAMPLES / name, first / name)
    write_jsonl(first / "odd-site.jsonl", [
        deal_hand(seed, site=ODD_SITE, hand_id=f"odd-{seed}", table="T'9",
                  started_at=f"2026-{11 + seed % 2}-0{1 + seed % 3}T20:00:00Z")
        for seed in range(1, 7)
    ])
    (first / "empty.jsonl").write_bytes(b"")
    (first / "notes.txt").write_text("these are not hands\n", encoding="utf-8")
    arena = first / "arena"
    arena.mkdir()
    shutil.copy(POKER_ARENA / "ofc.jsonl", arena / "ofc.jsonl")
    shutil.copy(POKER_ARENA / "ofc-pineapple.jsonl", arena / "ofc-pineapple.jsonl")
    pineapple = (POKER_ARENA / "ofc-pineapple.jsonl").read_bytes()
    # the same hands read as the other two games (a blank line keeps their bytes distinct)
    (arena / "ofc-progressive.jsonl").write_bytes(pineapple + b"\n")
    (arena / "ofc-27.jsonl").write_bytes(pineapple + b"\n\n")
    later = root / "later"
    later.mkdir()
    (later / "more-hands.jsonl").write_text("\n".join(_later_hands(first)) + "\n",
                                            encoding="utf-8")
    shutil.copy(SAMPLES / "canonical-example.jsonl", later / "copy-of-example.jsonl")
    return first, later


@pytest.fixture(scope="session")
def ingested(corpus: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[Path, Path]:
    """``ofc ingest`` of the corpus: (database after ``first/``, after ``first/`` then
    ``later/``)."""
    folder = tmp_path_factory.mktemp("databases")
    after_first = folder / "first.duckdb"
    ingest_paths([corpus[0]], after_first)
    after_both = folder / "both.duckdb"
    shutil.copy(after_first, after_both)
    ingest_paths([corpus[1]], after_both)
    return after_first, after_both


@pytest.fixture(scope="session")
def local_lakes(corpus: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
                ) -> tuple[Path, Path]:
    """Lakes built with the local engine: (after ``first/``, after ``first/`` then ``later/``)."""
    folder = tmp_path_factory.mktemp("local-lakes")
    after_first = folder / "first"
    build_lake([corpus[0]], after_first, LocalEngine(), split_bytes=SPLIT_BYTES)
    after_both = folder / "both"
    shutil.copytree(after_first, after_both)
    build_lake([corpus[1]], after_both, LocalEngine(), split_bytes=SPLIT_BYTES)
    return after_first, after_both


def _columns(connection: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [row[0] for row in connection.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
        "ORDER BY ordinal_position", [table]).fetchall()
        if row[0] not in TIMES.get(table, ())]


def dump(connection: duckdb.DuckDBPyConnection, table: str) -> list[tuple]:
    """Every row of ``table``, sorted, without the run-time columns."""
    rows = connection.execute(f"SELECT {', '.join(_columns(connection, table))} FROM {table}"
                              ).fetchall()
    return sorted(rows, key=repr)


def database_tables(database: Path) -> dict[str, list[tuple]]:
    """Every table of a database, dumped."""
    connection = duckdb.connect(str(database), read_only=True)
    try:
        tables = {table: dump(connection, table) for table in TABLES}
    finally:
        connection.close()
    tables["meta"] = [row for row in tables["meta"]
                      if not row[0].startswith("schema_") and row[0] not in DATABASE_META]
    return tables


def lake_tables(lake: Path) -> dict[str, list[tuple]]:
    """Every table of a lake, read in place as the read model reads it, dumped."""
    connection = ParquetLake(lake).open()
    try:
        tables = {table: dump(connection, table) for table in TABLES}
    finally:
        connection.close()
    tables["meta"] = [row for row in tables["meta"] if not row[0].startswith("schema_")]
    return tables


def assert_same_tables(expected: dict[str, list[tuple]], actual: dict[str, list[tuple]]) -> None:
    """Table by table, row by row (sorted), with the first differences in the message."""
    for table in TABLES:
        if expected[table] == actual[table]:
            continue
        wanted, found = set(expected[table]), set(actual[table])
        missing = [row for row in expected[table] if row not in found][:3]
        extra = [row for row in actual[table] if row not in wanted][:3]
        raise AssertionError((table, len(expected[table]), len(actual[table]), missing, extra))


# --- Spark ------------------------------------------------------------------------------------


@contextlib.contextmanager
def _captured_terminal() -> Iterator[Path]:
    """File descriptors 1 and 2 of this process (and of any child it starts) into a file."""
    handle, name = tempfile.mkstemp(prefix="ofc-spark-start-", suffix=".txt")
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(handle, 1)
        os.dup2(handle, 2)
        yield Path(name)
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for descriptor in (*saved, handle):
            os.close(descriptor)


@pytest.fixture(scope="session")
def spark_start() -> tuple[object, str]:
    """One SparkSession (local[2]) for every Spark test, and what starting it printed on the
    terminal. Skipped, with the reason, only where Java is missing: without PySpark the Spark
    tests fail, because the test command installs the spark extra."""
    from pipeline.lake.spark import java_executable, spark_session

    if java_executable() is None:
        pytest.skip("no Java on this machine: the Spark engine needs Java 17 or newer")
    try:
        import pyspark  # noqa: F401
    except ImportError:
        pytest.fail("PySpark is missing: install the spark extra (pip install -e '.[test,spark]')")
    with _captured_terminal() as output:
        session = spark_session("local[2]")
    return session, output.read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="session")
def spark(spark_start: tuple[object, str]) -> object:
    """The SparkSession of the Spark tests."""
    return spark_start[0]
