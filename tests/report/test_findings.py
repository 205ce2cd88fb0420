"""The report's numbers (JSON form) against values computed here from the hand-made records.

The database is built by pipeline.ingest.driver; the expected values come from tests/report/hands.py
(hand-checked boards, points settled by the rules core) and plain Python below - never from the
database or from pipeline.report.

The reference group is the field: everyone but ana and her alias (too few players for the
outlier rule to judge anyone, so nobody is left out). Rates compare every board of each side,
within variant and table size; results compare each board's points against the opponents who
count (never ana), scaled to the whole table. The rates are components of their cause (shown
with an interval, never tested); the tests are the causes, chasing, the seats, head-to-head
and the trends.
"""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from pipeline.report import NoHandsError, ReportRequest, create_report, report_dict
from pipeline.report.stats import benjamini_hochberg
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
FIELD = "the field"


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
    """Player rate, the group's rate weighted by the player's mix over variants and table
    sizes, and the pieces (stratum, player hits, player trials, group rate)."""
    pieces = []
    for stratum, part in sorted(group(mine, lambda r: (r.variant, r.player_count)).items()):
        hits, trials = rate(part, hit, among)
        field_hits, field_trials = rate(
            [r for r in others if (r.variant, r.player_count) == stratum], hit, among)
        if trials and field_trials:
            pieces.append((stratum, hits, trials, field_hits / field_trials))
    total = sum(trials for _, _, trials, _ in pieces)
    player = sum(hits for _, hits, _, _ in pieces) / total
    field = sum(trials / total * field_rate for _, _, trials, field_rate in pieces)
    return player, field, pieces


def basis(expected: Expected, names: tuple[str, ...] = NAMES) -> list[tuple[Row, float]]:
    """Every other player's boards with their value against the opponents who count (not
    ``names``): (player_count - 1) × settled against them / their number; boards with nobody
    to count are dropped."""
    settled: dict[tuple[str, str], list[int]] = {}
    for pair in expected.pairs:
        if pair.opponent not in names:
            settled.setdefault((pair.hand_id, pair.player), []).append(pair.settled)
    values = []
    for row in expected.rows:
        if row.player in names:
            continue
        counted = settled.get((row.hand_id, row.player))
        if counted:
            values.append((row, (row.player_count - 1) * sum(counted) / len(counted)))
    return values


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
    mine, _ = split(expected)
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
    others = basis(expected)
    for variant, line in lines.items():
        part = [row.points for row in mine if row.variant == variant]
        assert line["hands"] == len(part)
        assert line["points"] == sum(part)
        assert line["points_per_hand"] == approx(mean(part))
        assert line["points_se"] == approx(standard_error(part))
        # the group's players with at least 15 hands (boards that count) in the variant: too
        # few for a percentile to mean anything (at least 10 are needed), and it says so
        per_player = group([(r, v) for r, v in others if r.variant == variant],
                           lambda item: item[0].player)
        rates = [mean([v for _, v in rows]) for rows in per_player.values()
                 if len(rows) >= SETTINGS.percentile_min_hands]
        assert line["players_ranked"] == len(rates)
        assert line["percentile"] is None and line["percentile_label"] == ""
    assert lines["pineapple"]["players_ranked"] == 2  # bo and cy; dee has 6 hands, ana_alt is ana
    assert lines["pineapple"]["percentile_note"] == (
        "no percentile: 2 other players with enough hands, at least 10 needed")


def test_the_reference_group(report: dict) -> None:
    group = report["reference"]
    assert group["label"] == FIELD and group["kind"] == "field"
    assert sorted(group["members"]) == sorted([BO, CY, DEE, SCRIPT])
    assert group["left_out"] == []  # three players with 10 hands: too few to judge anyone
    assert any("needs 4 players" in note for note in group["notes"])
    # the group is named on every finding
    for finding_ in report["findings"]:
        if finding_["topic"] not in ("Trend", "Did I improve?"):
            assert finding_["reference_label"] == FIELD, finding_["key"]
    for cause in report["causes"]:
        assert cause["reference_label"] == FIELD


def test_foul_rates(report: dict, expected: Expected) -> None:
    mine, others = split(expected)
    everyone = expected.rows
    overall = finding(report, "fouls.overall")
    player, field, pieces = mix_weighted(mine, others, lambda r: r.foul)
    assert overall["shown"] and overall["player"]["sample"] == 96
    assert overall["player"]["value"] == approx(15 / 96) == approx(player)
    assert overall["reference"]["value"] == approx(field)
    # the interval is never narrower than Wilson's (boards as units) nor than the one with
    # sessions as units
    low, high = _wilson(15, 96)
    assert overall["player"]["low"] <= low + 1e-6 and overall["player"]["high"] >= high - 1e-6
    assert overall["difference"] == approx(player - field)
    assert overall["difference_low"] < overall["difference"] < overall["difference_high"]
    # a component of the fouls cause: no test of its own, no points estimate
    assert overall["verdict"] == "component" and overall["p_value"] is None
    assert overall["cause"] == "fouls" and overall["points_per_100"] is None
    assert "percentage points" in overall["confidence"]
    assert overall["reference_sample"] == sum(1 for r in others
                                              if (r.variant, r.player_count) in
                                              {(v, c) for v, c in group(
                                                  mine, lambda r: (r.variant, r.player_count))})
    del everyone
    for variant in ("pineapple", "classic"):
        item = finding(report, f"fouls.variant.{variant}")
        hits, trials = rate([r for r in mine if r.variant == variant], lambda r: r.foul)
        field_hits, field_trials = rate([r for r in others if r.variant == variant],
                                        lambda r: r.foul)
        assert item["player"]["value"] == approx(hits / trials)
        assert item["reference"]["value"] == approx(field_hits / field_trials)
        assert item["reference"]["sample"] == field_trials
    # lower in pineapple: 12 of 72 against 42 of 144 - but over 6 sessions whose foul rates fall
    # from 4 of 12 to 1 of 12, so the interval (sessions as units) is wide
    pineapple = finding(report, "fouls.variant.pineapple")
    assert pineapple["difference"] == approx(12 / 72 - 42 / 144)
    assert pineapple["difference_low"] < pineapple["difference"] < pineapple["difference_high"]
    assert pineapple["verdict"] == "component" and not pineapple["survives"]


def test_fouls_when_chasing_fantasyland(report: dict, expected: Expected) -> None:
    mine, others = split(expected)
    normal = lambda row: not row.fantasyland  # noqa: E731
    chasing = finding(report, "fouls.chasing")
    player, field, _ = mix_weighted(mine, others, lambda r: r.foul, lambda r: r.chasing)
    hits, trials = rate(mine, lambda r: r.foul, lambda r: r.chasing)
    # chasing: E and F boards (QQ+/KK on top); a lone king put on top (K boards) is not a
    # Fantasyland draw (the top is full after the first street: no slot left to pair it)
    assert trials == sum(1 for r in mine if r.code in "EF")
    assert chasing["player"]["sample"] == trials
    assert chasing["player"]["value"] == approx(player) == approx(hits / trials)
    assert chasing["reference"]["value"] == approx(field) == approx(1.0)  # bo's KK tops foul
    calm = finding(report, "fouls.not_chasing")
    player, field, _ = mix_weighted(mine, others, lambda r: r.foul,
                                    lambda r: normal(r) and not r.chasing)
    assert calm["player"]["value"] == approx(player)
    assert calm["reference"]["value"] == approx(field)
    frequency = finding(report, "fouls.chase_frequency")
    player, field, _ = mix_weighted(mine, others, lambda r: r.chasing, normal)
    assert frequency["player"]["value"] == approx(player)
    assert frequency["reference"]["value"] == approx(field)
    assert frequency["points_per_100"] is None  # no price attached to chasing itself
    # the chasing answer compares the rates both ways
    answer = report["chasing"]
    assert answer["player_rate"] == approx(frequency["player"]["value"])
    assert answer["group_rate"] == approx(frequency["reference"]["value"])
    assert answer["direction"] in ("more", "less", "about as often")
    assert "You chase Fantasyland in" in answer["answer"]
    assert any("no street record" in note for note in report["data_notes"])


def test_fantasyland(report: dict, expected: Expected) -> None:
    mine, others = split(expected)
    entry = finding(report, "fantasyland.entry")
    hits, trials = rate(mine, lambda r: r.fantasyland_next, lambda r: not r.fantasyland)
    assert (hits, trials) == (7, 85)  # one E per session, and the classic E
    assert entry["player"]["value"] == approx(hits / trials)
    assert entry["reference"]["value"] == approx(0.0)
    assert entry["difference"] == approx(hits / trials) and entry["points_per_100"] is None
    stay = finding(report, "fantasyland.stay")
    assert stay["player"]["value"] == approx(4 / 11)  # S boards
    assert stay["reference"] is None and stay["verdict"] == "not compared"  # nobody else
    assert stay["confidence"] == "The field has no hands here to compare with."
    points = finding(report, "fantasyland.points")
    fl_points = [r.points for r in mine if r.fantasyland]
    # ana's Fantasyland hands were all played in pineapple's 3-handed games and in classic;
    # the points count the pairings that matter (nobody is left out: her points)
    assert points["player"]["sample"] == len(fl_points)
    assert points["verdict"] == "not compared"  # nobody else played Fantasyland


def test_royalties_by_row(report: dict, expected: Expected) -> None:
    mine, others = split(expected)
    for index, row_name in enumerate(("top", "middle", "bottom")):
        item = finding(report, f"royalties.{row_name}")
        values = [r.royalties[index] for r in mine]
        assert item["player"]["value"] == approx(mean(values))
        # never below the error with boards as units, within variant and table size
        strata = group(mine, lambda r: (r.variant, r.player_count))
        within = math.sqrt(sum(len(part) * standard_error(
            [r.royalties[index] for r in part]) ** 2 * len(part) for part in strata.values())
            / len(mine) ** 2)
        assert item["player"]["se"] >= within - 1e-6
        field = 0.0
        for stratum, part in group(mine, lambda r: (r.variant, r.player_count)).items():
            theirs = [r.royalties[index] for r in others
                      if (r.variant, r.player_count) == stratum]
            field += len(part) / len(mine) * mean(theirs)
        assert item["reference"]["value"] == approx(field)
        assert item["points_per_100"] is None and item["cause"] == "royalties"
    # bo's straight flushes: the field's bottom row is far richer
    bottom = finding(report, "royalties.bottom")
    assert bottom["difference"] < 0 and bottom["verdict"] == "component"


def test_scoops(report: dict, expected: Expected) -> None:
    # the group's pairings never include those against the player; in Classic ana only met
    # <script>, whose pairings (all against her) do not count: only pineapple is compared
    pairs = [p for p in expected.pairs if p.player in NAMES and p.variant == "pineapple"]
    others = [p for p in expected.pairs if p.player not in NAMES and p.opponent not in NAMES]
    won = finding(report, "scoops.won")
    assert won["player"]["sample"] == len(pairs) == 72 * 2
    assert won["player"]["value"] == approx(sum(p.scoop > 0 for p in pairs) / len(pairs))
    field = 0.0
    for variant, part in group(pairs, lambda p: p.variant).items():
        theirs = [p for p in others if p.variant == variant]
        if theirs:
            field += len(part) * sum(p.scoop > 0 for p in theirs) / len(theirs)
    compared = sum(len(part) for variant, part in group(pairs, lambda p: p.variant).items()
                   if any(p.variant == variant for p in others))
    assert won["reference"]["value"] == approx(field / compared)
    lost = finding(report, "scoops.lost")
    assert lost["player"]["value"] == approx(sum(p.scoop < 0 for p in pairs) / len(pairs))
    assert lost["cause"] == "fouls" and won["cause"] == "rows"


def test_the_balance_sheet_by_variant_and_the_seats(report: dict, expected: Expected) -> None:
    mine, _ = split(expected)
    others = basis(expected)
    part = [r for r in mine if r.variant == "pineapple"]
    # the group's points per hand in the same variant and table size, weighted by ana's hands
    sizes = group(part, lambda r: r.player_count)
    reference = sum(len(rows) / len(part)
                    * mean([v for r, v in others
                            if (r.variant, r.player_count) == ("pineapple", size)])
                    for size, rows in sizes.items())
    [sheet] = [s for s in report["balance"] if s["variant"] == "pineapple"]
    assert sheet["net_per_100"] == pytest.approx(100 * (mean([r.points for r in part])
                                                        - reference), abs=1e-4)
    # the sheet's rates are the components' figures
    fouls = next(line for line in sheet["lines"] if line["key"] == "fouls")
    component = finding(report, "fouls.variant.pineapple")
    assert fouls["player"] == pytest.approx(100 * component["player"]["value"], abs=1e-3)
    assert fouls["reference"] == pytest.approx(100 * component["reference"]["value"], abs=1e-3)
    # in Classic ana only met <script>: leaving out his pairings against her, the group has
    # nothing to compare with there, and the report says so instead of guessing
    assert not [s for s in report["balance"] if s["variant"] in ("classic", "all")]
    assert any("24 of the player's hands have nothing to compare with" in note
               for note in report["data_notes"])
    # the seats: one test, of each seat against the group's same seat beyond ana's own average
    seats = finding(report, "seats")
    assert seats["topic"] == "Seats" and seats["shown"]
    assert seats["p_value"] is not None and seats["q_value"] is not None
    differences = {}
    for position in range(3):
        own = [r.points for r in part if r.position == position]
        theirs = [v for r, v in others
                  if (r.variant, r.player_count, r.position) == ("pineapple", 3, position)]
        differences[position] = mean(own) - mean(theirs)
    assert "pineapple, 3 players" in seats["note"]
    assert not [f for f in report["findings"] if f["key"].startswith("results.")]


def test_the_causes_add_up(report: dict, expected: Expected) -> None:
    """The ranked list: four causes that add up to the difference, ranked by points per 100."""
    causes = report["causes"]
    assert [c["key"] for c in causes] == [c["key"] for c in
                                          sorted(causes, key=lambda c: c["points_per_100"])]
    assert {c["key"] for c in causes} == {"fouls", "fantasyland", "royalties", "rows"}
    [total] = report["balance"]  # only pineapple has anything to compare with
    assert sum(c["points_per_100"] for c in causes) == pytest.approx(total["net_per_100"],
                                                                     abs=1e-4)
    mine, _ = split(expected)
    others = basis(expected)
    compared = [r for r in mine if r.variant == "pineapple"]
    theirs = [v for r, v in others if (r.variant, r.player_count) == ("pineapple", 3)]
    difference = mean([r.points for r in compared]) - mean(theirs)
    assert total["net_per_100"] == pytest.approx(100 * difference, abs=1e-4)
    assert total["hands"] == len(compared) == 72
    for cause in causes:
        assert sum(share["hands"] for share in cause["by_variant"]) == 72
        assert cause["low"] < cause["points_per_100"] < cause["high"]


def test_one_correction_over_every_test(report: dict) -> None:
    tested = [f for f in report["findings"] if f["p_value"] is not None]
    causes = [c for c in report["causes"] if c["p_value"] is not None]
    p_values = ([c["p_value"] for c in causes] + [report["chasing"]["p_value"]]
                + [f["p_value"] for f in tested])
    assert report["tests"] == len(p_values) == len(report["family"])
    # components are never tested: only the causes, chasing, seats, opponents and time
    assert {f["topic"] for f in tested} <= {"Seats", "Head-to-head", "Trend", "Did I improve?"}
    q_values = benjamini_hochberg(p_values)
    by_key = {line["key"]: line for line in report["family"]}
    items = [(f"cause.{c['key']}", c) for c in causes] + [("chasing", report["chasing"])] + [
        (f["key"], f) for f in tested]
    for (key, item), q in zip(items, q_values, strict=True):
        assert item["q_value"] == approx(q) and by_key[key]["q_value"] == approx(q)
        assert by_key[key]["clear"] == (q <= SETTINGS.fdr)
        if key != "chasing":
            assert item["survives"] == (q <= SETTINGS.fdr)
    # the summary is built from the clear tests only; the appendix lists the others
    clear = {line["key"] for line in report["family"] if line["clear"]}
    for summary_item in report["summary"]:
        assert set(summary_item["tests"]) <= clear
    assert set(report["exploratory"]) == set(by_key) - clear


def test_trend_across_sessions(report: dict, expected: Expected) -> None:
    from tests.report.test_trends import _dummy_regression

    mine, _ = split(expected)
    sessions = sorted(group(mine, lambda r: (r.player, r.table, r.day)).items(),
                      key=lambda item: min(r.started for r in item[1]))
    number = {key: index for index, (key, _) in enumerate(sessions, start=1)}
    ordered = sorted(mine, key=lambda r: (r.started, r.hand_id))
    x = np.array([float(number[(r.player, r.table, r.day)]) for r in ordered])
    strata = [f"{r.variant}/{r.player_count}" for r in ordered]
    ids = [f"{r.player}/{r.table}/{r.day}" for r in ordered]
    for key, values in (("trend.points", [float(r.points) for r in ordered]),
                        ("trend.fouls", [float(r.foul) for r in ordered])):
        slope, se, df = _dummy_regression(np.array(values), x, strata, ids)
        item = finding(report, key)
        assert item["player"]["sample"] == len(sessions) == 8
        assert item["player"]["value"] == approx(slope)
        assert item["player"]["se"] == approx(se)
        assert item["reference_label"] == "the player's own earlier sessions"
    # the patterns foul less and less: the foul rate falls
    fouls = finding(report, "trend.fouls")
    assert fouls["player"]["value"] < 0
    assert fouls["verdict"] in ("improving", "not clear")
    assert [s["hands"] for s in report["sessions"]] == [12] * 8


def test_head_to_head(report: dict, expected: Expected) -> None:
    keys = [f["key"] for f in report["findings"] if f["topic"] == "Head-to-head"]
    # regular opponents only (at least 10 hands together), most hands first; dee has 6; then
    # the one test over them
    assert keys == [f"head_to_head.{BO}", f"head_to_head.{CY}", f"head_to_head.{SCRIPT}",
                    "head_to_head"]
    assert DEE not in " ".join(keys)
    for opponent in (BO, CY):  # pineapple, three-handed only
        item = finding(report, f"head_to_head.{opponent}")
        mine = [p.settled for p in expected.pairs if p.player in NAMES and p.opponent == opponent]
        theirs = [p.settled for p in expected.pairs
                  if p.opponent == opponent and p.player not in (*NAMES, opponent)]
        assert item["player"]["value"] == approx(mean(mine))
        assert item["player"]["se"] >= standard_error(mine) - 1e-9
        assert item["reference"]["value"] == approx(mean(theirs))
        assert item["difference"] == approx(mean(mine) - mean(theirs))
        assert item["verdict"] == "component" and item["p_value"] is None
        assert item["difference_low"] < item["difference"] < item["difference_high"]
        assert "every hand together counts" in item["note"]
    # one test: do ana's differences depend on the opponent beyond their average? (two
    # opponents compared: one degree of freedom)
    test = finding(report, "head_to_head")
    assert test["p_value"] is not None and test["player"]["sample"] == 2
    differences = [finding(report, f"head_to_head.{o}")["difference"] for o in (BO, CY)]
    assert f"against {BO} " in test["note"] and f"against {CY} " in test["note"]
    assert (test["z"] > 0) == (abs(differences[0] - differences[1]) > 1e-9)
    # <script> played only heads-up Classic against ana: nobody of the group played him in
    # the same variant and table size, so there is nothing to compare within the mix
    alone = finding(report, f"head_to_head.{SCRIPT}")
    assert alone["verdict"] == "too few to judge" and alone["p_value"] is None
    assert alone["confidence"].startswith(
        "Too few to judge: of the player's 24 hands against <script>alert(1)</script>, 0 share "
        "a variant and table size with the group's")


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
        assert (board["foul_reason"] is not None) == board["foul"]
    settled = {p.opponent: p.settled for p in expected.pairs
               if p.hand_id == hand["hand_id"] and p.player == hand["seat_name"]}
    assert {p["opponent"]: p["settled"] for p in hand["pairings"]} == settled
    assert sum(p["settled"] for p in hand["pairings"]) == hand["points"]
    # every fouled board explained in words (the rules core's reason, re-derived here from the
    # hand-checked board), cards sorted within rows: pairs first, then high to low
    from pipeline.rules import STANDARD, Variant, evaluate_board, parse_cards
    from tests.report.hands import BOARDS

    order = "23456789TJQKA"
    for notable in report["notable"]:
        for board in notable["boards"]:
            code = next(r.code for r in expected.rows
                        if r.hand_id == notable["hand_id"] and r.player == board["player"])
            checked = BOARDS[code]
            for row in ("top", "middle", "bottom"):
                cards = getattr(checked, row).split()
                counts = {card[0]: sum(c[0] == card[0] for c in cards) for card in cards}
                shown = board[row]
                assert sorted(shown) == sorted(cards)
                keys = [(-counts[c[0]], -order.index(c[0])) for c in shown]
                assert keys == sorted(keys), shown
            verdict = evaluate_board(*(parse_cards(getattr(checked, row)) for row in
                                       ("top", "middle", "bottom")),
                                     Variant(notable["variant"]), STANDARD)
            assert board["foul_reason"] == verdict.foul_reason
    board = next(b for b in hand["boards"] if b["is_player"])
    assert board["foul_reason"].startswith("top (pair of kings) beats middle")
    assert board["foul_reason"] in hand["reason"]


def test_aliases_are_merged(report_db: Path, expected: Expected) -> None:
    alone = report_dict(create_report(report_db, ReportRequest(HERO), SETTINGS))
    mine, others = split(expected, (HERO,))
    assert alone["headline"]["hands"] == len(mine) == 84
    assert alone["headline"]["sessions"] == 7
    assert alone["aliases"] == []
    # without the alias, ana_alt is part of the field
    assert ALIAS in alone["reference"]["members"]
    player, field, _ = mix_weighted(mine, others, lambda r: r.foul)
    assert finding(alone, "fouls.overall")["reference"]["value"] == approx(field)
    merged = report_dict(create_report(report_db, ReportRequest(HERO, aliases=(ALIAS, HERO)),
                                       SETTINGS))
    assert merged["headline"]["hands"] == 96 and merged["aliases"] == [ALIAS]


def test_minimum_sample(report_db: Path) -> None:
    classic = report_dict(create_report(report_db, ReportRequest(HERO, variant="classic"),
                                        SETTINGS))
    assert classic["headline"]["hands"] == 24
    stay = finding(classic, "fantasyland.stay")
    assert not stay["shown"] and stay["verdict"] == "too few to judge"
    assert stay["player"]["value"] is None and stay["points_per_100"] is None
    assert stay["confidence"] == "Too few to judge: Fantasyland hands: 1, at least 10 needed."
    # two sessions cannot make a trend
    trend = finding(classic, "trend.points")
    assert not trend["shown"]
    assert trend["confidence"] == "Too few to judge: sessions: 2, at least 3 needed."
    strict = report_dict(create_report(report_db, ReportRequest(DEE), SETTINGS))
    assert strict["headline"]["hands"] == 6
    # dee's 6 hands are too few for anything but the scoops (12 pairings)
    shown = [f["key"] for f in strict["findings"] if f["shown"]]
    assert shown == ["scoops.lost", "scoops.won"]
    assert finding(strict, "fouls.overall")["confidence"] == (
        "Too few to judge: hands: 6, at least 10 needed.")
    assert not [f for f in strict["findings"] if f["topic"] == "Head-to-head"]
    assert not finding(strict, "seats")["shown"]


def test_scope_by_dates(report_db: Path, expected: Expected) -> None:
    request = ReportRequest(HERO, aliases=(ALIAS,), since=date(2026, 1, 8), until=date(2026, 1, 11))
    scoped = report_dict(create_report(report_db, request, SETTINGS))
    days = {"2026-01-08", "2026-01-09", "2026-01-10", "2026-01-11"}
    mine = [r for r in expected.rows if r.player in NAMES and r.day in days]
    assert scoped["headline"]["hands"] == len(mine) == 48
    assert scoped["since"] == "2026-01-08" and scoped["until"] == "2026-01-11"
    assert scoped["headline"]["points"] == sum(r.points for r in mine)


def test_before_and_after_a_date(report_db: Path, expected: Expected) -> None:
    from tests.report.test_trends import _dummy_regression

    request = ReportRequest(HERO, aliases=(ALIAS,), change_date=date(2026, 1, 9))
    data = report_dict(create_report(report_db, request, SETTINGS))
    assert data["change_date"] == "2026-01-09"
    mine = sorted(split(expected)[0], key=lambda r: (r.started, r.hand_id))
    after = np.array([float(r.day >= "2026-01-09") for r in mine])
    strata = [f"{r.variant}/{r.player_count}" for r in mine]
    ids = [f"{r.player}/{r.table}/{r.day}" for r in mine]
    fouls = finding(data, "change.fouls")
    slope, se, _ = _dummy_regression(np.array([float(r.foul) for r in mine]), after, strata, ids)
    assert fouls["player"]["value"] == approx(slope)
    assert fouls["player"]["se"] == approx(se)
    assert fouls["player"]["low"] < slope < fouls["player"]["high"]
    assert "hands before" in fouls["note"] and "without holding the mix" in fouls["note"]


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
    assert data["data_notes"][0] == ("24 hands have no start time: they belong to no session "
                                     "(each counts as a session of its own) and are left out "
                                     "of the trend.")
    assert finding(data, "trend.points")["confidence"] == (
        "Too few to judge: sessions: 0, at least 3 needed.")
    assert all(hand["started_at"] is None for hand in data["notable"])
    assert finding(data, "fouls.overall")["player"]["value"] == approx(3 / 24)
