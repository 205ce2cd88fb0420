"""Helpers shared by the command modules: resolving ``--rules``, standard options, and making
untrusted text (player names, ids, reasons quoting files) safe for a terminal or a spreadsheet.

Light on purpose (every command module imports it to register its options): rich and the
rules-file reader are imported by the functions that use them."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pipeline.cli import CommandError
from pipeline.ingest.defaults import DEFAULT_SESSION_GAP_MINUTES, MAX_BATCH_SIZE
from pipeline.rules.ruleset import PRESET_NAMES, RulesError, RuleSet

if TYPE_CHECKING:
    from rich.text import Text

RULES_HELP = (
    f"a rules preset ({', '.join(PRESET_NAMES)}) or a TOML rules file; "
    "overrides the rules named in each record"
)


MAX_SESSION_GAP_MINUTES = 7 * 24 * 60
"""Longest --session-gap (a week, in minutes)."""


def add_session_gap_option(parser: argparse.ArgumentParser) -> None:
    """``--session-gap MINUTES`` of the commands that store hands (ingest, watch, lake build);
    check it with :func:`check_session_gap`."""
    parser.add_argument(
        "--session-gap", type=float, default=DEFAULT_SESSION_GAP_MINUTES, metavar="MINUTES",
        help="a break this long starts a new session (default: %(default)g minutes)",
    )


def check_session_gap(minutes: float) -> None:
    """Refuse a ``--session-gap`` that is not above 0 and at most a week (exit status 2)."""
    if not (math.isfinite(minutes) and 0 < minutes <= MAX_SESSION_GAP_MINUTES):
        raise CommandError(
            f"--session-gap must be a number of minutes from above 0 to "
            f"{MAX_SESSION_GAP_MINUTES:,}, got {minutes}", code=2)


MAX_PROCESSES_PER_CPU = 4
"""Most processes a ``--jobs`` or ``--workers`` option starts per usable CPU: more only take
turns on the CPUs, and each holds its own memory (``ofc score --jobs 500`` started 500)."""


def process_count(requested: int | None, option: str) -> int | None:
    """A process count given on the command line, at most :data:`MAX_PROCESSES_PER_CPU` per
    CPU this process may run on; said on stderr when it is cut. None (the command's own
    default) stays None; fewer than 1 is refused (a CommandError, exit status 2).

    >>> process_count(None, "--jobs") is None, process_count(1, "--jobs")
    (True, 1)
    """
    if requested is None:
        return None
    if requested < 1:
        raise CommandError(f"{option} must be 1 or more, got {requested}", code=2)
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    most = MAX_PROCESSES_PER_CPU * max(1, cpus)
    if requested <= most:
        return requested
    print(f"ofc: {option} {requested:,} is more than {MAX_PROCESSES_PER_CPU} processes per CPU "
          f"({cpus} here): using {most}", file=sys.stderr)
    return most


def _whole_number_at_least(text: str, smallest: int) -> int:
    """``text`` as a whole number of at least ``smallest``, or argparse's type error."""
    try:
        value = int(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from error
    if value < smallest:
        raise argparse.ArgumentTypeError(f"must be at least {smallest}: {text!r}")
    return value


def positive_whole_number(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    return _whole_number_at_least(text, 1)


def batch_size(text: str) -> int:
    """An argparse type for ``--batch-size``: a whole number from 1 to
    :data:`~pipeline.ingest.defaults.MAX_BATCH_SIZE` (a batch is held in memory).

    >>> batch_size("20000")
    20000
    """
    value = _whole_number_at_least(text, 1)
    if value > MAX_BATCH_SIZE:
        raise argparse.ArgumentTypeError(
            f"must be at most {MAX_BATCH_SIZE:,} (a batch is held in memory): {text!r}")
    return value


def whole_number(text: str) -> int:
    """An argparse type: a whole number of at least 0."""
    return _whole_number_at_least(text, 0)


def only_ingests(arguments: argparse.Namespace) -> None:
    """For a command that only ingests, run as the ``ofc`` command's own process
    (``arguments.own_process``): pyarrow is told pandas is absent, so the process never imports
    it (about 0.2 s and 50 MB; :mod:`pipeline.ingest.no_pandas`). Called from a test or a
    program, which may hand pandas objects to pyarrow later, it does nothing."""
    if getattr(arguments, "own_process", False):
        from pipeline.ingest.no_pandas import hide_pandas_from_pyarrow

        hide_pandas_from_pyarrow()


def add_rules_option(parser: argparse.ArgumentParser, help_text: str = RULES_HELP) -> None:
    """Add ``--rules NAME|FILE`` to a command (``help_text`` says what the rules apply to)."""
    parser.add_argument("--rules", metavar="NAME|FILE", help=help_text)


def rules_from_option(value: str | None) -> RuleSet | None:
    """Resolve a ``--rules`` value, turning rules problems into a CommandError (exit 2)."""
    if value is None:
        return None
    from pipeline.records.rules_file import resolve_rules

    try:
        return resolve_rules(value)
    except RulesError as error:
        raise CommandError(str(error), code=2) from error


def describe_when_shown(
    parser: argparse.ArgumentParser, describe: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Let ``describe`` fill in parts of ``parser``'s help (its description, an option's help)
    that need a heavy import (numpy, DuckDB) when the help is first printed: a run of the
    command, or ``ofc --help``, does not pay for that import."""
    format_help = parser.format_help

    def formatted() -> str:
        parser.format_help = format_help  # type: ignore[method-assign]
        describe(parser)
        return format_help()

    parser.format_help = formatted  # type: ignore[method-assign]


# --- untrusted text on a terminal or in a spreadsheet -------------------------------------------

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal may act on: C0 and C1 controls (ESC starts colour, title and cursor
sequences), DEL, and the bidirectional overrides that make text read differently than it is."""

_LINE_BREAKS = re.compile("[\t\n]")

_SPREADSHEET_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP's CSV injection advice)."""


def terminal_text(value: object) -> str:
    """Text safe to print on a terminal: control characters removed, tabs and line breaks made
    spaces (``"\x1b[31mkofi"`` → ``"[31mkofi"``)."""
    return _CONTROL.sub("", _LINE_BREAKS.sub(" ", str(value)))


def terminal_cell(value: object) -> Text:
    """A table cell for rich: :func:`terminal_text`, never read as rich markup (a name like
    ``[bold]`` or ``[/]`` is shown as it is instead of styling, or breaking, the table)."""
    from rich.text import Text

    return Text(terminal_text(value))


def spreadsheet_cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet will not run: text starting with ``= + - @`` (or a tab or
    carriage return) gets a leading ``'``; control characters other than tab and line breaks are
    removed. Numbers are left as they are (``-3`` stays a number)."""
    if not isinstance(value, str):
        return value
    text = _CONTROL.sub("", value.replace("\r\n", "\n")) if _CONTROL.search(value) else value
    if value.startswith(_SPREADSHEET_TRIGGERS):
        return "'" + text
    return text
