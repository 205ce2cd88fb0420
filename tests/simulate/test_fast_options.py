"""The bots' fast path picks exactly what the plain path picks.

:meth:`HeuristicBot.choose_street` scores only the options a bot considers, gathered from
packed outlook tables (:meth:`StreetRows.options_at`), where :meth:`HeuristicBot.choose` scores
every option of :meth:`StreetRows.options`. On boards of every fill (played by the random bot
from fixed seeds, every street of every variant, two rule sets), the tests check, bit for bit:
each gathered field equals the plain option's field, the options considered are the plain
``allowed`` ones, and every heuristic bot picks the same pattern on every board.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.analysis.policy import BoardBatch, ColumnPolicy
from pipeline.rules.game import ROW_LENGTHS, Variant
from pipeline.rules.ruleset import preset
from pipeline.simulate.bots import (
    BOTS,
    HeuristicBot,
    considered_options,
    pattern_subsets,
    street_patterns,
)
from pipeline.simulate.dealer import StreetRows
from pipeline.simulate.learned import (
    FEATURES,
    STAGES,
    LearnedBot,
    PolicyWeights,
    family,
    option_stages,
)
from pipeline.simulate.outlook import row_outlooks, state_space
from pipeline.solver.tables import KEY_LIMIT, RANK_KEY_OF_CARD

HEURISTIC = sorted(name for name, bot in BOTS.items() if isinstance(bot, HeuristicBot))
OPTION_FIELDS = (
    "open_top", "open_middle", "open_bottom", "top_mean", "top_variance", "top_royalty",
    "top_fantasyland", "top_fantasyland_mean", "top_fantasyland_variance", "top_floor",
    "middle_mean", "middle_floor", "middle_variance", "middle_royalty", "middle_qualify",
    "bottom_mean", "bottom_variance", "bottom_royalty",
    "top_live", "middle_live", "middle_flush", "bottom_live", "bottom_flush",
)


def streets_of_boards(variant: Variant, rules_name: str, boards: int, seed: int):
    """For every street: the boards before it (filled by the random bot, each with some other
    cards seen: the last 8 to 24 of its deck, as opponents' boards) and its dealt cards."""
    rules = preset(rules_name)
    generator = np.random.default_rng(seed)
    decks = np.argsort(generator.random((boards, 52)), axis=1)
    batch = BoardBatch.from_rows([((), (), ())]).repeat(boards)
    others = generator.integers(8, 25, size=boards)
    batch.seen = np.zeros((boards, 52), dtype=bool)
    for board, deck in enumerate(decks):
        batch.seen[board, deck[52 - others[board]:]] = True
    filler = ColumnPolicy("random", variant, rules)
    position = 0
    for shape in variant.streets:
        dealt = decks[:, position:position + shape.dealt]
        position += shape.dealt
        yield batch, dealt, shape.discarded, rules
        filler.play_street(batch, dealt, shape.discarded, generator.random(boards))


def plain_streets(variant: Variant, rules_name: str, seed: int, boards: int = 400):  # noqa: ANN201
    """For every street of :func:`streets_of_boards`: the boards, the dealt cards, the street's
    patterns, subsets and outlooks, its :class:`StreetRows` and its plain options."""
    for batch, dealt, discards, rules in streets_of_boards(variant, rules_name, boards, seed):
        size = dealt.shape[1]
        patterns, subsets = street_patterns(size, discards), pattern_subsets(size, discards)
        outlooks = row_outlooks(variant, rules)
        street = StreetRows(dealt, batch.keys, batch.counts, batch.suits, batch.cards,
                            batch.seen)
        yield (batch, dealt, patterns, subsets, outlooks, street,
               street.options(variant, patterns, subsets, outlooks))


@pytest.mark.parametrize(("variant", "rules_name"), [
    (Variant.PINEAPPLE, "standard"), (Variant.CLASSIC, "standard"),
    (Variant.LOWBALL_PINEAPPLE, "standard"), (Variant.PINEAPPLE, "progressive"),
])
def test_the_fast_path_gives_the_plain_fields_and_picks(variant: Variant, rules_name: str) -> None:
    checked = 0
    for batch, dealt, patterns, subsets, outlooks, street, plain in plain_streets(
            variant, rules_name, seed=11):
        assert (street.valid(subsets) == plain.valid).all()
        flat = np.flatnonzero(plain.valid)
        assert len(flat) > 0
        gathered = street.options_at(variant, patterns, subsets, outlooks, flat)
        for name in OPTION_FIELDS:
            mine, theirs = getattr(gathered, name), getattr(plain, name).ravel()[flat]
            assert mine.dtype == theirs.dtype, name
            assert mine.tobytes() == theirs.tobytes(), name  # the same bits
        for name in HEURISTIC:
            bot = BOTS[name]
            assert (bot.considered(street, patterns, subsets, outlooks)
                    == bot.allowed(plain)).all(), name
            expected = bot.choose(plain, np.zeros(len(dealt)))
            fast = StreetRows(dealt, batch.keys, batch.counts, batch.suits, batch.cards,
                              batch.seen)  # nothing kept
            assert (bot.choose_street(fast, variant, patterns, subsets, outlooks)
                    == expected).all(), name
            worth = bot.worth(gathered)
            assert worth.tobytes() == bot.worth(plain).ravel()[flat].tobytes(), name
        checked += 1
    assert checked == len(variant.streets)


@pytest.mark.parametrize(("variant", "rules_name"), [
    (Variant.PINEAPPLE, "standard"), (Variant.CLASSIC, "standard"),
    (Variant.LOWBALL_PINEAPPLE, "standard"), (Variant.PINEAPPLE, "progressive"),
])
def test_the_learned_worth_of_gathered_options_is_the_plain_worth(variant: Variant,
                                                                  rules_name: str) -> None:
    """The learned bot's options considered are the plain path's, and each one's worth,
    gathered alone (:meth:`StreetRows.options_at`), is the plain path's bit for bit (weights
    drawn at random: every feature counts, each stage its own)."""
    generator = np.random.default_rng(3)
    bot = LearnedBot("drawn", "random weights", PolicyWeights(
        {item: generator.normal(size=(STAGES, len(FEATURES[family(item)]))) for item in Variant},
        {item: 0.4 for item in Variant}))
    checked = 0
    for _batch, _dealt, patterns, subsets, outlooks, street, plain in plain_streets(
            variant, rules_name, seed=12):
        plain_scores = bot.scores(plain)
        considered = np.isfinite(plain_scores)
        assert (considered_options(street, patterns, subsets, outlooks) == considered).all()
        flat = np.flatnonzero(considered)
        gathered = street.options_at(variant, patterns, subsets, outlooks, flat)
        assert (bot.worth(gathered, option_stages(gathered)).tobytes()
                == plain_scores.ravel()[flat].tobytes())  # the same bits
        checked += 1
    assert checked == len(variant.streets)


def test_the_fast_path_is_what_the_policy_plays() -> None:
    """ColumnPolicy takes the fast path for a heuristic bot: a whole hand of streets gives the
    boards the plain choice gives."""
    rules = preset("standard")
    for name in ("expert", "solid", "learned"):
        policy = ColumnPolicy(name, Variant.PINEAPPLE, rules)
        generator = np.random.default_rng(5)
        decks = np.argsort(generator.random((300, 52)), axis=1)
        fast = BoardBatch.from_rows([((), (), ())]).repeat(len(decks))
        plain = BoardBatch.from_rows([((), (), ())]).repeat(len(decks))
        position = 0
        for shape in Variant.PINEAPPLE.streets:
            dealt = decks[:, position:position + shape.dealt]
            position += shape.dealt
            chosen = policy.play_street(fast, dealt, shape.discarded)
            size = shape.dealt
            street = StreetRows(dealt, plain.keys, plain.counts, plain.suits, plain.cards,
                                plain.seen)
            options = street.options(Variant.PINEAPPLE, street_patterns(size, shape.discarded),
                                     pattern_subsets(size, shape.discarded), policy.outlooks)
            expected = policy.bot.choose(options, np.zeros(len(dealt)))
            assert (chosen == expected).all()
            # the plain boards follow the plain choice
            plain_policy = ColumnPolicy("random", Variant.PINEAPPLE, rules)
            plain_policy.bot = _Fixed(expected)
            plain_policy.play_street(plain, dealt, shape.discarded)
        assert (fast.cards == plain.cards).all()
        assert (fast.keys == plain.keys).all() and (fast.suits == plain.suits).all()


class _Fixed:
    """A bot that plays given pattern indexes (to move the plain boards along)."""

    uses_chance = False

    def __init__(self, chosen: np.ndarray) -> None:
        self.chosen = chosen
        self.given = 0

    def choose(self, options: object, uniforms: np.ndarray) -> np.ndarray:
        """The next given choices (the policy asks chunk by chunk)."""
        self.given += len(uniforms)
        return self.chosen[self.given - len(uniforms):self.given]


def _plain_rows(street: StreetRows, row: int, columns: np.ndarray | None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A row's rank-key sum, card count and suit state (-1 empty, 0-3 one suit, 4 mixed) after
    each subset of the street's cards (or after the given subset per board), worked out
    plainly from the cards' keys and suits."""
    dealt = street.dealt
    membership = (np.arange(1 << dealt.shape[1])[:, None] >> np.arange(dealt.shape[1])) & 1
    # boards × 1 × dealt for the given subsets, 1 × subsets × dealt for every subset
    membership = membership[None, :, :] if columns is None else membership[columns][:, None, :]
    keys = (np.asarray(RANK_KEY_OF_CARD)[dealt][:, None, :] * membership).sum(axis=2)
    added = membership.sum(axis=2)
    suit_sets = [{int(card) & 3 for card, taken in zip(cards, chosen, strict=True) if taken}
                 for cards, per_board in zip(dealt, np.broadcast_to(
                     membership, (len(dealt), membership.shape[1], dealt.shape[1])), strict=True)
                 for chosen in per_board]
    added_suit = np.asarray([-1 if not suits else suits.pop() if len(suits) == 1 else 4
                             for suits in suit_sets]).reshape(keys.shape)
    current = street.suits[:, row, None]
    suit = np.where(added == 0, current,
                    np.where((current == -1) | (current == added_suit), added_suit, 4))
    shape = keys.shape if columns is None else (len(dealt),)
    return ((street.keys[:, row, None] + keys).reshape(shape),
            (street.counts[:, row, None] + added).reshape(shape), suit.reshape(shape))


@pytest.mark.parametrize(("variant", "rules_name"), [
    (Variant.PINEAPPLE, "standard"), (Variant.CLASSIC, "standard"),
    (Variant.LOWBALL_PINEAPPLE, "standard"), (Variant.PINEAPPLE, "progressive"),
])
def test_row_states_are_the_plain_lookup(variant: Variant, rules_name: str) -> None:
    """Every row's state after every subset (open slots, fits, state id, suited, packed entry)
    and the rows after a chosen subset are what the plain formulas give (keys and counts
    summed card by card, the suit state from the cards' suits, the id looked up in the state
    space), on boards of every fill."""
    space = state_space()
    generator = np.random.default_rng(8)
    for batch, dealt, _, _ in streets_of_boards(variant, rules_name, 200, seed=13):
        street = StreetRows(dealt, batch.keys, batch.counts, batch.suits, batch.cards,
                            batch.seen)
        chosen = generator.integers(0, 1 << dealt.shape[1], size=len(dealt))
        after = street.after(np.stack([chosen] * 3, axis=1))
        for row, length in enumerate(ROW_LENGTHS):
            key, count, suit = _plain_rows(street, row, None)
            state = street.row_state(row)
            fits = count <= length
            identity = np.where(fits, space.index[np.where(fits, key + count * KEY_LIMIT, 0)], 0)
            assert (identity >= 0).all()
            assert (state.fits == fits).all() and (state.state == identity).all()
            assert state.open.dtype == np.float32 and (state.open == length - count).all()
            if row == 0:
                assert state.suited is None and (state.entry == identity).all()
            else:
                suited = (suit >= 0) & (suit <= 3)
                assert state.suited is not None and (state.suited == suited).all()
                assert (state.entry == 2 * identity + suited).all()
            for part, expected in enumerate(_plain_rows(street, row, chosen)):
                assert (after[part][:, row] == expected).all()


class _PlainOnly:
    """A learned bot without its compiled street player: the policy then plays it the plain
    way, every option built by the dealer's :class:`StreetRows` and scored by
    :meth:`LearnedBot.choose`."""

    uses_chance = False

    def __init__(self, bot: LearnedBot) -> None:
        self.choose = bot.choose


@pytest.mark.parametrize(("variant", "rules_name"), [
    (Variant.PINEAPPLE, "standard"), (Variant.CLASSIC, "standard"),
    (Variant.LOWBALL_PINEAPPLE, "standard"), (Variant.PINEAPPLE, "progressive"),
])
@pytest.mark.parametrize("live", [True, False])
def test_the_compiled_street_player_plays_what_the_rows_give(variant: Variant, rules_name: str,
                                                             live: bool) -> None:
    """:meth:`LearnedBot.play_boards` (rows, live fields, pick, rows after, cards placed and
    discards seen, in one compiled pass) leaves every board exactly as the policy's plain path
    leaves it (every option built by :class:`StreetRows`, scored by :meth:`LearnedBot.choose`),
    on every street, with each player's other seen cards, with and without the live-card
    fields (weights drawn at random: every feature counts)."""
    generator = np.random.default_rng(21)
    bot = LearnedBot("drawn", "random weights", PolicyWeights(
        {item: generator.normal(size=(STAGES, len(FEATURES[family(item)]))) for item in Variant},
        {item: 0.4 for item in Variant}))
    rules = preset(rules_name)
    compiled = ColumnPolicy("learned", variant, rules)
    compiled.bot, compiled.live = bot, live
    plain_way = ColumnPolicy("learned", variant, rules)
    plain_way.bot, plain_way.live = _PlainOnly(bot), live
    checked = 0
    for batch, dealt, discards, _ in streets_of_boards(variant, rules_name, 300, seed=13):
        mine = BoardBatch(batch.cards.copy(), batch.counts.copy(), batch.keys.copy(),
                          batch.suits.copy(), batch.seen.copy())
        theirs = BoardBatch(batch.cards.copy(), batch.counts.copy(), batch.keys.copy(),
                            batch.suits.copy(), batch.seen.copy())
        picked = compiled.play_street(mine, dealt, discards)
        expected = plain_way.play_street(theirs, dealt, discards)
        assert (picked == expected).all()
        for name in ("cards", "counts", "keys", "suits", "seen"):
            assert (getattr(mine, name) == getattr(theirs, name)).all(), name
        checked += 1
    assert checked == len(variant.streets)
