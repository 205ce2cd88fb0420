"""The demo database: sample hands ingested into a user data folder, for ``ofc demo``.

The hands come from ``sample_data/demo-hands.jsonl.gz`` when the project ships it, else from the
simulator (``ofc simulate``, run as a child process so the dashboard never imports the CLI), and
as a last resort from the small real samples in ``sample_data/`` (poker-arena logs, live boards).
All go through :func:`pipeline.ingest.driver.ingest_paths`, the one way hand data gets into a database.

The shipped sample hands come with decision grades for a few hundred of them
(``sample_data/demo-grades/``: the ``decision_grades``, ``decision_alternatives`` and
``fantasyland_grades`` rows ``ofc analyze`` wrote for them, made by
``sample_data/make_demo_grades.py``), so the Decision grading and Trainer pages of a new demo
are not empty. :func:`load_demo_grades` copies the rows whose hand is stored.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
SAMPLE_DATA = REPOSITORY / "sample_data"
SAMPLE_HANDS = SAMPLE_DATA / "demo-hands.jsonl.gz"
SAMPLE_GRADES = SAMPLE_DATA / "demo-grades"
GRADE_FILES = ("decision_grades", "decision_alternatives", "fantasyland_grades")
"""Tables shipped in :data:`SAMPLE_GRADES`, one ``{table}.parquet`` each."""
DATA_DIR_ENV = "OFC_DATA_DIR"
DEMO_DATABASE_NAME = "demo.duckdb"
DEFAULT_SIMULATED_HANDS = 3000


class DemoError(RuntimeError):
    """The demo data could not be built (the message says why)."""


def user_data_dir() -> Path:
    """``$OFC_DATA_DIR``, else ``$XDG_DATA_HOME/ofc-analytics``, else ``~/.local/share/ofc-analytics``."""
    explicit = os.environ.get(DATA_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "ofc-analytics"


def demo_database_path() -> Path:
    """Where ``ofc demo`` keeps its database."""
    return user_data_dir() / DEMO_DATABASE_NAME


def simulate_hands(out: Path, hands: int = DEFAULT_SIMULATED_HANDS, seed: int = 7) -> Path:
    """Write ``hands`` simulated 3-player Pineapple hands to ``out`` with ``ofc simulate``."""
    command = [
        sys.executable, "-m", "pipeline.cli", "simulate", "--hands", str(hands),
        "--players", "3", "--variant", "pineapple", "--seed", str(seed), "--out", str(out),
    ]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0 or not out.exists():
        detail = (completed.stderr or completed.stdout).strip().splitlines()
        raise DemoError("the simulator failed: " + (detail[-1] if detail else "no output"))
    return out


def demo_source(hands: int = DEFAULT_SIMULATED_HANDS) -> tuple[Path, bool]:
    """The sample hands to load: (path, is_temporary). Simulates ``hands`` when no sample ships."""
    if SAMPLE_HANDS.exists():
        return SAMPLE_HANDS, False
    folder = Path(tempfile.mkdtemp(prefix="ofc-demo-"))
    try:
        return simulate_hands(folder / "demo-hands.jsonl.gz", hands), True
    except DemoError:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def build_demo_database(database: str | os.PathLike[str], rebuild: bool = False,
                        hands: int = DEFAULT_SIMULATED_HANDS):  # noqa: ANN201
    """Ingest the demo hands into ``database`` (created, or replaced with ``rebuild``).

    Returns the :class:`pipeline.ingest.summary.IngestSummary`.
    """
    from pipeline.ingest.driver import ingest_paths

    database = Path(database)
    database.parent.mkdir(parents=True, exist_ok=True)
    if rebuild:
        for stale in (database, database.with_name(database.name + ".wal")):
            stale.unlink(missing_ok=True)
    try:
        source, temporary = demo_source(hands)
    except DemoError:
        if not SAMPLE_DATA.is_dir():
            raise
        # no simulator: the few real sample hands still show every page
        return ingest_paths([SAMPLE_DATA], database)
    try:
        summary = ingest_paths([source], database)
    finally:
        if temporary:
            shutil.rmtree(source.parent, ignore_errors=True)
    if not temporary:
        load_demo_grades(database)
    return summary


def _mean_se(samples: str, total: str, squares: str, exact: str = "false") -> tuple[str, str]:
    """SQL for the mean and standard error of sums (as :class:`pipeline.analysis.grade.Tally`)."""
    mean = f"({total} / nullif({samples}, 0))"
    error = (f"CASE WHEN coalesce({exact}, false) THEN 0.0 WHEN {samples} < 2 THEN NULL ELSE "
             f"sqrt(greatest(0, ({squares} - {samples} * {mean} * {mean}) / ({samples} - 1)) "
             f"/ {samples}) END")
    return mean, error


def _derived_alternatives() -> dict[str, str]:
    ev, se = _mean_se("samples", "total", "total_sq", "exact")
    diff, diff_se = _mean_se("samples", "diff_total", "diff_total_sq", "exact")
    eval_ev, eval_se = _mean_se("eval_samples", "eval_total", "eval_total_sq")

    def cards(pattern: str) -> str:
        return f"replace(trim(regexp_extract(placement, '{pattern}', 1)), '–', '')"

    return {
        "ev": f"coalesce({ev}, 0.0)", "se": se, "diff": f"coalesce({diff}, 0.0)",
        "diff_se": diff_se, "eval_ev": f"CASE WHEN eval_samples > 0 THEN {eval_ev} END",
        "eval_se": f"CASE WHEN eval_samples > 0 THEN {eval_se} END",
        "top": cards("^top ([^·]*)"), "middle": cards("· middle ([^·]*)"),
        "bottom": cards("· bottom ([^·]*)"), "discards": cards("· discard (.*)$"),
    }


DERIVED = {"decision_alternatives": _derived_alternatives()}

SHIPPED_COLUMNS = {
    # the alternatives without what can be derived (means and errors from the sums, the rows'
    # cards from the placement): the sums are whole numbers (points, Fantasyland value 10)
    "decision_alternatives": (
        "hand_key, player, street, alternative, placement, equivalents, is_chosen, is_best, "
        "samples, total::BIGINT AS total, total_sq::BIGINT AS total_sq, "
        "diff_total::BIGINT AS diff_total, diff_total_sq::BIGINT AS diff_total_sq, "
        "eval_samples, eval_total::BIGINT AS eval_total, eval_total_sq::BIGINT AS eval_total_sq, "
        "eval_diff_total::BIGINT AS eval_diff_total, "
        "eval_diff_total_sq::BIGINT AS eval_diff_total_sq, exact"),
}
"""Columns sample_data/make_demo_grades.py writes per table (every column when not listed);
:func:`load_demo_grades` rebuilds the rest (:data:`DERIVED`)."""

"""Columns the shipped files leave out (sample_data/make_demo_grades.py), rebuilt on load."""


def load_demo_grades(database: str | os.PathLike[str], folder: Path = SAMPLE_GRADES) -> int:
    """Copy the shipped grades of the demo hands into ``database`` (rows of hands it holds;
    earlier rows of those decisions are replaced). Returns the decisions loaded (0 when no
    grades ship)."""
    from pipeline import store

    files = {table: folder / f"{table}.parquet" for table in GRADE_FILES}
    if not all(path.is_file() for path in files.values()):
        return 0
    keys = {"decision_grades": ("hand_key", "player", "street"),
            "decision_alternatives": ("hand_key", "player", "street"),
            "fantasyland_grades": ("hand_key", "player")}
    with store.open_database(database) as connection:
        connection.execute("BEGIN TRANSACTION")
        try:
            for table, path in files.items():
                present = {row[0] for row in connection.execute(
                    "DESCRIBE SELECT * FROM read_parquet(?)", [str(path)]).fetchall()}
                extra = "".join(f", {expression} AS {name}"
                                for name, expression in DERIVED.get(table, {}).items()
                                if name not in present)
                connection.execute(
                    f"CREATE OR REPLACE TEMP TABLE _demo_grades AS SELECT *{extra} "
                    "FROM read_parquet(?) WHERE hand_key IN (SELECT hand_key FROM hands)",
                    [str(path)])
                match = " AND ".join(f"d.{key} = {table}.{key}" for key in keys[table])
                connection.execute(
                    f"DELETE FROM {table} WHERE EXISTS (SELECT 1 FROM _demo_grades d WHERE {match})")
                connection.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _demo_grades")
            loaded = connection.execute(
                "SELECT count(*) FROM decision_grades WHERE hand_key IN "
                "(SELECT hand_key FROM hands)").fetchone()[0]
            connection.execute("DROP TABLE _demo_grades")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
    return int(loaded)
