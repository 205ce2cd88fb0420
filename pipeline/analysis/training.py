"""Training the learned rollout policy by expert iteration (docs/grading.md, "The rollout policy").

One *round* turns a rollout policy π into a better one:

1. **Positions.** Simulated hands in every variant (three- and two-handed tables; a mix of π
   itself, the heuristic bots and ``random`` for coverage, :data:`LINE_UPS`), every street of
   every seat not in Fantasyland, as the grader rebuilds it (:func:`decision_at`).
2. **Labels: the grader's one-step lookahead under π.** For each position, every distinct play
   (the grader's own alternatives, symmetric ones merged; in an opening the ``top_k`` best by π's
   own score plus ``extra`` drawn at random) is played out on ``samples`` sampled futures in which
   every seat then plays π (:class:`~pipeline.analysis.rollout.Rollouts`, the grader's rollouts,
   on their own seeds): the mean value (points, + the Fantasyland value) of each play.
3. **Fit.** Per variant and stage, a linear scorer of the option features
   (:mod:`pipeline.simulate.learned`) whose softmax over a position's plays matches the softmax of
   their lookahead values (listwise cross-entropy, a temperature of ``temperature`` points,
   ridge ``ridge``; Newton's method from zero, a fixed number of steps: deterministic).
   The new policy π' plays the argmax: the lookahead's choice, learned.
4. **Keep it where it wins, twice.** π' against π head to head in the simulator
   (:func:`head_to_head`), per variant (the *screening* match); where π' wins by more than two
   standard errors, a *confirmation* match on other deals (:func:`confirmation_seed`) decides:
   the screening figure is a maximum picked among variants and rounds, so it is biased upward,
   and only the fresh one is an honest estimate. π' is kept in the variants where both win by
   more than two standard errors, π's weights stay in the others (:func:`kept_by_variant`); the
   next round labels with the result.

Everything draws from fixed seeds, so a round with the same inputs gives the same weights.
``python -m pipeline.analysis.training --help`` runs rounds and writes the weights file.
"""

from __future__ import annotations

import hashlib
import json
import math
import pickle
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from pipeline.analysis.decisions import Decision, HandView, SeatPlay, StreetPlay, decision_at
from pipeline.analysis.policy import BoardBatch, seen_cards
from pipeline.analysis.progress import counted_progress
from pipeline.analysis.rollout import SELECTION, Rollouts
from pipeline.formats.source import forked_pool
from pipeline.rules.cards import parse_card
from pipeline.rules.game import Variant
from pipeline.rules.ruleset import STANDARD, RuleSet
from pipeline.simulate.bots import _BOARD_FIELDS as OPTION_FIELDS
from pipeline.simulate.bots import BOTS, pattern_subsets, street_patterns
from pipeline.simulate.dealer import StreetRows
from pipeline.simulate.learned import (
    FEATURES,
    STAGES,
    LearnedBot,
    PolicyWeights,
    family,
    feature_matrix,
    stage_of,
)
from pipeline.simulate.outlook import row_outlooks
from pipeline.simulate.simulation import SimulationConfig, simulate
from pipeline.solver.fantasyland import DEFAULT_STAY_VALUE

ROW_OF = {"top": 0, "middle": 1, "bottom": 2}

LINE_UPS: tuple[tuple[str, ...], ...] = (
    ("policy", "policy", "policy"),
    ("policy", "solid", "chaser"),
    ("policy", "expert", "random"),
    ("policy", "policy"),
    ("policy", "solid"),
)
"""The tables positions come from (``policy``: the policy being improved). Every seat's
decisions are labelled, so a position reached by another style's play counts too."""


# --- positions -----------------------------------------------------------------------------------


def hand_views(lines: Iterable[str], first_key: int = 1) -> list[HandView]:
    """Simulated hand records (canonical JSON lines) as the grader sees hands: seats in action
    order (left of the button first), streets as played."""
    views = []
    for number, line in enumerate(lines):
        record = json.loads(line)
        players = sorted(record["players"], key=lambda player: player["seat"])
        names = [player["name"] for player in players]
        button = names.index(record["button"])
        seats = []
        for position in range(len(players)):
            player = players[(button + 1 + position) % len(players)]
            streets = []
            for street in player["streets"]:
                rows = {parse_card(card): ROW_OF[row]
                        for row, cards in street["placed"].items() for card in cards}
                dealt = [parse_card(card) for card in street["dealt"]]
                streets.append(StreetPlay(
                    tuple((card, rows[card]) for card in dealt if card in rows),
                    tuple(card for card in dealt if card not in rows)))
            dealt_count = sum(len(street["dealt"]) for street in player["streets"])
            seats.append(SeatPlay(player["name"], position, bool(player["fantasyland"]),
                                  dealt_count, tuple(streets)))
        views.append(HandView(first_key + number, record["hand_id"], Variant(record["variant"]),
                              record["rules"], tuple(seats), record.get("started_at")))
    return views


def simulated_decisions(variant: Variant, bots: Sequence[str], hands: int, seed: int,
                        rules: RuleSet = STANDARD, first_key: int = 1) -> list[Decision]:
    """Every decision (a street of a seat not in Fantasyland) of ``hands`` simulated hands at a
    table of ``bots`` (one player per bot)."""
    config = SimulationConfig(hands=hands, seed=seed, variants=(variant,), players=len(bots),
                              pool_size=len(bots), bots=tuple(bots), rules=rules)
    lines = [line for output in simulate(config) for line in output.lines.decode().splitlines()]
    decisions = []
    for view in hand_views(lines, first_key):
        for seat, play in enumerate(view.seats):
            if play.fantasyland:
                continue
            decisions.extend(decision_at(view, seat, street) for street in range(len(play.streets)))
    return decisions


# --- labels --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LabelSettings:
    """How positions are labelled (see the module docstring)."""

    samples: int = 128
    top_k: int = 40
    extra: int = 12
    seed: int = 7000
    fantasyland_value: float = float(DEFAULT_STAY_VALUE)


@dataclass(slots=True)
class Labelled:
    """One labelled position: its labelled plays' option fields (the
    :class:`~pipeline.simulate.bots.Options` arrays, one value per play: the features are
    computed from them at fit time), their lookahead values (mean over the samples) and the
    values' standard error against the position's mean play."""

    variant: Variant
    stage: int
    street: int
    fields: dict[str, np.ndarray]  # option field -> (plays,)
    values: np.ndarray  # (plays,)
    errors: np.ndarray  # (plays,)
    patterns: np.ndarray  # (plays,) pattern indexes
    policy_choice: int  # index into the plays of the labelling policy's own choice (-1: none)
    dealt: int = 3

    def features(self, steer: float) -> np.ndarray:
        """The plays' features (plays, features), :data:`FEATURES` order."""
        return feature_matrix(stored_options(self.variant, self.fields, self.dealt), steer)[0]


def stored_options(variant: Variant, fields: dict[str, np.ndarray], dealt: int):  # noqa: ANN201
    """An :class:`~pipeline.simulate.bots.Options` of one board from stored option fields."""
    from pipeline.simulate.bots import Options

    plays = len(fields["valid"])
    return Options(variant, np.zeros((plays, dealt), dtype=np.int64),
                   **{name: np.asarray(values)[None, :] for name, values in fields.items()})


def position_options(decision: Decision, rules: RuleSet):  # noqa: ANN201
    """The :class:`~pipeline.simulate.bots.Options` of the player's one board at a decision."""
    board = BoardBatch.from_rows([decision.rows])
    dealt = np.asarray([decision.dealt], dtype=np.int64)
    size, discards = dealt.shape[1], decision.discards
    street = StreetRows(dealt, board.keys, board.counts, board.suits, board.cards,
                        seen_cards([decision.known]))
    return street.options(decision.hand.variant, street_patterns(size, discards),
                          pattern_subsets(size, discards),
                          row_outlooks(decision.hand.variant, rules))


def label_decision(decision: Decision, rules: RuleSet, policy: str,
                   settings: LabelSettings) -> Labelled | None:
    """The lookahead values of a position's plays under ``policy`` (see :class:`Labelled`);
    None when there is one play only."""
    alternatives = decision.alternatives().alternatives
    if len(alternatives) < 2:
        return None
    variant = decision.hand.variant
    options = position_options(decision, rules)
    size, discards = len(decision.dealt), decision.discards
    index_of = {tuple(pattern): index
                for index, pattern in enumerate(street_patterns(size, discards).tolist())}
    patterns = np.asarray([index_of[tuple(item.pattern)] for item in alternatives])
    bot = BOTS[policy]
    policy_scores = _policy_scores(bot, options)
    own = int(np.argmax(policy_scores[0]))
    keep = np.arange(len(alternatives))
    if len(alternatives) > settings.top_k + settings.extra:
        order = np.argsort(-policy_scores[0, patterns], kind="stable")
        top = order[:settings.top_k]
        rest = order[settings.top_k:]
        draw = np.random.default_rng(
            [settings.seed, decision.hand.hand_key, decision.hero, decision.street, 1])
        keep = np.sort(np.concatenate([top, draw.choice(rest, settings.extra, replace=False)]))
    chosen = [alternatives[index] for index in keep]
    rollouts = Rollouts(decision, rules, 0, settings.samples, settings.seed, policy,
                        settings.fantasyland_value, stream=SELECTION)
    values = rollouts.values(chosen)
    centred = values - values.mean(axis=0, keepdims=True)
    errors = centred.std(axis=1, ddof=1) / math.sqrt(settings.samples)
    kept_patterns = patterns[keep]
    fields = {name: np.asarray(getattr(options, name)[0, kept_patterns])
              for name in OPTION_FIELDS}
    match = np.flatnonzero(_same_play(decision, kept_patterns, own, size, discards))
    return Labelled(variant, int(stage_of(options)[0]), decision.street, fields,
                    values.mean(axis=1), errors, kept_patterns,
                    int(match[0]) if len(match) else -1, size)


def _policy_scores(bot: object, options) -> np.ndarray:  # noqa: ANN001
    """A bot's scores of every option (-inf where it would not play); for a bot without
    scores, 0 on its choice and -1 elsewhere."""
    scores = getattr(bot, "scores", None)
    if scores is not None:
        return scores(options)
    choice = bot.choose(options, np.zeros(1))
    result = np.where(options.valid, -1.0, -np.inf)
    result[0, choice[0]] = 0.0
    return result


def _same_play(decision: Decision, patterns: np.ndarray, own: int, size: int,
               discards: int) -> np.ndarray:
    """Which of the labelled plays (pattern indexes) is equivalent to pattern ``own``."""
    from pipeline.analysis.alternatives import apply_pattern, canonical_key

    group = decision.symmetry()
    table = street_patterns(size, discards).tolist()
    key = canonical_key(apply_pattern(decision.rows, decision.dealt, tuple(table[own]))[0], group)
    return np.asarray([
        canonical_key(apply_pattern(decision.rows, decision.dealt, tuple(table[pattern]))[0],
                      group) == key for pattern in patterns.tolist()])


# --- the fit -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FitSettings:
    """How the weights are fitted (see the module docstring)."""

    temperature: float = 1.0
    ridge: float = 0.001
    steps: int = 40


def fit_stage(groups: Sequence[tuple[np.ndarray, np.ndarray]], settings: FitSettings) -> np.ndarray:
    """Weights w of a linear scorer: softmax(features · w) over each group's plays fitted to
    softmax(values / temperature), minimising the mean cross-entropy plus ``ridge`` × |w|² / 2
    by damped Newton steps from zero; ``groups``: (features (plays, F), values (plays,)).

    The features are centred within each group and scaled by their overall spread before the
    fit (so one ridge suits every feature); the weights returned apply to the raw features.
    Deterministic: the same groups give the same weights, bit for bit."""
    if not groups:
        raise ValueError("no labelled positions to fit")
    width = groups[0][0].shape[1]
    longest = max(len(values) for _, values in groups)
    count = len(groups)
    features = np.zeros((count, longest, width))
    mask = np.zeros((count, longest), dtype=bool)
    targets = np.zeros((count, longest))
    for index, (block, values) in enumerate(groups):
        plays = len(values)
        features[index, :plays] = block - block.mean(axis=0)
        mask[index, :plays] = True
        logits = (values - values.max()) / settings.temperature
        target = np.exp(logits)
        targets[index, :plays] = target / target.sum()
    scale = np.sqrt((features**2).sum(axis=(0, 1)) / mask.sum()) + 1e-9
    features /= scale

    def objective(weights: np.ndarray) -> tuple[float, np.ndarray]:
        logits = np.where(mask, features @ weights, -np.inf)
        logits -= logits.max(axis=1, keepdims=True)
        log_model = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        loss = -float((targets * np.where(mask, log_model, 0.0)).sum()) / count
        return loss + 0.5 * settings.ridge * float(weights @ weights), np.exp(log_model)

    weights = np.zeros(width)
    loss, model = objective(weights)
    for _ in range(settings.steps):
        gradient = np.einsum("gpf,gp->f", features, model - targets) / count
        gradient += settings.ridge * weights
        mean = np.einsum("gpf,gp->gf", features, model)
        hessian = (np.einsum("gpf,gp,gpk->fk", features, model, features)
                   - mean.T @ mean) / count + settings.ridge * np.eye(width)
        step = np.linalg.solve(hessian, gradient)
        size = 1.0
        while size > 1e-4:
            candidate = weights - size * step
            candidate_loss, candidate_model = objective(candidate)
            if candidate_loss <= loss:
                break
            size /= 2
        else:
            break
        weights, loss, model = candidate, candidate_loss, candidate_model
        if float(np.abs(size * step).max()) < 1e-9:
            break
    return weights / scale


def fit_weights(labelled: Sequence[Labelled], settings: FitSettings,
                steer: dict[Variant, float], recipe: dict,
                fallback: PolicyWeights | None = None) -> PolicyWeights:
    """Weights for every variant and stage fitted on the labelled positions (a stage with no
    positions keeps ``fallback``'s weights, or zeros)."""
    tables: dict[Variant, np.ndarray] = {}
    for variant in Variant:
        width = len(FEATURES[family(variant)])
        table = np.zeros((STAGES, width))
        if fallback is not None and variant in fallback.tables:
            table = np.asarray(fallback.tables[variant], dtype=np.float64).copy()
        for stage in range(STAGES):
            groups = [(item.features(steer[variant]), item.values) for item in labelled
                      if item.variant is variant and item.stage == stage]
            if groups:
                table[stage] = fit_stage(groups, settings)
        tables[variant] = table
    return PolicyWeights.rounded(tables, steer, recipe)


# --- rounds --------------------------------------------------------------------------------------

STEER = {Variant.CLASSIC: 0.0, Variant.PINEAPPLE: 0.4, Variant.LOWBALL_PINEAPPLE: 0.4}
"""The steer of the legal-chance feature (the expert bot's)."""


def heuristic_weights(bot: object) -> PolicyWeights:
    """Weights with which :class:`LearnedBot` scores options as the heuristic ``bot`` does
    (its formula is a linear combination of the features; the same choices up to rounding)."""
    tables: dict[Variant, np.ndarray] = {}
    steer: dict[Variant, float] = {}
    for variant in Variant:
        style = bot.style_for(variant)  # type: ignore[attr-defined]
        names = FEATURES[family(variant)]
        strength = style.strength_weight * 13.0
        wanted = {
            "legal": style.foul_penalty, "legal_top_royalty": 1.0, "legal_middle_royalty": 1.0,
            "legal_bottom_royalty": 1.0, "legal_top": strength, "legal_middle": strength,
            "legal_bottom": strength, "fantasyland": style.fantasyland_bonus,
            "open_middle": style.middle_patience,
        }
        row = np.asarray([wanted.get(name, 0.0) for name in names])
        tables[variant] = np.tile(row, (STAGES, 1))
        steer[variant] = style.steer
    return PolicyWeights(tables, steer, {"from": getattr(bot, "name", "heuristic")})


def register(name: str, weights: PolicyWeights) -> str:
    """Register a learned bot under ``name`` in :data:`BOTS` (for simulations and rollouts of
    this process and the processes it forks); returns the name."""
    BOTS[name] = LearnedBot(name, "a learned policy being trained", weights)
    return name


def round_decisions(policy: str, hands: dict[Variant, int], seed: int,
                    rules: RuleSet = STANDARD) -> list[Decision]:
    """The positions of a round: every decision of ``hands[variant]`` hands per line-up of
    :data:`LINE_UPS` (``policy`` in the policy's seats), each table on its own seed."""
    decisions: list[Decision] = []
    for variant_index, variant in enumerate(Variant):
        for line_index, line_up in enumerate(LINE_UPS):
            if not hands.get(variant):
                continue
            bots = tuple(policy if bot == "policy" else bot for bot in line_up)
            table_seed = seed * 1000 + variant_index * 100 + line_index
            decisions.extend(simulated_decisions(variant, bots, hands[variant], table_seed, rules,
                                                 first_key=table_seed * 100_000))
    return decisions


_WORKER: dict[str, object] = {}


def _start_worker(policies: dict[str, str], rules: RuleSet, policy: str,
                  settings: LabelSettings) -> None:
    from pipeline.simulate.learned import parse_weights

    for name, text in policies.items():
        register(name, parse_weights(text, name))
    _WORKER.update(rules=rules, policy=policy, settings=settings)


def _label_chunk(chunk: Sequence[Decision]) -> list[Labelled]:
    labelled = []
    for decision in chunk:
        item = label_decision(decision, _WORKER["rules"], _WORKER["policy"],  # type: ignore[arg-type]
                              _WORKER["settings"])  # type: ignore[arg-type]
        if item is not None:
            labelled.append(item)
    return labelled


def label_positions(decisions: Sequence[Decision], policy: str, settings: LabelSettings,
                    rules: RuleSet = STANDARD, jobs: int = 1,
                    learned: dict[str, PolicyWeights] | None = None,
                    on_progress: Callable[[int, int], None] | None = None,
                    chunk: int = 24) -> list[Labelled]:
    """Label every decision (:func:`label_decision`) in ``jobs`` processes; the result does not
    depend on ``jobs``. ``learned``: learned bots the rollouts need, by name (registered in
    every worker)."""
    policies = {name: weights.to_json() for name, weights in (learned or {}).items()}
    arguments = (policies, rules, policy, settings)
    chunks = [decisions[start:start + chunk] for start in range(0, len(decisions), chunk)]
    results: list[Labelled] = []
    done = 0
    if jobs <= 1:
        _start_worker(*arguments)
        parts: Iterable[list[Labelled]] = map(_label_chunk, chunks)
        for part, size in zip(parts, map(len, chunks), strict=True):
            results.extend(part)
            done += size
            if on_progress:
                on_progress(done, len(decisions))
        return results
    with forked_pool(jobs, _start_worker, arguments) as pool:
        for part, size in zip(pool.imap(_label_chunk, chunks), map(len, chunks), strict=True):
            results.extend(part)
            done += size
            if on_progress:
                on_progress(done, len(decisions))
    return results


def head_to_head(first: str, second: str, variant: Variant, hands: int, seed: int,
                 players: int = 2, rules: RuleSet = STANDARD, jobs: int = 1) -> tuple[float, float]:
    """``first``'s points per hand (± standard error) at simulated tables of one ``first`` and
    ``players - 1`` ``second`` (the seats rotate: the table's button moves)."""
    bots = (first, *([second] * (players - 1)))
    config = SimulationConfig(hands=hands, seed=seed, variants=(variant,), players=players,
                              pool_size=players, bots=bots, rules=rules)
    points = []
    for output in simulate(config, jobs=jobs):
        for line in output.lines.decode().splitlines():
            record = json.loads(line)
            points.extend(seat["reported_points"] for seat in record["players"]
                          if seat["name"] == "mara")  # the pool's first player plays ``first``
    values = np.asarray(points, dtype=np.float64)
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(len(values)))


@dataclass(frozen=True, slots=True)
class Recipe:
    """Everything that decides the trained weights (recorded in the weights file)."""

    rounds: int = 3
    hands: tuple[tuple[str, int], ...] = (
        ("pineapple", 120), ("2-7-pineapple", 120), ("classic", 80))
    labels: LabelSettings = LabelSettings()
    fit: FitSettings = FitSettings()
    seed: int = 0
    match_hands: int = 20_000
    held_out: float = 0.2

    def hands_by_variant(self) -> dict[Variant, int]:
        """Hands per line-up, by variant."""
        return {Variant(name): count for name, count in self.hands}

    def describe(self) -> dict:
        """The recipe as JSON-ready values."""
        return {
            "rounds": self.rounds, "hands_per_line_up": dict(self.hands),
            "line_ups": [list(line_up) for line_up in LINE_UPS],
            "labels": {"samples": self.labels.samples, "top_k": self.labels.top_k,
                       "extra": self.labels.extra, "seed": self.labels.seed,
                       "fantasyland_value": self.labels.fantasyland_value},
            "fit": {"temperature": self.fit.temperature, "ridge": self.fit.ridge,
                    "steps": self.fit.steps},
            "seed": self.seed, "match_hands": self.match_hands, "held_out": self.held_out,
        }


@dataclass(slots=True)
class RoundReport:
    """What one round did: positions labelled, held-out regret before and after by variant and
    stage, the match against the previous policy, whether the round was kept."""

    number: int
    policy: str
    positions: int = 0
    seconds: float = 0.0
    regret: dict[tuple[str, int], tuple[int, float, float]] = field(default_factory=dict)
    matches: dict[str, tuple[float, float]] = field(default_factory=dict)
    confirmations: dict[str, tuple[float, float]] = field(default_factory=dict)
    kept: bool = False
    kept_variants: tuple[str, ...] = ()


def held_out(count: int, share: float) -> np.ndarray:
    """Which of ``count`` labelled positions are held out of the fit (a fixed draw)."""
    return np.random.default_rng(0).random(count) < share


def regret_table(items: Sequence[Labelled], weights: PolicyWeights
                 ) -> dict[tuple[str, int], tuple[int, float, float]]:
    """Per (variant, stage): positions, the labelling policy's mean regret (the best labelled
    play's value minus its own play's) and the weights' (the best labelled play's value minus
    the value of the play they score highest)."""
    groups: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for item in items:
        if item.policy_choice < 0:
            continue
        table = weights.tables[item.variant][item.stage]
        pick = int(np.argmax(item.features(weights.steer[item.variant]) @ table))
        best = float(item.values.max())
        groups.setdefault((item.variant.value, item.stage), []).append(
            (best - float(item.values[item.policy_choice]), best - float(item.values[pick])))
    return {key: (len(pairs), float(np.mean([old for old, _ in pairs])),
                  float(np.mean([new for _, new in pairs])))
            for key, pairs in sorted(groups.items(), key=lambda entry: (entry[0][0], -entry[0][1]))}


LABEL_KEYS = ("hands_per_line_up", "line_ups", "labels", "seed")
"""The parts of a :class:`Recipe` the labels depend on (the cache's key: a new fit reuses them)."""


def round_labels(number: int, policy: str, learned: dict[str, PolicyWeights], recipe: Recipe,
                 jobs: int = 1, on_progress: Callable[[int, int], None] | None = None,
                 rules: RuleSet = STANDARD, cache: Path | None = None) -> list[Labelled]:
    """The labelled positions of round ``number`` (positions on seed ``recipe.seed`` × 100 +
    number − 1, labels on ``labels.seed`` + number − 1), from ``cache`` when it holds them for
    the same recipe and labelling policy."""
    key = None
    if cache is not None:
        described = recipe.describe()
        identity = json.dumps([number, policy, learned[policy].digest() if policy in learned
                               else "", {key: described[key] for key in LABEL_KEYS},
                               list(OPTION_FIELDS)],
                              sort_keys=True)
        key = cache / f"round-{number}-{hashlib.sha256(identity.encode()).hexdigest()[:12]}.pkl"
        if key.exists():
            with open(key, "rb") as stream:
                return pickle.load(stream)  # noqa: S301  (our own cache, written below)
    decisions = round_decisions(policy, recipe.hands_by_variant(),
                                recipe.seed * 100 + number - 1, rules)
    labels = replace(recipe.labels, seed=recipe.labels.seed + number - 1)
    items = label_positions(decisions, policy, labels, rules, jobs, learned, on_progress)
    if key is not None:
        key.parent.mkdir(parents=True, exist_ok=True)
        with open(key, "wb") as stream:
            pickle.dump(items, stream)
    return items


def train_round(number: int, policy: str, learned: dict[str, PolicyWeights], recipe: Recipe,
                jobs: int = 1, on_progress: Callable[[int, int], None] | None = None,
                rules: RuleSet = STANDARD, cache: Path | None = None
                ) -> tuple[PolicyWeights, RoundReport]:
    """One round of expert iteration from ``policy`` (a bot name; ``learned`` holds the weights
    of learned bots it needs): positions, labels, fit. Returns the new weights and the round's
    report (without the match, which :func:`train` plays)."""
    started = time.perf_counter()
    items = round_labels(number, policy, learned, recipe, jobs, on_progress, rules, cache)
    out = held_out(len(items), recipe.held_out)
    fitted = [item for item, hidden in zip(items, out, strict=True) if not hidden]
    checked = [item for item, hidden in zip(items, out, strict=True) if hidden]
    weights = fit_weights(fitted, recipe.fit, STEER, {})
    report = RoundReport(number, policy, len(items), time.perf_counter() - started,
                         regret_table(checked, weights))
    return weights, report


def clear_wins(matches: Mapping[str, tuple[float, float]]) -> tuple[str, ...]:
    """The variants whose match (variant name → mean points per hand, standard error) was won
    by more than two standard errors."""
    return tuple(name for name, (mean, error) in matches.items() if mean > 2 * error)


def recorded(matches: Mapping[str, tuple[float, float]]) -> dict[str, list[float]]:
    """Matches (variant name → mean points per hand, standard error) as the weights file
    records them: rounded to 3 decimals."""
    return {name: [round(mean, 3), round(error, 3)] for name, (mean, error) in matches.items()}


def confirmation_seed(recipe: Recipe, number: int, index: int) -> int:
    """The simulator's seed of round ``number``'s confirmation match in the ``index``-th
    variant: never a screening match's seed (``recipe.seed`` × 1000 + ``number`` × 10 +
    ``index``, index < 3) nor another round's."""
    return recipe.seed * 1000 + number * 10 + 5 + index


def kept_by_variant(new: PolicyWeights, previous: PolicyWeights | None,
                    matches: Mapping[str, tuple[float, float]],
                    confirmations: Mapping[str, tuple[float, float]]
                    ) -> tuple[PolicyWeights | None, tuple[str, ...]]:
    """What a round keeps: per variant, ``new``'s weights where they beat the policy they
    started from heads-up by more than two standard errors in the screening match
    (``matches``: variant name → mean points per hand and its standard error) *and* in the
    confirmation match on other deals (``confirmations``, played only where the screening was
    won: a variant missing there is not confirmed), ``previous``'s elsewhere. Each variant's
    weights play only that variant, so the merged policy plays the winner in each. From a
    policy without weights (``previous`` None: a heuristic bot) ``new`` must win in every
    variant. Returns the kept weights (``new`` itself when it won everywhere; None when it won
    nowhere, or not everywhere from a heuristic start) and the variants that took ``new``."""
    confirmed = set(clear_wins(confirmations))
    won = tuple(name for name in clear_wins(matches) if name in confirmed)
    if not won or (previous is None and len(won) < len(matches)):
        return None, won
    if len(won) == len(matches):
        return new, won
    assert previous is not None
    tables = {variant: np.array(new.tables[variant] if variant.value in won
                                else previous.tables[variant]) for variant in new.tables}
    steer = {variant: (new.steer if variant.value in won else previous.steer)[variant]
             for variant in new.tables}
    return PolicyWeights(tables, steer, dict(new.recipe)), won


def confirmation_matches(candidate: str, policy: str,
                         matches: Mapping[str, tuple[float, float]], recipe: Recipe,
                         number: int, rules: RuleSet = STANDARD, jobs: int = 1
                         ) -> dict[str, tuple[float, float]]:
    """``candidate`` against ``policy`` heads-up again (``recipe.match_hands`` hands) on the
    confirmation seeds of round ``number``, in each variant whose screening match (``matches``)
    it won by more than two standard errors: variant name → mean points per hand, standard
    error."""
    screened = set(clear_wins(matches))
    return {variant.value: head_to_head(candidate, policy, variant, recipe.match_hands,
                                        seed=confirmation_seed(recipe, number, index),
                                        rules=rules, jobs=jobs)
            for index, variant in enumerate(Variant) if variant.value in screened}


def train(recipe: Recipe, start: str = "expert", start_weights: PolicyWeights | None = None,
          first_round: int = 1, jobs: int = 1, rules: RuleSet = STANDARD,
          on_round: Callable[[RoundReport], None] | None = None,
          on_progress: Callable[[int, int], None] | None = None,
          cache: Path | None = None) -> tuple[PolicyWeights | None, list[RoundReport]]:
    """Expert iteration from the bot ``start`` (or the learned ``start_weights``): rounds
    ``first_round`` .. ``first_round + recipe.rounds − 1``. A round's fit plays the previous
    policy heads-up in every variant (``recipe.match_hands`` hands each), and again on other
    deals where it won (:func:`confirmation_matches`); from learned weights it is kept in the
    variants where it wins both by more than two standard errors and the previous
    weights stay in the others (:func:`kept_by_variant`: a variant's weights play only that
    variant); from a heuristic bot it must win in every variant. Stops at the first round that
    improves no variant. Returns the last kept weights (``start_weights``, or None, when no
    round was kept) and every round's report."""
    learned: dict[str, PolicyWeights] = {}
    policy = start
    if start_weights is not None:
        policy = register(f"learned-round-{first_round - 1}", start_weights)
        learned[policy] = start_weights
    kept: PolicyWeights | None = start_weights
    reports = []
    for number in range(first_round, first_round + recipe.rounds):
        weights, report = train_round(number, policy, learned, recipe, jobs, on_progress, rules,
                                      cache)
        candidate = register(f"learned-round-{number}", weights)
        for index, variant in enumerate(Variant):
            report.matches[variant.value] = head_to_head(
                candidate, policy, variant, recipe.match_hands,
                seed=recipe.seed * 1000 + number * 10 + index, rules=rules, jobs=jobs)
        report.confirmations = confirmation_matches(candidate, policy, report.matches, recipe,
                                                    number, rules, jobs)
        previous = learned.get(policy)
        merged, report.kept_variants = kept_by_variant(weights, previous, report.matches,
                                                       report.confirmations)
        report.kept = merged is not None
        reports.append(report)
        if on_round:
            on_round(report)
        if merged is None:
            break
        history = dict(kept.recipe.get("rounds", {})) if kept is not None else {}
        history[str(number)] = {
            "labelled_by": policy if policy not in learned else
            f"round {number - 1} ({learned[policy].digest()})",
            "recipe": recipe.describe(), "positions": report.positions,
            "heads_up_against_labelling_policy": recorded(report.matches),
            "confirmation_against_labelling_policy": recorded(report.confirmations),
            "kept_variants": list(report.kept_variants)}
        kept = PolicyWeights(merged.tables, merged.steer, {"rounds": history})
        policy = register(f"learned-round-{number}-kept", kept) if merged is not weights \
            else candidate
        learned[policy] = kept
    return kept, reports


def confirm_round(number: int, start_weights: PolicyWeights, candidate: PolicyWeights,
                  recipe: Recipe, jobs: int = 1, rules: RuleSet = STANDARD
                  ) -> tuple[PolicyWeights, RoundReport]:
    """The confirmation step for a round kept before it existed: ``candidate`` (the weights file
    round ``number`` wrote, its history holding the screening matches' figures) plays
    ``start_weights`` (the weights that round started from) on the round's confirmation seeds
    in the variants whose screening it won, and keeps them only where it wins again by more than two standard
    errors (:func:`kept_by_variant`). Returns the weights the round keeps under this rule
    (``start_weights``' tables wherever it is not confirmed; the history records the
    confirmation figures and the variants kept) and the round's report."""
    history = dict(start_weights.recipe.get("rounds", {}))  # earlier rounds as confirmed
    entry = dict(candidate.recipe.get("rounds", {}).get(str(number), {}))
    if not entry:
        raise ValueError(f"the candidate's weights record no round {number}")
    screening = {name: (float(mean), float(error)) for name, (mean, error)
                 in entry.get("heads_up_against_labelling_policy", {}).items()}
    policy = register(f"learned-round-{number - 1}", start_weights)
    challenger = register(f"learned-round-{number}", candidate)
    report = RoundReport(number, policy, int(entry.get("positions", 0)), matches=screening)
    report.confirmations = confirmation_matches(challenger, policy, screening, recipe, number,
                                                rules, jobs)
    merged, report.kept_variants = kept_by_variant(candidate, start_weights, screening,
                                                   report.confirmations)
    report.kept = merged is not None
    entry["confirmation_against_labelling_policy"] = recorded(report.confirmations)
    entry["kept_variants"] = list(report.kept_variants)
    history[str(number)] = entry
    base = merged if merged is not None else start_weights
    return PolicyWeights(base.tables, base.steer, {"rounds": history}), report


def main(argv: Sequence[str] | None = None) -> int:
    """Train the learned rollout policy and write its weights file (see the module docstring)."""
    import argparse

    from pipeline.simulate.learned import WEIGHTS_FILE, load_weights

    parser = argparse.ArgumentParser(
        prog="python -m pipeline.analysis.training",
        description="Train the learned rollout policy by expert iteration and write its weights "
                    "(docs/grading.md, 'The rollout policy'). Each round labels positions with "
                    "the grader's lookahead under the current policy, fits new weights, and is "
                    "kept in each variant where it beats the current policy heads-up, and again "
                    "on other deals (a confirmation match).")
    default = Recipe()
    parser.add_argument("--round", type=int, default=1,
                        help="the number of the first round to run (its seeds; default 1)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds to run (default 1)")
    parser.add_argument("--start", default="expert",
                        help="the policy the first round improves on: expert (default) or the "
                             "weights file of the previous round")
    parser.add_argument("--hands", default=",".join(f"{name}={count}"
                                                    for name, count in default.hands),
                        help="hands per line-up, by variant (default %(default)s)")
    parser.add_argument("--samples", type=int, default=default.labels.samples,
                        help="rollouts per play of a labelled position (default %(default)s)")
    parser.add_argument("--top-k", type=int, default=default.labels.top_k)
    parser.add_argument("--extra", type=int, default=default.labels.extra)
    parser.add_argument("--temperature", type=float, default=default.fit.temperature)
    parser.add_argument("--ridge", type=float, default=default.fit.ridge)
    parser.add_argument("--match-hands", type=int, default=default.match_hands)
    parser.add_argument("--seed", type=int, default=default.seed)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--cache", type=Path,
                        help="keep each round's labelled positions here (and reuse them)")
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parents[1] / "simulate" / WEIGHTS_FILE,
                        help="the weights file to write (default: the shipped one)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--confirm", type=Path, metavar="FILE",
                        help="no training: play the confirmation matches of round --round's "
                             "weights file FILE (written before confirmation matches existed) "
                             "against --start, and write the weights the round keeps under "
                             "today's rule to --out")
    arguments = parser.parse_args(argv)
    if arguments.round < 1 or arguments.rounds < 1:
        parser.error("--round and --rounds must be at least 1")
    try:
        hands = tuple((Variant.parse(name).value, int(count)) for name, count in
                      (part.split("=") for part in arguments.hands.split(",") if part))
    except ValueError as error:
        parser.error(f"--hands: {error} (expected e.g. pineapple=120,classic=80)")
    recipe = Recipe(
        rounds=arguments.rounds, hands=hands,
        labels=replace(default.labels, samples=arguments.samples, top_k=arguments.top_k,
                       extra=arguments.extra),
        fit=replace(default.fit, temperature=arguments.temperature, ridge=arguments.ridge),
        seed=arguments.seed, match_hands=arguments.match_hands)
    start_weights = None
    if arguments.start != "expert":
        try:
            start_weights = load_weights(Path(arguments.start))
        except (OSError, ValueError) as error:
            parser.error(f"--start: {error}")
    if arguments.confirm is not None:
        if start_weights is None:
            parser.error("--confirm needs --start: the weights file the round started from")
        try:
            candidate = load_weights(arguments.confirm)
            weights, report = confirm_round(arguments.round, start_weights, candidate, recipe,
                                            arguments.jobs)
        except (OSError, ValueError) as error:
            parser.error(f"--confirm: {error}")
        print(_round_text(report))
        arguments.out.write_text(weights.to_json(), encoding="utf-8")
        print(f"wrote {arguments.out} (digest {weights.digest()})")
        return 0
    progress, update = counted_progress("labelling", "positions", not arguments.quiet)

    def on_round(report: RoundReport) -> None:
        if progress is not None:
            progress.console.print(_round_text(report))
        else:
            print(_round_text(report), flush=True)

    started = time.perf_counter()
    try:
        weights, reports = train(recipe, arguments.start, start_weights, arguments.round,
                                 arguments.jobs, on_round=on_round, on_progress=update,
                                 cache=arguments.cache)
    finally:
        if progress is not None:
            progress.stop()
    kept = sum(report.kept for report in reports)
    print(f"{len(reports)} round(s), {kept} kept, "
          f"{sum(report.positions for report in reports):,} positions labelled, "
          f"{time.perf_counter() - started:.0f} s")
    if weights is None or kept == 0:
        print("no round beat the policy it started from: nothing written")
        return 1
    arguments.out.write_text(weights.to_json(), encoding="utf-8")
    print(f"wrote {arguments.out} (digest {weights.digest()})")
    return 0


def _round_text(report: RoundReport) -> str:
    lines = [f"round {report.number} (labels by {report.policy}): {report.positions:,} positions "
             f"in {report.seconds:.0f} s; held-out regret, the labelling policy → the new weights:"]
    lines += [f"  {variant} stage {stage}: {count} positions, {old:.2f} → {new:.2f}"
              for (variant, stage), (count, old, new) in report.regret.items()]
    lines += [f"  heads-up against {report.policy}, {variant}: {mean:+.2f} ± {error:.2f} points/hand"
              for variant, (mean, error) in report.matches.items()]
    lines += [f"  confirmation on other deals, {variant}: {mean:+.2f} ± {error:.2f} points/hand"
              for variant, (mean, error) in report.confirmations.items()]
    if not report.kept:
        lines.append("  not kept: it beats its start, and again on other deals, in no variant "
                     "(or, from a heuristic bot, not in every variant)")
    elif len(report.kept_variants) == len(report.matches):
        lines.append("  kept")
    else:
        lines.append(f"  kept in {', '.join(report.kept_variants)} (the start's weights stay in "
                     "the other variants)")
    return "\n".join(lines)


if __name__ == "__main__":
    # run the imported module's main, so that the labels cached by pickle name its classes
    # (pipeline.analysis.training.Labelled), not this script's copies in __main__
    from pipeline.analysis.training import main as _main

    raise SystemExit(_main())
