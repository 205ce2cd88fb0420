"""``ofc watch``: follow folders, ingesting hand histories while they are being written.

Registration imports nothing heavy (the watcher, DuckDB and watchdog load in :func:`run`), so
``ofc --help`` stays quick; the defaults below are the library's
(:mod:`pipeline.ingest.watch`; a test checks they agree).
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from pipeline.cli import CommandError, Terminated, terminated
from pipeline.cli.common import add_session_gap_option, check_session_gap

DEFAULT_DATABASE = "ofc.duckdb"
"""``pipeline.store.DEFAULT_DATABASE`` (not imported: it loads DuckDB)."""

DEFAULT_INTERVAL = 1.0
DEFAULT_SETTLE = 5.0
DEFAULT_IDLE = 30.0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``watch`` command."""
    parser = subparsers.add_parser(
        "watch",
        help="follow folders: ingest hand histories as they are written",
        description=(
            "Follow folders (recursively, every hand-history file name ofc ingest reads, plain "
            "or .gz) and ingest what is new in them as it is written: new files, and lines "
            "added to files already read, from where the last read stopped. Each part read is "
            "one ingest transaction that also stores how far the file was read, so stopping "
            "(even killing) the watcher loses nothing and a restart reads nothing twice. Only "
            "whole records are read: a half-written line or an unfinished hand waits until it "
            "is complete, or until the file has been idle for --idle seconds. A file replaced "
            "or cut is read again from its start (hands already stored are not stored twice). "
            "The dashboard's 'Follow new hands' switch shows new hands as they arrive. Ctrl-C "
            "stops."
        ),
    )
    parser.add_argument("folders", nargs="+", metavar="DIR",
                        help="folders (read recursively), files or globs to follow")
    parser.add_argument("--db", metavar="FILE", default=DEFAULT_DATABASE,
                        help=f"the DuckDB database file (default: {DEFAULT_DATABASE} in the "
                             "current folder)")
    parser.add_argument("--rules", metavar="NAME|FILE",
                        help="a rules preset or a TOML rules file; overrides the rules named "
                             "in each record")
    parser.add_argument("--format", metavar="FORMAT",
                        help="the input format (canonical, poker-arena, boards-csv; default: "
                             "detected per file)")
    parser.add_argument("--variant", metavar="GAME",
                        help="the poker-arena game (ofc, ofc-pineapple, ofc-progressive, "
                             "ofc-27) when a log's file name does not say it")
    add_session_gap_option(parser)
    parser.add_argument("--interval", type=float, default=DEFAULT_INTERVAL, metavar="S",
                        help="look at every file at least this often, in seconds (file events "
                             "wake the watcher sooner where the file system sends them; network "
                             "drives rely on this; default: %(default)g)")
    parser.add_argument("--settle", type=float, default=DEFAULT_SETTLE, metavar="S",
                        help="a file quiet this long has its last hand taken when it looks "
                             "whole (a boards CSV's last hand; default: %(default)g)")
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE, metavar="S",
                        help="a file quiet this long is read to its very end, half-written "
                             "last line included, as ofc ingest reads it (default: %(default)g)")
    parser.add_argument("--once", action="store_true",
                        help="ingest what is there now and exit")
    parser.set_defaults(handler=run)


def _options(arguments: argparse.Namespace) -> Any:
    """The watcher's options from the command line (CommandError, exit 2, for bad values)."""
    from pipeline.cli.common import rules_from_option
    from pipeline.formats import FORMATS
    from pipeline.formats.poker_arena import resolve_game
    from pipeline.ingest.watch import WatchOptions

    for name, value, low in (("--interval", arguments.interval, 0.05),
                             ("--settle", arguments.settle, 0.0), ("--idle", arguments.idle, 0.0)):
        if not (math.isfinite(value) and value >= low):
            raise CommandError(f"{name} must be a number of seconds of at least {low:g}, "
                               f"got {value}", code=2)
    check_session_gap(arguments.session_gap)
    if arguments.format is not None and arguments.format not in FORMATS:
        raise CommandError(f"unknown --format {arguments.format!r} (known formats: "
                           f"{', '.join(FORMATS)})", code=2)
    if arguments.variant is not None:
        try:
            resolve_game(arguments.variant)
        except ValueError as error:
            raise CommandError(str(error), code=2) from error
    return WatchOptions(
        rules=rules_from_option(arguments.rules), format=arguments.format,
        game=arguments.variant, session_gap=arguments.session_gap,
        interval=arguments.interval, settle=arguments.settle,
        idle=max(arguments.idle, arguments.settle),
    )


class _Display:
    """The one-line status: redrawn in place on a terminal, else printed when it changes."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(highlight=False)
        self.live: Any = None
        self.last = ""
        if sys.stdout.isatty():
            from rich.live import Live
            from rich.text import Text

            self.text = Text
            self.live = Live(Text(""), console=self.console, refresh_per_second=4,
                             transient=False)
            self.live.start()

    def status(self, line: str) -> None:
        """Show the status line."""
        if line == self.last:
            return
        self.last = line
        if self.live is not None:
            self.live.update(self.text(line))
        else:
            print(line, flush=True)

    def message(self, line: str) -> None:
        """Print a line above the status."""
        if self.live is not None:
            self.live.console.print(self.text(line))
        else:
            print(line, flush=True)

    def stop(self) -> None:
        """Leave the last status on the screen."""
        if self.live is not None:
            self.live.stop()


def run(arguments: argparse.Namespace) -> int:
    """Follow the folders until Ctrl-C (or once, with --once); exit 1 when the database cannot
    be used or a folder does not exist, or (--once) when a part could not be stored; 2 for
    bad options."""
    from pipeline.cli.common import only_ingests, terminal_text
    from pipeline.ingest.errors import DatabaseError
    from pipeline.ingest.watch import Watcher

    only_ingests(arguments)
    options = _options(arguments)
    for folder in arguments.folders:
        path = Path(folder).expanduser()
        if not path.exists() and not any(character in folder for character in "*?["):
            raise CommandError(f"no such file or folder: {folder}")
    display = _Display()
    watcher = Watcher(
        arguments.folders, Path(arguments.db).expanduser(), options,
        on_status=lambda status: display.status(terminal_text(status.line())),
        on_message=lambda message: display.message(terminal_text(message)),
    )
    restore = _stop_on_signals(watcher.request_stop)
    try:
        status = watcher.run(once=arguments.once)
        if terminated():  # SIGTERM met inside a DuckDB query, which took it as its own error
            raise Terminated
    except DatabaseError as error:
        if terminated():
            raise Terminated from error
        raise CommandError(str(error), code=1) from error
    finally:
        restore()
        display.stop()
    ending = "done" if arguments.once else "stopped"
    print(f"{ending}: {terminal_text(status.line())}", flush=True)
    if arguments.once and status.not_stored:
        # a scheduled job must learn of it: nothing is lost (read again next time), but the
        # hands are not stored
        print(f"ofc watch: {status.not_stored:,} part(s) could not be stored (see above); "
              "they are read again next time", file=sys.stderr)
        return 1
    return 0


def _stop_on_signals(stop: Callable[[], None]) -> Callable[[], None]:
    """Ctrl-C asks the watcher to stop after the part it is storing; a second Ctrl-C interrupts
    at once. SIGTERM (``timeout``, systemd, containers) stops at once wherever the watcher is,
    even in the middle of a file: the part being stored is rolled back and read next time
    (:class:`pipeline.cli.Terminated`, set up by :func:`pipeline.cli.main`). SIGTERM also asks
    the watcher to stop: arriving inside a DuckDB query, the exception becomes DuckDB's own
    "Query interrupted" error, which the watcher would otherwise take for a passing database
    error and try again. Returns a function that puts the previous handlers back."""
    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}

    def handle(number: int, frame: FrameType | None) -> None:
        stop()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def handle_terminate(number: int, frame: FrameType | None) -> None:
        stop()
        chained = previous[signal.SIGTERM]
        if callable(chained):
            chained(number, frame)

    signal.signal(signal.SIGINT, handle)
    signal.signal(signal.SIGTERM, handle_terminate)

    def restore() -> None:
        for number, handler in previous.items():
            signal.signal(number, handler)

    return restore
