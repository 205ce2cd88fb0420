"""``ofc`` starts without loading what a command does not need.

``ofc <command>`` imports only that command's module; ``ofc --help`` imports every command
module, each of which imports its heavy dependencies inside ``run``. Checked with
``python -X importtime``: the modules a run loaded are listed on stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import COMMAND_MODULES, build_parser, command_name

REPO = Path(__file__).resolve().parents[2]
BOARD = "Qs Qh 5d / Kc Kd 4h 3s 2c / Ac Ad Ah 9s 9c"
HEAVY = ("streamlit", "duckdb", "polars", "pyarrow", "pandas", "plotly", "jinja2", "numpy",
         "pyspark", "numba")


def imported(*arguments: str) -> tuple[set[str], subprocess.CompletedProcess]:
    """The top-level packages a run of ``python -m pipeline.cli ARGUMENTS`` imported."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pipeline.cli", *arguments],
        capture_output=True, text=True, cwd=REPO, timeout=120,
        env=dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="120"),
    )
    modules = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            modules.add(name.split(".")[0])
    return modules, result


def test_ofc_board_loads_no_database_table_or_array_library() -> None:
    modules, result = imported("board", BOARD)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Legal" in result.stdout or "FOUL" in result.stdout
    assert "pipeline" in modules and "rich" in modules  # the list is real
    assert not modules & set(HEAVY), modules & set(HEAVY)


def test_ofc_help_lists_every_command_without_loading_their_dependencies() -> None:
    modules, result = imported("--help")
    assert result.returncode == 0, result.stderr[-2000:]
    for module in COMMAND_MODULES:
        assert command_name(module) in result.stdout
    assert not modules & set(HEAVY), modules & set(HEAVY)


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_a_command_module_registers_without_heavy_imports(module: str) -> None:
    """What ``ofc --help`` pays for: importing each command module and registering it."""
    code = (
        "import argparse, importlib, sys\n"
        "parser = argparse.ArgumentParser()\n"
        f"importlib.import_module({module!r}).register(parser.add_subparsers())\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=REPO, timeout=60, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"


def test_a_command_builds_only_its_own_parser_and_unknown_ones_get_the_full_list() -> None:
    parser = build_parser("board")
    subparsers = next(action for action in parser._actions if action.dest == "command")
    assert list(subparsers.choices) == ["board"]
    full = build_parser("no-such-command")
    subparsers = next(action for action in full._actions if action.dest == "command")
    assert list(subparsers.choices) == [command_name(module) for module in COMMAND_MODULES]
    unknown = subprocess.run([sys.executable, "-m", "pipeline.cli", "scroe"], capture_output=True,
                             text=True, cwd=REPO, timeout=60)
    assert unknown.returncode == 2 and "invalid choice: 'scroe'" in unknown.stderr
    assert "'score'" in unknown.stderr


def test_help_filled_in_when_shown_says_what_it_said_before() -> None:
    """Text that needs an import (bots, report defaults, the export marker) is still in the
    help, taken from its source."""
    from pipeline.report import ReportSettings
    from pipeline.simulate.bots import BOTS, DEFAULT_BOTS
    from pipeline.store.export import EXPORT_MARKER

    def help_of(command: str) -> str:
        subparsers = next(action for action in build_parser(command)._actions
                          if action.dest == "command")
        return " ".join(subparsers.choices[command].format_help().split())

    simulate = help_of("simulate")
    assert all(bot.description.split()[0] in simulate for bot in BOTS.values())
    assert f"default {','.join(DEFAULT_BOTS)}" in simulate
    analyze = help_of("analyze")
    assert "{" + ",".join(sorted(BOTS)) + "}" in analyze
    report = help_of("report")
    assert f"(default: {ReportSettings().min_sample})" in report
    assert f"(default: {ReportSettings().fdr})" in report
    assert EXPORT_MARKER in help_of("export").replace("- ", "-")  # wrapped at its hyphen


def test_written_out_constants_agree_with_their_source() -> None:
    from pipeline.analysis import exact, rollout
    from pipeline.analysis.grade import GradeSettings
    from pipeline.cli import analyze, database, report
    from pipeline.report.render import FORMATS
    from pipeline.store import DEFAULT_DATABASE

    assert database.DEFAULT_DATABASE == DEFAULT_DATABASE
    assert report.FORMATS == FORMATS
    assert analyze.DEFAULT_EXACT_LIMIT == exact.DEFAULT_EXACT_LIMIT
    assert analyze.DEFAULT_POLICY == rollout.DEFAULT_POLICY
    assert analyze.DEFAULT_FANTASYLAND_VALUE == rollout.DEFAULT_FANTASYLAND_VALUE
    settings = GradeSettings()
    assert settings.rollouts == analyze.DEFAULT_ROLLOUTS
    assert settings.contenders == analyze.DEFAULT_CONTENDERS
    assert settings.evaluation_se == analyze.DEFAULT_EVALUATION_SE
    assert settings.race_limit == analyze.DEFAULT_RACE_LIMIT
    assert settings.second_z == analyze.DEFAULT_SECOND_Z


def test_analyze_refuses_an_unknown_bot_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    from pipeline.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", "--policy", "nobody"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "argument --policy: invalid choice: 'nobody' (choose from 'chaser'" in error


def test_ofc_report_loads_plotly_and_jinja_only_for_the_formats_that_use_them(
        tmp_path: Path) -> None:
    """JSON needs neither Plotly nor Jinja, Markdown only Jinja: about 0.2 s of a report's
    start-up on a slow machine."""
    import json

    from pipeline.ingest.driver import ingest_paths
    from tests.dashboard.fixture_hands import MARA, write_fixture

    source = tmp_path / "hands.jsonl"
    write_fixture(source)
    database = tmp_path / "hands.duckdb"
    ingest_paths([source], database)
    loaded = {}
    for output_format in ("json", "md", "html"):
        modules, result = imported("report", MARA, "--db", str(database), "--format",
                                   output_format, "--out", "-")
        assert result.returncode == 0, result.stderr[-2000:]
        assert MARA in result.stdout
        loaded[output_format] = modules & {"duckdb", "plotly", "jinja2"}
        if output_format == "json":
            assert json.loads(result.stdout)["player"] == MARA
    assert loaded == {"json": {"duckdb"}, "md": {"duckdb", "jinja2"},
                      "html": {"duckdb", "jinja2", "plotly"}}


def test_the_bots_load_without_numba_until_the_learned_policy_plays() -> None:
    """Importing the simulator's bots (``ofc simulate``, the dashboard's pages) does not start
    numba; the learned policy's compiled score imports it on first use."""
    code = (
        "import sys\n"
        "from pipeline.simulate.bots import BOTS\n"
        "print('numba' in sys.modules)\n"
        "from pipeline.simulate.learned import fast_normal_cdf\n"
        "fast_normal_cdf([0.0])\n"
        "print('numba' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=REPO, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["False", "True"]
