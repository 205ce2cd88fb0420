"""Overview: how much data there is, over which dates, how the chosen players play, and how
healthy the data is."""

from __future__ import annotations

import streamlit as st

from dashboard import components, tables
from dashboard.components import kpi, percent
from pipeline import read
from pipeline.read import charts

filters = components.current_filters()
st.title("Overview")
components.follow_new_hands("follow_overview")
totals = components.ask(read.overview.overview_totals, filters).row(0, named=True)
chosen = len(filters.players)

# four, then the two dates in a row of three: dates in a quarter of a 1,280 px screen are cut
columns = [*st.columns(4), *st.columns(3)]
kpi(columns[0], "Hands", f"{totals['hands']:,}",
    "hands where a chosen player sat" if chosen else "every hand the filters keep")
kpi(columns[1], "Players", f"{totals['players']:,}",
    f"of the {chosen:,} chosen, those with hands here" if chosen else "everyone who played")
kpi(columns[2], "Sessions", f"{totals['sessions']:,}",
    "the chosen players' sessions" if chosen else None)
boards = totals["boards"] or 0
kpi(columns[3], "Fouled boards", percent(totals["fouls"] / boards if boards else None),
    f"{totals['fouls']:,} of {boards:,} boards" + (" of the chosen players" if chosen else ""))
first, last = totals["first_hand"], totals["last_hand"]
kpi(columns[4], "First hand", f"{first:%Y-%m-%d}" if first else "–",
    f"{first:%Y-%m-%d %H:%M} UTC" if first else "no dated hands")
kpi(columns[5], "Last hand", f"{last:%Y-%m-%d}" if last else "–",
    f"{last:%Y-%m-%d %H:%M} UTC" if last else "no dated hands")

st.plotly_chart(charts.hands_per_day_chart(components.ask(read.overview.hands_by_day, filters)))

st.subheader("Players")
leaderboard = components.ask(read.overview.player_leaderboard, filters)
tables.show(leaderboard, "leaderboard")

st.subheader("Data health")
columns = st.columns(4)
kpi(columns[0], "Audit disagreements", f"{totals['disagreements']:,}",
    "Boards where the source's reported points differ from the re-score")
kpi(columns[1], "Quarantined records", f"{totals['rejects']:,}",
    "Records ingestion refused, with reasons on the Data page")
kpi(columns[2], "Files ingested", f"{totals['files']:,}")
with columns[3]:
    st.page_link("views/data.py", label="Open the Data page", icon="📥")
health = components.ask(read.data.data_health)
if health.is_empty():
    st.caption("No record was quarantined.")
else:
    tables.show(health, "health")
