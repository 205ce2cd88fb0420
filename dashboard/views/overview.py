"""Overview: how much data there is, over which dates, and how healthy it is."""

from __future__ import annotations

import streamlit as st

from dashboard import components
from dashboard.components import kpi, percent
from pipeline import read
from pipeline.read import charts

filters = components.current_filters()
st.title("Overview")
components.follow_new_hands("follow_overview")
totals = components.ask(read.overview.overview_totals, filters).row(0, named=True)

# two rows of three: five in one row cut the dates short on a 1,280 px screen
columns = [*st.columns(3), *st.columns(3)]
kpi(columns[0], "Hands", f"{totals['hands']:,}")
kpi(columns[1], "Players", f"{totals['players']:,}")
kpi(columns[2], "Sessions", f"{totals['sessions']:,}")
first, last = totals["first_hand"], totals["last_hand"]
kpi(columns[3], "First hand", f"{first:%Y-%m-%d}" if first else "–",
    f"{first:%Y-%m-%d %H:%M} UTC" if first else "no dated hands")
kpi(columns[4], "Last hand", f"{last:%Y-%m-%d}" if last else "–",
    f"{last:%Y-%m-%d %H:%M} UTC" if last else "no dated hands")

st.subheader("Data health")
columns = st.columns(4)
boards = totals["boards"] or 0
kpi(columns[0], "Fouled boards", percent(totals["fouls"] / boards if boards else None),
    f"{totals['fouls']:,} of {boards:,} boards")
kpi(columns[1], "Audit disagreements", f"{totals['disagreements']:,}",
    "Boards where the source's reported points differ from the re-score")
kpi(columns[2], "Quarantined records", f"{totals['rejects']:,}",
    "Records ingestion refused, with reasons on the Data page")
kpi(columns[3], "Files ingested", f"{totals['files']:,}")

st.plotly_chart(charts.hands_per_day_chart(components.ask(read.overview.hands_by_day, filters)))

left, right = st.columns([3, 2])
with left:
    st.subheader("Players")
    leaderboard = components.ask(read.overview.player_leaderboard, filters)
    st.dataframe(
        leaderboard, hide_index=True, key="leaderboard",
        column_config={
            "player": "player",
            "points_per_hand": st.column_config.NumberColumn("points/hand", format="%+.2f"),
            "foul_rate": st.column_config.NumberColumn("foul rate", format="percent"),
        },
    )
with right:
    st.subheader("Quarantine reasons")
    health = components.ask(read.data.data_health)
    if health.is_empty():
        st.caption("No record was quarantined.")
    else:
        st.dataframe(health, hide_index=True, key="health")
    st.page_link("views/data.py", label="Open the Data page", icon="📥")
