"""The ``ofc`` command line: thin argument parsing that calls the library and prints.

Each command lives in its own module, ``pipeline/cli/<command>.py`` (``solve-fl`` in
``solve_fl.py``), exposing ``register(subparsers)``: it adds the command's parser (``help``,
``description``, options) and ``set_defaults(handler=run)``. Adding a command adds that module
and one line to :data:`COMMAND_MODULES`.

Start-up: ``ofc <command> ...`` imports only that command's module (:func:`main` builds the
parser of the one command named on the command line); ``ofc --help`` imports every command
module to list them. So a command module imports, at its top, only the standard library, the
light helpers of :mod:`pipeline.cli.common` and :mod:`pipeline.cli.database`, and the pure
rules core (:mod:`pipeline.rules`) when an option needs it; anything heavier (numpy, DuckDB,
polars, pyarrow, plotly, Streamlit, the ingest, report or simulate packages) is imported inside
its ``run`` (or the function that needs it). tests/cli/test_startup.py checks that
``ofc --help`` and ``ofc board`` load none of those.

Layer: the top floor, beside the dashboard. It may import any part of :mod:`pipeline`; nothing
imports it (checked by import-linter, see docs/architecture.md).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

COMMAND_MODULES = (
    "pipeline.cli.score",
    "pipeline.cli.board",
    "pipeline.cli.dashboard",
    "pipeline.cli.demo",
    "pipeline.cli.record",
    "pipeline.cli.ingest",
    "pipeline.cli.watch",
    "pipeline.cli.rescore",
    "pipeline.cli.players",
    "pipeline.cli.settle",
    "pipeline.cli.audit",
    "pipeline.cli.export",
    "pipeline.cli.analyze",
    "pipeline.cli.solve_fl",
    "pipeline.cli.report",
    "pipeline.cli.simulate",
    "pipeline.cli.lake",
)
"""The command modules, in the order ``ofc --help`` lists their commands."""


class CommandError(Exception):
    """A user-facing failure: printed without a traceback, exit status ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (sent by ``timeout``, systemd, a container runtime): the command stops at
    once. Raised where the program is, like Ctrl-C: an open transaction is rolled back, so the
    database keeps every part committed before, and running the command again finishes it."""


TERMINATED_STATUS = 128 + signal.SIGTERM
"""Exit status after SIGTERM (143), as a shell reports a process ended by it."""


_terminated: list[bool] = []
"""Holds True once SIGTERM has arrived (DuckDB turns the exception into its own "Query
interrupted" when it comes during a query: main still knows it was SIGTERM)."""


def terminated() -> bool:
    """True once SIGTERM has arrived during the running command (a command whose own code may
    take the signal's exception for another error checks it)."""
    return bool(_terminated)


def _raise_terminated(signum: int, frame: object) -> None:
    _terminated.append(True)
    raise Terminated


def command_name(module_name: str) -> str:
    """The command a module registers: its last name part, ``_`` as ``-``
    (``pipeline.cli.solve_fl`` → ``solve-fl``)."""
    return module_name.rsplit(".", 1)[-1].replace("_", "-")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: with every registered command, or (``command``) with that one only,
    so only its module is imported. A ``command`` no module registers gives every command (the
    parser then says which exist)."""
    parser = argparse.ArgumentParser(
        prog="ofc",
        description="Open Face Chinese Poker hand-history analytics: score, ingest, explore.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    modules = [name for name in COMMAND_MODULES if command_name(name) == command]
    for module_name in modules or COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    if modules and command not in subparsers.choices:  # a module named unlike its command
        return build_parser()
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ofc`` console script; returns the exit status."""
    arguments_list = list(sys.argv[1:] if argv is None else argv)
    requested = arguments_list[0] if arguments_list else None
    parser = build_parser(requested if requested and not requested.startswith("-") else None)
    arguments = parser.parse_args(arguments_list)
    # Called without arguments, main is the ``ofc`` command's own process (the console script,
    # ``python -m pipeline.cli``): a command may then choose process-wide settings; called with
    # arguments (a test, a program) it leaves them to its caller.
    arguments.own_process = argv is None
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread: signals are not ours to handle
        previous = None
    try:
        _check_database_option(arguments)
        return int(arguments.handler(arguments) or 0)
    except CommandError as error:
        if _terminated:  # a command said the error DuckDB made of the signal
            return _stopped(arguments.command, by_sigterm=True)
        print(f"ofc {arguments.command}: {error}", file=sys.stderr)
        return error.code
    except Terminated:
        return _stopped(arguments.command, by_sigterm=True)
    except KeyboardInterrupt:
        return _stopped(arguments.command, by_sigterm=False)
    except BrokenPipeError:
        return 0
    except Exception as error:
        if _terminated or _interrupted_query(error):  # the signal met inside a DuckDB query
            return _stopped(arguments.command, by_sigterm=bool(_terminated))
        # a full disk or a read-only place, wherever it was met: said, not a traceback
        from pipeline.store.faults import storage_fault

        fault = storage_fault(error)
        if fault is None:
            raise
        print(f"ofc {arguments.command}: {fault.sentence()}", file=sys.stderr)
        return 1
    finally:
        _terminated.clear()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _interrupted_query(error: BaseException) -> bool:
    """True for DuckDB's "Query interrupted": Ctrl-C (or SIGTERM) arrived during a query."""
    return type(error).__module__.startswith(("duckdb", "_duckdb", "builtins")) and (
        "Query interrupted" in str(error))


def _stopped(command: str, by_sigterm: bool) -> int:
    """Say that the command was stopped; its exit status (143 for SIGTERM, 130 for Ctrl-C)."""
    if by_sigterm:
        print(f"ofc {command}: stopped by SIGTERM; everything stored before it is kept (run the "
              "command again to finish)", file=sys.stderr)
        return TERMINATED_STATUS
    print(f"ofc {command}: interrupted", file=sys.stderr)
    return 130


def _check_database_option(arguments: argparse.Namespace) -> None:
    """Every command with ``--db``: refuse an existing file that is not a DuckDB database before
    the command starts (DuckDB would otherwise open it as an empty in-memory database)."""
    database = getattr(arguments, "db", None)
    if database is None:
        return
    from pipeline.store import NotADatabase, check_database_file

    try:
        check_database_file(Path(database).expanduser())
    except NotADatabase as error:
        raise CommandError(f"cannot use database {database}: {error}", code=1) from error


if __name__ == "__main__":
    sys.exit(main())
