"""Bad records land in rejects with a precise reason and their raw text; good ones still land."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.ingest.driver import ingest_paths
from tests.ingest.conftest import count, deal_hand, query, write_jsonl


def _rejects(database: Path) -> list[tuple]:
    return query(database, "SELECT line, hand_id, reason, raw, kind FROM rejects ORDER BY line")


def test_each_bad_line_gives_a_clear_reason_and_good_lines_land(
    tmp_path: Path, database: Path
) -> None:
    duplicate_card = deal_hand(2)
    street = duplicate_card["players"][1]["streets"][1]
    taken = duplicate_card["players"][0]["streets"][0]["dealt"][0]
    street["dealt"][0] = taken
    street["discarded"] = [taken]

    impossible_street = deal_hand(3)
    impossible_street["players"][0]["streets"][2]["discarded"] = []  # 3 dealt, 2 placed

    unknown_rules = deal_hand(4, rules="no-such-rules")
    lines = [
        json.dumps(deal_hand(1)),
        '{"hand_id": "J1", "site": "x", "players": [}',
        json.dumps(duplicate_card),
        json.dumps(impossible_street),
        "[1, 2, 3]",
        json.dumps(unknown_rules),
        json.dumps(deal_hand(5)),
    ]
    source = tmp_path / "mixed.jsonl"
    source.write_bytes(
        ("\n".join(lines) + "\n").encode()
        + '{"hand_id": "L1", "site": "caf\u00e9"}'.encode("latin-1") + b"\n"
        + json.dumps(deal_hand(6)).encode()[:150]  # the file was cut mid-line
    )

    summary = ingest_paths([source], database)

    assert (summary.stored, summary.rejected) == (2, 7)
    rows = _rejects(database)
    reasons = {line: reason for line, _, reason, _, _ in rows}
    assert reasons[2].startswith("invalid JSON: Expecting value at column")
    assert f"card {taken}" in reasons[3] or taken in reasons[3]
    assert "twice" in reasons[3] or "duplicate" in reasons[3].lower()
    assert reasons[4].startswith("players[0] ('mara') street 3: placed + discarded [")
    assert "differ from dealt" in reasons[4]
    assert reasons[5] == "expected a JSON object (a hand record), got a list"
    assert reasons[6].startswith("unknown rules 'no-such-rules'")
    assert reasons[8] == "line 8 is not UTF-8 text (byte 0xe9 at column 31)"
    assert reasons[9].startswith("truncated line: the file ends in the middle of line 9")
    by_line = {line: (hand_id, raw, kind) for line, hand_id, _, raw, kind in rows}
    assert by_line[2] == ("J1", lines[1], "read")
    assert by_line[3][0] == "H2" and json.loads(by_line[3][1]) == duplicate_card
    assert by_line[6][2] == "rules"
    assert by_line[4][2] == "invalid"
    assert {row[0] for row in query(database, "SELECT hand_id FROM hands")} == {"H1", "H5"}


def test_binary_file_is_rejected_as_a_whole(tmp_path: Path, database: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [deal_hand(1)])
    binary = tmp_path / "photo.jsonl"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))

    summary = ingest_paths([good, binary], database)

    assert summary.stored == 1
    by_name = {Path(item.path).name: item for item in summary.files}
    assert by_name["photo.jsonl"].rejected == 1
    assert any("binary file" in reason for reason in by_name["photo.jsonl"].reasons)
    assert count(database, "rejects", "reason LIKE '%binary file, not a hand history%'") == 1


def test_empty_file_says_so(tmp_path: Path, database: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")

    summary = ingest_paths([empty], database)

    assert summary.files[0].status == "empty"
    assert summary.files[0].message == "empty file: no hand history in it"
    assert query(database, "SELECT line, reason, kind FROM rejects") == [
        (None, "empty file: no hand history in it", "file")
    ]


def test_unknown_format_is_a_file_reject_not_a_crash(tmp_path: Path, database: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("dear diary, today I played poker\n", encoding="utf-8")
    good = write_jsonl(tmp_path / "good.jsonl", [deal_hand(1)])

    summary = ingest_paths([notes, good], database)

    assert summary.stored == 1
    failed = next(item for item in summary.files if item.path.endswith("notes.txt"))
    assert failed.status == "failed" and failed.message.startswith("unknown format")
    assert count(database, "rejects", "kind = 'file' AND reason LIKE 'unknown format%'") == 1


def test_undetermined_poker_arena_game_says_how_to_name_it(
    arena_logs: Path, tmp_path: Path, database: Path
) -> None:
    renamed = tmp_path / "log.jsonl"
    renamed.write_bytes((arena_logs / "ofc-pineapple.jsonl").read_bytes())

    summary = ingest_paths([renamed], database)

    assert summary.stored == 0 and summary.files[0].status == "failed"
    assert "--variant" in summary.files[0].message


def test_rejects_are_not_doubled_when_a_file_grows(tmp_path: Path, database: Path) -> None:
    source = write_jsonl(tmp_path / "log.jsonl", [deal_hand(1), "not json", deal_hand(2)])
    ingest_paths([source], database)
    with open(source, "a", encoding="utf-8") as stream:
        stream.write(json.dumps(deal_hand(3)) + "\n")

    summary = ingest_paths([source], database)

    assert (summary.stored, summary.duplicates, summary.rejected) == (1, 2, 1)
    assert count(database, "rejects") == 1


def _boards_csv(path: Path) -> Path:
    rows = ["hand_id,started_at,table,variant,player,seat,top,middle,bottom,fantasyland,points"]
    for seed in range(5):
        hand = deal_hand(seed)
        for player in hand["players"]:
            board = {"top": [], "middle": [], "bottom": []}
            for street in player["streets"]:
                for row, cards in street["placed"].items():
                    board[row] += cards
            rows.append(",".join([
                hand["hand_id"], hand["started_at"], hand["table"], "pineapple",
                player["name"], str(player["seat"]), " ".join(board["top"]),
                " ".join(board["middle"]), " ".join(board["bottom"]), "no", "",
            ]))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "module", "reader"),
    [("live.csv", "driver", "read_source"),  # a format reader giving up (records)
     ("a.jsonl", "ingestor", "read_raw_lines")],  # the canonical path's line reader giving up
)
def test_records_before_a_reader_gives_up_still_land(
    tmp_path: Path, database: Path, monkeypatch, name: str, module: str, reader: str
) -> None:
    """A reader that fails on the whole file midway (FormatError) keeps what it read so far."""
    import importlib

    from pipeline.formats import FormatError

    ingest_module = importlib.import_module(f"pipeline.ingest.{module}")

    if name.endswith(".csv"):
        source = _boards_csv(tmp_path / name)
    else:
        source = write_jsonl(tmp_path / name, [deal_hand(seed) for seed in range(5)])
    real_reader = getattr(ingest_module, reader)

    def failing_reader(path, *arguments, **options):
        for number, item in enumerate(real_reader(path, *arguments, **options)):
            if number == 3:
                raise FormatError(path, "cannot read past line 3: damaged data")
            yield item

    monkeypatch.setattr(ingest_module, reader, failing_reader)

    summary = ingest_paths([source], database, batch_size=2)

    assert summary.files[0].status == "failed"
    assert summary.files[0].message == "cannot read past line 3: damaged data"
    assert summary.stored == 3 and count(database, "hands") == 3
    assert count(database, "rejects", "kind = 'file' AND line IS NULL") == 1


def test_a_reject_reason_is_kept_short_whatever_the_line_holds(
    tmp_path: Path, database: Path
) -> None:
    """A street dealt 150,000 cards (a line under 1 MiB) gave a 450 KB reason in the rejects
    table; reasons now show at most 20 cards of a list, and any reason at most 2,000
    characters, as raw is clipped (``Reject`` clips whatever made the reason)."""
    from pipeline.ingest.batches import Reject
    from pipeline.records.validate import MAX_REASON_CHARACTERS

    hand = deal_hand(6)
    hand["players"][0]["streets"][0]["dealt"] = ["Ah"] * 150_000
    path = write_jsonl(tmp_path / "long.jsonl", [json.dumps(hand), json.dumps(deal_hand(7))])
    summary = ingest_paths([path], database)
    assert summary.stored == 1
    ((line, _, reason, raw, kind),) = _rejects(database)
    assert line == 1 and kind == "invalid" and len(reason) < 300
    assert reason.endswith("… (150,000 cards)]") and len(raw) < 25_000
    clipped = Reject("f", 1, None, "y" * 50_000, "", "read").reason
    assert len(clipped) < MAX_REASON_CHARACTERS + 40 and clipped.endswith("more characters]")
