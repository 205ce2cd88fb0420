"""``ofc lake build`` and ``ofc lake rescore``: a Parquet lake, locally or on Apache Spark."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pipeline.cli import CommandError
from pipeline.cli.common import (
    add_rules_option,
    add_session_gap_option,
    batch_size,
    check_session_gap,
    positive_whole_number,
    rules_from_option,
    whole_number,
)
from pipeline.ingest.defaults import DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE

ENGINES = ("local", "spark")
DEFAULT_MASTER = "local[*]"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``lake`` command and its ``build`` and ``rescore`` subcommands."""
    from pipeline.formats import FORMATS

    parser = subparsers.add_parser(
        "lake",
        help="a Parquet lake of hand histories, built locally or on Apache Spark",
        description=(
            "A Parquet lake holds what a database holds (the same tables and columns, "
            "Hive-partitioned by site and month) for hands past one machine. 'ofc lake build' "
            "fills it, 'ofc lake rescore' re-scores it; ofc players, audit, report and "
            "dashboard read it with --lake DIR. See docs/lake.md."
        ),
    )
    commands = parser.add_subparsers(dest="lake_command", metavar="COMMAND")
    commands.required = True

    build = commands.add_parser(
        "build",
        help="read hand histories (files, folders, globs; plain or .gz) into a lake",
        description=(
            "Read, validate and re-score hand histories exactly as 'ofc ingest' does and write "
            "them into the lake at DIR: every valid hand once (by site and hand id), bad "
            "records in the rejects table with their reason, a conflict naming both sources. "
            "Files already read completely add nothing. Files are committed in groups; a "
            "build that is killed and run again gives the lake an uninterrupted build gives. "
            "--engine local runs in this process (small lakes, and the reference); --engine "
            "spark distributes the work (needs the spark extra: pip install -e '.[spark]')."
        ),
    )
    build.add_argument("paths", nargs="+", metavar="PATH", help="files, folders or globs")
    _add_lake_options(build)
    add_rules_option(build)
    build.add_argument("--format", choices=sorted(FORMATS),
                       help="the input format (default: detected per file)")
    build.add_argument("--variant", metavar="GAME",
                       help="the poker-arena game (ofc, ofc-pineapple, ofc-progressive, ofc-27) "
                            "when the file name does not say it")
    add_session_gap_option(build)
    build.add_argument("--batch-size", type=batch_size, default=DEFAULT_BATCH_SIZE, metavar="N",
                       help=f"records scored together (default: %(default)d; at most "
                            f"{MAX_BATCH_SIZE:,})")
    build.add_argument("--split-mb", type=positive_whole_number, default=64, metavar="MB",
                       help="plain canonical files are read in parts of about this size, one "
                            "Spark partition each (default: %(default)d)")
    build.add_argument("--commit-mb", type=positive_whole_number, default=1024, metavar="MB",
                       help="files are committed in groups of about this size (default: "
                            "%(default)d)")
    build.set_defaults(handler=run_build)

    rescore = commands.add_parser(
        "rescore",
        help="re-score every stored board of a lake under another rule set",
        description=(
            "Re-score every hand of the lake from its stored boards (no raw file is read): "
            "evaluations, matchups, results, session points and player totals are replaced in "
            "one commit. With --rules every hand is scored under that rule set (\"what would "
            "my results be with scoop 6?\"); without it each hand under the rules its record "
            "named."
        ),
    )
    _add_lake_options(rescore)
    add_rules_option(rescore)
    rescore.set_defaults(handler=run_rescore)


def _add_lake_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lake", metavar="DIR", required=True, help="the lake folder")
    parser.add_argument("--engine", choices=ENGINES, default="local",
                        help="local: in this process; spark: on Apache Spark (default: "
                             "%(default)s)")
    parser.add_argument("--master", default=DEFAULT_MASTER, metavar="URL",
                        help="the Spark master with --engine spark (default: %(default)s; "
                             "local[2] = two cores of this machine)")
    parser.add_argument("--driver-memory", metavar="SIZE",
                        help="the Spark driver's memory with --engine spark (e.g. 4g; default: "
                             "$OFC_SPARK_DRIVER_MEMORY, else Spark's 1g; in local mode the "
                             "work runs in the driver)")
    parser.add_argument("--driver-records", type=whole_number, metavar="N",
                        help="with --engine spark: a commit whose files hold at most N records "
                             "runs its set operations (outcomes, sessions, totals) in the "
                             "driver with DuckDB instead of as Spark jobs (default: "
                             "$OFC_SPARK_DRIVER_RECORDS, else 50,000; 0: always as Spark jobs)")
    parser.add_argument("--quiet", action="store_true", help="no progress display")


def _engine(arguments: argparse.Namespace, progress: Any) -> Any:
    """The engine the options ask for (Spark started here: it takes several seconds)."""
    if arguments.engine == "local":
        from pipeline.lake.engine import LocalEngine

        return LocalEngine()
    from pipeline.lake.spark import SparkEngine, SparkUnavailable, spark_problem

    problem = spark_problem()
    if problem is not None:
        raise CommandError(problem, code=1)
    progress.describe(f"starting Spark ({arguments.master})")
    try:
        return SparkEngine(arguments.master, progress=progress,
                           driver_memory=arguments.driver_memory,
                           driver_records=arguments.driver_records)
    except SparkUnavailable as error:
        raise CommandError(str(error), code=1) from error


def print_build_summary(summary: Any, steps: list[tuple[str, int, int, int, float]]) -> None:
    """The per-file table, the totals and (Spark) what each step ran, on stdout."""
    from rich.console import Console
    from rich.table import Table

    from pipeline.cli.ingest import file_table

    console = Console(width=None if sys.stdout.isatty() else 160)
    console.print(file_table(f"lake build into {summary.lake} ({summary.engine} engine)",
                             summary.files))
    if steps:
        spark = Table(title="Spark steps")
        for name in ("step", "jobs", "stages", "partitions", "seconds"):
            spark.add_column(name, justify="left" if name == "step" else "right")
        for label, jobs, stages, partitions, seconds in steps:
            spark.add_row(label, str(jobs), str(stages), str(partitions), f"{seconds:.1f}")
        console.print(spark)
        console.print(f"Spark jobs: {sum(step[1] for step in steps)}", highlight=False)
    console.print(
        f"total: {len(summary.files)} file(s), {summary.records:,} records, "
        f"{summary.stored:,} stored, {summary.duplicates:,} duplicates, "
        f"{summary.rejected:,} rejected in {summary.seconds:.1f} s "
        f"({summary.hands_per_second:,.0f} hands/s); {summary.commits} commit(s), lake "
        f"version {summary.version}",
        highlight=False,
    )
    if summary.stored == 0:
        if summary.files and all(item.status == "unchanged" for item in summary.files):
            console.print("nothing new: every file was already in the lake, unchanged",
                          highlight=False)
        else:
            console.print("nothing new: no hand was stored", highlight=False)


def run_build(arguments: argparse.Namespace) -> int:
    """Build the lake; exit 0 when the files were read, 1 for fatal problems."""
    from pipeline.ingest.errors import IngestError
    from pipeline.lake.build import build_lake
    from pipeline.lake.progress import LakeProgress
    from pipeline.lake.storage import LakeError

    check_session_gap(arguments.session_gap)
    rules = rules_from_option(arguments.rules)
    progress = LakeProgress(not arguments.quiet)
    try:
        engine = _engine(arguments, progress)
        try:
            summary = build_lake(
                arguments.paths, arguments.lake, engine, rules=rules, format=arguments.format,
                game=arguments.variant, session_gap=arguments.session_gap,
                batch_size=arguments.batch_size, split_bytes=arguments.split_mb << 20,
                commit_bytes=arguments.commit_mb << 20, progress=progress,
            )
        finally:
            engine.close()
    except (IngestError, LakeError) as error:
        raise CommandError(str(error), code=1) from error
    finally:
        progress.stop()
    steps = engine.stage_summary() if hasattr(engine, "stage_summary") else []
    print_build_summary(summary, steps)
    return 0


def run_rescore(arguments: argparse.Namespace) -> int:
    """Re-score the lake and print what was done."""
    from pipeline.lake.progress import LakeProgress
    from pipeline.lake.rescore import rescore_lake
    from pipeline.lake.storage import LakeError
    from pipeline.rules.ruleset import RulesError

    rules = rules_from_option(arguments.rules)
    progress = LakeProgress(not arguments.quiet)
    try:
        engine = _engine(arguments, progress)
        try:
            summary = rescore_lake(arguments.lake, engine, rules, progress=progress)
        finally:
            engine.close()
    except LakeError as error:
        raise CommandError(str(error), code=1) from error
    except RulesError as error:
        raise CommandError(str(error), code=2) from error
    finally:
        progress.stop()
    print(
        f"re-scored {summary.hands:,} hands ({summary.players:,} player results) under "
        f"{summary.rules or 'the rules each record names'} in {summary.seconds:.1f} s; "
        f"{summary.disagreements:,} player results differ from what the source reported"
    )
    return 0
