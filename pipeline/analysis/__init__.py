"""Decision grading: EV loss per placement by Monte Carlo rollouts, and the Fantasyland solver.

* :mod:`~pipeline.analysis.decisions` — stored hands, and one decision from the player's seat;
* :mod:`~pipeline.analysis.alternatives` — legal alternatives, symmetric ones merged;
* :mod:`~pipeline.analysis.policy` — the simulator's bots playing columns of boards;
* :mod:`~pipeline.analysis.rollout` — sampled futures shared by every alternative;
* :mod:`~pipeline.analysis.grade` — estimates, racing, EV loss and the mistake verdict;
* :mod:`~pipeline.analysis.fantasyland` — Fantasyland hands against the exact setter;
* :mod:`~pipeline.analysis.results` — the grading tables;
* :mod:`~pipeline.analysis.runner` — grading a database (``ofc analyze``).

Layer: imports the rules core, the solver, the simulator's bots (they play the rollouts),
records and the store. Imported by the report, the command line and the dashboard.
"""
