"""The commands: ofc ingest / rescore / players / audit / export, as a user runs them."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipeline.cli import main
from tests.ingest.conftest import count, deal_hand, query, write_jsonl

OFC = [sys.executable, "-c", "import sys; from pipeline.cli import main; sys.exit(main())"]


def test_ingest_help_names_the_default_database(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["ingest", "--help"])
    assert "ofc.duckdb in the current folder" in " ".join(capsys.readouterr().out.split())


def test_ingest_prints_a_summary_and_progress(
    tmp_path: Path, arena_logs: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_jsonl(arena_logs / "mine.jsonl", [deal_hand(1), "oops"])
    result = subprocess.run(
        [*OFC, "ingest", str(arena_logs)], capture_output=True, text=True, cwd=tmp_path,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr  # rejected records are not fatal
    assert (tmp_path / "ofc.duckdb").is_file()  # the default database, in the current folder
    out = result.stdout
    for expected in ("mine.jsonl", "ofc.jsonl", "ofc-pineapple.jsonl", "poker-arena", "complete",
                     "line 2: invalid JSON", "total: 3 file(s), 9 records, 8 stored, "
                     "0 duplicates, 1 rejected"):
        assert expected in " ".join(out.split()) or expected in out, expected
    assert "hands/s" in result.stderr and "9 hands" in result.stderr

    again = subprocess.run([*OFC, "ingest", str(arena_logs), "--quiet"], capture_output=True,
                           text=True, cwd=tmp_path, timeout=120)
    assert again.returncode == 0
    assert "nothing new: every file was already ingested, unchanged" in again.stdout
    assert again.stderr == ""
    # The other commands find the default database in the current folder too.
    monkeypatch.chdir(tmp_path)
    assert main(["players", "--format", "csv"]) == 0
    players = capsys.readouterr().out.splitlines()
    assert players[0].startswith("player,hands,points") and len(players) == 1 + 7


def test_fatal_problems_exit_non_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write_jsonl(tmp_path / "a.jsonl", [deal_hand(1)])
    database = tmp_path / "db.duckdb"

    assert main(["ingest", str(tmp_path / "missing.jsonl"), "--db", str(database)]) == 1
    assert "no such file or folder" in capsys.readouterr().err
    assert main(["ingest", str(tmp_path / "*.nothing"), "--db", str(database)]) == 1
    assert "no files match" in capsys.readouterr().err

    not_a_database = tmp_path / "notes.duckdb"
    not_a_database.write_text("this is not a database\n", encoding="utf-8")
    assert main(["ingest", str(good), "--db", str(not_a_database), "--quiet"]) == 1
    assert "cannot use database" in capsys.readouterr().err

    assert main(["players", "--db", str(tmp_path / "none.duckdb")]) == 1
    assert "no database at" in capsys.readouterr().err


def test_rules_variant_and_format_options(tmp_path: Path, arena_logs: Path) -> None:
    database = tmp_path / "db.duckdb"
    renamed = tmp_path / "in" / "log.jsonl"
    renamed.parent.mkdir()
    renamed.write_bytes((arena_logs / "ofc-pineapple.jsonl").read_bytes())

    assert main(["ingest", str(renamed), "--db", str(database), "--variant", "ofc-pineapple",
                 "--workers", "2",
                 "--format", "poker-arena", "--rules", "progressive", "--quiet"]) == 0

    assert count(database, "hands") == 3
    assert query(database, "SELECT DISTINCT ruleset FROM evaluations") == [("progressive",)]
    assert query(database, "SELECT DISTINCT rules FROM hands") == [("poker-arena-pineapple",)]


def test_rescore_command_with_a_rules_file(tmp_path: Path, capsys) -> None:
    database = tmp_path / "db.duckdb"
    main(["ingest", str(write_jsonl(tmp_path / "a.jsonl", [deal_hand(s) for s in range(10)])),
          "--db", str(database), "--quiet", "--workers", "2", "--batch-size", "4"])
    assert count(database, "hands") == 10
    rules = tmp_path / "scoop6.toml"
    rules.write_text('name = "scoop6"\n[scoring]\nscoop_bonus = 6\n', encoding="utf-8")
    capsys.readouterr()

    assert main(["rescore", "--db", str(database), "--rules", str(rules), "--quiet"]) == 0

    assert "re-scored 10 hands (30 player results) under scoop6" in capsys.readouterr().out
    assert query(database, "SELECT DISTINCT ruleset FROM evaluations") == [("scoop6",)]
    assert main(["rescore", "--db", str(database), "--rules", "nope", "--quiet"]) == 2


def test_players_in_three_formats(tmp_path: Path, capsys) -> None:
    database = tmp_path / "db.duckdb"
    records = [deal_hand(seed) for seed in range(8)]
    records[0]["players"][2]["fantasyland"] = False
    main(["ingest", str(write_jsonl(tmp_path / "a.jsonl", records)), "--db", str(database),
          "--quiet"])
    capsys.readouterr()

    assert main(["players", "--db", str(database), "--format", "json"]) == 0
    rows = {row["player"]: row for row in json.loads(capsys.readouterr().out)}
    assert set(rows) == {"mara", "jun", "lee"}
    connection = duckdb.connect(str(database), read_only=True)
    for name, row in rows.items():
        points, fouls, royalties = connection.execute(
            "SELECT sum(r.points), count(*) FILTER (WHERE e.foul), sum(e.royalties) "
            "FROM results r JOIN evaluations e USING (hand_key, player) WHERE player = ?", [name],
        ).fetchall()[0]
        scoops = connection.execute(
            "SELECT count(*) FROM matchups WHERE player = ? AND scoop = 1", [name]
        ).fetchall()[0][0]
        assert row["hands"] == 8
        assert (row["points"], row["fouls"], row["royalties"], row["scoops"]) == (
            points, fouls, royalties, scoops)
        assert row["points_per_hand"] == round(points / 8, 3)
        assert row["foul_rate"] == round(fouls / 8, 4)
    connection.close()
    assert sum(row["points"] for row in rows.values()) == 0

    assert main(["players", "--db", str(database), "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [row["player"] for row in table] == list(rows)  # same order: best total first
    assert table[0]["fantasyland_hands"] == "0"

    assert main(["players", "--db", str(database)]) == 0
    assert "points per hand" in capsys.readouterr().out


def test_audit_command_lists_disagreements_with_reasons(tmp_path: Path, capsys) -> None:
    database = tmp_path / "db.duckdb"
    record = deal_hand(4, players=2)
    record["players"][0]["reported_points"] = 1000
    main(["ingest", str(write_jsonl(tmp_path / "a.jsonl", [record, deal_hand(5)])),
          "--db", str(database), "--quiet"])
    capsys.readouterr()

    assert main(["audit", "--db", str(database), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(row["hand_id"], row["player"]) for row in rows] == [("H4", "mara")]
    assert rows[0]["disagreement"].startswith("points: reported 1000, re-scored ")

    assert main(["audit", "--db", str(database)]) == 0
    out = capsys.readouterr().out
    assert "1 hand(s) disagree" in out and "H4" in out


def test_export_parquet_partitioned_by_site_and_month(tmp_path: Path, arena_logs: Path) -> None:
    database = tmp_path / "db.duckdb"
    write_jsonl(arena_logs / "home.jsonl", [
        deal_hand(1, started_at="2026-10-31T23:00:00Z"), deal_hand(2, started_at="2026-11-01T01:00:00Z"),
    ])
    main(["ingest", str(arena_logs), "--db", str(database), "--quiet"])
    out_dir = tmp_path / "export"

    assert main(["export", "--parquet", str(out_dir), "--db", str(database)]) == 0

    partitions = sorted(
        str(path.parent.relative_to(out_dir / "placements"))
        for path in (out_dir / "placements").rglob("*.parquet")
    )
    assert partitions == ["site=homegame/month=2026-10", "site=homegame/month=2026-11",
                          "site=poker-arena/month=unknown"]
    for table in ("hands", "seats", "placements", "evaluations", "matchups", "results"):
        exported = duckdb.sql(
            f"SELECT count(*) FROM read_parquet('{out_dir}/{table}/**/*.parquet', "
            "hive_partitioning = true)"
        ).fetchall()[0][0]
        assert exported == count(database, table), table
    assert (out_dir / "rejects.parquet").is_file()
    months = duckdb.sql(
        f"SELECT DISTINCT month FROM read_parquet('{out_dir}/hands/**/*.parquet', "
        "hive_partitioning = true) ORDER BY 1"
    ).fetchall()
    assert months == [("2026-10",), ("2026-11",), ("unknown",)]
