"""``ofc report``: files, formats, names, stdout, errors - run in-process on the test database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli import main
from tests.report.hands import ALIAS, HERO, SCRIPT

SMALL = ["--min-sample", "10", "--min-sessions", "3", "--rank-min-hands", "15"]


def test_default_file_is_sanitised_html(report_db: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["report", SCRIPT, "--db", str(report_db), *SMALL]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["script_alert_1_script-report.html"]
    html = (tmp_path / "script_alert_1_script-report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<script>alert(1)" not in html
    assert "wrote script_alert_1_script-report.html (html): 24 hands" in capsys.readouterr().err


def test_formats_and_determinism(report_db: Path, tmp_path: Path) -> None:
    arguments = ["report", HERO, "--alias", ALIAS, "--db", str(report_db), *SMALL]
    for name in ("a.json", "b.json"):
        assert main([*arguments, "--out", str(tmp_path / name)]) == 0
    first = (tmp_path / "a.json").read_bytes()
    assert first == (tmp_path / "b.json").read_bytes()
    data = json.loads(first)
    assert data["headline"]["hands"] == 96 and data["aliases"] == [ALIAS]
    assert data["settings"]["min_sample"] == 10
    assert main([*arguments, "--out", str(tmp_path / "r.md")]) == 0
    assert (tmp_path / "r.md").read_text(encoding="utf-8").startswith("# Coaching report: ana")
    assert main([*arguments, "--format", "md", "--out", str(tmp_path / "report.txt")]) == 0
    assert (tmp_path / "report.txt").read_text(encoding="utf-8").startswith("# Coaching")
    for name in ("one.html", "two.html"):
        assert main([*arguments, "--out", str(tmp_path / name)]) == 0
    assert (tmp_path / "one.html").read_bytes() == (tmp_path / "two.html").read_bytes()


def test_stdout_and_scope(report_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", HERO, "--db", str(report_db), "--variant", "classic",
                 "--since", "2026-01-01", "--until", "2026-01-11", "--format", "json",
                 "--out", "-", *SMALL]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["variant"] == "classic" and data["until"] == "2026-01-11"
    assert data["headline"]["hands"] == 12  # the first classic session only


def test_errors(report_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "nobody", "--db", str(report_db)]) == 1
    assert "no hands for nobody" in capsys.readouterr().err
    assert main(["report", HERO, "--db", str(tmp_path / "missing.duckdb")]) == 1
    assert "no database at" in capsys.readouterr().err
    assert main(["report", HERO, "--db", str(report_db), "--since", "2026-02-01",
                 "--until", "2026-01-01"]) == 2
    assert "--since is after --until" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["report", HERO, "--since", "yesterday"])
    capsys.readouterr()
    for sd in ("nan", "inf", "0"):  # nan and inf used to give a report with no outlier rule
        with pytest.raises(SystemExit):
            main(["report", HERO, "--db", str(report_db), "--outlier-sd", sd])
        assert "--outlier-sd: must be a finite number above 0" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_reference_group_change_date_and_rate(report_db: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", HERO, "--alias", ALIAS, "--db", str(report_db), *SMALL,
                 "--reference", "named:bo,cy", "--no-outlier-rule", "--fdr", "10",
                 "--change-date", "2026-01-09", "--window", "20", "--format", "json",
                 "--out", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["reference"]["label"] == "regulars (bo, cy)"
    assert sorted(data["reference"]["members"]) == ["bo", "cy"]
    assert "outlier rule off" in data["reference"]["description"]
    assert data["settings"]["fdr"] == 0.1 and data["settings"]["rolling_window"] == 20
    assert data["change_date"] == "2026-01-09"
    assert {f["key"] for f in data["findings"]} >= {"change.points", "change.fouls"}
    assert data["rolling"]["window"] == 20


@pytest.mark.parametrize(("arguments", "message"), [
    (["--reference", "named:"], "--reference: a named reference group needs at least one player"),
    (["--reference", "everyone"], "--reference: unknown reference group 'everyone'"),
])
def test_bad_reference_groups(report_db: Path, capsys: pytest.CaptureFixture[str],
                              arguments: list[str], message: str) -> None:
    assert main(["report", HERO, "--db", str(report_db), *arguments]) == 2
    assert message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["report", HERO, "--fdr", "150"])


def test_a_date_range_says_when_it_leaves_out_hands_without_a_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """poker-arena logs carry no start time: a date range leaves their hands out, and the
    message says so instead of only "no hands" (and --until 9999-12-31 no longer overflows)."""
    log = Path(__file__).parents[1] / "formats" / "data" / "ofc-pineapple.jsonl"
    database = tmp_path / "arena.duckdb"
    assert main(["ingest", str(log), "--db", str(database), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["report", "random", "--db", str(database), "--since", "1900-01-01",
                 "--out", str(tmp_path / "r.json")]) == 1
    assert ("no hands for random (since 1900-01-01; 3 of their hands have no start time, and a "
            "date range leaves such hands out)") in capsys.readouterr().err
    assert main(["report", "random", "--db", str(database), "--out", str(tmp_path / "r.json")]) == 0
    assert main(["report", "nobody", "--db", str(database), "--until", "9999-12-31",
                 "--out", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert "no hands for nobody (until 9999-12-31) in" in err and "start time" not in err
