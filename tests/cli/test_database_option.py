"""``--db`` naming an existing file that is not a DuckDB database is refused by every command.

DuckDB opens such a file as an empty in-memory database: before this check ``ofc ingest --db
hands.jsonl`` printed "stored", exited 0 and kept nothing.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import duckdb
import pytest

from pipeline import store
from pipeline.cli import build_parser, main
from pipeline.ingest.driver import ingest_paths
from pipeline.ingest.errors import DatabaseError
from tests.ingest.conftest import deal_hand, write_jsonl

# Each command that takes --db, with the other arguments it needs to get as far as the database.
COMMANDS: dict[str, list[str]] = {
    "dashboard": ["dashboard", "--no-browser"],
    "demo": ["demo", "--no-serve"],
    "record": ["record", "--players", "a,b"],
    "ingest": ["ingest", "{hands}"],
    "watch": ["watch", "{hands}", "--once"],
    "rescore": ["rescore"],
    "players": ["players"],
    "settle": ["settle"],
    "audit": ["audit"],
    "export": ["export", "--parquet", "{out}"],
    "analyze": ["analyze"],
    "report": ["report", "a"],
}


def commands_with_database_option() -> set[str]:
    """Every ``ofc`` command whose parser has ``--db``."""
    parser = build_parser()
    subparsers = next(action for action in parser._actions
                      if isinstance(action, argparse._SubParsersAction))
    return {name for name, command in subparsers.choices.items()
            if any("--db" in action.option_strings for action in command._actions)}


def test_the_list_covers_every_command_with_a_database_option() -> None:
    assert commands_with_database_option() == set(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_data_file_given_as_database_is_refused(command: str, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    hands = write_jsonl(tmp_path / "hands.jsonl", [deal_hand(1), deal_hand(2)])
    before = hashlib.sha256(hands.read_bytes()).hexdigest()
    arguments = [part.format(hands=hands, out=tmp_path / "out") for part in COMMANDS[command]]
    status = main([*arguments, "--db", str(hands)])
    error = capsys.readouterr().err
    assert status == 1
    assert "is not a DuckDB database" in error and str(hands) in error
    assert hashlib.sha256(hands.read_bytes()).hexdigest() == before
    assert not (tmp_path / "out").exists()


def test_the_library_refuses_it_too(tmp_path: Path) -> None:
    hands = write_jsonl(tmp_path / "hands.jsonl", [deal_hand(1)])
    with pytest.raises(DatabaseError, match="is not a DuckDB database"):
        ingest_paths([hands], hands)
    with pytest.raises(store.NotADatabase):
        store.connect(hands, read_only=True)
    with pytest.raises(store.NotADatabase, match="is a folder"):
        store.connect(tmp_path)


def test_new_and_real_databases_are_still_accepted(tmp_path: Path) -> None:
    hands = write_jsonl(tmp_path / "hands.jsonl", [deal_hand(1)])
    database = tmp_path / "new.duckdb"
    assert ingest_paths([hands], database).stored == 1
    assert ingest_paths([write_jsonl(tmp_path / "more.jsonl", [deal_hand(2)])], database).stored == 1
    connection = store.connect(database, read_only=True)
    assert connection.execute("SELECT count(*) FROM hands").fetchall() == [(2,)]
    connection.close()
    assert isinstance(store.NotADatabase("x"), duckdb.Error)
