"""Cheap synthetic data for the statistics layer: boards with known states and values, and a
player's hands over sessions whose mix of games changes while the play does not."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from pipeline.report.balance import STATES

# per state: share, mean value, royalty part mean, value SD
STYLE_SOLID = {"fantasyland": (0.12, 24.0, 14.0, 12.0), "foul": (0.20, -15.0, -4.0, 6.0),
               "standing": (0.68, 2.5, -0.5, 9.0)}
STYLE_RANDOM = {"fantasyland": (0.01, 20.0, 12.0, 12.0), "foul": (0.72, -17.0, -5.0, 6.0),
                "standing": (0.27, -3.0, -2.0, 9.0)}


def boards(style: dict[str, tuple[float, float, float, float]], count: int,
           generator: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(state index, value, royalty part) of ``count`` boards."""
    shares = np.array([style[s][0] for s in STATES])
    state = generator.choice(3, size=count, p=shares / shares.sum())
    means = np.array([style[s][1] for s in STATES])[state]
    royalty_means = np.array([style[s][2] for s in STATES])[state]
    spreads = np.array([style[s][3] for s in STATES])[state]
    royalty = np.round(royalty_means + generator.normal(0, 2, count))
    value = np.round(means + generator.normal(0, 1, count) * spreads)
    return state, value, royalty


def state_frame(player: str, variant: str, player_count: int, state: np.ndarray,
                value: np.ndarray, royalty: np.ndarray,
                fantasyland_next: np.ndarray | None = None) -> pl.DataFrame:
    """Rows shaped like :func:`pipeline.read.report.report_state_totals`."""
    rows = []
    following = np.zeros(state.size, dtype=bool) if fantasyland_next is None else fantasyland_next
    for index, name in enumerate(STATES):
        mask = state == index
        if not mask.any():
            continue
        v, u = value[mask], royalty[mask]
        rows.append({"player": player, "variant": variant, "player_count": player_count,
                     "position": 0, "rules": "standard", "state": name,
                     "boards": int(mask.sum()), "value": float(v.sum()),
                     "value_sq": float((v * v).sum()), "royalty": float(u.sum()),
                     "royalty_sq": float((u * u).sum()), "value_royalty": float((u * v).sum()),
                     "fantasyland_next": int(following[mask].sum()),
                     "pairings": int(mask.sum()) * (player_count - 1),
                     "settled": int(v.sum())})
    return pl.DataFrame(rows)


@dataclass(frozen=True)
class Hands:
    """A player's hands: value, foul, stratum, session number, session id."""

    points: np.ndarray
    foul: np.ndarray
    strata: list[str]
    session_number: np.ndarray
    sessions: list[str]


def changing_mix(seed: int, sessions: int = 18, foul_shift: float = 0.0,
                 shift_from: int | None = None) -> Hands:
    """A player with a fixed style whose games drift from Classic to Pineapple over the
    sessions: Pineapple fouls more and pays less, so a naive trend "gets worse". With
    ``foul_shift`` the foul rate really rises by that much from session ``shift_from`` on."""
    generator = np.random.default_rng(seed)
    points, fouls, strata, numbers, ids = [], [], [], [], []
    for session in range(sessions):
        pineapple = generator.random() < session / (sessions - 1)
        variant = "pineapple/3" if pineapple else "classic/3"
        count = int(generator.integers(40, 121))
        rate = 0.26 if pineapple else 0.15
        if shift_from is not None and session >= shift_from:
            rate += foul_shift
        foul = generator.random(count) < rate
        value = np.where(foul, -14.0, 2.0) + generator.normal(0, 8, count)
        value += (-0.5 if pineapple else 0.8) + generator.normal(0, 1.5)  # table effect
        points.append(np.round(value))
        fouls.append(foul.astype(float))
        strata += [variant] * count
        numbers.append(np.full(count, session + 1.0))
        ids += [f"S{session}"] * count
    return Hands(np.concatenate(points), np.concatenate(fouls), strata,
                 np.concatenate(numbers), ids)
