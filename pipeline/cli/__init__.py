"""The ``ofc`` command line: thin argument parsing that calls the library and prints.

Each command lives in its own module exposing ``register(subparsers)``; adding a command adds one
module and one line to ``COMMAND_MODULES``.

Layer: the top floor, beside the dashboard. It may import any part of :mod:`pipeline`; nothing
imports it (checked by import-linter, see docs/architecture.md). Each command module imports
its dependencies inside its ``run``, so ``ofc --help`` stays quick.
"""

from __future__ import annotations

import argparse
import importlib
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
    "pipeline.cli.audit",
    "pipeline.cli.export",
    "pipeline.cli.analyze",
    "pipeline.cli.solve_fl",
    "pipeline.cli.report",
    "pipeline.cli.simulate",
    "pipeline.cli.lake",
)


class CommandError(Exception):
    """A user-facing failure: printed without a traceback, exit status ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered command."""
    parser = argparse.ArgumentParser(
        prog="ofc",
        description="Open Face Chinese Poker hand-history analytics: score, ingest, explore.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ofc`` console script; returns the exit status."""
    parser = build_parser()
    arguments = parser.parse_args(argv)
    try:
        _check_database_option(arguments)
        return int(arguments.handler(arguments) or 0)
    except CommandError as error:
        print(f"ofc {arguments.command}: {error}", file=sys.stderr)
        return error.code
    except KeyboardInterrupt:
        print(f"ofc {arguments.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


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
