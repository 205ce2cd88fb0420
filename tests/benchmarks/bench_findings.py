"""Benchmark: are the coaching report's findings calibrated? False findings and power, measured.

Not a test (the small fixed-seed version runs in the suite: ``tests/report/test_calibration.py``).
It simulates fields of bots whose styles are known, builds a database per field (cached on disk,
so a second run only reads them), runs the report of every player, and prints:

* **null fields** (every player the same ``solid`` bot, so every difference is luck): the share
  of reports that call anything clear (a cause, a finding, a trade-off, the chasing answer), with
  its 95 % Wilson interval, split by reference kind (the field, four named regulars, a qualified
  group), by table size and by variant mix; how many clear items one report showed at most;
  and, per kind of test, how often its p-value falls below 0.05 and 0.01 (5 % and 1 % when the
  test is calibrated);
* **fields with known differences** (the power): how often the chaser's extra fouls are found
  against the solid players; how often the random bot's fouls are found; how often a drifter's
  change (solid, then careless from halfway) is found by before/after at the true date, with the
  size of that change; and what a solid player's report says against a group of chasers (a
  trade-off, or a "leak").

* **seat-blind fields** like the demo's (chasers among solid players; the bots see neither seat
  nor another board): how often the seats test finds a seat difference, with the report's error
  model (blocks of hands) and with single hands as units;
* **one opponent different** (a chaser and a random bot among solid bots): the head-to-head
  test's power (the chaser against the solid players) and its false rate (the solid players).

Every null report asks "did I improve?" at the run's midpoint too (a before/after test with
nothing to find).

Run from the repository root (the first run builds the fields: several minutes)::

    nice -n 10 .venv/bin/python tests/benchmarks/bench_findings.py [--null-fields 36]
        [--power-fields 8] [--seat-fields 12] [--opponent-fields 12] [--null-players 2,3,4]
        [--hands 3000] [--cache DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pipeline.ingest.driver import ingest_paths  # noqa: E402
from pipeline.read.report import report_seat_blocks  # noqa: E402
from pipeline.report import ReportRequest, create_report, report_dict  # noqa: E402
from pipeline.report.findings import _Context, seat_finding  # noqa: E402
from pipeline.report.model import DEFAULT_SETTINGS  # noqa: E402
from pipeline.report.reference import ReferenceSpec  # noqa: E402
from pipeline.report.stats import wilson_interval  # noqa: E402
from pipeline.rules.game import Variant  # noqa: E402
from pipeline.simulate.simulation import SimulationConfig  # noqa: E402
from pipeline.simulate.writer import write_simulation  # noqa: E402
from pipeline.store import connect  # noqa: E402

DEFAULT_CACHE = Path("/tmp/ofc-bench-findings")
POOL = 6
MIXES: tuple[tuple[Variant, ...], ...] = (
    (Variant.PINEAPPLE,),
    (Variant.PINEAPPLE, Variant.CLASSIC, Variant.LOWBALL_PINEAPPLE),
    (Variant.CLASSIC,),
    (Variant.LOWBALL_PINEAPPLE,),
)
"""The variant mixes null fields cycle through (4-player tables play Classic only)."""


@dataclass(frozen=True, slots=True)
class Field:
    """One simulated field: who plays (bots dealt in turn to the pool), where, how much."""

    kind: str
    seed: int
    players: int
    variants: tuple[str, ...]
    bots: tuple[str, ...]
    hands: int
    pool: int = POOL

    @property
    def tables(self) -> int:
        """Enough tables to seat most of the pool at once."""
        return max(1, self.pool // self.players)

    @property
    def mix(self) -> str:
        """The variant mix, as words."""
        return "+".join(self.variants)

    def config(self) -> SimulationConfig:
        """The simulation that plays this field."""
        return SimulationConfig(hands=self.hands, tables=self.tables, players=self.players,
                                variants=tuple(Variant(v) for v in self.variants),
                                bots=self.bots, seed=self.seed, pool_size=self.pool)

    @property
    def name(self) -> str:
        """A file name that changes whenever the field does."""
        described = asdict(self)
        if self.pool == POOL:  # the fields named before the pool could change keep their names
            del described["pool"]
        digest = hashlib.blake2b(json.dumps(described).encode(), digest_size=6).hexdigest()
        return f"{self.kind}-{self.seed}-{self.players}p-{digest}"


def null_fields(count: int, hands: int) -> list[Field]:
    """``count`` fields of six identical solid bots: table sizes 2-4 and variant mixes in turn."""
    fields = []
    for index in range(count):
        players = (2, 3, 4)[index % 3]
        mix = (Variant.CLASSIC,) if players == 4 else MIXES[(index // 3) % len(MIXES)]
        fields.append(Field("null", 1000 + index, players, tuple(v.value for v in mix),
                            ("solid",), hands))
    return fields


def power_fields(count: int, hands: int) -> list[Field]:
    """Fields with known differences: solid against chasers, a random bot, a drifter."""
    mix = ("pineapple", "classic")
    fields = []
    for index in range(count):
        players = (3, 2)[index % 2]
        fields.append(Field("chaser", 2000 + index, players, mix, ("solid", "chaser"), hands))
        fields.append(Field("random", 3000 + index, players, mix,
                            ("solid", "solid", "random", "solid", "solid", "solid"), hands))
        fields.append(Field("drifter", 4000 + index, players, mix,
                            ("solid", "solid", "drifter", "solid", "solid", "solid"), hands))
    return fields


def seat_fields(count: int, hands: int) -> list[Field]:
    """Fields like the demo's, where the seat cannot matter: eight players three at a table
    (solid, chaser, solid, chaser, random in turn: four solid, three chasers, one random),
    Pineapple, Classic and 2-7 Pineapple. The bots never look at their seat or at another
    board, and every seat gets the same cards from a shuffled deck, so any seat finding is
    false."""
    return [Field("seats", 5000 + index, 3, ("pineapple", "classic", "2-7-pineapple"),
                  ("solid", "chaser", "solid", "chaser", "random"), hands, 8)
            for index in range(count)]


def opponent_fields(count: int, hands: int) -> list[Field]:
    """Fields where one opponent is genuinely different: a chaser and a random bot among four
    solid bots, 3 and 2 players in turn, Pineapple and Classic. Against the random bot, who
    fouls most hands, a foul against a foul settles at zero, so the chaser's difference to the
    solid players depends on the opponent - but little: on the first 12 fields, against the
    random bot it was 0.4-0.5 points per hand lower than against the solid bots in Classic and
    0.3-0.6 higher in Pineapple (every pairing summed). The solid players' does not depend on the
    opponent (they are the group's bot)."""
    return [Field("opponent", 6000 + index, (3, 2)[index % 2], ("pineapple", "classic"),
                  ("solid", "chaser", "random", "solid", "solid", "solid"), hands)
            for index in range(count)]


@dataclass(frozen=True, slots=True)
class Built:
    """A field's database, who plays which bot, and the day its drifter changes."""

    database: Path
    bots: dict[str, str]
    switch: date


def build(field: Field, cache: Path) -> Built:
    """The field's database from the cache, simulated and ingested when missing."""
    folder = cache / field.name
    database = folder / "hands.duckdb"
    facts = folder / "facts.json"
    config = field.config()
    if not facts.exists():
        folder.mkdir(parents=True, exist_ok=True)
        hands = folder / "hands.jsonl"
        database.unlink(missing_ok=True)
        write_simulation(config, hands)
        summary = ingest_paths([hands], database, workers=1)
        if summary.rejected or summary.stored != field.hands:
            raise RuntimeError(f"{field.name}: {summary.stored} stored, {summary.rejected} "
                               "rejected")
        hands.unlink()
        plans = config.plan()
        bots = {}
        for plan in plans:
            for player in plan.players:
                bots[player.name] = player.bot
        switch = min((plan.start for plan in plans if plan.progress >= 0.5),
                     default=plans[-1].start)
        facts.write_text(json.dumps({"bots": bots, "switch": switch.date().isoformat()}))
    else:  # a field cached by an older version: its tables brought up to date, as the
        # dashboard does (a database written before matches fails the report's money section)
        connect(database).close()
    known = json.loads(facts.read_text())
    return Built(database, known["bots"], date.fromisoformat(known["switch"]))


# --- reading a report --------------------------------------------------------------------------


def clear_items(data: dict[str, Any]) -> list[str]:
    """What a report calls clear, one entry per item of its summary.

    Format 3 lists its items (``summary``); before it, every surviving cause and finding and a
    surviving chasing answer were each an item of their own.
    """
    if "summary" in data and isinstance(data["summary"], list):
        return [item["key"] for item in data["summary"]]
    keys = [f"cause.{cause['key']}" for cause in data["causes"] if cause["survives"]]
    keys += [finding["key"] for finding in data["findings"] if finding["survives"]]
    if data.get("chasing") and data["chasing"]["survives"]:
        keys.append("chasing")
    return keys


def test_family(key: str) -> str:
    """A test's kind, for the calibration table: ``cause.fouls``, ``results.position``, ..."""
    parts = key.split(".")
    if parts[0] in ("cause", "trend", "change"):
        return ".".join(parts[:2])
    if parts[0] in ("fouls", "results", "head_to_head", "seats") and len(parts) > 1:
        return ".".join(parts[:2]) if parts[1] in ("variant", "position") else (
            parts[0] if parts[0] in ("head_to_head", "seats") else ".".join(parts[:2]))
    return key


def p_values(data: dict[str, Any]) -> Iterable[tuple[str, float]]:
    """Every tested p-value of the report, by test kind."""
    if "family" in data:
        for test in data["family"]:
            if test["p_value"] is not None:
                yield test_family(test["key"]), test["p_value"]
        return
    for cause in data["causes"]:
        if cause["p_value"] is not None:
            yield f"cause.{cause['key']}", cause["p_value"]
    for finding in data["findings"]:
        if finding["p_value"] is not None:
            yield test_family(finding["key"]), finding["p_value"]
    if data.get("chasing") and data["chasing"]["p_value"] is not None:
        yield "chasing", data["chasing"]["p_value"]


def leak_found(data: dict[str, Any], cause: str) -> bool:
    """The cause is called a clear cost (on its own, or as the costly side of a trade-off)."""
    if "summary" in data and isinstance(data["summary"], list):
        return any(cause in item.get("leaks", ()) for item in data["summary"])
    return any(c["key"] == cause and c["survives"] and c["points_per_100"] < 0
               for c in data["causes"])


def finding_clear(data: dict[str, Any], key: str) -> dict[str, Any] | None:
    """A finding by key when it is clear."""
    for finding in data["findings"]:
        if finding["key"] == key and finding["survives"]:
            return finding
    return None


# --- printing ------------------------------------------------------------------------------------


def rate_text(hits: int, total: int) -> str:
    """``3 of 216 = 1.4 % (0.5 – 4.0 %)``: a share with its 95 % Wilson interval."""
    if not total:
        return "no reports"
    low, high = wilson_interval(hits, total)
    return f"{hits:>3} of {total:>3} = {100 * hits / total:5.1f} % ({100 * low:.1f} – {100 * high:.1f} %)"


class Bar:
    """A one-line progress bar with a rate, on stderr."""

    def __init__(self, total: int, label: str) -> None:
        self.total, self.label, self.done, self.started = total, label, 0, time.perf_counter()

    def step(self, note: str = "") -> None:
        """One more done."""
        self.done += 1
        elapsed = time.perf_counter() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        filled = int(30 * self.done / max(self.total, 1))
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] "
                         f"{self.done}/{self.total} {rate:.2f}/s {note[:30]:<30}")
        if self.done == self.total:
            sys.stderr.write(f"\n{self.label}: {self.total} in {elapsed:.0f} s\n")
        sys.stderr.flush()


def run(arguments: argparse.Namespace) -> dict[str, Any]:
    """Build the fields, run every report, and print both rates."""
    cache = Path(arguments.cache)
    nulls = [field for field in null_fields(arguments.null_fields, arguments.hands)
             if field.players in arguments.null_players]
    powers = power_fields(arguments.power_fields, arguments.hands)
    seated = seat_fields(arguments.seat_fields, arguments.hands)
    opposed = opponent_fields(arguments.opponent_fields, arguments.hands)
    fields = nulls + powers + seated + opposed
    bar = Bar(len(fields), "fields")
    built: dict[Field, Built] = {}
    for field in fields:
        built[field] = build(field, cache)
        bar.step(field.name)

    reports = 0
    started = time.perf_counter()

    def report(database: Path, request: ReportRequest) -> dict[str, Any]:
        nonlocal reports
        reports += 1
        return report_dict(create_report(database, request))

    # --- null fields -------------------------------------------------------------------------
    outcome: dict[str, Any] = {"null": [], "power": {}}
    kinds: dict[str, Callable[[str, list[str]], ReferenceSpec]] = {
        "field": lambda player, others: ReferenceSpec(),
        "named": lambda player, others: ReferenceSpec.parse("named:" + ",".join(others[:4])),
        "qualified": lambda player, others: ReferenceSpec.parse("qualified:300:60"),
    }
    bar = Bar(sum(len(built[f].bots) for f in nulls) * len(kinds), "null reports")
    for field in nulls:
        facts = built[field]
        players = sorted(facts.bots)
        for player in players:
            others = [p for p in players if p != player]
            for kind, spec in kinds.items():
                data = report(facts.database, ReportRequest(
                    player, reference=spec(player, others), change_date=facts.switch))
                outcome["null"].append({
                    "field": field.name, "players": field.players, "mix": field.mix,
                    "kind": kind, "player": player, "items": clear_items(data),
                    "p_values": list(p_values(data)),
                })
                bar.step(f"{field.name} {player}")

    # --- known differences -------------------------------------------------------------------
    power: dict[str, list[bool]] = defaultdict(list)
    solid_words: Counter[str] = Counter()
    drift_sizes: list[float] = []
    power_reports = sum(
        sum(1 for bot in built[f].bots.values() if bot != "solid")
        + (sum(1 for bot in built[f].bots.values() if bot == "solid") if f.kind == "chaser" else 0)
        for f in powers)
    bar = Bar(power_reports, "power reports")
    for field in powers:
        facts = built[field]
        solids = sorted(p for p, bot in facts.bots.items() if bot == "solid")
        for player, bot in sorted(facts.bots.items()):
            if field.kind == "chaser" and bot == "chaser":
                data = report(facts.database, ReportRequest(
                    player, reference=ReferenceSpec.parse("named:" + ",".join(solids))))
                power["chaser: extra fouls found against the solid players"].append(
                    leak_found(data, "fouls"))
            elif field.kind == "chaser" and bot == "solid":
                chasers = sorted(p for p, b in facts.bots.items() if b == "chaser")
                data = report(facts.database, ReportRequest(
                    player, reference=ReferenceSpec.parse("named:" + ",".join(chasers))))
                words = summary_words(data)
                solid_words[words] += 1
                continue
            elif field.kind == "random" and bot == "random":
                data = report(facts.database, ReportRequest(player))
                power["random: fouls found as a clear cost"].append(leak_found(data, "fouls"))
            elif field.kind == "drifter" and bot == "drifter":
                data = report(facts.database, ReportRequest(player, change_date=facts.switch))
                change = finding_clear(data, "change.fouls")
                power["drifter: rise in fouls found by before/after"].append(
                    change is not None and change["difference"] > 0)
                drift = next(f for f in data["findings"] if f["key"] == "change.fouls")
                if drift["difference"] is not None:
                    drift_sizes.append(100 * drift["difference"])
            else:
                continue
            bar.step(f"{field.name} {player}")
    seconds = time.perf_counter() - started

    # --- print -------------------------------------------------------------------------------
    null = outcome["null"]
    print(f"\nNull fields: {len(nulls)} fields of {POOL} identical solid bots, "
          f"{arguments.hands:,} hands each; {len(null)} reports ({reports} reports in "
          f"{seconds:.0f} s in all)")
    print("Share of reports that call anything clear (target: at most 5 %), 95 % Wilson interval:")
    by: dict[str, dict[str, list[int]]] = {"reference": defaultdict(list),
                                           "table size": defaultdict(list),
                                           "variant mix": defaultdict(list)}
    for row in null:
        hit = 1 if row["items"] else 0
        by["reference"][row["kind"]].append(hit)
        by["table size"][f"{row['players']} players"].append(hit)
        by["variant mix"][row["mix"]].append(hit)
    everything = [1 if row["items"] else 0 for row in null]
    print(f"  {'all reports':<40} {rate_text(sum(everything), len(everything))}")
    players: dict[tuple[str, str], bool] = defaultdict(bool)
    for row in null:  # a player of a field calls something clear in any of his reports
        players[(row["field"], row["player"])] |= bool(row["items"])
    print(f"  {'players (any of their reports)':<40} "
          f"{rate_text(sum(players.values()), len(players))}")
    for heading, groups in by.items():
        for name, hits in sorted(groups.items()):
            print(f"  {heading + ': ' + name:<40} {rate_text(sum(hits), len(hits))}")
    most = max((len(row["items"]) for row in null), default=0)
    counts = Counter(len(row["items"]) for row in null)
    print(f"  clear items in one report: at most {most}; reports by count: "
          + ", ".join(f"{n} item{'s' if n != 1 else ''}: {c}" for n, c in sorted(counts.items())))
    named = Counter(item.split(".")[0] if not item.startswith("cause.") else item
                    for row in null for item in row["items"])
    if named:
        print("  what was called clear: " + ", ".join(f"{k} ×{v}" for k, v in named.most_common()))
    print("Calibration per kind of test (share of p-values below 0.05 and 0.01; a calibrated "
          "test gives 5 % and 1 %):")
    families: dict[str, list[float]] = defaultdict(list)
    for row in null:
        for family, p in row["p_values"]:
            families[family].append(p)
    for family, values in sorted(families.items()):
        below5 = sum(p < 0.05 for p in values)
        below1 = sum(p < 0.01 for p in values)
        print(f"  {family:<28} n = {len(values):>5}  p < 0.05: {100 * below5 / len(values):5.1f} %"
              f"  p < 0.01: {100 * below1 / len(values):5.1f} %")

    print(f"\nKnown differences: {len(powers)} fields ({arguments.power_fields} each of chaser, "
          "random and drifter; 2 and 3 players; Pineapple and Classic)")
    for label, found in power.items():
        print(f"  {label:<55} {rate_text(sum(found), len(found))}")
    if drift_sizes:
        mean = sum(drift_sizes) / len(drift_sizes)
        print(f"  the drifters' measured change in foul rate: {mean:+.1f} percentage points on "
              f"average ({min(drift_sizes):+.1f} to {max(drift_sizes):+.1f})")
    if solid_words:
        total = sum(solid_words.values())
        print(f"  a solid player against the chasers ({total} reports): "
              + "; ".join(f"{words}: {count}" for words, count in solid_words.most_common()))
    outcome["power"] = {label: [sum(found), len(found)] for label, found in power.items()}
    outcome["drift_sizes"] = drift_sizes
    outcome["solid_against_chasers"] = dict(solid_words)
    outcome["seats"] = seat_section(seated, built, report)
    outcome["opponents"] = opponent_section(opposed, built, report)
    return outcome


def test_p(data: dict[str, Any], key: str) -> float | None:
    """A tested finding's p-value (None when it was too few to judge)."""
    return next((test["p_value"] for test in data["family"] if test["key"] == key), None)


def shares_line(label: str, rows: list[tuple[bool, float | None]]) -> str:
    """``label: clear 1 of 48 = ...; p < 0.05: 3 of 48 = ...`` for (clear, p) rows."""
    tested = [p for _, p in rows if p is not None]
    return (f"  {label:<44} clear: {rate_text(sum(c for c, _ in rows), len(rows))}; "
            f"p < 0.05: {rate_text(sum(p < 0.05 for p in tested), len(tested))}")


def seat_section(fields: list[Field], built: dict[Field, Built],
                 report: Callable[[Path, ReportRequest], dict[str, Any]]) -> dict[str, Any]:
    """Seat-blind fields: how often a player gets a clear seats item (or p < 0.05), per bot and
    reference (the solid players named, or the field)."""
    if not fields:
        return {}
    rows: dict[str, list[tuple[bool, float | None]]] = defaultdict(list)
    hands: dict[str, list[float | None]] = defaultdict(list)
    bar = Bar(sum(2 * sum(bot != "random" for bot in built[f].bots.values()) for f in fields),
              "seat reports")
    for field in fields:
        facts = built[field]
        solids = sorted(p for p, bot in facts.bots.items() if bot == "solid")
        for player, bot in sorted(facts.bots.items()):
            if bot == "random":
                continue
            named = [p for p in solids if p != player]
            for kind, spec in (("the solid players named", ReferenceSpec.parse(
                    "named:" + ",".join(named))), ("the field", ReferenceSpec())):
                request = ReportRequest(player, reference=spec)
                data = report(facts.database, request)
                clear = any(item["key"] == "seats" for item in data["summary"])
                rows[f"{bot} against {kind}"].append((clear, test_p(data, "seats")))
                hands[f"{bot} against {kind}"].append(single_hands_p(facts.database, request, data))
                bar.step(f"{field.name} {player}")
    print(f"\nSeat-blind fields: {len(fields)} fields like the demo's (8 players three at a "
          "table: 4 solid, 3 chasers, 1 random; Pineapple, Classic, 2-7 Pineapple); the seats "
          "test (nominal: p < 0.05 in 5 %):")
    for label, found in sorted(rows.items()):
        print(shares_line(label, found))
    every = [row for found in rows.values() for row in found]
    print(shares_line("every report", every))
    print("  the same test with single hands as units (the error model before blocks of hands):")
    for label, values in [*sorted(hands.items()),
                          ("every report", [p for found in hands.values() for p in found])]:
        tested = [p for p in values if p is not None]
        print(f"  {label:<44} p < 0.10: {rate_text(sum(p < 0.10 for p in tested), len(tested))}; "
              f"p < 0.05: {rate_text(sum(p < 0.05 for p in tested), len(tested))}")
    return {"report": dict(rows), "single_hands": dict(hands)}


def single_hands_p(database: Path, request: ReportRequest, data: dict[str, Any]) -> float | None:
    """The seats test's p-value with every hand its own unit (blocks of one hand): the error model
    the report used before, on the report's group (``data``: its JSON) and the same results."""
    scope = request.scope_filters()
    names = request.names
    reference = data["reference"]
    left_out = tuple(row["player"] for row in reference["left_out"])
    mine = report_seat_blocks(database, scope.with_players(names),
                              () if reference["player_is_outlier"] else left_out, 1)
    everyone = report_seat_blocks(database, scope, (*names, *left_out), 1)
    return seat_finding(mine, everyone.filter(pl.col("player").is_in(reference["members"])),
                        _Context("", 0, DEFAULT_SETTINGS)).p_value


def opponent_section(fields: list[Field], built: dict[Field, Built],
                     report: Callable[[Path, ReportRequest], dict[str, Any]]) -> dict[str, Any]:
    """Fields with one genuinely different opponent: the head-to-head test's power (the chaser
    against the solid players, whose difference depends on the opponent) and its false rate
    (the solid players against the other solid players: nothing to find, a random opponent at
    the table)."""
    if not fields:
        return {}
    chaser: list[tuple[bool, float | None]] = []
    solid: list[tuple[bool, float | None]] = []
    extreme: list[bool] = []
    bar = Bar(sum(sum(bot in ("solid", "chaser") for bot in built[f].bots.values())
                  for f in fields), "opponent reports")
    for field in fields:
        facts = built[field]
        solids = sorted(p for p, bot in facts.bots.items() if bot == "solid")
        randoms = {p for p, bot in facts.bots.items() if bot == "random"}
        for player, bot in sorted(facts.bots.items()):
            if bot not in ("solid", "chaser"):
                continue
            named = [p for p in solids if p != player]
            data = report(facts.database, ReportRequest(
                player, reference=ReferenceSpec.parse("named:" + ",".join(named))))
            clear = any(item["key"] == "head_to_head" for item in data["summary"])
            (chaser if bot == "chaser" else solid).append((clear, test_p(data, "head_to_head")))
            if bot == "chaser":
                differences = {f["key"].split(".", 1)[1]: f["difference"]
                               for f in data["findings"] if f["key"].startswith("head_to_head.")
                               and f["difference"] is not None}
                if len(differences) >= 2 and randoms & set(differences):
                    centre = sum(differences.values()) / len(differences)
                    largest = max(differences, key=lambda name: abs(differences[name] - centre))
                    extreme.append(largest in randoms)
            bar.step(f"{field.name} {player}")
    print(f"\nOne opponent different: {len(fields)} fields (a chaser and a random bot among four "
          "solid bots; 3 and 2 players; Pineapple and Classic), against the solid players named:")
    print(shares_line("the chaser (power: differs by opponent)", chaser))
    print(shares_line("the solid players (false: nothing to find)", solid))
    if extreme:
        print(f"  the random opponent is the chaser's most different opponent: "
              f"{rate_text(sum(extreme), len(extreme))}")
    return {"chaser": chaser, "solid": solid, "random_most_different": extreme}


def summary_words(data: dict[str, Any]) -> str:
    """What a report's summary calls a player, in a few words (for the solid-against-chasers
    line): the causes called leaks and strengths, the trade-offs."""
    if "summary" in data and isinstance(data["summary"], list):
        kinds = sorted(f"{item['kind']} (costs: {', '.join(item['leaks']) or '-'}; gains: "
                       f"{', '.join(item['gains']) or '-'})" for item in data["summary"])
        return "; ".join(kinds) or "nothing clear"
    causes = {c["key"]: c for c in data["causes"]}
    parts = [f"leak {key}" for key in data["leaks"]] + [f"strength {key}"
                                                        for key in data["strengths"]]
    parts += [f"clear finding {causes.get(k, {}).get('key', k)}" for k in data["clear"]
              if k.startswith(("fantasyland", "royalties", "fouls", "scoops"))]
    return "; ".join(sorted(parts)) or "nothing clear"


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--null-fields", type=int, default=36,
                        help="null fields (6 reports each per reference kind; default 36)")
    parser.add_argument("--power-fields", type=int, default=8,
                        help="fields per known difference (default 8)")
    parser.add_argument("--null-players", default="2,3,4",
                        help="table sizes of the null fields kept (default 2,3,4: all)")
    parser.add_argument("--seat-fields", type=int, default=12,
                        help="seat-blind fields like the demo's (default 12)")
    parser.add_argument("--opponent-fields", type=int, default=12,
                        help="fields with one genuinely different opponent (default 12)")
    parser.add_argument("--hands", type=int, default=3000, help="hands per field")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="where fields are kept")
    parser.add_argument("--json", help="also write the outcome to this file")
    arguments = parser.parse_args()
    arguments.null_players = {int(size) for size in arguments.null_players.split(",")}
    started = datetime.now(UTC)
    outcome = run(arguments)
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(outcome, indent=1, default=str))
    print(f"\n(started {started:%Y-%m-%d %H:%M} UTC; {math.ceil((datetime.now(UTC) - started).total_seconds())} s)")


if __name__ == "__main__":
    main()
