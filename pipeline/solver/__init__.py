"""The Fantasyland solver: the exact best board from the 13-17 cards of a Fantasyland hand.

Owns setting a Fantasyland hand (and the fast row value tables it shares with the simulator's
bots). Pure computation on cards and rule sets: no files, no database.

Modules:

* :mod:`~pipeline.solver.fantasyland` — :func:`~pipeline.solver.fantasyland.solve_fantasyland`,
  the exact setter (branch and bound over scoring rows);
* :mod:`~pipeline.solver.fantasyland_kernel` — :func:`~pipeline.solver.fantasyland_kernel.solve_deals`,
  the same search compiled with numba over many deals at once (the grader's rollouts; the same
  boards, imported only where numba may load);
* :mod:`~pipeline.solver.tables` — row values as lookup tables built from the rules core.

Layer: imports only :mod:`pipeline.rules`. May be imported by every layer above it (records,
formats, store, ingest, simulate, analysis, read, report, live, cli, the dashboard); today the
simulator and decision grading use it. This package file imports nothing.
"""
