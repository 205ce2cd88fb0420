"""``ofc simulate``: deal and play hands with bots and write canonical JSON Lines."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pipeline.cli import CommandError
from pipeline.cli.common import describe_when_shown, process_count, rules_from_option
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import PRESET_NAMES, STANDARD

if TYPE_CHECKING:
    from rich.table import Table

    from pipeline.simulate.simulation import SimulationConfig
    from pipeline.simulate.writer import RunSummary

PROGRESS_FROM_HANDS = 5000
"""Runs of at least this many hands show a progress bar (unless --quiet)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` command."""
    parser = subparsers.add_parser(
        "simulate",
        help="deal and play hands with bots, write canonical JSON Lines",
    )
    describe_when_shown(parser, _describe)
    parser.add_argument("--hands", type=int, required=True, metavar="N", help="hands to play")
    parser.add_argument("--tables", type=int, default=1, metavar="T", help="tables (default 1)")
    parser.add_argument(
        "--players", type=int, default=3, choices=(2, 3, 4),
        help="players per table (default 3; 4 only in classic)",
    )
    parser.add_argument(
        "--variant", default="pineapple", metavar="VARIANT[,VARIANT...]",
        help="classic, pineapple or 2-7-pineapple; several (comma separated) rotate by table "
             "and session (default pineapple)",
    )
    parser.add_argument(
        "--rules", metavar="NAME|FILE",
        help=f"the house rules played: a preset ({', '.join(PRESET_NAMES)}) or a TOML rules "
             "file (default standard); records carry its name",
    )
    parser.add_argument(
        "--bots", metavar="BOT[,BOT...]",
        help="bot styles dealt to the player pool in turn (default and bots: see below)",
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument(
        "--start", metavar="ISO_TIME",
        help="when the first session starts (times without a zone are UTC)",
    )
    parser.add_argument(
        "--pool", type=int, metavar="N",
        help="named players in the pool (default: enough for every table, at least 8)",
    )
    parser.add_argument(
        "--jobs", type=int, default=1, metavar="J",
        help="processes to play in (default 1; 0 = one per CPU); the output is the same",
    )
    parser.add_argument(
        "--summary", action="store_true",
        help="print fouls, Fantasyland and points per bot at the end",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar or closing line")
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="output file (.jsonl or .jsonl.gz; '-' for standard output)")
    parser.set_defaults(handler=run)


def _describe(parser: argparse.ArgumentParser) -> None:
    """The help's parts that name the bots and the default start (imports the simulator)."""
    from pipeline.simulate.bots import BOTS, DEFAULT_BOTS
    from pipeline.simulate.sessions import DEFAULT_START

    parser.description = (
        "Play OFC hands with bots of distinct styles at one or more tables, over sessions "
        "spread across days, and write them as canonical JSON Lines (gzip when FILE ends "
        "in .gz). The same options and seed always give the same file, byte for byte, "
        "also with --jobs. Bots: " + "; ".join(
            f"{name}: {bot.description}" for name, bot in BOTS.items()
        ) + "."
    )
    for action in parser._actions:
        if action.dest == "bots":
            action.help = (f"bot styles dealt to the player pool in turn (default "
                           f"{','.join(DEFAULT_BOTS)}; bots: {', '.join(BOTS)})")
        elif action.dest == "start":
            action.help = (f"when the first session starts (default "
                           f"{DEFAULT_START:%Y-%m-%dT%H:%M:%SZ}; times without a zone are UTC)")


def parse_variants(text: str) -> tuple[Variant, ...]:
    """``pineapple,classic`` -> the variants, in order, without repeats."""
    variants = []
    for part in text.split(","):
        if not part.strip():
            continue
        try:
            variants.append(Variant.parse(part))
        except ValueError as error:
            raise CommandError(str(error), code=2) from error
    if not variants:
        raise CommandError("--variant needs at least one variant", code=2)
    return tuple(dict.fromkeys(variants))


def parse_start(text: str | None) -> datetime:
    """An ISO 8601 time (UTC when it has no zone), or the default start."""
    if text is None:
        from pipeline.simulate.sessions import DEFAULT_START

        return DEFAULT_START
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as error:
        raise CommandError(f"--start: not an ISO 8601 time: {text!r}", code=2) from error
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def build_config(arguments: argparse.Namespace) -> SimulationConfig:
    """The simulation the arguments ask for (raises CommandError when it cannot be run)."""
    from pipeline.simulate.bots import DEFAULT_BOTS
    from pipeline.simulate.simulation import SimulationConfig, SimulationError

    bots = (tuple(bot.strip() for bot in arguments.bots.split(",") if bot.strip())
            if arguments.bots is not None else DEFAULT_BOTS)
    config = SimulationConfig(
        hands=arguments.hands,
        tables=arguments.tables,
        players=arguments.players,
        variants=parse_variants(arguments.variant),
        rules=rules_from_option(arguments.rules) or STANDARD,
        bots=bots,
        seed=arguments.seed,
        start=parse_start(arguments.start),
        pool_size=arguments.pool,
    )
    try:
        config.check()
    except SimulationError as error:
        raise CommandError(str(error), code=2) from error
    return config


def summary_table(summary: RunSummary) -> Table:
    """Per-bot figures of a run as a rich table."""
    from rich.table import Table

    from pipeline.simulate.bots import BOTS

    table = Table(title=f"{summary.hands:,} hands, {summary.sessions} sessions, "
                        f"{summary.players} players")
    table.caption = ("FL entries: hands that earned Fantasyland; in FL: hands played in it; "
                     "stays: of those, hands that stayed; royalties and points per hand")
    for heading in ("bot", "players", "boards", "fouls", "FL entries", "in FL", "stays",
                    "royalties", "points"):
        table.add_column(heading, justify="left" if heading == "bot" else "right", no_wrap=True)
    for name in sorted(summary.stats, key=lambda bot: list(BOTS).index(bot) if bot in BOTS else 99):
        stats = summary.stats[name]
        table.add_row(
            name, str(len(stats.players)), f"{stats.hands:,}", f"{stats.foul_rate:.1%}",
            f"{stats.fantasyland_entry_rate:.1%}",
            f"{stats.fantasyland_hands / stats.hands:.1%}" if stats.hands else "-",
            f"{stats.fantasyland_stay_rate:.1%}", f"{stats.royalties_per_hand:.2f}",
            f"{stats.points_per_hand:+.2f}",
        )
    return table


def run(arguments: argparse.Namespace) -> int:
    """Run the simulation and write the file."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from pipeline.simulate.simulation import SimulationError
    from pipeline.simulate.writer import STANDARD_OUTPUT, write_simulation

    config = build_config(arguments)
    jobs = process_count(arguments.jobs, "--jobs") if arguments.jobs > 0 else (os.cpu_count() or 1)
    errors = Console(stderr=True)
    show_progress = not arguments.quiet and config.hands >= PROGRESS_FROM_HANDS
    try:
        if show_progress:
            with Progress(
                TextColumn("simulating"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"), TimeRemainingColumn(),
                console=errors, transient=True,
            ) as progress:
                task = progress.add_task("hands", total=config.hands, rate="")

                def advance(hands: int) -> None:
                    """Move the bar by a session's hands and show the rate so far."""
                    progress.advance(task, hands)
                    elapsed = progress.tasks[task].elapsed or 0
                    done = progress.tasks[task].completed
                    if elapsed > 0:
                        progress.update(task, rate=f"{done / elapsed:,.0f} hands/s")

                summary = write_simulation(config, arguments.out, jobs, advance)
        else:
            summary = write_simulation(config, arguments.out, jobs)
    except SimulationError as error:
        raise CommandError(str(error), code=2) from error
    except BrokenPipeError:
        raise  # --out - read by a program that stopped early (| head): not an error
    except OSError as error:
        raise CommandError(f"cannot write {arguments.out}: {error.strerror or error}") from error
    if arguments.summary:  # beside the hands' lines when they went to standard output
        shown = sys.stderr if arguments.out == STANDARD_OUTPUT else sys.stdout
        width = None if shown.isatty() else 120
        Console(file=shown, width=width).print(summary_table(summary))
    if not arguments.quiet:
        errors.print(
            f"wrote {summary.hands:,} hands ({summary.sessions} sessions, {summary.players} "
            f"players) to {'standard output' if arguments.out == STANDARD_OUTPUT else summary.path} "
            f"in {summary.seconds:.1f} s "
            f"({summary.hands_per_second:,.0f} hands/s)",
            highlight=False, soft_wrap=True,
        )
    return 0
