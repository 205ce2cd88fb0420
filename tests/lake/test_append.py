"""Appends to a lake cost what is new and give what one build gives.

An append reads only the stored sessions near its new hands (pipeline/lake/queries.py,
``merged_sessions``); these tests check that a lake grown by many appends, in orders that
extend sessions forwards and backwards, join two sessions, open new tables and players, and
carry undated hands, holds exactly what one build of all the files holds, table by table, and
what ``ofc ingest`` stores. The local engine runs them (the Spark engine runs the same SQL:
tests/lake/test_equivalence.py builds its lakes in two appends).
"""

from __future__ import annotations

import json
import random
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pipeline.ingest.driver import ingest_paths
from pipeline.lake.build import build_lake
from pipeline.lake.engine import LocalEngine
from tests.ingest.conftest import deal_hand, write_jsonl
from tests.lake.conftest import assert_same_tables, database_tables, lake_tables

START = datetime(2026, 11, 1, 20, 0, tzinfo=UTC)
NAMES = ("mara", "jun", "lee", "ana")


def _stamp(minutes: float) -> str:
    return (START + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _batches(folder: Path) -> list[Path]:
    """Files to append one after the other: hands spread over two tables and two months, each
    file's hands chosen so that an append extends a session forwards, comes before a stored
    session's first hand (its id changes), fills the gap between two stored sessions (they
    become one), opens a new table and player, or has undated hands; one file repeats hands
    of another (duplicates)."""
    rng = random.Random(33)
    plans = [
        [0, 10, 20, 200, 210, 400],           # three sessions of T1 at a 30-minute gap
        [30, 40, 410, 420],                  # extend two of them forwards
        [-25, -15],                          # before the first session's start: a new id
        [60, 90, 120, 150, 180],             # bridge the first and the second session
        [44_000, 44_010],                    # a month later: another partition
        [43_990, 50, 215],                   # one before the later session, two inside
        [None, None, 5],                     # undated hands, and one inside a session
    ]
    files = []
    seed = 0
    for number, minutes_list in enumerate(plans):
        records = []
        for minutes in minutes_list:
            seed += 1
            table = "T2" if seed % 5 == 0 else "T1"
            names = NAMES[:3] if seed % 7 else (NAMES[3], *NAMES[:2])
            records.append(deal_hand(
                1000 + seed, hand_id=f"A{seed:04d}", table=table, names=names,
                started_at=None if minutes is None else _stamp(minutes + rng.random())))
        files.append(write_jsonl(folder / f"day-{number}.jsonl", records))
    repeated = folder / "day-7-repeat.jsonl"
    shutil.copy(files[1], repeated)
    repeated.write_text(repeated.read_text(encoding="utf-8")
                        + (folder / "day-2.jsonl").read_text(encoding="utf-8").splitlines()[0]
                        + "\n", encoding="utf-8")
    return [*files, repeated]


def test_appends_equal_one_build_of_all_the_files(tmp_path: Path) -> None:
    files = _batches(tmp_path / "hands")
    appended = tmp_path / "appended"
    for path in files:
        build_lake([path], appended, LocalEngine())
    once = tmp_path / "once"
    build_lake(files, once, LocalEngine())
    grown, whole = lake_tables(appended), lake_tables(once)
    assert len(grown["hands"]) == 25 and len(grown["sessions"]) >= 4
    assert_same_tables(whole, grown)
    # and both are what ingest stores (file by file, as the appends ran)
    database = tmp_path / "ingested.duckdb"
    for path in files:
        ingest_paths([path], database, workers=1)
    from tests.lake.conftest import DATABASE_META

    stored = database_tables(database)
    stored["meta"] = [row for row in stored["meta"] if row[0] not in DATABASE_META]
    assert_same_tables(stored, grown)


def test_an_append_rewrites_no_seat_when_its_hands_come_after(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "first.jsonl", [
        deal_hand(seed, hand_id=f"F{seed}", started_at=_stamp(seed * 5)) for seed in range(6)])
    later = write_jsonl(tmp_path / "later.jsonl", [
        deal_hand(seed, hand_id=f"F{seed}", started_at=_stamp(seed * 5)) for seed in range(6, 9)])
    lake = tmp_path / "lake"
    build_lake([first], lake, LocalEngine())
    seats_before = set((lake / "seats").rglob("*.parquet"))
    build_lake([later], lake, LocalEngine())
    seats_after = set((lake / "seats").rglob("*.parquet"))
    assert seats_before <= seats_after, "a stored seats file was rewritten"
    sessions = lake_tables(lake)["sessions"]
    assert len(sessions) == 3 and {row[6] for row in sessions} == {9}  # a session a player


def test_a_spark_failure_says_what_to_change_not_a_java_trace() -> None:
    from pipeline.lake.spark import failure_message

    trace = ("An error occurred while calling o812.parquet.\n"
             ": org.apache.spark.memory.SparkOutOfMemoryError: [UNABLE_TO_ACQUIRE_MEMORY] "
             "Unable to acquire 65536 bytes of memory, got 0.\n"
             "\tat org.apache.spark.memory.MemoryConsumer.throwOom(MemoryConsumer.java:157)\n")
    message = failure_message("assignments", RuntimeError(trace), "local[2]", "1g")
    assert "ran out of memory in step 'assignments'" in message
    assert "--driver-memory" in message and "local[2]" in message and "1g" in message
    assert "the lake is unchanged" in message
    assert "\tat " not in message and "MemoryConsumer" not in message
    other = failure_message("write seats", RuntimeError(
        "An error occurred\n: org.apache.spark.SparkException: Job aborted.\n\tat x.y(Z.java:1)"),
        "spark://head:7077", "1g")
    assert "Spark failed in step 'write seats'" in other and "SparkException" in other
    assert "\tat " not in other
    broadcast = failure_message("outcomes", RuntimeError(
        "An error occurred while calling o604.parquet.\n: org.apache.spark.SparkException: Not "
        "enough memory to build and broadcast the table to all worker nodes.\n\tat a.b(C.java:1)"),
        "local[2]", "1g")
    assert "ran out of memory in step 'outcomes'" in broadcast and "\tat " not in broadcast


def test_a_bad_master_is_refused_before_a_jvm_starts_and_a_failed_start_shows_no_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """``--master local[0]`` used to start a JVM and print its whole Java trace."""
    from pipeline.cli import main
    from pipeline.lake.spark import master_problem, start_failure_message

    for good in ("local", "local[1]", "local[*]", "local[4,2]", "spark://head:7077", "yarn",
                 "k8s://https://api:6443"):
        assert master_problem(good) is None, good
    for bad in ("local[0]", "locl[2]", "local[-1]", "local[two]", "", "head:7077"):
        assert "is not a Spark master" in (master_problem(bad) or ""), bad
    source = tmp_path / "hands.jsonl"
    source.write_text(json.dumps(deal_hand(1)) + "\n", encoding="utf-8")
    started = time.perf_counter()
    assert main(["lake", "build", str(source), "--lake", str(tmp_path / "lake"), "--quiet",
                 "--engine", "spark", "--master", "local[0]"]) == 1
    err = capsys.readouterr().err
    assert "--master 'local[0]' is not a Spark master" in err and "\tat " not in err
    assert time.perf_counter() - started < 5  # refused before any JVM
    trace = ("An error occurred while calling None.org.apache.spark.api.java.JavaSparkContext.\n"
             ": org.apache.spark.SparkException: Asked to run locally with 0 threads\n"
             "\tat org.apache.spark.SparkContext$.createTaskScheduler(SparkContext.scala:3333)\n"
             "\tat java.base/java.lang.Thread.run(Thread.java:840)\n")
    message = start_failure_message(RuntimeError(trace), "local[0]")
    assert message.startswith("Spark did not start (master local[0]): "
                              "org.apache.spark.SparkException: Asked to run locally with 0 threads.")
    assert "\tat " not in message and "Thread.java" not in message and "--master" in message


def test_a_failure_in_the_drivers_duckdb_leaves_the_lake_as_it_was(
        spark: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small Spark commit's statements run in the driver (DuckDB): when that fails (out of
    memory, say), the user reads what to change and the lake is unchanged."""
    import duckdb

    from pipeline.lake.engine import LocalEngine as Driver
    from pipeline.lake.spark import DRIVER_RECORDS_VARIABLE, SparkEngine, SparkFailed
    from pipeline.lake.storage import LakeError

    files = _batches(tmp_path / "hands")
    lake = tmp_path / "lake"
    engine = SparkEngine(spark=spark)
    build_lake(files[:1], lake, engine)
    before = lake_tables(lake)
    manifest = (lake / "_lake.json").read_bytes()

    def fails(*arguments: object) -> None:
        raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate block")

    monkeypatch.setattr(Driver, "write_new_rows", fails)
    with pytest.raises(SparkFailed) as raised:
        build_lake(files[1:2], lake, engine)
    message = str(raised.value)
    assert isinstance(raised.value, LakeError)
    assert "the driver's DuckDB failed in step 'write the hand tables'" in message
    assert "Out of Memory" in message and f"{DRIVER_RECORDS_VARIABLE}=0" in message
    assert "the lake is unchanged" in message
    assert (lake / "_lake.json").read_bytes() == manifest
    assert_same_tables(before, lake_tables(lake))


def test_an_append_with_another_gap_recomputes_every_session(tmp_path: Path) -> None:
    files = _batches(tmp_path / "hands")
    appended = tmp_path / "appended"
    build_lake(files[:3], appended, LocalEngine(), session_gap=30)
    build_lake(files[3:], appended, LocalEngine(), session_gap=12)
    once = tmp_path / "once"
    build_lake(files, once, LocalEngine(), session_gap=12)
    grown, whole = lake_tables(appended), lake_tables(once)
    assert_same_tables(whole, grown)


def test_a_small_spark_commit_with_another_gap_reads_the_lake_on_spark(
        spark: object, tmp_path: Path) -> None:
    """A commit that recomputes every session (the gap changed) reads every stored seat: the
    build says so to the engine, and on Spark such a commit keeps its statements on the
    executors (Spark SQL), however few records it reads."""
    from pipeline.lake.plan import scan_file, work_units
    from pipeline.lake.spark import SparkEngine
    from pipeline.records.rules_file import RulesResolver

    told: list[bool] = []

    class Told(LocalEngine):
        def prepare(self, *arguments: object, whole_lake: bool = False) -> None:
            told.append(whole_lake)
            super().prepare(*arguments, whole_lake=whole_lake)  # type: ignore[arg-type]

    files = _batches(tmp_path / "hands")
    lake = tmp_path / "lake"
    build_lake(files[:3], lake, Told(), session_gap=30)
    build_lake(files[3:4], lake, Told(), session_gap=30)
    build_lake(files[4:5], lake, Told(), session_gap=12)
    assert told == [False, False, True]

    engine = SparkEngine(spark=spark)
    units = work_units([scan_file(0, str(files[0]))], None, None)
    engine.prepare(units, RulesResolver(), tmp_path / "a", 1000, lambda count: None,
                   whole_lake=True)
    assert engine.driver is None
    engine.prepare(units, RulesResolver(), tmp_path / "b", 1000, lambda count: None)
    assert engine.driver is not None
    engine.close()
