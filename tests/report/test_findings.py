"""The report's numbers (JSON form) against values computed here from the hand-made records.

The database is built by pipeline.ingest.driver; the expected values come from tests/report/hands.py
(hand-checked boards, points settled by the rules core) and plain Python below - never from the
database or from pipeline.report.
"""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from pipeline.report import NoHandsError, ReportRequest, create_report, report_dict
from tests.report.conftest import SETTINGS
from tests.report.hands import (
    ALIAS,
    BO,
    CY,
    DEE,
    HERO,
    SCRIPT,
    Expected,
    Row,
    group,
    mean,
    standard_error,
)

NAMES = (HERO, ALIAS)


def approx(value: float) -> object:
    """Equal after the report's rounding to six decimals."""
    return pytest.approx(value, abs=2e-6)


@pytest.fixture(scope="module")
def report(report_db: Path) -> dict:
    """The report of ana and her alias, over everything."""
    return report_dict(create_report(report_db, ReportRequest(HERO, aliases=(ALIAS,)), SETTINGS))


def finding(report: dict, key: str) -> dict:
    """One finding of the report by key."""
    matches = [f for f in report["findings"] if f["key"] == key]
    assert matches, (key, [f["key"] for f in report["findings"]])
    return matches[0]


def split(expected: Expected, names: tuple[str, ...] = NAMES) -> tuple[list[Row], list[Row]]:
    """(the player's boards, everyone else's)."""
    mine = [row for row in expected.rows if row.player in names]
    others = [row for row in expected.rows if row.player not in names]
    return mine, others


def rate(rows: list[Row], hit, among=lambda row: True) -> tuple[int, int]:  # noqa: ANN001
    """(hits, trials) over rows passing ``among``."""
    kept = [row for row in rows if among(row)]
    return sum(1 for row in kept if hit(row)), len(kept)


def mix_weighted(mine: list[Row], others: list[Row], hit, among=lambda row: True):  # noqa: ANN001, ANN201
    """Player rate, field rate weighted by the player's mix over variants, and the per-variant
    pieces (variant, player hits, player trials, field rate)."""
    pieces = []
    for variant, part in sorted(group(mine, lambda r: r.variant).items()):
        hits, trials = rate(part, hit, among)
        field_hits, field_trials = rate([r for r in others if r.variant == variant], hit, among)
        if trials and field_trials:
            pieces.append((variant, hits, trials, field_hits / field_trials))
    total = sum(trials for _, _, trials, _ in pieces)
    player = sum(hits for _, hits, _, _ in pieces) / total
    field = sum(trials / total * field_rate for _, _, trials, field_rate in pieces)
    return player, field, pieces


def worth(rows: list[Row], variant: str, yes, no) -> float:  # noqa: ANN001
    """Mean points of boards where ``yes`` minus where ``no`` (every player, one variant)."""
    part = [row for row in rows if row.variant == variant]
    return (mean([r.points for r in part if yes(r)]) - mean([r.points for r in part if no(r)]))


def test_ingested_as_expected(report_db: Path, expected: Expected) -> None:
    """Sanity: the hand-made data holds what the tests rely on."""
    mine, others = split(expected)
    assert len(mine) == 96 and len(expected.rows) == 72 * 3 + 24 * 2
    assert sum(row.foul for row in mine) == 15  # F and f boards of the patterns
    assert sum(row.fantasyland for row in mine) == 11
    # anchor, worked by hand: hand P1-01, ana fouls (F) against bo's straight-flush board
    # (JJ top 6 + SF 15 = 21 royalties) and cy's flush (4): pays 6 + 21 and 6 + 4
    first = [row for row in expected.rows if row.hand_id == "P1-01"]
    assert {(row.player, row.code) for row in first} == {(HERO, "F"), (BO, "B_SF"),
                                                         (CY, "C_FLUSH")}
    assert next(row.points for row in first if row.player == HERO) == -(6 + 21) - (6 + 4)


def test_headline(report: dict, expected: Expected) -> None:
    mine, others = split(expected)
    headline = report["headline"]
    points = [row.points for row in mine]
    assert headline["hands"] == len(mine) == 96
    assert headline["names_with_hands"] == [HERO, ALIAS]
    assert headline["sessions"] == len({(r.player, r.table, r.day) for r in mine}) == 8
    assert headline["points"] == sum(points)
    assert headline["points_per_hand"] == approx(mean(points))
    assert headline["points_se"] == approx(standard_error(points))
    assert headline["low"] == approx(mean(points) - 1.96 * standard_error(points))
    assert headline["first_hand"] == "2026-01-05 20:00"
    assert headline["last_hand"] == "2026-01-12 20:44"
    lines = {line["variant"]: line for line in headline["variants"]}
    assert list(lines) == ["pineapple", "classic"]  # most hands first
    for variant, line in lines.items():
        part = [row.points for row in mine if row.variant == variant]
        assert line["hands"] == len(part)
        assert line["points"] == sum(part)
        assert line["points_per_hand"] == approx(mean(part))
        assert line["points_se"] == approx(standard_error(part))
        # percentile among the other players with at least 15 hands in the variant
        per_player = group([r for r in others if r.variant == variant], lambda r: r.player)
        rates = [mean([r.points for r in rows]) for rows in per_player.values()
                 if len(rows) >= SETTINGS.percentile_min_hands]
        below = sum(r < mean(part) for r in rates) + 0.5 * sum(r == mean(part) for r in rates)
        assert line["players_ranked"] == len(rates)
        assert line["percentile"] == approx(100 * below / len(rates))
    assert lines["pineapple"]["players_ranked"] == 2  # bo and cy; dee has 6 hands, ana_alt is ana


def test_foul_rates(report: dict, expected: Expected) -> None:
    mine, others = split(expected)
    everyone = expected.rows
    overall = finding(report, "fouls.overall")
    player, field, pieces = mix_weighted(mine, others, lambda r: r.foul)
    assert overall["shown"] and overall["player"]["sample"] == 96
    assert overall["player"]["value"] == approx(15 / 96) == approx(player)
    assert overall["field"]["value"] == approx(field)
    low, high = _wilson(15, 96)
    assert overall["player"]["low"] == approx(low) and overall["player"]["high"] == approx(high)
    cost = sum(trials / 96 * (hits / trials - field_rate)
               * worth(everyone, variant, lambda r: r.foul, lambda r: not r.foul)
               for variant, hits, trials, field_rate in pieces)
    assert overall["points_per_hand"] == approx(cost)
    assert overall["points_per_hand"] > 0  # fewer fouls than the field: a gain
    for variant in ("pineapple", "classic"):
        item = finding(report, f"fouls.variant.{variant}")
        hits, trials = rate([r for r in mine if r.variant == variant], lambda r: r.foul)
        field_hits, field_trials = rate([r for r in others if r.variant == variant],
                                        lambda r: r.foul)
        assert item["player"]["value"] == approx(hits / trials)
        assert item["field"]["value"] == approx(field_hits / field_trials)
        assert item["field"]["sample"] == field_trials
    # clear strength in pineapple: 12 of 72 against 42 of 144
    assert finding(report, "fouls.variant.pineapple")["verdict"] == "strength"
    assert "95 %" in finding(report, "fouls.variant.pineapple")["confidence"]


def test_fouls_when_chasing_fantasyland(report: dict, expected: Expected) -> None:
    mine, others = split(expected)
    normal = lambda row: not row.fantasyland  # noqa: E731
    chasing = finding(report, "fouls.chasing")
    player, field, _ = mix_weighted(mine, others, lambda r: r.foul, lambda r: r.chasing)
    hits, trials = rate(mine, lambda r: r.foul, lambda r: r.chasing)
    # chasing: E and F boards (QQ+/KK on top), plus K boards whose king went on top with the
    # first five cards; the K boards of the board-only session do not count
    assert trials == sum(1 for r in mine if r.code in "EF" or (r.code == "K" and r.has_streets))
    assert chasing["player"]["sample"] == trials
    assert chasing["player"]["value"] == approx(player) == approx(hits / trials)
    assert chasing["field"]["value"] == approx(field) == approx(1.0)  # bo's KK tops always foul
    calm = finding(report, "fouls.not_chasing")
    player, field, _ = mix_weighted(mine, others, lambda r: r.foul,
                                    lambda r: normal(r) and not r.chasing)
    assert calm["player"]["value"] == approx(player)
    assert calm["field"]["value"] == approx(field)
    frequency = finding(report, "fouls.chase_frequency")
    player, field, _ = mix_weighted(mine, others, lambda r: r.chasing, normal)
    assert frequency["player"]["value"] == approx(player)
    assert frequency["field"]["value"] == approx(field)
    assert frequency["points_per_hand"] is None  # no price attached to chasing itself
    assert any("no street record" in note for note in report["data_notes"])


def test_fantasyland(report: dict, expected: Expected) -> None:
    mine, others = split(expected)
    entry = finding(report, "fantasyland.entry")
    hits, trials = rate(mine, lambda r: r.fantasyland_next, lambda r: not r.fantasyland)
    assert (hits, trials) == (7, 85)  # one E per session, and the classic E
    assert entry["player"]["value"] == approx(hits / trials)
    assert entry["field"]["value"] == approx(0.0)
    value = {v: worth(expected.rows, v, lambda r: r.fantasyland, lambda r: not r.fantasyland)
             for v in ("pineapple", "classic")}
    gain = sum(
        len([r for r in mine if r.variant == v and not r.fantasyland]) / 96
        * rate([r for r in mine if r.variant == v], lambda r: r.fantasyland_next,
               lambda r: not r.fantasyland)[0]
        / len([r for r in mine if r.variant == v and not r.fantasyland]) * value[v]
        for v in value)
    assert entry["points_per_hand"] == approx(gain)
    stay = finding(report, "fantasyland.stay")
    assert stay["player"]["value"] == approx(4 / 11)  # S boards
    assert stay["field"] is None and stay["verdict"] == "not compared"  # nobody else gets there
    points = finding(report, "fantasyland.points")
    fl_points = [r.points for r in mine if r.fantasyland]
    assert points["player"]["value"] == approx(mean(fl_points))
    assert points["player"]["se"] == approx(standard_error(fl_points))


def test_royalties_by_row(report: dict, expected: Expected) -> None:
    mine, others = split(expected)
    for index, row_name in enumerate(("top", "middle", "bottom")):
        item = finding(report, f"royalties.{row_name}")
        values = [r.royalties[index] for r in mine]
        assert item["player"]["value"] == approx(mean(values))
        assert item["player"]["se"] == approx(standard_error(values))
        field = 0.0
        gain = 0.0
        for variant, part in group(mine, lambda r: r.variant).items():
            theirs = [r.royalties[index] for r in others if r.variant == variant]
            share = len(part) / len(mine)
            field += share * mean(theirs)
            opponents = mean([r.player_count - 1 for r in part])
            gain += share * (mean([r.royalties[index] for r in part]) - mean(theirs)) * opponents
        assert item["field"]["value"] == approx(field)
        assert item["points_per_hand"] == approx(gain)
    # bo's straight flushes: the field's bottom row is far richer
    assert finding(report, "royalties.bottom")["verdict"] == "leak"


def test_scoops(report: dict, expected: Expected) -> None:
    pairs = [p for p in expected.pairs if p.player in NAMES]
    others = [p for p in expected.pairs if p.player not in NAMES]
    won = finding(report, "scoops.won")
    assert won["player"]["sample"] == len(pairs) == 72 * 2 + 24
    assert won["player"]["value"] == approx(sum(p.scoop > 0 for p in pairs) / len(pairs))
    field = 0.0
    for variant, part in group(pairs, lambda p: p.variant).items():
        theirs = [p for p in others if p.variant == variant]
        field += len(part) / len(pairs) * sum(p.scoop > 0 for p in theirs) / len(theirs)
    assert won["field"]["value"] == approx(field)
    lost = finding(report, "scoops.lost")
    assert lost["player"]["value"] == approx(sum(p.scoop < 0 for p in pairs) / len(pairs))


def test_results_by_variant_and_position(report: dict, expected: Expected) -> None:
    mine, others = split(expected)
    for variant in ("pineapple", "classic"):
        item = finding(report, f"results.variant.{variant}")
        part = [r.points for r in mine if r.variant == variant]
        theirs = [r.points for r in others if r.variant == variant]
        assert item["player"]["value"] == approx(mean(part))
        assert item["field"]["value"] == approx(mean(theirs))
        assert item["points_per_hand"] == approx(len(part) / 96 * (mean(part) - mean(theirs)))
    seats = group(mine, lambda r: (r.variant, r.player_count, r.position))
    assert len(seats) == 5
    for (variant, count, position), part in seats.items():
        item = finding(report, f"results.position.{variant}.{count}.{position}")
        theirs = [r.points for r in others
                  if (r.variant, r.player_count, r.position) == (variant, count, position)]
        assert item["player"]["value"] == approx(mean([r.points for r in part]))
        assert item["field"]["value"] == approx(mean(theirs))
        assert item["player"]["sample"] == len(part)
    assert finding(report, "results.position.pineapple.3.2")["title"].endswith("button")


def test_trend_across_sessions(report: dict, expected: Expected) -> None:
    mine, _ = split(expected)
    sessions = sorted(group(mine, lambda r: (r.player, r.table, r.day)).values(),
                      key=lambda rows: min(r.started for r in rows))
    x = np.arange(1, len(sessions) + 1, dtype=float)
    hands = np.array([len(rows) for rows in sessions], dtype=float)
    for key, values in (
        ("trend.points", [mean([r.points for r in rows]) for rows in sessions]),
        ("trend.fouls", [mean([float(r.foul) for r in rows]) for rows in sessions]),
    ):
        slope, _ = np.polyfit(x, np.array(values), 1, w=np.sqrt(hands))
        item = finding(report, key)
        assert item["player"]["sample"] == len(sessions) == 8
        assert item["player"]["value"] == approx(slope)
    # the patterns foul less and less: the foul rate falls
    fouls = finding(report, "trend.fouls")
    assert fouls["player"]["value"] < 0
    assert fouls["verdict"] in ("improving", "probably improving")
    assert [s["hands"] for s in report["sessions"]] == [12] * 8


def test_head_to_head(report: dict, expected: Expected) -> None:
    keys = [f["key"] for f in report["findings"] if f["topic"] == "Head-to-head"]
    # regular opponents only (at least 10 hands together), most hands first; dee has 6
    assert keys == [f"head_to_head.{BO}", f"head_to_head.{CY}", f"head_to_head.{SCRIPT}"]
    assert DEE not in " ".join(keys)
    for opponent in (BO, CY):
        item = finding(report, f"head_to_head.{opponent}")
        mine = [p.settled for p in expected.pairs if p.player in NAMES and p.opponent == opponent]
        theirs = [p.settled for p in expected.pairs
                  if p.opponent == opponent and p.player not in (*NAMES, opponent)]
        assert item["player"]["value"] == approx(mean(mine))
        assert item["player"]["se"] == approx(standard_error(mine))
        assert item["field"]["value"] == approx(mean(theirs))
        assert item["points_per_hand"] == approx(len(mine) / 96 * (mean(mine) - mean(theirs)))
    alone = finding(report, f"head_to_head.{SCRIPT}")
    assert alone["verdict"] == "not compared" and alone["points_per_hand"] is None


def test_notable_hands(report: dict, expected: Expected) -> None:
    mine, _ = split(expected)
    kinds = {}
    for hand in report["notable"]:
        kinds.setdefault(hand["kind"], []).append(hand)
    worst = sorted((r for r in mine if r.foul), key=lambda r: (r.points, r.started))
    assert [h["hand_id"] for h in kinds["costliest_fouls"]] == [r.hand_id for r in worst[:2]]
    best = sorted((r for r in mine if r.points > 0), key=lambda r: (-r.points, r.started))
    assert [h["hand_id"] for h in kinds["biggest_wins"]] == [r.hand_id for r in best[:2]]
    assert all(h["boards"][0]["top"] for h in kinds["fantasyland"])
    hand = kinds["costliest_fouls"][0]
    rows = {r.player: r for r in expected.rows if r.hand_id == hand["hand_id"]}
    for board in hand["boards"]:
        assert board["points"] == rows[board["player"]].points
        assert board["foul"] == rows[board["player"]].foul
        assert tuple(board["royalties"]) == rows[board["player"]].royalties
    settled = {p.opponent: p.settled for p in expected.pairs
               if p.hand_id == hand["hand_id"] and p.player == hand["seat_name"]}
    assert {p["opponent"]: p["settled"] for p in hand["pairings"]} == settled
    assert sum(p["settled"] for p in hand["pairings"]) == hand["points"]


def test_aliases_are_merged(report_db: Path, expected: Expected) -> None:
    alone = report_dict(create_report(report_db, ReportRequest(HERO), SETTINGS))
    mine, others = split(expected, (HERO,))
    assert alone["headline"]["hands"] == len(mine) == 84
    assert alone["headline"]["sessions"] == 7
    assert alone["aliases"] == []
    # without the alias, ana_alt is part of the field
    player, field, _ = mix_weighted(mine, others, lambda r: r.foul)
    assert finding(alone, "fouls.overall")["field"]["value"] == approx(field)
    merged = report_dict(create_report(report_db, ReportRequest(HERO, aliases=(ALIAS, HERO)),
                                       SETTINGS))
    assert merged["headline"]["hands"] == 96 and merged["aliases"] == [ALIAS]


def test_minimum_sample(report_db: Path) -> None:
    classic = report_dict(create_report(report_db, ReportRequest(HERO, variant="classic"),
                                        SETTINGS))
    assert classic["headline"]["hands"] == 24
    stay = finding(classic, "fantasyland.stay")
    assert not stay["shown"] and stay["verdict"] == "not enough data"
    assert stay["player"]["value"] is None and stay["points_per_hand"] is None
    assert stay["confidence"] == "Not enough data: Fantasyland hands: 1, at least 10 needed."
    # two sessions cannot make a trend
    trend = finding(classic, "trend.points")
    assert not trend["shown"]
    assert trend["confidence"] == "Not enough data: sessions: 2, at least 3 needed."
    strict = report_dict(create_report(report_db, ReportRequest(DEE), SETTINGS))
    assert strict["headline"]["hands"] == 6
    # dee's 6 hands are too few for anything but the scoops (12 pairings)
    shown = [f["key"] for f in strict["findings"] if f["shown"]]
    assert shown == ["scoops.won", "scoops.lost"]
    assert finding(strict, "fouls.overall")["confidence"] == (
        "Not enough data: hands: 6, at least 10 needed.")
    assert finding(strict, "head_to_head.none")["confidence"].startswith("Not enough data")


def test_scope_by_dates(report_db: Path, expected: Expected) -> None:
    request = ReportRequest(HERO, aliases=(ALIAS,), since=date(2026, 1, 8), until=date(2026, 1, 11))
    scoped = report_dict(create_report(report_db, request, SETTINGS))
    days = {"2026-01-08", "2026-01-09", "2026-01-10", "2026-01-11"}
    mine = [r for r in expected.rows if r.player in NAMES and r.day in days]
    assert scoped["headline"]["hands"] == len(mine) == 48
    assert scoped["since"] == "2026-01-08" and scoped["until"] == "2026-01-11"
    assert scoped["headline"]["points"] == sum(r.points for r in mine)


def test_no_hands(report_db: Path) -> None:
    with pytest.raises(NoHandsError, match="no hands for nobody"):
        create_report(report_db, ReportRequest("nobody"), SETTINGS)


def _wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    margin = z / (1 + z * z / trials) * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials ** 2))
    return centre - margin, centre + margin


def test_undated_hands(tmp_path: Path, hand_records: list[dict]) -> None:
    """Hands without a start time: no sessions, no trend, said so; everything else still works."""
    from pipeline.ingest.driver import ingest_mappings

    undated = [dict(record, started_at=None, site="undated") for record in hand_records
               if record["table"] == "C1"]
    database = tmp_path / "undated.duckdb"
    assert ingest_mappings(undated, database, "undated.jsonl").stored == 24
    data = report_dict(create_report(database, ReportRequest(HERO), SETTINGS))
    headline = data["headline"]
    assert (headline["hands"], headline["sessions"], headline["undated_hands"]) == (24, 0, 24)
    assert headline["first_hand"] is None and data["sessions"] == []
    assert data["data_notes"] == ["24 hands have no start time: they belong to no session and "
                                  "are left out of the trend."]
    assert finding(data, "trend.points")["confidence"] == (
        "Not enough data: sessions: 0, at least 3 needed.")
    assert all(hand["started_at"] is None for hand in data["notable"])
    assert finding(data, "fouls.overall")["player"]["value"] == approx(3 / 24)
