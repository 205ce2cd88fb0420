"""Files that grow while ``ofc watch`` follows them, and a writer process that grows them.

The three sources of the watch issue: a poker-arena log (real engine lines, a second match, an
unfinished hand in the middle), a home game's boards CSV (rows of legal boards, one bad row) and
a canonical JSON Lines export (legal hands, one broken line). ``python -m tests.ingest.watch_data
FOLDER --seed N`` appends them at random moments in random pieces (pauses in the middle of lines
included); ``--burst`` writes a bigger canonical file quickly.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import duckdb

from tests.ingest.conftest import POKER_ARENA, deal_hand

CSV_HEADER = "hand_id,started_at,table,variant,player,seat,top,middle,bottom,fantasyland,points"

COMPARED_TABLES = (
    "hands", "seats", "placements", "discards", "boards", "evaluations", "matchups", "results",
    "sessions", "rejects", "ingested_files",
)
TIMESTAMPS = ("rejected_at", "ingested_at", "resolved_at")
"""Columns that say when a row was written, not what it holds."""


def board_rows(record: dict, number: int, bad_seat: bool = False) -> list[str]:
    """A canonical record's final boards as rows of a boards CSV (hand ``number`` of the sheet)."""
    rows = []
    for player in record["players"]:
        board: dict[str, list[str]] = {"top": [], "middle": [], "bottom": []}
        for street in player["streets"]:
            for row, cards in street["placed"].items():
                board[row] += cards
        seat = "x" if bad_seat else player["seat"]
        rows.append(f"{number},{record['started_at']},kitchen,{record['variant']},{player['name']},"
                    f"{seat},{' '.join(board['top'])},{' '.join(board['middle'])},"
                    f"{' '.join(board['bottom'])},no,")
    return rows


def boards_csv(seed: int, hands: int) -> bytes:
    """A boards CSV of ``hands`` hands of 2 or 3 players; hand 4 has a bad seat."""
    lines = [CSV_HEADER]
    for index in range(hands):
        record = deal_hand(seed * 1000 + index, players=2 + index % 2,
                           started_at=f"2026-11-01T20:{index % 60:02d}:00Z")
        lines += board_rows(record, index + 1, bad_seat=index == 3)
    return ("\n".join(lines) + "\n").encode()


def arena_log() -> bytes:
    """The real poker-arena log with its second hand unfinished (a seat never scored), then
    the log again (hand numbers go back: a second match of the same hands)."""
    lines = (POKER_ARENA / "ofc.jsonl").read_text().splitlines()
    headers = [index for index, line in enumerate(lines) if '"seats"' in line]
    unfinished = lines[: headers[2] - 1] + lines[headers[2]:]
    return ("\n".join(unfinished) + "\n" + "\n".join(lines) + "\n").encode()


def canonical_lines(seed: int, hands: int, broken_at: int | None = 3) -> bytes:
    """Canonical hands (one broken line at ``broken_at``)."""
    lines = [json.dumps(deal_hand(seed * 7919 + index, hand_id=f"C{seed}-{index}",
                                  started_at=f"2026-11-02T{index // 60 % 24:02d}:{index % 60:02d}:00Z"))
             for index in range(hands)]
    if broken_at is not None:
        lines.insert(broken_at, '{"hand_id": "cut-off", "players": [')
    return ("\n".join(lines) + "\n").encode()


def sources(seed: int) -> dict[str, bytes]:
    """File name → final content of the three growing sources."""
    return {"ofc.jsonl": arena_log(), "home/boards.csv": boards_csv(seed, 10),
            "hands.jsonl": canonical_lines(seed, 20)}


def grow(folder: Path, contents: dict[str, bytes], seed: int, pause: float,
         piece: int = 400, hold: Path | None = None) -> None:
    """Append every file's content in random pieces (cut anywhere, in the middle of lines too),
    a random pause of up to ``pause`` seconds after each round (every file grows each round, so
    no file rests long in the middle of a hand). Pieces are up to ``piece`` bytes, or a 25th of
    the file (about 50 rounds).

    ``hold``: once half of the bytes are written, create ``hold`` + ``.holding`` and wait
    (at most 120 s) until ``hold`` exists: a test can look at the watcher's work in the middle
    of the writing however slow the machine is."""
    rng = random.Random(seed)
    written = dict.fromkeys(contents, 0)
    total = sum(len(data) for data in contents.values())
    pieces = {name: max(piece, len(data) // 25) for name, data in contents.items()}
    for name in contents:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
    while any(written[name] < len(data) for name, data in contents.items()):
        for name, data in contents.items():
            if written[name] >= len(data):
                continue
            size = rng.randint(1, pieces[name])
            with open(folder / name, "ab") as stream:
                stream.write(data[written[name]: written[name] + size])
            written[name] += size
        if hold is not None and sum(written.values()) * 2 >= total:
            hold.with_name(hold.name + ".holding").touch()
            deadline = time.monotonic() + 120
            while not hold.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            hold = None
        time.sleep(rng.uniform(0, pause))


def database_contents(database: Path) -> dict[str, list[tuple]]:
    """Every compared table's rows, sorted, without the columns that hold write times."""
    connection = duckdb.connect(str(database), read_only=True)
    try:
        contents = {}
        for table in COMPARED_TABLES:
            columns = [row[0] for row in connection.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                "ORDER BY ordinal_position", [table]).fetchall() if row[0] not in TIMESTAMPS]
            rows = connection.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
            contents[table] = sorted(rows, key=repr)
    finally:
        connection.close()
    return contents


def main() -> None:
    """The writer process."""
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pause", type=float, default=0.15)
    parser.add_argument("--burst", type=int, metavar="HANDS",
                        help="write a canonical file of this many hands (and the others) fast")
    parser.add_argument("--hold", type=Path, metavar="FILE",
                        help="halfway, create FILE.holding and wait until FILE exists")
    arguments = parser.parse_args()
    contents = sources(arguments.seed)
    if arguments.burst:
        contents["burst.jsonl"] = canonical_lines(arguments.seed + 1, arguments.burst, None)
    grow(arguments.folder, contents, arguments.seed, arguments.pause,
         piece=20_000 if arguments.burst else 400, hold=arguments.hold)


if __name__ == "__main__":
    main()
