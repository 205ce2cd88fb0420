"""``ofc dashboard`` and ``ofc demo`` as a user runs them (the browser test serves one too)."""

from __future__ import annotations

import os
import socket
import subprocess
import urllib.request
from pathlib import Path

from pipeline import read
from pipeline.cli import build_parser
from pipeline.cli.dashboard import headless, streamlit_command, url_host
from pipeline.ingest import demo
from tests.serving import OFC, served


def test_dashboard_command_line(tmp_path) -> None:  # noqa: ANN001
    arguments = build_parser().parse_args(["dashboard", "--db", "x.duckdb", "--port", "9999"])
    assert (arguments.db, arguments.port, arguments.no_browser) == ("x.duckdb", 9999, False)
    command = streamlit_command(tmp_path / "x.duckdb", 9999, None, no_browser=True)
    assert command[1:4] == ["-m", "streamlit", "run"]
    assert Path(command[4]) == Path(__file__).resolve().parents[2] / "dashboard" / "serve.py"
    assert command[command.index("--server.port") + 1] == "9999"
    assert command[command.index("--server.headless") + 1] == "true"
    assert command[-2:] == ["--db", str(tmp_path / "x.duckdb")]
    assert headless(True)


def test_bad_port_is_a_clean_error(tmp_path) -> None:  # noqa: ANN001
    completed = subprocess.run(
        [*OFC, "dashboard", "--db", str(tmp_path / "a.duckdb"), "--port", "70000"],
        capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2
    assert "--port must be between 1 and 65535" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_a_host_that_is_no_address_is_a_clean_error_before_anything_is_served(
        tmp_path) -> None:  # noqa: ANN001
    """It used to print where it served and a one-time access token, then Streamlit's
    traceback (socket.gaierror)."""
    for host, said in (("host.invalid", "is not an address to listen on"),
                       ("999.1.1.1", "is not an address to listen on"),
                       ("192.0.2.1", "is not an address of this machine")):  # TEST-NET-1
        completed = subprocess.run(
            [*OFC, "dashboard", "--db", str(tmp_path / "a.duckdb"), "--host", host,
             "--no-browser"], capture_output=True, text=True, timeout=60)
        assert completed.returncode == 2, completed.stderr
        assert f"--host {host!r}" in completed.stderr or f"--host {host} " in completed.stderr
        assert said in completed.stderr
        assert "Traceback" not in completed.stderr
        assert "serving" not in completed.stdout and "token" not in completed.stdout
    assert not (tmp_path / "a.duckdb").exists()


def test_a_port_in_use_is_said_before_anything_is_served(tmp_path) -> None:  # noqa: ANN001
    """Streamlit only logged "Port N is not available" after this command had said it was
    serving there."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        completed = subprocess.run(
            [*OFC, "dashboard", "--db", str(tmp_path / "a.duckdb"), "--port", str(port),
             "--no-browser"], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 1, completed.stderr
    assert f"port {port} is in use on 127.0.0.1" in completed.stderr
    assert "--port" in completed.stderr and "Traceback" not in completed.stderr
    assert "serving" not in completed.stdout


def test_an_ipv6_address_is_bracketed_in_the_address_shown() -> None:
    assert url_host("::1") == "[::1]"
    assert url_host("fe80::1%eth0") == "[fe80::1%eth0]"
    assert url_host("127.0.0.1") == "127.0.0.1" and url_host("example.org") == "example.org"


def test_user_data_folder(monkeypatch, tmp_path) -> None:  # noqa: ANN001
    monkeypatch.setenv("OFC_DATA_DIR", str(tmp_path / "data"))
    assert demo.demo_database_path() == tmp_path / "data" / "demo.duckdb"
    monkeypatch.delenv("OFC_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert demo.user_data_dir() == tmp_path / "xdg" / "ofc-analytics"


def test_demo_builds_and_serves_headless(tmp_path) -> None:  # noqa: ANN001
    environment = dict(os.environ, OFC_DATA_DIR=str(tmp_path / "data"))
    environment.pop("DISPLAY", None)
    with (
        served(["demo", "--hands", "200"], environment=environment, seconds=180) as (url, _),
        urllib.request.urlopen(f"{url}/", timeout=10) as response,
    ):
        assert response.status == 200
    database = Path(tmp_path / "data" / "demo.duckdb")
    status = read.overview.database_status(database)
    assert status.hands > 0


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stream:
                    if int(stream.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stream:
            return stream.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_terminating_ofc_dashboard_stops_its_streamlit_server(tmp_path) -> None:  # noqa: ANN001
    """A supervisor's SIGTERM to ``ofc dashboard`` stops the Streamlit child too (it used to
    keep serving, orphaned)."""
    import signal
    import time

    with served(["dashboard", "--db", str(tmp_path / "a.duckdb")]) as (_, process):
        children = _children(process.pid)
        assert children  # streamlit runs as a child process
        try:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 128 + signal.SIGTERM
            deadline = time.monotonic() + 15
            while any(_alive(child) for child in children):
                assert time.monotonic() < deadline, "the streamlit server outlived ofc dashboard"
                time.sleep(0.1)
        finally:
            for child in children:
                if _alive(child):
                    os.kill(child, signal.SIGKILL)


def database_before_matches(folder: Path) -> Path:
    """The match-night sample ingested, then made as a database written before issue 31 (no
    hands.match_id, no schema fingerprint)."""
    import duckdb

    sample = Path(__file__).resolve().parents[2] / "sample_data" / "match-night.csv"
    database = folder / "old.duckdb"
    ingested = subprocess.run([*OFC, "ingest", str(sample), "--db", str(database)],
                              capture_output=True, text=True, timeout=120)
    assert ingested.returncode == 0, ingested.stderr
    with duckdb.connect(str(database)) as connection:
        connection.execute("ALTER TABLE hands DROP COLUMN match_id")
        connection.execute("DELETE FROM meta WHERE key = 'schema_fingerprint'")
    return database


def test_an_older_database_is_brought_up_to_date_before_serving(tmp_path) -> None:  # noqa: ANN001
    """A database written before matches (no hands.match_id) crashed the read-only pages that
    settle matches; ofc dashboard now adds the missing columns first."""
    import duckdb

    from pipeline.cli.dashboard import upgrade_schema

    database = database_before_matches(tmp_path)
    try:
        read.matches.match_settlements(database)
        raise AssertionError("an older database should lack hands.match_id")
    except duckdb.Error:
        pass
    assert upgrade_schema(database)
    # the column is there (empty: the dropped values are gone), and the question answers
    assert read.matches.match_settlements(database) == ()
    not_a_database = tmp_path / "notes.duckdb"
    not_a_database.write_text("not a database\n")
    assert not upgrade_schema(not_a_database)


def test_ofc_report_reads_an_older_database(tmp_path) -> None:  # noqa: ANN001
    """``ofc report`` on a database written before matches (no hands.match_id) failed with a
    binder error in its money section; the command-line readers now add the missing columns
    first, as the dashboard does."""
    import duckdb

    database = database_before_matches(tmp_path)
    with duckdb.connect(str(database), read_only=True) as connection:
        player = connection.execute("SELECT player FROM seats ORDER BY player LIMIT 1").fetchone()[0]
    written = tmp_path / "report.md"
    report = subprocess.run([*OFC, "report", player, "--db", str(database), "--out",
                             str(written)], capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    assert "Binder Error" not in report.stdout + report.stderr
    assert player in written.read_text()
