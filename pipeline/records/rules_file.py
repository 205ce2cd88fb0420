"""Reading rule sets by name or from TOML files (the I/O edge of :mod:`pipeline.rules.ruleset`)."""

from __future__ import annotations

import json
import math
import stat
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.rules.ruleset import PRESET_NAMES, RulesError, RuleSet, preset, ruleset_from_mapping

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import jsonschema

SCHEMA_PACKAGE = "pipeline.schemas"
"""The top-level ``schemas/`` folder as installed: pyproject.toml ships it as this package."""

_CHECKOUT = Path(__file__).resolve().parents[2]


def schema_directory() -> Traversable:
    """The folder of the JSON schemas (``schemas/`` at the top of the repository).

    Run from a source checkout (an editable install, or the checkout on ``PYTHONPATH``) it is the
    folder beside ``pipeline/``, so the schemas always match the code that runs (there the package
    ``pipeline.schemas`` does not import: the checkout has no such folder, and setuptools' editable
    finder does not resolve the mapped one). An installed copy (``pip install .``) reads the same
    files from the package ``pipeline.schemas`` (tests/test_install.py checks both).
    """
    checkout = _CHECKOUT / "schemas"
    if checkout.is_dir() and (_CHECKOUT / "pyproject.toml").is_file():
        return checkout
    from importlib.resources import files  # here: ofc score of preset rules starts sooner

    return files(SCHEMA_PACKAGE)


@cache
def _rules_validator() -> jsonschema.Draft202012Validator:
    import jsonschema  # here: only a rules file needs it (``ofc score`` of preset rules starts sooner)

    text = (schema_directory() / "rules.schema.json").read_text(encoding="utf-8")
    return jsonschema.Draft202012Validator(json.loads(text))


def _non_finite_key(value: Any, path: str = "") -> str | None:
    """The key of the first nan or infinite number in a parsed rules file, if any (TOML allows
    ``nan`` and ``inf``; JSON Schema cannot refuse them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return path or "(top level)"
    if isinstance(value, dict):
        for key, item in value.items():
            found = _non_finite_key(item, f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _non_finite_key(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


_CAP_KEYS = ("cap", "cap_scope", "hand_cap", "match_hands")


def validate_rules_mapping(mapping: dict[str, Any], source: str = "rules") -> None:
    """Check a parsed rules file against ``schemas/rules.schema.json``; raise naming the key.

    Numbers must be finite: ``stake = nan`` or ``inf`` is refused here (the schema cannot say so).
    """
    non_finite = _non_finite_key(mapping)
    if non_finite is not None:
        raise RulesError(f"{source}: {non_finite}: expected a finite number, got nan or infinity")
    scoring = mapping.get("scoring")
    if isinstance(scoring, dict) and ("hand_cap" in scoring or "match_hands" in scoring):
        # The caps' own reasons say why a hand_cap without a match cap, or a match_hands, is
        # refused (the schema would only say "greater than the maximum of 0").
        try:
            ruleset_from_mapping({"scoring": {key: scoring[key] for key in _CAP_KEYS
                                              if key in scoring}})
        except RulesError as error:
            raise RulesError(f"{source}: {error}") from None
    errors = sorted(_rules_validator().iter_errors(mapping), key=lambda error: list(error.path))
    if not errors:
        return
    error = errors[0]
    key = ".".join(str(part) for part in error.path)
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        name = ".".join(filter(None, [key, extra[0] if extra else ""]))
        raise RulesError(f"{source}: {name}: unknown key")
    raise RulesError(f"{source}: {key or '(top level)'}: {error.message}")


MAX_RULES_FILE_BYTES = 1 << 20
"""The largest rules file read (one with every key is under 2 KB): a larger file, a device or a
pipe given as one is refused before it is read whole."""


def load_rules_file(path: str | Path) -> RuleSet:
    """Read and validate a TOML rules file; the rule set is named after the file unless it says.
    At most :data:`MAX_RULES_FILE_BYTES` of a regular file are read."""
    import tomllib  # here: ofc score of preset rules starts sooner

    path = Path(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a device or a pipe: never read (nor waited on)
            raise RulesError(f"rules file {path} is not a regular file")
        with path.open("rb") as file:
            data = file.read(MAX_RULES_FILE_BYTES + 1)
    except OSError as error:
        raise RulesError(f"cannot read rules file {path}: {error.strerror or error}") from error
    if len(data) > MAX_RULES_FILE_BYTES:
        raise RulesError(f"rules file {path} is larger than 1 MiB: not a rules file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RulesError(f"rules file {path} is not UTF-8 text") from error
    try:
        mapping = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RulesError(f"rules file {path} is not valid TOML: {error}") from error
    validate_rules_mapping(mapping, str(path))
    try:
        return ruleset_from_mapping(mapping, default_name=path.stem)
    except RulesError as error:
        raise RulesError(f"{path}: {error}") from error


def resolve_rules(name_or_path: str | Path) -> RuleSet:
    """A preset by name, or a rules file by path (``.toml``)."""
    text = str(name_or_path)
    if text in PRESET_NAMES:
        return preset(text)
    path = Path(text)
    if path.suffix == ".toml" or path.exists():
        return load_rules_file(path)
    raise RulesError(
        f"unknown rules {text!r}: not a preset ({', '.join(PRESET_NAMES)}) and no such file"
    )


class RulesResolver:
    """Resolves the ``rules`` name a record carries, with an optional override, caching results.

    A name is a preset, or a rules file ``<name>.toml`` found in one of ``search_directories``
    (for ``ofc score``: the input file's folder, then the current folder; for decision grading:
    the current folder, the database's and each source file's). Ingest searches no folder: a
    record's rules name must be a preset unless an override is given.
    """

    def __init__(
        self,
        override: RuleSet | None = None,
        search_directories: tuple[Path, ...] | list[Path] = (),
    ) -> None:
        """``override`` replaces every record's rules; ``search_directories`` hold named rules files."""
        self.override = override
        self.search_directories = tuple(Path(directory) for directory in search_directories)
        self._cache: dict[str, RuleSet] = {}

    def __call__(self, name: str) -> RuleSet:
        """The rule set for a record's ``rules`` field (raises RulesError when unknown)."""
        if self.override is not None:
            return self.override
        if name not in self._cache:
            self._cache[name] = self._find(name)
        return self._cache[name]

    def _find(self, name: str) -> RuleSet:
        if name in PRESET_NAMES:
            return preset(name)
        if name and "/" not in name and "\\" not in name and not name.startswith("."):
            for directory in self.search_directories:
                candidate = directory / f"{name}.toml"
                if candidate.is_file():
                    return load_rules_file(candidate)
        where = (
            f" and no {name}.toml rules file in " + ", ".join(str(d) for d in self.search_directories)
            if self.search_directories else " (give --rules FILE to score it under a rules file)"
        )
        raise RulesError(
            f"unknown rules {name!r}: not a preset ({', '.join(PRESET_NAMES)}){where}"
        )
