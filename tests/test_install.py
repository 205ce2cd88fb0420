"""The project works installed, not only from the working copy: ``pip install .`` (a plain,
non-editable install) and ``pip install -e .`` both run ``ofc score`` with a rules file that
extends a preset to the same output as the working copy, and every file read at run time (the
rules schema, the dashboard's app and pages, the report templates) ships in the installed packages.

The project is copied to a temporary folder (so the build leaves nothing in the working copy) and
installed with ``--no-deps`` into a fresh venv that sees the running interpreter's site-packages
(the dependencies, and pip) through a ``.pth`` file. A ``.pth`` line only appends that folder to
``sys.path``: the ``.pth`` files inside it (this checkout's own editable finder) are not run, and
the venv's own site-packages comes first, so the copy under test is the one imported (asserted).

Offline and fast (a few seconds per install) when the running interpreter can build a wheel itself
(setuptools >= 70.1, which the ``test`` extra asks for): ``--no-build-isolation --no-index``.
Otherwise pip builds in isolation, fetching ``build-system.requires`` from the configured index.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parents[1]
HANDS = REPO / "tests" / "golden" / "score" / "hands.jsonl"
RULES = 'name = "house-progressive"\nextends = "progressive"\n\n[scoring]\nscoop_bonus = 6\n'
COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", "*.pyc", "build", "*.egg-info", ".pytest_cache", ".ruff_cache",
    "*.duckdb", "*.duckdb.wal", "artifacts",
)
SHIPPED = ("*.py", "*.j2", "*.json", "*.md", "*.toml", "*.sql", "*.html", "*.css", "*.js")
"""Files of pipeline/ and dashboard/ that an install must carry (the package-data patterns)."""


def clean_environment() -> dict[str, str]:
    """The environment without anything that would put the working copy on ``sys.path``."""
    environment = {
        key: value for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "VIRTUAL_ENV"))
    }
    return dict(environment, COLUMNS="200", NO_COLOR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")


def run(command: list[str | Path], cwd: Path, environment: dict[str, str] | None = None,
        timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True,
                          env=environment if environment is not None else clean_environment(),
                          timeout=timeout, check=False)


def builds_wheels_offline() -> bool:
    """True when the running interpreter's setuptools builds wheels without the ``wheel`` package
    and satisfies ``build-system.requires`` (>= 70.1), or is >= 68 with ``wheel`` beside it."""
    try:
        version = metadata.version("setuptools")
    except metadata.PackageNotFoundError:
        return False
    numbers = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    if numbers >= (70, 1):
        return True
    return numbers >= (68,) and importlib.util.find_spec("wheel") is not None


def shipped_files(folder: Path) -> set[str]:
    return {
        path.relative_to(folder).as_posix() for pattern in SHIPPED for path in folder.rglob(pattern)
        if "__pycache__" not in path.parts
    }


def test_the_package_list_names_every_folder() -> None:
    """pyproject.toml lists the packages (to map schemas/ to pipeline.schemas): a new folder of
    code or templates under pipeline/ or dashboard/ must be listed, or installs would lack it."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = pyproject["tool"]["setuptools"]
    folders = {
        ".".join(folder.relative_to(REPO).parts)
        for top in ("pipeline", "dashboard")
        for folder in [REPO / top, *(REPO / top).rglob("*")]
        if folder.is_dir() and "__pycache__" not in folder.parts and shipped_files(folder)
    }
    assert set(setuptools["packages"]) == folders | {"pipeline.schemas"}
    assert setuptools["package-dir"] == {"pipeline.schemas": "schemas"}


class Install(NamedTuple):
    """A venv holding an install of a copy of the project."""

    bin: Path
    site_packages: Path
    code: Path
    """Where ``pipeline`` is imported from: the venv, or the copied source for an editable install."""


def install_copy(root: Path, editable: bool) -> Install:
    """Copy the project under ``root`` and ``pip install`` it into a fresh venv there."""
    source = root / "source"
    shutil.copytree(REPO, source, ignore=COPY_IGNORE)
    venv = root / "venv"
    made = run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=root)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    found = run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=root)
    assert found.returncode == 0, found.stderr
    site_packages = Path(found.stdout.strip())
    # the running interpreter's dependencies (and pip, setuptools), after the venv's own
    visible = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    (site_packages / "zz-dependencies.pth").write_text("\n".join(visible) + "\n", encoding="utf-8")
    build = ["--no-build-isolation", "--no-index"] if builds_wheels_offline() else []
    target = ["-e", source] if editable else [source]
    installing = run([python, "-m", "pip", "install", "--no-deps", "--ignore-installed", "--quiet",
                      *build, *target], cwd=root)
    assert installing.returncode == 0, installing.stdout + installing.stderr
    if not editable:
        shutil.rmtree(source)  # nothing may be read from the source folder once installed
    return Install(venv / "bin", site_packages, (source if editable else venv).resolve())


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Install:
    """``pip install .``: the project's files copied into the venv's site-packages."""
    return install_copy(tmp_path_factory.mktemp("install"), editable=False)


@pytest.fixture(scope="module")
def editable(tmp_path_factory: pytest.TempPathFactory) -> Install:
    """``pip install -e .``: the venv finds the project in the (copied) source folder."""
    return install_copy(tmp_path_factory.mktemp("editable"), editable=True)


@pytest.mark.parametrize("kind", ["installed", "editable"])
def test_score_with_a_rules_file_matches_the_working_copy(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path,
) -> None:
    install: Install = request.getfixturevalue(kind)
    shown = run([install.bin / "python", "-c", "import pipeline, dashboard; "
                 "print(pipeline.__file__); print(dashboard.__file__)"], cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    for module_file in shown.stdout.split():
        assert Path(module_file).resolve().is_relative_to(install.code), module_file

    rules = tmp_path / "house-progressive.toml"
    rules.write_text(RULES, encoding="utf-8")
    arguments = ["score", HANDS, "--rules", rules]
    from_install = run([install.bin / "ofc", *arguments], cwd=tmp_path)
    assert from_install.returncode == 0, from_install.stdout + from_install.stderr
    # the working copy, run as the rest of the suite runs it (PYTHONPATH kept)
    from_working_copy = run([sys.executable, "-m", "pipeline.cli", *arguments], cwd=REPO,
                            environment=dict(os.environ, COLUMNS="200", NO_COLOR="1"))
    assert from_working_copy.returncode == 0, from_working_copy.stderr
    assert from_install.stdout == from_working_copy.stdout
    scored = [json.loads(line) for line in from_install.stdout.splitlines()]
    assert len(scored) == len(HANDS.read_text(encoding="utf-8").splitlines())
    assert all("players" in hand for hand in scored)

    # a rules file against the schema is refused naming the key: the schema was read
    broken = tmp_path / "broken.toml"
    broken.write_text('extends = "progressive"\nsurprise = 1\n', encoding="utf-8")
    refused = run([install.bin / "ofc", "score", HANDS, "--rules", broken], cwd=tmp_path)
    assert refused.returncode != 0
    assert "surprise: unknown key" in refused.stdout + refused.stderr


def test_every_run_time_file_ships(installed: Install) -> None:
    for package in ("pipeline", "dashboard"):
        missing = shipped_files(REPO / package) - shipped_files(installed.site_packages / package)
        assert not missing, f"not installed from {package}/: {sorted(missing)}"
    schemas = {path.name for path in (REPO / "schemas").iterdir() if path.is_file()}
    shipped = installed.site_packages / "pipeline" / "schemas"
    assert schemas == {path.name for path in shipped.iterdir() if path.is_file()}


def test_the_dashboard_and_the_demo_work_installed(installed: Install, tmp_path: Path) -> None:
    script = (
        "import json, shutil\n"
        "from pipeline.cli.dashboard import app_path\n"
        "from pipeline.ingest import demo\n"
        "source, temporary = demo.demo_source(hands=3)\n"
        "simulated = temporary and source.stat().st_size > 0\n"
        "if temporary:\n"
        "    shutil.rmtree(source.parent)\n"
        "print(json.dumps({'app': str(app_path()), 'simulated': simulated}))\n"
    )
    shown = run([installed.bin / "python", "-c", script], cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)
    # ``ofc dashboard`` runs the installed app, whose pages are beside it
    app = Path(found["app"])
    assert app.is_file() and app.resolve().is_relative_to(installed.code), app
    assert (app.parent / "views" / "record.py").is_file()
    # sample_data/ is not installed: ``ofc demo`` falls back to the simulator
    assert found["simulated"] is True
