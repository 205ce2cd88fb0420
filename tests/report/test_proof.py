"""Findings a coach can stand behind, proven on simulated players of known style.

The simulator's bots have known styles: solid (avoids fouls), chaser (gambles for Fantasyland,
fouls more), random (any legal placement) and drifter (solid for the first half of the run,
careless after). The report must recover what is there and invent nothing.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipeline.report import ReportRequest, create_report, report_dict
from pipeline.report.data import gather_report_data
from pipeline.report.findings import build_report
from pipeline.report.model import ReportSettings
from pipeline.report.reference import ReferenceSpec
from pipeline.report.trends import within_effect
from tests.report.conftest import CHASERS, DRIFTER, RANDOM, SOLIDS, Simulated

SOLID_GROUP = ReferenceSpec.parse("named:" + ",".join(SOLIDS))


def finding(report, key: str):  # noqa: ANN001, ANN201
    """One finding of a Report by key."""
    matches = [f for f in report.findings if f.key == key]
    assert matches, key
    return matches[0]


def _sql(database: Path, sql: str, params: list) -> list[tuple]:  # noqa: ANN001
    connection = duckdb.connect(str(database), read_only=True)
    try:
        return connection.execute(sql, params).fetchall()
    finally:
        connection.close()


@pytest.mark.parametrize("chaser", CHASERS)
def test_the_chasers_higher_foul_rate_is_found_against_the_solid_players(
        proof_db: Simulated, chaser: str) -> None:
    report = create_report(proof_db.database, ReportRequest(chaser, reference=SOLID_GROUP))
    fouls = finding(report, "fouls.overall")
    assert report.reference.label == "regulars (mara, lee, priya, sven)"
    assert fouls.reference_label == report.reference.label  # the group is named on the finding
    assert set(report.reference.members) == set(SOLIDS)
    # the solid players' foul rate, counted here straight from the database, mix-weighted by
    # the chaser's own hands per variant
    rows = _sql(proof_db.database, """
        SELECT h.variant, s.player IN (SELECT unnest(?)) AS solid,
               count(*) AS hands, count(*) FILTER (WHERE e.foul) AS fouls
        FROM seats s JOIN hands h USING (hand_key)
        JOIN evaluations e ON e.hand_key = s.hand_key AND e.player = s.player
        WHERE s.player = ? OR s.player IN (SELECT unnest(?))
        GROUP BY ALL""", [list(SOLIDS), chaser, list(SOLIDS)])
    mine = {v: (h, f) for v, solid, h, f in rows if not solid}
    theirs = {v: f / h for v, solid, h, f in rows if solid}
    total = sum(h for h, _ in mine.values())
    assert fouls.player.value == pytest.approx(sum(f for _, f in mine.values()) / total)
    assert fouls.reference.value == pytest.approx(
        sum(h / total * theirs[v] for v, (h, _) in mine.items()))
    assert fouls.player.value > fouls.reference.value + 0.08  # half as often again, or more
    # the foul rate is a component of the fouls cause: its difference's interval is above zero
    assert fouls.verdict == "component" and fouls.difference_low > 0.04
    assert "against regulars" in fouls.confidence
    # the cause is the top of the ranked list, a clear cost, and the summary says so (alone or
    # as the costly side of a trade-off against the Fantasyland the chaser gains)
    assert report.causes[0].key == "fouls" and report.causes[0].verdict == "clear cost"
    assert any("fouls" in item.leaks for item in report.summary)


def test_against_the_field_the_random_player_is_left_out(proof_db: Simulated) -> None:
    report = create_report(proof_db.database, ReportRequest(CHASERS[0]))
    assert [item.player for item in report.reference.left_out] == [RANDOM]
    assert RANDOM not in report.reference.members
    # the "foul rate when not chasing" strength came from the random player alone
    calm = finding(report, "fouls.not_chasing")
    assert calm.verdict != "strength"


def test_the_random_players_ranked_list(proof_db: Simulated) -> None:
    """Top item fouling; the items add up to the player's actual loss, never more."""
    report = create_report(proof_db.database, ReportRequest(RANDOM))
    assert report.reference.player_is_outlier  # so all the player's pairings count
    assert report.causes[0].key == "fouls"
    assert report.summary[0].kind == "leak" and report.summary[0].leaks == ("fouls",)
    actual = report.headline.points_per_hand * 100  # points per 100 hands, every hand
    total = sum(cause.points_per_100 for cause in report.causes)
    assert actual < -500
    assert total == pytest.approx(actual, abs=1e-6)
    leaks = sum(cause.points_per_100 for cause in report.causes if cause.points_per_100 < 0)
    assert leaks >= actual - 1e-6  # the leaks never add up to more than the loss
    # the scoops suffered and rows lost are not separate items: they are the fouls cause
    assert {cause.key for cause in report.causes} == {"fouls", "fantasyland", "royalties",
                                                      "rows"}
    assert finding(report, "scoops.lost").cause == "fouls"


def test_the_balance_sheet_net_equals_the_difference_sql_computes(proof_db: Simulated) -> None:
    report = create_report(proof_db.database,
                           ReportRequest(CHASERS[0], reference=SOLID_GROUP))
    left_out = [item.player for item in report.reference.left_out]
    assert left_out == [RANDOM]
    # per board: points against the opponents who count, scaled to the whole table
    rows = _sql(proof_db.database, """
        WITH boards AS (
            SELECT m.hand_key, m.player,
                   (h.player_count - 1) * sum(m.settled)::DOUBLE / count(*) AS value
            FROM matchups m JOIN hands h USING (hand_key)
            WHERE (m.player = ? AND m.opponent NOT IN (SELECT unnest(?)))
               OR (m.player IN (SELECT unnest(?))
                   AND m.opponent NOT IN (SELECT unnest(?)))
            GROUP BY m.hand_key, m.player, h.player_count
        )
        SELECT h.variant, h.player_count, b.player = ? AS mine, count(*), avg(b.value)
        FROM boards b JOIN hands h USING (hand_key)
        GROUP BY ALL""", [CHASERS[0], left_out, list(SOLIDS), [CHASERS[0], *left_out],
                          CHASERS[0]])
    mine = {(v, k): (n, mean) for v, k, is_mine, n, mean in rows if is_mine}
    theirs = {(v, k): mean for v, k, is_mine, _, mean in rows if not is_mine}
    sheets = {sheet.variant: sheet for sheet in report.balance}
    assert set(sheets) == {"pineapple", "classic", "all"}
    for variant in ("pineapple", "classic", None):
        strata = [key for key in mine if variant is None or key[0] == variant]
        hands = sum(mine[key][0] for key in strata)
        player = sum(mine[key][0] * mine[key][1] for key in strata) / hands
        group = sum(mine[key][0] / hands * theirs[key] for key in strata)
        sheet = sheets[variant or "all"]
        assert sheet.hands == hands
        assert sheet.net_per_100 == pytest.approx(100 * (player - group), abs=1e-9)
        assert sum(value for _, value in sheet.causes) == pytest.approx(sheet.net_per_100,
                                                                        abs=1e-9)
        assert sheet.player_per_hand == pytest.approx(player, abs=1e-12)
        assert sheet.reference_per_hand == pytest.approx(group, abs=1e-12)
    # the fouls line counts the chaser's fouls per 100 hands
    fouls = next(line for line in sheets["all"].lines if line.key == "fouls")
    assert fouls.player > fouls.reference


def test_the_drifters_real_change_is_found_before_and_after(proof_db: Simulated) -> None:
    date = proof_db.switch.date()
    report = create_report(proof_db.database, ReportRequest(DRIFTER, change_date=date))
    change = finding(report, "change.fouls")
    assert change.survives and change.verdict == "got worse"
    assert change.player.low > 0.05  # the interval for the difference excludes no change
    # the true change, counted straight from the database (before and after, same variants)
    rows = _sql(proof_db.database, """
        SELECT h.started_at >= ? AS after, avg(e.foul::INTEGER)
        FROM seats s JOIN hands h USING (hand_key)
        JOIN evaluations e ON e.hand_key = s.hand_key AND e.player = s.player
        WHERE s.player = ? GROUP BY ALL""", [proof_db.switch, DRIFTER])
    rates = dict(rows)
    assert change.player.low <= rates[True] - rates[False] + 0.05
    assert change.player.high >= rates[True] - rates[False] - 0.05
    assert any("change.fouls" in item.tests for item in report.summary)
    # the solid players did not change: no clear change for any of them at the same date
    for player in SOLIDS:
        solid = create_report(proof_db.database, ReportRequest(player, change_date=date))
        assert not finding(solid, "change.fouls").survives, player
        assert not finding(solid, "change.points").survives, player


def test_no_clear_trend_for_fixed_bots_over_a_changing_mix(mix_db: Path) -> None:
    """Every player plays Classic in October and Pineapple from December: the mix changes
    completely, the play never does. No fair trend survives the correction - while the same
    line fitted with the mix ignored (the old report's) finds "trends" in several players."""
    naive = 0
    for player in ("mara", "jun", "lee", "ana", "tomas", "priya", "kofi", "sven"):
        report = create_report(mix_db, ReportRequest(player))
        assert {v.variant for v in report.headline.variants} == {"classic", "pineapple"}
        for key in ("trend.points", "trend.fouls"):
            trend = finding(report, key)
            assert not trend.survives, (player, key, trend.confidence)
            assert trend.verdict not in ("improving", "getting worse")
        hands = gather_report_data(mix_db, ReportRequest(player)).hands
        order = {s: n for n, s in enumerate(
            hands.group_by("session_id").agg(pl.col("started_at").min())
            .sort("started_at")["session_id"].to_list(), start=1)}
        for column in ("points", "foul"):
            fit = within_effect([float(v) for v in hands[column].to_list()],
                                [float(order[s]) for s in hands["session_id"].to_list()],
                                ["all"] * hands.height, hands["session_id"].to_list())
            naive += fit is not None and fit.p_value is not None and fit.p_value < 0.05
    assert naive >= 3


def test_only_what_survives_reaches_the_summary(proof_db: Simulated) -> None:
    report = create_report(proof_db.database, ReportRequest(CHASERS[1]))
    data = report_dict(report)
    clear = {test["key"] for test in data["family"] if test["clear"]}
    assert data["summary"] and clear
    for item in data["summary"]:
        assert item["tests"] and set(item["tests"]) <= clear
    # every test is listed once, with its q-value; what is not clear is in the appendix
    tested = [f for f in data["findings"] if f["p_value"] is not None]
    causes = [c for c in data["causes"] if c["p_value"] is not None]
    assert data["tests"] == len(data["family"]) == len(tested) + len(causes) + 1  # + chasing
    for test in data["family"]:
        assert (test["q_value"] <= report.settings.fdr) == test["clear"]
        assert (test["key"] in data["exploratory"]) == (not test["clear"])
    # the components of the causes are never tested on their own
    assert all(f["p_value"] is None for f in data["findings"] if f["cause"])


def test_a_stricter_rate_keeps_fewer_findings(proof_db: Simulated) -> None:
    request = ReportRequest(CHASERS[1])
    data = gather_report_data(proof_db.database, request)
    loose = build_report(data, request, ReportSettings(fdr=0.2))
    strict = build_report(data, request, replace(ReportSettings(), fdr=0.001))
    assert sum(t.clear for t in strict.family) < sum(t.clear for t in loose.family)
    # the same tests, the same q-values: only the cut moves
    assert [t.q_value for t in strict.family] == [t.q_value for t in loose.family]


def test_progress_hands_are_the_report_hands(proof_db: Simulated) -> None:
    """The comparison pages read a lighter question for trends: the same hands, same order."""
    from pipeline import read
    from pipeline.read.scope import Filters

    scope = Filters(players=(DRIFTER, RANDOM))
    light = read.report.report_progress_hands(proof_db.database, scope)
    full = read.report.report_own_hands(proof_db.database, scope)
    columns = ["hand_key", "started_at", "session_id", "variant", "player_count", "player",
               "points", "foul"]
    assert light.select(columns).equals(full.select(columns))
    with pytest.raises(ValueError, match="needs the players"):
        read.report.report_progress_hands(proof_db.database, Filters())
