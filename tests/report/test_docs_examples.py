"""Every ``ofc report`` example of docs/coaching-report.md runs on the demo database."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from pipeline.cli import main

DOC = Path(__file__).parents[2] / "docs" / "coaching-report.md"


def examples() -> list[str]:
    """The ``ofc report`` lines of the page's shell blocks (comments dropped)."""
    lines, inside = [], False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = line.strip() == "```bash" if not inside else False
            continue
        if inside and line.strip().startswith("ofc report "):
            lines.append(line.split("#")[0].strip())
    return lines


def test_the_page_has_examples() -> None:
    assert len(examples()) >= 5


@pytest.mark.parametrize("command", examples())
def test_the_example_runs_on_the_demo(command: str, demo: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    arguments = shlex.split(command)[1:]
    assert "--db" in arguments
    arguments[arguments.index("--db") + 1] = str(demo)
    if "--out" in arguments:
        out = arguments.index("--out") + 1
        if arguments[out] != "-":
            arguments[out] = str(tmp_path / Path(arguments[out]).name)
    else:
        arguments += ["--out", str(tmp_path / "report.html")]
    assert main(arguments) == 0, command
    captured = capsys.readouterr()
    assert "clear item" in captured.err or captured.out.startswith("{"), captured
