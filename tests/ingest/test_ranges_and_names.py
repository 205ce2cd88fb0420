"""Every number has a documented range and every name one normal form, on every path.

Before: a ``reported_points`` (or CSV ``points``) above 2^53 stopped ``ofc ingest`` with
``ArrowInvalid: PyLong is too large to fit int64``: nothing of the file was stored and the files
after it were never read. ``"kofi"`` and ``"kofi "`` were two players in canonical JSON while the
CSV reader trimmed them, and names and ids had no length limit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.ingest.driver import ingest_paths
from pipeline.records.validate import (
    MAX_ID_LENGTH,
    MAX_NAME_LENGTH,
    MAX_REPORTED_POINTS,
    InvalidHand,
    parse_hand,
)
from tests.ingest.conftest import count, deal_hand, query, write_jsonl

BOARDS_HEADER = "hand_id,started_at,table,variant,player,seat,top,middle,bottom,fantasyland,points"


def with_player(record: dict, **fields: object) -> dict:
    record["players"][0].update(fields)
    return record


# Each damaged record: (what is wrong, the record, words its reason must hold).
DAMAGED: list[tuple[str, object, str]] = [
    ("points past int64", with_player(deal_hand(1), reported_points=2**64), "reported_points"),
    ("points past 2^53", with_player(deal_hand(2), reported_points=2**53 + 1), "reported_points"),
    ("huge float points", with_player(deal_hand(3), reported_points=1e300), "reported_points"),
    ("points just past the range", with_player(deal_hand(4), reported_points=MAX_REPORTED_POINTS + 1),
     "reported_points"),
    ("huge seat", with_player(deal_hand(5), seat=2**70), "seat"),
    ("negative seat", with_player(deal_hand(6), seat=-1), "seat"),
    ("year 1 with a zone", {**deal_hand(7), "started_at": "0001-01-01T00:00:00+01:00"}, "years"),
    ("year 9999 behind UTC", {**deal_hand(8), "started_at": "9999-12-31T23:00:00-05:00"}, "years"),
    ("huge integer id", {**deal_hand(9), "hand_id": 10**300}, "hand_id is 301 characters"),
    ("long id", {**deal_hand(10), "hand_id": "h" * (MAX_ID_LENGTH + 1)}, "the limit is 128"),
    ("long table", {**deal_hand(11), "table": "t" * (MAX_ID_LENGTH + 1)}, "table is"),
    ("long name", with_player(deal_hand(12), name="n" * (MAX_NAME_LENGTH + 1)), "the limit is 64"),
    ("escape in a name", with_player(deal_hand(13), name="\x1b[31mred"), "control character"),
    ("bidi override in a site", {**deal_hand(14), "site": "abc\u202eevil"}, "U+202E"),
    ("blank name", with_player(deal_hand(15), name="   "), "name must be a non-empty string"),
]


def damaged_lines() -> list[str]:
    lines = [json.dumps(record) for _, record, _ in DAMAGED]
    lines.append(json.dumps(deal_hand(16))[:-1] + ', "note": NaN}')  # NaN is not JSON
    return lines


@pytest.mark.parametrize("workers", [1, 2])
def test_each_out_of_range_value_rejects_its_line_and_the_rest_lands(
    tmp_path: Path, workers: int
) -> None:
    good = [deal_hand(seed) for seed in range(100, 110)]
    lines = [json.dumps(record) for record in good[:5]] + damaged_lines()
    lines += [json.dumps(record) for record in good[5:]]
    first = write_jsonl(tmp_path / "a.jsonl", lines)
    second = write_jsonl(tmp_path / "b.jsonl", [deal_hand(seed) for seed in range(200, 203)])
    database = tmp_path / "hands.duckdb"
    summary = ingest_paths([first, second], database, workers=workers)
    assert [item.stored for item in summary.files] == [10, 3]
    assert summary.files[0].rejected == len(DAMAGED) + 1
    reasons = [reason for (reason,) in query(database, "SELECT reason FROM rejects ORDER BY line")]
    for (what, _, words), reason in zip(DAMAGED, reasons, strict=False):
        assert words in reason, (what, reason)
    assert "NaN is not a JSON number" in reasons[-1]
    assert count(database, "hands") == 13


def test_the_checking_path_and_the_fast_path_agree_on_the_boundaries(tmp_path: Path) -> None:
    edges = [
        with_player(deal_hand(1, hand_id="max"), reported_points=MAX_REPORTED_POINTS),
        with_player(deal_hand(2, hand_id="min"), reported_points=-MAX_REPORTED_POINTS),
        with_player(deal_hand(3, hand_id="half"), reported_points=-0.5),
        {**deal_hand(4, hand_id="y1900"), "started_at": "1900-01-01T00:00:00Z"},
        {**deal_hand(5, hand_id="y2199"), "started_at": "2199-12-31T23:59:59Z"},
        {**deal_hand(6), "hand_id": "i" * MAX_ID_LENGTH},
        deal_hand(7, hand_id="longname", names=("n" * MAX_NAME_LENGTH, "jun", "lee")),
    ]
    for record in edges:
        parse_hand(record)  # every one is valid
    fast = ingest_paths([write_jsonl(tmp_path / "edges.jsonl", edges)], tmp_path / "fast.duckdb")
    assert fast.stored == len(edges) and fast.rejected == 0
    stored = dict(query(tmp_path / "fast.duckdb",
                        "SELECT h.hand_id, s.reported_points FROM hands h JOIN seats s USING "
                        "(hand_key) WHERE s.player = ?", ["mara"]))
    assert stored["max"] == MAX_REPORTED_POINTS and stored["min"] == -MAX_REPORTED_POINTS


def test_csv_points_and_seats_out_of_range_lose_only_their_hand(tmp_path: Path) -> None:
    rows = [BOARDS_HEADER]
    for hand, (mara_points, seat) in enumerate(((2, 1), (2**64, 1), (2, 2**63), (3, 1)), start=1):
        rows.append(f"h{hand},2026-11-01T20:1{hand}:00Z,t1,pineapple,mara,{seat},Qh Qd 4c,"
                    f"Kh Kd 7s 7c 2d,As 9s 8s 6s 3s,no,{mara_points}")
        rows.append(f"h{hand},2026-11-01T20:1{hand}:00Z,t1,pineapple,jun,2,5h 5d Jc,"
                    "9h 9d 9c Tc 3d,Th Td Ts 8h 8d,no,-2")
    path = tmp_path / "night.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    summary = ingest_paths([path], tmp_path / "hands.duckdb")
    assert summary.stored == 2 and summary.rejected == 2
    reasons = " ".join(summary.files[0].reasons)
    assert "reported_points must be from" in reasons and "seat must be an integer" in reasons


def test_poker_arena_points_out_of_range_lose_only_their_hand(tmp_path: Path) -> None:
    source = Path(__file__).parents[1] / "formats" / "data" / "ofc.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    score = next(index for index, line in enumerate(lines) if '"event":"score"' in line)
    value = json.loads(lines[score])
    value["ev"]["points"] = 2**70
    lines[score] = json.dumps(value)
    path = tmp_path / "ofc.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    clean = ingest_paths([source], tmp_path / "clean.duckdb")
    summary = ingest_paths([path], tmp_path / "hands.duckdb")
    assert summary.rejected == clean.rejected + 1
    assert summary.stored == clean.stored - 1
    assert any("reported_points must be from" in reason for reason in summary.files[0].reasons)


@pytest.mark.parametrize("workers", [1, 2])
def test_names_are_normalised_the_same_on_every_path(tmp_path: Path, workers: int) -> None:
    decomposed = "Ame\u0301lie"  # e + combining acute accent
    canonical = [
        deal_hand(1, names=("kofi", "jun", "lee")),
        deal_hand(2, names=("kofi ", "jun", "lee")),  # trailing space
        deal_hand(3, names=(" kofi", "jun", "lee")),
        deal_hand(4, names=(decomposed, "jun", "lee")),
        deal_hand(5, names=("kofi  b", "jun", "lee")),  # inner run kept
    ]
    canonical[1]["button"] = "kofi"  # the button names the same player, normalised
    database = tmp_path / "hands.duckdb"
    ingest_paths([write_jsonl(tmp_path / "a.jsonl", canonical)], database, workers=workers)
    csv_path = tmp_path / "night.csv"
    csv_path.write_text(
        BOARDS_HEADER + "\n"
        "c1,2026-11-02T20:00:00Z,t9,pineapple, kofi ,1,Qh Qd 4c,Kh Kd 7s 7c 2d,As 9s 8s 6s 3s,no,\n"
        f"c1,2026-11-02T20:00:00Z,t9,pineapple,{decomposed},2,5h 5d Jc,9h 9d 9c Tc 3d,Th Td Ts 8h 8d,no,\n",
        encoding="utf-8",
    )
    ingest_paths([csv_path], database)
    players = dict(query(database, "SELECT player, count(*) FROM seats GROUP BY player"))
    assert players["kofi"] == 4
    assert players["Amélie"] == 2 and "Ame\u0301lie" not in players
    assert players["kofi  b"] == 1
    assert count(database, "rejects") == 0


def test_a_record_round_trips_with_its_names_normalised() -> None:
    record = deal_hand(1, names=(" kofi ", "jun", "lee"))
    record["button"] = "kofi "
    record["site"] = " homegame"
    hand = parse_hand(record)
    assert hand.players[0].name == "kofi" and hand.button == "kofi" and hand.site == "homegame"
    with pytest.raises(InvalidHand, match="appears twice"):
        parse_hand(deal_hand(2, names=("kofi", "kofi ", "lee")))
