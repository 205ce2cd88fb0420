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
8 to 0 in Classic). The score is compiled (:mod:`pipeline.simulate.learned_kernel`, numba,
imported on first use: importing the bots does not start numba):
option by option in a fixed order, so a board gets the same score (and the same choice: the
first of equal scores) whether it is decided alone or beside thousands of others, by the
rollouts' whole-street player or by the dealer's plain path; the bot uses no chance, so the
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
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from pipeline.rules.game import Variant

if TYPE_CHECKING:
    from pipeline.simulate.bots import Options
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


def fast_normal_cdf(values: np.ndarray) -> np.ndarray:
    """The standard normal CDF, approximated by a logistic of a cubic (error below 1.5e-4), as
    float32: the formula the policy's compiled score uses (:mod:`pipeline.simulate.
    learned_kernel`). The learned weights are fitted on exactly these numbers, so the
    approximation costs nothing but its shape."""
    from pipeline.simulate.learned_kernel import normal_cdf_values

    values = np.asarray(values, dtype=np.float32)
    return normal_cdf_values(np.ascontiguousarray(values).ravel()).reshape(values.shape)


def raw_fields(options: Options) -> np.ndarray:
    """The options' fields the features are made of (:data:`RAW_FIELDS` × options, float32,
    the options in the order of ``ravel``)."""
    from pipeline.simulate.learned_kernel import RAW_FIELDS

    return np.stack([np.asarray(getattr(options, name), dtype=np.float32).ravel()
                     for name in RAW_FIELDS])


def base_features(options: Options, steer: float) -> dict[str, np.ndarray]:
    """The base features of every option (name -> float32 array shaped as the options'
    fields), see :data:`BASE_FEATURES`: the numbers the compiled score works with
    (:func:`pipeline.simulate.learned_kernel.features_of_fields`)."""
    from pipeline.simulate.learned_kernel import FEATURE_SLOTS, features_of_fields

    features = features_of_fields(raw_fields(options), family(options.variant) == "low",
                                  np.float32(steer))
    shape = options.top_mean.shape
    return {name: features[FEATURE_SLOTS.index(name)].reshape(shape)
            for name in BASE_FEATURES[family(options.variant)]}


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


class Boards(Protocol):
    """A column of partial boards as the rollouts keep them
    (:class:`pipeline.analysis.policy.BoardBatch`): cards by slot, per-row card counts,
    rank-key sums and suit states, and the cards each player has seen."""

    keys: np.ndarray
    counts: np.ndarray
    suits: np.ndarray
    cards: np.ndarray
    seen: np.ndarray


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
        self._compiled_weights: dict[Variant, CompiledWeights] = {}

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

    def _compiled(self, variant: Variant) -> CompiledWeights:
        """The weights of ``variant`` as the compiled score takes them (made once)."""
        known = self._compiled_weights.get(variant)
        if known is None:
            known = self._compiled_weights[variant] = compiled_weights(
                variant, self.weights.tables[variant], self.weights.steer[variant])
        return known

    def worth(self, options: Options, stages: np.ndarray) -> np.ndarray:
        """The weighted sum of every option's features, with the weights of its stage
        (``stages``: one per board of (boards, options) arrays, or one per option of flat
        ones), float32 shaped as the options' fields: :func:`pipeline.simulate.
        learned_kernel.worth_of_fields` — the base features' terms in :data:`BASE_FEATURES`
        order, then the products factored by their first feature (``first × Σ weight ×
        second``, :data:`PRODUCT_BASES` order), option by option, so an option's worth does
        not depend on which others are scored beside it."""
        from pipeline.simulate.learned_kernel import worth_of_fields

        compiled = self._compiled(options.variant)
        shape = options.top_mean.shape
        per_option = np.broadcast_to(
            np.asarray(stages, dtype=np.int64).reshape(
                (-1, 1) if len(shape) == 2 else (-1,)), shape)
        worth = worth_of_fields(raw_fields(options), np.ascontiguousarray(per_option).ravel(),
                                *compiled.arguments())
        return worth.reshape(shape)

    def scores(self, options: Options) -> np.ndarray:
        """The score of every option (boards, options); options not considered get -inf."""
        total = self.worth(options, stage_of(options))
        total[~sensible(options)] = -np.inf
        return total

    def choose(self, options: Options, uniforms: np.ndarray) -> np.ndarray:
        """The best-scoring option considered, per board (the first one on ties)."""
        return np.argmax(self.scores(options), axis=1)

    def play_boards(self, boards: Boards, dealt: np.ndarray, discards: int,
                    variant: Variant, outlooks: RowOutlooks, live: bool) -> np.ndarray:
        """Place one street on every board of ``boards`` as :meth:`choose` picks, in one
        compiled pass (:func:`pipeline.simulate.learned_kernel.play_learned`: each board's
        rows after each subset of the street's cards, its live fields when ``live``, only the
        options considered, their worth, the pick, the rows after it, the cards placed and
        the discards seen): what :meth:`pipeline.analysis.policy.ColumnPolicy.play_street`
        does with the dealer's :class:`StreetRows` and :meth:`choose`, the same integers and
        the same worth, so the same picks (tests/simulate/test_fast_options.py). Returns the
        pattern index per board."""
        from pipeline.simulate.bots import pattern_subsets, street_patterns
        from pipeline.simulate.dealer import order_within_rows, street_tables
        from pipeline.simulate.learned_kernel import BLOCK, play_learned

        size = dealt.shape[1]
        patterns = street_patterns(size, discards)
        if len(patterns) > BLOCK:
            raise ValueError(f"{len(patterns)} placements of a street: at most {BLOCK}")
        chosen, boards.keys, boards.counts, boards.suits = play_learned(
            np.ascontiguousarray(dealt, dtype=np.int64), boards.keys, boards.counts,
            boards.suits, boards.cards, boards.seen, live, *street_tables(),
            pattern_subsets(size, discards), patterns, order_within_rows(size, discards),
            kernel_tables(variant, outlooks), size == 5, *self._compiled(variant).arguments())
        return chosen


@dataclass(frozen=True, slots=True)
class CompiledWeights:
    """One variant's weights as the compiled score takes them: whether it is the ``low``
    family, the ``steer``, the (stages, features) float32 ``table``, and the plan of its terms
    (``base_slots``: each base feature's row in :data:`FEATURE_SLOTS`; per product group, the
    first feature's row, where its pairs start, each pair's second feature's row and weight
    column)."""

    low: bool
    steer: np.float32
    table: np.ndarray
    base_slots: np.ndarray
    first_slots: np.ndarray
    group_starts: np.ndarray
    second_slots: np.ndarray
    columns: np.ndarray

    def arguments(self) -> tuple[Any, ...]:
        """The weights' arguments of the compiled functions, in their order."""
        return (self.low, self.steer, self.table, self.base_slots, self.first_slots,
                self.group_starts, self.second_slots, self.columns)


def compiled_weights(variant: Variant, table: np.ndarray, steer: float) -> CompiledWeights:
    """:class:`CompiledWeights` of a (stages, features) weight table of ``variant``."""
    from pipeline.simulate.learned_kernel import FEATURE_SLOTS

    name = family(variant)
    plan = _PRODUCT_PLAN[name]
    starts = [0]
    for _, pairs in plan:
        starts.append(starts[-1] + len(pairs))
    return CompiledWeights(
        name == "low", np.float32(steer), np.ascontiguousarray(table, dtype=np.float32),
        np.asarray([FEATURE_SLOTS.index(item) for item in BASE_FEATURES[name]], dtype=np.int64),
        np.asarray([FEATURE_SLOTS.index(first) for first, _ in plan], dtype=np.int64),
        np.asarray(starts, dtype=np.int64),
        np.asarray([FEATURE_SLOTS.index(second) for _, pairs in plan for second, _ in pairs],
                   dtype=np.int64),
        np.asarray([column for _, pairs in plan for _, column in pairs], dtype=np.int64))


_KERNEL_TABLES: dict[tuple[Variant, int], tuple[RowOutlooks, np.ndarray]] = {}


def kernel_tables(variant: Variant, outlooks: RowOutlooks) -> np.ndarray:
    """The three rows' packed outlooks (:func:`pipeline.simulate.dealer.packed_outlooks`) as
    the compiled pick reads them: one (3, entries, 8) float32 array, an entry's fields side by
    side in the order of :data:`pipeline.simulate.learned_kernel.ROW_SLOTS` (the middle's
    ``qualify`` is its mean where the variant has none), padded with zeros. Made once per
    variant and outlooks."""
    from pipeline.simulate.bots import ROW_NAMES
    from pipeline.simulate.dealer import packed_outlooks
    from pipeline.simulate.learned_kernel import ROW_SLOTS

    key = (variant, id(outlooks))
    known = _KERNEL_TABLES.get(key)
    if known is None or known[0] is not outlooks:
        packed = [packed_outlooks(row, variant, outlooks) for row in range(3)]
        tables = np.zeros((3, max(table.shape[1] for _, table in packed), 8), dtype=np.float32)
        for row, (names, table) in enumerate(packed):
            prefix = ROW_NAMES[row]
            named = [f"open_{prefix}" if name == "open" else f"{prefix}_{name}"
                     for name in names]
            if row == 1 and "middle_qualify" not in named:
                named.append("middle_qualify")
                table = np.concatenate([table, table[names.index("mean")][None]])
            for column, name in enumerate(ROW_SLOTS[row]):
                tables[row, :table.shape[1], column] = table[named.index(name)]
        known = _KERNEL_TABLES[key] = (outlooks, tables)
    return known[1]


def learned_bot() -> LearnedBot:
    """The ``learned`` bot with the shipped weights (read on first use)."""
    return LearnedBot(
        "learned",
        "a linear scorer of the heuristic's option features, trained on the decision grader's "
        "own lookahead by expert iteration (the grader's rollout policy candidate)",
        load_weights,
    )
