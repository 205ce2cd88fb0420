"""``ofc export --parquet DIR`` replaces only what an export wrote.

Before: ``results/``, ``sessions/``, ``hands/`` ... inside DIR were removed recursively, user files
included (``--parquet .`` emptied them), and a file as DIR gave a traceback.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipeline.cli import main
from pipeline.ingest.driver import ingest_paths
from pipeline.store.export import EXPORT_MARKER
from tests.ingest.conftest import deal_hand, write_jsonl


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("export")
    path = folder / "hands.duckdb"
    ingest_paths([write_jsonl(folder / "hands.jsonl", [deal_hand(seed) for seed in range(5)])], path)
    return path


def export(database: Path, directory: Path) -> int:
    return main(["export", "--parquet", str(directory), "--db", str(database)])


def test_a_folder_the_export_did_not_write_is_left_alone(database: Path, tmp_path: Path,
                                                        capsys) -> None:  # noqa: ANN001
    own = tmp_path / "results"
    own.mkdir()
    (own / "my-notes.txt").write_text("mine", encoding="utf-8")
    assert export(database, tmp_path) == 1
    error = capsys.readouterr().err
    assert "results" in error and "not written by ofc export" in error
    assert (own / "my-notes.txt").read_text(encoding="utf-8") == "mine"
    assert not (tmp_path / "hands").exists()  # refused before writing anything


def test_a_plain_file_at_a_table_name_is_left_alone(database: Path, tmp_path: Path) -> None:
    (tmp_path / "rejects.parquet").write_text("not ours", encoding="utf-8")
    assert export(database, tmp_path) == 1
    assert (tmp_path / "rejects.parquet").read_text(encoding="utf-8") == "not ours"


def test_an_earlier_export_is_replaced(database: Path, tmp_path: Path) -> None:
    assert export(database, tmp_path) == 0
    assert (tmp_path / "hands" / EXPORT_MARKER).is_file()
    stray = tmp_path / "hands" / "site=old" / "month=unknown"
    stray.mkdir(parents=True)
    (stray / "data_0.parquet").write_bytes(b"old")
    (tmp_path / "notes.txt").write_text("kept", encoding="utf-8")
    assert export(database, tmp_path) == 0
    assert not stray.exists()
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "kept"
    rows = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{tmp_path}/hands/**/*.parquet', hive_partitioning=true)"
    ).fetchall()
    assert rows == [(5,)]
    assert duckdb.sql(f"SELECT count(*) FROM '{tmp_path}/rejects.parquet'").fetchall() == [(0,)]
    assert not list(tmp_path.glob(".*partial"))


def test_a_file_or_an_unwritable_path_is_a_clear_error(database: Path, tmp_path: Path,
                                                       capsys) -> None:  # noqa: ANN001
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    assert export(database, a_file) == 1
    assert "is not a folder" in capsys.readouterr().err
    assert export(database, a_file / "below") == 1
    assert "cannot create" in capsys.readouterr().err
    assert a_file.read_text(encoding="utf-8") == "x"
