"""Helpers for the ingestion tests: legal hands dealt from a seed, files on disk, table dumps."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterable
from pathlib import Path

import duckdb
import pytest

REPO = Path(__file__).resolve().parents[2]
POKER_ARENA = Path("/work/shared/formats/poker-arena")
if not POKER_ARENA.is_dir():  # CI lays shared/ beside the clone
    POKER_ARENA = REPO.parent / "shared" / "formats" / "poker-arena"
if not POKER_ARENA.is_dir():
    POKER_ARENA = REPO / "sample_data" / "poker-arena"

RANKS = "23456789TJQKA"
SUITS = "cdhs"
NAMES = ("mara", "jun", "lee", "ana")

HAND_TABLES = (
    "hands", "seats", "placements", "discards", "boards", "evaluations", "matchups",
    "results", "sessions",
)


def deal_hand(
    seed: int,
    players: int = 3,
    hand_id: str | None = None,
    started_at: str | None = "2026-11-01T20:00:00Z",
    table: str | None = "T1",
    site: str = "homegame",
    rules: str = "standard",
    names: tuple[str, ...] = NAMES,
) -> dict:
    """A legal canonical pineapple record dealt from a deck shuffled with ``seed``."""
    rng = random.Random(seed)
    deck = [rank + suit for rank in RANKS for suit in SUITS]
    rng.shuffle(deck)
    record_players = []
    for index in range(players):
        room = {"top": 3, "middle": 5, "bottom": 5}
        streets = []
        for dealt_count, discard_count in ((5, 0), (3, 1), (3, 1), (3, 1), (3, 1)):
            dealt = [deck.pop() for _ in range(dealt_count)]
            discarded = dealt[:discard_count]
            placed: dict[str, list[str]] = {}
            for card in dealt[discard_count:]:
                row = rng.choice([name for name, left in room.items() if left > 0])
                room[row] -= 1
                placed.setdefault(row, []).append(card)
            streets.append({"dealt": dealt, "placed": placed, "discarded": discarded})
        record_players.append(
            {"name": names[index], "seat": index + 1, "fantasyland": False, "streets": streets}
        )
    record = {
        "hand_id": hand_id or f"H{seed}",
        "site": site,
        "variant": "pineapple",
        "rules": rules,
        "button": names[0],
        "players": record_players,
    }
    if table is not None:
        record["table"] = table
    if started_at is not None:
        record["started_at"] = started_at
    return record


def write_jsonl(path: Path, records: Iterable[dict | str]) -> Path:
    """Write records (dicts as JSON, strings as they are) one per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as stream:
        for record in records:
            stream.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
    return path


def table_rows(database: Path, table: str, exclude: tuple[str, ...] = ()) -> list[tuple]:
    """Every row of a table, sorted, without the excluded columns."""
    connection = duckdb.connect(str(database), read_only=True)
    try:
        columns = [
            row[0] for row in connection.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                "ORDER BY ordinal_position", [table],
            ).fetchall()
            if row[0] not in exclude
        ]
        rows = connection.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
    finally:
        connection.close()
    return sorted(rows, key=repr)


def count(database: Path, table: str, where: str = "TRUE") -> int:
    """Rows of a table matching a condition."""
    connection = duckdb.connect(str(database), read_only=True)
    try:
        return connection.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchall()[0][0]
    finally:
        connection.close()


def query(database: Path, sql: str, parameters: list | None = None) -> list[tuple]:
    """Rows of a query on a read-only connection."""
    connection = duckdb.connect(str(database), read_only=True)
    try:
        return connection.execute(sql, parameters or []).fetchall()
    finally:
        connection.close()


@pytest.fixture
def arena_logs(tmp_path: Path) -> Path:
    """A folder with copies of the real poker-arena logs (ofc.jsonl, ofc-pineapple.jsonl)."""
    folder = tmp_path / "arena"
    folder.mkdir()
    for name in ("ofc.jsonl", "ofc-pineapple.jsonl"):
        shutil.copy(POKER_ARENA / name, folder / name)
    return folder


@pytest.fixture
def database(tmp_path: Path) -> Path:
    """Path of a fresh database file."""
    return tmp_path / "test.duckdb"


def disk_full(*args: object, **kwargs: object) -> None:
    """A stand-in for a write step that fails as on a full disk (patched over the real one)."""
    raise duckdb.IOException("disk full")
