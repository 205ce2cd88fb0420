"""Sessions: every session with its result; open one to see (and replay) its hands; compare the
players of these sessions (strength shrunk toward a reference group) and follow one player's
progress with the mix of games held fixed."""

from __future__ import annotations

import streamlit as st

from dashboard import components, tables
from dashboard.comparison import reference_picker, show_comparison, show_progress
from dashboard.matches import show_session_matches
from pipeline import read

filters = components.current_filters()
st.title("Sessions")
waiting = components.ask(read.sessions.hands_waiting_for_sessions)
if waiting:
    st.info(f"{waiting:,} stored hands have no session yet: an ingest of many files works "
            "their sessions out after its last file. They appear here when it ends (should it "
            "have stopped early, the next `ofc ingest` or `ofc watch` finishes them).")
sessions = components.ask(read.sessions.session_results, filters)
if sessions.is_empty():
    st.info("No sessions match these filters.")
    st.stop()
st.caption(f"{sessions.height:,} sessions (the 500 most recent at most); a session is one "
           "player's run of hands at a table, named by its table and start (UTC).")
tables.show(sessions, "sessions_table",
            order=("player", "table_name", "started_at", "ended_at", "hands", "points",
                   "points_per_hand", "foul_rate", "royalties"))

# one tab at a time: only the open tab's figures are asked for and drawn
opened, group, progress = st.tabs(
    ["Open a session", "Players against a group", "Progress of a player"],
    key="sessions_tab", on_change="rerun")
if opened.open:
    with opened:
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
        tables.show(hands, "session_hands",
                    order=("hand_id", "started_at", "variant", "players", "position",
                           "fantasyland", "points", "foul", "royalties", "fantasyland_next",
                           "disagrees"))
        show_session_matches(session_id)
        if not hands.is_empty():
            keys = hands["hand_key"].to_list()
            names = dict(zip(keys, hands["hand_id"].to_list(), strict=True))
            hand_key = st.selectbox("Replay hand", keys, format_func=lambda k: str(names[k]),
                                    key="session_hand")
            components.render_hand(int(hand_key), key="session_replay")
if group.open or progress.open:
    options = components.ask(read.overview.filter_options)
    session_players = sorted(set(sessions["player"].to_list()))
if group.open:
    with group:
        st.caption("The players of these sessions against a reference group (strength shrunk "
                   "toward it).")
        spec = reference_picker("sessions_reference", options.players, options.rules)
        show_comparison(filters, session_players, spec, "sessions_reference")
if progress.open:
    with progress:
        st.caption("One player's progress within each variant and table size.")
        progress_player = st.selectbox("Progress of", session_players,
                                       key="sessions_progress_player")
        show_progress(filters, progress_player, "sessions_progress")
