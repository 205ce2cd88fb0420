"""``ofc score``: re-score canonical JSON Lines records, one output line per input line."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import os
import sys
from pathlib import Path

from pipeline.cli import CommandError
from pipeline.cli.common import add_rules_option, process_count, rules_from_option


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``score`` command."""
    parser = subparsers.add_parser(
        "score",
        help="re-score canonical hand records (JSON Lines) and print one result per line",
        description=(
            "Read canonical hand records (docs/hand-format.md), one per line, and print one JSON "
            "object per input line, in order: each player's foul, royalties per row, points, "
            "Fantasyland next hand and card count, and row classes. An invalid line prints "
            '{"line": N, "hand_id": ..., "error": "..."} in its place; the exit status is then 2. '
            "Lines are scored in blocks of 1024 by the batch rules core, with worker "
            "processes beside this one for a larger input (a file or a pipe: memory stays "
            "bounded), so a pipe's results come a block at a time; lines typed at a terminal "
            "are scored one by one."
        ),
    )
    parser.add_argument("file", nargs="?", default="-", help="JSON Lines file (plain or .gz), or - for stdin")
    add_rules_option(parser)
    parser.add_argument(
        "--jobs", type=int, metavar="J",
        help="processes that score an input of more than one block of lines: this one and "
             "J-1 workers (default: one per idle CPU, by the tasks running now, at most every CPU; "
             "1 = no workers)",
    )
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    """Score every line of the input; exit 2 when any line was invalid."""
    # numpy starts its BLAS thread pool on import (a few hundredths of a second at every start);
    # scoring does no linear algebra
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # Importing builds many objects, none of them garbage: the cyclic collector's passes over
    # them are wasted. They are frozen (left out of every collection: also in the forked
    # workers, which then do not copy their pages to update the collector's counts) while this
    # command runs, and again at exit, before the interpreter's last collection (about 15 of
    # the 25 ms it takes to end).
    collecting, frozen_before = gc.isenabled(), gc.get_freeze_count()
    gc.disable()
    try:
        from pipeline.formats.source import (
            FormatError,
            keep_freed_memory,
            read_raw_lines,
            read_stream_raw,
        )
        from pipeline.ingest.score_lines import BLOCK_LINES, score_blocks
        from pipeline.records.rules_file import RulesResolver
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
    keep_freed_memory()  # blocks' memory reused, not faulted in again (0.05-0.07 s of 0.45)
    atexit.unregister(gc.freeze)  # once, however often run() is called in one process
    atexit.register(gc.freeze)
    try:
        arguments.jobs = process_count(arguments.jobs, "--jobs")
        folders = ([Path.cwd()] if arguments.file == "-"
                   else [Path(arguments.file).parent, Path.cwd()])
        resolver = RulesResolver(override=rules_from_option(arguments.rules),
                                 search_directories=folders)
        typed = arguments.file == "-" and sys.stdin.isatty()  # a person waits for each line
        lines = (read_stream_raw(sys.stdin.buffer) if arguments.file == "-"
                 else read_raw_lines(arguments.file))
        invalid = 0
        output = sys.stdout
        try:
            with contextlib.closing(score_blocks(
                    lines, resolver, 1 if typed else arguments.jobs,
                    block_lines=1 if typed else BLOCK_LINES)) as blocks:
                for block in blocks:
                    output.write(block.text)
                    invalid += block.invalid
        except FormatError as error:
            raise CommandError(str(error), code=1) from error
    finally:
        if not frozen_before:  # a caller's own frozen objects stay frozen
            gc.unfreeze()
    if invalid:
        print(f"ofc score: {invalid} invalid line(s)", file=sys.stderr)
        return 2
    return 0
