"""The report's money per match (pipeline.report.money): shown when a stake is set, with the
figures of ``ofc settle`` (the read model's settlement), left out without a stake."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

from pipeline import read
from pipeline.ingest.driver import ingest_paths
from pipeline.records.rules_file import load_rules_file
from pipeline.report import ReportRequest, create_report, report_dict
from pipeline.report.money import match_money_section
from pipeline.report.render import render
from tests.ingest.conftest import deal_hand, write_jsonl


def _records() -> list[dict]:
    records = []
    for match, seeds, day in (("m1", range(0, 6), "01"), ("m2", range(6, 10), "02")):
        for seed in seeds:
            record = deal_hand(seed, hand_id=f"{match}-{seed}",
                               started_at=f"2026-11-{day}T20:{seed:02d}:00Z")
            record["match_id"] = match
            records.append(record)
    return records + [deal_hand(40, hand_id="loose", started_at="2026-11-03T20:00:00Z")]


def _database(tmp_path: Path, rules_text: str | None) -> Path:
    database = tmp_path / "db.duckdb"
    rules = None
    if rules_text is not None:
        path = tmp_path / "club.toml"
        path.write_text(rules_text, encoding="utf-8")
        rules = load_rules_file(path)
    ingest_paths([write_jsonl(tmp_path / "m.jsonl", _records())], database, rules=rules)
    return database


def test_money_per_match_follows_the_settlement(tmp_path: Path) -> None:
    database = _database(tmp_path, '[scoring]\ncap = 8\ncap_scope = "match"\nstake = 0.25\n')
    report = create_report(database, ReportRequest("jun"))
    money = report.money
    assert money is not None
    settled = {match.match_id: match.settlement.player("jun")
               for match in read.matches.match_settlements(database)}
    assert [(line.match, line.points, line.settled, line.money, line.stake) for line in
            money.lines] == [
        (name, player.points, float(player.settled_shown), float(player.money), "0.25")
        for name, player in settled.items()]
    assert Decimal(money.total_text) == sum(player.money for player in settled.values())
    assert report_dict(report)["money"]["lines"][0]["match"] == "m1"
    markdown = render(report, "md")
    assert "## Money per match" in markdown and f"Total: **{money.total_text}**" in markdown
    assert '<section id="money">' in render(report, "html")
    # the report's dates take matches by their first hand's day
    only_first = match_money_section(database, ("jun",), until=date(2026, 11, 1))
    assert [line.match for line in only_first.lines] == ["m1"]


def test_no_stake_no_money_section(tmp_path: Path) -> None:
    database = _database(tmp_path, None)
    report = create_report(database, ReportRequest("jun"))
    assert report.money is None
    assert "Money per match" not in render(report, "md")
