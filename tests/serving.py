"""Running ``ofc dashboard`` (or ``ofc demo``) as a real server for a test, and stopping it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

OFC = (sys.executable, "-m", "pipeline.cli")
"""How tests run the ``ofc`` command (the console script itself is tried by the browser test)."""


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_server(url: str, process: subprocess.Popen, seconds: float = 60) -> None:
    """Poll Streamlit's health endpoint until it answers; fail with the server's output if it
    exits or does not answer in time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = process.stdout.read() if process.stdout else b""
            raise AssertionError(f"the server exited with {process.returncode}: "
                                 f"{output.decode(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError("the server did not start in time")


def stop(process: subprocess.Popen, seconds: float = 15) -> None:
    """Terminate a server process (killing it if it does not stop)."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def served(
    arguments: Sequence[str], program: Sequence[str] = OFC,
    environment: Mapping[str, str] | None = None, seconds: float = 60,
) -> Iterator[tuple[str, subprocess.Popen]]:
    """``ofc ARGUMENTS --port P --host 127.0.0.1 --no-browser`` on a free port until the block
    ends: yields (base URL, process)."""
    port = free_port()
    process = subprocess.Popen(
        [*program, *arguments, "--port", str(port), "--host", "127.0.0.1", "--no-browser"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env=None if environment is None else dict(environment),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(url, process, seconds)
        yield url, process
    finally:
        stop(process)
