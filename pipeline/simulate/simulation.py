"""Running a simulation: plan the sessions, play them (in parallel when asked), settle, encode.

:func:`simulate` yields one :class:`SessionOutput` per planned session, in plan order, whatever
the number of processes: each session is played from its own seed, so the output is the same
byte for byte for a given configuration. Points come from the batch rules core
(:func:`pipeline.rules.batch.settle_hands`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pipeline.formats.source import forked_pool
from pipeline.records.validate import STARTED_AT_YEARS
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD, RuleSet
from pipeline.simulate.bots import BOTS, DEFAULT_BOTS
from pipeline.simulate.dealer import fantasyland_deal_sizes, play_sessions
from pipeline.simulate.players import default_pool_size, player_pool
from pipeline.simulate.sessions import DEFAULT_START, SessionPlan, plan_sessions
from pipeline.solver.fantasyland import DEFAULT_STAY_VALUE

MAX_TABLES = 100_000
"""Most tables a simulation plays at once (each is a session of its own, with its own seats)."""
MAX_POOL = 1_000_000
"""Most named players in a simulation's pool (they are built before the first hand)."""


class SimulationError(ValueError):
    """A simulation that cannot be run as configured; the message says why."""


@dataclass(frozen=True, slots=True)
class SimulationConfig:
    """Everything that decides a simulation's output."""

    hands: int
    tables: int = 1
    players: int = 3
    variants: tuple[Variant, ...] = (Variant.PINEAPPLE,)
    rules: RuleSet = STANDARD
    bots: tuple[str, ...] = DEFAULT_BOTS
    seed: int = 1
    start: datetime = DEFAULT_START
    pool_size: int | None = None
    stay_value: float = DEFAULT_STAY_VALUE

    def check(self) -> None:
        """Raise :class:`SimulationError` when the configuration cannot be played."""
        if self.hands < 1:
            raise SimulationError(f"--hands must be at least 1, got {self.hands}")
        if self.tables < 1:
            raise SimulationError(f"--tables must be at least 1, got {self.tables}")
        first_year, last_year = STARTED_AT_YEARS
        if not first_year <= self.start.year <= last_year:
            raise SimulationError(f"--start must fall in the years {first_year}-{last_year} (when a "
                                  f"hand may start), got {self.start.isoformat()}")
        if self.tables > self.hands:
            raise SimulationError(f"--tables {self.tables:,} is more tables than hands "
                                  f"({self.hands:,}): every table plays at least one hand")
        if self.tables > MAX_TABLES:
            raise SimulationError(f"--tables must be at most {MAX_TABLES:,}, got {self.tables:,}")
        if self.pool_size is not None and self.pool_size > MAX_POOL:
            raise SimulationError(f"--pool must be at most {MAX_POOL:,} players, got "
                                  f"{self.pool_size:,}")
        if not self.variants:
            raise SimulationError("at least one variant is needed")
        unknown = [bot for bot in self.bots if bot not in BOTS]
        if unknown or not self.bots:
            raise SimulationError(
                f"unknown bot {unknown[0]!r} (bots: {', '.join(BOTS)})" if unknown
                else "at least one bot is needed"
            )
        if self.pool_size is not None and self.pool_size < self.players:
            raise SimulationError(
                f"a pool of {self.pool_size} players cannot fill a table of {self.players}"
            )
        for variant in self.variants:
            if not variant.min_players <= self.players <= variant.max_players:
                raise SimulationError(
                    f"{variant.value} is played by {variant.min_players}-{variant.max_players} "
                    f"players, not {self.players}"
                )
            sizes = fantasyland_deal_sizes(variant, self.rules)
            allowed = variant.fantasyland_deal_sizes
            if not sizes <= allowed:
                raise SimulationError(
                    f"rules {self.rules.name!r} deal {sorted(sizes - allowed)[0]} Fantasyland "
                    f"cards in {variant.value}; a hand record allows {sorted(allowed)}"
                )
            per_player = max([sum(shape.dealt for shape in variant.streets), *sizes])
            if per_player * self.players > 52:
                raise SimulationError(
                    f"{self.players} players can need {per_player} cards each in "
                    f"{variant.value} under rules {self.rules.name!r}: more than one deck"
                )
        for name in ("top_pairs", "top_trips", "middle", "bottom", "lowball_middle"):
            if min(getattr(self.rules.royalties, name)) < 0:
                raise SimulationError(
                    f"rules {self.rules.name!r} have a negative royalty; the Fantasyland "
                    "setter needs royalties of zero or more"
                )

    def plan(self) -> list[SessionPlan]:
        """The sessions of this run, in output order."""
        self.check()
        pool = player_pool(
            self.pool_size or default_pool_size(self.tables, self.players), self.bots
        )
        return plan_sessions(
            self.hands, self.tables, self.players, self.variants, pool, self.start, self.seed
        )


@dataclass(slots=True)
class BotStats:
    """What one bot style did over a run (all its players together)."""

    players: set[str] = field(default_factory=set)
    hands: int = 0
    fouls: int = 0
    fantasyland_entries: int = 0
    fantasyland_hands: int = 0
    fantasyland_stays: int = 0
    royalties: int = 0
    points: int = 0

    def merge(self, other: BotStats) -> None:
        """Add another tally to this one."""
        self.players |= other.players
        self.hands += other.hands
        self.fouls += other.fouls
        self.fantasyland_entries += other.fantasyland_entries
        self.fantasyland_hands += other.fantasyland_hands
        self.fantasyland_stays += other.fantasyland_stays
        self.royalties += other.royalties
        self.points += other.points

    @property
    def foul_rate(self) -> float:
        """Fouled boards per board played."""
        return self.fouls / self.hands if self.hands else 0.0

    @property
    def fantasyland_entry_rate(self) -> float:
        """Fantasyland entries per hand played (every hand counts, Fantasyland ones too)."""
        return self.fantasyland_entries / self.hands if self.hands else 0.0

    @property
    def fantasyland_stay_rate(self) -> float:
        """Stays per Fantasyland hand."""
        return self.fantasyland_stays / self.fantasyland_hands if self.fantasyland_hands else 0.0

    @property
    def points_per_hand(self) -> float:
        """Average points per hand."""
        return self.points / self.hands if self.hands else 0.0

    @property
    def royalties_per_hand(self) -> float:
        """Average royalties collected per hand."""
        return self.royalties / self.hands if self.hands else 0.0


@dataclass(slots=True)
class SessionOutput:
    """A played session: its JSON Lines (UTF-8), hand count and per-bot tallies."""

    plan_index: int
    lines: bytes
    hands: int
    stats: dict[str, BotStats]


BLOCK_SESSIONS = 128
"""Sessions played side by side in one process (bigger blocks spread numpy's per-call cost over
more boards; the output never depends on the grouping)."""


def run_block(
    plans: Sequence[SessionPlan], rules: RuleSet, stay_value: float = DEFAULT_STAY_VALUE
) -> list[SessionOutput]:
    """Play, settle and encode a block of planned sessions (outputs in plan order)."""
    outputs = []
    for result in play_sessions(plans, rules, stay_value):
        stats: dict[str, BotStats] = {}
        for tally in result.tallies:
            bot = stats.get(tally.bot)
            if bot is None:
                bot = stats[tally.bot] = BotStats()
            bot.players.add(tally.name)
            bot.hands += 1
            bot.fouls += tally.foul
            bot.royalties += tally.royalties
            bot.points += tally.points
            if tally.in_fantasyland:
                bot.fantasyland_hands += 1
                bot.fantasyland_stays += tally.fantasyland_next
            else:
                bot.fantasyland_entries += tally.fantasyland_next
        text = "".join(line + "\n" for line in result.lines)
        outputs.append(
            SessionOutput(result.plan.index, text.encode("utf-8"), len(result.lines), stats)
        )
    return outputs


def _run_job(job: tuple[Sequence[SessionPlan], RuleSet, float]) -> list[SessionOutput]:
    return run_block(*job)


def simulate(
    config: SimulationConfig, jobs: int = 1, block_sessions: int = BLOCK_SESSIONS
) -> Iterator[SessionOutput]:
    """Play every session of ``config`` and yield their outputs in plan order.

    Sessions are played side by side in blocks of ``block_sessions``; ``jobs`` > 1 plays blocks
    in that many processes. Neither changes the output: every session draws only from its own
    seed.
    """
    plans = config.plan()
    work = [
        (plans[start:start + block_sessions], config.rules, config.stay_value)
        for start in range(0, len(plans), block_sessions)
    ]
    if jobs <= 1 or len(work) == 1:
        for job in work:
            yield from _run_job(job)
        return
    with forked_pool(jobs) as pool:
        for outputs in pool.imap(_run_job, work, chunksize=1):
            yield from outputs


def merge_stats(total: dict[str, BotStats], part: dict[str, BotStats]) -> None:
    """Add a session's per-bot tallies into a running total."""
    for bot, stats in part.items():
        total.setdefault(bot, BotStats()).merge(stats)
