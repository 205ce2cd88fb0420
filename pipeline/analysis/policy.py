"""The rollout policy: the simulator's bots, playing the rest of a hand on columns of boards.

The grader's rollouts finish a hand many thousands of times per decision. They do it the way the
simulator's dealer plays (:mod:`pipeline.simulate.dealer`): a :class:`BoardBatch` holds N partial
boards as arrays, every option of a street is built for all of them at once by the dealer's own
option builder, and the bot picks one per board (:meth:`pipeline.simulate.bots.Bot.choose`). So a
rollout plays exactly as a simulated player with that bot would; tests/analysis/test_policy.py
replays simulated hands through :class:`ColumnPolicy` and gets the recorded placements back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from pipeline.rules.game import ROW_LENGTHS, Variant
from pipeline.rules.ruleset import RuleSet
from pipeline.simulate.bots import BOTS, pattern_subsets, street_patterns, uses_live_cards
from pipeline.simulate.dealer import StreetRows, order_within_rows
from pipeline.simulate.outlook import row_outlooks

ROW_START = np.asarray((0, 3, 8), dtype=np.int64)
OPTIONS_PER_CHUNK = 65_536
"""Options (boards × a street's placements) a bot scores in one go: an opening's 243
placements for 270 boards, a later Pineapple street's 27 for 2,427."""


class BoardBatch:
    """N partial boards as arrays: cards by slot (top 0-2, middle 3-7, bottom 8-12, -1 empty),
    per-row card counts, rank-key sums and suit state (-1 empty, 0-3 one suit, 4 mixed) — the
    state the dealer keeps for its boards — and ``seen`` (N × 52, bool): the other cards the
    player has seen (the opponents' boards visible, their own discards; a street's discard
    is added when it is played), which the policy's live-card features count as dead."""

    __slots__ = ("cards", "counts", "keys", "suits", "seen")

    def __init__(self, cards: np.ndarray, counts: np.ndarray, keys: np.ndarray, suits: np.ndarray,
                 seen: np.ndarray | None = None):
        self.cards = cards
        self.counts = counts
        self.keys = keys
        self.suits = suits
        self.seen = np.zeros((len(cards), 52), dtype=bool) if seen is None else seen

    def __len__(self) -> int:
        return len(self.cards)

    @classmethod
    def from_rows(cls, rows_list: Sequence[Sequence[Sequence[int]]],
                  seen: Sequence[Iterable[int]] = ()) -> BoardBatch:
        """Boards from (top, middle, bottom) card lists, with the cards each player has seen
        besides (one collection per board; none seen when not given)."""
        from pipeline.solver.tables import RANK_KEY_OF_CARD

        count = len(rows_list)
        cards = np.full((count, 13), -1, dtype=np.int64)
        counts = np.zeros((count, 3), dtype=np.int64)
        keys = np.zeros((count, 3), dtype=np.int64)
        suits = np.full((count, 3), -1, dtype=np.int64)
        for index, rows in enumerate(rows_list):
            for row, row_cards in enumerate(rows):
                if len(row_cards) > ROW_LENGTHS[row]:
                    raise ValueError(f"row {row} holds {len(row_cards)} cards")
                suit_set = {card & 3 for card in row_cards}
                for slot, card in enumerate(row_cards):
                    cards[index, ROW_START[row] + slot] = card
                    keys[index, row] += RANK_KEY_OF_CARD[card]
                counts[index, row] = len(row_cards)
                suits[index, row] = -1 if not suit_set else (suit_set.pop() if len(suit_set) == 1 else 4)
        return cls(cards, counts, keys, suits, seen_cards(seen) if seen else None)

    def repeat(self, times: int) -> BoardBatch:
        """Each board ``times`` times in a row (board-major)."""
        return BoardBatch(*(np.repeat(array, times, axis=0) for array in
                            (self.cards, self.counts, self.keys, self.suits, self.seen)))

    def concat(self, other: BoardBatch) -> BoardBatch:
        """These boards followed by ``other``'s."""
        return BoardBatch(*(np.concatenate([mine, theirs]) for mine, theirs in zip(
            (self.cards, self.counts, self.keys, self.suits, self.seen),
            (other.cards, other.counts, other.keys, other.suits, other.seen), strict=True)))

    def rows(self, index: int) -> tuple[list[int], list[int], list[int]]:
        """One board's rows as card lists."""
        line = self.cards[index].tolist()
        return (
            [card for card in line[0:3] if card >= 0],
            [card for card in line[3:8] if card >= 0],
            [card for card in line[8:13] if card >= 0],
        )


class ColumnPolicy:
    """A simulator bot deciding streets for a whole :class:`BoardBatch` at once."""

    def __init__(self, bot_name: str, variant: Variant, rules: RuleSet) -> None:
        if bot_name not in BOTS:
            raise ValueError(f"unknown rollout policy {bot_name!r} (bots: {', '.join(BOTS)})")
        self.name = bot_name
        self.bot = BOTS[bot_name]
        self.live = uses_live_cards(self.bot, variant)
        self.variant = variant
        self.outlooks = row_outlooks(variant, rules)

    def scores(self, boards: BoardBatch, dealt: np.ndarray, discards: int) -> np.ndarray | None:
        """The bot's own score of every placement of the street (boards × the patterns of
        :func:`pipeline.simulate.bots.street_patterns`; -inf where it would never play it), or
        None for a bot that does not score its options."""
        score = getattr(self.bot, "scores", None)
        if score is None:
            return None
        dealt = np.ascontiguousarray(dealt, dtype=np.int64)
        size = dealt.shape[1]
        patterns = street_patterns(size, discards)
        street = StreetRows(dealt, boards.keys, boards.counts, boards.suits,
                            boards.cards if self.live else None, boards.seen)
        return score(street.options(self.variant, patterns, pattern_subsets(size, discards),
                                    self.outlooks))

    def prepare(self) -> None:
        """Play the variant's opening on one empty board (thrown away): a bot whose play is
        compiled (:meth:`pipeline.simulate.learned.LearnedBot.play_boards`) is then compiled
        or loaded from numba's cache in this process, and worker processes forked after it
        inherit it instead of each loading it again."""
        opening = self.variant.streets[0]
        boards = BoardBatch.from_rows([((), (), ())])
        self.play_street(boards, np.arange(opening.dealt)[None, :], opening.discarded)

    def play_street(
        self, boards: BoardBatch, dealt: np.ndarray, discards: int, uniforms: np.ndarray | None = None
    ) -> np.ndarray:
        """Place one street on every board (in place) as the bot would; returns the chosen
        pattern index per board (into :func:`pipeline.simulate.bots.street_patterns`).

        ``dealt`` is (N, cards); ``uniforms`` one number in [0, 1) per board for bots that use
        chance (zeros when not given).
        """
        dealt = np.ascontiguousarray(dealt, dtype=np.int64)
        play_boards = getattr(self.bot, "play_boards", None)
        if play_boards is not None:  # the bot plays the whole street in one compiled pass
            return play_boards(boards, dealt, discards, self.variant, self.outlooks, self.live)
        count, size = dealt.shape
        patterns = street_patterns(size, discards)
        subsets = pattern_subsets(size, discards)
        if uniforms is None:
            uniforms = np.zeros(count)
        # boards in chunks of about OPTIONS_PER_CHUNK options: the option arrays stay in the
        # processor's cache (an opening's 243 options × 8,192 boards would not)
        chunk = max(1, OPTIONS_PER_CHUNK // len(patterns))
        chosen = np.empty(count, dtype=np.int64)
        choose_street = getattr(self.bot, "choose_street", None)
        after = [np.empty_like(boards.keys), np.empty_like(boards.counts),
                 np.empty_like(boards.suits)]
        for start in range(0, count, chunk):
            part = slice(start, min(count, start + chunk))
            street = StreetRows(dealt[part], boards.keys[part], boards.counts[part],
                                boards.suits[part], boards.cards[part] if self.live else None,
                                boards.seen[part])
            if choose_street is not None:  # the bot scores only the options it considers
                chosen[part] = choose_street(street, self.variant, patterns, subsets,
                                             self.outlooks)
            else:
                options = street.options(self.variant, patterns, subsets, self.outlooks)
                chosen[part] = self.bot.choose(options, uniforms[part])
            for target, values in zip(after, street.after(subsets[chosen[part]]), strict=True):
                target[part] = values
        before = boards.counts
        boards.keys, boards.counts, boards.suits = after
        within = order_within_rows(size, discards)[chosen]
        pattern_rows = patterns[chosen]
        everyone = np.arange(count)
        for column in range(size):
            row = pattern_rows[:, column]
            placed = row >= 0
            safe_row = np.where(placed, row, 0)
            slot = ROW_START[safe_row] + before[everyone, safe_row] + within[:, column]
            boards.cards[everyone[placed], slot[placed]] = dealt[placed, column]
            boards.seen[everyone[~placed], dealt[~placed, column]] = True  # the discard
        return chosen


def seen_cards(collections: Sequence[Iterable[int] | Sequence[Sequence[int]] | None]) -> np.ndarray:
    """A (len(collections), 52) bool array: per board, the cards of one collection (card
    numbers, or rows of card lists such as a seat's visible board; None: nothing)."""
    seen = np.zeros((len(collections), 52), dtype=bool)
    for index, collection in enumerate(collections):
        if collection is None:
            continue
        for item in collection:
            if isinstance(item, (int, np.integer)):
                seen[index, int(item)] = True
            else:
                seen[index, list(item)] = True
    return seen
