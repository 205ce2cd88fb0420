"""The simulator: a dealer and bots with distinct styles (the exact Fantasyland setter they use
lives in :mod:`pipeline.solver`).

* :func:`solve_fantasyland` — re-exported from :mod:`pipeline.solver.fantasyland`;
* :class:`SimulationConfig`, :func:`simulate`, :func:`write_simulation` — play planned sessions
  and write canonical JSON Lines (``ofc simulate``);
* :data:`BOTS` — the bot registry (``solid``, ``chaser``, ``random``; ``drifter``, whose style
  changes halfway through a run; ``expert``, the grader's rollout policy).

The names are loaded on first use, so importing one submodule (the CLI lists the bots) does not
build every lookup table.

Layer: imports the rules core and the solver only. Imported by decision grading (the bots play
the rollouts), the command line and the demo (as a child process).
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "BOTS": "bots", "DEFAULT_BOTS": "bots", "Bot": "bots", "HeuristicBot": "bots",
    "RandomBot": "bots", "Style": "bots", "DriftingBot": "bots",
    "DEFAULT_STAY_VALUE": "pipeline.solver.fantasyland",
    "Arrangement": "pipeline.solver.fantasyland",
    "solve_fantasyland": "pipeline.solver.fantasyland",
    "BotStats": "simulation", "SessionOutput": "simulation", "SimulationConfig": "simulation",
    "SimulationError": "simulation", "simulate": "simulation",
    "RunSummary": "writer", "write_simulation": "writer",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use."""
    if name not in _HOMES:
        raise AttributeError(f"module 'pipeline.simulate' has no attribute {name!r}")
    home = _HOMES[name]
    module = home if "." in home else f"pipeline.simulate.{home}"
    return getattr(importlib.import_module(module), name)
