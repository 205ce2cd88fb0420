"""Writing a simulation to a JSON Lines file (gzip when the name ends in ``.gz``).

The file is written under a temporary name next to the target and renamed when complete, so an
interrupted run never leaves a half-written file behind (next to the file a symbolic link points
to, so the link stays). A target that is no regular file (``/dev/null``, a named pipe, a
process substitution's ``/dev/fd/63``) is written to directly: renaming over it would replace a
device with a regular file (``--out /dev/null`` run as root did). Gzip output has no timestamp
or file name in its header, so the same run gives the same bytes.
"""

from __future__ import annotations

import gzip
import os
import stat
import sys
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


STANDARD_OUTPUT = "-"
"""The ``path`` that means standard output (``ofc simulate --out - | ofc score -``)."""

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
    """Run ``config`` and write its hands to ``path`` (``-``: standard output); ``progress``
    gets each session's hand count.

    Raises :class:`~pipeline.simulate.simulation.SimulationError` for an impossible configuration
    and :class:`OSError` when the file cannot be written.
    """
    target = Path(path)
    config.check()
    started = time.perf_counter()
    summary = RunSummary(target, 0, 0, 0.0)

    def write(raw: BinaryIO) -> None:
        output = compressor(target, raw)
        try:
            for session in simulate(config, jobs):
                output.write(session.lines)
                summary.hands += session.hands
                summary.sessions += 1
                merge_stats(summary.stats, session.stats)
                if progress is not None:
                    progress(session.hands)
        finally:
            if output is not raw:  # the gzip stream; ``raw`` is closed by its opener
                output.close()

    if str(path) == STANDARD_OUTPUT:
        try:
            write(sys.stdout.buffer)
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            # The reader stopped (``| head``): standard output now goes nowhere, so the
            # interpreter's last flush at exit stays quiet.
            nowhere = os.open(os.devnull, os.O_WRONLY)
            os.dup2(nowhere, sys.stdout.fileno())
            os.close(nowhere)
            raise
    elif is_special_file(target):
        with open(target, "wb") as raw:
            write(raw)
    else:
        real = Path(os.path.realpath(target))
        temporary = real.with_name(f".{real.name}.partial")
        try:
            with open(temporary, "wb") as raw:
                write(raw)
            os.replace(temporary, real)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
    summary.seconds = time.perf_counter() - started
    return summary


def is_special_file(path: Path) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a folder (a device, a named
    pipe, a socket; a symbolic link is followed): written to directly, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # missing (or unreadable: the open says why)
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
