"""``ofc dashboard``: serve the Streamlit dashboard on a database."""

from __future__ import annotations

import argparse
import errno
import importlib.util
import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from pipeline.cli import CommandError
from pipeline.cli.database import DEFAULT_DATABASE

APP_MODULE = "dashboard.app"
SERVER_MODULE = "dashboard.serve"
"""The launcher ``streamlit run`` is given: Streamlit's server with the dashboard's door in front
(sign-in, upload limits), serving :data:`APP_MODULE`."""
DATABASE_ENV = "OFC_DASHBOARD_DB"  # read by dashboard.components.database_path
LAKE_ENV = "OFC_DASHBOARD_LAKE"  # read by dashboard.components.database_path
DEFAULT_PORT = 8501
DEFAULT_HOST = "127.0.0.1"
DEFAULT_SIGN_IN_HOURS = 12
"""``pipeline.read.access.DEFAULT_SIGN_IN_HOURS`` (not imported here: registering a command
stays light)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``dashboard`` command."""
    parser = subparsers.add_parser(
        "dashboard",
        help="open the dashboard (Streamlit) on a database",
        description=(
            "Serve the dashboard on the database: review your play, compare players, follow the "
            "points. A missing or empty database shows a start page with a button to load demo "
            "data. It listens on 127.0.0.1 (this machine only) unless --host says otherwise; "
            "served to the network it asks for a password (--password-file) or a token it "
            "prints once. Stop with Ctrl-C."
        ),
    )
    parser.add_argument("--db", default=DEFAULT_DATABASE, help=f"database file (default {DEFAULT_DATABASE})")
    parser.add_argument("--lake", metavar="DIR",
                        help="show the Parquet lake in DIR (ofc lake build) instead of --db")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """--port, --host, --password-file, --read-only and --no-browser (shared with ``ofc demo``)."""
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--host", default=DEFAULT_HOST,
        help=f"address to listen on (default {DEFAULT_HOST}: this machine only). Any other "
             "address, such as 0.0.0.0 (every interface), serves the network and so needs "
             "--password-file, or uses a random token printed once",
    )
    parser.add_argument(
        "--password-file", type=Path, metavar="FILE",
        help="a file whose first line is the password visitors must type (any --host)",
    )
    parser.add_argument(
        "--read-only", action="store_true",
        help="offer no page that writes (no upload, no Record page) and refuse every write",
    )
    parser.add_argument(
        "--sign-in-hours", type=float, default=DEFAULT_SIGN_IN_HOURS, metavar="H",
        help="how long a sign-in lasts in a browser, reloads and new tabs included "
             f"(default {DEFAULT_SIGN_IN_HOURS}); restarting the dashboard signs everyone out",
    )
    parser.add_argument("--no-browser", action="store_true",
                        help="do not open a web browser (headless server); automatic without a display")


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """How the dashboard is served: where, behind which secret, read-only or not."""

    port: int = DEFAULT_PORT
    host: str = DEFAULT_HOST
    no_browser: bool = False
    password_file: Path | None = None
    read_only: bool = False
    sign_in_hours: float = DEFAULT_SIGN_IN_HOURS

    @classmethod
    def from_arguments(cls, arguments: argparse.Namespace) -> ServeOptions:
        """The options of ``ofc dashboard`` / ``ofc demo``."""
        return cls(arguments.port, arguments.host, arguments.no_browser,
                   arguments.password_file, arguments.read_only, arguments.sign_in_hours)


MAX_PASSWORD_CHARACTERS = 1024
"""The longest password a --password-file may hold (its first line is read up to one more)."""


def read_password(path: Path) -> str:
    """The password in the first line of ``path`` (a CommandError when missing, empty or
    longer than :data:`MAX_PASSWORD_CHARACTERS`). A pipe works (``--password-file <(pass
    ofc)``); a first line that never ends (``/dev/zero``) is not read past the limit."""
    try:
        with open(path.expanduser(), encoding="utf-8") as stream:
            password = stream.readline(MAX_PASSWORD_CHARACTERS + 2).strip("\r\n")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise CommandError(f"cannot read --password-file {path}: {reason}", code=2) from error
    if len(password) > MAX_PASSWORD_CHARACTERS:
        raise CommandError(f"--password-file {path}: its first line is longer than "
                           f"{MAX_PASSWORD_CHARACTERS:,} characters: not a password", code=2)
    if not password.strip():
        raise CommandError(f"--password-file {path}: its first line is empty", code=2)
    return password


def headless(no_browser: bool) -> bool:
    """True when no browser should be opened: asked for, or no display on Linux."""
    if no_browser:
        return True
    return sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def app_path(module: str = APP_MODULE) -> Path:
    """The file of a module of the ``dashboard`` package (by default its Streamlit script,
    ``app.py``), found, not imported, wherever that package is installed: a source checkout or
    site-packages."""
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        spec = None
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        raise CommandError(
            f"the dashboard is not installed: no {module} module beside pipeline "
            "(reinstall ofc-analytics)"
        )
    return Path(spec.origin)


def streamlit_command(database: Path, port: int, host: str | None, no_browser: bool,
                      lake: bool = False) -> list[str]:
    """The ``streamlit run`` command line for the dashboard (listening on ``host``, by default
    :data:`DEFAULT_HOST`; on a lake folder with ``lake``): the launcher :data:`SERVER_MODULE`,
    whose door checks every request; uploads limited to ``$OFC_MAX_UPLOAD_MB`` each; a failing
    page shows the error's type, never a traceback with the server's paths."""
    from pipeline.read.access import upload_limit_mb

    return [
        sys.executable, "-m", "streamlit", "run", str(app_path(SERVER_MODULE)),
        "--server.port", str(port),
        "--server.address", host or DEFAULT_HOST,
        "--server.headless", "true" if headless(no_browser) else "false",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
        "--client.toolbarMode", "minimal",
        "--server.enableXsrfProtection", "true",
        "--server.maxUploadSize", str(upload_limit_mb()),
        "--client.showErrorDetails", "type",
        "--", "--lake" if lake else "--db", str(database),
    ]


def access_environment(options: ServeOptions) -> tuple[dict[str, str], str | None]:
    """The environment variables that set the dashboard's access, and the token to print once
    (None when a password file is used or none is needed).

    A dashboard served beyond this machine always has a secret: the password file's, or a new
    random token; on 127.0.0.1 it has one only when a password file is given."""
    from pipeline.read import access

    environment: dict[str, str] = {}
    token = None
    if not (options.sign_in_hours > 0 and options.sign_in_hours <= 24 * 366):
        raise CommandError(f"--sign-in-hours must be more than 0 and at most a year, got "
                           f"{options.sign_in_hours:g}", code=2)
    environment[access.SIGN_IN_SECONDS_ENV] = str(round(options.sign_in_hours * 3600))
    if options.password_file is not None:
        secret = access.AccessSecret.of(read_password(options.password_file))
        environment[access.SECRET_ENV] = secret.encoded()
        environment[access.SECRET_KIND_ENV] = "password"
    elif not access.is_loopback(options.host):
        token = access.new_token()
        environment[access.SECRET_ENV] = access.AccessSecret.of(token).encoded()
        environment[access.SECRET_KIND_ENV] = "token"
    if options.read_only:
        environment[access.READ_ONLY_ENV] = "1"
    return environment, token


def upgrade_schema(database: Path) -> bool:
    """Bring an existing database's schema up to date before the dashboard, which reads it
    read-only, opens it (:func:`pipeline.cli.database.upgrade_schema`)."""
    from pipeline.cli.database import upgrade_schema as bring_up_to_date

    return bring_up_to_date(database, "ofc dashboard")


def listen_problem(host: str, port: int) -> CommandError | None:
    """Why Streamlit could not listen on ``host``:``port``, found before it starts (it would
    print a Python traceback for a host that is no address, and for a port in use only "Port
    8501 is not available" after this command had said where it serves), or None.

    The socket is opened as Streamlit opens it (IPv6 when the host holds a colon, address
    reuse on), bound and closed at once."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            if os.name != "nt":
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except (socket.gaierror, UnicodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        return CommandError(f"--host {host!r} is not an address to listen on: {reason}", code=2)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            return CommandError(f"port {port} is in use on {host} (another dashboard?): give "
                                "another --port", code=1)
        if error.errno == errno.EACCES:
            return CommandError(f"not allowed to listen on port {port} (ports below 1024 need "
                                "administrator rights): give another --port", code=1)
        if error.errno == errno.EADDRNOTAVAIL:
            return CommandError(f"--host {host} is not an address of this machine", code=2)
        return CommandError(f"cannot listen on {host} port {port}: "
                            f"{error.strerror or error}", code=1)
    return None


def url_host(host: str) -> str:
    """``host`` as it is written in a URL: an IPv6 address in brackets.

    >>> url_host("::1"), url_host("127.0.0.1")
    ('[::1]', '127.0.0.1')
    """
    return f"[{host}]" if ":" in host else host


def serve(database: str | Path, options: ServeOptions, lake: bool = False) -> int:
    """Run Streamlit on ``database`` (a lake folder with ``lake``) until interrupted; returns
    its exit status."""
    from pipeline.read import access

    if not 0 < options.port < 65536:
        raise CommandError(f"--port must be between 1 and 65535, got {options.port}", code=2)
    if not options.host.strip():
        raise CommandError("--host is empty", code=2)
    problem = listen_problem(options.host, options.port)
    if problem is not None:
        raise problem
    database = Path(database).expanduser().resolve()
    if lake:
        from pipeline.read.lake import is_lake

        if not is_lake(database):
            raise CommandError(
                f"no lake at {database} (build one with: ofc lake build PATH --lake {database})",
                code=2)
    else:
        if database.is_dir():
            raise CommandError(f"{database} is a folder, not a database file", code=2)
        if not database.exists():
            print(f"ofc dashboard: no database at {database} yet; the start page explains how to load hands")
        else:
            upgrade_schema(database)
    extra, token = access_environment(options)
    environment = {key: value for key, value in os.environ.items()
                   if key not in (access.SECRET_ENV, access.SECRET_KIND_ENV,
                                  access.SIGN_IN_SECONDS_ENV, access.READ_ONLY_ENV, LAKE_ENV,
                                  DATABASE_ENV)}
    environment.update(extra, **{(LAKE_ENV if lake else DATABASE_ENV): str(database)})
    port = options.port
    if access.is_loopback(options.host):
        where = (f"http://{'localhost' if options.host == DEFAULT_HOST else url_host(options.host)}"
                 f":{port}")
        reach = "this machine only"
    else:
        shown = socket.gethostname() if options.host in ("0.0.0.0", "::") else options.host
        where = f"http://{url_host(shown)}:{port}"
        reach = f"the network ({options.host})"
    guard = "password" if options.password_file else ("token" if token else "no login")
    mode = ", read-only" if options.read_only else ""
    print(f"ofc dashboard: serving {database} on {where} to {reach} ({guard}{mode}; Ctrl-C to stop)",
          flush=True)
    if token is not None:
        print(f"ofc dashboard: access token (shown once, keep it private; it signs in one "
              f"browser, once): {token}\n"
              f"ofc dashboard: open {where}/?token={token}", flush=True)
    process = subprocess.Popen(
        streamlit_command(database, port, options.host, options.no_browser, lake),
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
        return serve(arguments.lake, ServeOptions.from_arguments(arguments), lake=True)
    return serve(arguments.db, ServeOptions.from_arguments(arguments))
