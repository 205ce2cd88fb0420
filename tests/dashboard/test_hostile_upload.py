"""Hardening round 2, item 1, on the Data page: an upload holding a line nested 100,000 levels
deep showed the full traceback (with the server's paths) and dropped the other uploaded files.
Now that line is one reject of its file, and every other file of the same upload is read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline import store
from tests.dashboard.test_app import app_on, metrics

DEPTH = 100_000


def test_a_deeply_nested_upload_costs_its_line_not_the_other_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture_source  # noqa: ANN001
) -> None:
    source, records = fixture_source
    database = tmp_path / "empty.duckdb"
    store.connect(database).close()
    app = app_on(database, monkeypatch)
    deep = ('{"players": ' + "[" * DEPTH + "]" * DEPTH + "}\n").encode()
    first_hand = (json.dumps(records[0]) + "\n").encode()
    app.file_uploader(key="uploads").set_value([
        ("deep.jsonl", deep + first_hand, "application/json"),  # the deep line comes first
        ("my-hands.jsonl", source.read_bytes(), "application/json"),
    ])
    app.run()
    app.button(key="ingest_button").click().run()
    assert not app.exception, [element.message for element in app.exception]
    shown = " ".join(str(element.value) for element in [*app.error, *app.warning])
    assert "Traceback" not in shown and "RecursionError" not in shown
    last = {line["file"]: line for line in app.session_state["ofc_last_ingest"]}
    assert set(last) == {"deep.jsonl", "my-hands.jsonl"}, last
    # the deep file: its deep line rejected, its hand stored (it is also in the second file, so
    # that file finds it stored already)
    assert (last["deep.jsonl"]["stored"], last["deep.jsonl"]["rejected"]) == (1, 1)
    assert last["my-hands.jsonl"]["stored"] == len(records) - 1
    assert metrics(app)["Hands"] == str(len(records))
    with store.connect(database, read_only=True) as connection:
        reasons = [row[0] for row in connection.execute(
            "SELECT reason FROM rejects WHERE reason LIKE '%nested too deeply%'").fetchall()]
    assert len(reasons) == 1
