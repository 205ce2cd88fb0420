"""Untrusted text on a terminal or in a spreadsheet: ``ofc players`` and friends print no control
characters and read no markup, and CSV output neutralises formula cells.

The database here is written by ingest and then given hostile names directly, as an older
database (from before names with control characters were refused) could hold them; its
aggregates are then built again from those names, as that database's next write builds them
(docs/aggregates.md), so the names are printed from the aggregates too.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipeline.ingest.aggregates import rebuild
from pipeline.ingest.driver import ingest_paths
from tests.ingest.conftest import deal_hand, write_jsonl

ESCAPE = "\x1b]0;owned\x07\x1b[31mkofi\x9b2J\u202eevil"
FORMULA = '=HYPERLINK("http://example.invalid","click")'
MARKUP = "[bold]x[/]"


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    database = folder / "hostile.duckdb"
    ingest_paths([write_jsonl(folder / "hands.jsonl", [deal_hand(seed) for seed in range(4)])],
                 database)
    connection = duckdb.connect(str(database))
    for table in ("seats", "results", "evaluations", "boards", "placements", "discards"):
        connection.execute(f"UPDATE {table} SET player = ? WHERE player = 'mara'", [ESCAPE])
        connection.execute(f"UPDATE {table} SET player = ? WHERE player = 'jun'", [FORMULA])
        connection.execute(f"UPDATE {table} SET player = ? WHERE player = 'lee'", [MARKUP])
    for column in ("player", "opponent"):
        for old, new in (("mara", ESCAPE), ("jun", FORMULA), ("lee", MARKUP)):
            connection.execute(f"UPDATE matchups SET {column} = ? WHERE {column} = ?", [new, old])
    connection.execute("BEGIN TRANSACTION")
    rebuild(connection)
    connection.execute("COMMIT")
    connection.close()
    return database


def ofc(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *arguments],
                          capture_output=True, text=True, timeout=120)


def control_characters(text: str) -> list[str]:
    return [character for character in text
            if (ord(character) < 32 and character not in "\n") or 0x7f <= ord(character) <= 0x9f
            or 0x202a <= ord(character) <= 0x202e]


def test_players_table_prints_no_control_characters_and_no_markup(hostile_db: Path) -> None:
    result = ofc("players", "--db", str(hostile_db))
    assert result.returncode == 0, result.stderr
    assert control_characters(result.stdout) == []
    assert "kofi" in result.stdout and "evil" in result.stdout
    assert MARKUP in result.stdout  # shown as text, not read as rich markup


def test_players_json_escapes_every_control_character(hostile_db: Path) -> None:
    result = ofc("players", "--db", str(hostile_db), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert control_characters(result.stdout) == []
    assert {row["player"] for row in json.loads(result.stdout)} >= {ESCAPE, FORMULA, MARKUP}


def test_players_csv_neutralises_formulas(hostile_db: Path) -> None:
    result = ofc("players", "--db", str(hostile_db), "--format", "csv")
    assert result.returncode == 0, result.stderr
    assert control_characters(result.stdout.replace("\r", "")) == []
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    names = {row["player"] for row in rows}
    assert "'" + FORMULA in names
    for row in rows:
        for value in row.values():
            if value and value[0] in "=+@":
                raise AssertionError(f"formula cell {value!r}")
            if value.startswith("-"):
                float(value)  # only numbers may start with a minus


def test_audit_table_prints_no_control_characters(hostile_db: Path) -> None:
    result = ofc("audit", "--db", str(hostile_db))
    assert result.returncode == 0, result.stderr
    assert control_characters(result.stdout) == []


@pytest.mark.parametrize("command", ["ingest", "lake"])
def test_a_hostile_file_name_prints_no_control_characters(command: str, tmp_path: Path) -> None:
    # a file name may hold escape sequences; ofc ingest and ofc lake build print the same
    # per-file table, made safe for a terminal
    name = "\x1b]0;owned\x07\x1b[31mhands\u202e.jsonl"
    path = write_jsonl(tmp_path / name, [deal_hand(1)])
    if command == "ingest":
        result = ofc("ingest", str(path), "--db", str(tmp_path / "x.duckdb"))
    else:
        result = ofc("lake", "build", str(path), "--lake", str(tmp_path / "lake"))
    assert result.returncode == 0, result.stderr
    assert "hands" in result.stdout and "1 stored" in result.stdout
    assert control_characters(result.stdout) == []
