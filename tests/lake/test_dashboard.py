"""The dashboard on a lake shows what it shows on the database: every page, run headless with
AppTest on the dashboard's fixture hands ingested into a database and built into a lake, gives
the same metrics and the same tables; and a real browser on ``ofc dashboard --lake`` opens the
pages without an error.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pipeline.ingest.driver import ingest_paths
from pipeline.lake.build import build_lake
from pipeline.lake.engine import LocalEngine
from tests.dashboard.fixture_hands import write_fixture
from tests.serving import served

APP = Path(__file__).parents[2] / "dashboard" / "app.py"
PAGES = (
    "views/overview.py", "views/player_review.py", "views/report.py",
    "views/decision_grading.py", "views/compare_players.py", "views/point_flow.py",
    "views/sessions.py", "views/hand_browser.py", "views/data.py",
)
RUN_TIMES = {"ingested_at", "rejected_at"}
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """The fixture hands as a database (ofc ingest) and as a lake (local engine); hands."""
    folder = tmp_path_factory.mktemp("dashboard-lake")
    hands = folder / "fixture-hands.jsonl"
    records = write_fixture(hands)
    database = folder / "fixture.duckdb"
    ingest_paths([hands], database)
    lake = folder / "lake"
    build_lake([hands], lake, LocalEngine())
    return database, lake, len(records)


def _steady(cell: object) -> object:
    """A float rounded to 9 significant digits; anything else as it is."""
    return float(f"{cell:.9g}") if isinstance(cell, float) else cell


def _shown(app: AppTest) -> dict[str, object]:
    """The metrics and the tables of the page (tables as sorted rows, run times left out)."""
    tables = []
    for element in app.dataframe:
        value = element.value
        columns = [column for column in value.columns if column not in RUN_TIMES]
        # floats to 9 significant digits: a sum's last bits follow DuckDB's thread schedule
        rows = sorted(repr(tuple(_steady(cell) for cell in row))
                      for row in value[columns].itertuples(index=False))
        tables.append((tuple(columns), rows))
    return {"metrics": {metric.label: metric.value for metric in app.metric},
            "tables": tables}


def _every_page(environment: dict[str, str], monkeypatch: pytest.MonkeyPatch
                ) -> dict[str, dict[str, object]]:
    for name in ("OFC_DASHBOARD_DB", "OFC_DASHBOARD_LAKE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    app = AppTest.from_file(str(APP), default_timeout=120)
    app.run()
    assert not app.exception, [error.message for error in app.exception]
    shown = {}
    for page in PAGES:
        app.switch_page(page).run()
        assert not app.exception, (page, [error.message for error in app.exception])
        shown[page] = _shown(app)
    return shown


def test_every_page_shows_the_same_on_the_lake(sources: tuple[Path, Path, int],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    database, lake, hands = sources
    on_database = _every_page({"OFC_DASHBOARD_DB": str(database)}, monkeypatch)
    on_lake = _every_page({"OFC_DASHBOARD_LAKE": str(lake)}, monkeypatch)
    assert on_database["views/overview.py"]["metrics"]["Hands"] == str(hands)
    assert sum(len(shown["tables"]) for shown in on_database.values()) >= 10
    for page in PAGES:
        assert on_lake[page] == on_database[page], page


def test_the_data_page_of_a_lake_sends_new_hands_to_lake_build(
    sources: tuple[Path, Path, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OFC_DASHBOARD_DB", raising=False)
    monkeypatch.setenv("OFC_DASHBOARD_LAKE", str(sources[1]))
    app = AppTest.from_file(str(APP), default_timeout=120)
    app.run()
    app.switch_page("views/data.py").run()
    assert not app.exception
    assert any("ofc lake build" in info.value for info in app.info)
    assert not app.get("file_uploader")


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(),
                    reason="Debian's chromium is not installed at /usr/bin/chromium")
def test_a_browser_on_ofc_dashboard_lake(sources: tuple[Path, Path, int], tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    lake = tmp_path / "lake"
    shutil.copytree(sources[1], lake)
    ofc = shutil.which("ofc", path=str(Path(sys.executable).parent))
    program = [ofc] if ofc else [sys.executable, "-m", "pipeline.cli"]
    with served(["dashboard", "--lake", str(lake)], program=program,
                environment=os.environ) as (url, _), sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless=new", "--no-sandbox", "--disable-background-networking",
                  "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 2000})
            for path, title in (("", "Overview"), ("hand_browser", "Hand browser")):
                page.goto(f"{url}/{path}")
                page.wait_for_selector(f"h1:has-text('{title}')", timeout=60_000)
                page.wait_for_selector(
                    '[data-testid="stApp"][data-test-script-state="notRunning"]',
                    timeout=60_000)
                assert page.locator('[data-testid="stException"]').count() == 0, path
            page.goto(url)
            page.wait_for_selector("h1:has-text('Overview')", timeout=60_000)
            hands = page.locator('[data-testid="stMetric"]').filter(has_text="Hands").first
            assert hands.inner_text().split()[-1] == str(sources[2])
            sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
            assert str(lake) in sidebar
        finally:
            browser.close()
