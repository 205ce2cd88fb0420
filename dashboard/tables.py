"""Tables for people: every column the pages show, named in words with its unit and rounded to
what matters, in one place, so a figure reads the same on every page.

:func:`show` draws a frame with these column settings; a column it does not know is still named in
words (``max_royalties`` -> "max royalties"), never by its code name. Values stay as the read model
gives them (fractions for rates, exact points): only how they are shown changes, so a test reads
the same numbers the page was given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl
import streamlit as st

Number = st.column_config.NumberColumn
Text = st.column_config.TextColumn
Check = st.column_config.CheckboxColumn
When = st.column_config.DatetimeColumn

COUNT = "localized"  # 1,234
POINTS = "%+d"
PER_HAND = "%+.2f"
SPREAD = "%.2f"
RATE = "percent"

COLUMNS: dict[str, Any] = {
    "player": Text("player", pinned=True),
    "hero": Text("hero", pinned=True),
    "winner": Text("won", pinned=True, help="The player who came out ahead over these hands."),
    "payer": Text("paid", help="The player who paid them."),
    "opponent": Text("opponent"),
    "game": Text("game (table · start)", help="The table and when the game there began (UTC): "
                                               "the players who sat together share it."),
    "hands": Number("hands", format=COUNT),
    "boards": Number("boards", format=COUNT),
    "points": Number("points", format=POINTS, help="Points won (negative: lost), after any cap."),
    "points_per_hand": Number("points / hand", format=PER_HAND),
    "points_se": Number("± SE", format=SPREAD,
                        help="Standard error of points per hand (95 % is about ± 2 SE)."),
    "fouls": Number("fouls", format=COUNT),
    "foul_rate": Number("foul rate", format=RATE),
    "royalties": Number("royalties", format=COUNT, help="Royalty points collected."),
    "royalties_per_hand": Number("royalties / hand", format=SPREAD),
    "scoop_rate": Number("scoop rate", format=RATE,
                         help="Share of opponents beaten on all three rows."),
    "fl_entry_rate": Number("Fantasyland entry", format=RATE,
                            help="Entries per normal (not Fantasyland) hand."),
    "fl_stay_rate": Number("Fantasyland stay", format=RATE,
                           help="Stays per hand played in Fantasyland."),
    "fl_hands": Number("Fantasyland hands", format=COUNT),
    "variant": Text("variant"),
    "rules": Text("rules"),
    "site": Text("site"),
    "table_name": Text("table"),
    "started_at": When("started (UTC)", format="YYYY-MM-DD HH:mm"),
    "ended_at": When("ended (UTC)", format="YYYY-MM-DD HH:mm"),
    "hand_id": Text("hand"),
    "players": Text("players"),
    "position": Number("seat order", help="0 acts first; the button acts last."),
    "seat_label": Text("position"),
    "max_royalties": Number("most royalties on a board", format=COUNT),
    "any_fantasyland": Check("Fantasyland"),
    "fantasyland": Check("plays Fantasyland"),
    "fantasyland_next": Check("earns Fantasyland"),
    "fantasyland_cards": Number("Fantasyland cards"),
    "disagrees": Check("source disagrees",
                       help="The source's own result differs from the re-score."),
    "disagreements": Number("source disagreements", format=COUNT),
    "disagreement": Text("why the source disagrees"),
    "reported_points": Number("points (source)", format=POINTS,
                              help="What the hand history itself said."),
    "foul": Check("foul"),
    "top_class": Text("top"),
    "middle_class": Text("middle"),
    "bottom_class": Text("bottom"),
    "royalty_top": Number("royalties top"),
    "royalty_middle": Number("royalties middle"),
    "royalty_bottom": Number("royalties bottom"),
    "rows_won": Number("rows won"),
    "rows_lost": Number("rows lost"),
    "scoop": Number("scoop", help="1: scooped the opponent, -1: scooped by them."),
    "royalty_points": Number("royalty points", format=POINTS),
    "settled": Number("points settled", format=POINTS, help="After any cap."),
    "reason": Text("reason"),
    "count": Number("records", format=COUNT),
    "records": Number("records", format=COUNT),
    "files": Number("files", format=COUNT),
    "line": Number("line"),
    "status": Text("status"),
    "format": Text("format"),
    "kind": Text("kind"),
}
"""How each known column is shown (label in words, unit, rounding)."""


def words(name: str) -> str:
    """A column's code name in words: ``max_royalties`` -> ``max royalties``."""
    return name.replace("_", " ").strip()


def column_settings(frame: pl.DataFrame,
                    overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The column settings of ``frame``: :data:`COLUMNS`'s, ``overrides`` first, and every other
    column named in words."""
    settings: dict[str, Any] = {}
    for name in frame.columns:
        if overrides and name in overrides:
            settings[name] = overrides[name]
        elif name in COLUMNS:
            settings[name] = COLUMNS[name]
        else:
            settings[name] = words(name)
    return settings


def show(frame: pl.DataFrame, key: str, order: Sequence[str] | None = None,
         overrides: Mapping[str, Any] | None = None, height: int | str = "auto",
         **options: Any) -> Any:
    """Draw ``frame`` as a table for people: the ``order`` columns only (all by default; the
    rest stay in the data, not on screen), named in words with units, rounded."""
    return st.dataframe(frame, hide_index=True, key=key, column_order=order,
                        column_config=column_settings(frame, overrides), height=height,
                        **options)
