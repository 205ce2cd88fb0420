"""The dashboard's Coaching report page under AppTest: the same numbers as the report itself."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pipeline.report import ReportRequest, ReportSettings, create_report, report_dict
from pipeline.report.render import format_interval, format_points
from tests.report.conftest import SETTINGS
from tests.report.hands import ALIAS, HERO, SCRIPT

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


def test_page_shows_the_report(page: AppTest, report_db: Path) -> None:
    # the page sets the three thresholds; the rest keep their defaults
    settings = replace(ReportSettings(), min_sample=SETTINGS.min_sample,
                       min_sessions=SETTINGS.min_sessions,
                       percentile_min_hands=SETTINGS.percentile_min_hands)
    expected = report_dict(create_report(report_db, ReportRequest(HERO, aliases=(ALIAS,)),
                                         settings))
    metrics = {metric.label: metric.value for metric in page.metric}
    assert metrics["Hands"] == f"{expected['headline']['hands']:,}" == "96"
    assert metrics["Sessions"] == "8"
    assert metrics["Points"] == f"{expected['headline']['points']:+,}"
    shown = {}
    for element in page.dataframe:
        frame = element.value
        if "finding" in frame.columns:
            for row in frame.to_dict("records"):
                shown[row["key"]] = row
    findings = [f for f in expected["findings"] if f["shown"]]
    assert set(shown) == {f["key"] for f in findings}
    for finding in findings:
        row = shown[finding["key"]]
        assert row["player (95 %)"] == format_interval(finding["player"], finding["unit"])
        assert row["points/hand"] == format_points(finding["points_per_hand"])
        assert row["confidence"] == finding["confidence"]
    labels = [button.label for button in page.download_button]
    assert labels == ["Download HTML (works offline)", "Download Markdown", "Download JSON"]
    missing = [f for f in expected["findings"] if not f["shown"]]
    expanders = [element.label for element in page.expander]
    assert (f"Not enough data yet ({len(missing)})" in expanders) == bool(missing)
    assert sum(label.startswith(("Fouled board", "Won ", "Fantasyland hand"))
               for label in expanders) == len(expected["notable"])


def test_page_with_a_hostile_name(page: AppTest) -> None:
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
