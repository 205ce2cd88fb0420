"""Decision grading: EV loss per placement by Monte Carlo rollouts, and the Fantasyland solver.

* :mod:`~pipeline.analysis.decisions` — stored hands, and one decision from the player's seat;
* :mod:`~pipeline.analysis.alternatives` — legal alternatives, symmetric ones merged;
* :mod:`~pipeline.analysis.policy` — the simulator's bots playing columns of boards;
* :mod:`~pipeline.analysis.rollout` — sampled futures shared by every alternative (two
  independent streams: selection and evaluation);
* :mod:`~pipeline.analysis.exact` — exact endgames: every deal of the unseen cards;
* :mod:`~pipeline.analysis.grade` — estimates, racing, the unbiased EV loss, the mistake verdict
  and its type;
* :mod:`~pipeline.analysis.fantasyland` — Fantasyland hands against the exact setter;
* :mod:`~pipeline.analysis.results` — the grading tables;
* :mod:`~pipeline.analysis.runner` — grading a database (``ofc analyze``);
* :mod:`~pipeline.analysis.trainer` — quiz answers checked against a grade and stored.

Layer: imports the rules core, the solver, the simulator's bots (they play the rollouts),
records and the store. Imported by the report, the command line and the dashboard.
"""
