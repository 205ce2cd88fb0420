"""Point flow: who won points from whom, overall or in one session, and over time."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import polars as pl
import streamlit as st

from dashboard import components
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
left, right = st.columns(2)
with left:
    st.plotly_chart(charts.point_flow_heatmap(pairs))
with right:
    st.plotly_chart(charts.point_flow_sankey(pairs))
net = pairs.filter(pl.col("points") > 0).sort("points", descending=True).rename(
    {"player": "winner", "opponent": "payer"})
st.dataframe(net, hide_index=True, key="net_pairs")

st.subheader("Cumulative points per player")
span = (options.last_day - options.first_day) if options.first_day and options.last_day else None
bucket = "hour" if span is not None and span <= timedelta(days=3) else "day"
over_time = components.ask(read.players.cumulative_points_by_time, flow_filters, bucket)
if over_time.is_empty():
    st.caption("No dated hands.")
else:
    figure = charts.cumulative_points_chart(
        over_time.rename({"period": "hand_number"}))
    figure.update_layout(xaxis_title=bucket, title=f"Cumulative points per player (by {bucket})")
    st.plotly_chart(figure)

st.subheader("Per session")
by_session = components.ask(read.flow.points_by_session_pair, flow_filters)
st.dataframe(by_session, hide_index=True, key="session_pairs")
