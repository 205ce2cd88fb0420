"""Shared helpers for the simulator tests: run small simulations and read their records."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pipeline.simulate.simulation import SimulationConfig, simulate


def records_of(config: SimulationConfig, **options: Any) -> list[dict[str, Any]]:
    """Every hand record a simulation writes, parsed, in file order."""
    return [json.loads(line) for line in lines_of(config, **options)]


def lines_of(config: SimulationConfig, **options: Any) -> list[str]:
    """Every JSON line a simulation writes, in file order."""
    lines = []
    for output in simulate(config, **options):
        lines += output.lines.decode("utf-8").splitlines()
    return lines


def when(record: dict[str, Any]) -> datetime:
    """A record's start time."""
    return datetime.fromisoformat(record["started_at"])


def sessions_of(records: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Records grouped into sessions: same table, same seats, consecutive in the file."""
    sessions: list[list[dict[str, Any]]] = []
    for record in records:
        seats = [player["name"] for player in record["players"]]
        previous = sessions[-1][-1] if sessions else None
        if (
            previous is not None
            and previous["table"] == record["table"]
            and [player["name"] for player in previous["players"]] == seats
            and (when(record) - when(previous)).total_seconds() < 3600
        ):
            sessions[-1].append(record)
        else:
            sessions.append([record])
    return sessions
