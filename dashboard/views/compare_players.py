"""Compare players: side-by-side key rates; against a chosen reference group with strength shrunk
toward it (small samples are not ranked on luck); small multiples across sessions; fair trends
and before/after with the mix of games held fixed."""

from __future__ import annotations

import streamlit as st

from dashboard import components, tables
from dashboard.comparison import reference_picker, show_comparison, show_progress
from pipeline import read
from pipeline.read import charts

MAX_DEFAULT_PLAYERS = 6

filters = components.current_filters()
st.title("Compare players")
options = components.ask(read.overview.filter_options)
players = list(filters.players) or list(options.players[:MAX_DEFAULT_PLAYERS])
if not filters.players:
    st.caption(f"The {len(players)} most active players; choose players in the sidebar to change.")
chosen = filters.with_players(players)
kpis = components.ask(read.players.player_kpis, chosen)
if kpis.is_empty():
    st.info("No hands for these players with these filters.")
    st.stop()

st.plotly_chart(charts.kpi_comparison_chart(kpis))
tables.show(kpis, "kpi_table",
            order=("player", "hands", "points", "points_per_hand", "points_se", "foul_rate",
                   "royalties_per_hand", "scoop_rate", "fl_entry_rate", "fl_stay_rate"))

# one tab at a time: only the open tab's figures are asked for and drawn
group, cumulative, by_session, progress = st.tabs(
    ["Against a reference group", "Cumulative points", "Session by session",
     "Trend and \"did it improve?\""], key="compare_tab", on_change="rerun")
if group.open:
    with group:
        st.caption("Each player against the group you choose (without the player), weighted by "
                   "the player's own mix of variants; strength is points per hand shrunk toward "
                   "the group.")
        spec = reference_picker("compare_reference", options.players, options.rules)
        show_comparison(filters, kpis["player"].to_list(), spec, "compare_reference")
if cumulative.open:
    with cumulative:
        st.plotly_chart(charts.cumulative_points_panels(
            components.ask(read.players.cumulative_points, chosen)))
        st.caption("Each player on their own points scale: one big winner or loser would "
                   "flatten every other line on a shared one.")
if by_session.open or progress.open:
    sessions = components.ask(read.sessions.session_results, chosen)
if by_session.open:
    with by_session:
        if sessions.is_empty():
            st.caption("No sessions recorded for these players.")
        else:
            st.plotly_chart(charts.session_small_multiples(sessions, kpis["player"].to_list()))
            trend_player = st.selectbox("Trend across sessions for", kpis["player"].to_list(),
                                        key="trend_player")
            st.plotly_chart(charts.session_trend_chart(sessions, trend_player))
            tables.show(sessions, "session_table",
                        order=("player", "table_name", "started_at", "hands", "points",
                               "points_per_hand", "foul_rate", "royalties"))
if progress.open:
    with progress:
        progress_player = st.selectbox("Progress of", kpis["player"].to_list(),
                                       key="compare_progress_player")
        st.caption("The mix of games held fixed: within each variant and table size.")
        show_progress(filters, progress_player, "compare_progress")
