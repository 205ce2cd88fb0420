"""pyarrow told that pandas is absent (:mod:`pipeline.ingest.no_pandas`), in a process of its own."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from tests.ingest.conftest import REPO, count, deal_hand

HIDDEN = r"""
import io, sys
import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
from pipeline.ingest.no_pandas import hide_pandas_from_pyarrow
if sys.argv[1] == "pandas first":
    import pandas
hidden = hide_pandas_from_pyarrow()
table = pa.table({"card": pa.array(["As", "Kd"]), "code": pa.array(np.arange(2))})
sink = io.BytesIO()
with ipc.new_file(sink, table.schema) as writer:
    writer.write_table(table)
read_back = ipc.open_file(pa.BufferReader(sink.getvalue())).read_all()
before = "pandas" in sys.modules
import pandas  # still importable
try:
    table.to_pandas()
    converts = True
except ImportError:
    converts = False
print(repr((hidden, read_back.equals(table), before, converts)))
"""


def run(case: str) -> tuple[bool, bool, bool, bool]:
    done = subprocess.run([sys.executable, "-c", HIDDEN, case], capture_output=True, text=True,
                          timeout=120, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


def test_arrow_tables_and_files_without_pandas_imported() -> None:
    """Hidden before the first array: tables are built, written and read back, and pandas is
    not imported; it stays importable, and pyarrow's conversion to pandas imports it itself."""
    assert run("hidden") == (True, True, False, True)


def test_a_process_that_imported_pandas_keeps_it_in_pyarrow() -> None:
    """Where pandas is imported already the call does nothing (and pyarrow converts)."""
    assert run("pandas first") == (False, True, True, True)


OWN_PROCESS = r"""
import sys
from pipeline.cli import main
sys.argv = ["ofc", *sys.argv[1:]]
status = main()
print(repr((status, "pandas" in sys.modules)))
"""


def test_ofc_ingest_and_watch_in_their_own_process_never_import_pandas(tmp_path: Path) -> None:
    """``ofc ingest`` of a small file (parsed in its own process, no workers) and ``ofc watch
    --once`` of a folder store every hand without importing pandas."""
    folder = tmp_path / "hands"
    folder.mkdir()
    source = folder / "hands.jsonl"
    source.write_text("".join(json.dumps(deal_hand(seed)) + "\n" for seed in range(8)))
    for command in (["ingest", str(source), "--quiet"], ["watch", str(folder), "--once"]):
        database = tmp_path / f"{command[0]}.duckdb"
        done = subprocess.run([sys.executable, "-c", OWN_PROCESS, *command, "--db", str(database)],
                              capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
        assert done.returncode == 0, done.stderr
        assert ast.literal_eval(done.stdout.strip().splitlines()[-1]) == (0, False), command
        assert count(database, "hands") == 8


def test_called_with_arguments_the_command_leaves_pyarrow_alone(tmp_path: Path) -> None:
    """``main([...])`` (a test, a program) is not the command's own process: pyarrow keeps
    looking for pandas as usual (here it finds and imports it at the first batch)."""
    source = tmp_path / "hands.jsonl"
    source.write_text("".join(json.dumps(deal_hand(seed)) + "\n" for seed in range(4)))
    script = OWN_PROCESS.replace("status = main()", "status = main(sys.argv[1:])")
    done = subprocess.run([sys.executable, "-c", script, "ingest", str(source), "--quiet",
                           "--db", str(tmp_path / "called.duckdb")],
                          capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert ast.literal_eval(done.stdout.strip().splitlines()[-1]) == (0, True)
