"""The read model: every figure the dashboard, the coaching report and the read commands show,
defined once.

Owns the questions asked of stored hands (SQL lives here and nowhere else on the read side), the
shared filters, the connection and the reader lock, and the pure Plotly charts of the answers.
Modules:

* :mod:`~pipeline.read.source` — the one small interface the model reads through
  (:class:`~pipeline.read.source.Source`: a DuckDB file, or a Parquet lake), the read-only
  connection and the readers/writer lock;
* :mod:`~pipeline.read.lake` — a Parquet lake (``ofc lake build``) as a source: DuckDB views
  over its files, read in place; and ``ofc players`` from the lake's pre-aggregated totals;
* :mod:`~pipeline.read.access` — who may use a served dashboard (a salted password or token
  hash) and the read-only switch that closes the dashboard's one door for writes;
* :mod:`~pipeline.read.scope` — the shared filters and how they become SQL;
* one module per topic: :mod:`~pipeline.read.overview`, :mod:`~pipeline.read.players`,
  :mod:`~pipeline.read.sessions`, :mod:`~pipeline.read.flow`, :mod:`~pipeline.read.hands`,
  :mod:`~pipeline.read.data`, :mod:`~pipeline.read.audit`, :mod:`~pipeline.read.report`,
  :mod:`~pipeline.read.grading`, :mod:`~pipeline.read.live` (live sessions to resume, names
  already stored), :mod:`~pipeline.read.matches` (each match's settlement); each function answers one question and returns a polars
  DataFrame (or a small typed value);
* :mod:`~pipeline.read.charts` — Plotly figures built from those frames (pure; imported on its
  own, so the read commands do not load Plotly).

Who may import it: the coaching report (:mod:`pipeline.report`), the command line, and the
dashboard. It imports :mod:`pipeline.store` (the schema it reads) and :mod:`pipeline.rules`
(row values for the report's Fantasyland threshold), nothing above them and never the dashboard.
Values always travel as SQL parameters, never inside the SQL text.
"""

from __future__ import annotations

from pipeline.read import (
    access,
    audit,
    data,
    flow,
    grading,
    hands,
    live,
    matches,
    overview,
    players,
    report,
    scope,
    sessions,
    source,
)

__all__ = [
    "access", "audit", "data", "flow", "grading", "hands", "live", "matches", "overview", "players",
    "report",
    "scope",
    "sessions", "source",
]
