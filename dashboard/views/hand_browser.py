"""Hand browser: find hands (fouls, big royalties, Fantasyland, disagreements) and replay one."""

from __future__ import annotations

import streamlit as st

from dashboard import components
from pipeline import read
from pipeline.read.scope import HandFlags

filters = components.current_filters()
st.title("Hand browser")
components.follow_new_hands("follow_hand_browser")
columns = st.columns(5)
fouls_only = columns[0].checkbox("Fouls only", key="hb_fouls")
big = columns[1].checkbox("Big royalties", key="hb_big")
minimum = columns[2].number_input("at least", min_value=1, max_value=200, value=10, step=1,
                                  key="hb_min", disabled=not big)
fantasyland = columns[3].checkbox("Fantasyland", key="hb_fl")
disagreements = columns[4].checkbox("Disagreements", key="hb_disagree")
flags = HandFlags(fouls_only=fouls_only, min_royalties=int(minimum) if big else 0,
                  fantasyland=fantasyland, disagreements=disagreements)
if len(filters.players) > 0:
    st.caption("Flags look at the chosen players' boards.")
hands = components.ask(read.hands.hand_list, filters, flags)
total = int(hands["total"][0]) if not hands.is_empty() else 0
st.caption(f"{total:,} hands match; showing the {hands.height:,} most recent.")
if hands.is_empty():
    st.info("No hand matches.")
    st.stop()
st.dataframe(hands.drop("hand_key", "total"), hide_index=True, key="hand_table")
keys = hands["hand_key"].to_list()
descriptions = {
    key: f"{hand_id} · {started:%Y-%m-%d %H:%M} · {players}" if started else f"{hand_id} · {players}"
    for key, hand_id, started, players in hands.select(
        "hand_key", "hand_id", "started_at", "players").rows()
}
hand_key = st.selectbox("Replay hand", keys, format_func=lambda k: descriptions[k],
                        key="hb_hand")
components.render_hand(int(hand_key), key="hb_replay")
