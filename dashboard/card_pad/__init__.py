"""The card pad: a small custom component (Streamlit components v2) for tapping boards in.

A tap changes the boards in the browser at once (no server round trip per card); the page gets
the whole entry afterwards as the component's state. Reusable by any page that collects boards:
call :func:`card_pad` with the boards as the page holds them and read :func:`pad_entry` in the
``on_change`` callback.

The protocol: the page sends an ``epoch`` with the boards; the browser keeps its own copy and
reports ``{epoch, seq, boards, player, row}`` after every tap (and keeps it in its own storage
until the next, so a reload loses no tap). A page that changes the boards
itself (typed text, a save, an undo) raises the epoch, and the browser then takes the page's
boards. A report from an older epoch is stale and is ignored (:func:`pad_entry` returns None).

Names and card tokens are untrusted: the JavaScript only ever sets them as ``textContent``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import streamlit as st

__all__ = ["PadEntry", "PadNote", "PadPlayer", "card_pad", "pad_entry"]

_FILES = resources.files(__package__)
_JS = _FILES.joinpath("card_pad.js").read_text(encoding="utf-8")
_CSS = _FILES.joinpath("card_pad.css").read_text(encoding="utf-8")

_COMPONENT = st.components.v2.component("ofc_card_pad", js=_JS, css=_CSS, html="""
<div class="pad-root"></div>
""")


@dataclass(frozen=True, slots=True)
class PadPlayer:
    """One board on the pad: the player's name and a short badge (``button``, ``FL 14``)."""

    name: str
    badge: str = ""


@dataclass(frozen=True, slots=True)
class PadNote:
    """The line shown under a board: ``kind`` is ok, foul, error, pending or missing."""

    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class PadEntry:
    """What the browser reported: every board as three rows of card texts, the board and row
    the next tap goes to, and the report's sequence number."""

    boards: tuple[tuple[tuple[str, ...], ...], ...]
    player: int
    row: int
    seq: int


def card_pad(
    key: str,
    players: Sequence[PadPlayer],
    boards: Sequence[Sequence[Sequence[str]]],
    *,
    epoch: int,
    seq: int,
    order: Sequence[int] | None = None,
    player: int = 0,
    row: int = 0,
    sizes: Sequence[int] = (3, 5, 5),
    notes: Sequence[PadNote | None] = (),
    summary: str = "",
    draft: str | None = None,
    scroll: int = 0,
    scroll_to: str | None = None,
    on_change: Callable[[], None] | None = None,
) -> Any:
    """Draw the pad: ``summary`` on top (the running totals), a tab per board (a fouled board's
    tab says so), the chosen board's rows (every card shown, extras marked), its note and any
    other board's foul, "clear board" (asks first, then can be undone), the 52 cards (used ones
    disabled) and "last card".

    ``order`` is the order boards fill in (taps move on to the next board with room);
    ``seq`` is the sequence number of the last report the page applied (notes are shown as
    current only when it matches the browser's). ``draft`` names the entry being made (a
    session and hand): the browser keeps every tap under it, and a pad opened afresh on the same
    draft (a reload) takes back the taps the server had not received yet. When ``scroll``
    changes, the element ``scroll_to`` (a CSS selector; the pad itself by default) is scrolled
    to the top of the screen: a page raises it after an action that changes the hand.
    """
    data = {
        "epoch": int(epoch),
        "seq": int(seq),
        "players": [{"name": item.name, "badge": item.badge} for item in players],
        "order": list(order if order is not None else range(len(players))),
        "boards": [[list(cards) for cards in rows] for rows in boards],
        "player": int(player),
        "row": int(row),
        "sizes": list(sizes),
        "notes": [None if note is None else {"kind": note.kind, "text": note.text}
                  for note in notes] + [None] * (len(players) - len(notes)),
        "summary": summary,
        "draft": draft,
        "scroll": int(scroll),
        "scroll_to": scroll_to,
    }
    return _COMPONENT(key=key, data=data, on_entry_change=on_change or (lambda: None))


def pad_entry(key: str, epoch: int) -> PadEntry | None:
    """The pad's last report from ``st.session_state`` (in its on_change callback), or None when
    there is none or it belongs to an older epoch."""
    state: Mapping[str, Any] | None = st.session_state.get(key)
    entry = (state or {}).get("entry") if hasattr(state, "get") else None
    if not isinstance(entry, Mapping) or entry.get("epoch") != epoch:
        return None
    try:
        boards = tuple(
            tuple(tuple(str(card) for card in row) for row in list(rows)[:3])
            for rows in entry["boards"]
        )
        return PadEntry(boards, int(entry["player"]), int(entry["row"]), int(entry["seq"]))
    except (KeyError, TypeError, ValueError):
        return None
