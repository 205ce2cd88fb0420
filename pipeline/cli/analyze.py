"""``ofc analyze``: grade stored placement decisions by Monte Carlo rollouts (EV loss per play)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cli import CommandError
from pipeline.cli.common import (
    add_rules_option,
    describe_when_shown,
    process_count,
    rules_from_option,
    terminal_cell,
)
from pipeline.cli.database import add_database_option
from pipeline.rules.game import Variant

if TYPE_CHECKING:
    from pipeline.rules.ruleset import RuleSet

# Written out so that registering the command does not import the grader (numpy);
# tests/cli/test_startup.py checks that they agree with their source.
DEFAULT_EXACT_LIMIT = 40_000
"""pipeline.analysis.exact.DEFAULT_EXACT_LIMIT"""
DEFAULT_POLICY = "learned"
"""pipeline.analysis.rollout.DEFAULT_POLICY"""
DEFAULT_FANTASYLAND_VALUE = 10.0
"""pipeline.analysis.rollout.DEFAULT_FANTASYLAND_VALUE"""
DEFAULT_ROLLOUTS = 600
DEFAULT_CONTENDERS = 3
"""pipeline.analysis.grade.GradeSettings.contenders"""
DEFAULT_EVALUATION_SE = 0.45
"""pipeline.analysis.grade.GradeSettings.evaluation_se"""
DEFAULT_RACE_LIMIT = 0
"""pipeline.analysis.grade.GradeSettings.race_limit"""
DEFAULT_SECOND_POLICY = "solid"
"""pipeline.analysis.grade.SECOND_POLICY"""
DEFAULT_SECOND_Z = 3.0
"""pipeline.analysis.grade.GradeSettings.second_z"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``analyze`` command."""
    parser = subparsers.add_parser(
        "analyze",
        help="grade every stored placement decision: EV loss by Monte Carlo rollouts",
        description=(
            "Grade the placement decisions of stored hands that have streets. At each street "
            "the player saw their own board and discards and the opponents' placed cards; every "
            "legal alternative (symmetric ones merged) is played out over the unseen cards, all "
            "seats finishing with a simulator bot (--policy) and Fantasyland opponents with the "
            "exact setter, and scored by the rules core. The best play is picked on one set of "
            "rollouts and the EV loss measured on an independent set (--evaluation), so the "
            "loss is not inflated by the pick; late streets with few possible deals are "
            "enumerated instead (exact). A decision is a mistake only when the loss is clearly "
            "beyond the noise and at least --min-loss. Fantasyland hands are compared with the "
            "exact solver. Results go to the decision_grades, decision_alternatives and "
            "fantasyland_grades tables; running again with more --rollouts (same --seed, "
            "--policy, --fantasyland-value) refines them. See docs/grading.md."
        ),
    )
    add_database_option(parser)
    parser.add_argument("--player", metavar="P", help="grade only this player's decisions")
    parser.add_argument("--hands", type=int, metavar="N",
                        help="only the N most recent hands with streets (of --player)")
    parser.add_argument("--variant", choices=[variant.value for variant in Variant],
                        help="only hands of this variant")
    parser.add_argument(
        "--rollouts", type=int, default=DEFAULT_ROLLOUTS, metavar="K",
        help="samples per alternative (alternatives clearly worse after --screen samples stop "
             "early; default: %(default)d)",
    )
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), metavar="J",
                        help="worker processes (default: %(default)d)")
    parser.add_argument("--seed", type=int, default=1, metavar="S",
                        help="rollout seed; same seed, same results (default: %(default)d)")
    parser.add_argument("--policy", type=bot_name, default=DEFAULT_POLICY, metavar="BOT",
                        help="the bot that finishes every seat's board (default: %(default)s)")
    parser.add_argument(
        "--fantasyland-value", type=float, default=DEFAULT_FANTASYLAND_VALUE, metavar="X",
        help="points a board earning Fantasyland is worth on top of its result; also the stay "
             "value for Fantasyland hands (default: %(default)g)",
    )
    parser.add_argument(
        "--evaluation", type=int, default=None, metavar="K",
        help="independent samples of the best play and the play made, behind the EV loss "
             "(default: 5/3 of --rollouts, 1000 for 600)",
    )
    parser.add_argument(
        "--evaluation-se", type=float, default=DEFAULT_EVALUATION_SE, metavar="P",
        help="draw more evaluation samples (up to 4× --evaluation) where the loss is noisy, for a "
             "standard error of about P points; how many is read off the selection samples, so "
             "the loss stays unbiased (0: always --evaluation; default: %(default)g)",
    )
    parser.add_argument(
        "--contenders", type=int, default=DEFAULT_CONTENDERS, metavar="N",
        help="after --rollouts, the N plays closest to the best one (itself included) still "
             "within reach of it race on, the count doubling up to --race-to; 0 or 1: no race "
             "(default: %(default)d)",
    )
    parser.add_argument(
        "--race-to", type=int, default=None, metavar="K",
        help="the most selection samples of a play in contention (default: 4× --rollouts)",
    )
    parser.add_argument(
        "--race-limit", type=int, default=DEFAULT_RACE_LIMIT, metavar="N",
        help="race only in decisions of at most N plays (0: every decision, the default; the "
             "opening has about 200 plays: 60 leaves it out, for about a fifth less CPU and "
             "fewer agreements with the reference there)",
    )
    parser.add_argument(
        "--exact-limit", type=int, default=DEFAULT_EXACT_LIMIT, metavar="D",
        help="enumerate every deal of the unseen cards instead of sampling when there are at "
             "most D (late streets; 0: never; default: %(default)d)",
    )
    parser.add_argument(
        "--min-loss", type=float, default=0.25, metavar="P",
        help="the smallest loss in points called a mistake (default: %(default)g)",
    )
    parser.add_argument(
        "--screen", type=int, default=16, metavar="N",
        help="samples before clearly worse alternatives stop (doubling up to --rollouts); "
             "0 gives every alternative --rollouts samples (default: %(default)d)",
    )
    parser.add_argument(
        "--second-policy", type=bot_name, default=DEFAULT_SECOND_POLICY, metavar="BOT",
        help="the second continuation: every mistake is measured again with this bot finishing "
             "every board; a mistake it does not confirm (the play made within --min-loss of the "
             "best play there) is graded uncertain, never a mistake (default: %(default)s)",
    )
    parser.add_argument("--no-second-look", action="store_true",
                        help="no second look (no verdict is uncertain; faster)")
    parser.add_argument(
        "--second-z", type=float, default=DEFAULT_SECOND_Z, metavar="Z",
        help="the second look draws a quarter, half, then all of its samples and stops once its "
             "loss is Z standard errors from --min-loss; 0 always draws them all "
             "(default: %(default)g)",
    )
    parser.add_argument(
        "--prune", type=int, default=0, metavar="K",
        help="in decisions of more than 60 plays (the opening), only the play made, the "
             "policy's own play and the K plays it scores highest go on past the first screen "
             "(every play still gets the screen's samples; 0: no pruning, the default)",
    )
    parser.add_argument(
        "--outdated", action="store_true",
        help="regrade only the hands holding an outdated grade (made by an older grader or "
             "another rollout policy; the Decision grading page counts them)",
    )
    parser.add_argument(
        "--fantasyland-only", action="store_true",
        help="only compare the Fantasyland hands with the exact solver (fast; with neither "
             "--player nor --hands: every Fantasyland hand in the database)",
    )
    add_rules_option(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run)
    describe_when_shown(parser, _describe)


def bot_name(text: str) -> str:
    """A ``--policy`` value: one of the simulator's bots (checked here, so registering the
    option does not import the simulator)."""
    from pipeline.simulate.bots import BOTS

    if text not in BOTS:
        choices = ", ".join(repr(name) for name in sorted(BOTS))
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {choices})")
    return text


def _describe(parser: argparse.ArgumentParser) -> None:
    """The help lists the bots ``--policy`` takes, as ``{chaser,random,...}``."""
    from pipeline.simulate.bots import BOTS

    for action in parser._actions:
        if action.dest == "policy":
            action.metavar = "{" + ",".join(sorted(BOTS)) + "}"


def run(arguments: argparse.Namespace) -> int:
    """Grade, then print what was graded and each player's totals."""
    from pipeline.analysis.grade import GradeSettings
    from pipeline.analysis.progress import counted_progress
    from pipeline.analysis.runner import analyze_database

    if not Path(arguments.db).is_file():
        raise CommandError(f"no database at {arguments.db} (create one with: ofc ingest PATH "
                           f"--db {arguments.db})")
    if arguments.hands is not None and not 1 <= arguments.hands < 2**63:
        raise CommandError("--hands must be a whole number from 1 (a database holds fewer than "
                           f"2**63 hands), got {arguments.hands}", code=2)
    arguments.jobs = process_count(arguments.jobs, "--jobs")
    settings = GradeSettings(
        rollouts=arguments.rollouts, screen=arguments.screen, policy=arguments.policy,
        fantasyland_value=arguments.fantasyland_value, seed=arguments.seed,
        evaluation=arguments.evaluation, exact_limit=arguments.exact_limit,
        min_loss=arguments.min_loss, contenders=arguments.contenders, race_to=arguments.race_to,
        evaluation_se=arguments.evaluation_se, race_limit=arguments.race_limit,
        second_policy=None if arguments.no_second_look else arguments.second_policy,
        second_z=arguments.second_z, prune=arguments.prune,
    )
    try:
        settings.check()
    except ValueError as error:
        raise CommandError(str(error), code=2) from error
    rules = rules_from_option(arguments.rules)
    _check_writable(arguments.db)
    if not arguments.fantasyland_only:
        _prepare_policy(settings.policy, rules, arguments.quiet)
    progress, update = counted_progress("analyze", "decisions", not arguments.quiet)
    try:
        summary = analyze_database(
            arguments.db, player=arguments.player, hands=arguments.hands, settings=settings,
            jobs=arguments.jobs, rules=rules, on_progress=update,
            decisions=not arguments.fantasyland_only, variant=arguments.variant,
            outdated=arguments.outdated,
        )
    finally:
        if progress is not None:
            progress.stop()
    _print_summary(arguments, summary)
    return 0


def _prepare_policy(policy: str, rules: RuleSet | None, quiet: bool) -> None:
    """Compile (first use after an install, about 15 s each) or load the rollout policy's
    compiled play and the compiled Fantasyland setter before the progress bar starts, under a
    spinner, so that the bar's rate is the grading's; says so when it took a while."""
    from rich.console import Console

    from pipeline.analysis.rollout import prepare_policy
    from pipeline.rules.ruleset import STANDARD

    console = Console(stderr=True)
    started = time.perf_counter()
    with console.status(f"preparing the rollout policy {policy!r} and the Fantasyland setter "
                        "(compiled once after an install, about 30 s; then loaded)",
                        spinner="dots"):
        prepare_policy(policy, rules or STANDARD)
    seconds = time.perf_counter() - started
    if seconds > 3 and not quiet:
        console.print(f"compiled the rollout policy {policy!r} and the Fantasyland setter in "
                      f"{seconds:.0f} s (once: later runs load them)")


def _check_writable(database: str) -> None:
    """Before any grading: the grades must be storable (a read-only place used to crash only
    once the work was done, losing it)."""
    from pipeline.store.faults import NotWritable, check_writable

    try:
        check_writable(database)
    except NotWritable as error:
        raise CommandError(str(error)) from error


def _scope_line(arguments: argparse.Namespace, summary) -> str:  # noqa: ANN001
    """Which hands this run graded: the selection, the dates and the variants."""
    who = f" of {arguments.player}" if arguments.player else ""
    if arguments.variant:
        who += f" in {arguments.variant}"
    if arguments.hands is not None:
        chosen = f"the {arguments.hands:,} most recent hands with streets{who}"
    else:
        chosen = f"every hand with streets{who}"
    dates = ""
    if summary.oldest and summary.newest:
        dates = f", {summary.oldest} to {summary.newest} UTC"
    variants = ", ".join(f"{name} {count:,}" for name, count in sorted(summary.variants.items()))
    return (f"scope: {chosen}: {summary.hands:,} hands{dates}"
            + (f"; hands by variant: {variants}" if variants else ""))


def _figure(value: tuple[float, float] | None) -> str:
    if value is None:
        return "–"
    mean, error = value
    return f"{mean:.2f}" if error != error else f"{mean:.2f} ± {error:.2f}"


def _print_summary(arguments: argparse.Namespace, summary) -> None:  # noqa: ANN001
    """One figure per player and variant for this run, with its scope (never a second,
    differently scoped figure: stored grades of earlier runs are in the report and the dashboard)."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 160)
    rate = summary.decisions_per_second
    exact = sum(totals.exact for totals in summary.players.values())
    console.print(
        f"graded {summary.decisions:,} decisions ({exact:,} exact) in {summary.hands:,} hands "
        f"({summary.forced:,} streets had a single distinct placement) in {summary.seconds:.1f} s "
        f"({rate:.1f} decisions/s, {summary.samples:,} new rollouts, {arguments.jobs} jobs)"
    )
    console.print(_scope_line(arguments, summary))
    for reason, count in summary.skipped.items():
        console.print(terminal_cell(f"skipped {count:,} hands: {reason}"))
    if not summary.players:
        console.print("nothing to grade (no hands with streets for this selection)")
        return
    table = Table(title="EV loss of this run, by player and variant (points, mean ± standard error)")
    for column in ("player", "variant", "hands", "decisions", "mistakes", "uncertain",
                   "EV loss / decision",
                   "EV loss / hand", "behind the bot / decision", "FL hands",
                   "FL given up / hand"):
        table.add_column(column)
    for (name, variant), totals in sorted(summary.players.items()):
        table.add_row(
            terminal_cell(name), variant, f"{len(totals.hand_losses):,}", f"{totals.decisions:,}",
            f"{totals.mistakes:,}", f"{totals.uncertain:,}", _figure(totals.loss_per_decision),
            _figure(totals.loss_per_hand), _figure(totals.gap_per_decision),
            f"{totals.fantasyland_hands:,}",
            f"{totals.fantasyland_given_up / totals.fantasyland_hands:.2f}"
            if totals.fantasyland_hands else "–",
        )
    console.print(table)
    console.print(
        "EV loss: the best play is picked on one set of rollouts and the loss measured on an "
        "independent set (unbiased; it can be below zero). Per hand: over the hands with graded "
        "decisions. Behind the bot: what the rollout policy's own play would have kept in "
        "the same spots (its own plays: 0; it leaves out what a lookahead finds beyond that "
        "bot, which every player pays). Uncertain: a mistake by the rollout policy that the "
        "second continuation does not confirm (not counted as a mistake). Grades of every run: "
        "`ofc report`, dashboard page Decision grading."
    )
