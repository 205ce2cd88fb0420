"""The terminal display of ``ofc lake build`` and ``ofc lake rescore``: one line that says what
is being done, hands so far, hands per second and, on Spark, the running stage's partitions.

Spark's own console progress bar and its JVM logging are off (:mod:`pipeline.lake.spark`);
this line replaces them, and :class:`StageLog` keeps what each Spark stage did for the summary
printed at the end.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LakeProgress", "StageLog", "StepRecord"]


@dataclass(slots=True)
class StepRecord:
    """One step of a build on Spark (a write, a query): its Spark stages, partitions and time."""

    label: str
    stages: set[int] = field(default_factory=set)
    partitions: int = 0
    seconds: float = 0.0
    jobs: set[int] = field(default_factory=set)


class StageLog:
    """What each step of a Spark build ran: stages and their partitions, wall time."""

    def __init__(self) -> None:
        self.steps: dict[str, StepRecord] = {}
        self._tasks: dict[int, int] = {}
        self._lock = threading.Lock()

    def seen(self, label: str, stage: int, tasks: int) -> None:
        """Note a stage running for the step ``label``."""
        with self._lock:
            record = self.steps.setdefault(label, StepRecord(label))
            if stage not in record.stages:
                record.stages.add(stage)
                record.partitions += tasks
                self._tasks[stage] = tasks

    def ran_job(self, label: str, job: int) -> None:
        """Note a Spark job run for the step ``label``."""
        with self._lock:
            self.steps.setdefault(label, StepRecord(label)).jobs.add(job)

    def timed(self, label: str, seconds: float) -> None:
        """Add wall time to the step ``label``."""
        with self._lock:
            self.steps.setdefault(label, StepRecord(label)).seconds += seconds

    def records(self) -> list[StepRecord]:
        """Every step, in the order they first ran."""
        with self._lock:
            return list(self.steps.values())


class LakeProgress:
    """A rich status line on stderr (nothing when disabled)."""

    def __init__(self, enabled: bool) -> None:
        self.progress: Any = None
        self.task: Any = None
        self.started = time.monotonic()
        self.rate_from: float | None = None
        self.hands = 0
        self._lock = threading.Lock()
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            TextColumn("{task.fields[hands]:,} hands · {task.fields[rate]}"),
            TextColumn("{task.fields[stage]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.progress.start()
        self.task = self.progress.add_task("starting", total=None, hands=0, rate="… hands/s",
                                           stage="")

    def describe(self, text: str) -> None:
        """Say what is being done."""
        if self.progress is not None:
            self.progress.update(self.task, description=text)

    def reading(self) -> None:
        """Hands start coming: the rate counts from now (not from Spark's start-up)."""
        if self.rate_from is None:
            self.rate_from = time.monotonic()

    def advance(self, hands: int) -> None:
        """Count hands (records) done."""
        with self._lock:
            self.hands += hands
            hands_so_far = self.hands
        if self.progress is not None:
            elapsed = time.monotonic() - (self.rate_from or self.started)
            rate = f"{hands_so_far / elapsed:,.0f} hands/s" if elapsed > 0 else "… hands/s"
            self.progress.update(self.task, hands=hands_so_far, rate=rate)

    def stage(self, text: str) -> None:
        """Show the running Spark stage (partitions done of all)."""
        if self.progress is not None:
            self.progress.update(self.task, stage=text)

    def stop(self) -> None:
        """Close the display."""
        if self.progress is not None:
            self.progress.update(self.task, description="done", stage="")
            self.progress.stop()
            self.progress = None
