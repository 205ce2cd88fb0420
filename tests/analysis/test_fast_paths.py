"""The grader's fast paths give the values of the plain path on the same samples.

* a stream's samples grown step by step (the opponents played once per sample, every play's
  values kept) are the samples a single range would have held;
* a bot deciding a column of boards in chunks decides as it does on the whole column;
* an enumerated decision plays each seat once per distinct set of its own cards: the same
  values as playing every deal.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.analysis import policy as policy_module
from pipeline.analysis.decisions import Decision
from pipeline.analysis.exact import enumerate_deals
from pipeline.analysis.policy import BoardBatch
from pipeline.analysis.rollout import EVALUATION, Rollouts, column_policy
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD


@pytest.fixture(scope="module")
def decisions(simulated_source: list[dict], tmp_path_factory: pytest.TempPathFactory,
              ) -> list[Decision]:
    """Every decision of the simulated hands."""
    from tests.analysis.hands import build_database, database_decisions

    database = build_database(tmp_path_factory.mktemp("fast"), simulated_source, name="fast")
    return database_decisions(database)


def test_a_grown_stream_holds_the_samples_of_one_range(decisions: list[Decision]) -> None:
    checked = 0
    for decision in decisions[:40:3]:
        options = decision.alternatives().alternatives
        if len(options) < 3:
            continue
        whole = Rollouts(decision, STANDARD, 0, 48, seed=4, stream=EVALUATION)
        expected = whole.values(options[:3])
        grown = Rollouts(decision, STANDARD, 0, 8, seed=4, stream=EVALUATION)
        first = grown.values(options[:1])  # kept, then extended below
        for step in (16, 33, 48):
            grown.grow(step)
            assert (grown.values(options[:2], 0, step) == expected[:2, :step]).all()
        assert (first == expected[:1, :8]).all()
        assert (grown.values(options[:3]) == expected).all()
        assert (grown.values(options[1:3], 20, 40) == expected[1:3, 20:40]).all()
        assert (grown.deck == whole.deck).all()
        for mine, theirs in zip(grown.opponents.cards, whole.opponents.cards, strict=True):
            assert (mine == theirs).all()
        # a stream started later holds the same samples from there on
        late = Rollouts(decision, STANDARD, 20, 30, seed=4, stream=EVALUATION)
        late.grow(48)
        assert (late.values(options[:3]) == expected[:, 20:]).all()
        checked += 1
    assert checked >= 5


def test_a_bot_decides_the_same_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    policy = column_policy("expert", Variant.PINEAPPLE, STANDARD)
    generator = np.random.default_rng(3)
    decks = np.argsort(generator.random((300, 52)), axis=1)

    def play(chunk: int) -> tuple[np.ndarray, list[np.ndarray]]:
        monkeypatch.setattr(policy_module, "OPTIONS_PER_CHUNK", chunk)
        boards = BoardBatch.from_rows([((), (), ())]).repeat(len(decks))
        chosen = [policy.play_street(boards, decks[:, 0:5], 0)]
        for street in range(4):
            chosen.append(policy.play_street(boards, decks[:, 5 + 3 * street:8 + 3 * street], 1))
        return boards.cards, chosen

    whole_cards, whole_chosen = play(10**9)
    for chunk in (1, 243 * 7, 27 * 50):
        cards, chosen = play(chunk)
        assert (cards == whole_cards).all()
        assert all((mine == theirs).all() for mine, theirs in zip(chosen, whole_chosen, strict=True))


def test_an_enumerated_decision_plays_each_distinct_hand_once(decisions: list[Decision]) -> None:
    """The values of every deal, seats played once per distinct set of their cards, equal the
    values with every deal played as random samples are (the plain path)."""
    checked = shrunk = 0
    for decision in decisions:
        deals = enumerate_deals(decision, 3000)
        if deals is None or len(deals) < 20:
            continue
        options = decision.alternatives().alternatives
        exact = Rollouts.enumerated(decision, STANDARD, deals, "expert")
        played = sum(len(entry.boards) for entry in exact.opponents.entries)
        assert played <= len(deals) * len(exact.opponents.entries)
        shrunk += played < len(deals) * len(exact.opponents.entries)
        plain = Rollouts.enumerated(decision, STANDARD, deals, "expert")
        plain.enumerated_deals = False  # every deal as a sample of its own
        plain.opponents = plain._play_opponents(deals, plain.uniforms, 0)
        assert np.allclose(exact.values(options), plain.values(options), atol=1e-12)
        checked += 1
        if checked == 4:
            break
    assert checked >= 2 and shrunk >= 1


@pytest.mark.parametrize("width", [1, 3, 6, 10, 11])
@pytest.mark.parametrize("dtype", [np.int8, np.int64])
def test_distinct_hands_are_numpys_distinct_rows(width: int, dtype: type) -> None:
    """The distinct sets of cards an enumerated decision plays once each, packed into one key
    a row (at most ten cards) or not (eleven): the rows, their order and each row's index are
    ``np.unique(axis=0)``'s, with repeated rows, -1 (no card) and both ends of the codes."""
    from pipeline.analysis.rollout import _distinct

    generator = np.random.default_rng(width)
    rows = generator.integers(-1, 52, size=(3000, width)).astype(dtype)
    rows[1000:2000] = rows[:1000]  # every row of the first thousand twice
    rows[5, :] = -1
    rows[6, :] = 51
    unique, inverse = _distinct(rows)
    expected, expected_inverse = np.unique(rows, axis=0, return_inverse=True)
    assert unique.dtype == rows.dtype
    assert np.array_equal(unique, expected)
    assert np.array_equal(inverse, expected_inverse.reshape(-1))
    assert np.array_equal(unique[inverse], rows)
