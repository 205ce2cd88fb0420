"""Rules files: non-finite numbers are refused, and the schema and the code agree on every bound.

Before: ``stake = nan`` or ``inf`` was accepted (only ``ofc record`` noticed later), and ``cap``
had no maximum in schemas/rules.schema.json while the code refused more than 1,000,000.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.records.rules_file import load_rules_file, schema_directory, validate_rules_mapping
from pipeline.rules.ruleset import RulesError, ruleset_from_mapping


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "+nan"])
def test_a_non_finite_stake_is_refused(value: str, tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text(f"[scoring]\nstake = {value}\n", encoding="utf-8")
    with pytest.raises(RulesError, match=r"scoring\.stake: expected a finite number"):
        load_rules_file(path)
    with pytest.raises(RulesError, match=r"scoring\.stake"):
        ruleset_from_mapping({"scoring": {"stake": float(value)}})


def test_a_non_finite_number_anywhere_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text("[royalties.middle]\nflush = inf\n", encoding="utf-8")
    with pytest.raises(RulesError, match=r"royalties\.middle\.flush: expected a finite number"):
        load_rules_file(path)


def numeric_keys(node: dict[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict]]:
    """(key path, schema) of every number the rules schema describes (one key for rank tables)."""
    if node.get("type") in ("integer", "number"):
        yield path, node
    for key, child in node.get("properties", {}).items():
        yield from numeric_keys(child, (*path, key))
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        yield from numeric_keys(extra, (*path, node["propertyNames"]["enum"][-1]))


def nested(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    mapping: dict[str, Any] = {}
    inner = mapping
    for key in path[:-1]:
        inner = inner.setdefault(key, {})
    inner[path[-1]] = value
    return mapping


def schema_accepts(mapping: dict[str, Any]) -> bool:
    try:
        validate_rules_mapping(mapping)
    except RulesError:
        return False
    return True


def code_accepts(mapping: dict[str, Any]) -> bool:
    try:
        ruleset_from_mapping(mapping)
    except RulesError:
        return False
    return True


SCHEMA = json.loads((schema_directory() / "rules.schema.json").read_text(encoding="utf-8"))
KEYS = list(numeric_keys(SCHEMA))


def test_every_number_in_the_schema_has_both_bounds() -> None:
    assert len(KEYS) > 30
    for path, node in KEYS:
        assert "minimum" in node and "maximum" in node, ".".join(path)


@pytest.mark.parametrize(("path", "node"), KEYS, ids=[".".join(path) for path, _ in KEYS])
def test_schema_and_code_agree_on_the_bounds(path: tuple[str, ...], node: dict) -> None:
    low, high = node["minimum"], node["maximum"]
    for value in (low, high, low - 1, high + 1, (low + high) // 2):
        mapping = nested(path, value)
        if path == ("scoring", "hand_cap"):  # a per-hand cap beside a match cap only
            mapping["scoring"]["cap_scope"] = "match"
        # the code refuses a stray match_hands and Fantasyland sizes its variants never deal with its own
        # reason; both sides must still agree on whether the value is in range
        assert schema_accepts(mapping) == code_accepts(mapping), (path, value)
    highest, beyond = nested(path, high), nested(path, high + 1)
    if path == ("scoring", "hand_cap"):
        highest["scoring"]["cap_scope"] = beyond["scoring"]["cap_scope"] = "match"
    assert schema_accepts(highest) and not schema_accepts(beyond)
