"""Benchmark: ingest of canonical JSON Lines into a fresh database, stage by stage, against a
single-core stdlib ``json.loads`` loop over the same lines (GC paused), same run.

Not a test: it prints figures. For each size it writes (once, cached) a file of random legal
3-player pineapple hands. Then:

1. **Stages**, on one batch of ``--stage-hands`` lines in this process, each the median of
   ``--repeats`` runs, as CPU-µs per hand (all threads of the process) and hands/s of one core,
   beside the ``json.loads`` baseline: reading the lines, the typed msgspec decode alone (the
   decode limit), DuckDB's own parallel JSON reader on the same lines (the alternative), the
   worker stage (parse + validate, hashing, scoring + Arrow tables) with the per-record path
   as its own baseline, the worker→writer transfer (Arrow spill files written, then
   memory-mapped: wall against CPU), the writer (DuckDB inserts, commit, checkpoint), the
   sessions update, and the storage floor (the batch's hand tables alone inserted into an empty
   database, committed and checkpointed) with the ceiling it sets for any design with one
   DuckDB writer (``--stages-only`` prints this table alone).
2. **The pipeline**: per size and repeat, a fresh child process runs the ``json.loads`` loop
   over the whole file, then ``ingest_paths`` into a new database (every core for the worker
   processes), then ``rescore`` under another rule set; it reports hands/s against lines/s
   (the ratio: goal, issue 14, at least 1.0), wall and CPU seconds of every process, peak
   memory (goal at most 2 GB) and the load average. With ``--other-tree DIR`` (an earlier
   commit, ``git archive COMMIT | tar -x -C DIR``) each repeat also runs the same child with
   that tree's code, alternating, and the medians of both are printed side by side (what a
   change costs or saves at ingest)::

    .venv/bin/python tests/benchmarks/bench_ingest.py [--sizes 100000] [--repeats 3]
        [--other-tree DIR] [--no-stages | --stages-only]

The hands come from a small dealer here (random legal hands: every street dealt from one
shuffled deck, cards placed into random rows with room, one discard per Pineapple street,
5% of players in Fantasyland with 14 cards), spread over 20 tables and a month of timestamps.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CODE_VARIABLE = "OFC_BENCH_CODE"
"""Environment variable: the source tree a pipeline child imports (``--other-tree``)."""
sys.path.insert(0, os.environ.get(CODE_VARIABLE, str(REPO)))

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
    job really holds), ``cpu_seconds`` the CPU time of the tree (descendants as last sampled).
    ``root``: sample that process and its descendants instead of this one's (a child run)."""

    def __init__(self, root: int | None = None) -> None:
        self.root = os.getpid() if root is None else root
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
        found, frontier = [], [self.root]
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
            for pid in [self.root, *self._descendants()]:
                try:
                    with open(f"/proc/{pid}/smaps_rollup") as stream:
                        for line in stream:
                            if line.startswith("Rss:"):
                                total_kb += int(line.split()[1])
                            elif line.startswith("Pss:"):
                                pss_kb += int(line.split()[1])
                    if pid != os.getpid():  # this process's own CPU comes from getrusage
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


def json_loads_seconds(path: Path, limit: int | None = None) -> tuple[float, int]:
    """The baseline: wall seconds of a stdlib ``json.loads`` loop over the file's lines, one
    core, GC paused (reading the lines included), and the lines parsed."""
    count = 0
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        started = time.perf_counter()
        with open(path, "rb") as stream:
            for line in islice(stream, limit):
                json.loads(line)
                count += 1
        return time.perf_counter() - started, count
    finally:
        if was_enabled:
            gc.enable()


def run_child(path: Path, database: Path) -> dict:
    """The baseline loop, then ingest, then re-score, in this process; the figures."""
    import pipeline
    from pipeline.ingest.driver import ingest_paths
    from pipeline.ingest.rescore import rescore
    from pipeline.rules.ruleset import preset

    baseline_seconds, lines = json_loads_seconds(path)
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
        "baseline_lines_per_second": lines / baseline_seconds,
        "ingest_seconds": ingest_seconds, "ingest_rss_mb": ingest_rss,
        "ingest_pss_mb": ingest_pss,
        "ingest_cpu_seconds": ingest_cpu,
        "rescore_seconds": rescore_seconds, "rescored": rescored.hands,
        "peak_rss_mb": max(ingest_rss, _peak_rss_mb()),
        "database_mb": database.stat().st_size / 1e6,
        "load_average": os.getloadavg()[0],
        "code": str(Path(pipeline.__file__).resolve().parents[1]),
    }


# --- stages ------------------------------------------------------------------------------------


class Clock:
    """Median wall and CPU seconds (all threads of this process) of repeated runs."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def run(self, function: Callable[[], object]) -> object:
        """Time one run of ``function`` (GC paused, as the ingest runs); its result."""
        gc.collect()
        gc.disable()
        try:
            wall, cpu = time.perf_counter(), time.process_time()
            result = function()
            self.cpu.append(time.process_time() - cpu)
            self.wall.append(time.perf_counter() - wall)
        finally:
            gc.enable()
        return result

    @property
    def median_cpu(self) -> float:
        """Median CPU seconds."""
        return statistics.median(self.cpu)

    @property
    def median_wall(self) -> float:
        """Median wall seconds."""
        return statistics.median(self.wall)


def stages(path: Path, count: int, repeats: int) -> dict[str, Clock]:
    """Each stage of the ingest on the file's first ``count`` lines, ``repeats`` times."""
    import duckdb

    from pipeline.formats.source import read_raw_lines
    from pipeline.records.rules_file import RulesResolver

    lines = list(islice(read_raw_lines(path), count))
    resolver = RulesResolver()
    sample = Path(tempfile.mkdtemp(prefix="ofc-bench-")) / "sample.jsonl"
    with open(sample, "wb") as stream:
        stream.writelines(data + b"\n" for data in (line[1] for line in lines))
    clocks = {name: Clock() for name in (
        "baseline", "read", "decode", "duckdb_json", "parse", "parse_hash", "tables",
        "worker", "per_record", "spill", "writer", "sessions", "storage")}
    reader = duckdb.connect()
    columns_sql = (
        "{'hand_id': 'VARCHAR', 'site': 'VARCHAR', 'table': 'VARCHAR', 'started_at': 'VARCHAR', "
        "'variant': 'VARCHAR', 'rules': 'VARCHAR', 'button': 'VARCHAR', 'players': 'STRUCT(name "
        "VARCHAR, seat INTEGER, fantasyland BOOLEAN, streets STRUCT(dealt VARCHAR[], placed "
        "STRUCT(top VARCHAR[], middle VARCHAR[], bottom VARCHAR[]), discarded VARCHAR[])[])[]'}")
    for _ in range(repeats):
        _stage_round(clocks, path, sample, lines, resolver, reader, columns_sql)
    reader.close()
    os.unlink(sample)
    return clocks


def _stage_round(
    clocks: dict[str, Clock], path: Path, sample: Path, lines: list, resolver: object,
    reader: object, columns_sql: str,
) -> None:
    """One run of every stage."""
    from pipeline import store
    from pipeline.formats.source import read_raw_lines
    from pipeline.ingest import fast_canonical
    from pipeline.ingest.batches import prepare_canonical
    from pipeline.ingest.fast_canonical import parse_canonical_batch
    from pipeline.ingest.sessions import update_sessions
    from pipeline.ingest.tables import hand_tables
    from pipeline.ingest.writer import Writer, write_batch

    pairs = [(number, data) for number, data, _ in lines]
    decode = fast_canonical._DECODER.decode
    clocks["baseline"].run(lambda: json_loads_seconds(sample))
    clocks["read"].run(lambda: list(read_raw_lines(sample)))
    clocks["decode"].run(lambda: [decode(data) for _, data in pairs])
    clocks["duckdb_json"].run(lambda: reader.sql(
        f"SELECT * FROM read_json('{sample}', format='newline_delimited', "
        f"columns={columns_sql})").to_arrow_table())
    clocks["parse"].run(lambda: parse_canonical_batch(pairs, str(path), identity=False))
    columns, _, _ = clocks["parse_hash"].run(lambda: parse_canonical_batch(pairs, str(path)))
    clocks["tables"].run(lambda: hand_tables(columns, resolver))
    prepared = clocks["worker"].run(lambda: prepare_canonical(str(path), lines, resolver))
    clocks["per_record"].run(lambda: prepare_canonical(str(path), lines, resolver, fast=False))
    with tempfile.TemporaryDirectory(prefix="ofc-bench-") as folder:
        database = Path(folder) / "bench.duckdb"

        def transfer() -> None:
            prepared.spill_frames(os.path.join(folder, "batch"))
            prepared.tables()

        clocks["spill"].run(transfer)
        frames = dict(prepared.tables())  # the writer lets go of them
        writer = Writer(database)
        writer.connect().close()
        touched: set = set()

        def write() -> None:
            write_batch(writer, prepared, touched)
            writer.close()

        clocks["writer"].run(write)

        def storage() -> None:
            # the floor of any design storing these rows: the hand tables' frames inserted
            # into an empty database, committed, checkpointed (no classification, no
            # aggregates, no sessions)
            floor = Path(folder) / f"floor{len(clocks['storage'].cpu)}.duckdb"
            connection = store.connect(floor)
            connection.execute("BEGIN TRANSACTION")
            for name, frame in frames.items():
                store.insert_frame(connection, name, frame)
            connection.execute("COMMIT")
            connection.close()

        clocks["storage"].run(storage)

        def sessions() -> None:
            with writer.transaction(release=True) as connection:
                update_sessions(connection, touched)

        clocks["sessions"].run(sessions)


def print_stages(clocks: dict[str, Clock], count: int) -> None:
    """The stage table: CPU-µs per hand, hands/s of one core, and against the baseline."""
    baseline = clocks["baseline"].median_cpu

    def row(name: str, label: str, clock: Clock | None = None, cpu: float | None = None) -> None:
        seconds = cpu if cpu is not None else clock.median_cpu
        wall = f"{clock.median_wall / count * 1e6:7.1f}" if clock is not None else "      -"
        print(f"{label:58} {seconds / count * 1e6:7.1f} {wall} {count / seconds:11,.0f} "
              f"{baseline / seconds:7.2f}x")

    print(f"\nstages, one batch of {count:,} hands, median of {len(clocks['baseline'].cpu)}; "
          f"CPU of all threads of this process; load average {os.getloadavg()[0]:.1f}")
    print(f"{'stage':58} {'CPU-µs':>7} {'wall-µs':>7} {'hands/s/core':>11} {'vs base':>8}")
    row("baseline", "baseline: json.loads loop (stdlib, GC paused)", clocks["baseline"])
    row("read", "read the lines (bytes, split)", clocks["read"])
    row("decode", "decode limit: msgspec typed decode alone", clocks["decode"])
    row("duckdb_json", "DuckDB read_json, nested columns (all threads)", clocks["duckdb_json"])
    parse, parse_hash = clocks["parse"].median_cpu, clocks["parse_hash"].median_cpu
    row("parse", "worker: parse + validate (columnar path)", clocks["parse"])
    if parse_hash > parse:
        row("hash", "worker: content hashes and keys (the difference)", cpu=parse_hash - parse)
    else:
        print(f"{'worker: content hashes and keys (the difference)':58} below the noise")
    row("tables", "worker: score (batch core) + Arrow tables", clocks["tables"])
    row("worker", "worker stage, all of it (prepare_canonical)", clocks["worker"])
    row("per_record", "  its baseline: every line through parse_hand", clocks["per_record"])
    row("spill", "transfer: Arrow spill files written, then mapped", clocks["spill"])
    row("writer", "writer: DuckDB inserts + commit + checkpoint", clocks["writer"])
    row("sessions", "writer: sessions of the touched tables", clocks["sessions"])
    serial = (clocks["read"].median_cpu + clocks["spill"].median_cpu
              + clocks["writer"].median_cpu + clocks["sessions"].median_cpu)
    parallel = clocks["worker"].median_cpu
    cores = os.cpu_count() or 1
    bound = count / max(serial, (serial + parallel) / cores)
    row("storage", "storage floor: the hand tables' rows alone (no aggregates)",
        clocks["storage"])
    print(f"limit of this design on {cores} idle cores: the writing process needs "
          f"{serial / count * 1e6:.0f} CPU-µs per hand and the workers {parallel / count * 1e6:.0f}:"
          f" at most {bound:,.0f} hands/s = {bound / (count / baseline):.2f}x the baseline")
    storage = clocks["storage"]
    floor = max(storage.median_wall, (storage.median_cpu + clocks["decode"].median_cpu) / cores)
    print(f"ceiling of any design with one DuckDB writer storing these rows on {cores} idle cores"
          f" (no validation, scoring or aggregates): the storage's wall time, "
          f"{storage.median_wall / count * 1e6:.0f} µs per hand with DuckDB's threads, or the "
          f"storage's and the msgspec decode's CPU spread over every core, "
          f"{(storage.median_cpu + clocks['decode'].median_cpu) / cores / count * 1e6:.0f} µs, "
          f"whichever is more: at most {count / floor:,.0f} hands/s = "
          f"{baseline / floor:.2f}x the baseline")


def _pipeline_child(path: Path, code: Path | None) -> dict:
    """:func:`run_child` in a fresh process, with this tree's code or ``code``'s."""
    environment = dict(os.environ)
    if code is not None:
        environment[CODE_VARIABLE] = str(code)
    with tempfile.TemporaryDirectory() as folder:
        child = subprocess.run(
            [sys.executable, __file__, "--child", str(path), str(Path(folder) / "bench.duckdb")],
            capture_output=True, text=True, check=True, env=environment,
        )
    return json.loads(child.stdout.strip().splitlines()[-1])


def _print_against_other(size: int, runs: list[dict], other_runs: list[dict],
                         other: Path) -> None:
    """This tree's ingest beside the other tree's, same run: medians of wall and CPU."""
    def medians(of: list[dict]) -> tuple[float, float]:
        return (statistics.median(run["ingest_seconds"] for run in of),
                statistics.median(run["ingest_cpu_seconds"] for run in of))

    if {run["code"] for run in other_runs} != {str(other)}:
        raise SystemExit(f"the other tree's runs imported {other_runs[0]['code']}, not {other}")
    wall, cpu = medians(runs)
    other_wall, other_cpu = medians(other_runs)
    print(f"{size:,} hands, this tree against {other} (alternating, medians of "
          f"{len(runs)}): ingest {wall:.2f} s wall, {cpu:.2f} CPU-s against {other_wall:.2f} s, "
          f"{other_cpu:.2f} CPU-s: {(cpu - other_cpu) / size * 1e6:+.1f} CPU-µs per hand, "
          f"wall ratio {other_wall / wall:.2f}x (above 1: this tree faster)", flush=True)


def main() -> None:
    """Stages, then every size in fresh child processes; a table of the figures."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--stage-hands", type=int, default=20_000)
    parser.add_argument("--no-stages", action="store_true", help="only the pipeline runs")
    parser.add_argument("--stages-only", action="store_true", help="only the stage table")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "ofc-bench")
    parser.add_argument("--other-tree", type=lambda text: Path(text).resolve(), metavar="DIR",
                        help="also run each pipeline child with this source tree's code, "
                             "alternating")
    parser.add_argument("--child", nargs=2, metavar=("FILE", "DB"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        print(json.dumps(run_child(Path(arguments.child[0]), Path(arguments.child[1]))))
        return
    if not arguments.no_stages:
        count = min(arguments.stage_hands, min(arguments.sizes))
        print_stages(stages(hands_file(min(arguments.sizes), arguments.cache), count,
                            arguments.repeats), count)
    if arguments.stages_only:
        return
    rows = []
    for size in arguments.sizes:
        path = hands_file(size, arguments.cache)
        runs, other_runs = [], []
        for _ in range(arguments.repeats):
            runs.append(_pipeline_child(path, None))
            if arguments.other_tree is not None:
                other_runs.append(_pipeline_child(path, arguments.other_tree))
        rate = [run["hands"] / run["ingest_seconds"] for run in runs]
        base = [run["baseline_lines_per_second"] for run in runs]
        ratio = [hands / lines for hands, lines in zip(rate, base, strict=True)]
        middle = sorted(range(len(runs)), key=ratio.__getitem__)[len(runs) // 2]
        figures = runs[middle]
        print(
            f"\n{size:,} hands, {len(runs)} runs (median by ratio): ingest "
            f"{figures['ingest_seconds']:.1f} s = {rate[middle]:,.0f} hands/s against the "
            f"json.loads loop's {base[middle]:,.0f} lines/s = {ratio[middle]:.2f}x "
            f"(all runs: {', '.join(f'{value:.2f}x' for value in ratio)}); CPU of all processes "
            f"{figures['ingest_cpu_seconds']:.0f} s ({figures['ingest_cpu_seconds'] / size * 1e6:.0f}"
            f" µs/hand); peak memory {figures['ingest_rss_mb']:,.0f} MB resident, "
            f"{figures['ingest_pss_mb']:,.0f} MB proportional; rescore "
            f"{figures['rescore_seconds']:.1f} s ({figures['rescored'] / figures['rescore_seconds']:,.0f}"
            f" hands/s); database {figures['database_mb']:,.0f} MB; load average "
            f"{', '.join(format(run['load_average'], '.1f') for run in runs)}",
            flush=True,
        )
        if other_runs:
            _print_against_other(size, runs, other_runs, arguments.other_tree)
        rows.append({"size": size, "runs": runs, "other_runs": other_runs})
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
