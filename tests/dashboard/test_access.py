"""Who may use the dashboard and whether it writes: 127.0.0.1 by default, a password or token
when served to the network, and ``--read-only``.

Before: the dashboard listened on every interface while printing ``http://localhost:8501``, had
no login, and its Data and Record pages upload, record and delete hands, so anyone on the same
network could write to the database.

Checked three ways: Streamlit's AppTest (every branch of the sign-in and the page list), plain
HTTP requests to a real ``ofc dashboard`` (what listens where, what the command refuses), and a
real browser (Debian's Chromium) signing in and looking for the writing pages.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pipeline import read
from pipeline.read.access import READ_ONLY_ENV, SECRET_ENV, AccessSecret, WritesForbidden
from tests.dashboard.conftest import APP
from tests.serving import OFC, free_port, stop, wait_for_server

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parents[1] / "artifacts"
PASSWORD = "correct horse battery staple"


# --- AppTest: the sign-in and the page list ------------------------------------------------------


def app_with(database: Path, monkeypatch: pytest.MonkeyPatch, secret: str | None = None,
             read_only: bool = False, token: str | None = None) -> AppTest:
    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    if secret is not None:
        monkeypatch.setenv(SECRET_ENV, AccessSecret.of(secret).encoded())
    if read_only:
        monkeypatch.setenv(READ_ONLY_ENV, "1")
    app = AppTest.from_file(str(APP), default_timeout=60)
    if token is not None:
        app.query_params["token"] = token
    app.run()
    assert not app.exception, [error.message for error in app.exception]
    return app


def shows_pages(app: AppTest) -> bool:
    """True when the app got past the sign-in (the sidebar's filters are drawn)."""
    return any(header.value == "Filters" for header in app.sidebar.header)


def test_with_a_secret_nothing_shows_before_signing_in(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    app = app_with(fixture_db, monkeypatch, secret=PASSWORD)
    assert not shows_pages(app)
    assert [field.label for field in app.text_input] == ["Password or access token"]
    assert app.dataframe.len == 0 and app.metric.len == 0
    app.text_input[0].input("wrong guess")
    app.button[0].click().run()
    assert not shows_pages(app)
    assert [error.value for error in app.error] == ["Wrong password or token."]
    app.text_input[0].input(PASSWORD)
    app.button[0].click().run()
    assert shows_pages(app) and app.metric.len > 0
    app.switch_page("views/data.py").run()  # the session stays signed in
    assert shows_pages(app) and not app.text_input


def test_the_printed_link_signs_in_with_its_token(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    token = read.access.new_token()
    app = app_with(fixture_db, monkeypatch, secret=token, token=token)
    assert shows_pages(app)
    assert "token" not in app.query_params  # it leaves the address bar
    wrong = app_with(fixture_db, monkeypatch, secret=token, token="not-" + token)
    assert not shows_pages(wrong)
    assert [error.value for error in wrong.error] == ["The token in that link is not valid."]


def test_without_a_secret_the_dashboard_opens_directly(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.delenv(SECRET_ENV, raising=False)
    assert shows_pages(app_with(fixture_db, monkeypatch))


def test_read_only_offers_no_page_or_widget_that_writes(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    app = app_with(fixture_db, monkeypatch, read_only=True)
    app.switch_page("views/data.py").run()
    assert not app.exception
    assert not app.get("file_uploader") and not [b for b in app.button if b.label == "Ingest"]
    assert any("read-only" in info.value for info in app.info)
    assert any(frame.value.shape[0] for frame in app.dataframe)  # its tables are still there
    with pytest.raises(Exception, match="page"):  # noqa: PT011 - Streamlit's own error type
        app.switch_page("views/record.py").run()
    monkeypatch.delenv(READ_ONLY_ENV)
    writable = app_with(fixture_db, monkeypatch)
    writable.switch_page("views/record.py").run()
    assert not writable.exception


def test_read_only_on_an_empty_database_has_no_demo_button(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    app = app_with(tmp_path / "none.duckdb", monkeypatch, read_only=True)
    assert [button.label for button in app.button] == []
    assert any("read-only" in info.value for info in app.info)


def test_a_read_only_process_refuses_every_write(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv(READ_ONLY_ENV, "1")
    with pytest.raises(WritesForbidden, match="read-only"), read.source.database_lock():
        pass
    monkeypatch.delenv(READ_ONLY_ENV)
    with read.source.database_lock():
        pass


# --- a real server, plain HTTP -------------------------------------------------------------------


@contextlib.contextmanager
def dashboard(database: Path, *options: str) -> Iterator[tuple[int, list[str]]]:
    """``ofc dashboard`` with only these options (and a free port): yields (port, the lines it
    printed before Streamlit started)."""
    port = free_port()
    process = subprocess.Popen(
        [*OFC, "dashboard", "--db", str(database), "--port", str(port), "--no-browser", *options],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ), text=True,
    )
    printed = []
    try:
        assert process.stdout is not None
        for line in process.stdout:  # ofc prints its lines before Streamlit's own
            printed.append(line.rstrip("\n"))
            if "Local URL" in line or "Network URL" in line or "You can now view" in line:
                break
        wait_for_server(f"http://127.0.0.1:{port}", process)
        yield port, printed
    finally:
        stop(process)


def answers(url: str) -> bool:
    """True when an HTTP server answers at ``url``."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@pytest.fixture(scope="module")
def served_network(fixture_db, tmp_path_factory) -> Iterator[tuple[int, list[str]]]:  # noqa: ANN001
    database = tmp_path_factory.mktemp("network") / "hands.duckdb"
    shutil.copy(fixture_db, database)
    with dashboard(database, "--host", "0.0.0.0", "--read-only") as served:
        yield served


@pytest.fixture(scope="module")
def served_local(fixture_db, tmp_path_factory) -> Iterator[tuple[int, list[str]]]:  # noqa: ANN001
    """The default host, with a password (a password file works on 127.0.0.1 too)."""
    folder = tmp_path_factory.mktemp("password")
    password_file = folder / "password.txt"
    password_file.write_text(PASSWORD + "\n", encoding="utf-8")
    with dashboard(fixture_db, "--password-file", str(password_file)) as served:
        yield served


def printed_token(printed: list[str]) -> str:
    (line,) = [line for line in printed if "access token" in line]
    return line.rsplit(" ", 1)[1]


def test_by_default_it_listens_on_this_machine_only(served_local) -> None:  # noqa: ANN001
    port, printed = served_local
    assert answers(f"http://127.0.0.1:{port}/_stcore/health")
    # another loopback address reaches a server listening on every interface, not this one
    assert not answers(f"http://127.0.0.2:{port}/_stcore/health")
    assert any("this machine only" in line for line in printed)
    assert any("(password" in line for line in printed)  # the password file replaces a token
    assert not any("token" in line for line in printed)


def test_served_to_the_network_it_prints_a_token_once(served_network) -> None:  # noqa: ANN001
    port, printed = served_network
    assert answers(f"http://127.0.0.2:{port}/_stcore/health")  # every interface
    token = printed_token(printed)
    assert len(token) >= 20
    assert sum(token in line for line in printed) == 2  # the token line and the link, nothing else
    assert any("read-only" in line for line in printed)


def test_plain_http_cannot_upload(served_network, fixture_db) -> None:  # noqa: ANN001
    port, _ = served_network
    request = urllib.request.Request(
        f"http://127.0.0.2:{port}/_stcore/upload_file/no-session/no-file", method="PUT",
        data=b'{"hand_id": "x"}\n', headers={"Content-Type": "application/octet-stream"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code in (400, 403, 404, 405)


@pytest.mark.parametrize("problem", ["missing", "empty"])
def test_a_bad_password_file_is_refused(problem: str, tmp_path: Path) -> None:
    password_file = tmp_path / "password.txt"
    if problem == "empty":
        password_file.write_text("\n", encoding="utf-8")
    completed = subprocess.run(
        [*OFC, "dashboard", "--db", str(tmp_path / "a.duckdb"), "--host", "0.0.0.0",
         "--password-file", str(password_file), "--no-browser"],
        capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2
    assert "--password-file" in completed.stderr and "Traceback" not in completed.stderr


# --- a real browser ------------------------------------------------------------------------------

needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(),
                                    reason="Debian's chromium is not installed at /usr/bin/chromium")


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless=new", "--no-sandbox", "--disable-background-networking",
                  "--disable-gpu"],
        )
        try:
            yield chromium
        finally:
            chromium.close()


def idle(page) -> None:  # noqa: ANN001
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=30_000)
    page.wait_for_timeout(300)


@pytest.mark.browser
@needs_chromium
def test_browser_token_and_read_only(served_network, browser) -> None:  # noqa: ANN001
    ARTIFACTS.mkdir(exist_ok=True)
    port, printed = served_network
    token = printed_token(printed)
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(f"http://127.0.0.2:{port}/data")
    idle(page)
    assert page.get_by_text("Password or access token").count() == 1
    assert page.locator('[data-testid="stSidebar"]').count() == 0
    assert page.locator('[data-testid="stFileUploader"]').count() == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-sign-in.png"))
    page.goto(f"http://127.0.0.2:{port}/?token={token}")
    page.wait_for_selector("h1:has-text('Overview')", timeout=30_000)
    idle(page)
    assert "token" not in page.url
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_role("link", name="Data", exact=True).count() == 1
    assert sidebar.get_by_role("link", name="Record", exact=True).count() == 0
    sidebar.get_by_role("link", name="Data", exact=True).click()
    page.wait_for_selector("h1:has-text('Data')", timeout=30_000)
    idle(page)
    assert page.locator('[data-testid="stFileUploader"]').count() == 0
    assert page.get_by_text("This dashboard is read-only").count() == 1
    page.screenshot(path=str(ARTIFACTS / "dashboard-read-only-data.png"), full_page=True)
    page.close()


@pytest.mark.browser
@needs_chromium
def test_browser_default_host_and_password(served_local, browser) -> None:  # noqa: ANN001
    port, _ = served_local
    refused = browser.new_page()
    with pytest.raises(Exception, match="ERR_CONNECTION_REFUSED"):  # noqa: PT011 - Playwright's
        refused.goto(f"http://127.0.0.2:{port}/")
    refused.close()
    page = browser.new_page()
    page.goto(f"http://127.0.0.1:{port}/")
    idle(page)
    field = page.get_by_label("Password or access token")
    field.fill("not it")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("text=Wrong password or token.", timeout=30_000)
    field.fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("h1:has-text('Overview')", timeout=30_000)
    idle(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_role("link", name="Record", exact=True).count() == 1
    page.close()


def test_the_command_line_defaults(tmp_path: Path) -> None:
    from pipeline.cli import build_parser
    from pipeline.cli.dashboard import DEFAULT_HOST, streamlit_command

    arguments = build_parser().parse_args(["dashboard"])
    assert arguments.host == DEFAULT_HOST == "127.0.0.1" and not arguments.read_only
    command = streamlit_command(tmp_path / "x.duckdb", 9999, arguments.host, no_browser=True)
    assert command[command.index("--server.address") + 1] == "127.0.0.1"
    assert sys.executable == command[0]
