"""The progress display of ``ofc ingest`` and ``ofc rescore``: hands read and hands per second."""

from __future__ import annotations

from typing import Any

__all__ = ["Progress"]


class Progress:
    """A rich progress display on stderr: hands read and hands per second."""

    def __init__(self, enabled: bool) -> None:
        self.progress = None
        self.task = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.text import Text

        class RateColumn(ProgressColumn):
            def render(self, task: Any) -> Text:
                elapsed = task.finished_time or task.elapsed
                if not elapsed or not task.completed:
                    return Text("… hands/s")
                return Text(f"{task.completed / elapsed:,.0f} hands/s")

        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:,.0f} hands"),
            RateColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.progress.start()
        self.task = self.progress.add_task("ingest", total=None)

    def describe(self, text: str) -> None:
        """Show which source is being read."""
        if self.progress is not None:
            self.progress.update(self.task, description=text)

    def advance(self, count: int) -> None:
        """Count records read."""
        if self.progress is not None:
            self.progress.advance(self.task, count)

    def stop(self) -> None:
        """Close the display."""
        if self.progress is not None:
            self.progress.update(self.task, description="done")
            self.progress.stop()
