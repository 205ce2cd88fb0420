"""What the readers emit is valid canonical data: it validates, and re-scores to the points the
source reported (checked only when the validation and evaluation modules are present)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.formats import read_source

validate = pytest.importorskip("pipeline.records.validate")
evaluate = pytest.importorskip("pipeline.ingest.evaluate")
ruleset = pytest.importorskip("pipeline.rules.ruleset")


@pytest.mark.parametrize("name", ["classic_log", "pineapple_log", "sample_boards"])
def test_records_validate_and_rescore_to_the_reported_points(
    name: str, request: pytest.FixtureRequest
) -> None:
    path: Path = request.getfixturevalue(name)
    records = list(read_source(path))
    assert records
    for source in records:
        assert source.error is None
        hand = validate.parse_hand(source.record)
        scored = evaluate.score_output(evaluate.score_record(hand, ruleset.preset(hand.rules)))
        points = [player["points"] for player in scored["players"]]
        assert points == [player.reported_points for player in hand.players], hand.hand_id
