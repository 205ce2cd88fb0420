"""``match_id`` through ingest and the store: stored from every format, a conflicting match id
refused naming both matches, an older database's extras moved into the new column, and the rule
set an override scored with kept in ``meta`` (what settling a match needs)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from pipeline import store
from pipeline.ingest.driver import ingest_mappings, ingest_paths
from pipeline.ingest.rescore import rescore
from pipeline.records.rules_file import load_rules_file
from pipeline.rules.ruleset import ruleset_from_mapping
from tests.ingest.conftest import deal_hand, write_jsonl


def _matched(seed: int, match: str | None, **options) -> dict:
    record = deal_hand(seed, **options)
    if match is not None:
        record["match_id"] = match
    return record


def _stored(database: Path) -> dict[str, tuple]:
    with duckdb.connect(str(database), read_only=True) as connection:
        rows = connection.execute("SELECT hand_id, match_id, extra FROM hands").fetchall()
    return {hand_id: (match_id, extra) for hand_id, match_id, extra in rows}


def test_match_ids_are_stored_from_canonical_lines_and_mappings(tmp_path: Path) -> None:
    # plain records take the columnar path; the integer id and the extra field the record path
    records = [_matched(1, "m1"), _matched(2, "m1"), _matched(3, None), _matched(4, 7)]
    records[1]["note"] = "kept as an extra"
    database = tmp_path / "db.duckdb"
    summary = ingest_paths([write_jsonl(tmp_path / "a.jsonl", records)], database)
    assert summary.stored == 4
    ingest_mappings([_matched(5, " m2 ", hand_id="M5")], database, "upload")
    stored = _stored(database)
    assert {hand_id: match for hand_id, (match, _extra) in stored.items()} == {
        "H1": "m1", "H2": "m1", "H3": None, "H4": "7", "M5": "m2"}
    assert json.loads(stored["H2"][1]) == {"note": "kept as an extra"}


def test_match_column_of_a_boards_csv_is_stored(tmp_path: Path) -> None:
    header = "hand_id,started_at,table,variant,player,seat,top,middle,bottom,fantasyland,match"
    rows = [
        "1,2026-11-01T20:00:00Z,kitchen,pineapple,mara,1,Qh Qd 4c,Kh Kd 7s 7c 2d,As 9s 8s 6s 3s,no,3",
        "1,2026-11-01T20:00:00Z,kitchen,pineapple,jun,2,5h 5d Jc,9h 9d 9c Tc 3d,Th Td Ts 8h 8d,no,3",
    ]
    path = tmp_path / "sheet.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    database = tmp_path / "db.duckdb"
    ingest_paths([path], database)
    (match, extra), = _stored(database).values()
    assert match == "kitchen/2026-11-01/3"
    assert json.loads(extra)["sheet_match"] == "3"


def test_a_hand_stored_in_one_match_is_not_moved_to_another(tmp_path: Path) -> None:
    database = tmp_path / "db.duckdb"
    ingest_paths([write_jsonl(tmp_path / "a.jsonl", [_matched(1, "m1"), _matched(2, None)])],
                 database)
    later = ingest_paths([write_jsonl(tmp_path / "b.jsonl", [_matched(1, "m2"), _matched(2, "m2")])],
                         database)
    assert later.stored == 0 and later.rejected == 2
    with duckdb.connect(str(database), read_only=True) as connection:
        reasons = dict(connection.execute(
            "SELECT hand_id, reason FROM rejects WHERE kind = 'conflict'").fetchall())
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert reasons == {
        "H1": f"conflict: hand 'H1' of site 'homegame' is already stored from {a}:1 in match "
              f"'m1'; this record ({b}:1) puts it in match 'm2'",
        "H2": f"conflict: hand 'H2' of site 'homegame' is already stored from {a}:2 in no "
              f"match; this record ({b}:2) puts it in match 'm2'",
    }
    assert {hand: match for hand, (match, _extra) in _stored(database).items()} == {
        "H1": "m1", "H2": None}


def test_an_older_database_gets_its_match_ids_from_the_extras(tmp_path: Path) -> None:
    # before this column, a record's match_id was kept among the hand's extras (and hashed so)
    records = [_matched(1, "m1"), _matched(2, 9), _matched(3, None)]
    records[0]["note"] = "n"
    source = write_jsonl(tmp_path / "a.jsonl", records)
    database = tmp_path / "db.duckdb"
    ingest_paths([source], database)
    with duckdb.connect(str(database)) as connection:
        extras = {"H1": '{"match_id": "m1", "note": "n"}', "H2": '{"match_id": 9}'}
        for hand_id, extra in extras.items():
            connection.execute("UPDATE hands SET extra = ? WHERE hand_id = ?", [extra, hand_id])
        connection.execute("ALTER TABLE hands DROP COLUMN match_id")
        connection.execute("DELETE FROM meta WHERE key = 'schema_fingerprint'")
    store.connect(database).close()  # opened for writing: migrated
    stored = _stored(database)
    assert {hand: match for hand, (match, _extra) in stored.items()} == {
        "H1": "m1", "H2": "9", "H3": None}
    assert json.loads(stored["H1"][1]) == {"note": "n"} and stored["H2"][1] is None
    # the hands again, written otherwise: duplicates (their hashes counted a text match id the
    # same way; a whole-number one was hashed as a number then, as text now)
    copy = tmp_path / "copy.jsonl"
    copy.write_text("".join(json.dumps(record, separators=(",", ":")) + "\n"
                            for record in (records[0], records[2])), encoding="utf-8")
    again = ingest_paths([copy], database)
    assert (again.stored, again.duplicates, again.rejected) == (0, 2, 0)
    assert _stored(database)["H1"][0] == "m1"


def test_an_override_rule_set_is_kept_and_a_rescore_replaces_it(tmp_path: Path) -> None:
    rules_path = tmp_path / "club.toml"
    rules_path.write_text('[scoring]\ncap = 40\ncap_scope = "match"\nstake = 0.05\n',
                          encoding="utf-8")
    club = load_rules_file(rules_path)
    database = tmp_path / "db.duckdb"
    ingest_paths([write_jsonl(tmp_path / "a.jsonl", [_matched(1, "m1")])], database, rules=club)

    def kept() -> dict[str, object]:
        with duckdb.connect(str(database), read_only=True) as connection:
            rows = connection.execute(
                "SELECT key, value FROM meta WHERE starts_with(key, 'ruleset:')").fetchall()
        return {key: ruleset_from_mapping(json.loads(value)) for key, value in rows}

    assert kept() == {"ruleset:club": club}
    rescore(database)
    assert kept() == {}
    other = ruleset_from_mapping({"name": "other", "scoring": {"cap": 5, "cap_scope": "match"}})
    rescore(database, other)
    assert kept() == {"ruleset:other": other}
