"""``ofc ingest``: read hand-history files into the database, with a progress bar and a summary."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.cli import CommandError
from pipeline.cli.common import (
    add_rules_option,
    add_session_gap_option,
    batch_size,
    check_session_gap,
    only_ingests,
    process_count,
    rules_from_option,
    terminal_cell,
)
from pipeline.cli.database import add_database_option
from pipeline.formats import COMPRESSED_SUFFIXES, FILE_SUFFIXES, FORMATS
from pipeline.ingest.defaults import (
    DEFAULT_BATCH_SIZE,
    MAX_BATCH_SIZE,
    PARALLEL_MIN_BYTES,
    WORKER_PRELOAD,
    parallel_workers,
)
from pipeline.ingest.errors import DatabaseError, IngestError

if TYPE_CHECKING:
    from pipeline.ingest.summary import FileSummary, IngestSummary

def format_help() -> str:
    """The ``--format`` help: every registered format with its file suffixes and description."""
    formats = "; ".join(
        f"{name} ({', '.join(spec.suffixes)}): {spec.description}"
        for name, spec in FORMATS.items()
    )
    # argparse expands %-placeholders in help text.
    return f"the input format (default: detected per file): {formats}".replace("%", "%%")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``ingest`` command."""
    parser = subparsers.add_parser(
        "ingest",
        help="read hand histories (files, folders, globs; plain or .gz) into the database",
        description=(
            "Read hand histories into a DuckDB database: every hand is validated, re-scored "
            "and stored once (keyed by site and hand id); bad records go to the rejects table "
            "with their reason. Folders are read recursively (files ending in "
            f"{', '.join(FILE_SUFFIXES)}, optionally {' or '.join(COMPRESSED_SUFFIXES)}); "
            "re-reading a file is a no-op. "
            "Exit status 0 when the files were read (even with rejected records), 1 for a "
            "missing path or an unusable database."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files, folders or globs")
    add_database_option(parser)
    add_rules_option(parser)
    parser.add_argument(
        "--format", choices=sorted(FORMATS), help=format_help()
    )
    parser.add_argument(
        "--variant", metavar="GAME",
        help="the poker-arena game (ofc, ofc-pineapple, ofc-progressive, ofc-27) when the "
             "file name does not say it",
    )
    add_session_gap_option(parser)
    parser.add_argument(
        "--batch-size", type=batch_size, default=DEFAULT_BATCH_SIZE, metavar="N",
        help=f"records per transaction (default: %(default)d; at most {MAX_BATCH_SIZE:,})",
    )
    parser.add_argument(
        "--workers", type=int, metavar="N",
        help="processes that parse canonical JSON Lines (default: every core for files of "
             f"{PARALLEL_MIN_BYTES >> 20} MB or more; 1 = none)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run)


def _shown_path(path: str) -> str:
    """A path relative to the current folder when it is inside it."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


def file_table(title: str, files: Sequence[FileSummary]) -> Any:
    """The per-file table of an ingest or a lake build (a rich Table): every path, name and
    reason made safe for a terminal."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=terminal_cell(title))
    for name, justify in (("file", "left"), ("format", "left"), ("status", "left"),
                          ("records", "right"), ("stored", "right"), ("duplicates", "right"),
                          ("rejected", "right"), ("first reasons", "left")):
        table.add_column(name, justify=justify, overflow="fold",  # type: ignore[arg-type]
                         min_width=len(name) if name != "file" else 24)
    for item in files:
        notes = list(item.reasons)
        if item.message and item.message not in item.reasons:
            notes.insert(0, item.message)
        notes += [f"warning: {warning}" for warning in item.warnings
                  if warning not in (item.message or "")]
        table.add_row(
            terminal_cell(_shown_path(item.path)), item.format or "", item.status,
            f"{item.records:,}", f"{item.stored:,}", f"{item.duplicates:,}", f"{item.rejected:,}",
            Text("\n").join(terminal_cell(note) for note in notes),
        )
    return table


def print_summary(summary: IngestSummary) -> None:
    """The per-file table and the totals, on stdout."""
    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 160)
    console.print(file_table(f"ingest into {summary.database}", summary.files))
    console.print(
        f"total: {len(summary.files)} file(s), {summary.records:,} records, "
        f"{summary.stored:,} stored, {summary.duplicates:,} duplicates, "
        f"{summary.rejected:,} rejected in {summary.seconds:.1f} s "
        f"({summary.hands_per_second:,.0f} hands/s)",
        highlight=False,
    )
    if summary.nothing_new:
        if summary.files and all(item.status == "unchanged" for item in summary.files):
            note = "nothing new: every file was already ingested, unchanged"
        else:
            note = "nothing new: no hand was stored"
        console.print(note, highlight=False)


def forks_workers(paths: Sequence[str], format: str | None, workers: int | None) -> bool:
    """Whether the ingest will parse one of ``paths`` in worker processes, judged before
    anything heavy is imported: a plain file given by name, large enough
    (:func:`~pipeline.ingest.defaults.parallel_workers`), in the canonical format or, with no
    ``--format``, possibly so (its format is judged later; a file in another format leaves
    the workers' server idle until the command ends)."""
    for path in paths:
        try:
            size = os.stat(path).st_size
        except OSError:  # a folder's or a glob's files are not looked at here
            continue
        if parallel_workers(workers, format or "canonical", size) > 1 and Path(path).is_file():
            return True
    return False


def run(arguments: argparse.Namespace) -> int:
    """Ingest the paths; exit 0 when they were read, 1 for fatal problems, 2 for bad options."""
    check_session_gap(arguments.session_gap)
    arguments.workers = process_count(arguments.workers, "--workers")
    if forks_workers(arguments.paths, arguments.format, arguments.workers):
        from pipeline.ingest.lifetime import start_forkserver

        with contextlib.suppress(ValueError, OSError):  # no forkserver: the pool says so later
            start_forkserver(WORKER_PRELOAD)  # its imports overlap this process's own
    only_ingests(arguments)
    from pipeline.ingest.driver import ingest_paths

    rules = rules_from_option(arguments.rules)
    try:
        summary = ingest_paths(
            arguments.paths, arguments.db, rules=rules, format=arguments.format,
            game=arguments.variant, progress=not arguments.quiet,
            batch_size=arguments.batch_size, session_gap=arguments.session_gap,
            workers=arguments.workers,
        )
    except DatabaseError as error:
        raise CommandError(str(error), code=1) from error
    except IngestError as error:
        raise CommandError(str(error), code=1) from error
    print_summary(summary)
    return 0
