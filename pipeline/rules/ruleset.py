"""House rules as one immutable value: :class:`RuleSet`, its presets, and building one from a mapping.

Every house rule of docs/rules.md is a field here. A rules *file* (TOML) is read elsewhere
(:mod:`pipeline.records.rules_file`); this module only turns an already-parsed mapping into a RuleSet,
with errors that name the offending key. A mapping may ``extends`` a preset.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pipeline.rules.cards import RANKS
from pipeline.rules.values import HIGH_CLASS_LABELS, HandClass, LowClass


class RulesError(ValueError):
    """A rules mapping or file that cannot be used; the message names the key."""


class ScoringMethod(StrEnum):
    """How rows are paid: 1-6 (row points plus a scoop bonus) or 2-4 (plus one for the majority)."""

    ONE_SIX = "1-6"
    TWO_FOUR = "2-4"


class CapScope(StrEnum):
    """What a rules file's ``cap`` limits: each hand's loss, or a player's loss over a match."""

    HAND = "hand"
    MATCH = "match"


class RoyaltyMode(StrEnum):
    """Whether royalties are netted between the two players, or count only for a row's winner."""

    NETTED = "netted"
    WINNER_ONLY = "winner-only"


@dataclass(frozen=True, slots=True)
class ScoringRules:
    """How two boards settle, and how a match is paid.

    ``cap`` is the per-hand cap the scorers apply to every hand (0: none). ``match_cap`` is the
    most a player can lose over one match (0: none), applied only when a match is settled
    (:mod:`pipeline.rules.settlement`), never to a hand's points. A rules file's ``cap`` fills
    one or the other by its ``cap_scope``; under ``cap_scope = "match"`` the file's ``hand_cap``
    is the per-hand cap.
    """

    method: ScoringMethod = ScoringMethod.ONE_SIX
    scoop_bonus: int = 3
    royalty_mode: RoyaltyMode = RoyaltyMode.NETTED
    cap: int = 0
    stake: float = 0.0
    cap_scope: CapScope = CapScope.HAND
    match_cap: int = 0


@dataclass(frozen=True, slots=True)
class RoyaltyRules:
    """Royalty tables. Indexes: rank index 0..12 (deuce..ace) or :class:`HandClass`/:class:`LowClass`."""

    top_pairs: tuple[int, ...]
    top_trips: tuple[int, ...]
    middle: tuple[int, ...]
    bottom: tuple[int, ...]
    lowball_middle: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class FantasylandRules:
    """Fantasyland entry, stay and card counts."""

    enabled: bool = True
    entry_top_pair: int = 10  # rank index of the smallest qualifying top pair (10 = queens)
    progressive: bool = False
    cards_classic: int = 13
    cards_pineapple: int = 14
    progressive_cards: tuple[int, int, int, int] = (14, 15, 16, 17)  # QQ, KK, AA, trips
    stay_top_trips: bool = True
    stay_middle_full_house: bool = True
    stay_bottom_quads: bool = True
    stay_requalify: bool = False
    stay_cards_classic: int = 13
    stay_cards_pineapple: int = 14
    lowball_entry_top_pair: int = 11  # kings
    lowball_cards: int = 14
    lowball_cards_both: int = 15


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every house rule needed to score a hand."""

    name: str
    scoring: ScoringRules
    royalties: RoyaltyRules
    fantasyland: FantasylandRules
    description: str = ""


# --- the standard tables, as mappings (the shape of a rules file) --------------------------
_STANDARD_MAPPING: dict[str, Any] = {
    "name": "standard",
    "description": "docs/rules.md: standard royalties, 1-6 scoring with scoop 3, QQ+ Fantasyland",
    "scoring": {
        "method": "1-6", "scoop_bonus": 3, "royalties": "netted",
        "cap": 0, "cap_scope": "hand", "hand_cap": 0, "match_hands": 0, "stake": 0.0,
    },
    "royalties": {
        "top": {
            "pairs": {"6": 1, "7": 2, "8": 3, "9": 4, "T": 5, "J": 6, "Q": 7, "K": 8, "A": 9},
            "trips": {rank: 10 + index for index, rank in enumerate(RANKS)},
        },
        "middle": {
            "trips": 2, "straight": 4, "flush": 8, "full_house": 12, "quads": 20,
            "straight_flush": 30, "royal_flush": 50,
        },
        "bottom": {
            "straight": 2, "flush": 4, "full_house": 6, "quads": 10,
            "straight_flush": 15, "royal_flush": 25,
        },
        "lowball_middle": {"ten_low": 0, "nine_low": 1, "eight_low": 2, "seven_low": 4, "perfect_low": 8},
    },
    "fantasyland": {
        "enabled": True, "entry_top_pair": "Q", "progressive": False,
        "cards_classic": 13, "cards_pineapple": 14,
        "progressive_cards": {"Q": 14, "K": 15, "A": 16, "trips": 17},
        "stay_top_trips": True, "stay_middle_full_house": True, "stay_bottom_quads": True,
        "stay_requalify": False, "stay_cards_classic": 13, "stay_cards_pineapple": 14,
        "lowball_entry_top_pair": "K", "lowball_cards": 14, "lowball_cards_both": 15,
    },
}

_PRESET_OVERRIDES: dict[str, dict[str, Any]] = {
    "standard": {},
    "progressive": {
        "description": "standard, with progressive Pineapple Fantasyland: QQ 14, KK 15, AA 16, trips 17 cards",
        "fantasyland": {"progressive": True},
    },
    "flat-trips": {
        "description": "standard, but any trips on top pay a flat 20 and middle trips pay nothing",
        "royalties": {
            "top": {"trips": {rank: 20 for rank in RANKS}},
            "middle": {"trips": 0},
        },
    },
    "poker-arena-classic": {
        "description": "the poker-arena engine's classic OFC (game 'ofc'): standard rules",
    },
    "poker-arena-pineapple": {
        "description": "the poker-arena engine's Pineapple: no middle full-house Fantasyland stay",
        "fantasyland": {"stay_middle_full_house": False},
    },
    "poker-arena-progressive": {
        "description": "the poker-arena engine's progressive Pineapple: no middle full-house stay",
        "fantasyland": {"progressive": True, "stay_middle_full_house": False},
    },
    "poker-arena-27": {
        "description": "the poker-arena engine's 2-7 Pineapple",
        "fantasyland": {"stay_middle_full_house": False},
    },
}

PRESET_NAMES: tuple[str, ...] = tuple(_PRESET_OVERRIDES)


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """A new mapping: ``base`` with ``override`` laid over it, tables merged key by key.

    >>> deep_merge({"scoring": {"method": "1-6", "cap": 0}}, {"scoring": {"cap": 30}})
    {'scoring': {'method': '1-6', 'cap': 30}}
    """
    merged = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def preset_mapping(name: str) -> dict[str, Any]:
    """The full mapping of a preset (the shape a rules file has).

    >>> preset_mapping("flat-trips")["royalties"]["middle"]["trips"]
    0
    >>> preset_mapping("poker-arena-pineapple")["fantasyland"]["stay_middle_full_house"]
    False
    """
    if name not in _PRESET_OVERRIDES:
        raise RulesError(f"unknown rules preset {name!r} (presets: {', '.join(PRESET_NAMES)})")
    mapping = deep_merge(_STANDARD_MAPPING, _PRESET_OVERRIDES[name])
    mapping["name"] = name
    return mapping


# --- building a RuleSet from a mapping, with key-naming errors ------------------------------
_RANK_KEYS = {rank: index for index, rank in enumerate(RANKS)} | {"10": 8}
_FIVE_CARD_KEYS = tuple(label for label in HIGH_CLASS_LABELS)
_LOW_KEYS = tuple(low.label for low in LowClass if low is not LowClass.NO_LOW)


def _expect_table(mapping: Any, path: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(mapping, Mapping):
        raise RulesError(f"{path}: expected a table, got {type(mapping).__name__}")
    for key in mapping:
        if key not in allowed:
            raise RulesError(f"{path}.{key}: unknown key (allowed: {', '.join(allowed)})")
    return mapping


MAX_STAKE = 1_000_000
"""Largest ``scoring.stake`` (money per point) a rule set may have (schemas/rules.schema.json)."""
MAX_STAKE_DECIMALS = 12
"""Most decimals a stake may have: money is paid in its last decimal (a cent at the least), so
the finest unit is 10^-12."""


def stake_decimals(stake: Decimal) -> int:
    """How many decimals a finite stake is written with (0.10 and 0.1: 1; 2 and 2.0: 0).

    >>> stake_decimals(Decimal("0.10")), stake_decimals(Decimal("2.0")), stake_decimals(Decimal("1e-13"))
    (1, 0, 13)
    """
    exponent = stake.normalize().as_tuple().exponent if stake else 0
    return max(0, -exponent) if isinstance(exponent, int) else 0


def stake_problem(stake: Decimal) -> str | None:
    """Why ``stake`` (money per point) cannot be used, or None: the one definition of a stake's
    bounds, for rules files and for every settlement (a live session's own stake too).

    >>> stake_problem(Decimal("0.05")) is None, stake_problem(Decimal("NaN"))
    (True, 'must be a finite number ≥ 0 and at most 1,000,000')
    >>> stake_problem(Decimal("1e-13"))
    'has more than 12 decimals'
    """
    if not stake.is_finite() or not 0 <= stake <= MAX_STAKE:
        return f"must be a finite number ≥ 0 and at most {MAX_STAKE:,}"
    if stake_decimals(stake) > MAX_STAKE_DECIMALS:
        return f"has more than {MAX_STAKE_DECIMALS} decimals"
    return None


def _expect_int(value: Any, path: str, minimum: int = 0, maximum: int = 1_000_000) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesError(f"{path}: expected a whole number, got {value!r}")
    if not minimum <= value <= maximum:
        raise RulesError(f"{path}: {value} is outside {minimum}..{maximum}")
    return value


def _expect_bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise RulesError(f"{path}: expected true or false, got {value!r}")
    return value


def _expect_choice(value: Any, path: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise RulesError(f"{path}: expected one of {', '.join(choices)}, got {value!r}")
    return str(value)


def _caps(scoring_table: Mapping[str, Any]) -> tuple[CapScope, int, int]:
    """The scope, the per-hand cap and the match cap a rules mapping's ``[scoring]`` asks for.

    ``cap_scope = "hand"``: ``cap`` caps each hand; ``hand_cap`` must stay 0 (``cap`` already is
    the per-hand cap). ``cap_scope = "match"``: ``cap`` caps a player's loss over a match and
    ``hand_cap`` (default 0) may cap each hand as well. ``match_hands`` is refused: matches are
    marked in the hand records (``match_id``), a count of hands cannot draw their boundaries.
    """
    scope = CapScope(_expect_choice(scoring_table["cap_scope"], "scoring.cap_scope",
                                    tuple(scope.value for scope in CapScope)))
    cap = _expect_int(scoring_table["cap"], "scoring.cap", 0, 1_000_000)
    hand_cap = _expect_int(scoring_table["hand_cap"], "scoring.hand_cap", 0, 1_000_000)
    if scoring_table["match_hands"] != 0:
        raise RulesError(
            "scoring.match_hands: a match is not a count of hands here: the hands of a match "
            "carry its match_id (a boards CSV its match column; a live session is one match), "
            "so leave match_hands out"
        )
    if scope is CapScope.HAND:
        if hand_cap != 0:
            raise RulesError(
                'scoring.hand_cap: only with cap_scope = "match" (under cap_scope = "hand", cap '
                "itself is the per-hand cap)"
            )
        return scope, cap, 0
    return scope, hand_cap, cap


def _expect_rank(value: Any, path: str) -> int:
    if not isinstance(value, str) or value.upper() not in _RANK_KEYS:
        raise RulesError(f"{path}: expected a rank such as \"Q\", got {value!r}")
    return _RANK_KEYS[value.upper()]


def _rank_table(mapping: Any, path: str) -> tuple[int, ...]:
    table = _expect_table(mapping, path, tuple(_RANK_KEYS) + tuple(rank.lower() for rank in RANKS))
    points = [0] * 13
    for key, value in table.items():
        points[_RANK_KEYS[key.upper()]] = _expect_int(value, f"{path}.{key}", -1000, 1000)
    return tuple(points)


def _class_table(mapping: Any, path: str) -> tuple[int, ...]:
    table = _expect_table(mapping, path, _FIVE_CARD_KEYS)
    points = [0] * len(HandClass)
    for key, value in table.items():
        points[HIGH_CLASS_LABELS.index(key)] = _expect_int(value, f"{path}.{key}", -1000, 1000)
    return tuple(points)


def _low_table(mapping: Any, path: str) -> tuple[int, ...]:
    table = _expect_table(mapping, path, _LOW_KEYS)
    points = [0] * len(LowClass)
    for key, value in table.items():
        points[LowClass[key.upper()]] = _expect_int(value, f"{path}.{key}", -1000, 1000)
    return tuple(points)


_TOP_KEYS = ("name", "description", "extends", "scoring", "royalties", "fantasyland")
_SCORING_KEYS = ("method", "scoop_bonus", "royalties", "cap", "cap_scope", "hand_cap",
                 "match_hands", "stake")
_ROYALTY_KEYS = ("top", "middle", "bottom", "lowball_middle")
_FANTASYLAND_KEYS = tuple(_STANDARD_MAPPING["fantasyland"])


def ruleset_from_mapping(mapping: Mapping[str, Any], default_name: str = "custom") -> RuleSet:
    """Build a :class:`RuleSet` from a rules mapping (a parsed rules file).

    ``extends`` names a preset to start from (default ``standard``); the mapping's keys are laid
    over it. Unknown keys and wrong types raise :class:`RulesError` naming the key.

    >>> rules = ruleset_from_mapping(
    ...     {"extends": "progressive", "scoring": {"scoop_bonus": 6, "cap": 30}}, "friday")
    >>> rules.name, rules.scoring.scoop_bonus, rules.scoring.cap, rules.fantasyland.progressive
    ('friday', 6, 30, True)
    >>> ruleset_from_mapping({"scoring": {"scoop": 6}})
    Traceback (most recent call last):
        ...
    pipeline.rules.ruleset.RulesError: scoring.scoop: unknown key (allowed: method, scoop_bonus, royalties, cap, cap_scope, hand_cap, match_hands, stake)

    A cap over a match leaves every hand uncapped and limits the settlement of each match
    (:mod:`pipeline.rules.settlement`):

    >>> match = ruleset_from_mapping({"scoring": {"cap": 30, "cap_scope": "match"}})
    >>> match.scoring.cap, match.scoring.match_cap, match.scoring.cap_scope.value
    (0, 30, 'match')
    """
    _expect_table(mapping, "rules", _TOP_KEYS)
    base_name = mapping.get("extends", "standard")
    if not isinstance(base_name, str):
        raise RulesError(f"extends: expected a preset name, got {base_name!r}")
    if base_name not in _PRESET_OVERRIDES:
        raise RulesError(f"extends: unknown preset {base_name!r} (presets: {', '.join(PRESET_NAMES)})")
    overlay = {key: value for key, value in mapping.items() if key != "extends"}
    for section in ("scoring", "royalties", "fantasyland"):
        if section in overlay and not isinstance(overlay[section], Mapping):
            raise RulesError(f"{section}: expected a table, got {type(overlay[section]).__name__}")
    merged = deep_merge(preset_mapping(base_name), overlay)
    if "name" not in mapping:
        merged["name"] = default_name if mapping.get("extends") or len(mapping) else base_name
    return _build(merged)


def _build(mapping: Mapping[str, Any]) -> RuleSet:
    name = mapping.get("name")
    if not isinstance(name, str) or not name:
        raise RulesError(f"name: expected text, got {name!r}")
    description = mapping.get("description", "")
    if not isinstance(description, str):
        raise RulesError(f"description: expected text, got {description!r}")

    scoring_table = _expect_table(mapping["scoring"], "scoring", _SCORING_KEYS)
    cap_scope, hand_cap, match_cap = _caps(scoring_table)
    stake = scoring_table["stake"]
    if isinstance(stake, bool) or not isinstance(stake, int | float):
        raise RulesError(f"scoring.stake: expected a number, got {stake!r}")
    problem = stake_problem(Decimal(repr(stake)))  # a float by its shortest text, as written
    if problem is not None:
        raise RulesError(f"scoring.stake: {stake!r} {problem}")
    scoring = ScoringRules(
        method=ScoringMethod(_expect_choice(scoring_table["method"], "scoring.method", ("1-6", "2-4"))),
        scoop_bonus=_expect_int(scoring_table["scoop_bonus"], "scoring.scoop_bonus", 0, 100),
        royalty_mode=RoyaltyMode(
            _expect_choice(scoring_table["royalties"], "scoring.royalties", ("netted", "winner-only"))
        ),
        cap=hand_cap,
        stake=float(stake),
        cap_scope=cap_scope,
        match_cap=match_cap,
    )

    royalty_table = _expect_table(mapping["royalties"], "royalties", _ROYALTY_KEYS)
    top_table = _expect_table(royalty_table["top"], "royalties.top", ("pairs", "trips"))
    royalties = RoyaltyRules(
        top_pairs=_rank_table(top_table.get("pairs", {}), "royalties.top.pairs"),
        top_trips=_rank_table(top_table.get("trips", {}), "royalties.top.trips"),
        middle=_class_table(royalty_table["middle"], "royalties.middle"),
        bottom=_class_table(royalty_table["bottom"], "royalties.bottom"),
        lowball_middle=_low_table(royalty_table["lowball_middle"], "royalties.lowball_middle"),
    )

    fl = _expect_table(mapping["fantasyland"], "fantasyland", _FANTASYLAND_KEYS)
    progressive_table = _expect_table(
        fl["progressive_cards"], "fantasyland.progressive_cards", ("Q", "K", "A", "trips")
    )

    def cards(key: str) -> int:
        return _expect_int(fl[key], f"fantasyland.{key}", 13, 17)

    progressive_cards = tuple(
        _expect_int(progressive_table[key], f"fantasyland.progressive_cards.{key}", 13, 17)
        for key in ("Q", "K", "A", "trips")
    )
    fantasyland = FantasylandRules(
        enabled=_expect_bool(fl["enabled"], "fantasyland.enabled"),
        entry_top_pair=_expect_rank(fl["entry_top_pair"], "fantasyland.entry_top_pair"),
        progressive=_expect_bool(fl["progressive"], "fantasyland.progressive"),
        cards_classic=cards("cards_classic"),
        cards_pineapple=cards("cards_pineapple"),
        progressive_cards=progressive_cards,  # type: ignore[arg-type]
        stay_top_trips=_expect_bool(fl["stay_top_trips"], "fantasyland.stay_top_trips"),
        stay_middle_full_house=_expect_bool(fl["stay_middle_full_house"], "fantasyland.stay_middle_full_house"),
        stay_bottom_quads=_expect_bool(fl["stay_bottom_quads"], "fantasyland.stay_bottom_quads"),
        stay_requalify=_expect_bool(fl["stay_requalify"], "fantasyland.stay_requalify"),
        stay_cards_classic=cards("stay_cards_classic"),
        stay_cards_pineapple=cards("stay_cards_pineapple"),
        lowball_entry_top_pair=_expect_rank(fl["lowball_entry_top_pair"], "fantasyland.lowball_entry_top_pair"),
        lowball_cards=cards("lowball_cards"),
        lowball_cards_both=cards("lowball_cards_both"),
    )
    return RuleSet(name=name, scoring=scoring, royalties=royalties, fantasyland=fantasyland,
                   description=description)


def ruleset_to_mapping(rules: RuleSet) -> dict[str, Any]:
    """The full rules mapping of a rule set (every key, no ``extends``), the shape of a rules
    file: :func:`ruleset_from_mapping` builds the same rule set back from it, so a rule set can
    be kept as JSON (a database records the rule sets it scored with) and rebuilt.

    >>> rules = ruleset_from_mapping({"scoring": {"cap": 50, "cap_scope": "match",
    ...                                          "hand_cap": 20, "stake": 0.05}}, "club")
    >>> ruleset_to_mapping(rules)["scoring"]
    {'method': '1-6', 'scoop_bonus': 3, 'royalties': 'netted', 'cap': 50, 'cap_scope': 'match', 'hand_cap': 20, 'match_hands': 0, 'stake': 0.05}
    >>> ruleset_from_mapping(ruleset_to_mapping(rules)) == rules
    True
    """
    scoring = rules.scoring
    by_match = scoring.cap_scope is CapScope.MATCH
    royalties = rules.royalties
    fantasyland = rules.fantasyland
    progressive = fantasyland.progressive_cards
    return {
        "name": rules.name,
        "description": rules.description,
        "scoring": {
            "method": scoring.method.value, "scoop_bonus": scoring.scoop_bonus,
            "royalties": scoring.royalty_mode.value,
            "cap": scoring.match_cap if by_match else scoring.cap,
            "cap_scope": scoring.cap_scope.value,
            "hand_cap": scoring.cap if by_match else 0,
            "match_hands": 0, "stake": scoring.stake,
        },
        "royalties": {
            "top": {"pairs": dict(zip(RANKS, royalties.top_pairs, strict=True)),
                    "trips": dict(zip(RANKS, royalties.top_trips, strict=True))},
            "middle": dict(zip(HIGH_CLASS_LABELS, royalties.middle, strict=True)),
            "bottom": dict(zip(HIGH_CLASS_LABELS, royalties.bottom, strict=True)),
            "lowball_middle": {key: royalties.lowball_middle[LowClass[key.upper()]]
                               for key in _LOW_KEYS},
        },
        "fantasyland": {
            "enabled": fantasyland.enabled,
            "entry_top_pair": RANKS[fantasyland.entry_top_pair],
            "progressive": fantasyland.progressive,
            "cards_classic": fantasyland.cards_classic,
            "cards_pineapple": fantasyland.cards_pineapple,
            "progressive_cards": dict(zip(("Q", "K", "A", "trips"), progressive, strict=True)),
            "stay_top_trips": fantasyland.stay_top_trips,
            "stay_middle_full_house": fantasyland.stay_middle_full_house,
            "stay_bottom_quads": fantasyland.stay_bottom_quads,
            "stay_requalify": fantasyland.stay_requalify,
            "stay_cards_classic": fantasyland.stay_cards_classic,
            "stay_cards_pineapple": fantasyland.stay_cards_pineapple,
            "lowball_entry_top_pair": RANKS[fantasyland.lowball_entry_top_pair],
            "lowball_cards": fantasyland.lowball_cards,
            "lowball_cards_both": fantasyland.lowball_cards_both,
        },
    }


def with_match_cap(rules: RuleSet, cap: int) -> RuleSet:
    """The rule set with a match cap of ``cap`` points (``cap_scope = "match"``; 0: none) and
    its per-hand cap kept as ``hand_cap``, named ``<name>+match-cap-<cap>`` (the live recorder's
    setup offers a match cap on top of a preset).

    >>> club = with_match_cap(preset("standard"), 30)
    >>> club.name, club.scoring.match_cap, club.scoring.cap, club.scoring.cap_scope.value
    ('standard+match-cap-30', 30, 0, 'match')
    """
    mapping = ruleset_to_mapping(rules)
    mapping["scoring"].update(cap=_expect_int(cap, "match cap", 0, 1_000_000),
                              cap_scope=CapScope.MATCH.value,
                              hand_cap=rules.scoring.cap if rules.scoring.cap_scope is
                              CapScope.HAND else mapping["scoring"]["hand_cap"])
    mapping["name"] = f"{rules.name}+match-cap-{cap}"
    return ruleset_from_mapping(mapping)


_PRESET_CACHE: dict[str, RuleSet] = {}


def preset(name: str) -> RuleSet:
    """A built-in rule set by name (``standard``, ``progressive``, ``flat-trips``, ``poker-arena-*``).

    >>> standard = preset("standard")
    >>> standard.scoring.method.value, standard.scoring.scoop_bonus, standard.scoring.royalty_mode.value
    ('1-6', 3, 'netted')
    >>> standard.royalties.top_pairs[-1], preset("flat-trips").royalties.top_trips[-1]  # AA, AAA
    (9, 20)
    >>> preset("progressive").fantasyland.progressive_cards  # QQ, KK, AA, trips
    (14, 15, 16, 17)
    """
    if name not in _PRESET_CACHE:
        _PRESET_CACHE[name] = _build(preset_mapping(name))
    return _PRESET_CACHE[name]


STANDARD = preset("standard")
