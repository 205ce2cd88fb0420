"""``ofc analyze`` and ``ofc solve-fl`` end to end, on databases built through pipeline.ingest."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline import read
from pipeline.analysis.fantasyland import solve_deal
from pipeline.cli import main
from pipeline.rules.cards import parse_cards
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD
from tests.analysis.hands import query_rows

DEAL = ["Ah", "Ad", "Ac", "Kh", "Kd", "7s", "7c", "5d", "4d", "3d", "2d", "9s", "Ts", "Js"]


def test_analyze_grades_and_refines(simulated_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    player = query_rows(simulated_db, "SELECT player FROM seats ORDER BY player LIMIT 1")[0][0]
    status = main(["analyze", "--db", str(simulated_db), "--player", player, "--hands", "3",
                   "--rollouts", "8", "--jobs", "2", "--quiet"])
    output = capsys.readouterr().out
    assert status == 0
    assert "graded" in output and player in output
    # one figure per player and variant, under one scope line naming the hands and variants
    assert f"scope: the 3 most recent hands with streets of {player}: 3 hands" in output
    assert "hands by variant: pineapple 3" in output
    assert output.count("EV loss of this run") == 1 and "stored grades" not in output
    grades = query_rows(simulated_db, "SELECT hand_key, street, rollouts, chosen_placement, mistake, "
                                 "exact FROM decision_grades ORDER BY hand_key, street")
    normal_hands = query_rows(simulated_db, f"""
        SELECT count(*) FROM (SELECT s.hand_key FROM seats s JOIN hands h USING (hand_key)
        WHERE s.player = '{player}' AND NOT s.fantasyland
        ORDER BY h.started_at DESC LIMIT 3)""")[0][0]
    # 8 selection samples of the play made, more where plays in contention raced on (to 4×)
    assert {row[0] for row in grades} and all(row[2] in (8, 16, 32) for row in grades
                                              if not row[5])
    # the last street is enumerated (every deal of the unseen cards), the others sampled
    assert {row[1] for row in grades if row[5]} == {5}
    assert len(grades) <= 5 * 3 and len({row[0] for row in grades}) <= normal_hands
    assert query_rows(simulated_db, "SELECT DISTINCT player FROM decision_grades") == [(player,)]
    # every chosen placement is what the player did on that street
    for key, street, _, placement, *_ in grades:
        placed = query_rows(simulated_db, f"SELECT card, row_name FROM placements WHERE hand_key = {key} "
                                     f"AND player = '{player}' AND street = {street}")
        for card, row in placed:
            assert f"{row} " in placement and card in placement
    # each decision's alternatives: one chosen, one best, counts add up to the legal placements
    for key, street, *_ in grades:
        alternatives = query_rows(simulated_db, f"""
            SELECT count(*) FILTER (WHERE is_chosen), count(*) FILTER (WHERE is_best),
                   sum(equivalents), max(samples) FROM decision_alternatives
            WHERE hand_key = {key} AND player = '{player}' AND street = {street}""")[0]
        legal = query_rows(simulated_db, f"SELECT legal_placements FROM decision_grades WHERE "
                                    f"hand_key = {key} AND street = {street}")[0][0]
        assert alternatives[:3] == (1, 1, legal)
        assert alternatives[3] in (8, 16, 32) or (street == 5 and alternatives[3] > 32)

    assert main(["analyze", "--db", str(simulated_db), "--player", player, "--hands", "3",
                 "--rollouts", "20", "--jobs", "1", "--quiet"]) == 0
    capsys.readouterr()
    refined = query_rows(simulated_db, "SELECT hand_key, street, rollouts, exact FROM decision_grades "
                                  "ORDER BY hand_key, street")
    assert [row[:2] for row in refined] == [row[:2] for row in grades]
    assert all(row[2] >= 20 for row in refined if not row[3])
    assert any(row[2] > 32 for row in refined if not row[3])


def test_analyze_gives_the_same_numbers_with_any_number_of_jobs(
    simulated_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy.duckdb"
    shutil.copy(simulated_db, copy)
    for database, jobs in ((simulated_db, "1"), (copy, "2")):
        assert main(["analyze", "--db", str(database), "--hands", "2", "--rollouts", "6",
                     "--jobs", jobs, "--seed", "3", "--quiet"]) == 0
    capsys.readouterr()
    sql = ("SELECT hand_key, player, street, alternative, samples, total, diff_total "
           "FROM decision_alternatives ORDER BY ALL")
    first, second = query_rows(simulated_db, sql), query_rows(copy, sql)
    assert first and first == second


def test_certain_positions_and_fantasyland_through_the_cli(
    certain_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "certain.duckdb"
    shutil.copy(certain_db, database)
    assert main(["analyze", "--db", str(database), "--player", "ann", "--rollouts", "30",
                 "--quiet"]) == 0
    output = capsys.readouterr().out
    assert "ann" in output
    last = dict(query_rows(database, """SELECT h.hand_id, g.mistake FROM decision_grades g
                                   JOIN hands h USING (hand_key) WHERE g.street = 5"""))
    assert last == {"A": True, "B": False}
    worst = read.grading.worst_decisions(database, read.scope.Filters(players=("ann",)), 1)
    assert worst.row(0, named=True)["hand_id"] == "A"
    assert worst.row(0, named=True)["street"] == 5
    fantasyland = query_rows(database, "SELECT player, played_value, solver_value, points_given_up "
                                  "FROM fantasyland_grades")
    assert len(fantasyland) == 1
    name, played, solved, given_up = fantasyland[0]
    assert name == "ann" and played == 12 and given_up == solved - played > 0
    summary = read.grading.grading_summary(database, read.scope.Filters(players=("ann",))).row(0, named=True)
    assert summary["fl_hands"] == 1 and summary["fl_given_up_per_hand"] == given_up


def test_analyze_takes_the_race_and_evaluation_options(
    simulated_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the race and with a fixed evaluation count every sampled grade has exactly
    --rollouts selection samples behind the play made and --evaluation behind the loss; bad
    values are refused with a usage error."""
    player = query_rows(simulated_db, "SELECT player FROM seats ORDER BY player LIMIT 1")[0][0]
    assert main(["analyze", "--db", str(simulated_db), "--player", player, "--hands", "2",
                 "--rollouts", "8", "--evaluation", "10", "--contenders", "0",
                 "--evaluation-se", "0", "--jobs", "1", "--quiet"]) == 0
    capsys.readouterr()
    grades = query_rows(simulated_db, "SELECT rollouts, evaluation_rollouts, best_placement = "
                                 "chosen_placement FROM decision_grades WHERE NOT exact")
    assert grades and all(row[0] == 8 for row in grades)
    assert all(row[1] == (0 if row[2] else 10) for row in grades)
    for bad in (["--contenders", "-1"], ["--race-to", "1"], ["--evaluation-se", "-0.5"],
                ["--race-limit", "-2"], ["--second-z", "-1"],
                # not finite: each used to grade silently (nan compares false everywhere), and a
                # negative Fantasyland value stopped a worker with a traceback
                ["--fantasyland-value", "nan"], ["--fantasyland-value", "inf"],
                ["--fantasyland-value", "-5"], ["--min-loss", "nan"], ["--min-loss", "inf"],
                ["--second-z", "nan"], ["--second-z", "inf"], ["--evaluation-se", "inf"],
                # too large for memory or for a 64-bit column: each stopped with a traceback
                ["--rollouts", "1000000000000"], ["--evaluation", "100001"],
                ["--race-to", "400001"], ["--exact-limit", "1000001"],
                ["--seed", "99999999999999999999999"], ["--hands", "1000000000000000000000"]):
        assert main(["analyze", "--db", str(simulated_db), "--quiet", *bad]) == 2
        assert "must be" in capsys.readouterr().err


def test_analyze_refuses_a_missing_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "--db", str(tmp_path / "none.duckdb")]) == 1
    assert "no database" in capsys.readouterr().err
    assert main(["analyze", "--db", str(tmp_path / "none.duckdb"), "--rollouts", "1"]) == 1


def test_solve_fl_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    cards = DEAL.copy()
    assert main(["solve-fl", *cards]) == 0
    text = capsys.readouterr().out
    expected = solve_deal(parse_cards(" ".join(cards)), Variant.PINEAPPLE, STANDARD, 10.0)
    assert f"value {expected.value:g}" in text and "discards" in text
    assert main(["solve-fl", " ".join(cards[:13]), "--format", "json", "--stay-value", "5"]) == 0
    data = json.loads(capsys.readouterr().out)
    thirteen = solve_deal(parse_cards(" ".join(cards[:13])), Variant.CLASSIC, STANDARD, 5.0)
    assert data["variant"] == "classic" and data["value"] == thirteen.value
    assert data["discards"] == [] and len(data["top"]) == 3 and data["stay_value"] == 5.0
    assert main(["solve-fl", *cards, "--variant", "2-7", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["variant"] == "2-7-pineapple"


@pytest.mark.parametrize("arguments, message", [
    (["Ah", "Kd"], "13-17 cards"),
    (["Ah"] * 14, "appears twice"),
    ([*DEAL[:12], "Zz"], "not a card"),
    ([*DEAL[:13], "--rules", "nonesuch"], "unknown rules"),
    # a stay value of nan used to pick a board that "does not stay" (every comparison false)
    ([*DEAL[:13], "--stay-value", "nan"], "stay_value"),
    ([*DEAL[:13], "--stay-value", "inf"], "stay_value"),
    ([*DEAL[:13], "--stay-value", "-1"], "stay_value"),
])
def test_solve_fl_refuses_bad_input(arguments: list[str], message: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve-fl", *arguments]) == 2
    assert message in capsys.readouterr().err


def test_fantasyland_only_compares_every_fantasyland_hand(
    certain_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "fl.duckdb"
    shutil.copy(certain_db, database)
    assert main(["analyze", "--db", str(database), "--fantasyland-only", "--quiet"]) == 0
    assert "graded 0 decisions" in capsys.readouterr().out
    assert query_rows(database, "SELECT count(*) FROM decision_grades") == [(0,)]
    assert query_rows(database, "SELECT player, cards_dealt FROM fantasyland_grades") == [("ann", 14)]


def test_deleting_a_hand_removes_its_grades(
    simulated_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.ingest.delete import delete_hand

    player = query_rows(simulated_db, "SELECT player FROM seats ORDER BY player LIMIT 1")[0][0]
    assert main(["analyze", "--db", str(simulated_db), "--player", player, "--hands", "2",
                 "--rollouts", "4", "--jobs", "1", "--quiet"]) == 0
    capsys.readouterr()
    graded = query_rows(simulated_db, "SELECT DISTINCT g.hand_key, h.site, h.hand_id "
                                 "FROM decision_grades g JOIN hands h USING (hand_key) ORDER BY 1")
    assert len(graded) == 2
    key, site, hand_id = graded[0]

    assert delete_hand(simulated_db, site, hand_id)

    for table in ("decision_grades", "decision_alternatives", "fantasyland_grades"):
        assert query_rows(simulated_db, f"SELECT count(*) FROM {table} WHERE hand_key = {key}") == [(0,)]
    assert query_rows(simulated_db, "SELECT DISTINCT hand_key FROM decision_grades") == [(graded[1][0],)]



def test_refining_stored_grades_gives_the_gap_a_fresh_grade_gives(
    simulated_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second run with more evaluation samples extends the stored gap sums: the gap to the
    grader's bot then equals what one run at the larger count measures from nothing."""
    fresh, small = tmp_path / "fresh.duckdb", tmp_path / "small.duckdb"
    shutil.copy(simulated_db, fresh)
    shutil.copy(simulated_db, small)
    common = ["--hands", "3", "--rollouts", "6", "--contenders", "0", "--evaluation-se", "0",
              "--seed", "3", "--jobs", "1", "--quiet"]
    runs = ((simulated_db, "20"), (simulated_db, "60"), (fresh, "60"), (small, "20"))
    for database, evaluation in runs:
        assert main(["analyze", "--db", str(database), *common, "--evaluation", evaluation]) == 0
    capsys.readouterr()
    sql = ("SELECT hand_key, player, street, exact, policy_alternative, policy_gap, policy_gap_se "
           "FROM decision_grades ORDER BY hand_key, player, street")
    refined, direct, first = query_rows(simulated_db, sql), query_rows(fresh, sql), query_rows(small, sql)
    assert [row[:5] for row in refined] == [row[:5] for row in direct] == [row[:5] for row in first]
    sampled = [index for index, row in enumerate(direct)
               if not row[3] and row[5] not in (None, 0.0)]
    assert len(sampled) >= 3  # sampled decisions off the bot's play: where refining can go wrong
    for index in sampled:
        assert refined[index][5] == pytest.approx(direct[index][5], abs=1e-9)
        assert refined[index][6] == pytest.approx(direct[index][6], abs=1e-9)
        assert direct[index][6] > 0
    # the comparison can tell: the first run's 20 samples gave other gaps than 60 do
    assert any(first[index][5] != pytest.approx(direct[index][5], abs=1e-6) for index in sampled)


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_while_two_workers_grade_stops_the_command_and_its_workers(
    simulated_db: Path,
) -> None:
    """SIGTERM to ``ofc analyze --jobs 2`` while its two workers grade: it stops with 143 and
    its message within seconds, and no worker is left. Before, the workers had the command's
    own SIGTERM handler, lived through the pool's SIGTERM, and the command waited for them
    forever (the run's timeout fails this test)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "analyze", "--db", str(simulated_db),
         "--jobs", "2", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120  # a first run compiles the policy
        while len(_children(process.pid)) < 2:
            assert process.poll() is None and time.monotonic() < deadline, process.returncode
            time.sleep(0.05)
        time.sleep(1.0)  # both are grading now
        process.send_signal(signal.SIGTERM)
        _, errors = process.communicate(timeout=30)
        assert process.returncode == 143, errors
        assert "stopped by SIGTERM" in errors
        deadline = time.monotonic() + 10
        while True:  # the workers are gone with it
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                break
            assert time.monotonic() < deadline, "a worker outlived the command"
            time.sleep(0.1)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
