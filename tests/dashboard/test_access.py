"""Who may use the dashboard and whether it writes: 127.0.0.1 by default, a password or token
when served to the network, and ``--read-only``.

Round 1 (before it): the dashboard listened on every interface while printing
``http://localhost:8501``, had no login, and its Data and Record pages write.

Round 2 (hardening issue 32 and issue 30's Access target), each case reproduced against a real
served dashboard and failing on the code before: the sign-in lived inside Streamlit's session,
so a client could open a websocket session without it and PUT 6 x 50 MiB to
``/_stcore/upload_file/<its session>/<any id>``; the one-second wait was per browser session
(20 parallel guesses answered in 6 s); the token kept working after use and stayed in the tab's
history; a deep link landed on Overview after signing in; a reload or a new tab asked again;
there was no sign-out; and read-only ``/record`` silently showed Overview.

Checked four ways: the pure values (signed sign-ins, the attempt limiter, one-time tokens),
Streamlit's AppTest (the pages' side), plain HTTP against a real ``ofc dashboard`` (every entry
point, the limiter, expiry, sign-out) and Debian's Chromium (deep links, reloads, the token's
history, an upload, the read-only explanations).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import http.client
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec
from streamlit.testing.v1 import AppTest

from dashboard.serve import MAX_UPLOADS_PER_SESSION  # noqa: E402 - after the test imports
from pipeline import read
from pipeline.read.access import (
    READ_ONLY_ENV,
    SECRET_ENV,
    SECRET_KIND_ENV,
    SIGN_IN_COOKIE,
    AccessSecret,
    AttemptLimiter,
    ServerAccess,
    SignIns,
    WritesForbidden,
)
from tests.dashboard.conftest import APP
from tests.serving import OFC, free_port, stop, wait_for_server

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parents[1] / "artifacts"
PASSWORD = "correct horse battery staple"


# --- the pure values -----------------------------------------------------------------------------


def test_a_sign_in_is_signed_expires_and_can_be_revoked() -> None:
    sign_ins = SignIns()
    value, sign_in = sign_ins.issue(now=1000.0, seconds=3600)
    assert sign_ins.verify(value, 1000.0) == sign_in
    assert sign_ins.verify(value, 4599.0) == sign_in
    assert sign_ins.verify(value, 4600.0) is None  # expired
    body, _, mac = value.rpartition(".")
    _, expires, nonce = body.split(".")
    longer = f"v1.{int(expires) + 10**6}.{nonce}.{mac}"
    assert sign_ins.verify(longer, 1000.0) is None  # its end cannot be moved
    assert SignIns().verify(value, 1000.0) is None  # another process's key (a restart)
    for junk in (None, "", "v1", "x" * 500, "v1.1.2.3.4"):
        assert sign_ins.verify(junk, 1000.0) is None
    sign_ins.revoke(sign_in, 2000.0)
    assert sign_ins.verify(value, 2000.0) is None  # signed out, even with the cookie kept


def test_the_attempt_limiter_spaces_attempts_and_backs_off() -> None:
    limiter = AttemptLimiter()
    assert limiter.admit(0.0) == 0.0
    assert limiter.admit(0.2) == pytest.approx(0.8)  # a second attempt within the second
    limiter.failed(0.3)
    now, admitted = 0.3, []
    while now < 120:  # a guesser trying ten times a second for two minutes
        if limiter.admit(now) == 0.0:
            admitted.append(now)
            limiter.failed(now)
        now += 0.1
    gaps = [later - earlier for earlier, later in zip([0.3, *admitted], admitted, strict=False)]
    assert gaps == pytest.approx([1, 1, 1, 2, 4, 8, 16, 32], abs=0.15)  # 8 tries in 2 minutes
    assert limiter.admit(now) > 0  # the next one waits 64 s after the last
    assert AttemptLimiter.wait_after(30) == read.access.MAX_WAIT_SECONDS
    limiter.succeeded()
    assert limiter.failures == 0


def test_the_token_signs_in_once_and_device_links_once_each() -> None:
    token = read.access.new_token()
    state = ServerAccess(AccessSecret.of(token), token=True)
    assert not state.check("wrong", 0.0)
    assert state.check(token, 0.0)
    assert not state.check(token, 1.0)  # spent
    link = state.device_link_token(now=10.0)
    assert state.check(link, 20.0) and not state.check(link, 21.0)
    late = state.device_link_token(now=10.0)
    assert not state.check(late, 10.0 + read.access.DEVICE_LINK_SECONDS + 1)
    password = ServerAccess(AccessSecret.of(PASSWORD), token=False)
    assert password.check(PASSWORD, 0.0) and password.check(PASSWORD, 1.0)  # as often as needed


def test_uploads_are_bounded_per_session_and_in_total() -> None:
    from dashboard.serve import (
        MAX_UPLOAD_BYTES_HELD,
        MAX_UPLOADS_PER_SESSION,
        upload_refusal,
    )

    manager = MemoryUploadedFileManager("/_stcore/upload_file")

    def put(session: str, length: int) -> str | None:
        scope = {"path": f"/_stcore/upload_file/{session}/new",
                 "headers": [(b"content-length", str(length).encode())]}
        return upload_refusal(scope, manager)

    for number in range(MAX_UPLOADS_PER_SESSION):
        assert put("a", 10) is None
        manager.add_file("a", UploadedFileRec(f"f{number}", "x.jsonl", "text/plain", b"0" * 10))
    assert "Too many files" in (put("a", 10) or "")
    assert put("b", 10) is None  # another session is not held back
    manager.add_file("b", UploadedFileRec("big", "x.jsonl", "text/plain",
                                          b"0" * (MAX_UPLOAD_BYTES_HELD - 1000)))
    assert "MiB of uploads already" in (put("b", 2000) or "")
    manager.remove_file("b", "big")
    assert put("b", 2000) is None


# --- AppTest: the pages' side -------------------------------------------------------------------


def app_with(database: Path, monkeypatch: pytest.MonkeyPatch, secret: str | None = None,
             read_only: bool = False) -> AppTest:
    monkeypatch.setenv("OFC_DASHBOARD_DB", str(database))
    if secret is not None:
        monkeypatch.setenv(SECRET_ENV, AccessSecret.of(secret).encoded())
        monkeypatch.setenv(SECRET_KIND_ENV, "password")
    else:
        monkeypatch.delenv(SECRET_ENV, raising=False)
    if read_only:
        monkeypatch.setenv(READ_ONLY_ENV, "1")
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    assert not app.exception, [error.message for error in app.exception]
    return app


def shows_pages(app: AppTest) -> bool:
    """True when the app got past the sign-in (the sidebar's filters are drawn)."""
    return any(header.value == "Filters" for header in app.sidebar.header)


def test_with_a_secret_the_pages_show_nothing_without_a_signed_in_cookie(
    fixture_db, monkeypatch  # noqa: ANN001
) -> None:
    """Behind the server's door a page never runs unsigned; if one does (a sign-in that ended
    while the tab stayed open), it shows nothing but the way to sign in again."""
    app = app_with(fixture_db, monkeypatch, secret=PASSWORD)
    assert not shows_pages(app)
    assert app.dataframe.len == 0 and app.metric.len == 0 and not app.text_input
    assert any("Sign in to see this dashboard" in info.value for info in app.info)


def test_without_a_secret_the_dashboard_opens_directly(fixture_db, monkeypatch) -> None:  # noqa: ANN001
    assert shows_pages(app_with(fixture_db, monkeypatch))


def test_read_only_offers_no_page_or_widget_that_writes_and_says_so(
    fixture_db, monkeypatch  # noqa: ANN001
) -> None:
    app = app_with(fixture_db, monkeypatch, read_only=True)
    assert any("Read-only: no upload, no Record page" in caption.value
               for caption in app.sidebar.caption)
    app.switch_page("views/data.py").run()
    assert not app.exception
    assert not app.get("file_uploader") and not [b for b in app.button if b.label == "Ingest"]
    assert any("Uploading is not offered here" in info.value and "--read-only" in info.value
               for info in app.info)
    assert any(frame.value.shape[0] for frame in app.dataframe)  # its tables are still there
    with pytest.raises(Exception, match="page"):  # noqa: PT011 - Streamlit's own error type
        app.switch_page("views/record.py").run()
    app.switch_page("views/not_offered.py").run()  # what /record shows: why, not Overview
    assert [title.value for title in app.title] == ["Record"]
    assert any("Recording live games is not offered here" in info.value for info in app.info)
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


class Answer:
    """An HTTP answer: status, headers (lower-case names), body; redirects are not followed."""

    def __init__(self, response: http.client.HTTPResponse) -> None:
        self.status = response.status
        self.headers = {name.lower(): value for name, value in response.getheaders()}
        self.body = response.read().decode("utf-8", "replace")

    @property
    def location(self) -> str:
        return self.headers.get("location", "")

    def cookie(self) -> str | None:
        """The sign-in cookie's value this answer sets, if any."""
        header = self.headers.get("set-cookie", "")
        prefix = f"{SIGN_IN_COOKIE}="
        if not header.startswith(prefix):
            return None
        return header[len(prefix):].split(";", 1)[0].strip('"')


def ask(port: int, method: str, path: str, body: bytes | None = None,
        cookie: str | None = None, headers: dict[str, str] | None = None,
        host: str = "127.0.0.1") -> Answer:
    connection = http.client.HTTPConnection(host, port, timeout=30)
    sent = dict(headers or {})
    if cookie is not None:
        sent["Cookie"] = f"{SIGN_IN_COOKIE}={cookie}"
    try:
        connection.request(method, path, body=body, headers=sent)
        return Answer(connection.getresponse())
    finally:
        connection.close()


def sign_in_form(port: int, secret: str, next_path: str = "/") -> Answer:
    body = urllib.parse.urlencode({"secret": secret, "next": next_path}).encode()
    return ask(port, "POST", "/_ofc/sign-in", body,
               headers={"Content-Type": "application/x-www-form-urlencoded"})


def answers(port: int, host: str) -> bool:
    """True when an HTTP server answers at ``host:port``."""
    try:
        return ask(port, "GET", "/_stcore/health", host=host).status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def served_network(fixture_db, tmp_path_factory) -> Iterator[tuple[int, list[str]]]:  # noqa: ANN001
    database = tmp_path_factory.mktemp("network") / "hands.duckdb"
    shutil.copy(fixture_db, database)
    with dashboard(database, "--host", "0.0.0.0", "--read-only") as served:
        yield served


@pytest.fixture(scope="module")
def served_local(fixture_db, tmp_path_factory) -> Iterator[tuple[int, list[str]]]:  # noqa: ANN001
    """The default host, with a password (a password file works on 127.0.0.1 too), on a copy of
    the fixture database (a test uploads into it)."""
    folder = tmp_path_factory.mktemp("password")
    password_file = folder / "password.txt"
    password_file.write_text(PASSWORD + "\n", encoding="utf-8")
    database = folder / "hands.duckdb"
    shutil.copy(fixture_db, database)
    with dashboard(database, "--password-file", str(password_file)) as served:
        yield served


def printed_token(printed: list[str]) -> str:
    (line,) = [line for line in printed if "access token" in line]
    return line.rsplit(" ", 1)[1]


def test_by_default_it_listens_on_this_machine_only(served_local) -> None:  # noqa: ANN001
    port, printed = served_local
    assert answers(port, "127.0.0.1")
    # another loopback address reaches a server listening on every interface, not this one
    assert not answers(port, "127.0.0.2")
    assert any("this machine only" in line for line in printed)
    assert any("(password" in line for line in printed)  # the password file replaces a token
    assert not any("token" in line for line in printed)


def test_served_to_the_network_it_prints_a_token_once(served_network) -> None:  # noqa: ANN001
    port, printed = served_network
    assert answers(port, "127.0.0.2")  # every interface
    token = printed_token(printed)
    assert len(token) >= 20
    assert sum(token in line for line in printed) == 2  # the token line and the link, nothing else
    assert any("read-only" in line for line in printed)


def _websocket_status(port: int, cookie: str | None = None) -> int:
    """The status a websocket handshake to Streamlit's stream gets."""
    return ask(port, "GET", "/_stcore/stream", cookie=cookie, headers={
        "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Protocol": "streamlit"}).status


def test_nothing_is_accepted_before_signing_in(served_local) -> None:  # noqa: ANN001
    port, _ = served_local
    # the attack of the issue: a websocket session without signing in, then uploads into it
    assert _websocket_status(port) == 403
    xsrf = "2|aaaa|bbbb|1"
    upload = ask(port, "PUT", "/_stcore/upload_file/any-session/any-file",
                 b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.jsonl\"\r\n"
                 b"\r\n{}\r\n--b--\r\n",
                 headers={"Content-Type": "multipart/form-data; boundary=b",
                          "X-Xsrftoken": xsrf, "Cookie": f"_streamlit_xsrf={xsrf}"})
    assert upload.status == 403
    for path in ("/_stcore/host-config", "/static/js/index.js", "/media/x.png",
                 "/_stcore/metrics"):
        assert ask(port, "GET", path).status == 403, path
    # a page goes to the sign-in page, keeping where it was going (query included)
    page = ask(port, "GET", "/sessions?player=mara")
    assert page.status == 303
    assert page.location == "/_ofc/sign-in?next=/sessions%3Fplayer%3Dmara"
    form = ask(port, "GET", page.location)
    assert form.status == 200 and 'name="next" value="/sessions?player=mara"' in form.body
    assert ask(port, "GET", "/_stcore/health").status == 200  # says "ok", nothing more


def test_a_sign_in_goes_where_it_was_asked_and_lasts_until_signed_out(served_local) -> None:  # noqa: ANN001
    port, _ = served_local
    time.sleep(1.1)  # the limiter's spacing after any earlier attempt
    signed = sign_in_form(port, PASSWORD, "/sessions?player=mara")
    assert signed.status == 303 and signed.location == "/sessions?player=mara"
    cookie = signed.cookie()
    assert cookie and "httponly" in signed.headers["set-cookie"].lower()
    assert "max-age=43200" in signed.headers["set-cookie"].lower()  # 12 hours by default
    for _ in range(2):  # a reload, a new tab: the same cookie, no sign-in
        assert ask(port, "GET", "/sessions", cookie=cookie).status == 200
    assert _websocket_status(port, cookie) == 101
    assert ask(port, "GET", "/_ofc/sign-in?next=//evil.example/x").body.count(
        'value="/"') == 1  # never sent to another site
    out = ask(port, "GET", "/_ofc/sign-out", cookie=cookie)
    assert out.status == 303 and out.location == "/_ofc/sign-in?why=signed-out"
    assert "max-age=0" in out.headers["set-cookie"].lower() or "expires" in out.headers[
        "set-cookie"].lower()
    # revoked on the server: a copy of the cookie no longer works
    assert ask(port, "GET", "/sessions", cookie=cookie).status == 303
    assert _websocket_status(port, cookie) == 403


def test_the_token_signs_in_once_and_leaves_the_address(served_network) -> None:  # noqa: ANN001
    port, printed = served_network
    token = printed_token(printed)
    first = ask(port, "GET", f"/data?token={token}&tab=files")
    assert first.status == 303 and first.location == "/data?tab=files"
    assert first.cookie() and ask(port, "GET", "/data", cookie=first.cookie()).status == 200
    time.sleep(1.1)
    again = ask(port, "GET", f"/?token={token}")  # someone who saw the link afterwards
    assert again.status == 303 and again.location.startswith("/_ofc/sign-in?why=used")
    assert again.cookie() is None
    time.sleep(1.1)
    typed = sign_in_form(port, token)
    assert typed.status == 401 and "used already" in typed.body


def test_one_global_limit_on_attempts_with_a_growing_wait(fixture_db, tmp_path) -> None:  # noqa: ANN001
    """20 parallel wrong guesses from 20 clients: one is checked, 19 refused at once (before:
    all 20 checked, one PBKDF2 hash each, within 6 s); the wait then grows; a sign-in that ends
    sends the page to the sign-in page again."""
    password_file = tmp_path / "password.txt"
    password_file.write_text(PASSWORD + "\n", encoding="utf-8")
    database = tmp_path / "hands.duckdb"
    shutil.copy(fixture_db, database)
    with dashboard(database, "--password-file", str(password_file),
                   "--sign-in-hours", "0.0015") as (port, _):
        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            answered = list(pool.map(lambda n: sign_in_form(port, f"guess {n}"), range(20)))
        statuses = sorted(answer.status for answer in answered)
        assert statuses == [401] + [429] * 19, statuses
        assert all(answer.headers.get("retry-after") for answer in answered
                   if answer.status == 429)
        waits = []
        for attempt in range(5):  # each failure makes the next wait longer
            deadline = time.monotonic() + 30
            while (answer := sign_in_form(port, f"again {attempt}")).status == 429:
                assert time.monotonic() < deadline
                time.sleep(0.25)
            assert answer.status == 401
            waits.append(time.monotonic())
        gaps = [later - earlier for earlier, later in zip(waits, waits[1:], strict=False)]
        assert gaps[-2] > 1.5 and gaps[-1] > 3.5, gaps  # 1, 1, 2, 4 s: the 3rd failure on
        time.sleep(8.5)  # 8 s after the 6th
        signed = sign_in_form(port, PASSWORD, "/data")  # the right password, once the wait is over
        assert signed.status == 303, signed.body
        cookie = signed.cookie()
        assert ask(port, "GET", "/data", cookie=cookie).status == 200
        time.sleep(6)  # --sign-in-hours 0.0015: 5.4 s
        ended = ask(port, "GET", "/data", cookie=cookie)
        assert ended.status == 303 and "why=expired" in ended.location


@pytest.mark.parametrize("problem", ["missing", "empty", "endless"])
def test_a_bad_password_file_is_refused(problem: str, tmp_path: Path) -> None:
    """``endless``: /dev/zero, a first line that never ends, was read until memory ran out."""
    password_file = tmp_path / "password.txt"
    if problem == "empty":
        password_file.write_text("\n", encoding="utf-8")
    if problem == "endless":
        password_file = Path("/dev/zero")
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
                           timeout=60_000)
    page.wait_for_timeout(300)


@pytest.mark.browser
@needs_chromium
def test_browser_token_link_deep_link_history_and_read_only(fixture_db, browser,  # noqa: ANN001
                                                            tmp_path) -> None:  # noqa: ANN001
    ARTIFACTS.mkdir(exist_ok=True)
    database = tmp_path / "hands.duckdb"
    shutil.copy(fixture_db, database)
    with dashboard(database, "--host", "0.0.0.0", "--read-only") as (port, printed):
        _browse_with_the_token(browser, port, printed_token(printed))


def _browse_with_the_token(browser, port: int, token: str) -> None:  # noqa: ANN001
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    page.goto(f"http://127.0.0.2:{port}/data")
    assert "/_ofc/sign-in" in page.url and page.get_by_label("Access token").count() == 1
    assert page.locator('[data-testid="stFileUploader"]').count() == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-sign-in.png"))
    time.sleep(1.1)
    page.goto(f"http://127.0.0.2:{port}/record?token={token}")  # a deep link with the token
    page.wait_for_selector("h1:has-text('Record')", timeout=60_000)
    idle(page)
    assert page.url == f"http://127.0.0.2:{port}/record"  # the token left the address
    assert page.get_by_text("Recording live games is not offered here").count() == 1
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_role("link", name="Record", exact=True).count() == 0
    page.go_back()  # the token is not in the tab's history either
    assert "token" not in page.url
    other = context.new_page()  # a new tab: still signed in
    other.goto(f"http://127.0.0.2:{port}/data")
    other.wait_for_selector("h1:has-text('Data')", timeout=60_000)
    idle(other)
    assert other.locator('[data-testid="stFileUploader"]').count() == 0
    assert other.get_by_text("Uploading is not offered here").count() == 1
    other.screenshot(path=str(ARTIFACTS / "dashboard-read-only-data.png"), full_page=True)
    context.close()


@pytest.mark.browser
@needs_chromium
def test_browser_password_deep_link_reload_upload_and_sign_out(served_local, browser,  # noqa: ANN001
                                                               fixture_source) -> None:  # noqa: ANN001
    port, _ = served_local
    refused = browser.new_page()
    with pytest.raises(Exception, match="ERR_CONNECTION_REFUSED"):  # noqa: PT011 - Playwright's
        refused.goto(f"http://127.0.0.2:{port}/")
    refused.close()
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{port}/data")
    time.sleep(1.1)
    page.get_by_label("Password").fill("not it")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("text=Wrong password.", timeout=30_000)
    time.sleep(1.1)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("h1:has-text('Data')", timeout=60_000)  # where the link pointed
    idle(page)
    page.reload()  # a reload stays signed in
    page.wait_for_selector("h1:has-text('Data')", timeout=60_000)
    idle(page)
    # a signed-in upload still works (the door lets it through)
    uploads = []
    page.on("request", lambda request: uploads.append(request) if request.method == "PUT"
            and "/_stcore/upload_file/" in request.url else None)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        str(fixture_source[0]))
    page.get_by_role("button", name="Ingest").click()
    page.wait_for_selector("text=Last ingest:", timeout=60_000)
    idle(page)
    assert page.get_by_text("Traceback").count() == 0
    # the same session uploading on and on (the issue's flood, signed in): bounded
    (upload,) = uploads
    session_url = upload.url.rsplit("/", 1)[0]
    xsrf = {"x-xsrftoken": upload.all_headers()["x-xsrftoken"]}
    hand = {"name": "hand.jsonl", "mimeType": "application/octet-stream",
            "buffer": fixture_source[0].read_bytes()[:2000]}
    statuses = [page.request.put(f"{session_url}/flood-{number}", headers=xsrf,
                                 multipart={"file": hand}).status for number in range(24)]
    accepted = [status for status in statuses if status < 300]
    assert 0 < len(accepted) <= MAX_UPLOADS_PER_SESSION - 1, statuses
    assert statuses[len(accepted):] == [413] * (24 - len(accepted)), statuses
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_text("Signed in until").count() == 1
    sidebar.get_by_role("button", name="Sign out").click()
    page.wait_for_selector("text=You are signed out.", timeout=30_000)
    page.reload()  # revoked on the server: the kept cookie opens nothing
    page.wait_for_selector("text=Sign in", timeout=30_000)
    assert "/_ofc/sign-in?next=/data" in page.url
    context.close()


def test_the_command_line_defaults(tmp_path: Path) -> None:
    from pipeline.cli import build_parser
    from pipeline.cli.dashboard import DEFAULT_HOST, streamlit_command

    arguments = build_parser().parse_args(["dashboard"])
    assert arguments.host == DEFAULT_HOST == "127.0.0.1" and not arguments.read_only
    assert arguments.sign_in_hours == read.access.DEFAULT_SIGN_IN_HOURS
    command = streamlit_command(tmp_path / "x.duckdb", 9999, arguments.host, no_browser=True)
    assert command[command.index("--server.address") + 1] == "127.0.0.1"
    assert command[command.index("run") + 1].endswith("dashboard/serve.py")
    assert command[command.index("--client.showErrorDetails") + 1] == "type"
    assert sys.executable == command[0]
