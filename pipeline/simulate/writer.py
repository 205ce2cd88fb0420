"""Writing a simulation to a JSON Lines file (gzip when the name ends in ``.gz``).

The file is written under a temporary name next to the target and renamed when complete, so an
interrupted run never leaves a half-written file behind. Gzip output has no timestamp or file
name in its header, so the same run gives the same bytes.
"""

from __future__ import annotations

import gzip
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from pipeline.simulate.simulation import BotStats, SimulationConfig, merge_stats, simulate


@dataclass(slots=True)
class RunSummary:
    """What a finished run wrote."""

    path: Path
    hands: int
    sessions: int
    seconds: float
    stats: dict[str, BotStats] = field(default_factory=dict)

    @property
    def hands_per_second(self) -> float:
        """Throughput of the run (wall clock)."""
        return self.hands / self.seconds if self.seconds > 0 else 0.0

    @property
    def players(self) -> int:
        """Distinct named players who played."""
        return len(set().union(*(stats.players for stats in self.stats.values())))


GZIP_LEVEL = 6
"""zlib's default level: level 9 is four times slower here for files 8% smaller."""


def compressor(path: Path, raw: BinaryIO) -> BinaryIO:
    """``raw`` itself, or a gzip stream over it (reproducible header) when the name ends in .gz."""
    if path.name.endswith(".gz"):
        return gzip.GzipFile(  # type: ignore[return-value]
            filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=GZIP_LEVEL
        )
    return raw


def write_simulation(
    config: SimulationConfig,
    path: str | os.PathLike[str],
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
) -> RunSummary:
    """Run ``config`` and write its hands to ``path``; ``progress`` gets each session's hand count.

    Raises :class:`~pipeline.simulate.simulation.SimulationError` for an impossible configuration
    and :class:`OSError` when the file cannot be written.
    """
    target = Path(path)
    config.check()
    temporary = target.with_name(f".{target.name}.partial")
    started = time.perf_counter()
    summary = RunSummary(target, 0, 0, 0.0)
    try:
        with open(temporary, "wb") as raw, compressor(target, raw) as output:
            for session in simulate(config, jobs):
                output.write(session.lines)
                summary.hands += session.hands
                summary.sessions += 1
                merge_stats(summary.stats, session.stats)
                if progress is not None:
                    progress(session.hands)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    summary.seconds = time.perf_counter() - started
    return summary
