"""Worker processes that end with the process they work for.

Used by the ingest's worker pool (:mod:`pipeline.ingest.workers`) and by ``ofc score``'s
(:mod:`pipeline.ingest.score_lines`). Standard library only.
"""

from __future__ import annotations

import os
import select
import threading
import time

__all__ = ["PARENT_POLL_SECONDS", "exit_with", "start_forkserver"]

PARENT_POLL_SECONDS = 0.5
"""How often a worker looks for its ingesting process where it cannot wait on it directly."""


def exit_with(process: int) -> threading.Thread:
    """Start a daemon thread that ends this process (``os._exit``) as soon as ``process`` exits.

    It waits on a pidfd (Linux 5.3+: woken the moment the process dies, no polling); elsewhere
    it checks every :data:`PARENT_POLL_SECONDS`. A process that is already gone ends this one at
    once. (The worker's own parent is the forkserver, not the ingesting process, so the
    parent-death signal of ``prctl`` does not apply.)"""
    try:
        handle: int | None = os.pidfd_open(process)  # type: ignore[attr-defined]
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):
        handle = None

    def watch() -> None:
        if handle is not None:
            select.select([handle], [], [])
        else:
            while True:
                time.sleep(PARENT_POLL_SECONDS)
                try:
                    os.kill(process, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    continue
        os._exit(1)

    watcher = threading.Thread(target=watch, name="ofc-exit-with-ingest", daemon=True)
    watcher.start()
    return watcher


def start_forkserver(preload: list[str]) -> None:
    """Start multiprocessing's forkserver now, importing the modules ``preload`` (what the
    workers it forks run), and return at once: the server imports them on another core while
    this process goes on. A pool made later with the ``forkserver`` context and the same
    preload forks its workers from this server (it starts one only when none runs), so its
    first worker no longer waits for those imports. Raises ValueError where there is no
    forkserver (not a Unix)."""
    import multiprocessing
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver")  # ValueError where the platform has none
    forkserver.set_forkserver_preload(preload)
    forkserver.ensure_running()
