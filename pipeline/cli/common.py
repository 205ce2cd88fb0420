"""Helpers shared by the command modules: resolving ``--rules``, standard options."""

from __future__ import annotations

import argparse

from pipeline.cli import CommandError
from pipeline.records.rules_file import resolve_rules
from pipeline.rules.ruleset import PRESET_NAMES, RulesError, RuleSet

RULES_HELP = (
    f"a rules preset ({', '.join(PRESET_NAMES)}) or a TOML rules file; "
    "overrides the rules named in each record"
)


def add_rules_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--rules NAME|FILE`` to a command."""
    parser.add_argument("--rules", metavar="NAME|FILE", help=RULES_HELP)


def rules_from_option(value: str | None) -> RuleSet | None:
    """Resolve a ``--rules`` value, turning rules problems into a CommandError (exit 2)."""
    if value is None:
        return None
    try:
        return resolve_rules(value)
    except RulesError as error:
        raise CommandError(str(error), code=2) from error
