"""The Spark engine (``--engine spark``): units as partitions in ``mapInArrow``, SQL in Spark SQL.

Needs the optional ``spark`` extra (``pip install -e '.[spark]'``: PySpark 4, which ships its
jars) and Java 17 or newer. :func:`spark_problem` says what is missing, so ``ofc lake build
--engine spark`` can say how to install it instead of failing with a traceback.

How a build runs on Spark (:mod:`pipeline.lake.build` drives it through the
:class:`~pipeline.lake.engine.Engine` interface):

* files are scanned as a Spark job (one task per file: hash, format, split points);
* work units (a whole file, or a range of lines of a large canonical file) become the
  partitions of a one-column DataFrame; ``mapInArrow`` runs
  :func:`pipeline.lake.units.prepare_unit` on each: the project's readers, validation and batch
  rules core, unchanged, on the executors. Frames are staged as Parquet by the tasks, events
  come back as Arrow batches and are written by Spark;
* deduplication and conflict detection by hand key, sessions and the per-player totals are the
  statements of :mod:`pipeline.lake.queries`, in Spark SQL;
* tables are written with Spark's partitioned Parquet writer into the commit's staging folder.

A small commit (at most :data:`DEFAULT_DRIVER_RECORDS` records read, a setting:
``driver_records``, :data:`DRIVER_RECORDS_VARIABLE`) runs the units on Spark as any other, and
then the same statements in the driver, with DuckDB over the staged frames, the events and the
few stored files an append reads (:class:`~pipeline.lake.engine.LocalEngine`, the reference):
a dozen Spark jobs, each with Spark's fixed cost per job, would cost more than the work.

The lake and its staging folder must be on storage every executor sees at the same path (one
machine's disk for ``local[N]``; a shared file system on a cluster). Spark's JVM output goes to
a log file (:data:`LOG_FILE`), its console progress bar is off, and the stages are summarised by
:class:`pipeline.lake.progress.LakeProgress` instead.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.lake.engine import EVENTS_FOLDER, LocalEngine, relation_schema, sql_text
from pipeline.lake.plan import FileScan, WorkUnit, scan_file
from pipeline.lake.progress import LakeProgress, StageLog
from pipeline.lake.queries import SPARK, Dialect
from pipeline.lake.rescoring import BOARD_COLUMNS, VERDICT_TABLES, RescoreCounts, scored_chunks
from pipeline.lake.storage import LakeError
from pipeline.lake.tables import (
    HAND_TABLES,
    PARTITION_COLUMNS,
    PARTITIONED_TABLES,
    file_schema,
    staged_schema,
)
from pipeline.lake.units import EVENT_SCHEMA, FRAMES_FOLDER, prepare_unit
from pipeline.lake.writing import PartitionedWriter
from pipeline.records.rules_file import RulesResolver
from pipeline.store.aggregates import PLAYER_TOTAL_COLUMNS

__all__ = [
    "DEFAULT_DRIVER_RECORDS",
    "DRIVER_MEMORY_VARIABLE",
    "DRIVER_RECORDS_VARIABLE",
    "INSTALL_HINT",
    "LOG_FILE",
    "SparkEngine",
    "SparkFailed",
    "SparkUnavailable",
    "failure_message",
    "master_problem",
    "spark_problem",
    "spark_session",
    "start_failure_message",
]

INSTALL_HINT = "pip install -e '.[spark]'  (or: pip install 'ofc-analytics[spark]')"
"""How to get the Spark engine."""

LOG_FILE = Path(tempfile.gettempdir()) / "ofc-lake-spark.log"
"""Where the Spark JVM's own output (its log) goes instead of the terminal."""

_PANDAS_WARNING = "PySpark does not yet fully support pandas"

SMALL_COMMIT_BYTES = 64 << 20
"""Commits reading at most this many bytes run without adaptive query execution."""


class SparkUnavailable(RuntimeError):
    """The Spark engine cannot run here: PySpark or Java is missing."""


class SparkFailed(LakeError):
    """A Spark step failed (out of memory, a lost executor, the JVM gone): the lake is as it
    was (nothing was committed); the message says what to change instead of a Java trace."""


DRIVER_MEMORY_VARIABLE = "OFC_SPARK_DRIVER_MEMORY"
"""The environment variable that sets the driver's memory (``--driver-memory`` does too)."""

DEFAULT_DRIVER_RECORDS = 50_000
"""A commit whose units read at most this many records runs its set operations (outcomes, the
report, sessions, the hand tables' rows, rejects, totals) in the driver with DuckDB."""

DRIVER_RECORDS_VARIABLE = "OFC_SPARK_DRIVER_RECORDS"
"""The environment variable that sets :data:`DEFAULT_DRIVER_RECORDS` (0: always Spark SQL)."""

DRIVER_STEP = "set operations in the driver (DuckDB)"
"""The step a small commit's statements are timed under (no Spark job)."""


def failure_message(label: str, error: BaseException, master: str, driver_memory: str) -> str:
    """What a user reads when Spark step ``label`` failed with ``error``: what happened in one
    line, that the lake is unchanged, and what to change (memory, master)."""
    text = str(error)
    first = next((line.strip() for line in text.splitlines()
                  if "Exception" in line or "Error" in line), text.strip()[:200])
    unchanged = "the lake is unchanged (nothing was committed)"
    if any(sign in text for sign in ("OutOfMemory", "Java heap space", "GC overhead",
                                     "Not enough memory")):
        return (f"Spark ran out of memory in step '{label}' (master {master}, driver memory "
                f"{driver_memory}); {unchanged}. Give it more memory (--driver-memory 4g, or "
                f"{DRIVER_MEMORY_VARIABLE}=4g), fewer cores per executor (--master local[1]), "
                f"smaller commits (--commit-mb 256), or use --engine local. Spark's log: "
                f"{LOG_FILE}")
    return (f"Spark failed in step '{label}' (master {master}): {first[:300]}; {unchanged}. "
            f"Check that the master is reachable and has memory to spare (--driver-memory, "
            f"--master local[2]); Spark's log: {LOG_FILE}")


_LOCAL_MASTER = re.compile(r"local(\[(\*|[1-9][0-9]*)(, *[0-9]+)?\])?")
_CLUSTER_MASTER = re.compile(r"(spark|mesos|k8s)://\S+|yarn")


def master_problem(master: str) -> str | None:
    """Why ``master`` cannot be a Spark master URL, or None: ``local``, ``local[N]`` (N ≥ 1
    threads), ``local[*]``, ``local[N,F]``, ``spark://HOST:PORT``, ``yarn``, ``k8s://...``,
    ``mesos://...``. Checked before a JVM starts (``local[0]`` used to end in a Java trace).

    >>> master_problem("local[2]") is None, master_problem("spark://head:7077") is None
    (True, True)
    >>> master_problem("local[0]")
    "--master 'local[0]' is not a Spark master: use local, local[N] (N threads, 1 or more), local[*], spark://HOST:PORT, yarn or k8s://URL"
    """
    if _LOCAL_MASTER.fullmatch(master) or _CLUSTER_MASTER.fullmatch(master):
        return None
    return (f"--master {master!r} is not a Spark master: use local, local[N] (N threads, 1 or "
            "more), local[*], spark://HOST:PORT, yarn or k8s://URL")


def start_failure_message(error: BaseException, master: str) -> str:
    """What a user reads when Spark did not start: the first line that names the error (never
    the Java trace under it) and what to check."""
    text = str(error)
    first = next((line.strip().lstrip(": ") for line in text.splitlines()
                  if "Exception" in line or "Error" in line), text.strip()[:200])
    return (f"Spark did not start (master {master}): {first[:300]}. Check --master (local[2], "
            f"or a cluster's spark://HOST:PORT that is reachable) and --driver-memory; "
            f"Spark's log: {LOG_FILE}")


def driver_failure_message(label: str, error: BaseException) -> str:
    """What a user reads when the driver's DuckDB failed in ``label`` (a small commit's set
    operations): what happened, that the lake is unchanged, and what to change."""
    first = str(error).strip().splitlines()[0][:300] if str(error).strip() else type(
        error).__name__
    return (f"the driver's DuckDB failed in step '{label}' of a small commit: {first}; the lake "
            f"is unchanged (nothing was committed). Run the commit's set operations on Spark "
            f"instead (--driver-records 0, or {DRIVER_RECORDS_VARIABLE}=0), give the driver "
            f"more memory, or use "
            f"--engine local.")


def driver_records_setting(value: int | None = None) -> int:
    """The records up to which a commit's set operations run in the driver: ``value``, else
    :data:`DRIVER_RECORDS_VARIABLE`, else :data:`DEFAULT_DRIVER_RECORDS` (0 or less: never)."""
    if value is not None:
        return value
    text = os.environ.get(DRIVER_RECORDS_VARIABLE, "").strip()
    if not text:
        return DEFAULT_DRIVER_RECORDS
    try:
        return int(text)
    except ValueError as error:
        raise LakeError(f"{DRIVER_RECORDS_VARIABLE} must be a whole number of records, not "
                        f"{text!r}") from error


def java_executable() -> str | None:
    """The ``java`` Spark would start (``$JAVA_HOME/bin/java``, else on the PATH)."""
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").is_file():
        return str(Path(home, "bin", "java"))
    return shutil.which("java")


def spark_problem() -> str | None:
    """Why the Spark engine cannot run here (PySpark not installed, no Java), or None."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return f"the Spark engine needs PySpark, which is not installed: {INSTALL_HINT}"
    if java_executable() is None:
        return ("the Spark engine needs Java 17 or newer, and no java was found (set JAVA_HOME "
                "or put java on the PATH)")
    return None


_SESSION_LOCK = threading.Lock()


def spark_session(master: str = "local[2]", app_name: str = "ofc lake",
                  driver_memory: str | None = None) -> Any:
    """The process's SparkSession, started on first use with quiet logging.

    The JVM's output goes to :data:`LOG_FILE`; Python workers run this interpreter (so they
    import this checkout's packages); timestamps are naive UTC (``TIMESTAMP_NTZ``); partition
    values are read back as text. ``driver_memory`` (else :data:`DRIVER_MEMORY_VARIABLE`,
    else Spark's default) sizes the driver's JVM heap (in ``local`` mode, where the work runs).
    A session already running in this process is reused.
    Raises :class:`SparkUnavailable` when Spark cannot start here."""
    problem = spark_problem() or master_problem(master)
    if problem is not None:
        raise SparkUnavailable(problem)
    warnings.filterwarnings("ignore", message=_PANDAS_WARNING, category=FutureWarning)
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    with _SESSION_LOCK:
        active = SparkSession.getActiveSession() or (
            SparkSession(SparkContext._active_spark_context)
            if SparkContext._active_spark_context is not None else None)
        if active is not None:
            return active
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        if master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        cores = os.cpu_count() or 2
        conf = (
            SparkConf().setMaster(master).setAppName(app_name)
            .set("spark.ui.enabled", "false")
            .set("spark.ui.showConsoleProgress", "false")
            .set("spark.sql.session.timeZone", "UTC")
            .set("spark.sql.shuffle.partitions", str(max(2, 2 * cores)))
            .set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
            .set("spark.sql.parquet.inferTimestampNTZ.enabled", "true")
            .set("spark.python.worker.reuse", "true")
            .set("spark.driver.extraJavaOptions", "-Dlog4j2.level=ERROR")
        )
        if os.environ.get("PYTHONPATH"):
            conf.set("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
        memory = driver_memory or os.environ.get(DRIVER_MEMORY_VARIABLE)
        if memory:
            conf.set("spark.driver.memory", memory)
        log = open(LOG_FILE, "ab")  # noqa: SIM115 - the JVM keeps writing to it
        try:
            gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
            context = SparkContext(conf=conf, gateway=gateway)
        except Exception as error:
            raise SparkUnavailable(start_failure_message(error, master)) from error
        context.setLogLevel("ERROR")
        return SparkSession(context)


def _arrow_to_spark(schema: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


class _Action:
    """One step that runs Spark jobs: its stages are named after it (Spark's call site), and
    while it runs a thread polls the status tracker for the running stages' partitions (shown on
    the display, kept in the :class:`StageLog`) and the hands counted by an accumulator."""

    def __init__(self, engine: SparkEngine, label: str, accumulator: Any = None,
                 on_records: Callable[[int], None] | None = None) -> None:
        self.engine = engine
        self.label = label
        self.accumulator = accumulator
        self.on_records = on_records
        self.reported = 0
        self.started = 0.0
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> _Action:
        context = self.engine.context
        context.setLocalProperty("callSite.short", self.label)
        self.group = f"ofc-{uuid.uuid4().hex[:12]}"
        context.setJobGroup(self.group, self.label)
        self.started = time.monotonic()
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: object) -> None:
        self.stop_event.set()
        self.thread.join()
        if error is not None and _is_spark_failure(error):
            raise SparkFailed(failure_message(self.label, error, self.engine.master,
                                              self.engine.driver_memory)) from error
        self._poll()
        # Every stage of the step's jobs, also those too short for the polling to see.
        tracker = self.engine.context.statusTracker()
        for job in tracker.getJobIdsForGroup(self.group):
            self.engine.stages.ran_job(self.label, job)
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info is not None else ():
                stage_info = tracker.getStageInfo(stage)
                if stage_info is not None:
                    self.engine.stages.seen(self.label, stage, stage_info.numTasks)
        self.engine.stages.timed(self.label, time.monotonic() - self.started)
        self.engine.progress.stage("")
        for name in ("callSite.short", "spark.jobGroup.id", "spark.job.description"):
            self.engine.context.setLocalProperty(name, None)

    def _run(self) -> None:
        while not self.stop_event.wait(0.25):
            self._poll()

    def _poll(self) -> None:
        tracker = self.engine.context.statusTracker()
        running = []
        for stage in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage)
            if info is None:
                continue
            self.engine.stages.seen(self.label, stage, info.numTasks)
            running.append(f"{info.numCompletedTasks}/{info.numTasks} partitions")
        if running:
            self.engine.progress.stage(f"{self.label}: {', '.join(running)}")
        if self.accumulator is not None and self.on_records is not None:
            value = int(self.accumulator.value)
            if value > self.reported:
                self.on_records(value - self.reported)
                self.reported = value


def unit_rows(unit: int, staging: Path, plan: Sequence[tuple[str, str, str]],
              writes: Mapping[str, str], totals: str, prefix: str) -> pa.Table:
    """One work unit's new rows of every hand table, written under ``staging/<table>`` (files
    named after the unit: a retried task writes the same files again), and its per-player
    sums (``totals``). The statements run in an in-memory DuckDB over the unit's staged frames
    (``frames_<table>``) and ``plan``'s relations: (name, ``files``, a folder of Parquet files)
    or (name, ``view``, its SQL)."""
    import duckdb

    frames = staging / FRAMES_FOLDER
    connection = duckdb.connect(config={"threads": 1})
    try:
        connection.execute("SET enable_progress_bar = false")
        for table in HAND_TABLES:
            path = frames / table / f"unit-{unit:06d}.parquet"
            if path.exists():
                connection.execute(f"CREATE VIEW frames_{table} AS SELECT * FROM "
                                   f"read_parquet({sql_text(str(path))})")
            else:
                connection.register(f"frames_{table}", staged_schema(table).empty_table())
        for name, kind, payload in plan:
            if kind == "view":
                connection.execute(f"CREATE VIEW {name} AS {payload}")
            else:
                connection.execute(f"CREATE VIEW {name} AS SELECT * FROM "
                                   f"read_parquet({sql_text(str(Path(payload) / '*.parquet'))})")
        for table, sql in writes.items():
            writer = PartitionedWriter(staging / table, table, f"{prefix}-u{unit:06d}")
            try:
                for batch in connection.sql(sql).to_arrow_reader(200_000):
                    writer.write(batch)
            finally:
                writer.close()
        return connection.sql(totals).to_arrow_table()
    finally:
        connection.close()


def _indices(spark: Any, count: int) -> Any:
    """A DataFrame of the numbers ``0 .. count - 1``, one a partition (at least one partition).
    ``spark.range`` runs in the JVM: no Python worker to produce the numbers, as a parallelized
    Python list would need, before the ``mapInArrow`` that reads them."""
    return spark.range(0, count, 1, max(1, count))


def _unit_bytes(unit: WorkUnit) -> int:
    """The bytes a work unit reads (a whole file's size; nothing for one that cannot be read)."""
    if unit.start is not None and unit.end is not None:
        return unit.end - unit.start
    return _total_bytes([unit.path])


def _total_bytes(paths: Sequence[str]) -> int:
    """The files' sizes added up (a file that cannot be read counts as nothing: its scan says
    why)."""
    total = 0
    for path in paths:
        with contextlib.suppress(OSError):
            total += os.stat(path).st_size
    return total


def _is_spark_failure(error: BaseException) -> bool:
    """A failure of Spark or its JVM (not a bug of this code in a Python function)."""
    module = type(error).__module__ or ""
    return module.startswith(("py4j", "pyspark")) or "OutOfMemory" in str(error)


class SparkEngine:
    """The :class:`~pipeline.lake.engine.Engine` on Spark.

    ``driver_records`` (default :func:`driver_records_setting`): a build's commit whose units
    read at most this many records runs everything after the units in the driver, with a
    :class:`~pipeline.lake.engine.LocalEngine` (the same statements, in DuckDB, over the
    files the units staged and the stored files an append reads); 0 runs every commit's
    statements in Spark SQL. A re-score always runs on Spark."""

    name = "spark"

    def __init__(self, master: str = "local[2]", spark: Any = None,
                 progress: LakeProgress | None = None, driver_memory: str | None = None,
                 driver_records: int | None = None) -> None:
        self.driver_records = driver_records_setting(driver_records)  # checked before starting
        self.spark = spark if spark is not None else spark_session(
            master, driver_memory=driver_memory)
        self.context = self.spark.sparkContext
        self.master = self.context.master
        self.driver_memory = self.context.getConf().get("spark.driver.memory", "1g")
        self.progress = progress or LakeProgress(False)
        self.stages = StageLog()
        self.scratch: Path | None = None
        self.views = {}
        self.materialised = {}
        self.driver: LocalEngine | None = None
        """The commit's set operations run here (a small commit), else None (Spark SQL)."""
        tracker = self.context.statusTracker()
        self._loose_jobs_before = set(tracker.getJobIdsForGroup(None))

    @property
    def dialect(self) -> Dialect:
        """DuckDB's while a small commit runs in the driver, else Spark SQL's."""
        return self.driver.dialect if self.driver is not None else SPARK

    def _in_driver(self, label: str, call: Callable[..., Any], *arguments: Any) -> Any:
        """``call(*arguments)``, a method of the driver's
        :class:`~pipeline.lake.engine.LocalEngine` (a small commit), timed under
        :data:`DRIVER_STEP`; a DuckDB failure becomes a :class:`SparkFailed` naming ``label``
        and saying what to change."""
        import duckdb

        started = time.monotonic()
        try:
            return call(*arguments)
        except duckdb.Error as error:
            raise SparkFailed(driver_failure_message(label, error)) from error
        finally:
            self.stages.timed(DRIVER_STEP, time.monotonic() - started)

    # --- helpers ---------------------------------------------------------------------------

    def _scratch(self) -> Path:
        if self.scratch is None:
            raise RuntimeError("begin() names the staging folder first")
        return self.scratch

    def begin(self, staging: Path) -> None:
        """Where this commit's intermediate results go (inside its staging folder); what the
        previous commit persisted is let go."""
        self.scratch = staging / "_scratch"
        if self.driver is not None:
            self.driver.close()
            self.driver = None
        self.spark.catalog.clearCache()
        self.spark.conf.unset("spark.sql.adaptive.enabled")  # the session's own setting
        self.views: dict[str, str] = {}
        self.materialised: dict[str, Path] = {}

    def _empty(self, schema: pa.Schema) -> Any:
        return self.spark.createDataFrame([], _arrow_to_spark(schema))

    # --- the Engine interface ---------------------------------------------------------------

    def scan(self, paths: Sequence[str], forced_format: str | None,
             split_bytes: int) -> list[FileScan]:
        """One task per file (at most a few per core); a few small files (together at most
        ``split_bytes``, one work unit's worth) are scanned here, in the driver: a Spark job
        would cost more to schedule than hashing them does."""
        if not paths:
            return []
        if _total_bytes(paths) <= split_bytes:
            return [scan_file(order, path, forced_format, split_bytes)
                    for order, path in enumerate(paths)]
        items = list(enumerate(paths))
        slices = min(len(items), self.context.defaultParallelism * 4)

        def scan(item: tuple[int, str]) -> FileScan:
            return scan_file(item[0], item[1], forced_format, split_bytes)

        with _Action(self, "scan files"):
            scans = self.context.parallelize(items, slices).map(scan).collect()
        return sorted(scans, key=lambda scan: scan.order)

    def prepare(self, units: Sequence[WorkUnit], resolver: RulesResolver, staging: Path,
                batch_size: int, on_records: Callable[[int], None],
                whole_lake: bool = False) -> None:
        """One partition per unit, ``mapInArrow`` running :func:`prepare_unit`; the events
        under ``staging/events`` (written by Spark; a small commit's collected and written
        here). When the units read at most ``driver_records`` records, the rest of the commit
        runs in the driver (DuckDB), unless it reads the ``whole_lake`` (that stays on the
        executors)."""
        self.begin(staging)
        input_bytes = sum(_unit_bytes(unit) for unit in units)
        self._plan_for(input_bytes)
        ordered = list(units)
        folder = str(staging)
        accumulator = self.context.accumulator(0)

        def run_units(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            warnings.filterwarnings("ignore", message=_PANDAS_WARNING, category=FutureWarning)
            for batch in batches:
                for index in batch.column(0).to_pylist():
                    events = prepare_unit(ordered[index], resolver, folder, batch_size)
                    records = sum(value for value in events.column("records").to_pylist()
                                  if value)
                    accumulator.add(records)
                    yield from events.to_batches()

        frame = _indices(self.spark, len(ordered))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_PANDAS_WARNING, category=FutureWarning)
            events = frame.mapInArrow(run_units, _arrow_to_spark(EVENT_SCHEMA))
        # A small commit's events are few: collected and written here, which costs less than
        # Spark's Parquet writer and its output committer (about 3 s of a 1,000-hand append
        # on two busy cores). With the driver path off, every commit runs as a large one.
        small = self.driver_records > 0 and not whole_lake
        collect = small and input_bytes <= SMALL_COMMIT_BYTES
        with _Action(self, "read, validate, score (mapInArrow)", accumulator, on_records):
            if collect:
                collected = events.toArrow()
            else:
                events.write.mode("overwrite").parquet(str(staging / EVENTS_FOLDER))
        if collect:
            (staging / EVENTS_FOLDER).mkdir(parents=True, exist_ok=True)
            pq.write_table(collected.cast(EVENT_SCHEMA),
                           staging / EVENTS_FOLDER / "part-00000.parquet")
        if small and int(accumulator.value) <= self.driver_records:
            self.driver = LocalEngine()

    def _plan_for(self, input_bytes: int) -> None:
        """Adaptive query execution (Spark's re-planning of every shuffle from what the stages
        before it produced) for commits of more than :data:`SMALL_COMMIT_BYTES`; below, it is
        off: on a few MB it only splits each statement into more jobs, each with Spark's fixed
        cost, and the fixed number of shuffle partitions is already small."""
        if input_bytes <= SMALL_COMMIT_BYTES:
            self.spark.conf.set("spark.sql.adaptive.enabled", "false")

    def register_lake(self, name: str, table: str, files: Sequence[Path], base: Path,
                      with_file: bool = False) -> None:
        """``spark.read.parquet`` of the files (partition columns from their folders)."""
        if self.driver is not None:
            return self._in_driver(f"read {table}", self.driver.register_lake, name, table,
                                   files, base, with_file)
        partitioned = table in PARTITIONED_TABLES
        if not files:
            self._empty(relation_schema(table, partitioned, with_file)).createOrReplaceTempView(
                name)
            return
        # The schema is given: Spark need not read footers to infer it (and reads the same
        # types whichever engine wrote the files).
        reader = self.spark.read.schema(_arrow_to_spark(relation_schema(table, partitioned,
                                                                        False)))
        if partitioned:
            reader = reader.option("basePath", str(base / table))
        frame = reader.parquet(*(str(path) for path in files))
        names = [*file_schema(table).names, *(PARTITION_COLUMNS if partitioned else ())]
        columns = [f"`{column}`" for column in names]
        if with_file:
            columns.append("_metadata.file_path AS _file")
        frame.selectExpr(*columns).createOrReplaceTempView(name)

    def register_folder(self, name: str, folder: Path, schema: pa.Schema) -> None:
        """Every Parquet file of the folder (empty with ``schema`` when there is none)."""
        if self.driver is not None:
            return self._in_driver(f"read {name}", self.driver.register_folder, name, folder,
                                   schema)
        if folder.is_dir() and any(folder.glob("*.parquet")):
            self.spark.read.schema(_arrow_to_spark(schema)).parquet(
                str(folder)).createOrReplaceTempView(name)
        else:
            self._empty(schema).createOrReplaceTempView(name)

    def register_arrow(self, name: str, data: pa.Table) -> None:
        """A DataFrame of the Arrow table."""
        if self.driver is not None:
            return self._in_driver(name, self.driver.register_arrow, name, data)
        frame = self.spark.createDataFrame(data) if data.num_rows else self._empty(data.schema)
        frame.createOrReplaceTempView(name)

    def view(self, name: str, sql: str, reused: bool = False) -> None:
        """A temporary view; ``reused`` ones are persisted (memory, then disk) until the next
        commit begins."""
        if self.driver is not None:
            return self._in_driver(name, self.driver.view, name, sql, reused)
        self.views[name] = sql
        frame = self.spark.sql(sql)
        if reused:
            from pyspark import StorageLevel

            frame = frame.persist(StorageLevel.MEMORY_AND_DISK)
        frame.createOrReplaceTempView(name)

    def materialise(self, name: str, sql: str) -> None:
        """Written as Parquet under the commit's scratch folder, read back as ``name``."""
        if self.driver is not None:
            return self._in_driver(name, self.driver.materialise, name, sql)
        target = self._scratch() / f"{name}-{uuid.uuid4().hex[:8]}"
        frame = self.spark.sql(sql)
        with _Action(self, name):
            frame.write.parquet(str(target))
        # Read back with the schema it was written with: inferring it is a Spark job of its own.
        self.spark.read.schema(frame.schema).parquet(str(target)).createOrReplaceTempView(name)
        self.materialised[name] = target

    def query(self, sql: str) -> pa.Table:
        """Collected as Arrow."""
        if self.driver is not None:
            return self._in_driver("collect", self.driver.query, sql)
        with _Action(self, "collect"):
            return self.spark.sql(sql).toArrow()

    def write(self, sql: str, table: str, folder: Path, prefix: str) -> None:
        """Spark's Parquet writer, partitioned by site and month for a partitioned table; files
        with no rows are removed."""
        if self.driver is not None:
            return self._in_driver(f"write {table}", self.driver.write, sql, table, folder, prefix)
        frame = self.spark.sql(sql)
        writer = frame.write.mode("append")
        if table in PARTITIONED_TABLES:
            writer = writer.partitionBy(*PARTITION_COLUMNS)
        with _Action(self, f"write {table}"):
            writer.parquet(str(folder))
        for path in folder.rglob("*.parquet") if folder.is_dir() else ():
            if pq.ParquetFile(path).metadata.num_rows == 0:
                path.unlink()

    def write_new_rows(self, writes: Mapping[str, str], totals: str, relations: Sequence[str],
                       staging: Path, prefix: str) -> pa.Table:
        """One Spark job for every table, not one (or several) per table: a partition per work
        unit, in ``mapInArrow``, runs the same statements with DuckDB over the unit's staged
        frames (each hand's rows are in one unit, and every statement keeps a hand's rows
        together) and the relations they read, which this commit materialised as Parquet or
        defined as views over those; each task writes its unit's files of every table and
        returns its per-player sums. A small commit writes them in the driver."""
        if self.driver is not None:
            return self._in_driver("write the hand tables", self.driver.write_new_rows, writes,
                                   totals, relations, staging, prefix)
        frames = staging / FRAMES_FOLDER
        units = sorted({int(path.stem.split("-", 1)[1]) for path in frames.glob("*/unit-*.parquet")})
        empty = pa.schema([pa.field("player", pa.string())]
                          + [pa.field(name, pa.int64()) for name in PLAYER_TOTAL_COLUMNS])
        if not units:
            return empty.empty_table()
        # Every relation this commit materialised (views over its files are cheap), then the
        # views asked for, in order.
        plan = [(name, "files", str(folder)) for name, folder in self.materialised.items()
                if any(folder.glob("*.parquet"))]
        for name in relations:
            if name in self.views and name not in self.materialised:
                plan.append((name, "view", self.views[name]))
            elif name not in self.materialised:
                raise RuntimeError(f"{name} is neither materialised nor a view of this commit")
        statements = dict(writes)

        def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                for index in batch.column(0).to_pylist():
                    sums = unit_rows(units[index], staging, plan, statements, totals, prefix)
                    yield from sums.cast(empty).to_batches()

        frame = _indices(self.spark, len(units))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_PANDAS_WARNING, category=FutureWarning)
            sums = frame.mapInArrow(run, _arrow_to_spark(empty))
        with _Action(self, "write the hand tables (mapInArrow)"):
            return sums.toArrow().cast(empty)

    def file_path(self, value: str) -> Path:
        """Spark gives a URI (``file:/...``, escaped); DuckDB the path as listed."""
        if self.driver is not None:
            return self.driver.file_path(value)
        return Path(unquote(urlparse(value).path))

    def rescore(self, boards_sql: str, resolver: RulesResolver, staging: Path, prefix: str,
                on_records: Callable[[int], None]) -> RescoreCounts:
        """The boards repartitioned by hand, sorted within partitions, scored in ``mapInArrow``;
        each task writes its partitions' files (named by its partition: a retried task
        rewrites the same files)."""
        self.begin(staging)
        folder = str(staging)
        accumulator = self.context.accumulator(0)

        def score(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            from pyspark import TaskContext

            warnings.filterwarnings("ignore", message=_PANDAS_WARNING, category=FutureWarning)
            task = TaskContext.get()
            part = task.partitionId() if task is not None else 0
            counts = RescoreCounts()
            writers = {name: PartitionedWriter(Path(folder) / name, name, f"{prefix}-p{part:05d}")
                       for name in VERDICT_TABLES}
            try:
                before = 0
                for tables in scored_chunks(batches, resolver, counts):
                    for name, frame in tables.items():
                        writers[name].write(frame)
                    accumulator.add(counts.hands - before)
                    before = counts.hands
            finally:
                for writer in writers.values():
                    writer.close()
            yield pa.RecordBatch.from_pydict({
                "hands": [counts.hands], "players": [counts.players],
                "disagreements": [counts.disagreements],
                "rules": ["\x1f".join(sorted(counts.rules))],
            })

        partitions = max(2, self.context.defaultParallelism * 2)
        boards = (self.spark.sql(boards_sql).selectExpr(*BOARD_COLUMNS)
                  .repartition(partitions, "hand_key")
                  .sortWithinPartitions("hand_key", "position"))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_PANDAS_WARNING, category=FutureWarning)
            stats = boards.mapInArrow(
                score, "hands long, players long, disagreements long, rules string")
        with _Action(self, "re-score boards (mapInArrow)", accumulator, on_records):
            rows = stats.collect()
        counts = RescoreCounts()
        for row in rows:
            counts.hands += row["hands"]
            counts.players += row["players"]
            counts.disagreements += row["disagreements"]
            counts.rules.update(name for name in row["rules"].split("\x1f") if name)
        return counts

    def close(self) -> None:
        """The driver's DuckDB is closed; the session stays up for the process (starting Spark
        is the slow part)."""
        if self.driver is not None:
            self.driver.close()
            self.driver = None

    def stage_summary(self) -> list[tuple[str, int, int, int, float]]:
        """(step, Spark jobs, stages, partitions, seconds) of every step this engine ran, then
        a row ``other`` for the jobs Spark ran outside a step (listing files, inferring a
        schema), when there were any."""
        rows = [(record.label, len(record.jobs), len(record.stages), record.partitions,
                 record.seconds) for record in self.stages.records()]
        loose = set(self.context.statusTracker().getJobIdsForGroup(None))
        loose -= self._loose_jobs_before
        if loose:
            rows.append(("other (outside a step)", len(loose), 0, 0, 0.0))
        return rows

    def jobs(self) -> int:
        """How many Spark jobs this engine ran (every step's and those outside a step)."""
        return sum(row[1] for row in self.stage_summary())
