"""The coaching report: one player's play, explained with evidence.

:func:`create_report` asks the database (through :mod:`pipeline.read`) and builds a
:class:`Report` with the pure findings engine; :mod:`pipeline.report.render` writes it as HTML
(self-contained, works offline), Markdown or JSON, all from the same numbers.

Layer: reads only through :mod:`pipeline.read` (and its charts); imports no storage code of its
own. Imported by the command line and the dashboard's Coaching report page.
"""

from __future__ import annotations

from dataclasses import replace

from pipeline.read.source import Database
from pipeline.report.data import NoHandsError, ReportData, gather_report_data
from pipeline.report.findings import build_report
from pipeline.report.grading import grading_section
from pipeline.report.model import (
    DEFAULT_SETTINGS,
    Finding,
    Report,
    ReportRequest,
    ReportSettings,
    report_dict,
)
from pipeline.report.money import match_money_section

__all__ = [
    "DEFAULT_SETTINGS", "Finding", "NoHandsError", "Report", "ReportData", "ReportRequest", "ReportSettings",
    "build_report", "create_report", "gather_report_data", "report_dict",
]


def create_report(db: Database, request: ReportRequest,
                  settings: ReportSettings = DEFAULT_SETTINGS) -> Report:
    """Read what the report needs from ``db`` and build it; NoHandsError when there is nothing."""
    data = gather_report_data(db, request, settings)
    return replace(build_report(data, request, settings), grading=grading_section(data.grading),
                   money=match_money_section(db, request.names, request.since, request.until))
