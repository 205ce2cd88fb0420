"""``ofc dashboard``: serve the Streamlit dashboard on a database."""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

from pipeline.cli import CommandError
from pipeline.store import DEFAULT_DATABASE

APP_MODULE = "dashboard.app"
DATABASE_ENV = "OFC_DASHBOARD_DB"  # read by dashboard.components.database_path
LAKE_ENV = "OFC_DASHBOARD_LAKE"  # read by dashboard.components.database_path
DEFAULT_PORT = 8501


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``dashboard`` command."""
    parser = subparsers.add_parser(
        "dashboard",
        help="open the dashboard (Streamlit) on a database",
        description=(
            "Serve the dashboard on the database: review your play, compare players, follow the "
            "points. A missing or empty database shows a start page with a button to load demo "
            "data. Stop with Ctrl-C."
        ),
    )
    parser.add_argument("--db", default=DEFAULT_DATABASE, help=f"database file (default {DEFAULT_DATABASE})")
    parser.add_argument("--lake", metavar="DIR",
                        help="show the Parquet lake in DIR (ofc lake build) instead of --db")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """--port, --host and --no-browser (shared with ``ofc demo``)."""
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument("--host", default=None,
                        help="address to listen on (default: Streamlit's, all interfaces)")
    parser.add_argument("--no-browser", action="store_true",
                        help="do not open a web browser (headless server); automatic without a display")


def headless(no_browser: bool) -> bool:
    """True when no browser should be opened: asked for, or no display on Linux."""
    if no_browser:
        return True
    return sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def app_path() -> Path:
    """The dashboard's Streamlit script, ``app.py`` of the ``dashboard`` package (found, not
    imported, wherever that package is installed: a source checkout or site-packages)."""
    try:
        spec = importlib.util.find_spec(APP_MODULE)
    except ModuleNotFoundError:
        spec = None
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        raise CommandError(
            f"the dashboard is not installed: no {APP_MODULE} module beside pipeline "
            "(reinstall ofc-analytics)"
        )
    return Path(spec.origin)


def streamlit_command(database: Path, port: int, host: str | None, no_browser: bool,
                      lake: bool = False) -> list[str]:
    """The ``streamlit run`` command line for the dashboard (on a lake folder with ``lake``)."""
    command = [
        sys.executable, "-m", "streamlit", "run", str(app_path()),
        "--server.port", str(port),
        "--server.headless", "true" if headless(no_browser) else "false",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
        "--client.toolbarMode", "minimal",
    ]
    if host:
        command += ["--server.address", host]
    return command + ["--", "--lake" if lake else "--db", str(database)]


def serve(database: str | Path, port: int, host: str | None, no_browser: bool,
          lake: bool = False) -> int:
    """Run Streamlit on ``database`` (a lake folder with ``lake``) until interrupted; returns
    its exit status."""
    if not 0 < port < 65536:
        raise CommandError(f"--port must be between 1 and 65535, got {port}", code=2)
    database = Path(database).expanduser().resolve()
    if lake:
        from pipeline.read.lake import is_lake

        if not is_lake(database):
            raise CommandError(
                f"no lake at {database} (build one with: ofc lake build PATH --lake {database})",
                code=2)
        environment = dict(os.environ, **{LAKE_ENV: str(database)})
    else:
        if database.is_dir():
            raise CommandError(f"{database} is a folder, not a database file", code=2)
        if not database.exists():
            print(f"ofc dashboard: no database at {database} yet; the start page explains how to load hands")
        environment = dict(os.environ, **{DATABASE_ENV: str(database)})
        environment.pop(LAKE_ENV, None)
    where = host or "localhost"
    print(f"ofc dashboard: serving {database} on http://{where}:{port} (Ctrl-C to stop)", flush=True)
    process = subprocess.Popen(streamlit_command(database, port, host, no_browser, lake),
                               env=environment)
    installed, previous = _on_terminate(_raise_terminated)
    try:
        return process.wait()
    except (KeyboardInterrupt, _Terminated) as stop:
        # Streamlit runs as a child process: stopping ofc must stop it too, not orphan it.
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        if isinstance(stop, _Terminated):
            return 128 + signal.SIGTERM
        raise
    finally:
        if installed:
            _on_terminate(previous if previous is not None else signal.SIG_DFL)


class _Terminated(Exception):
    """SIGTERM arrived while the dashboard was being served."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise _Terminated


def _on_terminate(handler: object) -> tuple[bool, object]:
    """Install a SIGTERM handler: (installed, the previous handler). Off the main thread
    nothing is installed (signals are not ours to handle there)."""
    try:
        return True, signal.signal(signal.SIGTERM, handler)  # type: ignore[arg-type]
    except ValueError:
        return False, None


def run(arguments: argparse.Namespace) -> int:
    """Serve the dashboard on ``--lake`` or ``--db``."""
    if arguments.lake:
        return serve(arguments.lake, arguments.port, arguments.host, arguments.no_browser,
                     lake=True)
    return serve(arguments.db, arguments.port, arguments.host, arguments.no_browser)
