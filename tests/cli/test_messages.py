"""Messages say what they mean: no doubled word in JSON errors, ``ofc board --help`` speaks of
the board, not of records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli import CommandError, build_parser
from pipeline.formats import read_source
from pipeline.formats.source import json_error_reason


def test_json_errors_name_the_column_once(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text('{"hand_id": "h1", "players": [], "site": "unterminated\n', encoding="utf-8")
    (record,) = list(read_source(path, format="canonical"))
    assert "at at" not in record.error
    assert "Unterminated string starting at column" in record.error
    try:
        json.loads('{"a" 1}')
    except json.JSONDecodeError as error:
        assert json_error_reason(error) == "invalid JSON: Expecting ':' delimiter at column 6"


def test_board_help_speaks_of_the_board() -> None:
    parser = build_parser()
    subparsers = next(action for action in parser._actions if action.dest == "command")
    text = subparsers.choices["board"].format_help()
    assert "record" not in text
    assert "judge the board" in " ".join(text.split())


def test_ingest_options_out_of_range_are_refused(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from pipeline.cli import main

    hands = tmp_path / "none.jsonl"
    hands.write_text("", encoding="utf-8")
    for option, value in (("--session-gap", "nan"), ("--session-gap", "-5"),
                          ("--batch-size", "0"), ("--workers", "-2")):
        try:
            code = main(["ingest", str(hands), "--db", str(tmp_path / "x.duckdb"), option, value])
        except SystemExit as stopped:  # refused by the option's type, as argparse does
            code = stopped.code
        assert code == 2
        assert option in capsys.readouterr().err
    assert not (tmp_path / "x.duckdb").exists()


@pytest.mark.parametrize("command", ["ingest", "lake"])
def test_a_batch_too_large_to_hold_is_refused(command: str, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """A batch is held in memory while it is scored and written: ``--batch-size 10000000``
    would run a machine out of memory, so the most is MAX_BATCH_SIZE (which still works)."""
    from pipeline.cli import main
    from pipeline.ingest.defaults import MAX_BATCH_SIZE

    hands = tmp_path / "none.jsonl"
    hands.write_text("", encoding="utf-8")
    arguments = (["ingest", str(hands), "--db", str(tmp_path / "x.duckdb"), "--quiet"]
                 if command == "ingest"
                 else ["lake", "build", str(hands), "--lake", str(tmp_path / "lake"), "--quiet"])
    for value in (str(MAX_BATCH_SIZE + 1), "10000000"):
        with pytest.raises(SystemExit) as stopped:
            main([*arguments, "--batch-size", value])
        assert stopped.value.code == 2
        error = capsys.readouterr().err
        assert "--batch-size" in error and f"at most {MAX_BATCH_SIZE:,}" in error
    assert not (tmp_path / "x.duckdb").exists() and not (tmp_path / "lake").exists()
    assert main([*arguments, "--batch-size", str(MAX_BATCH_SIZE)]) == 0


@pytest.mark.parametrize("command", ["watch", "lake"])
def test_every_command_that_stores_hands_refuses_a_bad_session_gap(
        command: str, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from pipeline.cli import main

    arguments = (["watch", str(tmp_path), "--db", str(tmp_path / "x.duckdb")] if command == "watch"
                 else ["lake", "build", str(tmp_path), "--lake", str(tmp_path / "lake")])
    for value in ("nan", "-5", "20000"):
        assert main([*arguments, "--session-gap", value]) == 2
        assert "--session-gap must be" in capsys.readouterr().err
    assert not (tmp_path / "x.duckdb").exists() and not (tmp_path / "lake").exists()


def test_a_process_count_past_four_per_cpu_is_cut_and_said(tmp_path: Path) -> None:
    """``--jobs 500`` used to start 500 processes on a 2-CPU machine (``ofc score`` forked them
    all even for three blocks of lines; ``ofc analyze`` made a pool of 500 for 3 hands). Every
    ``--jobs``/``--workers`` is cut to four per usable CPU, and the command says so; the output
    is the same."""
    import os
    import subprocess
    import sys

    from pipeline.cli.common import MAX_PROCESSES_PER_CPU, process_count

    most = MAX_PROCESSES_PER_CPU * len(os.sched_getaffinity(0))
    assert process_count(None, "--jobs") is None
    assert process_count(most, "--jobs") == most
    assert process_count(10**6, "--workers") == most
    for refused in (0, -2):  # one check for every command's option
        with pytest.raises(CommandError, match=f"--jobs must be 1 or more, got {refused}"):
            process_count(refused, "--jobs")
    source = Path(__file__).parents[1] / "formats" / "data" / "ofc-pineapple.jsonl"
    path = tmp_path / "hands.jsonl"
    # canonical lines: the three hands of the log, scored by ofc score, many times over
    hands = [json.dumps(record.record) for record in read_source(source, game="ofc-pineapple")
             if record.record is not None]
    path.write_text("\n".join(hands * 700) + "\n", encoding="utf-8")
    runs = [subprocess.run([sys.executable, "-m", "pipeline.cli", "score", str(path), "--jobs", jobs],
                           capture_output=True, text=True, check=True, timeout=120)
            for jobs in ("500", "1")]
    assert f"ofc: --jobs 500 is more than {MAX_PROCESSES_PER_CPU} processes per CPU" in runs[0].stderr
    assert f"using {most}" in runs[0].stderr and runs[1].stderr == ""
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout.count("\n") == 700 * len(hands)
