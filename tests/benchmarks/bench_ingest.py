"""Benchmark: ingest + re-score of pineapple hands from canonical JSON Lines into a fresh database.

Not a test. For each size it writes (once, cached) a file of random legal 3-player pineapple
hands, then, in a fresh child process per size, times ``ingest_paths`` into a new database and
``rescore`` under another rule set, and reports hands/s, wall time and the child's peak RSS::

    .venv/bin/python tests/benchmarks/bench_ingest.py [--sizes 100000 1000000] [--cache DIR]

Targets (issue 3): 1M hands in <= 60 s on the 2-core machine, peak RSS <= 2 GB. It first
prints the worker stage of one batch, columnar path against the per-record baseline (ratio).
The hands come from a small dealer here (random legal hands: every street dealt from one
shuffled deck, cards placed into random rows with room, one discard per Pineapple street,
5% of players in Fantasyland with 14 cards), spread over 20 tables and a month of timestamps.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK = [rank + suit for rank in RANKS for suit in SUITS]
NAMES = ("mara", "jun", "lee", "ana", "bo", "cy", "dee", "eli", "fay")
START = datetime(2026, 10, 1, tzinfo=UTC)


def deal_record(number: int) -> dict:
    """One legal random 3-player pineapple hand (deterministic in ``number``)."""
    rng = random.Random(number)
    deck = DECK[:]
    rng.shuffle(deck)
    table = number % 20
    seat_names = [NAMES[(table + offset) % len(NAMES)] for offset in range(3)]
    players = []
    for seat, name in enumerate(seat_names, 1):
        if rng.random() < 0.05:
            dealt = [deck.pop() for _ in range(14)]
            players.append({
                "name": name, "seat": seat, "fantasyland": True,
                "streets": [{"dealt": dealt, "placed": {"top": dealt[:3], "middle": dealt[3:8],
                                                        "bottom": dealt[8:13]},
                             "discarded": dealt[13:]}],
            })
            continue
        room = {"top": 3, "middle": 5, "bottom": 5}
        streets = []
        for dealt_count, discard_count in ((5, 0), (3, 1), (3, 1), (3, 1), (3, 1)):
            dealt = [deck.pop() for _ in range(dealt_count)]
            placed: dict[str, list[str]] = {}
            for card in dealt[discard_count:]:
                row = rng.choice([row for row, left in room.items() if left])
                room[row] -= 1
                placed.setdefault(row, []).append(card)
            streets.append({"dealt": dealt, "placed": placed, "discarded": dealt[:discard_count]})
        players.append({"name": name, "seat": seat, "fantasyland": False, "streets": streets})
    started = START + timedelta(seconds=number * 2.5 + rng.random())
    return {
        "hand_id": f"B{number:08d}", "site": "bench", "table": f"T{table:02d}",
        "started_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"), "variant": "pineapple",
        "rules": "standard", "button": seat_names[-1], "players": players,
    }


def _write_part(arguments: tuple[str, int, int]) -> None:
    path, start, stop = arguments
    with open(path, "w", encoding="utf-8") as stream:
        for number in range(start, stop):
            stream.write(json.dumps(deal_record(number), separators=(",", ":")) + "\n")


def hands_file(size: int, cache: Path) -> Path:
    """The cached JSON Lines file of ``size`` hands, written (in parallel) when missing."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"pineapple-{size}.jsonl"
    if path.exists():
        return path
    workers = os.cpu_count() or 1
    step = -(-size // workers)
    parts = [(f"{path}.part{index}", start, min(size, start + step))
             for index, start in enumerate(range(0, size, step))]
    started = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(_write_part, parts))
    with open(f"{path}.tmp", "wb") as output:
        for part, _, _ in parts:
            with open(part, "rb") as stream:
                while chunk := stream.read(1 << 24):
                    output.write(chunk)
            os.unlink(part)
    os.replace(f"{path}.tmp", path)
    print(f"wrote {size:,} hands to {path} ({path.stat().st_size / 1e6:,.0f} MB) in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    return path


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class TreeSampler:
    """Samples the memory of this process and all its descendants (the ingest's worker
    processes) every 0.2 s; ``peak_mb`` is the largest sum of resident sizes seen (pages the
    workers share with their fork server count once per process), ``peak_pss_mb`` the largest
    sum of proportional set sizes (shared pages split between the processes: the memory the
    job really holds), ``cpu_seconds`` the CPU time of the tree (descendants as last sampled)."""

    def __init__(self) -> None:
        self.peak_mb = 0.0
        self.peak_pss_mb = 0.0
        self.child_cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _descendants(self) -> list[int]:
        parents: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as stream:
                        fields = stream.read().rsplit(")", 1)[1].split()
                    parents[int(entry)] = int(fields[1])
                except (OSError, IndexError):
                    continue
        found, frontier = [], [os.getpid()]
        while frontier:
            pid = frontier.pop()
            children = [child for child, parent in parents.items() if parent == pid]
            found.extend(children)
            frontier.extend(children)
        return found

    def _run(self) -> None:
        ticks = os.sysconf("SC_CLK_TCK")
        while not self._stop.wait(0.2):
            total_kb = 0
            pss_kb = 0
            for pid in [os.getpid(), *self._descendants()]:
                try:
                    with open(f"/proc/{pid}/smaps_rollup") as stream:
                        for line in stream:
                            if line.startswith("Rss:"):
                                total_kb += int(line.split()[1])
                            elif line.startswith("Pss:"):
                                pss_kb += int(line.split()[1])
                    if pid != os.getpid():
                        with open(f"/proc/{pid}/stat") as stream:
                            fields = stream.read().rsplit(")", 1)[1].split()
                        self.child_cpu[pid] = (int(fields[11]) + int(fields[12])) / ticks
                except (OSError, IndexError, ValueError):
                    continue
            self.peak_mb = max(self.peak_mb, total_kb / 1024)
            self.peak_pss_mb = max(self.peak_pss_mb, pss_kb / 1024)

    @property
    def cpu_seconds(self) -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        return own.ru_utime + own.ru_stime + sum(self.child_cpu.values())


def run_child(path: Path, database: Path) -> dict:
    """Ingest then re-score in this process; the measurements as a dict."""
    from pipeline.ingest.driver import ingest_paths
    from pipeline.ingest.rescore import rescore
    from pipeline.rules.ruleset import preset

    with TreeSampler() as sampler:
        started = time.perf_counter()
        summary = ingest_paths([path], database)
        ingest_seconds = time.perf_counter() - started
    ingest_cpu = sampler.cpu_seconds
    ingest_rss = max(sampler.peak_mb, _peak_rss_mb())
    ingest_pss = sampler.peak_pss_mb
    started = time.perf_counter()
    rescored = rescore(database, preset("progressive"))
    rescore_seconds = time.perf_counter() - started
    return {
        "hands": summary.records, "stored": summary.stored, "rejected": summary.rejected,
        "ingest_seconds": ingest_seconds, "ingest_rss_mb": ingest_rss,
        "ingest_pss_mb": ingest_pss,
        "ingest_cpu_seconds": ingest_cpu,
        "rescore_seconds": rescore_seconds, "rescored": rescored.hands,
        "rescore_cpu_seconds": sampler.cpu_seconds - ingest_cpu,
        "peak_rss_mb": max(ingest_rss, _peak_rss_mb()),
        "database_mb": database.stat().st_size / 1e6,
        "load_average": os.getloadavg()[0],
    }


def stage_ratio(path: Path, count: int = 20_000, rounds: int = 3) -> None:
    """The worker stage (parse, validate, score, build columns) of one batch, in this process:
    the columnar canonical path against the baseline that sends every line through the
    canonical reader and parse_hand, alternated in one run (best of ``rounds`` each)."""
    import gc
    from itertools import islice

    from pipeline.formats.source import read_raw_lines
    from pipeline.ingest.batches import prepare_canonical
    from pipeline.records.rules_file import RulesResolver

    lines = list(islice(read_raw_lines(path), count))
    best = {True: float("inf"), False: float("inf")}
    gc.disable()
    try:
        for _ in range(rounds):
            for fast in (True, False):
                started = time.perf_counter()
                prepare_canonical(str(path), lines, RulesResolver(), fast=fast)
                best[fast] = min(best[fast], time.perf_counter() - started)
    finally:
        gc.enable()
    print(f"worker stage, {count:,} hands: columnar path {best[True] / count * 1e6:.0f} µs/hand, "
          f"per-record baseline {best[False] / count * 1e6:.0f} µs/hand "
          f"({best[False] / best[True]:.2f}× faster)", flush=True)


def main() -> None:
    """Run every size in a fresh child process and print a table of the figures."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "ofc-bench")
    parser.add_argument("--child", nargs=2, metavar=("FILE", "DB"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        print(json.dumps(run_child(Path(arguments.child[0]), Path(arguments.child[1]))))
        return
    stage_ratio(hands_file(min(arguments.sizes), arguments.cache))
    rows = []
    for size in arguments.sizes:
        path = hands_file(size, arguments.cache)
        with tempfile.TemporaryDirectory() as folder:
            database = Path(folder) / "bench.duckdb"
            started = time.perf_counter()
            child = subprocess.run(
                [sys.executable, __file__, "--child", str(path), str(database)],
                capture_output=True, text=True, check=True,
            )
            wall = time.perf_counter() - started
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        figures["size"] = size
        figures["wall_seconds"] = wall
        rows.append(figures)
        print(
            f"{size:>9,} hands: ingest {figures['ingest_seconds']:6.1f} s "
            f"({figures['hands'] / figures['ingest_seconds']:,.0f} hands/s, CPU "
            f"{figures['ingest_cpu_seconds']:,.0f} s, peak RSS of all processes "
            f"{figures['ingest_rss_mb']:,.0f} MB, PSS {figures['ingest_pss_mb']:,.0f} MB) | "
            f"rescore {figures['rescore_seconds']:6.1f} s "
            f"({figures['rescored'] / figures['rescore_seconds']:,.0f} hands/s) | "
            f"ingest+rescore {figures['ingest_seconds'] + figures['rescore_seconds']:6.1f} s | "
            f"peak RSS {figures['peak_rss_mb']:,.0f} MB | database {figures['database_mb']:,.0f} MB"
            f" | load average {figures['load_average']:.1f}",
            flush=True,
        )
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
