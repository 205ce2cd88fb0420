"""The dashboard's Coaching report page under AppTest: the same numbers as the report itself."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pipeline.report import ReportRequest, ReportSettings, create_report, report_dict
from pipeline.report.reference import ReferenceSpec
from pipeline.report.render import format_difference, format_interval
from tests.report.conftest import SETTINGS
from tests.report.hands import ALIAS, BO, CY, HERO, SCRIPT

APP = Path(__file__).parents[2] / "dashboard" / "app.py"


@pytest.fixture(scope="module")
def page(report_db: Path) -> AppTest:
    """The app on the test database, switched to the report page with small thresholds."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OFC_DASHBOARD_DB", str(report_db))
        app = AppTest.from_file(str(APP), default_timeout=90)
        app.run()
        assert not app.exception, [e.message for e in app.exception]
        app.switch_page("views/report.py").run()
        assert not app.exception, [e.message for e in app.exception]
        app.number_input(key="report_min_sample").set_value(SETTINGS.min_sample)
        app.number_input(key="report_min_sessions").set_value(SETTINGS.min_sessions)
        app.number_input(key="report_rank_hands").set_value(SETTINGS.percentile_min_hands)
        app.selectbox(key="report_player").set_value(HERO)
        app.multiselect(key="report_aliases").set_value([ALIAS])
        app.run()
        assert not app.exception, [e.message for e in app.exception]
        yield app


def _settings() -> ReportSettings:
    # the page sets the three thresholds; the rest keep their defaults
    return replace(ReportSettings(), min_sample=SETTINGS.min_sample,
                   min_sessions=SETTINGS.min_sessions,
                   percentile_min_hands=SETTINGS.percentile_min_hands)


def _frame(app: AppTest, column: str) -> list:
    return [element.value for element in app.dataframe if column in element.value.columns]


def test_page_shows_the_report(page: AppTest, report_db: Path) -> None:
    expected = report_dict(create_report(report_db, ReportRequest(HERO, aliases=(ALIAS,)),
                                         _settings()))
    metrics = {metric.label: metric.value for metric in page.metric}
    assert metrics["Hands"] == f"{expected['headline']['hands']:,}" == "96"
    assert metrics["Sessions"] == "8"
    assert metrics["Points"] == f"{expected['headline']['points']:+,}"
    assert any("Compared with **the field**" in info.value for info in page.info)
    # the summary: one item per difference (the hand-made data has none clear at 5 %)
    if expected["summary"]:
        text = " ".join(element.value for element in page.markdown)
        for item in expected["summary"]:
            assert item["title"].split(":")[0] in text
    # the components under their causes: the report's figures and differences
    [shown_components] = _frame(page, "component")
    rows = {row["key"]: row for row in shown_components.to_dict("records")}
    components = [f for f in expected["findings"] if f["cause"] and f["shown"]]
    assert set(rows) == {f["key"] for f in components}
    for finding in components:
        row = rows[finding["key"]]
        assert row["player (95 %)"] == format_interval(finding["player"], finding["unit"])
        if finding["verdict"] == "component":
            assert row["difference (95 %)"] == format_difference(finding)
    [tested] = _frame(page, "test")[:1]
    keys = tested["key"].to_list()
    assert "seats" in keys and "head_to_head" in keys
    [causes] = _frame(page, "covers")
    assert causes["key"].to_list() == [c["key"] for c in expected["causes"]]
    assert causes["points/100 hands"].to_list() == pytest.approx(
        [c["points_per_100"] for c in expected["causes"]])
    [progress] = _frame(page, "estimate (95 %)")
    assert progress["key"].to_list() == [f["key"] for f in expected["findings"]
                                         if f["topic"] in ("Trend", "Did I improve?")]
    labels = [button.label for button in page.download_button]
    assert labels == ["Download HTML (works offline)", "Download Markdown", "Download JSON"]
    expanders = [element.label for element in page.expander]
    assert f"Appendix: every test ({expected['tests']})" in expanders
    [family] = _frame(page, "clear")
    assert family["key"].to_list() == [t["key"] for t in expected["family"]]
    missing = [f for f in expected["findings"] if not f["shown"]]
    assert (f"Too few to judge ({len(missing)})" in expanders) == bool(missing)
    assert sum(label.startswith(("Fouled board", "Won ", "Fantasyland hand"))
               for label in expanders) == len(expected["notable"])
    # each foul explained in words under its board
    assert sum("Why it fouls:" in caption.value for caption in page.caption) >= 2


def test_page_reference_group_and_change_date(page: AppTest, report_db: Path) -> None:
    from datetime import date

    page.selectbox(key="report_reference_kind").set_value(
        page.selectbox(key="report_reference_kind").options[2]).run()  # named regulars
    assert any("named reference group needs" in w.value for w in page.warning)
    page.multiselect(key="report_reference_names").set_value([BO, CY])
    page.checkbox(key="report_reference_outliers").uncheck()
    page.date_input(key="report_change_date").set_value(date(2026, 1, 9)).run()
    assert not page.exception, [e.message for e in page.exception]
    expected = report_dict(create_report(
        report_db, ReportRequest(HERO, aliases=(ALIAS,), change_date=date(2026, 1, 9),
                                 reference=ReferenceSpec.parse("named:bo,cy", None)),
        _settings()))
    assert any("Compared with **regulars \\(bo, cy\\)**" in info.value for info in page.info)
    [causes] = _frame(page, "covers")
    assert causes["points/100 hands"].to_list() == pytest.approx(
        [c["points_per_100"] for c in expected["causes"]])
    [progress] = _frame(page, "estimate (95 %)")
    assert {"change.points", "change.fouls"} <= set(progress["key"].to_list())


def test_page_with_a_hostile_name(page: AppTest) -> None:
    page.selectbox(key="report_reference_kind").set_value(
        page.selectbox(key="report_reference_kind").options[0])
    page.date_input(key="report_change_date").set_value(None)
    page.multiselect(key="report_aliases").set_value([])
    page.selectbox(key="report_player").set_value(SCRIPT).run()
    assert not page.exception, [e.message for e in page.exception]
    headers = [header.value for header in page.header]
    # the page's own header first; the shared sidebar (drawn by app.py) adds its "Filters" header
    assert headers[0] == "Coaching report: &lt;script\\>alert\\(1\\)&lt;/script\\>"
    assert "<script>" not in " ".join(headers)
    assert {metric.label: metric.value for metric in page.metric}["Hands"] == "24"
    page.selectbox(key="report_variant").set_value("pineapple").run()
    assert not page.exception
    assert any("Nothing to report: no hands for &lt;script\\>alert\\(1\\)&lt;/script\\> "
               "\\(variant pineapple\\)" in info.value for info in page.info), \
        [info.value for info in page.info]
