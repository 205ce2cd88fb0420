"""Point flow: who won points from whom, overall or in one session, over time and game by game."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import polars as pl
import streamlit as st

from dashboard import components, tables
from pipeline import read
from pipeline.read import charts

filters = components.current_filters()
st.title("Point flow")
options = components.ask(read.overview.filter_options)
sessions = options.sessions
if filters.players and not sessions.is_empty():
    sessions = sessions.filter(pl.col("player").is_in(filters.players))
labels = components.session_labels(sessions.head(500)) if not sessions.is_empty() else {}
scope = st.selectbox(
    "Scope", ["all", *labels], format_func=lambda value: "All hands (sidebar filters)"
    if value == "all" else labels.get(value, value), key="flow_scope",
)
flow_filters = filters if scope == "all" else replace(filters, sessions=(scope,))

pairs = components.ask(read.flow.pair_net_points, flow_filters)
if pairs.is_empty():
    st.info("No hands between these players with these filters.")
    st.stop()

# one tab at a time: only the open tab's figures are asked for and drawn
who, over_time, per_game = st.tabs(["Who paid whom", "Over time", "Game by game"],
                                   key="flow_tab", on_change="rerun")
if who.open:
    with who:
        left, right = st.columns(2)
        with left:
            st.plotly_chart(charts.point_flow_heatmap(pairs))
        with right:
            st.plotly_chart(charts.point_flow_sankey(pairs))
        net = pairs.filter(pl.col("points") > 0).sort("points", descending=True).rename(
            {"player": "winner", "opponent": "payer"})
        tables.show(net, "net_pairs", order=("winner", "payer", "points", "hands"),
                    overrides={"points": tables.Number("points won", format=tables.COUNT)})
if over_time.open:
    with over_time:
        span = (options.last_day - options.first_day) \
            if options.first_day and options.last_day else None
        bucket = "hour" if span is not None and span <= timedelta(days=3) else "day"
        by_time = components.ask(read.players.cumulative_points_by_time, flow_filters, bucket)
        if by_time.is_empty():
            st.caption("No dated hands.")
        else:
            st.plotly_chart(charts.cumulative_points_panels(
                by_time, x_column="period", x_title=bucket,
                title=f"Cumulative points per player (by {bucket})"))
            st.caption("Each player on their own points scale: one big winner or loser would "
                       "flatten every other line on a shared one.")
if per_game.open:
    with per_game:
        games = components.ask(read.flow.points_by_game_pair, flow_filters)
        st.caption("Each pair of players once per game, from the winner's side. A game is a "
                   "table's run of hands, named by its table and when its first player sat "
                   f"down (UTC); the games of the {read.flow.RECENT_SESSIONS} most recent "
                   "sessions.")
        tables.show(games.with_columns(game=pl.concat_str(
            pl.col("table_name").fill_null("no table"), pl.lit(" · "),
            pl.col("game_start").dt.strftime("%Y-%m-%d %H:%M").fill_null("undated"))),
            "game_pairs", order=("game", "winner", "payer", "points", "hands"),
            overrides={"points": tables.Number("points won", format=tables.COUNT)})
