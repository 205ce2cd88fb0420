"""The worked examples in the rules core's docstrings run and give what they say.

Every module of pipeline/rules/ (the package itself included) must hold at least one example,
so a module whose examples were lost fails here instead of passing with nothing to check.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil

import pytest

import pipeline.rules

MODULES = ["pipeline.rules"] + sorted(
    info.name for info in pkgutil.iter_modules(pipeline.rules.__path__, "pipeline.rules.")
)


def test_every_module_of_the_rules_core_is_listed():
    # the list is built from the folder; guard against an empty or broken discovery
    assert {"pipeline.rules.cards", "pipeline.rules.values", "pipeline.rules.board",
            "pipeline.rules.scoring", "pipeline.rules.ruleset", "pipeline.rules.batch",
            "pipeline.rules.game"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder().find(module)
    examples = sum(len(test.examples) for test in tests)
    assert examples > 0, f"{name} has no docstring examples"

    report = io.StringIO()
    runner = doctest.DocTestRunner(verbose=False)
    for test in tests:
        runner.run(test, out=report.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, report.getvalue()
    assert result.attempted == examples
