"""The progress bar of the grader's long runs (``ofc analyze``, the policy's training): a count
of done items out of the total, their rate and the time left, on stderr."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["counted_progress"]


def counted_progress(label: str, unit: str, enabled: bool,
                     ) -> tuple[Any | None, Callable[[int, int], None] | None]:
    """A started rich progress bar ``label`` counting ``unit`` and its ``update(done, total)``
    callback, or ``(None, None)`` when not ``enabled``. The rate is measured from the first
    update with a new total (a run that labels in several passes starts each pass afresh); the
    caller stops the bar."""
    if not enabled:
        return None, None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn(unit),
        TaskProgressColumn(), TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
        TimeRemainingColumn(), console=Console(stderr=True))
    progress.start()
    task = progress.add_task(label, total=None, rate="")
    clock = {"start": time.perf_counter(), "total": -1}

    def update(done: int, total: int) -> None:
        if total != clock["total"]:
            clock.update(start=time.perf_counter(), total=total)
        elapsed = time.perf_counter() - clock["start"]
        rate = f"{done / elapsed:.1f}/s" if done and elapsed > 0 else ""
        progress.update(task, completed=done, total=total, rate=rate)

    return progress, update
