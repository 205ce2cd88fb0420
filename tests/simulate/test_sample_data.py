"""The committed sample data is what sample_data/README.md says it is, and can be remade."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.ingest.evaluate import score_record
from pipeline.records.validate import InvalidHand, parse_hand
from pipeline.rules.ruleset import preset

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
DEMO_COMMAND = [
    "simulate", "--hands", "3000", "--tables", "2", "--players", "3",
    "--variant", "pineapple,classic,2-7-pineapple", "--bots", "solid,chaser,solid,chaser,random",
    "--seed", "7", "--start", "2026-09-07T19:00:00Z",
]
CANONICAL_COMMAND = ["simulate", "--hands", "5"]


def check_records(records: list[dict]) -> None:
    """Every record is valid and its points are the rules core's."""
    for record in records:
        hand = parse_hand(record)
        scored = score_record(hand, preset(hand.rules))
        for player, verdict in zip(record["players"], scored.players, strict=True):
            assert player["reported_points"] == verdict.points


def test_demo_set_matches_its_description() -> None:
    with gzip.open(SAMPLES / "demo-hands.jsonl.gz", "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    assert len(records) == 3000
    assert {record["variant"] for record in records} == {"classic", "pineapple", "2-7-pineapple"}
    names = {player["name"] for record in records for player in record["players"]}
    assert 6 <= len(names) <= 8
    times = [datetime.fromisoformat(record["started_at"]) for record in records]
    assert (max(times) - min(times)).days >= 21
    assert len({moment.date() for moment in times}) >= 10
    check_records(records)


def test_readme_states_the_commands() -> None:
    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    assert "ofc " + " ".join(DEMO_COMMAND) in readme
    assert "ofc " + " ".join(CANONICAL_COMMAND) in readme
    assert "make_broken_example.py" in readme


def test_canonical_example_is_remade_byte_for_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "canonical-example.jsonl"
    assert main([*CANONICAL_COMMAND, "--quiet", "--out", str(out)]) == 0
    assert out.read_bytes() == (SAMPLES / "canonical-example.jsonl").read_bytes()
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    check_records(records)
    assert any(player["fantasyland"] for record in records for player in record["players"])


@pytest.mark.slow
def test_demo_set_is_remade_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "demo-hands.jsonl.gz"
    assert main([*DEMO_COMMAND, "--quiet", "--out", str(out)]) == 0
    assert out.read_bytes() == (SAMPLES / "demo-hands.jsonl.gz").read_bytes()


def test_broken_example_mixes_good_lines_with_precise_failures(tmp_path: Path) -> None:
    lines = (SAMPLES / "broken-example.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 7
    with pytest.raises(json.JSONDecodeError):
        json.loads(lines[1])
    reasons = {}
    for number, line in enumerate(lines, start=1):
        if number == 2:
            continue
        try:
            parse_hand(json.loads(line))
        except InvalidHand as error:
            reasons[number] = str(error)
    assert set(reasons) == {3, 5, 6}
    assert "appears twice" in reasons[3]
    assert "discards 1" in reasons[5]
    assert "top overflows" in reasons[6]
    # the script remakes the file from the canonical example
    remade = tmp_path / "broken-example.jsonl"
    subprocess.run([sys.executable, str(SAMPLES / "make_broken_example.py"), str(remade)], check=True)
    assert remade.read_bytes() == (SAMPLES / "broken-example.jsonl").read_bytes()
