"""``ofc record`` driven through piped stdin in a subprocess, against a real DuckDB file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb

from pipeline.store import hand_key
from tests.live import scenario as sc

REPO = Path(__file__).resolve().parents[2]


def ofc(*arguments: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run the ``ofc`` command line in a fresh interpreter."""
    command = [sys.executable, "-c", "import sys; from pipeline.cli import main; sys.exit(main())",
               *arguments]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, cwd=REPO,
                          timeout=120, check=False)


def lines(*answers: str) -> str:
    return "".join(answer + "\n" for answer in answers)


def test_a_whole_session_at_the_prompt(tmp_path: Path) -> None:
    database = tmp_path / "live.duckdb"
    answers = lines(
        # hand 1: mara, jun, ivo act in seat order (ivo has the button)
        sc.HAND_1["mara"],
        sc.HAND_1_TYPO, sc.HAND_1["jun"],                 # a typo, re-asked
        sc.HAND_1_DUPLICATE, sc.HAND_1["ivo"],            # a card used twice, re-asked
        # hand 2 and 3: the button is on mara, jun acts first; mara is pre-marked Fantasyland
        sc.HAND_2["jun"], sc.HAND_2["ivo"], sc.HAND_2["mara"],
        sc.HAND_3["jun"], sc.HAND_3["ivo"], sc.HAND_3["mara"],
        # edit hand 3: Enter keeps jun's and mara's boards, ivo's changes
        "edit", "", sc.HAND_3_EDITED_IVO, "",
        # hand 4, then take it back
        sc.HAND_4["jun"], sc.HAND_4["ivo"], sc.HAND_4["mara"],
        "undo",
        "quit",
    )
    result = ofc("record", "--db", str(database), "--players", "mara,jun,ivo",
                 "--stake", "0.10", "--session", "S", stdin=answers)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Live session S: mara, jun, ivo — pineapple, rules standard, 0.10 per point." in out
    assert "✗ bottom: 'Qx' is not a card (ranks 23456789TJQKA or 10, suits cdhs or ♣♦♥♠)" in out
    assert "✗ Ah is used twice: mara bottom and ivo bottom" in out
    assert "FOUL: middle (full house, eights full of fives) beats bottom (seven high); points -35" in out
    assert "royalties 7+0+6 = 13; points +23; enters Fantasyland next hand (14 cards)" in out
    assert "mara vs jun: +4 for mara (rows 2-1, royalties +3)" in out
    assert "mara vs ivo: +19 for mara (rows 3-0, scoop, royalties +13)" in out
    assert "Totals after 1 hand: mara +23 (+2.30) · jun +12 (+1.20) · ivo -35 (-3.50)" in out
    assert "Hand 2: button moves to mara; jun acts first." in out
    assert "Fantasyland this hand: mara (14 cards)." in out
    assert "mara [Fantasyland, 14 cards]> " in out
    assert "stays in Fantasyland next hand (14 cards)" in out
    assert "Hand 3: button stays with mara (Fantasyland was played); jun acts first." in out
    assert "Hand edited and re-scored." in out
    assert "Hand 4 (S-0004) deleted." in out
    assert out.rstrip().endswith(
        "Stopped. Totals after 3 hands: mara +86 (+8.60) · jun -31 (-3.10) · ivo -55 (-5.50)"
    )

    with duckdb.connect(str(database), read_only=True) as connection:
        hands = connection.execute(
            "SELECT hand_id, site, table_name, button, any_fantasyland FROM hands ORDER BY hand_id"
        ).fetchall()
        assert hands == [("S-0001", "live", "S", "ivo", False), ("S-0002", "live", "S", "mara", True),
                         ("S-0003", "live", "S", "mara", True)]
        expected = {"S-0001": sc.HAND_1_POINTS, "S-0002": sc.HAND_2_POINTS,
                    "S-0003": sc.HAND_3_EDITED_POINTS}
        for hand_id, points in expected.items():
            stored = dict(connection.execute(
                "SELECT player, points FROM results WHERE hand_key = ?", [hand_key("live", hand_id)]
            ).fetchall())
            assert stored == points, hand_id
        assert connection.execute(
            "SELECT middle, bottom FROM boards WHERE hand_key = ? AND player = 'ivo'",
            [hand_key("live", "S-0003")],
        ).fetchall() == [("9s Th Jc Qc Kh", "Ah Ac 4s 4c 8h")]
        assert dict(connection.execute(
            "SELECT player, sum(points) FROM results GROUP BY player").fetchall()) == sc.FINAL_TOTALS
        assert dict(connection.execute("SELECT player, points FROM sessions").fetchall()) \
            == sc.FINAL_TOTALS
        assert connection.execute("SELECT count(*) FROM rejects").fetchall() == [(0,)]


def test_fantasyland_toggle_back_and_end_of_input(tmp_path: Path) -> None:
    database = tmp_path / "live.duckdb"
    answers = lines(
        "fl",                       # mara plays this hand in Fantasyland
        sc.HAND_1["mara"],
        "back",                     # re-enter mara's board
        "help",
        sc.HAND_1["mara"], sc.HAND_1["jun"], sc.HAND_1["ivo"],
        sc.HAND_1["mara"],          # hand 2 begins with mara (the button stayed on ivo) ...
    )                               # ... and the input ends mid-hand
    result = ofc("record", "--db", str(database), "--players", "mara,jun,ivo", "--session", "T",
                 stdin=answers)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "mara: Fantasyland this hand (14 cards)" in out
    assert "mara [Fantasyland, 14 cards]> " in out
    assert "  back    re-enter the previous player's board" in out
    assert "Hand 2: button stays with ivo (Fantasyland was played); mara acts first." in out
    assert "royalties 7+0+6 = 13; points +23; stays in" not in out  # QQ is no stay
    assert out.rstrip().endswith(
        "Stopped. Totals after 1 hand: mara +23 (0.00) · jun +12 (0.00) · ivo -35 (0.00)"
    )
    with duckdb.connect(str(database), read_only=True) as connection:
        assert connection.execute("SELECT hand_id, any_fantasyland FROM hands").fetchall() == [
            ("T-0001", True)]


def test_commands_without_a_hand_and_a_quit_mid_hand(tmp_path: Path) -> None:
    database = tmp_path / "live.duckdb"
    result = ofc("record", "--db", str(database), "--players", "a,b", "--session", "U",
                 stdin=lines("undo", "edit", "", "totals", "As Ks Qs / 2c 3c 4c 5c 6c / 7d 8d 9d Td Jd",
                             "quit"))
    assert result.returncode == 0, result.stderr
    assert "  no saved hand to undo yet" in result.stdout
    assert "  no saved hand to edit yet" in result.stdout
    assert "  type the board (top / middle / bottom), or help" in result.stdout
    assert "Totals after 0 hands: a 0 (0.00) · b 0 (0.00)" in result.stdout
    assert "the boards entered for hand 1 are dropped (not saved)" in result.stdout
    with duckdb.connect(str(database), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM hands").fetchall() == [(0,)]


def test_bad_setup_exits_2(tmp_path: Path) -> None:
    result = ofc("record", "--db", str(tmp_path / "x.duckdb"), "--players", "mara,mara")
    assert result.returncode == 2
    assert "ofc record: player 'mara' is listed twice" in result.stderr
    result = ofc("record", "--db", str(tmp_path / "x.duckdb"), "--players", "a,b,c,d")
    assert result.returncode == 2
    assert "pineapple is played by 2-3 players, got 4" in result.stderr


def test_a_kept_board_is_checked_against_an_edited_one(tmp_path: Path) -> None:
    database = tmp_path / "live.duckdb"
    a_board = "2h 3h 4h / 5s 6s 7s 8s 9s / Ah Kh Qh Jh Th"
    b_board = "As Ks Qs / 2c 3c 4c 5c 6c / 7d 8d 9d Td Jd"
    clash = "2h 3h 4h / 5s 6s 7s 8s 6c / Ah Kh Qh Jh Th"  # 6c is in b's middle
    result = ofc("record", "--db", str(database), "--players", "a,b", "--session", "V",
                 stdin=lines(a_board, b_board,          # a acts first (b has the button)
                             "edit", clash, "",          # a changed, b kept: they clash
                             "quit"))
    assert result.returncode == 0, result.stderr
    assert "✗ 6c is used twice: a middle and b middle" in result.stdout
    assert "Hand edited and re-scored." not in result.stdout
    assert "the edit of hand 1 is dropped (not saved)" in result.stdout
    with duckdb.connect(str(database), read_only=True) as connection:
        assert connection.execute(
            "SELECT middle FROM boards WHERE player = 'a'").fetchall() == [("5s 6s 7s 8s 9s",)]


def test_a_session_id_with_saved_hands_is_refused(tmp_path: Path) -> None:
    database = tmp_path / "live.duckdb"
    first = ofc("record", "--db", str(database), "--players", "mara,jun,ivo", "--session", "W",
                stdin=lines(sc.HAND_1["mara"], sc.HAND_1["jun"], sc.HAND_1["ivo"], "quit"))
    assert first.returncode == 0, first.stderr
    again = ofc("record", "--db", str(database), "--players", "mara,jun,ivo", "--session", "W",
                stdin=lines("quit"))
    assert again.returncode == 2
    assert "session W already has 1 hand(s)" in again.stderr
    assert "(last W-0001); choose another --session" in again.stderr


def test_a_session_is_kept_resumed_and_ended(tmp_path: Path) -> None:
    database = tmp_path / "live.duckdb"
    first = ofc("record", "--db", str(database), "--players", "mara,jun,ivo", "--stake", "0.10",
                "--session", "R", stdin=lines(sc.HAND_1["mara"], sc.HAND_1["jun"],
                                              sc.HAND_1["ivo"], sc.HAND_2["jun"]))
    assert first.returncode == 0, first.stderr
    assert f"Session R is kept: go on with ofc record --db {database} --resume R" in first.stdout
    with duckdb.connect(str(database), read_only=True) as connection:
        assert connection.execute(
            "SELECT session_id, hands, writer, ended_at IS NULL FROM live_sessions").fetchall() \
            == [("R", 1, "ofc record", True)]
    again = ofc("record", "--db", str(database), "--players", "mara,jun,ivo", "--session", "R")
    assert again.returncode == 2
    assert "already has 1 hand(s)" in again.stderr

    # Resumed: the totals, the button and mara's Fantasyland mark are where they were.
    resumed = ofc("record", "--db", str(database), "--resume", "R",
                  stdin=lines(sc.HAND_2["jun"], sc.HAND_2["ivo"], sc.HAND_2["mara"], "end"))
    assert resumed.returncode == 0, resumed.stderr
    out = resumed.stdout
    assert "Live session R (resumed): mara, jun, ivo — pineapple, rules standard, 0.10 per point." in out
    assert "Totals after 1 hand: mara +23 (+2.30) · jun +12 (+1.20) · ivo -35 (-3.50)" in out
    assert "Fantasyland this hand: mara (14 cards)." in out
    assert "stays in Fantasyland next hand (14 cards)" in out
    assert out.rstrip().endswith("Session R ended. Totals after 2 hands: mara +62 (+6.20) · "
                                 "jun -25 (-2.50) · ivo -37 (-3.70)")
    with duckdb.connect(str(database), read_only=True) as connection:
        assert connection.execute(
            "SELECT hands, ended_at IS NOT NULL FROM live_sessions").fetchall() == [(2, True)]
        assert connection.execute("SELECT count(*) FROM hands").fetchall() == [(2,)]

    missing = ofc("record", "--db", str(database), "--resume", "nope")
    assert missing.returncode == 2
    assert "no live session 'nope'" in missing.stderr

    # A stored player's name is pointed out once, at the start.
    noted = ofc("record", "--db", str(database), "--players", "Mara,zed", "--session", "Q",
                stdin=lines("quit"))
    assert "Note: Mara looks like mara (2 hands) but is spelled differently" in noted.stdout
