"""How live a row's draws are: :meth:`StreetRows.live_state`, by hand and by brute force."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.analysis.policy import BoardBatch, seen_cards
from pipeline.rules.cards import parse_card
from pipeline.rules.game import ROW_LENGTHS, Variant
from pipeline.rules.ruleset import STANDARD
from pipeline.simulate.bots import pattern_subsets, street_patterns
from pipeline.simulate.dealer import StreetRows
from pipeline.simulate.outlook import row_outlooks
from tests.simulate.test_fast_options import streets_of_boards


def _cards(text: str) -> list[int]:
    return [parse_card(card) for card in text.split()]


def _street(rows: tuple[str, str, str], dealt: str, seen: str) -> StreetRows:
    batch = BoardBatch.from_rows([tuple(_cards(row) for row in rows)], [_cards(seen)])
    return StreetRows(np.asarray([_cards(dealt)]), batch.keys, batch.counts, batch.suits,
                      batch.cards, batch.seen)


def test_a_pair_with_its_other_kings_seen_is_dead() -> None:
    """Middle Kh Kd; dealt Ks 2c 7d; Kc seen on another board. Subsets are bitmasks of the
    dealt cards (1: Ks, 2: 2c, 4: 7d)."""
    street = _street(("", "Kh Kd", ""), "Ks 2c 7d", "Kc")
    live, _ = street.live_state(1)
    # nothing added: the two other kings are dealt (Ks) and seen (Kc): 0 of 4·1 − 2 = 2 live
    assert live[0, 0] == 0.0
    # Ks added: K K K, 0 of 1
    assert live[0, 1] == 0.0
    # 2c added: K K 2; kings 0 live, deuces 3 of 3 (2c is in the row): 3 of 4·2 − 3 = 5
    assert live[0, 2] == pytest.approx(0.6)
    # the top, empty: nothing to pair, every rank live
    top, top_flush = street.live_state(0)
    assert top_flush is None and top[0, 0] == 1.0
    # 7d on top: 7c 7h 7s unseen: 3 of 3
    assert top[0, 4] == 1.0


def test_a_flush_draw_counts_its_suit_still_unseen() -> None:
    """Bottom Ah 9h; dealt Kh 2c 7d; 3h and 4h seen: hearts known are Ah 9h 3h 4h Kh."""
    street = _street(("", "", "Ah 9h"), "Kh 2c 7d", "3h 4h")
    _, flush = street.live_state(2)
    assert flush is not None
    assert flush[0, 0] == pytest.approx(8 / 11)  # 8 hearts unseen of the 11 not in the row
    assert flush[0, 1] == pytest.approx(8 / 10)  # Kh added: three hearts
    assert flush[0, 2] == 0.0  # 2c added: no longer one suit
    # a row of one card draws to no flush yet
    _, lone = _street(("", "", "Ah"), "Kh 2c 7d", "").live_state(2)
    assert lone is not None and lone[0, 0] == 0.0


def test_without_the_cards_every_rank_counts_as_live() -> None:
    batch = BoardBatch.from_rows([([], _cards("Kh Kd"), [])])
    street = StreetRows(np.asarray([_cards("Ks 2c 7d")]), batch.keys, batch.counts,
                        batch.suits)
    live, flush = street.live_state(1)
    assert (live == 1.0).all() and flush is not None and (flush == 0.0).all()


@pytest.mark.parametrize("variant", [Variant.PINEAPPLE, Variant.CLASSIC])
def test_live_state_matches_a_count_card_by_card(variant: Variant) -> None:
    """On boards of every fill with other cards seen, every row after every subset: the
    fractions from counting the unseen cards one by one."""
    checked = 0
    for batch, dealt, _, _ in streets_of_boards(variant, "standard", 60, seed=4):
        street = StreetRows(dealt, batch.keys, batch.counts, batch.suits, batch.cards,
                            batch.seen)
        for row in range(3):
            live, flush = street.live_state(row)
            for board in range(0, len(dealt), 7):
                known = set(np.flatnonzero(batch.seen[board]).tolist())
                known |= {card for card in batch.cards[board].tolist() if card >= 0}
                known |= set(dealt[board].tolist())
                start = (0, 3, 8)[row]
                in_row = [card for card in batch.cards[board, start:start + ROW_LENGTHS[row]]
                          .tolist() if card >= 0]
                for subset in range(1 << dealt.shape[1]):
                    cards = in_row + [card for bit, card in enumerate(dealt[board].tolist())
                                      if subset >> bit & 1]
                    ranks = {card >> 2 for card in cards}
                    others = [card for card in range(52)
                              if card >> 2 in ranks and card not in cards]
                    expected = (sum(card not in known for card in others) / len(others)
                                if others else 1.0)
                    assert live[board, subset] == pytest.approx(expected, abs=1e-6)
                    if flush is not None:
                        suits = {card & 3 for card in cards}
                        if len(cards) >= 2 and len(suits) == 1:
                            suit = suits.pop()
                            rest = [card for card in range(52)
                                    if card & 3 == suit and card not in cards]
                            wanted = sum(card not in known for card in rest) / len(rest)
                        else:
                            wanted = 0.0
                        assert flush[board, subset] == pytest.approx(wanted, abs=1e-6)
                    checked += 1
    assert checked > 1000


def test_options_carry_the_live_fields() -> None:
    """The options of a street hold each row's live fields for the option's subset."""
    street = _street(("", "Kh Kd", "Ah 9h"), "Ks 2c 7d", "Kc 3h 4h")
    patterns, subsets = street_patterns(3, 1), pattern_subsets(3, 1)
    options = street.options(Variant.PINEAPPLE, patterns, subsets,
                             row_outlooks(Variant.PINEAPPLE, STANDARD))
    live, _ = street.live_state(1)
    _, flush = street.live_state(2)
    assert (options.middle_live[0] == live[0, subsets[:, 1]]).all()
    assert (options.bottom_flush[0] == flush[0, subsets[:, 2]]).all()
    assert options.middle_live[0].min() == 0.0 and options.middle_live[0].max() > 0.5


def test_seen_cards_takes_cards_and_boards() -> None:
    seen = seen_cards([[3, 7], ([1], [2, 4], []), None])
    assert np.flatnonzero(seen[0]).tolist() == [3, 7]
    assert np.flatnonzero(seen[1]).tolist() == [1, 2, 4]
    assert not seen[2].any()


def reference_live_state(street: StreetRows, row: int) -> tuple[np.ndarray, np.ndarray | None]:
    """:meth:`StreetRows.live_state` worked out plainly, subset by subset: the cards of the
    row, their ranks and suits, the unseen cards counted from a boards × 52 table, and the
    shares as one float32 division of those counts (the formula of its docstring)."""
    assert street.cards is not None and street.seen is not None
    dealt, cards = street.dealt, street.cards
    count, size = dealt.shape
    boards = np.arange(count)[:, None]
    known = np.array(street.seen, dtype=bool, copy=True)
    known[boards, dealt] = True
    known[boards, np.where(cards >= 0, cards, dealt[:, :1])] = True
    unseen = (~known).reshape(count, 13, 4)
    rank_unseen, suit_unseen = unseen.sum(axis=2), unseen.sum(axis=1)
    start = (0, 3, 8)[row]
    live = np.empty((count, 1 << size), dtype=np.float32)
    flush = np.empty((count, 1 << size), dtype=np.float32)
    for subset in range(1 << size):
        chosen = ((subset >> np.arange(size)) & 1).astype(bool)
        in_row = np.concatenate([cards[:, start:start + ROW_LENGTHS[row]],
                                 np.where(chosen, dealt, -1)], axis=1)
        held = in_row >= 0
        ranks = np.zeros((count, 14), dtype=bool)  # an empty slot marks the last column
        suits = np.zeros((count, 5), dtype=bool)
        ranks[boards, np.where(held, in_row >> 2, 13)] = True
        suits[boards, np.where(held, in_row & 3, 4)] = True
        ranks, suits = ranks[:, :13], suits[:, :4]
        total = held.sum(axis=1)
        room = (4 * ranks.sum(axis=1) - total).astype(np.float32)
        live_cards = (ranks * rank_unseen).sum(axis=1).astype(np.float32)
        live[:, subset] = np.where(room > 0, live_cards / np.maximum(room, np.float32(1.0)),
                                   np.float32(1.0))
        one_suit = (suits.sum(axis=1) == 1) & (total >= 2)
        drawn = suit_unseen[np.arange(count), suits.argmax(axis=1)].astype(np.float32)
        flush[:, subset] = np.where(
            one_suit, drawn / np.maximum(np.float32(13.0) - total.astype(np.float32),
                                         np.float32(1.0)), np.float32(0.0))
    return live, None if row == 0 else flush


@pytest.mark.parametrize(("variant", "rules_name"), [
    (Variant.PINEAPPLE, "standard"), (Variant.CLASSIC, "standard"),
    (Variant.LOWBALL_PINEAPPLE, "standard"), (Variant.PINEAPPLE, "progressive"),
])
def test_live_state_is_the_plain_formula_bit_for_bit(variant: Variant, rules_name: str) -> None:
    """The live fields (worked out with bit masks, popcounts and share tables) are the plain
    formula's float32 values, bit for bit, on boards of every fill with other cards seen:
    every row after every subset of every street."""
    checked = 0
    for batch, dealt, _, _ in streets_of_boards(variant, rules_name, 300, seed=21):
        street = StreetRows(dealt, batch.keys, batch.counts, batch.suits, batch.cards,
                            batch.seen)
        for row in range(3):
            live, flush = street.live_state(row)
            expected_live, expected_flush = reference_live_state(street, row)
            assert live.dtype == np.float32 and live.tobytes() == expected_live.tobytes()
            if row == 0:
                assert flush is None
            else:
                assert flush is not None and flush.dtype == np.float32
                assert flush.tobytes() == expected_flush.tobytes()
            checked += 1
    assert checked == 3 * len(variant.streets)
