"""Hand-made and simulated hands for the grading tests, stored through pipeline.ingest."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline import store
from pipeline.analysis.decisions import Decision, decision_at, load_hands, select_hands
from pipeline.ingest.driver import ingest_paths
from pipeline.rules.game import Variant
from pipeline.simulate.simulation import SimulationConfig, simulate


def _street(dealt: str, placed: dict[str, str], discarded: str = "") -> dict:
    return {
        "dealt": dealt.split(),
        "placed": {row: cards.split() for row, cards in placed.items()},
        "discarded": discarded.split(),
    }


# The last street of "ann" (2 players, pineapple): before it ann has top Ks 3h, middle Qc Qd 4h 6s
# and bottom As Ad Ac 7s 7d (a full house: the bottom can never be beaten). Dealt Kh 2c 5d:
# Kh on top makes KK over QQ — a foul, whatever else happens; Kh in the middle cannot foul.
ANN_STREETS = [
    _street("As Ad Ac Ks Qc", {"top": "Ks", "middle": "Qc", "bottom": "As Ad Ac"}),
    _street("7s 7d 9c", {"bottom": "7s 7d"}, "9c"),
    _street("Qd 3h Tc", {"top": "3h", "middle": "Qd"}, "Tc"),
    _street("4h 6s Jc", {"middle": "4h 6s"}, "Jc"),
]
ANN_FOULS = _street("Kh 2c 5d", {"top": "Kh", "middle": "2c"}, "5d")
ANN_SAFE = _street("Kh 2c 5d", {"top": "2c", "middle": "Kh"}, "5d")
BOB_STREETS = [
    _street("9s 9d Th Td 2h", {"top": "2h", "bottom": "9s 9d Th Td"}),
    _street("Jd 5h 3s", {"middle": "5h", "bottom": "Jd"}, "3s"),
    _street("5s 6c 8s", {"middle": "5s 6c"}, "8s"),
    _street("6d 8c 4s", {"middle": "6d 8c"}, "4s"),
    _street("3c 4c Js", {"top": "3c 4c"}, "Js"),
]


def certain_hand(hand_id: str, fouls: bool, started_at: str = "2026-11-01T20:00:00Z") -> dict:
    """A two-player pineapple hand whose last street for ann is certain (see above)."""
    return {
        "hand_id": hand_id, "site": "test", "table": "T1", "started_at": started_at,
        "variant": "pineapple", "rules": "standard", "button": "bob",
        "players": [
            {"name": "ann", "seat": 1, "fantasyland": False,
             "streets": [*ANN_STREETS, ANN_FOULS if fouls else ANN_SAFE]},
            {"name": "bob", "seat": 2, "fantasyland": False, "streets": BOB_STREETS},
        ],
    }


def fantasyland_hand(hand_id: str, started_at: str = "2026-11-01T21:00:00Z") -> dict:
    """A pineapple hand in which ann plays Fantasyland (14 cards) and sets a weak legal board.

    ann sets KK / AA / a club flush (8 + 0 + 4 = 12 in royalties, no stay); the best board
    (checked by brute force in the tests) is worth more.
    """
    ann = _street(
        "Ah Ad Ac Kh Kd 2c 7c 9c Tc Qc 4d 6h 8h Qs",
        {"top": "Kh Kd Qs", "middle": "Ah Ad 4d 6h 8h", "bottom": "Ac 7c 9c Tc Qc"}, "2c",
    )
    return {
        "hand_id": hand_id, "site": "test", "table": "T1", "started_at": started_at,
        "variant": "pineapple", "rules": "standard", "button": "bob",
        "players": [
            {"name": "ann", "seat": 1, "fantasyland": True, "streets": [ann]},
            {"name": "bob", "seat": 2, "fantasyland": False, "streets": BOB_STREETS},
        ],
    }


def write_records(path: Path, records: list[dict]) -> Path:
    """Write canonical records as JSON Lines."""
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def build_database(folder: Path, records: list[dict], name: str = "hands") -> Path:
    """Ingest records into a new database in ``folder``; returns its path."""
    source = write_records(folder / f"{name}.jsonl", records)
    database = folder / f"{name}.duckdb"
    summary = ingest_paths([source], database)
    assert summary.rejected == 0, summary.first_reasons
    assert summary.stored == len(records)
    return database


def simulated_records(hands: int, variant: Variant = Variant.PINEAPPLE, seed: int = 7,
                      players: int = 3) -> list[dict]:
    """Hands played by the simulator's bots, as canonical records."""
    config = SimulationConfig(hands=hands, seed=seed, variants=(variant,), players=players)
    records = []
    for output in simulate(config):
        records.extend(json.loads(line) for line in output.lines.decode("utf-8").splitlines())
    return records


def database_decisions(database: Path, streets: tuple[int, ...] | None = None) -> list[Decision]:
    """Every decision stored in ``database`` (every seat not in Fantasyland), at ``streets``
    (0-based street indexes; all of a seat's streets when None)."""
    connection = store.connect(database, read_only=True)
    try:
        hands = load_hands(connection, select_hands(connection))
    finally:
        connection.close()
    return [decision_at(hand, seat, street) for hand in hands
            for seat, play in enumerate(hand.seats) if not play.fantasyland
            for street in (range(len(play.streets)) if streets is None else streets)]


def query_rows(database: Path, sql: str) -> list[tuple]:
    """The rows of one query on a database (opened read-only, then closed)."""
    connection = store.connect(database, read_only=True)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()
