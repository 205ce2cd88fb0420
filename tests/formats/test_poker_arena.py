"""The poker-arena log reader, on the real engine logs and on damaged copies of them."""

from __future__ import annotations

import gzip
import io
import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.formats.poker_arena import (
    infer_game,
    read_poker_arena,
    resolve_game,
    sniff_poker_arena,
)
from pipeline.formats.source import FormatError

ROWS = ("top", "middle", "bottom")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _hands(path: Path) -> list[list[str]]:
    """The log's lines grouped by hand (a header starts a hand)."""
    hands: list[list[str]] = []
    for line in _lines(path):
        if '"seats"' in line:
            hands.append([])
        hands[-1].append(line)
    return hands


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _check_player_consistency(player: dict) -> None:
    rows: dict[str, list[str]] = {row: [] for row in ROWS}
    for street in player["streets"]:
        placed = [card for cards in street["placed"].values() for card in cards]
        assert Counter(placed + street["discarded"]) == Counter(street["dealt"])
        for row, cards in street["placed"].items():
            rows[row].extend(cards)
    assert [len(rows[row]) for row in ROWS] == [3, 5, 5]
    for row in ROWS:
        assert sorted(rows[row]) == sorted(player["board"][row])


def test_classic_log(classic_log: Path) -> None:
    records = list(read_poker_arena(classic_log))
    assert [record.error for record in records] == [None] * 4
    assert [record.line for record in records] == [1, 82, 163, 244]
    hand_numbers = [record.hand_id.rsplit("-", 1)[1] for record in records if record.hand_id]
    assert hand_numbers == ["00003", "00127", "00248", "00249"]
    for record in records:
        hand = record.record
        assert hand is not None
        assert hand["site"] == "poker-arena"
        assert hand["variant"] == "classic"
        assert hand["rules"] == "poker-arena-classic"
        assert hand["game"] == "ofc"
        assert hand["table"].startswith("poker-arena-")
        assert len(hand["players"]) == 4
        assert hand["button"] == hand["players"][0]["name"]
        assert [player["seat"] for player in hand["players"]] == [0, 1, 2, 3]
        assert sum(player["reported_points"] for player in hand["players"]) == 0
        for player in hand["players"]:
            _check_player_consistency(player)
            if player["fantasyland"]:
                assert [len(street["dealt"]) for street in player["streets"]] == [13]
                assert player["source_fantasyland_cards"] == 13
            else:
                assert [len(street["dealt"]) for street in player["streets"]] == [5] + [1] * 8
                assert "source_fantasyland_cards" not in player
    last = records[3].record
    assert last is not None
    assert [player["fantasyland"] for player in last["players"]] == [True, False, False, False]
    assert last["players"][0]["name"] == "greedy"
    assert last["players"][0]["reported_points"] == 18


def test_pineapple_log(pineapple_log: Path) -> None:
    records = list(read_poker_arena(pineapple_log))
    assert [record.error for record in records] == [None] * 3
    fantasyland_players = 0
    for record in records:
        hand = record.record
        assert hand is not None
        assert (hand["variant"], hand["rules"], hand["game"]) == (
            "pineapple", "poker-arena-pineapple", "ofc-pineapple"
        )
        assert len(hand["players"]) == 3
        assert sum(player["reported_points"] for player in hand["players"]) == 0
        for player in hand["players"]:
            _check_player_consistency(player)
            if player["fantasyland"]:
                fantasyland_players += 1
                (street,) = player["streets"]
                assert len(street["dealt"]) == 14
                assert len(street["discarded"]) == 1
                assert player["source_fantasyland_cards"] == 14
            else:
                assert [len(street["dealt"]) for street in player["streets"]] == [5, 3, 3, 3, 3]
                assert [len(street["discarded"]) for street in player["streets"]] == [0, 1, 1, 1, 1]
    assert fantasyland_players == 1


def test_first_street_and_showdown_verdict_are_kept(pineapple_log: Path) -> None:
    first = next(read_poker_arena(pineapple_log)).record
    assert first is not None
    random_player = first["players"][1]
    assert random_player["name"] == "random"
    assert random_player["streets"][0] == {
        "dealt": ["3h", "Ts", "5d", "9s", "2h"],
        "placed": {"top": ["3h", "Ts", "2h"], "middle": ["5d", "9s"]},
        "discarded": [],
    }
    assert random_player["streets"][1] == {
        "dealt": ["2s", "8s", "Qd"],
        "placed": {"middle": ["2s"], "bottom": ["8s"]},
        "discarded": ["Qd"],
    }
    assert random_player["source_showdown"] == {
        "fouled": True,
        "royalties": {"top": 0, "middle": 0, "bottom": 0},
        "next_fantasyland": None,
        "top_value": 528384,
        "middle_value": 480032,
        "bottom_value": 414768,
    }
    assert random_player["board"]["top"] == ["3h", "Ts", "2h"]


def test_ids_are_unique_stable_and_content_based(classic_log: Path, tmp_path: Path) -> None:
    first_read = [record.hand_id for record in read_poker_arena(classic_log)]
    second_read = [record.hand_id for record in read_poker_arena(classic_log)]
    assert first_read == second_read
    assert len(set(first_read)) == len(first_read)
    assert all(hand_id and hand_id.startswith("ofc-") for hand_id in first_read)
    renamed = tmp_path / "renamed.log"
    shutil.copy(classic_log, renamed)
    assert [record.hand_id for record in read_poker_arena(renamed, game="ofc")] == first_read
    compressed = tmp_path / "ofc.jsonl.gz"
    compressed.write_bytes(gzip.compress(classic_log.read_bytes()))
    assert [record.hand_id for record in read_poker_arena(compressed)] == first_read


def test_a_hand_keeps_its_id_in_an_extract_and_in_the_full_log(classic_log: Path, tmp_path: Path) -> None:
    """Ids come from each hand's own lines: cutting a match down does not change them."""
    hands = _hands(classic_log)
    full = [record.hand_id for record in read_poker_arena(_write(tmp_path / "full.jsonl", hands[0] + hands[1]), game="ofc")]
    extract = [record.hand_id for record in read_poker_arena(_write(tmp_path / "cut.jsonl", hands[1]), game="ofc")]
    assert extract == full[1:]


def test_two_matches_in_one_file_get_distinct_ids(classic_log: Path, tmp_path: Path) -> None:
    hands = _hands(classic_log)
    early, late = hands[0] + hands[1], hands[2] + hands[3]
    match_a = _write(tmp_path / "a.jsonl", late)
    match_b = _write(tmp_path / "b.jsonl", early)
    # Hand numbers go down (249 -> 3): a second match starts.
    both = _write(tmp_path / "both.jsonl", late + early)
    ids_a = [record.hand_id for record in read_poker_arena(match_a, game="ofc")]
    ids_b = [record.hand_id for record in read_poker_arena(match_b, game="ofc")]
    ids_both = [record.hand_id for record in read_poker_arena(both, game="ofc")]
    assert ids_both == ids_a + ids_b
    assert len(set(ids_both)) == 4
    tables = {record.record["table"] for record in read_poker_arena(both, game="ofc")}
    assert len(tables) == 2


def test_log_summary_ends_a_match_and_is_skipped(classic_log: Path, tmp_path: Path) -> None:
    hands = _hands(classic_log)
    summary = '{"log_summary": {"hands_seen": 300, "hands_kept": 2}}'
    # Hand numbers keep rising here (127 -> 248), but the summary says a new match began.
    path = _write(tmp_path / "two.jsonl", hands[0] + hands[1] + [summary] + hands[2] + hands[3])
    records = list(read_poker_arena(path, game="ofc"))
    assert [record.error for record in records] == [None] * 4
    tables = [record.record["table"] for record in records]
    assert tables[0] == tables[1] != tables[2] == tables[3]
    assert len({record.hand_id for record in records}) == 4
    alone = _write(tmp_path / "alone.jsonl", hands[2] + hands[3])
    assert [record.hand_id for record in read_poker_arena(alone, game="ofc")] == [
        record.hand_id for record in records[2:]
    ]


# --- which game ----------------------------------------------------------------------------------


def test_game_by_argument(pineapple_log: Path, tmp_path: Path) -> None:
    unnamed = tmp_path / "match.jsonl"
    shutil.copy(pineapple_log, unnamed)
    for name, variant, rules in [
        ("ofc-pineapple", "pineapple", "poker-arena-pineapple"),
        ("pineapple", "pineapple", "poker-arena-pineapple"),
        ("ofc-progressive", "pineapple", "poker-arena-progressive"),
        ("progressive", "pineapple", "poker-arena-progressive"),
        ("ofc-27", "2-7-pineapple", "poker-arena-27"),
        ("2-7-pineapple", "2-7-pineapple", "poker-arena-27"),
    ]:
        record = next(read_poker_arena(unnamed, game=name)).record
        assert record is not None
        assert (record["variant"], record["rules"]) == (variant, rules)
        assert record["hand_id"].startswith(resolve_game(name) + "-")


def test_unknown_game_argument(pineapple_log: Path) -> None:
    with pytest.raises(FormatError, match="unknown poker-arena game 'holdem'"):
        read_poker_arena(pineapple_log, game="holdem")


def test_game_by_file_name(pineapple_log: Path, tmp_path: Path) -> None:
    named = tmp_path / "ofc-27.jsonl.gz"
    named.write_bytes(gzip.compress(pineapple_log.read_bytes()))
    record = next(read_poker_arena(named)).record
    assert record is not None
    assert (record["game"], record["variant"], record["rules"]) == (
        "ofc-27", "2-7-pineapple", "poker-arena-27"
    )


def test_game_by_content_classic(classic_log: Path, tmp_path: Path) -> None:
    unnamed = tmp_path / "match-17.jsonl"
    shutil.copy(classic_log, unnamed)
    assert infer_game(unnamed) == "ofc"
    assert {record.record["game"] for record in read_poker_arena(unnamed)} == {"ofc"}


def test_game_by_content_progressive(pineapple_log: Path, tmp_path: Path) -> None:
    lines = [
        line.replace('"event":"fantasyland","seat":0,"cards":14', '"event":"fantasyland","seat":0,"cards":16')
        for line in _lines(pineapple_log)
    ]
    assert lines != _lines(pineapple_log)
    path = _write(tmp_path / "match.jsonl", lines)
    assert infer_game(path) == "ofc-progressive"


def test_game_by_content_27(tmp_path: Path) -> None:
    showdown = {
        "event": "showdown", "seat": 0, "top": ["Kc", "Kd", "2s"],
        "middle": ["2c", "3d", "4h", "5s", "7c"], "bottom": ["Ah", "Ad", "As", "9c", "9d"],
        "fouled": False, "next_fantasyland": 14,
    }
    path = _write(
        tmp_path / "match.jsonl",
        ['{"hand": 0, "seats": ["a", "b"]}', json.dumps({"hand": 0, "ev": showdown})],
    )
    assert infer_game(path) == "ofc-27"


def test_unnamed_pineapple_log_cannot_be_told(pineapple_log: Path, tmp_path: Path) -> None:
    unnamed = tmp_path / "match.jsonl"
    shutil.copy(pineapple_log, unnamed)
    with pytest.raises(FormatError) as caught:
        read_poker_arena(unnamed)
    message = str(caught.value)
    assert message.startswith(str(unnamed))
    assert "cannot tell which poker-arena game this log is" in message
    assert "ofc-pineapple" in message and "ofc-progressive" in message
    assert "pass --variant" in message and "<game>.jsonl" in message


def test_sniff() -> None:
    assert sniff_poker_arena('{"hand":3,"seats":["random","filler"]}')
    assert sniff_poker_arena('{"hand":3,"ev":{"event":"deal"}}')
    assert not sniff_poker_arena('{"hand_id": "x", "players": []}')
    assert not sniff_poker_arena("not json")


# --- damaged logs ----------------------------------------------------------------------------------


def test_hand_missing_its_score(pineapple_log: Path, tmp_path: Path) -> None:
    hands = _hands(pineapple_log)
    without_score = [line for line in hands[1] if '"score"' not in line]
    path = _write(tmp_path / "ofc-pineapple.jsonl", hands[0] + without_score + hands[2])
    records = list(read_poker_arena(path))
    assert [record.record is not None for record in records] == [True, False, True]
    bad = records[1]
    assert bad.line == len(hands[0]) + 1
    assert bad.error == "hand 96 (line 38): no score for seat 0 (greedy): the hand is incomplete"
    assert bad.hand_id is not None and bad.hand_id.endswith("-00096")
    assert bad.raw.splitlines() == without_score


def test_hand_missing_its_showdown(pineapple_log: Path, tmp_path: Path) -> None:
    hands = _hands(pineapple_log)
    cut = [line for line in hands[0] if '"showdown","seat":2' not in line]
    path = _write(tmp_path / "ofc-pineapple.jsonl", cut + hands[1])
    records = list(read_poker_arena(path))
    assert records[0].error == (
        "hand 45 (line 1): no showdown for seat 2 (filler): the hand is incomplete"
    )
    assert records[1].record is not None


def test_malformed_line_spoils_only_its_hand(pineapple_log: Path, tmp_path: Path) -> None:
    hands = _hands(pineapple_log)
    broken = list(hands[1])
    broken[5] = broken[5][:40]
    path = _write(tmp_path / "ofc-pineapple.jsonl", hands[0] + broken + hands[2])
    records = list(read_poker_arena(path))
    assert [record.record is not None for record in records] == [True, False, True]
    line_number = len(hands[0]) + 6
    assert records[1].error is not None
    assert records[1].error.startswith(f"line {line_number}: invalid JSON: ")


@pytest.mark.parametrize("after", ["# --- next table ---", '{"hand": 96, "se'])
def test_a_line_after_a_spoilt_hands_last_score_is_reported_on_its_own(
    pineapple_log: Path, tmp_path: Path, after: str
) -> None:
    """A hand spoilt by a damaged line is still over once every seat has scored: an
    unreadable line after it (junk between hands, a cut header) is its own quarantined
    record with its own line and reason, not one more line of the spoilt hand. (Found by a
    long run of tests/ingest/test_fuzz_ingest.py: the junk line had no reject of its own.)"""
    hands = _hands(pineapple_log)
    broken = list(hands[1])
    broken[2] = broken[2][:40]
    path = _write(tmp_path / "ofc-pineapple.jsonl", hands[0] + broken + [after] + hands[2])
    records = list(read_poker_arena(path))
    assert [record.record is not None for record in records] == [True, False, False, True]
    spoilt, junk = records[1], records[2]
    assert spoilt.line == len(hands[0]) + 1
    assert spoilt.error is not None
    assert spoilt.error.startswith(f"line {len(hands[0]) + 3}: invalid JSON: ")
    assert spoilt.raw.splitlines() == broken
    junk_line = len(hands[0]) + len(broken) + 1
    assert junk.line == junk_line and junk.raw == after
    assert junk.error is not None and junk.error.startswith(f"line {junk_line}")


def test_junk_after_an_unfinished_hand_is_its_own_reject(
    pineapple_log: Path, tmp_path: Path
) -> None:
    """A hand missing its last score is still open when a junk line comes: a line that is not
    even the start of a JSON object is no hand's line, so it gets its own reject (after the
    hand's) and the hand is judged without it. A line that starts as a JSON object may be a
    damaged line of the open hand and stays in it. (The first case was found by a long run of
    tests/ingest/test_fuzz_ingest.py.)"""
    hands = _hands(pineapple_log)
    unfinished = [line for line in hands[1] if '"score"' not in line]
    junk = "# --- next table ---"
    path = _write(tmp_path / "ofc-pineapple.jsonl", hands[0] + unfinished + [junk] + hands[2])
    records = list(read_poker_arena(path))
    assert [record.record is not None for record in records] == [True, False, False, True]
    hand, alone = records[1], records[2]
    assert hand.line == len(hands[0]) + 1 and hand.raw.splitlines() == unfinished
    assert hand.error == "hand 96 (line 38): no score for seat 0 (greedy): the hand is incomplete"
    junk_line = len(hands[0]) + len(unfinished) + 1
    assert alone.line == junk_line and alone.raw == junk
    assert alone.error is not None and alone.error.startswith(f"line {junk_line}")

    cut = '{"hand":96,"ev":{"event":"sco'
    path = _write(tmp_path / "ofc-pineapple.jsonl", hands[0] + unfinished + [cut] + hands[2])
    records = list(read_poker_arena(path))
    assert [record.record is not None for record in records] == [True, False, True]
    assert records[1].raw.splitlines() == [*unfinished, cut]
    assert records[1].error is not None
    assert records[1].error.startswith(f"line {junk_line}: invalid JSON: ")


def test_junk_after_an_open_hand_is_read_with_bounded_memory(
    pineapple_log: Path, tmp_path: Path
) -> None:
    """Junk lines set aside while a hand is open are held until the hand ends: past
    MAX_ASIDE_LINES of them the hand is taken as ended there, so a header followed by millions
    of junk lines is streamed, not held (the hand's record comes out before the rest is read)."""
    from pipeline.formats.follow import Follow, FollowMode
    from pipeline.formats.poker_arena import MAX_ASIDE_LINES, follow_poker_arena
    from pipeline.formats.source import read_stream_raw

    hands = _hands(pineapple_log)
    unfinished = [line for line in hands[1] if '"score"' not in line]
    junk = [f"# junk {number}" for number in range(3 * MAX_ASIDE_LINES)]
    path = _write(tmp_path / "ofc-pineapple.jsonl", unfinished + junk + hands[2])
    data = path.read_bytes()
    consumed = 0

    def counted() -> Iterator:
        nonlocal consumed
        for line in read_stream_raw(io.BytesIO(data)):
            consumed += 1
            yield line

    records = follow_poker_arena(path, counted(), Follow(FollowMode.FINAL), game="ofc-pineapple")
    first = next(records)
    assert first.line == 1 and first.error is not None and "incomplete" in first.error
    assert consumed == len(unfinished) + MAX_ASIDE_LINES  # streamed: not held to the end
    rest = list(records)
    assert [record.line for record in rest[:3]] == [len(unfinished) + 1 + number
                                                    for number in range(3)]
    assert sum(record.raw.startswith("# junk") for record in rest) == len(junk)
    assert rest[-1].record is not None  # the next hand still lands


def test_unknown_event_kind(pineapple_log: Path, tmp_path: Path) -> None:
    hands = _hands(pineapple_log)
    odd = hands[0][:3] + ['{"hand":45,"ev":{"event":"chat","seat":1,"text":"gl"}}'] + hands[0][3:]
    path = _write(tmp_path / "ofc-pineapple.jsonl", odd + hands[1])
    records = list(read_poker_arena(path))
    assert records[0].error == "line 4: unknown event kind 'chat'"
    assert records[1].record is not None


def test_events_before_a_header(pineapple_log: Path, tmp_path: Path) -> None:
    hands = _hands(pineapple_log)
    path = _write(tmp_path / "ofc-pineapple.jsonl", hands[0][1:] + hands[1])
    records = list(read_poker_arena(path))
    assert len(records) == 2
    assert records[0].record is None
    assert records[0].error == (
        'events of hand 45 from line 1 come before any header {"hand": N, "seats": [...]} '
        "for that hand"
    )
    assert records[0].hand_id is None
    assert records[1].record is not None


def test_truncated_last_line(pineapple_log: Path, tmp_path: Path) -> None:
    text = pineapple_log.read_text(encoding="utf-8")
    path = tmp_path / "ofc-pineapple.jsonl"
    path.write_text(text[:-30], encoding="utf-8")
    records = list(read_poker_arena(path))
    assert [record.record is not None for record in records] == [True, True, False]
    assert records[2].error is not None
    assert records[2].error.startswith("truncated line")


def test_cut_header_after_a_complete_hand_keeps_the_hand(
    pineapple_log: Path, tmp_path: Path
) -> None:
    hands = _hands(pineapple_log)
    path = tmp_path / "ofc-pineapple.jsonl"
    path.write_text("\n".join(hands[0]) + '\n{"hand":96,"se', encoding="utf-8")
    records = list(read_poker_arena(path))
    assert records[0].record is not None
    assert records[1].record is None
    assert records[1].line == len(hands[0]) + 1
    assert records[1].error is not None
    assert records[1].error.startswith("truncated line")


def test_invalid_utf8_and_over_long_lines(pineapple_log: Path, tmp_path: Path) -> None:
    hands = _hands(pineapple_log)
    data = (
        "\n".join(hands[0]).encode()
        + b"\n"
        + b"x" * ((1 << 20) + 1)
        + b"\n"
        + hands[1][0].encode()
        + b"\n\xff\xfe\n"
        + "\n".join(hands[1][1:]).encode()
        + b"\n"
        + "\n".join(hands[2]).encode()
        + b"\n"
    )
    path = tmp_path / "ofc-pineapple.jsonl"
    path.write_bytes(data)
    records = list(read_poker_arena(path))
    long_line = len(hands[0]) + 1
    assert [(record.line, record.error) for record in records] == [
        (1, None),
        # After a complete hand, a bad line is reported on its own.
        (long_line, f"line {long_line} is longer than 1 MiB"),
        # Inside a hand, it spoils the hand.
        (long_line + 1, f"line {long_line + 2} is not UTF-8 text (byte 0xff at column 1)"),
        (long_line + 2 + len(hands[1]), None),
    ]


def test_binary_and_empty_files(tmp_path: Path) -> None:
    binary = tmp_path / "ofc.jsonl"
    binary.write_bytes(b"\x00" * 100)
    (record,) = read_poker_arena(binary)
    assert "holds NUL bytes" in record.error and record.damaged
    empty = tmp_path / "match.jsonl"
    empty.write_bytes(b"")
    assert list(read_poker_arena(empty)) == []


def test_raw_is_clipped_for_huge_hands(pineapple_log: Path, tmp_path: Path) -> None:
    hands = _hands(pineapple_log)
    noise = ['{"hand":45,"ev":{"event":"deal","seat":9,"cards":[]}}'] * 2000
    path = _write(tmp_path / "ofc-pineapple.jsonl", hands[0] + noise + hands[1])
    records = list(read_poker_arena(path))
    # the first hand is over (every seat scored): kept; the noise after it is reported on its
    # own, its raw text clipped
    assert records[0].record is not None
    assert records[1].record is None and "after the hand was over" in records[1].error
    assert "more characters]" in records[1].raw
    assert len(records[1].raw) < 21_000
    assert records[2].record is not None
