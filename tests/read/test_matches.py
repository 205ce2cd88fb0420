"""Each match's settlement (pipeline.read.matches, ``ofc settle``) on real databases: the totals
recomputed from the records with the scalar rules core, the settlement with the worked rule of
docs/rules.md section 9, every refusal with its reason, ``--rules`` in memory against
``ofc rescore --rules``, and the command's three formats."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import duckdb
import pytest

from pipeline.cli import main
from pipeline.ingest.driver import ingest_paths
from pipeline.ingest.evaluate import score_record
from pipeline.ingest.rescore import rescore
from pipeline.read.matches import match_settlements, settlement_frame
from pipeline.records.rules_file import load_rules_file
from pipeline.records.validate import parse_hand
from pipeline.rules.ruleset import preset
from tests.ingest.conftest import deal_hand, write_jsonl

CLUB = '[scoring]\ncap = 12\ncap_scope = "match"\nstake = 0.1\n'


def _match(first_seed: int, count: int, match: str, **options) -> list[dict]:
    records = []
    for seed in range(first_seed, first_seed + count):
        record = deal_hand(seed, hand_id=f"{match}-{seed}", **options)
        record["match_id"] = match
        records.append(record)
    return records


def _totals(records: list[dict], rules) -> dict[str, int]:
    """Each player's points over the records, scored one by one by the scalar rules core."""
    totals: dict[str, int] = {}
    for record in records:
        for player in score_record(parse_hand(record), rules).players:
            totals[player.name] = totals.get(player.name, 0) + player.points
    return totals


@pytest.fixture
def club(tmp_path: Path):
    path = tmp_path / "club.toml"
    path.write_text(CLUB, encoding="utf-8")
    return load_rules_file(path)


def _capped_match(club) -> list[dict]:
    """The first run of seeds whose 8-hand match leaves someone below -12 under the club rules."""
    for first in range(0, 400, 8):
        records = _match(first, 8, "m1")
        if min(_totals(records, club).values()) < -12:
            return records
    raise AssertionError("no capped match among the seeds")


def test_a_match_settles_from_its_stored_hands(tmp_path: Path, club) -> None:
    records = _capped_match(club)
    database = tmp_path / "db.duckdb"
    ingest_paths([write_jsonl(tmp_path / "m.jsonl", records)], database, rules=club)
    (match,) = match_settlements(database)
    totals = _totals(records, club)
    assert {total.player: (total.hands, total.points) for total in match.players} == {
        name: (8, points) for name, points in totals.items()}
    assert (match.rules, match.cap, match.stake, match.problem) == ("club", 12, Decimal("0.1"), None)
    # the rule of docs/rules.md, worked out here on the totals
    shortfall = sum(-points - 12 for points in totals.values() if points < -12)
    winnings = sum(points for points in totals.values() if points > 0)
    for name, points in totals.items():
        settled = match.settlement.player(name)
        if points < -12:
            assert (settled.settled, settled.capped, settled.money) == (-12, True, Decimal("-1.20"))
        elif points <= 0:
            assert (settled.settled, settled.capped) == (points, False)
        else:
            assert settled.settled == points - Fraction(shortfall * points, winnings)
    assert sum(p.money for p in match.settlement.players) == 0
    frame = settlement_frame((match,))
    assert frame.columns == ["match", "player", "hands", "points", "settled", "money", "site",
                             "note"]
    assert frame["note"].to_list().count("capped at 12") == sum(
        points < -12 for points in totals.values())


def test_matches_that_cannot_be_settled_say_why(tmp_path: Path, club) -> None:
    two_tables = _match(0, 2, "tables") + _match(2, 1, "tables", table="T2")
    players = _match(3, 2, "players") + _match(5, 1, "players", players=2)
    rules = _match(6, 1, "rules") + _match(7, 1, "rules", rules="flat-trips")
    untabled = _match(8, 1, "untabled") + _match(9, 1, "untabled", table=None)
    fine = _match(10, 2, "fine")
    database = tmp_path / "db.duckdb"
    ingest_paths([write_jsonl(tmp_path / "m.jsonl",
                              two_tables + players + rules + untabled + fine)], database)
    found = {match.match_id: match.problem for match in match_settlements(database)}
    assert found == {
        "tables": "its hands were played at more than one table ('T1', 'T2')",
        "players": "its hands have different players (jun, lee, mara in 2 hands; jun, mara in "
                   "1 hand)",
        "rules": "its hands name different rules (flat-trips, standard)",
        "untabled": "its hands were played at more than one table ('T1' and 1 hand(s) without "
                    "a table)",
        "fine": None,
    }
    frame = settlement_frame(match_settlements(database, match="players"))
    assert frame["settled"].null_count() == frame.height == 3
    assert frame["note"].str.starts_with("not settled: its hands have different players").all()
    # with --rules the records' rule names no longer matter; tables and players still do
    overridden = {match.match_id: match.problem
                  for match in match_settlements(database, rules=club)}
    assert overridden["rules"] is None and overridden["tables"] == found["tables"]


def test_a_rule_set_the_database_does_not_know_is_not_guessed(tmp_path: Path, club) -> None:
    database = tmp_path / "db.duckdb"
    ingest_paths([write_jsonl(tmp_path / "m.jsonl", _match(0, 2, "m1"))], database, rules=club)
    with duckdb.connect(str(database)) as connection:  # as a database made before it was kept
        connection.execute("DELETE FROM meta WHERE key = 'ruleset:club'")
    (match,) = match_settlements(database)
    assert match.settlement is None
    assert match.problem == ("its rule set 'club' is not known here: not a preset, and not kept "
                             "by this database (settle it with --rules FILE)")
    assert match_settlements(database, rules=club)[0].settlement is not None


def test_settling_with_rules_in_memory_agrees_with_a_rescore(tmp_path: Path, club) -> None:
    records = _capped_match(club) + _match(500, 3, "m2")
    database = tmp_path / "db.duckdb"
    ingest_paths([write_jsonl(tmp_path / "m.jsonl", records)], database)
    plain = match_settlements(database)
    assert all(match.rules == "standard" and match.cap == 0 for match in plain)
    in_memory = match_settlements(database, rules=club)
    rescore(database, club)
    after = match_settlements(database)
    assert [(m.match_id, m.players, m.settlement) for m in in_memory] == [
        (m.match_id, m.players, m.settlement) for m in after]
    assert any(p.capped for m in after for p in m.settlement.players)
    # the hands' own points did not move for the match cap: the totals are those of standard
    assert [m.players for m in plain] == [m.players for m in after]


def test_filters_take_matches_whole(tmp_path: Path) -> None:
    records = (_match(0, 2, "m1") + _match(2, 2, "m2", names=("ana", "bo", "cy"))
               + [deal_hand(9, hand_id="loose")])
    database = tmp_path / "db.duckdb"
    ingest_paths([write_jsonl(tmp_path / "m.jsonl", records)], database)
    assert [m.match_id for m in match_settlements(database)] == ["m1", "m2"]
    assert [m.match_id for m in match_settlements(database, players=("bo",))] == ["m2"]
    assert [m.match_id for m in match_settlements(database, match="m1", site="homegame")] == ["m1"]
    assert match_settlements(database, site="elsewhere") == ()
    with duckdb.connect(str(database), read_only=True) as connection:
        session = connection.execute(
            "SELECT s.session_id FROM seats s JOIN hands h USING (hand_key) "
            "WHERE h.hand_id = 'm1-1' AND s.player = 'jun'").fetchone()[0]
    (match,) = match_settlements(database, sessions=(session,))
    assert match.match_id == "m1" and match.hands == 2 and len(match.players) == 3


def test_ofc_settle_prints_text_json_and_csv(tmp_path: Path, club, capsys) -> None:  # noqa: ANN001
    records = _capped_match(club)
    database = tmp_path / "db.duckdb"
    ingest_paths([write_jsonl(tmp_path / "m.jsonl", records)], database)
    rules_file = tmp_path / "club.toml"
    assert main(["settle", "--db", str(database), "--rules", str(rules_file),
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    (match,) = match_settlements(database, rules=club)
    assert [(row["match"], row["player"], row["hands"], row["points"], row["settled"],
             row["money"]) for row in rows] == [
        ("m1", p.player, p.hands, p.points, float(p.settled_shown), float(p.money))
        for p in match.settlement.players]
    assert main(["settle", "--db", str(database), "--rules", str(rules_file),
                 "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [row["money"] for row in table] == [str(p.money) for p in match.settlement.players]
    assert sum(Decimal(row["money"]) for row in table) == 0
    assert main(["settle", "--db", str(database)]) == 0
    text = capsys.readouterr().out
    assert "m1: 8 hands, rules standard (no match cap" in text and "1 match: 1 settled" in text
    assert main(["settle", "--db", str(database), "--match", "nope"]) == 1
    assert "no match 'nope'" in capsys.readouterr().err


def test_preset_rules_settle_without_anything_kept(tmp_path: Path) -> None:
    database = tmp_path / "db.duckdb"
    records = _match(0, 3, "m1")
    ingest_paths([write_jsonl(tmp_path / "m.jsonl", records)], database)
    (match,) = match_settlements(database)
    assert [p.settled for p in match.settlement.players] == [
        total.points for total in match.players]
    assert {p.player: p.points for p in match.settlement.players} == _totals(
        records, preset("standard"))


def test_a_lake_settles_as_the_database_does(tmp_path: Path, club, capsys) -> None:  # noqa: ANN001
    from pipeline.lake.build import build_lake
    from pipeline.lake.engine import LocalEngine

    source = write_jsonl(tmp_path / "m.jsonl", _capped_match(club) + _match(500, 3, "m2"))
    database, lake = tmp_path / "db.duckdb", tmp_path / "lake"
    ingest_paths([source], database, rules=club)
    build_lake([source], lake, LocalEngine(), rules=club)
    outputs = []
    for option in (["--db", str(database)], ["--lake", str(lake)]):
        assert main(["settle", *option, "--format", "csv"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert "capped at 12" in outputs[0] and outputs[0].count("\n") == 7  # header + 6 rows


def test_ofc_rescore_with_a_match_cap_says_the_matches_settle_again(tmp_path: Path, club,
                                                                     capsys) -> None:  # noqa: ANN001
    database = tmp_path / "db.duckdb"
    records = _capped_match(club) + _match(500, 2, "m2") + _match(502, 1, "m2", table="T9")
    ingest_paths([write_jsonl(tmp_path / "m.jsonl", records)], database)
    assert main(["rescore", "--db", str(database), "--rules", str(tmp_path / "club.toml"),
                 "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "2 matches settled again from the new results (1 under a match cap); 1 cannot be "
        "settled (ofc settle says why): see ofc settle")
    assert match_settlements(database, match="m1")[0].cap == 12


def test_the_sample_match_night_settles_as_documented(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    repo = Path(__file__).resolve().parents[2]
    database = tmp_path / "night.duckdb"
    assert main(["ingest", str(repo / "sample_data" / "match-night.csv"), "--db", str(database),
                 "--rules", str(repo / "sample_data" / "match-night.toml"), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["settle", "--db", str(database), "--format", "csv"]) == 0
    printed = capsys.readouterr().out
    docs = (repo / "docs" / "rules.md").read_text(encoding="utf-8")
    block = docs.split("ofc settle --db night.duckdb --format csv\n```\n\n```\n", 1)[1]
    assert printed == block.split("```", 1)[0]
