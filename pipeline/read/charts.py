"""Plotly figures built from the frames of :mod:`pipeline.read`: pure functions, no I/O.

Player names are untrusted, and Plotly reads a small HTML subset in every label, so each name is
HTML-escaped before it reaches a figure (Plotly turns the entities back into plain text).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

ROW_ORDER = ("top", "middle", "bottom")
ROW_COLOURS = {"top": "#8e6bbf", "middle": "#3b82c4", "bottom": "#2f9e6e"}
WIN_COLOUR = "#2f9e6e"
LOSS_COLOUR = "#d0473d"
NEUTRAL_COLOUR = "#3b82c4"
PALE_COLOUR = "#9cc3e6"
"""A second series beside :data:`NEUTRAL_COLOUR`'s (the gap to the grader's bot)."""
Z_95 = 1.96
TEXT_COLOUR = "#1f2328"
LABEL_SIZE = 13
"""The smallest font size of text drawn inside a chart (cell values, node labels), in pixels."""
LABEL_HALO = "0 0 3px #ffffff, 0 0 3px #ffffff, 0 0 2px #ffffff"
"""A white halo around dark labels drawn over other marks (a Sankey's links)."""

HAND_CLASS_COLOURS = {
    "high_card": "#9aa3ad", "pair": "#4e79a7", "two_pair": "#a0cbe8", "trips": "#f28e2b",
    "straight": "#59a14f", "flush": "#b6992d", "full_house": "#e15759", "quads": "#b07aa1",
    "straight_flush": "#17becf", "royal_flush": "#ffbe0b",
    "no_low": "#79706e", "ten_low": "#d4a6c8", "nine_low": "#86bcb6", "eight_low": "#8cd17d",
    "seven_low": "#ff9d9a", "perfect_low": "#6a3d9a",
}
"""One colour per hand class, the same on every chart, no two alike (high classes in strength
order, then the 2-7 middle's low classes)."""


def class_words(value: object) -> str:
    """A stored hand class in words: ``full_house`` -> ``full house``."""
    return "" if value is None else str(value).replace("_", " ")


def label(value: object) -> str:
    """A value made safe for a Plotly label: ``&``, ``<`` and ``>`` escaped.

    Plotly reads tags such as ``<b>`` or ``<a href>`` in labels and turns entities back into
    text; quotes need no escaping there (and Plotly would show ``&quot;`` as is).
    """
    return html.escape("" if value is None else str(value), quote=False)


def _layout(figure: go.Figure, title: str | None = None, height: int = 360) -> go.Figure:
    # Subplot titles stand above the top row's plots (paper y 1, anchored at their bottom): with
    # no figure title they need room of their own, or the top margin cuts them in half.
    headed = any(note.yref == "paper" and note.yanchor == "bottom" and (note.y or 0) >= 0.99
                 for note in figure.layout.annotations)
    top = 40 if title else 30 if headed else 10
    figure.update_layout(title=title, height=height,
                         margin={"l": 10, "r": 10, "t": top, "b": 10})
    # the margins grow to hold the tick labels and axis titles, whatever template the process
    # has as its default (Streamlit's, imported by the dashboard, does not: a report downloaded
    # from the dashboard cut "-25" to "25" and drew axis titles over the ticks)
    figure.update_xaxes(automargin=True)
    figure.update_yaxes(automargin=True)
    return figure


def empty_figure(message: str = "No data for these filters") -> go.Figure:
    """A blank figure carrying a message."""
    figure = go.Figure()
    figure.add_annotation(text=label(message), showarrow=False, x=0.5, y=0.5,
                          xref="paper", yref="paper")
    figure.update_xaxes(visible=False)
    figure.update_yaxes(visible=False)
    return _layout(figure, height=200)


def hands_per_day_chart(frame: pl.DataFrame) -> go.Figure:
    """Stacked bars of hands per day by variant (``hands_by_day``)."""
    if frame.is_empty():
        return empty_figure("No dated hands")
    figure = go.Figure()
    for variant in sorted(frame["variant"].unique().to_list()):
        part = frame.filter(pl.col("variant") == variant)
        figure.add_bar(x=part["day"].to_list(), y=part["hands"].to_list(), name=label(variant))
    figure.update_layout(barmode="stack", yaxis_title="hands")
    figure.update_xaxes(tickformat="%Y-%m-%d")
    if frame["day"].n_unique() <= 14:
        figure.update_xaxes(dtick=86_400_000)
    return _layout(figure, "Hands per day")


def cumulative_points_chart(frame: pl.DataFrame) -> go.Figure:
    """One line per player: cumulative points over their hands (``cumulative_points``)."""
    if frame.is_empty():
        return empty_figure()
    figure = go.Figure()
    for player in frame["player"].unique(maintain_order=True).to_list():
        part = frame.filter(pl.col("player") == player)
        figure.add_scatter(
            x=part["hand_number"].to_list(), y=part["cumulative"].to_list(),
            mode="lines+markers" if part.height <= 60 else "lines", name=label(player),
            hovertemplate="hand %{x}<br>%{y} points<extra>" + label(player) + "</extra>",
        )
    figure.update_layout(xaxis_title="hands played", yaxis_title="cumulative points")
    figure.add_hline(y=0, line_width=1, line_color="#999")
    return _layout(figure, "Cumulative points")


PANEL_COLUMNS = 3
MAX_PANELS = 12


def cumulative_points_panels(frame: pl.DataFrame, x_column: str = "hand_number",
                             x_title: str = "hands played",
                             title: str = "Cumulative points per player",
                             limit: int = MAX_PANELS) -> go.Figure:
    """Cumulative points of several players, one small panel each with its own points scale:
    on one shared scale a single large winner or loser flattens every other line.

    ``frame`` columns: player, ``x_column``, cumulative (``cumulative_points`` or
    ``cumulative_points_by_time``); players in the frame's order, the first ``limit`` shown.
    Each panel's title carries the player's final total.
    """
    if frame.is_empty():
        return empty_figure()
    players = frame["player"].unique(maintain_order=True).to_list()[:limit]
    rows = math.ceil(len(players) / PANEL_COLUMNS)
    columns = min(PANEL_COLUMNS, len(players))
    finals = {}
    for player in players:
        values = frame.filter(pl.col("player") == player)["cumulative"]
        finals[player] = values[-1] if len(values) else 0
    figure = make_subplots(
        rows=rows, cols=columns, shared_xaxes=False, vertical_spacing=min(0.12, 0.5 / rows),
        horizontal_spacing=0.07,
        subplot_titles=[f"{label(player)}: {int(finals[player] or 0):+,}" for player in players])
    for index, player in enumerate(players):
        part = frame.filter(pl.col("player") == player)
        values = part["cumulative"].to_list()
        final = values[-1] if values else 0
        figure.add_trace(go.Scatter(
            x=part[x_column].to_list(), y=values, mode="lines", showlegend=False,
            line={"color": WIN_COLOUR if (final or 0) >= 0 else LOSS_COLOUR, "width": 2},
            hovertemplate="%{x}<br>%{y:,} points<extra>" + label(player) + "</extra>",
        ), row=index // columns + 1, col=index % columns + 1)
    figure.update_yaxes(zeroline=True, zerolinecolor="#999", tickformat=",")
    for column in range(1, columns + 1):
        figure.update_xaxes(title_text=x_title, row=rows, col=column)
    figure.update_annotations(font={"size": LABEL_SIZE})
    return _layout(figure, title, height=80 + 190 * rows)


def rolling_foul_rate_chart(frame: pl.DataFrame, window: int) -> go.Figure:
    """Rolling foul rate per player (``rolling_foul_rate``), as a percentage, drawn only where
    the window is full: a player's first hands would otherwise read as a rate over a handful of
    boards (one foul in the first hand is "100 %")."""
    if frame.is_empty():
        return empty_figure()
    if "window_hands" in frame.columns:
        frame = frame.filter(pl.col("window_hands") >= window)
        if frame.is_empty():
            return empty_figure(f"Fewer than {window:,} hands: no full window yet")
    figure = go.Figure()
    for player in frame["player"].unique(maintain_order=True).to_list():
        part = frame.filter(pl.col("player") == player)
        figure.add_scatter(
            x=part["hand_number"].to_list(), y=(part["foul_rate"] * 100).to_list(), mode="lines",
            name=label(player),
        )
    figure.update_layout(xaxis_title="hands played", yaxis_title="foul rate (%)",
                         yaxis_rangemode="tozero")
    return _layout(figure, f"Foul rate over the last {window:,} hands")


def royalty_sources_chart(frame: pl.DataFrame) -> go.Figure:
    """Royalty points by row, split by hand class (``royalty_sources``): classes in words, in
    strength order, each in its own colour (:data:`HAND_CLASS_COLOURS`)."""
    if frame.is_empty():
        return empty_figure("No royalties collected")
    order = list(HAND_CLASS_COLOURS)
    classes = sorted(frame["hand_class"].unique().to_list(),
                     key=lambda value: (order.index(value) if value in order else len(order),
                                        str(value)))
    spare = iter(_SPARE_COLOURS)
    figure = go.Figure()
    for hand_class in classes:
        part = frame.filter(pl.col("hand_class") == hand_class)
        words = label(class_words(hand_class))
        figure.add_bar(
            y=part["row_name"].to_list(), x=part["royalty_points"].to_list(),
            name=words, orientation="h",
            marker_color=HAND_CLASS_COLOURS.get(hand_class) or next(spare, "#444444"),
            customdata=part["boards"].to_list(),
            hovertemplate="%{y}: %{x} points from %{customdata} boards<extra>" + words
            + "</extra>",
        )
    figure.update_layout(barmode="stack", xaxis_title="royalty points",
                         yaxis={"categoryorder": "array", "categoryarray": list(ROW_ORDER)[::-1]},
                         legend={"traceorder": "normal"})
    return _layout(figure, "Royalty sources by row and hand class")


_SPARE_COLOURS = ("#444444", "#8c564b", "#bcbd22", "#7f7f7f")
"""Colours for a class the table above does not know (none today)."""


def fantasyland_funnel_chart(frame: pl.DataFrame) -> go.Figure:
    """Fantasyland (``fantasyland_funnel``): the hands played there narrowing to the ones that
    earned a stay — a funnel that only narrows — with the entries beside it in words.

    Entries are not the top of the funnel: a stay plays one more Fantasyland hand without a new
    entry, so more hands can be played in Fantasyland than were entered.
    """
    counts = dict(zip(frame["stage"].to_list(), frame["count"].to_list(), strict=True)) \
        if not frame.is_empty() else {}
    entries = int(counts.get("Entered") or 0)
    played = int(counts.get("Played in Fantasyland") or 0)
    stays = int(counts.get("Stayed") or 0)
    if entries == 0 and played == 0:
        return empty_figure("No Fantasyland yet")
    figure = go.Figure(go.Funnel(
        y=["hands played in Fantasyland", "earned a stay"], x=[played, min(stays, played)],
        textinfo="value+percent initial", textfont={"size": LABEL_SIZE},
        marker={"color": ["#3b82c4", "#2f9e6e"]},
        hovertemplate="%{y}: %{x}<extra></extra>",
    ))
    note = (f"{entries:,} entr{'y' if entries == 1 else 'ies'} from normal hands; a stay plays "
            "one more Fantasyland hand without a new entry")
    figure.add_annotation(text=note, showarrow=False, x=0, y=-0.08, xref="paper", yref="paper",
                          xanchor="left", yanchor="top", font={"size": 12, "color": "#6b7280"})
    _layout(figure, "Fantasyland: hands played and stays", height=300)
    figure.update_layout(margin={"b": 40})
    return figure


def points_per_hand_bars(frame: pl.DataFrame, category: str, title: str) -> go.Figure:
    """Points per hand by a category column, with 95 % error bars (needs points_se)."""
    if frame.is_empty():
        return empty_figure()
    values = frame["points_per_hand"].to_list()
    figure = go.Figure(go.Bar(
        x=[label(value) for value in frame[category].to_list()], y=values,
        error_y={"type": "data", "array": (frame["points_se"] * Z_95).to_list()},
        marker_color=[WIN_COLOUR if (value or 0) >= 0 else LOSS_COLOUR for value in values],
        customdata=frame["hands"].to_list(),
        hovertemplate="%{x}<br>%{y:.2f} points/hand<br>%{customdata} hands<extra></extra>",
    ))
    figure.update_layout(yaxis_title="points per hand (±95 %)")
    return _layout(figure, title)


def kpi_comparison_chart(frame: pl.DataFrame) -> go.Figure:
    """Small multiples comparing players (``player_kpis``): one panel per key rate."""
    if frame.is_empty():
        return empty_figure()
    panels = (
        ("points_per_hand", "points / hand", "points_se"),
        ("foul_rate", "foul rate", None),
        ("royalties_per_hand", "royalties / hand", None),
        ("fl_entry_rate", "Fantasyland entry rate", None),
        ("scoop_rate", "scoop rate", None),
    )
    figure = make_subplots(rows=1, cols=len(panels),
                           subplot_titles=[title for _, title, _ in panels])
    names = [label(name) for name in frame["player"].to_list()]
    for column_index, (column, _, error) in enumerate(panels, start=1):
        bar = go.Bar(x=names, y=frame[column].to_list(), showlegend=False,
                     marker_color=NEUTRAL_COLOUR)
        if error:
            bar.error_y = {"type": "data", "array": (frame[error] * Z_95).to_list()}
        figure.add_trace(bar, row=1, col=column_index)
    return _layout(figure, height=320)


def session_small_multiples(frame: pl.DataFrame, players: Sequence[str]) -> go.Figure:
    """Per player, points per session in play order (``session_results``), one panel each."""
    if frame.is_empty() or not players:
        return empty_figure()
    players = list(players)[:6]
    figure = make_subplots(rows=len(players), cols=1,
                           subplot_titles=[label(player) for player in players],
                           vertical_spacing=0.12 if len(players) < 4 else 0.06)
    for index, player in enumerate(players, start=1):
        part = frame.filter(pl.col("player") == player).sort("started_at", nulls_last=True)
        values = part["points"].to_list()
        when = [f"{value:%Y-%m-%d %H:%M}" if value else "undated"
                for value in part["started_at"].to_list()]
        figure.add_trace(go.Bar(
            x=list(range(1, part.height + 1)), y=values, showlegend=False,
            marker_color=[WIN_COLOUR if value >= 0 else LOSS_COLOUR for value in values],
            customdata=list(zip(part["hands"].to_list(), when, strict=True)),
            hovertemplate="session %{x} (%{customdata[1]})<br>%{y} points in "
            "%{customdata[0]} hands<extra></extra>",
        ), row=index, col=1)
        figure.update_xaxes(title_text="session" if index == len(players) else None,
                            dtick=1 if part.height <= 20 else None, row=index, col=1)
    return _layout(figure, "Points per session", height=max(260, 170 * len(players)))


def session_trend_chart(frame: pl.DataFrame, player: str) -> go.Figure:
    """One player's sessions in order: points per session and the running total."""
    part = frame.filter(pl.col("player") == player).sort("started_at", nulls_last=True)
    if part.is_empty():
        return empty_figure()
    numbers = list(range(1, part.height + 1))
    values = part["points"].to_list()
    figure = go.Figure()
    figure.add_trace(go.Bar(x=numbers, y=values, name="points in session",
                            marker_color=[WIN_COLOUR if v >= 0 else LOSS_COLOUR for v in values]))
    figure.add_trace(go.Scatter(x=numbers, y=part["points"].cum_sum().to_list(),
                                name="running total", mode="lines+markers",
                                line={"color": NEUTRAL_COLOUR}))
    figure.update_xaxes(title_text="session", dtick=1 if part.height <= 20 else None)
    figure.update_yaxes(title_text="points")
    return _layout(figure, f"{label(player)}: trend across sessions")


def net_points_matrix(frame: pl.DataFrame) -> tuple[list[str], list[str], list[list[float | None]]]:
    """Rows (players), columns (opponents) and net points from ``pair_net_points``."""
    rows = sorted(set(frame["player"].to_list()))
    columns = sorted(set(frame["opponent"].to_list()))
    lookup = {(p, o): v for p, o, v in frame.select("player", "opponent", "points").rows()}
    matrix = [[lookup.get((row, column)) for column in columns] for row in rows]
    return rows, columns, matrix


def point_flow_heatmap(frame: pl.DataFrame) -> go.Figure:
    """Net points won by the row player from the column player (``pair_net_points``)."""
    if frame.is_empty():
        return empty_figure()
    rows, columns, matrix = net_points_matrix(frame)
    limit = max((abs(v) for line in matrix for v in line if v is not None), default=1) or 1
    figure = go.Figure(go.Heatmap(
        z=matrix, x=[label(c) for c in columns], y=[label(r) for r in rows],
        colorscale=[[0, LOSS_COLOUR], [0.5, "#f7f7f7"], [1, WIN_COLOUR]], zmin=-limit, zmax=limit,
        text=[["" if v is None else f"{v:+,}" for v in line] for line in matrix],
        texttemplate="%{text}", textfont={"size": LABEL_SIZE, "color": TEXT_COLOUR},
        hovertemplate="%{y} vs %{x}: %{z} points<extra></extra>", colorbar={"title": "points"},
    ))
    figure.update_layout(xaxis_title="opponent", yaxis_title="player", yaxis_autorange="reversed",
                         font={"size": LABEL_SIZE})
    return _layout(figure, "Net points won (row from column)", height=max(320, 40 * len(rows) + 120))


def point_flow_links(frame: pl.DataFrame) -> list[tuple[str, str, float]]:
    """(payer, receiver, points) for every pair with a non-zero net, from ``pair_net_points``."""
    links = []
    for player, opponent, points in frame.select("player", "opponent", "points").rows():
        if points and points > 0:
            links.append((opponent, player, float(points)))
    return sorted(links, key=lambda link: (-link[2], link[0], link[1]))


def point_flow_sankey(frame: pl.DataFrame) -> go.Figure:
    """Where the points went: payers on the left, receivers on the right (net per pair)."""
    links = point_flow_links(frame)
    if not links:
        return empty_figure("No points changed hands")
    payers = sorted({payer for payer, _, _ in links})
    receivers = sorted({receiver for _, receiver, _ in links})
    nodes = [f"{label(name)} paid" for name in payers] + [
        f"{label(name)} won" for name in receivers]
    index_payer = {name: i for i, name in enumerate(payers)}
    index_receiver = {name: len(payers) + i for i, name in enumerate(receivers)}
    figure = go.Figure(go.Sankey(
        node={"label": nodes, "pad": 14,
              "color": [LOSS_COLOUR] * len(payers) + [WIN_COLOUR] * len(receivers),
              "line": {"width": 0}},
        link={"source": [index_payer[p] for p, _, _ in links],
              "target": [index_receiver[r] for _, r, _ in links],
              "value": [v for _, _, v in links], "color": "rgba(59, 130, 196, 0.25)"},
        # dark text in a white halo: readable over the links, on a light or a dark page (the
        # theme's own grey text and a halo of its transparent background read grey on grey)
        textfont={"size": LABEL_SIZE, "color": TEXT_COLOUR, "shadow": LABEL_HALO},
    ))
    return _layout(figure, "Point flow (net, payer → winner)", height=max(320, 36 * len(nodes)))


# --- coaching report --------------------------------------------------------------------------

# legend above the plot on the right, clear of the title on the left
_REPORT_LEGEND = {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1}


def player_vs_field_chart(frame: pl.DataFrame, title: str, axis_title: str,
                          percent: bool = False) -> go.Figure:
    """Grouped bars: the player against the field per item, with 95 % interval whiskers.

    ``frame`` columns: item, who (the series: the player's name or ``field``), value, low, high
    (low/high may be null: no whisker).
    """
    if frame.is_empty():
        return empty_figure("Nothing to compare yet")
    scale = 100.0 if percent else 1.0
    figure = go.Figure()
    items = frame["item"].unique(maintain_order=True).to_list()
    for index, who in enumerate(frame["who"].unique(maintain_order=True).to_list()):
        part = frame.filter(pl.col("who") == who)
        lookup = {row["item"]: row for row in part.iter_rows(named=True)}
        values, above, below = [], [], []
        for item in items:
            row = lookup.get(item)
            value = None if row is None or row["value"] is None else row["value"] * scale
            values.append(value)
            high = None if row is None or row["high"] is None else row["high"] * scale
            low = None if row is None or row["low"] is None else row["low"] * scale
            above.append(0.0 if value is None or high is None else max(0.0, high - value))
            below.append(0.0 if value is None or low is None else max(0.0, value - low))
        figure.add_bar(
            x=[label(item) for item in items], y=values, name=label(who),
            marker_color=NEUTRAL_COLOUR if index == 0 else "#9aa3ad",
            error_y={"type": "data", "symmetric": False, "array": above, "arrayminus": below},
            hovertemplate="%{x}<br>%{y:.2f}" + (" %" if percent else "")
            + "<extra>" + label(who) + "</extra>",
        )
    figure.update_layout(barmode="group", yaxis_title=axis_title, legend=_REPORT_LEGEND)
    return _layout(figure, title)


def session_fit_chart(frame: pl.DataFrame, title: str) -> go.Figure:
    """Points per hand in each session (bars) with a fitted trend line.

    ``frame`` columns: number (session, in play order), points_per_hand, hands, fitted (null:
    no line).
    """
    if frame.is_empty():
        return empty_figure("No dated sessions")
    values = frame["points_per_hand"].to_list()
    figure = go.Figure()
    figure.add_bar(
        x=frame["number"].to_list(), y=values, name="points per hand",
        marker_color=[WIN_COLOUR if (value or 0) >= 0 else LOSS_COLOUR for value in values],
        customdata=frame["hands"].to_list(),
        hovertemplate="session %{x}<br>%{y:.2f} points/hand over %{customdata} hands"
        "<extra></extra>",
    )
    if frame["fitted"].null_count() < frame.height:
        figure.add_scatter(x=frame["number"].to_list(), y=frame["fitted"].to_list(),
                           mode="lines", name="trend", line={"color": "#e0a526", "width": 3})
    figure.update_layout(xaxis_title="session", yaxis_title="points per hand",
                         legend=_REPORT_LEGEND)
    if frame.height <= 30:
        figure.update_xaxes(dtick=1)
    figure.add_hline(y=0, line_width=1, line_color="#999")
    return _layout(figure, title)


def ev_loss_bars(frame: pl.DataFrame, category: str, title: str) -> go.Figure:
    """EV loss per decision by a category column (``grading_by_street`` / ``_by_situation``),
    with 95 % error bars, one group of bars per player; for one player, beside each bar the gap
    to the grader's own bot (``policy_gap_per_decision``) where it was measured."""
    if frame.is_empty():
        return empty_figure("No graded decisions")
    figure = go.Figure()
    players = frame["player"].unique(maintain_order=True).to_list()
    for player in players:
        part = frame.filter(pl.col("player") == player)
        figure.add_bar(
            x=[label(value) for value in part[category].to_list()],
            y=part["ev_loss_per_decision"].to_list(),
            name=label(player) if len(players) > 1 else "EV loss",
            error_y={"type": "data", "array": (part["ev_loss_se"] * Z_95).to_list()},
            customdata=list(zip(part["decisions"].to_list(), part["mistakes"].to_list(),
                                strict=True)),
            hovertemplate=("%{x}<br>%{y:.2f} points lost per decision<br>%{customdata[0]} "
                           "decisions, %{customdata[1]} mistakes<extra></extra>"),
        )
    gaps = (frame.filter(pl.col("policy_gap_per_decision").is_not_null())
            if len(players) == 1 and "policy_gap_per_decision" in frame.columns else frame.clear())
    if not gaps.is_empty():
        figure.add_bar(
            x=[label(value) for value in gaps[category].to_list()],
            y=gaps["policy_gap_per_decision"].to_list(), name="behind the grader's bot",
            marker_color=PALE_COLOUR,
            error_y={"type": "data", "array": (gaps["policy_gap_se"] * Z_95).to_list()},
            customdata=gaps["policy_decisions"].to_list(),
            hovertemplate=("%{x}<br>%{y:.2f} points per decision behind the grader's bot<br>"
                           "%{customdata} decisions<extra></extra>"),
        )
    figure.update_layout(barmode="group", yaxis_title="points per decision (±95 %)",
                         xaxis_type="category", showlegend=True,
                         legend={"orientation": "h", "yanchor": "bottom", "y": 1.0,
                                 "xanchor": "right", "x": 1.0})
    return _layout(figure, title)


def ranked_causes_chart(frame: pl.DataFrame, title: str) -> go.Figure:
    """Horizontal bars of the ranked list: points per 100 hands per cause, with 95 % whiskers.

    ``frame`` columns: cause (label), points_per_100, low, high, clear (survived the
    false-discovery correction: solid colour; otherwise pale). Drawn in the frame's order, the
    first at the top.
    """
    if frame.is_empty():
        return empty_figure("Nothing to compare yet")
    values = frame["points_per_100"].to_list()
    clear = frame["clear"].to_list()
    colours = []
    for value, sure in zip(values, clear, strict=True):
        base = WIN_COLOUR if (value or 0) >= 0 else LOSS_COLOUR
        colours.append(base if sure else "#c9ccd1")
    figure = go.Figure()
    figure.add_bar(
        y=[label(cause) for cause in frame["cause"].to_list()], x=values, orientation="h",
        marker_color=colours,
        error_x={"type": "data", "symmetric": False,
                 "array": [max(0.0, h - v) for h, v in zip(frame["high"].to_list(), values,
                                                           strict=True)],
                 "arrayminus": [max(0.0, v - lo) for lo, v in zip(frame["low"].to_list(), values,
                                                                  strict=True)]},
        hovertemplate="%{y}<br>%{x:+.1f} points per 100 hands<extra></extra>",
    )
    figure.update_layout(xaxis_title="points per 100 hands against the reference group",
                         yaxis={"autorange": "reversed"}, showlegend=False)
    figure.add_vline(x=0, line_width=1, line_color="#999")
    return _layout(figure, title, height=120 + 50 * frame.height)


def rolling_mix_chart(frame: pl.DataFrame, title: str, axis_title: str,
                      percent: bool = False) -> go.Figure:
    """Rolling windows over a player's hands: the raw line and the line with the mix of games
    held fixed. ``frame`` columns: hand_number, raw, adjusted."""
    if frame.is_empty():
        return empty_figure("Too few hands for a rolling window")
    scale = 100.0 if percent else 1.0
    figure = go.Figure()
    figure.add_scatter(x=frame["hand_number"].to_list(),
                       y=[v * scale for v in frame["raw"].to_list()], mode="lines",
                       name="as played", line={"color": "#9aa3ad", "width": 1.5})
    figure.add_scatter(x=frame["hand_number"].to_list(),
                       y=[v * scale for v in frame["adjusted"].to_list()], mode="lines",
                       name="mix held fixed", line={"color": NEUTRAL_COLOUR, "width": 2.5})
    figure.update_layout(xaxis_title="hands played", yaxis_title=axis_title,
                         legend={"orientation": "h", "yanchor": "top", "y": -0.22,
                                 "xanchor": "left", "x": 0})
    _layout(figure, title, height=400)
    figure.update_layout(margin={"b": 70})
    return figure


def shrunk_strength_chart(frame: pl.DataFrame, title: str) -> go.Figure:
    """Each player's points per hand as measured (grey) and shrunk toward the reference group
    (blue, 95 % interval), best shrunk estimate first. ``frame`` columns: player, raw,
    shrunk, low, high."""
    if frame.is_empty():
        return empty_figure("Nobody to compare")
    names = [label(name) for name in frame["player"].to_list()]
    figure = go.Figure()
    figure.add_scatter(x=frame["raw"].to_list(), y=names, mode="markers", name="as measured",
                       marker={"color": "#9aa3ad", "size": 9, "symbol": "circle-open"})
    shrunk = frame["shrunk"].to_list()
    figure.add_scatter(
        x=shrunk, y=names, mode="markers", name="shrunk toward the group",
        marker={"color": NEUTRAL_COLOUR, "size": 10},
        error_x={"type": "data", "symmetric": False,
                 "array": [h - v for h, v in zip(frame["high"].to_list(), shrunk, strict=True)],
                 "arrayminus": [v - lo for lo, v in zip(frame["low"].to_list(), shrunk,
                                                        strict=True)]},
    )
    figure.update_layout(xaxis_title="points per hand", yaxis={"autorange": "reversed"},
                         legend=_REPORT_LEGEND)
    figure.add_vline(x=0, line_width=1, line_color="#999")
    return _layout(figure, title, height=140 + 32 * frame.height)
