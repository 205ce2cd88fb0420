"""Benchmark: settling every match of a database (``ofc settle``) against reading the matches'
plain totals, same run.

Not a test: it prints figures. It builds (once, cached) a database of random legal 3-player
pineapple hands (the dealer of bench_ingest.py) in matches of 10 hands at 20 tables (the
players of a table fixed), scored under a match cap of 40 at 0.10 a point, then times,
alternating, R times each, every run on a new read-only connection:

* the **baseline**: one SQL pass giving each match's per-player hands and points (a GROUP BY of
  ``results`` joined with ``hands``): the least any settlement has to read;
* :func:`pipeline.read.matches.match_settlements` (what ``ofc settle`` prints): the checks of
  each match (tables, player sets, rules, games, rule sets), the totals and the settlement;
* the same with ``rules`` (``ofc settle --rules``): every match's boards scored again in memory.

It prints the median seconds of each, their ratios to the baseline and the load average, and
checks that the settlement's totals are the baseline's::

    .venv/bin/python tests/benchmarks/bench_settle.py [--hands 50000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

MATCH_HANDS = 10
RULES = '[scoring]\ncap = 40\ncap_scope = "match"\nstake = 0.1\n'
BASELINE_SQL = """
    SELECT h.site, h.match_id, r.player, count(*) AS hands, sum(r.points) AS points
    FROM hands h JOIN results r ON r.hand_key = h.hand_key
    WHERE h.match_id IS NOT NULL GROUP BY ALL
"""


def build(hands: int, folder: Path) -> tuple[Path, Path]:
    """The cached database of ``hands`` hands in matches, and its rules file."""
    import json

    from bench_ingest import deal_record

    from pipeline.ingest.driver import ingest_paths
    from pipeline.records.rules_file import load_rules_file

    folder.mkdir(parents=True, exist_ok=True)
    database = folder / f"settle-{hands}.duckdb"
    rules = folder / "match-cap-40.toml"
    rules.write_text(RULES, encoding="utf-8")
    if database.exists():
        return database, rules
    source = folder / f"settle-{hands}.jsonl"
    with open(source, "w", encoding="utf-8") as stream:
        for number in range(hands):
            record = deal_record(number)
            record["match_id"] = f"{record['table']}-{number // 20 // MATCH_HANDS:05d}"
            stream.write(json.dumps(record) + "\n")
    started = time.perf_counter()
    summary = ingest_paths([source], database, rules=load_rules_file(rules))
    print(f"built {database}: {summary.stored:,} hands in {time.perf_counter() - started:.1f} s")
    source.unlink()
    return database, rules


def main() -> None:
    """Time the three ways, alternating, and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "ofc-bench-settle")
    arguments = parser.parse_args()

    from pipeline import store
    from pipeline.read.matches import match_settlements
    from pipeline.records.rules_file import load_rules_file

    database, rules_path = build(arguments.hands, arguments.cache)
    rules = load_rules_file(rules_path)

    def baseline() -> object:
        with store.open_database(database, read_only=True) as connection:
            return connection.sql(BASELINE_SQL).fetchall()

    def settle() -> object:
        with store.open_database(database, read_only=True) as connection:
            return match_settlements(connection)

    def settle_rules() -> object:
        with store.open_database(database, read_only=True) as connection:
            return match_settlements(connection, rules=rules)

    ways = {"baseline (match totals, one GROUP BY)": baseline,
            "match_settlements (ofc settle)": settle,
            "match_settlements --rules (re-scored in memory)": settle_rules}
    times: dict[str, list[float]] = {name: [] for name in ways}
    answers: dict[str, object] = {}
    for _ in range(arguments.repeats):
        for name, way in ways.items():
            started = time.perf_counter()
            answers[name] = way()
            times[name].append(time.perf_counter() - started)

    names = list(ways)
    plain = {(site, match, player): (int(hands), int(points))
             for site, match, player, hands, points in answers[names[0]]}
    settled = answers[names[1]]
    assert {(m.site, m.match_id, t.player): (t.hands, t.points)
            for m in settled for t in m.players} == plain, "the totals differ"
    assert all(m.settlement is not None for m in settled), "a match was not settled"
    capped = sum(p.capped for m in settled for p in m.settlement.players)
    base = statistics.median(times[names[0]])
    print(f"{arguments.hands:,} hands, {len(settled):,} matches of {MATCH_HANDS} hands, "
          f"{capped:,} players capped; load average {os.getloadavg()[0]:.2f}")
    for name in names:
        median = statistics.median(times[name])
        print(f"  {name:<48} {median:8.3f} s  {median / base:6.2f}x the baseline  "
              f"({', '.join(f'{value:.3f}' for value in times[name])})")


if __name__ == "__main__":
    main()
