"""Bots: small strategy objects that choose how to place a street, registered in :data:`BOTS`.

The dealer plays many boards at once, so a bot decides for a whole column of boards in one call:
it gets :class:`Options` (every way to place the street's cards, for every board) and returns
the chosen option per board (:meth:`Bot.choose`). Fantasyland hands are not a bot's business:
every bot sets them with the exact setter (:func:`~pipeline.solver.fantasyland.solve_fantasyland`).
Adding a bot is one class (or one :class:`Style`) and one line in :data:`BOTS`. A bot may also
change style part-way through a run (:class:`DriftingBot`, ``drifter``): the dealer asks it
which style plays each session.

The heuristic bots (``solid``, ``chaser``) score every option by the rows it leaves, using the
precomputed row outlooks (:mod:`pipeline.simulate.outlook`): each row's likely finished strength
(mean and variance on a common scale), expected royalty and, for the top, the chance of
Fantasyland. The chance that the board ends legal is estimated from normal approximations of
the rows, keeping the correlation that matters (a middle strong enough to beat the top is
harder for the bottom to beat); the middle and bottom count ``steer`` higher for every open
slot, because a player sends later cards where they help. An option is worth::

    legal × (royalties + strength_weight × strength) − (1 − legal) × foul_penalty
    + fantasyland_bonus × Fantasyland chance × legal given a qualifying top
    + middle_patience × open middle slots

(players build the bottom first and keep the middle open), and the styles differ only in those
weights (Classic, with no discards to choose from, has its own, steering less). In the opening the heuristic bots use the shapes players use (at most one unpaired
card on top, at most three unpaired cards in the middle). Finished rows have exact outlooks, so
the last street is judged exactly.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Protocol

import numpy as np

from pipeline.rules.game import Variant

if TYPE_CHECKING:
    from pipeline.simulate.dealer import StreetRows
    from pipeline.simulate.outlook import RowOutlooks

TOP, MIDDLE, BOTTOM = 0, 1, 2
ROW_NAMES = ("top", "middle", "bottom")
DISCARD = -1


@cache
def street_patterns(dealt: int, discards: int) -> np.ndarray:
    """Every way to send ``dealt`` cards to rows (0 top, 1 middle, 2 bottom) or the discard
    pile (-1) with exactly ``discards`` discarded: an (options, dealt) array, fixed order."""
    patterns = [
        choice for choice in itertools.product((DISCARD, TOP, MIDDLE, BOTTOM), repeat=dealt)
        if choice.count(DISCARD) == discards
    ]
    return np.asarray(patterns, dtype=np.int64).reshape(-1, dealt)


@cache
def pattern_subsets(dealt: int, discards: int) -> np.ndarray:
    """For each pattern of :func:`street_patterns` and each row, the bitmask of the dealt cards
    that go to that row: an (options, 3) array."""
    patterns = street_patterns(dealt, discards)
    weights = 1 << np.arange(dealt)
    return np.stack([((patterns == row) * weights).sum(axis=1) for row in range(3)], axis=1)


@dataclass(slots=True)
class Options:
    """Every option of one street for a column of boards (B boards × P patterns).

    For each option: whether it fits the rows' room (``valid``), the open slots it leaves per
    row, and the outlook of each row afterwards: mean and variance of the finished row's
    strength, expected royalty, the top's chance of Fantasyland, and in 2-7 Pineapple the
    middle's chance of qualifying (``middle_mean``/``middle_variance`` are unused there); and
    how live each row's draws are by the cards the player has seen (``*_live``: the share of
    the row's ranks' other cards still unseen; ``*_flush``: of a one-suited row's suit; see
    :meth:`pipeline.simulate.dealer.StreetRows.live_state`).
    All arrays are (B, P); slicing the boards gives views.
    """

    variant: Variant
    patterns: np.ndarray
    valid: np.ndarray
    open_top: np.ndarray
    open_middle: np.ndarray
    open_bottom: np.ndarray
    top_mean: np.ndarray
    top_variance: np.ndarray
    top_royalty: np.ndarray
    top_fantasyland: np.ndarray
    top_fantasyland_mean: np.ndarray
    top_fantasyland_variance: np.ndarray
    top_floor: np.ndarray
    middle_mean: np.ndarray
    middle_floor: np.ndarray
    middle_variance: np.ndarray
    middle_royalty: np.ndarray
    middle_qualify: np.ndarray
    bottom_mean: np.ndarray
    bottom_variance: np.ndarray
    bottom_royalty: np.ndarray
    top_live: np.ndarray
    middle_live: np.ndarray
    middle_flush: np.ndarray
    bottom_live: np.ndarray
    bottom_flush: np.ndarray

    def take(self, boards: slice) -> Options:
        """The options of a contiguous range of boards (views, no copies)."""
        return Options(
            self.variant, self.patterns,
            *(getattr(self, name)[boards] for name in _BOARD_FIELDS),
        )


_BOARD_FIELDS = (
    "valid", "open_top", "open_middle", "open_bottom", "top_mean", "top_variance",
    "top_royalty", "top_fantasyland", "top_fantasyland_mean", "top_fantasyland_variance",
    "top_floor",
    "middle_mean", "middle_floor", "middle_variance", "middle_royalty",
    "middle_qualify", "bottom_mean", "bottom_variance", "bottom_royalty",
    "top_live", "middle_live", "middle_flush", "bottom_live", "bottom_flush",
)


def uses_live_cards(bot: object, variant: Variant) -> bool:
    """Whether a bot reads the options' live-card fields in ``variant`` (a bot with
    ``live_cards_in(variant)`` says so; others never do): only then are they worked out from
    the cards seen (else every rank counts as live)."""
    per_variant = getattr(bot, "live_cards_in", None)
    return per_variant is not None and bool(per_variant(variant))


class Bot(Protocol):
    """A strategy: picks one valid option per board. ``uses_chance`` says whether it needs the
    random numbers passed to :meth:`choose` (they are drawn only for bots that do)."""

    name: str
    description: str
    uses_chance: bool

    def choose(self, options: Options, uniforms: np.ndarray) -> np.ndarray:
        """The chosen pattern index for each board. ``uniforms`` holds one random number in
        [0, 1) per board from the board's own session (zeros for bots without chance)."""
        ...


@dataclass(frozen=True, slots=True)
class Style:
    """The weights of a heuristic bot (see the module docstring)."""

    foul_penalty: float
    fantasyland_bonus: float
    strength_weight: float
    steer: float
    middle_patience: float = 0.0


def normal_cdf(values: np.ndarray) -> np.ndarray:
    """The standard normal CDF (Abramowitz & Stegun 7.1.26 for erf, error below 2e-7).

    Computed in place on two scratch arrays: the same operations in the same order as the
    formula (so the same bits) with fewer temporaries (1.3× faster on the bots' float32 arrays in
    a grading profile, up to 3× on larger float64 ones).
    """
    values = np.asarray(values)
    if values.ndim == 0:  # the in-place steps need arrays
        return normal_cdf(values.reshape(1))[0]
    scaled = np.abs(values)
    scaled *= 0.7071067811865476
    t = scaled * 0.3275911
    t += 1.0
    np.divide(1.0, t, out=t)
    polynomial = t * 1.061405429
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        polynomial += coefficient
        polynomial *= t
    np.multiply(scaled, scaled, out=scaled)
    np.negative(scaled, out=scaled)
    np.exp(scaled, out=scaled)
    polynomial *= scaled  # 1 - erf(|x|)
    np.subtract(1.0, polynomial, out=polynomial)
    np.copysign(polynomial, values, out=polynomial)
    polynomial *= 0.5
    polynomial += 0.5
    return polynomial


_INVERSE_ROOT_TWO_PI = 0.3989422804014327
_PAIR_SCALE = 13.0  # strength scale of the weakest pair


def ordered_parts(
    top_mean: np.ndarray,
    top_variance: np.ndarray,
    middle_mean: np.ndarray,
    middle_low: np.ndarray,
    middle_variance: np.ndarray,
    bottom_mean: np.ndarray,
    bottom_variance: np.ndarray,
    cdf: Callable[[np.ndarray], np.ndarray] = normal_cdf,
) -> tuple[np.ndarray, np.ndarray]:
    """The two factors of :func:`_ordered_chance`: P(middle > top) and P(bottom > middle |
    middle > top) for independent normal rows, with the middle's conditional mean and variance
    from the truncated normal; ``cdf``: the normal CDF to use (the learned policy's features use
    a faster one). The middle is compared with the top at ``middle_mean`` (what the player can
    make of it) and with the bottom at ``middle_low`` (what the player can keep it down to)."""
    # in place where a step makes a new array of the result's type: the same operations in the
    # same order as the formula above (so the same bits), with fewer temporaries
    spread = top_variance + middle_variance
    spread += 1e-6
    np.sqrt(spread, out=spread)
    alpha = top_mean - middle_mean
    alpha /= spread
    above = cdf(alpha)
    np.subtract(1.0, above, out=above)
    mills = alpha * -0.5
    mills *= alpha
    np.exp(mills, out=mills)
    mills *= _INVERSE_ROOT_TWO_PI  # the density
    mills /= np.maximum(above, 1e-12)
    share = spread * spread
    np.divide(middle_variance, share, out=share)
    conditional_mean = share * spread
    conditional_mean *= mills
    conditional_mean += middle_low
    conditional_variance = share * mills
    conditional_variance *= mills - alpha
    np.subtract(1.0, conditional_variance, out=conditional_variance)
    np.maximum(conditional_variance, 0.0, out=conditional_variance)
    conditional_variance *= middle_variance
    below_spread = conditional_variance  # the same array, from here on the bottom's spread
    below_spread += bottom_variance
    below_spread += 1e-6
    np.sqrt(below_spread, out=below_spread)
    gap = bottom_mean - conditional_mean
    gap /= below_spread
    return above, cdf(gap)


def _ordered_chance(*rows: np.ndarray) -> np.ndarray:
    """Chance that top < middle < bottom for independent normal rows, keeping the correlation:
    P(middle > top) × P(bottom > middle | middle > top); ``rows`` as :func:`ordered_parts`
    takes them (top mean and variance, middle mean, low and variance, bottom mean and
    variance)."""
    above, below = ordered_parts(*rows)
    above *= below
    return above


def sensible_options(options: Options) -> np.ndarray:
    """The options a bot considers: valid ones; in the opening (five cards) only the shapes
    players use: at most one unpaired card on top and at most three unpaired cards in the
    middle (a pair may go anywhere)."""
    valid = options.valid
    if options.patterns.shape[1] != 5:
        return valid
    sensible = valid & ((options.open_top >= 2) | (options.top_floor >= _PAIR_SCALE))
    sensible &= (options.open_middle >= 2) | (options.middle_floor >= _PAIR_SCALE)
    return np.where(sensible.any(axis=1, keepdims=True), sensible, valid)


def considered_options(street: StreetRows, patterns: np.ndarray, subsets: np.ndarray,
                       outlooks: RowOutlooks) -> np.ndarray:
    """:func:`sensible_options` (boards × patterns) from the rows' states alone, without
    building the options' outlooks: the options the heuristic and learned bots consider."""
    valid = street.valid(subsets)
    if patterns.shape[1] != 5:
        return valid
    sensible = valid
    for row, floors in ((TOP, outlooks.top_floor), (MIDDLE, outlooks.five_floor)):
        state = street.row_state(row)
        shaped = (state.open >= 2) | (floors[state.state] >= _PAIR_SCALE)  # boards × subsets
        sensible = sensible & shaped[:, subsets[:, row]]
    return np.where(sensible.any(axis=1, keepdims=True), sensible, valid)


class HeuristicBot:
    """Scores every option with the row outlooks and takes the best (see the module docstring)."""

    uses_chance = False

    def __init__(
        self, name: str, description: str, style: Style,
        variant_styles: dict[Variant, Style] | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.style = style
        self.variant_styles = dict(variant_styles or {})

    def style_for(self, variant: Variant) -> Style:
        """The weights used in a variant (a variant may have its own)."""
        return self.variant_styles.get(variant, self.style)

    def scores(self, options: Options) -> np.ndarray:
        """The worth of every option (B, P); options the bot does not consider get -inf."""
        return np.where(self.allowed(options), self.worth(options), -np.inf)

    def worth(self, options: Options) -> np.ndarray:
        """The worth of each option by the formula of the module docstring, option by option
        (any shape of option arrays: (B, P), or flat as :meth:`StreetRows.options_at` gives)."""
        style = self.style_for(options.variant)
        royalty = options.top_royalty + options.middle_royalty + options.bottom_royalty
        bottom_mean = options.bottom_mean + style.steer * options.open_bottom
        if options.variant is Variant.LOWBALL_PINEAPPLE:
            top_under_bottom = 1.0 - normal_cdf(
                (options.top_mean - bottom_mean)
                / np.sqrt(options.top_variance + options.bottom_variance + 1e-6)
            )
            qualifying_under_bottom = 1.0 - normal_cdf(
                (options.top_fantasyland_mean - bottom_mean)
                / np.sqrt(options.top_fantasyland_variance + options.bottom_variance + 1e-6)
            )
            legal = options.middle_qualify * top_under_bottom
            legal_with_fantasyland = options.middle_qualify * qualifying_under_bottom
            strength = options.top_mean + options.bottom_mean
        else:
            middle_mean = options.middle_mean + style.steer * options.open_middle
            legal = _ordered_chance(
                options.top_mean, options.top_variance, middle_mean, options.middle_mean,
                options.middle_variance, bottom_mean, options.bottom_variance,
            )
            legal_with_fantasyland = _ordered_chance(
                options.top_fantasyland_mean, options.top_fantasyland_variance, middle_mean,
                options.middle_mean, options.middle_variance, bottom_mean, options.bottom_variance,
            )
            strength = options.top_mean + options.middle_mean + options.bottom_mean
        worth = legal * (royalty + style.strength_weight * strength)
        worth -= (1.0 - legal) * style.foul_penalty
        worth += style.fantasyland_bonus * options.top_fantasyland * legal_with_fantasyland
        worth += style.middle_patience * options.open_middle
        return worth

    def allowed(self, options: Options) -> np.ndarray:
        """The options this bot considers: :func:`sensible_options`."""
        return sensible_options(options)

    def choose(self, options: Options, uniforms: np.ndarray) -> np.ndarray:
        """The best-scoring valid option per board (the first one on ties)."""
        return np.argmax(self.scores(options), axis=1)

    def considered(self, street: StreetRows, patterns: np.ndarray, subsets: np.ndarray,
                   outlooks: RowOutlooks) -> np.ndarray:
        """:meth:`allowed` (boards × patterns) from the rows' states alone, without building
        the options' outlooks (:func:`considered_options`)."""
        return considered_options(street, patterns, subsets, outlooks)

    def choose_street(self, street: StreetRows, variant: Variant, patterns: np.ndarray,
                      subsets: np.ndarray, outlooks: RowOutlooks) -> np.ndarray:
        """The choice of :meth:`choose` on ``street.options(...)``, board by board, worked out
        on the options the bot considers only (:meth:`StreetRows.options_at`): the same worth
        of each, bit for bit, so the same picks (tests/simulate/test_bots.py checks it)."""
        considered = self.considered(street, patterns, subsets, outlooks)
        flat = np.flatnonzero(considered)
        worth = self.worth(street.options_at(variant, patterns, subsets, outlooks, flat))
        scores = np.full(considered.size, -np.inf, dtype=worth.dtype)
        scores[flat] = worth
        return np.argmax(scores.reshape(considered.shape), axis=1)


class RandomBot:
    """Any legal placement: a uniformly random valid option (a baseline)."""

    name = "random"
    description = "places the cards any legal way, at random (a baseline)"
    uses_chance = True

    def choose(self, options: Options, uniforms: np.ndarray) -> np.ndarray:
        """A random valid option per board, drawn with the board's uniform number."""
        valid = options.valid
        counts = valid.sum(axis=1)
        wanted = np.minimum((uniforms * counts).astype(np.int64), counts - 1)
        running = np.cumsum(valid, axis=1) - 1
        return np.argmax(valid & (running == wanted[:, None]), axis=1)


SOLID = HeuristicBot(
    "solid",
    "avoids fouls first, takes royalties that are safe, goes for Fantasyland when it is cheap",
    Style(foul_penalty=8.0, fantasyland_bonus=150.0, strength_weight=0.04, steer=0.4,
          middle_patience=0.3),
    {Variant.CLASSIC: Style(foul_penalty=10.0, fantasyland_bonus=120.0, strength_weight=0.04,
                            steer=0.0, middle_patience=0.3)},
)
CHASER = HeuristicBot(
    "chaser",
    "gambles for Fantasyland: puts queens or better on top early and lives with more fouls",
    Style(foul_penalty=6.0, fantasyland_bonus=300.0, strength_weight=0.03, steer=0.6,
          middle_patience=0.3),
    {Variant.CLASSIC: Style(foul_penalty=7.0, fantasyland_bonus=200.0, strength_weight=0.03,
                            steer=0.0, middle_patience=0.3)},
)


class DriftingBot:
    """Plays one bot's style for the first part of a run and another's after: a player whose
    style really changes, so that a before/after comparison has something true to find.

    The dealer asks :meth:`for_progress` which bot plays a session (``progress``: the session's
    round over the run's rounds, :attr:`~pipeline.simulate.sessions.SessionPlan.progress`);
    called on its own (as a rollout policy), :meth:`choose` plays the first style.
    """

    uses_chance = False

    def __init__(self, name: str, description: str, before: HeuristicBot, after: HeuristicBot,
                 switch: float = 0.5) -> None:
        self.name = name
        self.description = description
        self.before = before
        self.after = after
        self.switch = switch

    def for_progress(self, progress: float) -> tuple[str, HeuristicBot]:
        """The key and bot that play a session ``progress`` of the way into the run."""
        if progress < self.switch:
            return f"{self.name}:before", self.before
        return f"{self.name}:after", self.after

    def choose(self, options: Options, uniforms: np.ndarray) -> np.ndarray:
        """The first style's choice (the dealer resolves the style per session instead)."""
        return self.before.choose(options, uniforms)


CARELESS = HeuristicBot(
    "careless",
    "cares little about fouling: gambles for Fantasyland and royalties",
    Style(foul_penalty=4.5, fantasyland_bonus=300.0, strength_weight=0.03, steer=0.7,
          middle_patience=0.3),
    {Variant.CLASSIC: Style(foul_penalty=5.0, fantasyland_bonus=200.0, strength_weight=0.03,
                            steer=0.2, middle_patience=0.3)},
)
DRIFTER = DriftingBot(
    "drifter",
    "plays like solid for the first half of the run's rounds, then cares little about fouling "
    "(its foul rate rises halfway: a real change to find)",
    SOLID, CARELESS,
)
EXPERT = HeuristicBot(
    "expert",
    "solid's judgement with weights tuned by simulation: fears a foul less, keeps the middle "
    "open less (the decision grader's rollout policy)",
    Style(foul_penalty=1.5, fantasyland_bonus=150.0, strength_weight=0.04, steer=0.4,
          middle_patience=0.1125),
    {Variant.CLASSIC: Style(foul_penalty=2.5, fantasyland_bonus=30.0, strength_weight=0.04,
                            steer=0.0, middle_patience=0.15)},
)
"""Weights tuned by coordinate search on simulated 3-player tables against solid and chaser
(tests/benchmarks/tune_policy.py; head-to-head figures in docs/grading.md, measured by
tests/benchmarks/bench_policy.py). Not one of :data:`DEFAULT_BOTS`: simulated data keeps its
figures; ``--bots expert`` plays it."""

from pipeline.simulate.learned import learned_bot  # noqa: E402  (learned.py needs nothing above)

BOTS: dict[str, Bot] = {
    "solid": SOLID,
    "chaser": CHASER,
    "random": RandomBot(),
    "drifter": DRIFTER,
    "expert": EXPERT,
    "learned": learned_bot(),
}
"""Every bot by name. Adding a bot means adding it here."""

DEFAULT_BOTS: tuple[str, ...] = ("solid", "chaser")
"""The bots a simulation uses when none are named."""
