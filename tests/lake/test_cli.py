"""``ofc lake build`` / ``ofc lake rescore`` and ``--lake`` on the read commands, as a user runs
them: messages, exit statuses, what is printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.cli.dashboard import streamlit_command
from tests.lake.conftest import SAMPLES

REPO = Path(__file__).resolve().parents[2]


def run_ofc(*arguments: str, environment: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess:
    """``ofc ARGUMENTS`` as a separate process."""
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *arguments],
                          capture_output=True, text=True, timeout=300,
                          env=environment or dict(os.environ, PYTHONPATH=str(REPO)))


def test_spark_engine_without_pyspark_says_how_to_install_it(tmp_path: Path) -> None:
    # a pyspark that cannot be imported, first on the path: as on a default install
    shadow = tmp_path / "shadow" / "pyspark"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'pyspark'\")\n")
    environment = dict(os.environ, PYTHONPATH=f"{shadow.parent}{os.pathsep}{REPO}")
    result = run_ofc("lake", "build", str(SAMPLES / "canonical-example.jsonl"), "--lake",
                     str(tmp_path / "lake"), "--engine", "spark", environment=environment)
    assert result.returncode == 1
    assert "needs PySpark" in result.stderr and "pip install -e '.[spark]'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "lake").exists()


def test_build_prints_a_summary_and_a_second_run_adds_nothing(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture) -> None:
    lake = tmp_path / "lake"
    arguments = ["lake", "build", str(SAMPLES / "broken-example.jsonl"),
                 str(SAMPLES / "canonical-example.jsonl"), "--lake", str(lake), "--quiet"]
    assert main(arguments) == 0
    out = capsys.readouterr().out
    assert "lake build into" in out and "(local engine)" in out
    # the broken example's three good hands are the example's first three: duplicates
    assert "total: 2 file(s), 12 records, 5 stored, 3 duplicates, 4 rejected" in out
    assert "invalid JSON" in out  # the first reasons of the broken file
    assert main(arguments) == 0
    out = capsys.readouterr().out
    assert "nothing new: every file was already in the lake, unchanged" in out


def test_read_commands_on_a_lake_and_on_no_lake(tmp_path: Path,
                                                capsys: pytest.CaptureFixture) -> None:
    lake = tmp_path / "lake"
    assert main(["lake", "build", str(SAMPLES / "canonical-example.jsonl"), "--lake", str(lake),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["players", "--lake", str(lake)]) == 0
    assert "kofi" in capsys.readouterr().out
    assert main(["audit", "--lake", str(lake)]) == 0
    assert "no disagreements" in capsys.readouterr().out
    missing = tmp_path / "nowhere"
    assert main(["players", "--lake", str(missing)]) == 1
    assert f"no lake at {missing}" in capsys.readouterr().err
    assert main(["report", "kofi", "--lake", str(missing)]) == 1


def test_build_refuses_a_folder_that_is_not_a_lake(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "cat.jpg").write_bytes(b"\xff\xd8")
    assert main(["lake", "build", str(SAMPLES / "canonical-example.jsonl"), "--lake",
                 str(folder), "--quiet"]) == 1
    assert "is not empty and not a lake" in capsys.readouterr().err
    assert sorted(path.name for path in folder.iterdir()) == ["cat.jpg"]


def test_rescore_command(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    lake = tmp_path / "lake"
    assert main(["lake", "build", str(SAMPLES / "canonical-example.jsonl"), "--lake", str(lake),
                 "--quiet"]) == 0
    capsys.readouterr()
    rules = tmp_path / "scoop6.toml"
    rules.write_text('name = "scoop6"\nextends = "standard"\n[scoring]\nscoop_bonus = 6\n')
    assert main(["lake", "rescore", "--lake", str(lake), "--rules", str(rules), "--quiet"]) == 0
    assert "re-scored 5 hands (15 player results) under scoop6" in capsys.readouterr().out
    assert main(["lake", "rescore", "--lake", str(tmp_path / "none"), "--quiet"]) == 1
    assert "no lake at" in capsys.readouterr().err


def test_dashboard_serves_a_lake_with_the_lake_argument(tmp_path: Path) -> None:
    command = streamlit_command(tmp_path, 8600, None, True, lake=True)
    assert command[-3:] == ["--", "--lake", str(tmp_path)]
    result = run_ofc("dashboard", "--lake", str(tmp_path / "none"), "--no-browser")
    assert result.returncode == 2 and "no lake at" in result.stderr
