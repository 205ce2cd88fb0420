"""Golden files for ``ofc score`` (docs/hand-format.md) and ``ofc board``, run through the real CLI
in a subprocess. The records in tests/golden/score/hands.jsonl were built by hand; every
expected number below was derived by hand (boards P, Q, R, F as in test_scoring.py):

g1 classic, mara R v jun P, button jun (order mara, jun):
   R scoops: 3 + 3 + royalties 15 (QQ 7, straight 4, flush 4) = +21; R has QQ: 13 cards.
g2 classic, mara P, jun Q, lee R: P -1 - 21 = -22, Q +1 - 21 = -20, R +42.
g3 classic, + ola F (AA top over QQ middle: foul): F pays 6 to P and Q, 21 to R:
   P -16, Q -14, R 63, F -33.
g4 pineapple, rules progressive:
   mara A  Kh Kd 4c / 9c 9d 9h 5s 5c / Ac Ad Ah As 2c   KK 8, full house 12, quads 10 = 30
   jun  B  Qs Jd 3h / Tc Td 6h 7s 8c / Kc Ks 8d 8h 2d   nothing
   lee  C  7c 7d 2h / Jc Js Qd Qh 3c / 2s 3s 4d 5d 6d   77 2, two pair, 6-high straight 2 = 4
   A v B: scoop 6 + 30 = 36;  A v C: scoop 6 + 26 = 32;  C v B: scoop 6 + 4 = 10
   A 68, B -46, C -22; A enters progressive Fantasyland with KK: 15 cards.
g5 pineapple, jun in Fantasyland (14 dealt, 1 discarded):
   mara  Ac Ad 3c / Qs Qd Kc Kd 2c / 7c 7d 7h 3d 3s    AA 9, two pair, full house 6 = 15
   jun   5c 5d 5h / 6s 7s 8d 9h Tc / 2h 4h 8h Jh Kh    555 13, straight 4, flush 4 = 21
   top jun, middle jun, bottom mara: jun +1 + (21 - 15) = +7, mara -7.
   mara enters with AA (14); jun stays with trips on top (14).
g6 2-7 pineapple:
   mara A  Kh Kd 3h / 7c 5d 4h 3s 2c / Ac Ad Ah 9s 6c   KK 8, 7-5-4-3-2 8 = 16; both: 15 cards
   jun  B  Qs Jd 4s / 8c 6d 5h 3d 2d / Ks Kc Qh Qd 9h   8-low 2
   lee  D  Js Jh 2h / 9c 9d 7d 6h 4c / Tc Td Th 8s 8d   pair in the middle: foul
   A v B: scoop 6 + 14 = 20;  A v D: 6 + 16 = 22;  B v D: 6 + 2 = 8
   A 42, B -12, D -30.

With --rules house.toml (scoop bonus 6, per-hand cap 30, standard Fantasyland):
g1 R +24 (3 + 6 + 15).  g2 order P, Q, R: (P,Q) -1; (P,R) P pays 24: -25; (Q,R) Q pays 24: -23;
   R +48.
g3 button jun, order lee R, ola F, mara P, jun Q: pair values R v x = 24, P v F = Q v F = 9,
   P v Q = -1.  (R,F) F -24; (R,P) P -24; (R,Q) Q -24: R +72; (F,P) F can pay only 6: F -30,
   P -18; (F,Q) F is done: 0; (P,Q) P -19, Q -23.  -> P -19, Q -23, R 72, F -30.
g4 button mara, order jun B, lee C, mara A: (B,C) C +13 (3 + 6 + 4): B -13; (B,A) A is owed
   39, B can pay 17: B -30, A +17; (C,A) C pays 35 (3 + 6 + 26): C -22, A +52.  KK: 14 cards.
g5 unchanged (no scoop, within the cap): -7 / +7.
g6 order mara, jun, lee: (A,B) 3 + 6 + 14 = 23; (A,D) 3 + 6 + 16 = 25: D -25;
   (B,D) B is owed 11, D can pay 5: D -30, B -23 + 5 = -18.  -> A 48, B -18, D -30.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pipeline.cli import main as ofc_main
from pipeline.rules.board import evaluate_board
from pipeline.rules.cards import parse_cards
from pipeline.rules.game import Variant

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "score"
# the ``ofc`` console script is pipeline.cli:main (pyproject.toml)
OFC = [sys.executable, "-c", "import sys; from pipeline.cli import main; sys.exit(main())"]


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    return subprocess.run(
        [*OFC, *args], cwd=REPO, capture_output=True, text=True, input=stdin, env=env, timeout=60
    )


def expected_lines(name: str) -> list[str]:
    return (GOLDEN / name).read_text(encoding="utf-8").splitlines()


def test_golden_inputs_are_the_hand_designed_boards():
    # guard against the input file drifting from the derivations above: rebuild each board
    boards = {}
    for line in (GOLDEN / "hands.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for player in record["players"]:
            rows = {"top": [], "middle": [], "bottom": []}
            for street in player["streets"]:
                for row, cards in street["placed"].items():
                    rows[row] += cards
            boards[(record["hand_id"], player["name"])] = " / ".join(
                " ".join(sorted(rows[row])) for row in ("top", "middle", "bottom")
            )
    assert boards[("g4-pineapple-3p", "mara")] == "4c Kd Kh / 5c 5s 9c 9d 9h / 2c Ac Ad Ah As"
    assert boards[("g5-pineapple-fantasyland", "jun")] == "5c 5d 5h / 6s 7s 8d 9h Tc / 2h 4h 8h Jh Kh"
    assert boards[("g6-2-7-3p", "lee")] == "2h Jh Js / 4c 6h 7d 9c 9d / 8d 8s Tc Td Th"
    assert boards[("g3-classic-4p", "ola")] == "3s Ah As / 4d 5s 7s Qc Qs / 8d 9d Jh Js Th"


def test_score_golden():
    result = run("score", str(GOLDEN / "hands.jsonl"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected_lines("hands.expected.jsonl")


def test_score_golden_from_stdin():
    text = (GOLDEN / "hands.jsonl").read_text(encoding="utf-8")
    result = run("score", "-", stdin=text)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected_lines("hands.expected.jsonl")


def test_score_golden_with_rules_override():
    result = run("score", str(GOLDEN / "hands.jsonl"), "--rules", str(GOLDEN / "house.toml"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected_lines("hands.house.expected.jsonl")


def test_score_golden_with_preset_override():
    # --rules progressive: only g4 used it already; g5's AA entry becomes 16 cards, its stay 14;
    # g1-g3 (classic) and g6 (2-7) are unaffected
    result = run("score", str(GOLDEN / "hands.jsonl"), "--rules", "progressive")
    assert result.returncode == 0, result.stderr
    actual = [json.loads(line) for line in result.stdout.splitlines()]
    expected = [json.loads(line) for line in expected_lines("hands.expected.jsonl")]
    expected[4]["players"][0]["fantasyland_cards"] = 16
    assert actual == expected


def test_score_invalid_lines():
    # line 2 repeats mara's Qh in jun's first street; line 3 is cut-off JSON
    result = run("score", str(GOLDEN / "invalid.jsonl"))
    assert result.returncode == 2
    actual = result.stdout.splitlines()
    expected = expected_lines("invalid.expected.jsonl")
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        wanted = json.loads(want)
        if "error_mentions" not in wanted:
            assert got == want
            continue
        error = json.loads(got)
        assert list(error) == ["line", "hand_id", "error"]
        assert error["line"] == wanted["line"]
        assert error["hand_id"] == wanted["hand_id"]
        assert isinstance(error["error"], str) and error["error"]
        for word in wanted["error_mentions"]:
            assert word in error["error"]


class InProcess:
    """``ofc`` run in this process (cheaper than a subprocess for the small ``board`` checks)."""

    def __init__(self, capsys, monkeypatch):
        self.capsys = capsys
        monkeypatch.setenv("COLUMNS", "200")
        monkeypatch.setenv("NO_COLOR", "1")

    def __call__(self, *args: str) -> subprocess.CompletedProcess:
        code = ofc_main(list(args))
        captured = self.capsys.readouterr()
        return subprocess.CompletedProcess(args, code, captured.out, captured.err)


def test_score_unknown_rules_override_is_an_error(capsys, monkeypatch):
    result = InProcess(capsys, monkeypatch)("score", str(GOLDEN / "hands.jsonl"), "--rules", "no-such-rules")
    assert result.returncode == 2
    assert "no-such-rules" in result.stderr


def _normalised(text: str) -> str:
    return " ".join(text.split())


def test_board_prints_the_foul_reason(capsys, monkeypatch):
    run = InProcess(capsys, monkeypatch)
    text = "Qs Qh 5d / Qc Qd 4h 3s 2c / Ac Ad Ah 9s 9c"
    result = run("board", text, "--variant", "classic")
    assert result.returncode == 0, result.stderr
    reason = evaluate_board(*(parse_cards(part) for part in text.split("/")), Variant.CLASSIC).foul_reason
    assert "top" in reason and "middle" in reason
    assert "FOUL" in result.stdout
    assert _normalised(reason) in _normalised(result.stdout)


def test_board_prints_the_lowball_foul_reason(capsys, monkeypatch):
    run = InProcess(capsys, monkeypatch)
    text = "Kh Kd 3h / Jc 9d 8h 7s 5c / Ac Ad Ah 4s 6c"
    result = run("board", text, "--variant", "2-7-pineapple")
    assert result.returncode == 0, result.stderr
    reason = evaluate_board(
        *(parse_cards(part) for part in text.split("/")), Variant.LOWBALL_PINEAPPLE
    ).foul_reason
    assert "middle" in reason
    assert _normalised(reason) in _normalised(result.stdout)


def test_board_legal_board_is_not_a_foul(capsys, monkeypatch):
    run = InProcess(capsys, monkeypatch)
    result = run("board", "Qh Qd 2h / 5c 6c 7h 8c 9c / 2s 4s 6s Ts Ks", "--variant", "classic")
    assert result.returncode == 0, result.stderr
    assert "FOUL" not in result.stdout
    assert "13" in result.stdout  # QQ in classic: 13 Fantasyland cards


def test_board_bad_card_exits_2_naming_it(capsys, monkeypatch):
    run = InProcess(capsys, monkeypatch)
    result = run("board", "Qs Qh 5x / Qc Qd 4h 3s 2c / Ac Ad Ah 9s 9c")
    assert result.returncode == 2
    assert "5x" in result.stderr


def test_cli_runs_as_a_module():
    # the brief runs the CLI as ``python -m pipeline.cli score FILE``
    result = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "score", str(GOLDEN / "hands.jsonl")],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected_lines("hands.expected.jsonl")
