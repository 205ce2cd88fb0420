"""``ofc score``: re-score canonical JSON Lines records, one output line per input line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from pipeline.cli import CommandError
from pipeline.cli.common import add_rules_option, rules_from_option
from pipeline.formats.source import (
    FormatError,
    SourceLine,
    json_error_reason,
    load_json,
    read_lines,
    read_stream_lines,
)
from pipeline.ingest.evaluate import score_output, score_record
from pipeline.records.rules_file import RulesResolver
from pipeline.records.validate import InvalidHand, parse_hand
from pipeline.rules.ruleset import RulesError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``score`` command."""
    parser = subparsers.add_parser(
        "score",
        help="re-score canonical hand records (JSON Lines) and print one result per line",
        description=(
            "Read canonical hand records (docs/hand-format.md), one per line, and print one JSON "
            "object per input line, in order: each player's foul, royalties per row, points, "
            "Fantasyland next hand and card count, and row classes. An invalid line prints "
            '{"line": N, "hand_id": ..., "error": "..."} in its place; the exit status is then 2.'
        ),
    )
    parser.add_argument("file", nargs="?", default="-", help="JSON Lines file (plain or .gz), or - for stdin")
    add_rules_option(parser)
    parser.set_defaults(handler=run)


def score_line(text: str, resolver: RulesResolver) -> tuple[dict, bool]:
    """Score one input line; returns (output object, ok)."""
    hand_id = None
    try:
        mapping = load_json(text)
    except ValueError as error:  # JSONDecodeError, or NaN / Infinity
        return {"hand_id": None, "error": json_error_reason(error)}, False
    if isinstance(mapping, dict):
        hand_id = mapping.get("hand_id")
    try:
        if not isinstance(mapping, dict):
            raise InvalidHand(f"expected a JSON object, got {type(mapping).__name__}")
        hand = parse_hand(mapping)
        return score_output(score_record(hand, resolver(hand.rules))), True
    except (InvalidHand, RulesError) as error:
        return {"hand_id": hand_id, "error": str(error)}, False


def _lines(path: str) -> Iterator[SourceLine]:
    if path == "-":
        return read_stream_lines(sys.stdin.buffer)
    return read_lines(path)


def run(arguments: argparse.Namespace) -> int:
    """Score every line of the input; exit 2 when any line was invalid."""
    folders = [Path.cwd()] if arguments.file == "-" else [Path(arguments.file).parent, Path.cwd()]
    resolver = RulesResolver(override=rules_from_option(arguments.rules), search_directories=folders)
    invalid = 0
    output = sys.stdout
    try:
        for line in _lines(arguments.file):
            if line.text is None:
                result, ok = {"hand_id": None, "error": line.error}, False
            elif not line.text.strip():
                result, ok = {"hand_id": None, "error": "empty line"}, False
            else:
                result, ok = score_line(line.text, resolver)
            if not ok:
                invalid += 1
                result = {"line": line.number, **result}
            output.write(json.dumps(result, separators=(", ", ": "), ensure_ascii=False) + "\n")
    except FormatError as error:
        raise CommandError(str(error), code=1) from error
    if invalid:
        print(f"ofc score: {invalid} invalid line(s)", file=sys.stderr)
        return 2
    return 0
