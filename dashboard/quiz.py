"""Pieces of the Trainer page: a tap-to-place card picker and the alternatives' chart.

The picker works like the Record page's: choose a row with the segmented control, then tap a
card; the card goes to that row (a second tap on a placed card takes it back). It only offers
the cards dealt on the street and keeps to the rows' room and the street's number of discards.
Card texts come from the database: they reach the page as button labels built from the parsed
card (rank and suit symbol), never as raw HTML.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
import polars as pl
import streamlit as st

from dashboard import components
from pipeline.rules.cards import SUIT_SYMBOLS
from pipeline.rules.game import ROW_SIZES

ROWS = ("top", "middle", "bottom")
CHOICES = (*ROWS, "discard")
MARKDOWN_COLOURS = {"c": "green", "d": "blue", "h": "red", "s": ""}
Z_95 = 1.96

# Static CSS (no untrusted value): large tap targets on the picker.
PICKER_CSS = """
<style>
[class*="st-key-quiz_cards"] button { min-height: 3rem; min-width: 3.2rem; padding: 0 0.3rem; }
[class*="st-key-quiz_cards"] button p { font-size: 1.2rem; font-weight: 600; }
</style>
"""


def card_label(card: str, placed: str | None = None) -> str:
    """A card as a button label: rank and suit symbol, in its suit colour; ``→ row`` once placed
    (then in the filled button's own text colour: a red heart on the red button could not be
    read)."""
    rank, suit = card[:-1], card[-1]
    text = f"{rank}{SUIT_SYMBOLS.get(suit, suit)}"
    colour = "" if placed else MARKDOWN_COLOURS.get(suit, "")
    label = f":{colour}[{text}]" if colour else text
    return f"{label} → {placed}" if placed else label


def _assignment_key(key: str) -> str:
    return f"{key}_assign"


def _notice_key(key: str) -> str:
    return f"{key}_notice"


def _room(before: dict[str, Sequence[str]], assignment: dict[str, str], row: str) -> int:
    return ROW_SIZES[row] - len(before.get(row, ())) - sum(1 for r in assignment.values() if r == row)


def _tap(key: str, card: str, before: dict[str, Sequence[str]], discards: int) -> None:
    state = st.session_state
    assignment = dict(state.get(_assignment_key(key), {}))
    state[_notice_key(key)] = None
    if card in assignment:  # a second tap takes the card back
        del assignment[card]
        state[_assignment_key(key)] = assignment
        return
    row = state.get(f"{key}_row") or "top"
    if row == "discard":
        if sum(1 for r in assignment.values() if r == "discard") >= discards:
            state[_notice_key(key)] = (f"This street discards {discards} card"
                                       f"{'s' if discards != 1 else ''}." if discards
                                       else "Nothing is discarded on this street.")
            return
    elif _room(before, assignment, row) <= 0:
        state[_notice_key(key)] = f"The {row} is full: pick another row."
        return
    assignment[card] = row
    state[_assignment_key(key)] = assignment


def _clear(key: str) -> None:
    st.session_state[_assignment_key(key)] = {}
    st.session_state[_notice_key(key)] = None


def placement_picker(key: str, dealt: Sequence[str], before: dict[str, Sequence[str]],
                     discards: int) -> dict[str, str] | None:
    """Ask where each dealt card goes. Returns card -> row (``top``/``middle``/``bottom``/
    ``discard``) once every card is placed with the right number of discards, else None.

    ``before`` is the board before the street (row -> card texts); ``key`` keeps the state apart
    (a new key starts an empty answer)."""
    state = st.session_state
    assignment: dict[str, str] = dict(state.get(_assignment_key(key), {}))
    if set(assignment) - set(dealt):
        assignment = {}
        state[_assignment_key(key)] = assignment
    choices = list(CHOICES) if discards else list(ROWS)
    if state.get(f"{key}_row") not in choices:
        state[f"{key}_row"] = next((row for row in ROWS if _room(before, assignment, row) > 0), "top")

    def choice_label(value: str) -> str:
        if value == "discard":
            return f"discard {sum(1 for r in assignment.values() if r == 'discard')}/{discards}"
        used = len(before.get(value, ())) + sum(1 for r in assignment.values() if r == value)
        return f"{value} {used}/{ROW_SIZES[value]}"

    components.show_html(PICKER_CSS)
    st.segmented_control("Row for the next card", choices, format_func=choice_label,
                         key=f"{key}_row", required=True, width="stretch")
    with st.container(horizontal=True, gap="small", key=f"quiz_cards_{key}"):
        for card in dealt:
            st.button(card_label(card, assignment.get(card)), key=f"{key}_card_{card}",
                      on_click=_tap, args=(key, card, before, discards),
                      type="primary" if card in assignment else "secondary")
    notice = state.get(_notice_key(key))
    if notice:
        st.warning(notice)
    board = {row: [*before.get(row, ()), *(card for card in dealt if assignment.get(card) == row)]
             for row in ROWS}
    components.show_html(components.board_html(board, caption="your answer"))
    thrown = [card for card in dealt if assignment.get(card) == "discard"]
    if thrown:
        components.show_html(f'<div style="font-size:0.9em">discard '
                             f'{components.cards_html(thrown)}</div>')
    st.button("Clear", key=f"{key}_clear", on_click=_clear, args=(key,))
    complete = (len(assignment) == len(dealt)
                and sum(1 for r in assignment.values() if r == "discard") == discards)
    return dict(assignment) if complete else None


def alternatives_chart(alternatives: pl.DataFrame, answer: int | None, limit: int = 12) -> go.Figure:
    """Each alternative's value with its 95 % error bar (the best first, at most ``limit``, the
    play made and the answer always shown): best green, play made red, the answer blue."""
    frame = alternatives.sort("value", descending=True, nulls_last=True)
    keep = frame.head(limit)["alternative"].to_list()
    for flag in ("is_chosen", "is_best"):
        keep += frame.filter(pl.col(flag))["alternative"].to_list()
    if answer is not None:
        keep.append(answer)
    shown = frame.filter(pl.col("alternative").is_in(list(dict.fromkeys(keep))))
    colours, names = [], []
    for row in shown.iter_rows(named=True):
        if row["is_best"]:
            colours.append("#2f9e6e")
        elif row["is_chosen"]:
            colours.append("#d0473d")
        elif row["alternative"] == answer:
            colours.append("#3b82c4")
        else:
            colours.append("#9aa3ad")
        tags = [tag for tag, flag in (("best", row["is_best"]), ("played", row["is_chosen"]),
                                      ("your answer", row["alternative"] == answer)) if flag]
        # two short lines per play: the bars keep their width on a phone
        placement = row["placement"].replace(" · bottom", "<br>bottom", 1)
        names.append(placement + (f" [{', '.join(tags)}]" if tags else ""))
    errors = [Z_95 * (value or 0.0) for value in shown["value_se"].to_list()]
    figure = go.Figure(go.Bar(
        x=shown["value"].to_list(), y=names, orientation="h", marker_color=colours,
        error_x={"type": "data", "array": errors},
        hovertemplate="%{y}<br>%{x:.2f} points<extra></extra>",
    ))
    figure.update_layout(
        height=120 + 40 * shown.height, margin={"l": 10, "r": 10, "t": 30, "b": 30},
        yaxis={"autorange": "reversed", "automargin": True, "tickfont": {"size": 11}},
        xaxis_title="points ± 95 %", title="Every play's value", showlegend=False,
    )
    return figure
