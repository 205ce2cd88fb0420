"""Compare players: side-by-side key rates; against a chosen reference group with strength shrunk
toward it (small samples are not ranked on luck); small multiples across sessions; fair trends
and before/after with the mix of games held fixed."""

from __future__ import annotations

import streamlit as st

from dashboard import components
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
st.dataframe(
    kpis.select("player", "hands", "points", "points_per_hand", "points_se", "foul_rate",
                "royalties_per_hand", "scoop_rate", "fl_entry_rate", "fl_stay_rate"),
    hide_index=True, key="kpi_table",
    column_config={
        "points_per_hand": st.column_config.NumberColumn("points/hand", format="%+.2f"),
        "points_se": st.column_config.NumberColumn("± SE", format="%.2f"),
        "foul_rate": st.column_config.NumberColumn("foul rate", format="percent"),
        "royalties_per_hand": st.column_config.NumberColumn("royalties/hand", format="%.2f"),
        "scoop_rate": st.column_config.NumberColumn("scoop rate", format="percent"),
        "fl_entry_rate": st.column_config.NumberColumn("FL entry", format="percent"),
        "fl_stay_rate": st.column_config.NumberColumn("FL stay", format="percent"),
    },
)

st.subheader("Against a reference group")
st.caption("Each player against the group you choose (without the player), weighted by the "
           "player's own mix of variants; strength is points per hand shrunk toward the group.")
spec = reference_picker("compare_reference", options.players, options.rules)
show_comparison(filters, kpis["player"].to_list(), spec, "compare_reference")

st.plotly_chart(charts.cumulative_points_chart(components.ask(read.players.cumulative_points, chosen)))

sessions = components.ask(read.sessions.session_results, chosen)
st.subheader("Session by session")
if sessions.is_empty():
    st.caption("No sessions recorded for these players.")
else:
    st.plotly_chart(charts.session_small_multiples(sessions, kpis["player"].to_list()))
    trend_player = st.selectbox("Trend across sessions for", kpis["player"].to_list(),
                                key="trend_player")
    st.plotly_chart(charts.session_trend_chart(sessions, trend_player))
    st.markdown("**Fair trend and \"did it improve?\"** (mix of games held fixed)")
    show_progress(filters, trend_player, "compare_progress")
    st.dataframe(sessions, hide_index=True, key="session_table")
