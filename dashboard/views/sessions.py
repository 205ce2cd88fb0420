"""Sessions: every session with its result; open one to see (and replay) its hands; compare the
players of these sessions (strength shrunk toward a reference group) and follow one player's
progress with the mix of games held fixed."""

from __future__ import annotations

import streamlit as st

from dashboard import components
from dashboard.comparison import reference_picker, show_comparison, show_progress
from dashboard.matches import show_session_matches
from pipeline import read

filters = components.current_filters()
st.title("Sessions")
sessions = components.ask(read.sessions.session_results, filters)
if sessions.is_empty():
    st.info("No sessions match these filters.")
    st.stop()
st.caption(f"{sessions.height:,} sessions (the 500 most recent at most); a session is one "
           "player's run of hands at a table.")
st.dataframe(
    sessions, hide_index=True, key="sessions_table",
    column_config={
        "points_per_hand": st.column_config.NumberColumn("points/hand", format="%+.2f"),
        "foul_rate": st.column_config.NumberColumn("foul rate", format="percent"),
    },
)
labels = components.session_labels(sessions)
session_id = st.selectbox("Open session", list(labels), format_func=lambda v: labels[v],
                          key="open_session")
hands = components.ask(read.sessions.session_hands, session_id)
row = sessions.filter(sessions["session_id"] == session_id).row(0, named=True)
columns = st.columns(4)
components.kpi(columns[0], "Hands", f"{row['hands']:,}")
components.kpi(columns[1], "Points", f"{row['points']:+,}")
components.kpi(columns[2], "Points / hand", components.signed(row["points_per_hand"]))
components.kpi(columns[3], "Foul rate", components.percent(row["foul_rate"]))
st.dataframe(hands.drop("hand_key"), hide_index=True, key="session_hands")
show_session_matches(session_id)
if not hands.is_empty():
    keys = hands["hand_key"].to_list()
    names = dict(zip(keys, hands["hand_id"].to_list(), strict=True))
    hand_key = st.selectbox("Replay hand", keys, format_func=lambda k: str(names[k]),
                            key="session_hand")
    components.render_hand(int(hand_key), key="session_replay")

st.subheader("Comparing players over sessions")
st.caption("The players of these sessions against a reference group (strength shrunk toward it), "
           "and one player's progress within each variant and table size.")
options = components.ask(read.overview.filter_options)
session_players = sorted(set(sessions["player"].to_list()))
spec = reference_picker("sessions_reference", options.players, options.rules)
show_comparison(filters, session_players, spec, "sessions_reference")
progress_player = st.selectbox("Progress of", session_players, key="sessions_progress_player")
show_progress(filters, progress_player, "sessions_progress")
