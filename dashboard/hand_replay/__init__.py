"""The hand replay: a small custom component (Streamlit components v2) that draws one hand street
by street in the browser.

The page sends the whole hand once — every player's cards street by street, the final verdicts,
the graded decisions — and a step from one street to another redraws in the browser, with no
server round trip (as the card pad answers a tap: :mod:`dashboard.card_pad`). The graded decisions
of a street are drawn with that street, under the player's board.

:func:`replay_data` builds what the component gets from the read model's frames (a pure function,
tested on its own); :func:`hand_replay` draws it. Names and card tokens are untrusted: the
JavaScript only ever sets them as ``textContent``.
"""

from __future__ import annotations

import math
from importlib import resources
from typing import Any

import polars as pl
import streamlit as st

__all__ = ["hand_replay", "replay_data"]

_FILES = resources.files(__package__)
_COMPONENT = st.components.v2.component(
    "ofc_hand_replay", js=_FILES.joinpath("hand_replay.js").read_text(encoding="utf-8"),
    css=_FILES.joinpath("hand_replay.css").read_text(encoding="utf-8"), html="<div></div>")

ROWS = ("top", "middle", "bottom")


def _words(value: object) -> str:
    return "" if value is None else str(value).replace("_", " ")


def _number(value: object) -> float | None:
    if value is None:
        return None
    number = float(value)  # type: ignore[arg-type]
    return None if math.isnan(number) else number


def _verdict(player: dict[str, Any]) -> str:
    if player["foul"]:
        return "foul"
    return " / ".join(_words(player[f"{row}_class"]) for row in ROWS)


def _result(player: dict[str, Any]) -> str:
    royalties = "/".join(str(player[f"royalty_{row}"] or 0) for row in ROWS)
    text = f"royalties {royalties} · points {player['points']:+}"
    if player["fantasyland_next"]:
        text += f" · Fantasyland next ({player['fantasyland_cards']} cards)"
    return text


def replay_data(header: dict[str, Any], players: pl.DataFrame, cards: pl.DataFrame,
                grades: pl.DataFrame, street: int | None = None) -> dict[str, Any]:
    """What the replay component draws: the hand (``hand_header``'s row), each player
    (``hand_players``) with their cards street by street (``hand_streets``; placed cards in
    order, then the street's discards), and the graded decisions (``grading.hand_grades``; an
    empty frame when nothing is graded). ``street`` is the street shown first (the last)."""
    last = int(cards["street"].max()) if not cards.is_empty() else 0
    names = players["player"].to_list()
    seated = []
    for index, player in enumerate(players.iter_rows(named=True)):
        badges = []
        if player["is_button"]:
            badges.append("button")
        if player["fantasyland"]:
            badges.append(f"Fantasyland ({player['cards_dealt'] or '?'} cards)")
        streets: list[list[dict[str, str]]] = [[] for _ in range(last)]
        mine = cards.filter(pl.col("player") == player["player"]).sort("street", "card_order")
        for number, card, row in mine.select("street", "card", "row_name").rows():
            streets[int(number) - 1].append({"card": str(card), "row": str(row)})
        seated.append({
            "index": index, "name": str(player["player"]), "badges": badges,
            "final": {row: (player.get(row) or "").split() for row in ROWS},
            "streets": streets, "foul": bool(player["foul"]),
            "verdict": _verdict(player), "result": _result(player),
        })
    graded = []
    if not grades.is_empty():
        for grade in grades.iter_rows(named=True):
            if grade["player"] not in names:
                continue
            graded.append({
                "player_index": names.index(grade["player"]), "street": int(grade["street"]),
                "chosen": str(grade["chosen_placement"] or ""),
                "best": str(grade["best_placement"] or ""),
                "loss": _number(grade["ev_loss"]), "se": _number(grade["loss_se"]),
                "exact": bool(grade["exact"]), "mistake": bool(grade["mistake"]),
                "kind": _words(grade.get("mistake_type")),
                "uncertain": bool(grade.get("uncertain") or False),
                "bot": None if grade.get("policy_placement") is None
                else str(grade["policy_placement"]),
                "gap": _number(grade.get("policy_gap")),
            })
    return {
        "hand": {"key": str(header["hand_key"]), "id": str(header["hand_id"])},
        "last_street": last,
        "street": last if street is None else max(1, min(last, int(street))) if last else 0,
        "players": seated,
        "grades": graded,
        "graded_streets": sorted({grade["street"] for grade in graded}),
    }


def hand_replay(key: str, data: dict[str, Any]) -> Any:
    """Draw the replay of :func:`replay_data`'s hand (street steps answered in the browser)."""
    return _COMPONENT(key=key, data=data)
