"""A record may name a rules file: ``ofc score`` finds ``<name>.toml`` beside the input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

RECORD = {
    "hand_id": "h1", "variant": "pineapple", "rules": "friday", "button": "b",
    "players": [
        # a: legal, wins all three rows against b's foul.
        {"name": "a", "seat": 1, "board": {"top": ["2c", "3d", "4h"],
                                           "middle": ["5c", "5d", "7h", "8s", "9c"],
                                           "bottom": ["Tc", "Td", "Jh", "Js", "Qc"]}},
        # b: top pair of aces over a middle of king high: a foul.
        {"name": "b", "seat": 2, "board": {"top": ["Ac", "Ad", "6h"],
                                           "middle": ["Kc", "2d", "3h", "4s", "6c"],
                                           "bottom": ["Ks", "Kd", "Qh", "Qs", "9h"]}},
    ],
}


def run_score(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "score", str(path), *extra],
        capture_output=True, text=True, cwd=path.parent, timeout=60,
    )


def test_record_naming_a_rules_file_beside_the_input(tmp_path: Path) -> None:
    hands = tmp_path / "hands.jsonl"
    hands.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    missing = run_score(hands)
    assert missing.returncode == 2
    assert "unknown rules 'friday'" in json.loads(missing.stdout)["error"]
    (tmp_path / "friday.toml").write_text('[scoring]\nscoop_bonus = 6\n', encoding="utf-8")
    found = run_score(hands)
    assert found.returncode == 0, found.stderr
    points = {player["name"]: player["points"] for player in json.loads(found.stdout)["players"]}
    # b fouls: a wins 3 rows + scoop 6 = 9 (no royalties: a's rows pay nothing).
    assert points == {"a": 9, "b": -9}
    standard = run_score(hands, "--rules", "standard")
    assert {p["name"]: p["points"] for p in json.loads(standard.stdout)["players"]} == {"a": 6, "b": -6}
