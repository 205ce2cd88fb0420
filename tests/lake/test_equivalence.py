"""The proof of the lake: the same input through ``ofc ingest --db``, ``ofc lake build --engine
local`` and ``ofc lake build --engine spark`` gives the same tables, row for row (sorted), the
same ``ofc players`` and ``ofc audit`` output, the same coaching report and the same reject
reasons; and ``ofc lake rescore`` gives what ``ofc rescore`` gives.

The corpus (tests/lake/conftest.py) has canonical, poker-arena logs of all four games, a boards
CSV, broken records, an empty file, a file in no known format, a repeated file, a site whose
name needs escaping, and a second batch that extends sessions, repeats a hand and conflicts with
one. The local engine's lakes are built once per session; the Spark ones once per session too.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.ingest.driver import ingest_paths
from pipeline.ingest.rescore import rescore
from pipeline.lake.build import build_lake
from pipeline.lake.engine import LocalEngine
from pipeline.lake.plan import scan_file, work_units
from pipeline.lake.rescore import rescore_lake
from pipeline.lake.storage import Lake
from pipeline.lake.tables import HAND_TABLES
from pipeline.records.rules_file import resolve_rules
from tests.lake.conftest import (
    ODD_SITE,
    SPLIT_BYTES,
    assert_same_tables,
    database_tables,
    lake_tables,
)

SCOOP_SIX = 'name = "scoop-six"\nextends = "standard"\n\n[scoring]\nscoop_bonus = 6\n'


def ofc(*arguments: str) -> str:
    """Run ``ofc`` in this process; its standard output."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        assert main(list(arguments)) == 0
    return output.getvalue()


def read_outputs(where: tuple[str, str], player: str, tmp_path: Path) -> dict[str, object]:
    """``ofc players``, ``ofc audit`` and ``ofc report PLAYER`` (JSON) on a database or a lake."""
    report = tmp_path / f"report-{where[0].strip('-')}.json"
    ofc("report", player, *where, "--format", "json", "--out", str(report))
    return {
        "players": json.loads(ofc("players", *where, "--format", "json")),
        "audit": json.loads(ofc("audit", *where, "--format", "json")),
        "report": json.loads(report.read_text(encoding="utf-8")),
    }


@pytest.fixture(scope="session")
def rescored_database(ingested: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
                      ) -> tuple[Path, Path]:
    """The database after both batches, re-scored with scoop 6 by ``ofc rescore``; the rules
    file."""
    folder = tmp_path_factory.mktemp("rescored")
    rules = folder / "scoop-six.toml"
    rules.write_text(SCOOP_SIX, encoding="utf-8")
    database = folder / "rescored.duckdb"
    shutil.copy(ingested[1], database)
    rescore(database, resolve_rules(str(rules)))
    return database, rules


# --- the corpus covers what it claims --------------------------------------------------------


def test_the_corpus_exercises_every_promise(ingested: tuple[Path, Path]) -> None:
    tables = database_tables(ingested[1])
    # ingested_files: path, content_hash, format, size_bytes, records, stored, duplicates,
    # rejected, status; rejects: path, line, hand_id, reason, raw, kind, conflict_with, key
    statuses = {row[-1] for row in tables["ingested_files"]}
    assert statuses == {"complete", "unchanged", "empty", "failed"}
    kinds = {row[5] for row in tables["rejects"]}
    assert {"read", "invalid", "conflict", "file"} <= kinds
    assert any(row[1] == "poker-arena" for row in tables["hands"])
    variants = {row[5] for row in tables["hands"]}
    assert variants == {"classic", "pineapple", "2-7-pineapple"}
    assert sum(1 for row in tables["results"] if row[4]) > 0  # audit disagreements
    assert any(row[1] == ODD_SITE for row in tables["hands"])
    conflicts = [row for row in tables["rejects"] if row[5] == "conflict"]
    assert len(conflicts) == 1 and "demo-hands.jsonl.gz:22" in conflicts[0][3]


# --- local engine -----------------------------------------------------------------------------


def test_local_lake_holds_what_ingest_stores(ingested: tuple[Path, Path],
                                             local_lakes: tuple[Path, Path]) -> None:
    assert_same_tables(database_tables(ingested[0]), lake_tables(local_lakes[0]))
    assert_same_tables(database_tables(ingested[1]), lake_tables(local_lakes[1]))


def test_local_lake_answers_the_read_commands_as_the_database(
    ingested: tuple[Path, Path], local_lakes: tuple[Path, Path], tmp_path: Path
) -> None:
    database = read_outputs(("--db", str(ingested[1])), "mara", tmp_path)
    lake = read_outputs(("--lake", str(local_lakes[1])), "mara", tmp_path)
    assert database["audit"], "the corpus has audit disagreements"
    assert database == lake


def test_the_second_build_added_only_its_hands_and_moved_a_session(
    local_lakes: tuple[Path, Path], ingested: tuple[Path, Path]
) -> None:
    first, both = lake_tables(local_lakes[0]), lake_tables(local_lakes[1])
    new_keys = {row[0] for row in both["hands"]} - {row[0] for row in first["hands"]}
    assert len(new_keys) == 12
    later = [row for row in both["ingested_files"] if row[0].endswith("more-hands.jsonl")]
    assert [(row[4], row[5], row[6], row[7]) for row in later] == [(14, 12, 1, 1)]
    # a stored seat's session changed: its file was rewritten, and the old id is gone
    assert {row[-2] for row in first["seats"]} - {row[-2] for row in both["seats"]}


def test_a_file_repeating_another_in_the_same_build_is_unchanged(
    tmp_path: Path, corpus: tuple[Path, Path]
) -> None:
    database, lake = tmp_path / "db.duckdb", tmp_path / "lake"
    files = [corpus[1] / "copy-of-example.jsonl", corpus[0] / "canonical-example.jsonl"]
    ingest_paths(files, database)
    summary = build_lake(files, lake, LocalEngine())
    assert [item.status for item in summary.files] == ["complete", "unchanged"]
    assert summary.files[1].message.startswith(f"unchanged: already ingested as {files[0]}")
    assert_same_tables(database_tables(database), lake_tables(lake))


def test_building_again_adds_nothing(corpus: tuple[Path, Path], local_lakes: tuple[Path, Path],
                                     tmp_path: Path) -> None:
    lake = tmp_path / "again"
    shutil.copytree(local_lakes[1], lake)
    before = lake_tables(lake)
    summary = build_lake(list(corpus), lake, LocalEngine(), split_bytes=SPLIT_BYTES)
    assert summary.stored == 0 and {item.status for item in summary.files} == {"unchanged",
                                                                              "failed", "empty"}
    after = lake_tables(lake)
    for table in before:
        if table != "ingested_files":
            assert after[table] == before[table], table
    assert Lake(lake).manifest().files("hands") == Lake(local_lakes[1]).manifest().files("hands")


def test_local_rescore_equals_ofc_rescore(local_lakes: tuple[Path, Path],
                                          rescored_database: tuple[Path, Path],
                                          tmp_path: Path) -> None:
    lake = tmp_path / "rescored"
    shutil.copytree(local_lakes[1], lake)
    database, rules = rescored_database
    summary = rescore_lake(lake, LocalEngine(), resolve_rules(str(rules)))
    assert summary.rules == "scoop-six" and summary.hands == len(lake_tables(lake)["hands"])
    assert_same_tables(database_tables(database), lake_tables(lake))


# --- Spark -------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def spark_lakes(spark: object, corpus: tuple[Path, Path],
                tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, object, str]:
    """Lakes built on Spark (local[2]) with every statement in Spark SQL (the bulk path:
    ``driver_records`` 0): after ``first/`` (through the API), after ``later/`` too (through
    ``ofc lake build --engine spark --driver-records 0``); the first build's engine; what the
    command printed."""
    from pipeline.lake.spark import SparkEngine

    engine = SparkEngine(spark=spark, driver_records=0)
    folder = tmp_path_factory.mktemp("spark-lakes")
    after_first = folder / "first"
    build_lake([corpus[0]], after_first, engine, split_bytes=SPLIT_BYTES)
    after_both = folder / "both"
    shutil.copytree(after_first, after_both)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        assert main(["lake", "build", str(corpus[1]), "--lake", str(after_both), "--engine",
                     "spark", "--master", "local[2]", "--driver-records", "0"]) == 0
    return after_first, after_both, engine, printed.getvalue()


@pytest.fixture(scope="session")
def spark_driver_lakes(spark: object, corpus: tuple[Path, Path],
                       tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list]:
    """Lakes built on Spark at the default setting: the units on Spark, every commit small
    enough for its statements to run in the driver (DuckDB); after ``first/``, after
    ``later/`` too; the engine's steps (:meth:`SparkEngine.stage_summary`)."""
    from pipeline.lake.spark import SparkEngine

    engine = SparkEngine(spark=spark)
    folder = tmp_path_factory.mktemp("spark-driver-lakes")
    after_first = folder / "first"
    build_lake([corpus[0]], after_first, engine, split_bytes=SPLIT_BYTES)
    after_both = folder / "both"
    shutil.copytree(after_first, after_both)
    build_lake([corpus[1]], after_both, engine, split_bytes=SPLIT_BYTES)
    return after_first, after_both, engine.stage_summary()


def test_spark_lake_holds_what_ingest_stores(ingested: tuple[Path, Path],
                                             spark_lakes: tuple[Path, Path, object]) -> None:
    assert_same_tables(database_tables(ingested[0]), lake_tables(spark_lakes[0]))
    assert_same_tables(database_tables(ingested[1]), lake_tables(spark_lakes[1]))


def test_a_small_spark_commit_runs_its_statements_in_the_driver_and_stores_the_same(
        ingested: tuple[Path, Path], spark_driver_lakes: tuple[Path, Path, list]) -> None:
    """The driver path (a small commit's outcomes, sessions, hand tables, rejects and totals
    in DuckDB) gives what ingest stores, over the whole corpus and its append."""
    from pipeline.lake.spark import DRIVER_STEP

    assert_same_tables(database_tables(ingested[0]), lake_tables(spark_driver_lakes[0]))
    assert_same_tables(database_tables(ingested[1]), lake_tables(spark_driver_lakes[1]))
    jobs = {label: count for label, count, *_ in spark_driver_lakes[2]}
    # the files were scanned and the units ran on Spark (one job a build), nothing else did
    assert jobs.pop("scan files") == 2 and jobs.pop("read, validate, score (mapInArrow)") == 2
    assert jobs == {DRIVER_STEP: 0}, jobs


def test_spark_lake_answers_the_read_commands_as_the_database(
    ingested: tuple[Path, Path], spark_lakes: tuple[Path, Path, object], tmp_path: Path
) -> None:
    database = read_outputs(("--db", str(ingested[1])), "jun", tmp_path)
    lake = read_outputs(("--lake", str(spark_lakes[1])), "jun", tmp_path)
    assert database == lake


def test_spark_ran_the_units_as_partitions_of_map_in_arrow(
    corpus: tuple[Path, Path], spark_lakes: tuple[Path, Path, object]
) -> None:
    from pipeline.ingest.paths import expand_paths

    files = [str(path) for path in expand_paths([corpus[0]])]
    scans = [scan_file(order, path, split_bytes=SPLIT_BYTES) for order, path in enumerate(files)]
    units = work_units(scans, None, None)
    assert len(units) > len(scans)  # the plain canonical files were split into parts
    steps = {label: (stages, partitions) for label, _, stages, partitions, _ in
             spark_lakes[2].stage_summary()}
    # one partition per unit
    assert steps["read, validate, score (mapInArrow)"] == (1, len(units))
    # the hand tables written by one job a commit, not a write (or several jobs) per table
    assert not any(label == f"write {table}" for label in steps for table in HAND_TABLES)
    jobs = {label: count for label, count, *_ in spark_lakes[2].stage_summary()}
    assert 1 <= jobs["write the hand tables (mapInArrow)"] <= 2  # two commits at most


def test_spark_build_command_summarises_its_stages(spark_lakes: tuple[Path, Path, object, str]
                                                   ) -> None:
    printed = spark_lakes[3]
    assert "(spark engine)" in printed and "Spark steps" in printed
    assert re.search(r"read, validate, score \(mapInArrow\)\s+│\s+1\s+│\s+1\s+│\s+1\s+│",
                     printed), printed
    assert re.search(r"Spark jobs: \d+", printed), printed
    # --driver-records 0: this small commit's set operations ran as Spark jobs, not in the driver
    from pipeline.lake.spark import DRIVER_STEP

    assert DRIVER_STEP not in printed and "outcomes" in printed, printed
    assert re.search(r"2 file\(s\), 14 records, 12 stored, 1 duplicates, 1 rejected in [\d.]+ s "
                     r"\([\d,]+ hands/s\)", printed), printed
    assert "hands/s" in printed and not re.search(r"\b(WARN|INFO)\b", printed)


def test_spark_rescore_equals_ofc_rescore(spark_lakes: tuple[Path, Path, object],
                                          rescored_database: tuple[Path, Path],
                                          tmp_path: Path) -> None:
    lake = tmp_path / "rescored"
    shutil.copytree(spark_lakes[1], lake)
    database, rules = rescored_database
    rescore_lake(lake, spark_lakes[2], resolve_rules(str(rules)))
    assert_same_tables(database_tables(database), lake_tables(lake))


def test_starting_spark_prints_no_wall_of_logs(spark_start: tuple[object, str]) -> None:
    printed = spark_start[1]
    assert not re.search(r"\b(WARN|INFO)\b", printed), printed[:2000]
    assert "log4j" not in printed, printed[:2000]


def test_a_lake_is_read_by_the_full_pass_and_agrees_with_the_database_aggregates(
    ingested: tuple[Path, Path], local_lakes: tuple[Path, Path]
) -> None:
    """A lake keeps no aggregates (docs/aggregates.md): the read model never trusts the empty
    aggregate tables it shows, answers by the full pass, and that answer is the database's
    answer from its aggregates."""
    from polars.testing import assert_frame_equal

    from pipeline import read
    from pipeline.read.lake import ParquetLake
    from pipeline.read.scope import Filters
    from pipeline.read.totals import AggregatesUnavailable, Route, aggregates_ready

    lake, database = ParquetLake(local_lakes[1]), ingested[1]
    connection = lake.open()
    try:
        assert not aggregates_ready(connection)
    finally:
        connection.close()
    with read.source.reading(database) as connection:
        assert aggregates_ready(connection)
    everyone = Filters()
    with pytest.raises(AggregatesUnavailable):
        read.players.player_kpis(lake, everyone, route=Route.AGGREGATES)
    for question in (read.players.player_kpis, read.overview.overview_totals,
                     read.flow.pair_net_points, read.players.points_by_position):
        kept = question(database, everyone, route=Route.AGGREGATES)
        assert kept.height > 0, question.__name__
        assert_frame_equal(question(lake, everyone), kept, check_exact=False, rel_tol=1e-12)
    assert_frame_equal(read.sessions.session_results(lake, everyone),
                       read.sessions.session_results(database, everyone, route=Route.AGGREGATES))
