"""The learned rollout policy: a linear scorer of the bots' option features, trained by expert
iteration on the decision grader's own one-step lookahead.

A bot (:class:`LearnedBot`, registered as ``learned`` in :data:`pipeline.simulate.bots.BOTS`)
decides a street for a column of boards as every bot does: it gets the :class:`Options` of the
street (each option's rows' outlooks: strength mean and variance, expected royalty, the top's
Fantasyland chance, open slots) and takes the best-scoring valid option per board. Its score is
a weighted sum of a few *features* of each option (:data:`FEATURES`: the chance that the board
ends legal, estimated as the heuristic bots estimate it, the royalties and rows' strengths
counted when legal, the Fantasyland chance, the open slots, how live each row's draws are by
the cards the player has seen; and products of these), with one weight vector per variant
and per *stage* (the slots still open once the street is placed: 8, 6, 4, 2, 0 in Pineapple,
8 to 0 in Classic). Everything is numpy over the whole column at once, element by element in a
fixed order, so a board gets the same score (and the same choice: the first of equal scores)
whether it is decided alone or beside thousands of others; the bot uses no chance, so the
grader can enumerate exact endgames under it.

The weights ship as package data (``learned_policy.json`` beside this module, with the recipe
that made them and a hash of the weights); :mod:`pipeline.analysis.training` writes that file
(docs/grading.md, "The rollout policy"). In the opening, like the heuristic bots, the policy
only considers the shapes players use (at most one unpaired card on top and at most three in
the middle).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.rules.game import Variant

if TYPE_CHECKING:
    from pipeline.simulate.bots import Options
    from pipeline.simulate.dealer import StreetRows
    from pipeline.simulate.outlook import RowOutlooks

WEIGHTS_FILE = "learned_policy.json"
"""The shipped weights, package data of :mod:`pipeline.simulate`."""

STAGES = 9
"""Open slots after a street: 0 (the board is complete) to 8 (after the opening)."""

LIVE_FEATURES = ("top_live", "middle_live", "middle_flush", "bottom_live", "bottom_flush")
"""How live each row's draws are by the cards the player has seen (the options' ``*_live`` and
``*_flush`` fields, :meth:`pipeline.simulate.dealer.StreetRows.live_state`): the outlooks
assume a full deck; these say how much of it is dead."""

BASE_FEATURES: dict[str, tuple[str, ...]] = {
    "high": (
        "legal", "legal_top_royalty", "legal_middle_royalty", "legal_bottom_royalty",
        "fantasyland", "fantasyland_raw", "legal_top", "legal_middle", "legal_bottom",
        "open_middle", "open_top", "top_floor", "middle_floor", "legal_squared",
        "top_royalty", "middle_royalty", "bottom_royalty", "top_spread", "middle_spread",
        "bottom_spread", "upper", "lower", *LIVE_FEATURES,
    ),
    "low": (
        "legal", "legal_top_royalty", "legal_middle_royalty", "legal_bottom_royalty",
        "fantasyland", "fantasyland_raw", "legal_top", "legal_bottom",
        "open_middle", "open_top", "top_floor", "legal_squared",
        "top_royalty", "middle_royalty", "bottom_royalty", "top_spread", "bottom_spread",
        "upper", "lower", *LIVE_FEATURES,
    ),
}
"""The features computed from an option's outlooks, per variant family (``low``: 2-7
Pineapple, whose middle is a low hand)."""

PRODUCT_BASES: dict[str, tuple[str, ...]] = {
    "high": ("legal", "fantasyland", "legal_top", "legal_middle", "legal_bottom", "top_royalty",
             "middle_royalty", "bottom_royalty", "open_top", "open_middle", "upper", "lower",
             *LIVE_FEATURES),
    "low": ("legal", "fantasyland", "legal_top", "legal_bottom", "top_royalty", "middle_royalty",
            "bottom_royalty", "open_top", "open_middle", "upper", "lower", "top_floor",
            *LIVE_FEATURES),
}
"""The base features whose pairwise products (and squares) are features too: the scorer is
quadratic in them (a linear scorer could not weigh, say, a royalty by how likely the board is
to stay legal differently at each open slot; the lookahead does), the live-card features
among them (a draw's worth depends on how live it is)."""


def _products(bases: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"{first}*{second}" for index, first in enumerate(bases)
                 for second in bases[index:])


FEATURES: dict[str, tuple[str, ...]] = {
    name: bases + _products(PRODUCT_BASES[name]) for name, bases in BASE_FEATURES.items()}
"""Every feature of each variant family, in the weights' order: :data:`BASE_FEATURES`, then
the products of :data:`PRODUCT_BASES` (named ``first*second``)."""

_PRODUCT_PLAN: dict[str, tuple[tuple[str, tuple[tuple[str, int], ...]], ...]] = {
    name: tuple(
        (first, tuple((second, FEATURES[name].index(f"{first}*{second}"))
                      for second in bases[index:]))
        for index, first in enumerate(bases))
    for name, bases in PRODUCT_BASES.items()}
"""Per family: each product base with the features it multiplies and those products' columns."""

_EARLIER_NAMES = {"qualify": "upper"}
"""Features of earlier weights files under their name now (2-7's ``qualify``, the middle's
chance to qualify, is ``upper`` there)."""

_STRENGTH_SCALE = 13.0  # one hand category on the outlooks' strength scale


def family(variant: Variant) -> str:
    """The feature family of a variant: ``low`` for 2-7 Pineapple, ``high`` otherwise."""
    return "low" if variant is Variant.LOWBALL_PINEAPPLE else "high"


@dataclass(frozen=True, slots=True)
class PolicyWeights:
    """The weights of a :class:`LearnedBot`: per variant, a (:data:`STAGES`, features) array
    (a stage's row: the weights for boards with that many slots open after the street), the
    ``steer`` of the legal-chance estimate (open middle and bottom slots count that much
    strength), and what made them (``recipe``: free-form, recorded in the weights file)."""

    tables: Mapping[Variant, np.ndarray]
    steer: Mapping[Variant, float]
    recipe: Mapping[str, Any] = field(default_factory=dict)

    def digest(self) -> str:
        """A hash of the weights (and steer) alone: what the weights file records."""
        hasher = hashlib.sha256()
        for variant in sorted(self.tables, key=lambda item: item.value):
            hasher.update(variant.value.encode())
            hasher.update(np.float64(self.steer[variant]).tobytes())
            hasher.update(np.ascontiguousarray(self.tables[variant], dtype=np.float64).tobytes())
        return hasher.hexdigest()[:16]

    def to_json(self) -> str:
        """The weights file's text (weights as decimal numbers, rounded to 6 significant
        digits: the file is what ships, so what loads is what was measured)."""
        body = {
            "format": 1,
            "digest": self.digest(),
            "recipe": dict(self.recipe),
            "variants": {
                variant.value: {
                    "steer": float(self.steer[variant]),
                    "features": list(FEATURES[family(variant)]),
                    "weights": {str(stage): [float(value) for value in row]
                                for stage, row in enumerate(self.tables[variant])
                                if np.any(row)},
                }
                for variant in sorted(self.tables, key=lambda item: item.value)
            },
        }
        return json.dumps(body, indent=1) + "\n"

    @staticmethod
    def rounded(tables: Mapping[Variant, np.ndarray], steer: Mapping[Variant, float],
                recipe: Mapping[str, Any]) -> PolicyWeights:
        """Weights rounded to what the file keeps (6 significant digits)."""
        return PolicyWeights(
            {variant: np.asarray([[float(f"{value:.6g}") for value in row] for row in table])
             for variant, table in tables.items()},
            dict(steer), dict(recipe))


def parse_weights(text: str, source: str = WEIGHTS_FILE) -> PolicyWeights:
    """Weights from a weights file's text. Raises ValueError naming ``source`` when the file is
    not a weights file of this version (a wrong format, unknown features, a bad hash).

    A file of an earlier feature set loads when each of its features is one of this version's
    (under its earlier name, :data:`_EARLIER_NAMES`): the new features get weight 0, so the
    earlier policy plays as it did (up to the faster normal CDF, :func:`fast_normal_cdf`)."""
    try:
        body = json.loads(text)
        if body.get("format") != 1:
            raise ValueError(f"format {body.get('format')!r}, expected 1")
        stored: dict[Variant, np.ndarray] = {}
        tables: dict[Variant, np.ndarray] = {}
        steer: dict[Variant, float] = {}
        for name, entry in body["variants"].items():
            variant = Variant(name)
            wanted = FEATURES[family(variant)]
            names = tuple(_EARLIER_NAMES.get(item, item) for item in entry["features"])
            if any(item not in wanted for item in names) or len(set(names)) != len(names):
                raise ValueError(f"{name}: features {list(entry['features'])} are not this "
                                 "version's")
            table = np.zeros((STAGES, len(names)))
            for stage, row in entry["weights"].items():
                if len(row) != len(names):
                    raise ValueError(f"{name} stage {stage}: {len(row)} weights for "
                                     f"{len(names)} features")
                table[int(stage)] = row
            stored[variant] = table
            tables[variant] = np.zeros((STAGES, len(wanted)))
            tables[variant][:, [wanted.index(item) for item in names]] = table
            steer[variant] = float(entry["steer"])
        digest = PolicyWeights(stored, steer).digest()
        weights = PolicyWeights(tables, steer, body.get("recipe", {}))
    except (KeyError, TypeError, ValueError, json.JSONDecodeError) as error:
        raise ValueError(f"{source}: not a learned policy's weights ({error})") from error
    if body.get("digest") != digest:
        raise ValueError(f"{source}: the weights do not match their recorded hash "
                         f"({body.get('digest')} recorded, {digest} computed)")
    missing = [variant.value for variant in Variant if variant not in tables]
    if missing:
        raise ValueError(f"{source}: no weights for {', '.join(missing)}")
    return weights


def load_weights(path: Path | None = None) -> PolicyWeights:
    """The weights from ``path``, or the shipped file."""
    if path is not None:
        return parse_weights(Path(path).read_text(encoding="utf-8"), str(path))
    text = resources.files("pipeline.simulate").joinpath(WEIGHTS_FILE).read_text(encoding="utf-8")
    return parse_weights(text)


_ONE = np.float32(1.0)
_INVERSE_ROOT_TWO_PI = np.float32(0.3989422804014327)


def fast_normal_cdf(values: np.ndarray) -> np.ndarray:
    """The standard normal CDF, approximated by a logistic of a cubic (error below 1.5e-4), in
    place on one new array: about 3× faster than the heuristic bots' formula. The learned weights
    are fitted on exactly these numbers, so the approximation costs nothing but its shape."""
    result = values * values
    result *= np.float32(-0.070566)
    result -= np.float32(1.5976)
    result *= values
    np.exp(result, out=result)
    result += _ONE
    np.reciprocal(result, out=result)
    return result


@dataclass(frozen=True, slots=True)
class Chances:
    """The legality estimates of every option (the heuristic bots' model, with
    :func:`fast_normal_cdf`): ``legal`` (the board ends legal), ``fantasyland`` (legal given a
    top that qualifies for Fantasyland), ``upper`` (the middle beats the top; 2-7: the middle
    qualifies) and ``lower`` (the bottom beats the middle given that; 2-7: the bottom beats the
    top)."""

    legal: np.ndarray
    fantasyland: np.ndarray
    upper: np.ndarray
    lower: np.ndarray


def _ordered(top_mean: np.ndarray, top_variance: np.ndarray, middle_mean: np.ndarray,
             middle_low: np.ndarray, middle_variance: np.ndarray, bottom_mean: np.ndarray,
             bottom_variance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(middle > top) and P(bottom > middle | middle > top): the heuristic bots' model
    (:func:`pipeline.simulate.bots.ordered_parts`) with :func:`fast_normal_cdf`."""
    from pipeline.simulate.bots import ordered_parts

    return ordered_parts(top_mean, top_variance, middle_mean, middle_low, middle_variance,
                         bottom_mean, bottom_variance, cdf=fast_normal_cdf)


@np.errstate(all="ignore")
def legal_chances(options: Options, steer: float) -> Chances:
    """The :class:`Chances` of every option (open middle and bottom slots count ``steer`` more
    strength: a player sends later cards where they help)."""
    steer = np.float32(steer)
    bottom_mean = options.bottom_mean + steer * options.open_bottom
    if options.variant is Variant.LOWBALL_PINEAPPLE:
        spread = options.top_variance + options.bottom_variance
        spread += np.float32(1e-6)
        np.sqrt(spread, out=spread)
        under = (bottom_mean - options.top_mean) / spread
        under = fast_normal_cdf(under)
        spread = options.top_fantasyland_variance + options.bottom_variance
        spread += np.float32(1e-6)
        np.sqrt(spread, out=spread)
        qualifying = (bottom_mean - options.top_fantasyland_mean) / spread
        qualifying = fast_normal_cdf(qualifying)
        qualifying *= options.middle_qualify
        return Chances(options.middle_qualify * under, qualifying, options.middle_qualify,
                       under)
    middle_mean = options.middle_mean + steer * options.open_middle
    upper, lower = _ordered(options.top_mean, options.top_variance, middle_mean,
                            options.middle_mean, options.middle_variance, bottom_mean,
                            options.bottom_variance)
    qualifying_upper, qualifying_lower = _ordered(
        options.top_fantasyland_mean, options.top_fantasyland_variance, middle_mean,
        options.middle_mean, options.middle_variance, bottom_mean, options.bottom_variance)
    qualifying_upper *= qualifying_lower
    return Chances(upper * lower, qualifying_upper, upper, lower)


def base_features(options: Options, steer: float) -> dict[str, np.ndarray]:
    """The base features of every option (name -> array shaped as the options' fields), see
    :data:`BASE_FEATURES`."""
    chances = legal_chances(options, steer)
    legal = chances.legal
    scale = np.float32(1.0 / _STRENGTH_SCALE)
    scaled_legal = legal * scale
    features = {
        "legal": legal,
        "legal_top_royalty": legal * options.top_royalty,
        "legal_middle_royalty": legal * options.middle_royalty,
        "legal_bottom_royalty": legal * options.bottom_royalty,
        "fantasyland": options.top_fantasyland * chances.fantasyland,
        "fantasyland_raw": options.top_fantasyland,
        "legal_top": scaled_legal * options.top_mean,
        "legal_bottom": scaled_legal * options.bottom_mean,
        "open_middle": options.open_middle,
        "open_top": options.open_top,
        "top_floor": options.top_floor * scale,
        "legal_squared": legal * legal,
        "top_royalty": options.top_royalty,
        "middle_royalty": options.middle_royalty,
        "bottom_royalty": options.bottom_royalty,
        "upper": chances.upper,
        "lower": chances.lower,
        **{name: getattr(options, name) for name in LIVE_FEATURES},
    }
    top_spread = np.sqrt(options.top_variance)
    top_spread *= scale
    bottom_spread = np.sqrt(options.bottom_variance)
    bottom_spread *= scale
    features["top_spread"] = top_spread
    features["bottom_spread"] = bottom_spread
    if options.variant is not Variant.LOWBALL_PINEAPPLE:
        features["legal_middle"] = scaled_legal * options.middle_mean
        features["middle_floor"] = options.middle_floor * scale
        middle_spread = np.sqrt(options.middle_variance)
        middle_spread *= scale
        features["middle_spread"] = middle_spread
    return features


def option_features(options: Options, steer: float) -> dict[str, np.ndarray]:
    """Every feature of every option (name -> array shaped as the options' fields), see
    :data:`FEATURES`: the base features and their products (for training)."""
    features = base_features(options, steer)
    for name in FEATURES[family(options.variant)][len(BASE_FEATURES[family(options.variant)]):]:
        first, second = name.split("*")
        features[name] = features[first] * features[second]
    return features


def feature_matrix(options: Options, steer: float) -> np.ndarray:
    """The features as one (boards, options, features) float64 array, in :data:`FEATURES`
    order (for training)."""
    features = option_features(options, steer)
    return np.stack([np.asarray(features[name], dtype=np.float64)
                     for name in FEATURES[family(options.variant)]], axis=-1)


def _stages(top: np.ndarray, middle: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """The slots open in the three rows, as a stage."""
    return np.clip((top + middle + bottom).astype(np.int64), 0, STAGES - 1)


def option_stages(options: Options) -> np.ndarray:
    """Per option (any shape of option arrays): the slots still open once it is placed."""
    return _stages(options.open_top, options.open_middle, options.open_bottom)


def stage_of(options: Options) -> np.ndarray:
    """Per board: the slots still open once the street is placed (the same for every option)."""
    return _stages(options.open_top[:, 0], options.open_middle[:, 0], options.open_bottom[:, 0])


def sensible(options: Options) -> np.ndarray:
    """The options considered: valid ones; in the opening (five cards) only the shapes players
    use, as the heuristic bots do (at most one unpaired card on top and at most three unpaired
    cards in the middle; a pair may go anywhere)."""
    from pipeline.simulate.bots import sensible_options

    return sensible_options(options)


class LearnedBot:
    """Scores every option with learned weights over :func:`option_features` and takes the best
    one considered (:func:`sensible`); the first on equal scores."""

    uses_chance = False

    def __init__(self, name: str, description: str,
                 weights: PolicyWeights | Callable[[], PolicyWeights]) -> None:
        self.name = name
        self.description = description
        self._weights = weights
        self._live: dict[Variant, bool] = {}

    @property
    def weights(self) -> PolicyWeights:
        """The weights (a loader given instead is called once, on first use: a damaged weights
        file breaks this bot only, with an error naming the file)."""
        if not isinstance(self._weights, PolicyWeights):
            self._weights = self._weights()
        return self._weights

    def live_cards_in(self, variant: Variant) -> bool:
        """Whether any weight of ``variant`` falls on a live-card feature (or a product with
        one): where none does, the live-card fields cannot change a score, so the dealer and
        the rollouts need not work them out."""
        known = self._live.get(variant)
        if known is None:
            names = FEATURES[family(variant)]
            columns = [index for index, feature in enumerate(names)
                       if any(part in LIVE_FEATURES for part in feature.split("*"))]
            known = self._live[variant] = bool(
                np.any(self.weights.tables[variant][:, columns] != 0))
        return known

    def worth(self, options: Options, stages: np.ndarray) -> np.ndarray:
        """The weighted sum of every option's features, with the weights of its stage
        (``stages``: one per board of (boards, options) arrays, or one per option of flat
        ones). The base features' terms in :data:`BASE_FEATURES` order, then the products
        factored by their first feature (``first × Σ weight × second``, :data:`PRODUCT_BASES`
        order): element by element, so an option's worth does not depend on which others are
        scored beside it."""
        variant = options.variant
        name = family(variant)
        table = self.weights.tables[variant]
        features = base_features(options, self.weights.steer[variant])
        shape = options.top_mean.shape
        if len(stages) and (stages == stages[0]).all():
            row = table[int(stages[0])].astype(np.float32)
            weight_of = [value if value else None for value in row]
        else:
            per_item = table[stages].astype(np.float32)
            weight_of = [per_item[:, index, None] if len(shape) == 2 else per_item[:, index]
                         for index in range(table.shape[1])]
        total = np.zeros(shape, dtype=np.float32)
        term = np.empty_like(total)
        for index, feature in enumerate(BASE_FEATURES[name]):
            if weight_of[index] is not None:
                np.multiply(features[feature], weight_of[index], out=term)
                total += term
        inner = np.empty_like(total)
        for first, pairs in _PRODUCT_PLAN[name]:
            used = [(second, weight_of[column]) for second, column in pairs
                    if weight_of[column] is not None]
            if not used:
                continue
            np.multiply(features[used[0][0]], used[0][1], out=inner)
            for second, weight in used[1:]:
                np.multiply(features[second], weight, out=term)
                inner += term
            inner *= features[first]
            total += inner
        return total

    def scores(self, options: Options) -> np.ndarray:
        """The score of every option (boards, options); options not considered get -inf."""
        total = self.worth(options, stage_of(options))
        total[~sensible(options)] = -np.inf
        return total

    def choose(self, options: Options, uniforms: np.ndarray) -> np.ndarray:
        """The best-scoring option considered, per board (the first one on ties)."""
        return np.argmax(self.scores(options), axis=1)

    def choose_street(self, street: StreetRows, variant: Variant, patterns: np.ndarray,
                      subsets: np.ndarray, outlooks: RowOutlooks) -> np.ndarray:
        """The choice of :meth:`choose` on ``street.options(...)``, worked out on the options
        considered only (:meth:`StreetRows.options_at`), as the heuristic bots do: the same
        worth of each option, bit for bit, so the same picks (tests/simulate/
        test_fast_options.py checks it)."""
        from pipeline.simulate.bots import considered_options

        considered = considered_options(street, patterns, subsets, outlooks)
        flat = np.flatnonzero(considered)
        options = street.options_at(variant, patterns, subsets, outlooks, flat)
        worth = self.worth(options, option_stages(options))
        scores = np.full(considered.size, -np.inf, dtype=worth.dtype)
        scores[flat] = worth
        return np.argmax(scores.reshape(considered.shape), axis=1)


def learned_bot() -> LearnedBot:
    """The ``learned`` bot with the shipped weights (read on first use)."""
    return LearnedBot(
        "learned",
        "a linear scorer of the heuristic's option features, trained on the decision grader's "
        "own lookahead by expert iteration (the grader's rollout policy candidate)",
        load_weights,
    )
