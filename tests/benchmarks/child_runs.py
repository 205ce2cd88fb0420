"""Fresh-process runs for the benchmarks: wall and CPU time, in the environment of an install.

An installed package has its bytecode compiled (pip compiles it at install time), so a command
starts without compiling its modules. A development shell may set ``PYTHONDONTWRITEBYTECODE``
(this project's machines do): every run would then compile every module of the project again,
which costs a command — and not the baseline scripts, whose libraries came compiled from pip —
about 0.1-0.3 s. The benchmarks therefore run every child, baselines and ``ofc`` alike, with a
bytecode cache of their own (``PYTHONPYCACHEPREFIX`` under the benchmark's cache folder: the
working tree gets no ``__pycache__``), warmed by one run first.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def installed_environment(cache: Path) -> dict[str, str]:
    """The environment of a child run: this repository on the path, bytecode cached in
    ``cache / "pycache"`` (as an installed package has it)."""
    environment = dict(os.environ, PYTHONPATH=str(REPO),
                       PYTHONPYCACHEPREFIX=str(cache / "pycache"))
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


@dataclass(frozen=True, slots=True)
class Run:
    """One child run: wall seconds, and CPU seconds (user + system) of it and its children."""

    wall: float
    cpu: float


def timed_run(command: list[str], environment: dict[str, str], cwd: Path = REPO) -> Run:
    """Run ``command`` from the repository, or ``cwd`` (it must succeed); its wall and CPU
    seconds. (``python -c`` imports from its working folder first, whatever PYTHONPATH says.)"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=cwd, env=environment, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(wall, cpu)
