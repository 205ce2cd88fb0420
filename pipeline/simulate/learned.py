"""The learned rollout policy: a linear scorer of the bots' option features, trained by expert
iteration on the decision grader's own one-step lookahead.

A bot (:class:`LearnedBot`, registered as ``learned`` in :data:`pipeline.simulate.bots.BOTS`)
decides a street for a column of boards as every bot does: it gets the :class:`Options` of the
street (each option's rows' outlooks: strength mean and variance, expected royalty, the top's
Fantasyland chance, open slots) and takes the best-scoring valid option per board. Its score is
a weighted sum of a few *features* of each option (:data:`FEATURES`: the chance that the board
ends legal, estimated as the heuristic bots estimate it, the royalties and rows' strengths
counted when legal, the Fantasyland chance, the open slots), with one weight vector per variant
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.rules.game import Variant

if TYPE_CHECKING:
    from pipeline.simulate.bots import Options

WEIGHTS_FILE = "learned_policy.json"
"""The shipped weights, package data of :mod:`pipeline.simulate`."""

STAGES = 9
"""Open slots after a street: 0 (the board is complete) to 8 (after the opening)."""

FEATURES: dict[str, tuple[str, ...]] = {
    "high": (
        "legal", "legal_top_royalty", "legal_middle_royalty", "legal_bottom_royalty",
        "fantasyland", "fantasyland_raw", "legal_top", "legal_middle", "legal_bottom",
        "open_middle", "open_top", "top_floor", "middle_floor", "legal_squared",
        "top_royalty", "middle_royalty", "bottom_royalty", "top_spread", "middle_spread",
        "bottom_spread",
    ),
    "low": (
        "legal", "legal_top_royalty", "legal_middle_royalty", "legal_bottom_royalty",
        "fantasyland", "fantasyland_raw", "legal_top", "legal_bottom", "qualify",
        "open_middle", "open_top", "top_floor", "legal_squared",
        "top_royalty", "middle_royalty", "bottom_royalty", "top_spread", "bottom_spread",
    ),
}
"""The features of each variant family (``low``: 2-7 Pineapple, whose middle is a low hand)."""

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
    not a weights file of this version (a wrong format, unknown features, a bad hash)."""
    try:
        body = json.loads(text)
        if body.get("format") != 1:
            raise ValueError(f"format {body.get('format')!r}, expected 1")
        tables: dict[Variant, np.ndarray] = {}
        steer: dict[Variant, float] = {}
        for name, entry in body["variants"].items():
            variant = Variant(name)
            names = tuple(entry["features"])
            if names != FEATURES[family(variant)]:
                raise ValueError(f"{name}: features {list(names)} are not this version's")
            table = np.zeros((STAGES, len(names)))
            for stage, row in entry["weights"].items():
                if len(row) != len(names):
                    raise ValueError(f"{name} stage {stage}: {len(row)} weights for "
                                     f"{len(names)} features")
                table[int(stage)] = row
            tables[variant] = table
            steer[variant] = float(entry["steer"])
        weights = PolicyWeights(tables, steer, body.get("recipe", {}))
    except (KeyError, TypeError, ValueError, json.JSONDecodeError) as error:
        raise ValueError(f"{source}: not a learned policy's weights ({error})") from error
    if body.get("digest") != weights.digest():
        raise ValueError(f"{source}: the weights do not match their recorded hash "
                         f"({body.get('digest')} recorded, {weights.digest()} computed)")
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


def _normal_cdf(values: np.ndarray) -> np.ndarray:
    from pipeline.simulate.bots import normal_cdf

    return normal_cdf(values)


def _legal_chances(options: Options, steer: float) -> tuple[np.ndarray, np.ndarray]:
    """The chance that the board ends legal, and the same given a top that qualifies for
    Fantasyland, as the heuristic bots estimate them (:mod:`pipeline.simulate.bots`)."""
    from pipeline.simulate.bots import _ordered_chance

    bottom_mean = options.bottom_mean + steer * options.open_bottom
    if options.variant is Variant.LOWBALL_PINEAPPLE:
        top_under_bottom = 1.0 - _normal_cdf(
            (options.top_mean - bottom_mean)
            / np.sqrt(options.top_variance + options.bottom_variance + 1e-6))
        qualifying_under_bottom = 1.0 - _normal_cdf(
            (options.top_fantasyland_mean - bottom_mean)
            / np.sqrt(options.top_fantasyland_variance + options.bottom_variance + 1e-6))
        return (options.middle_qualify * top_under_bottom,
                options.middle_qualify * qualifying_under_bottom)
    middle_mean = options.middle_mean + steer * options.open_middle
    legal = _ordered_chance(options.top_mean, options.top_variance, middle_mean,
                            options.middle_mean, options.middle_variance, bottom_mean,
                            options.bottom_variance)
    legal_fantasyland = _ordered_chance(
        options.top_fantasyland_mean, options.top_fantasyland_variance, middle_mean,
        options.middle_mean, options.middle_variance, bottom_mean, options.bottom_variance)
    return legal, legal_fantasyland


def option_features(options: Options, steer: float) -> dict[str, np.ndarray]:
    """Every feature of every option (name -> (boards, options) array), see :data:`FEATURES`."""
    legal, legal_fantasyland = _legal_chances(options, steer)
    scale = np.float32(1.0 / _STRENGTH_SCALE)
    low = options.variant is Variant.LOWBALL_PINEAPPLE
    features = {
        "legal": legal,
        "legal_top_royalty": legal * options.top_royalty,
        "legal_middle_royalty": legal * options.middle_royalty,
        "legal_bottom_royalty": legal * options.bottom_royalty,
        "fantasyland": options.top_fantasyland * legal_fantasyland,
        "fantasyland_raw": options.top_fantasyland,
        "legal_top": legal * options.top_mean * scale,
        "legal_bottom": legal * options.bottom_mean * scale,
        "open_middle": options.open_middle,
        "open_top": options.open_top,
        "top_floor": options.top_floor * scale,
        "legal_squared": legal * legal,
        "top_royalty": options.top_royalty,
        "middle_royalty": options.middle_royalty,
        "bottom_royalty": options.bottom_royalty,
        "top_spread": np.sqrt(options.top_variance) * scale,
        "bottom_spread": np.sqrt(options.bottom_variance) * scale,
    }
    if low:
        features["qualify"] = options.middle_qualify
    else:
        features["legal_middle"] = legal * options.middle_mean * scale
        features["middle_floor"] = options.middle_floor * scale
        features["middle_spread"] = np.sqrt(options.middle_variance) * scale
    return features


def feature_matrix(options: Options, steer: float) -> np.ndarray:
    """The features as one (boards, options, features) float64 array, in :data:`FEATURES`
    order (for training)."""
    features = option_features(options, steer)
    return np.stack([np.asarray(features[name], dtype=np.float64)
                     for name in FEATURES[family(options.variant)]], axis=-1)


def stage_of(options: Options) -> np.ndarray:
    """Per board: the slots still open once the street is placed (the same for every option)."""
    opened = options.open_top[:, 0] + options.open_middle[:, 0] + options.open_bottom[:, 0]
    return np.clip(opened.astype(np.int64), 0, STAGES - 1)


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

    def __init__(self, name: str, description: str, weights: PolicyWeights) -> None:
        self.name = name
        self.description = description
        self.weights = weights

    def scores(self, options: Options) -> np.ndarray:
        """The score of every option (boards, options); options not considered get -inf."""
        variant = options.variant
        table = self.weights.tables[variant]
        features = option_features(options, self.weights.steer[variant])
        stages = stage_of(options)
        names: Sequence[str] = FEATURES[family(variant)]
        if len(stages) and (stages == stages[0]).all():
            row = table[int(stages[0])]
            weight_of = [np.float32(row[index]) for index in range(len(names))]
        else:
            per_board = table[stages].astype(np.float32)
            weight_of = [per_board[:, index, None] for index in range(len(names))]
        total = np.zeros(options.valid.shape, dtype=np.float32)
        for index, name in enumerate(names):
            total += weight_of[index] * features[name]
        return np.where(sensible(options), total, -np.inf)

    def choose(self, options: Options, uniforms: np.ndarray) -> np.ndarray:
        """The best-scoring option considered, per board (the first one on ties)."""
        return np.argmax(self.scores(options), axis=1)


def learned_bot() -> LearnedBot:
    """The ``learned`` bot with the shipped weights."""
    return LearnedBot(
        "learned",
        "a linear scorer of the heuristic's option features, trained on the decision grader's "
        "own lookahead by expert iteration (the grader's rollout policy candidate)",
        load_weights(),
    )
