"""Hand browser: find hands (fouls, big royalties, Fantasyland, disagreements) and replay one."""

from __future__ import annotations

import streamlit as st

from dashboard import components, tables
from pipeline import read
from pipeline.read.scope import HandFlags

filters = components.current_filters()
st.title("Hand browser")
components.follow_new_hands("follow_hand_browser")
columns = st.columns(6)
fouls_only = columns[0].checkbox("Fouls only", key="hb_fouls")
big = columns[1].checkbox("Big royalties", key="hb_big")
minimum = columns[2].number_input("at least", min_value=1, max_value=200, value=10, step=1,
                                  key="hb_min", disabled=not big)
fantasyland = columns[3].checkbox("Fantasyland", key="hb_fl")
disagreements = columns[4].checkbox("Disagreements", key="hb_disagree")
graded = columns[5].checkbox("Graded", key="hb_graded",
                             help="Hands with a decision graded by `ofc analyze`")
flags = HandFlags(fouls_only=fouls_only, min_royalties=int(minimum) if big else 0,
                  fantasyland=fantasyland, disagreements=disagreements, graded=graded)
if len(filters.players) > 0:
    st.caption("Flags look at the chosen players' boards.")
hands = components.ask(read.hands.hand_list, filters, flags)
total = int(hands["total"][0]) if not hands.is_empty() else 0
st.caption(f"{total:,} hands match; showing the {hands.height:,} most recent.")
# a hand another page asked to replay (Decision grading): among the choices, even when the list
# misses it, until another hand is picked
focus = st.session_state.get(components.FOCUS_KEY)
focus_header = components.ask(read.hands.hand_header, focus) if focus is not None else None
if focus_header is not None and focus_header.is_empty():
    focus = None  # no longer in the database
    st.session_state.pop(components.FOCUS_KEY, None)
if hands.is_empty() and focus is None:
    st.info("No hand matches.")
    st.stop()
if not hands.is_empty():
    tables.show(hands, "hand_table", height=245,
                order=[column for column in hands.columns if column not in ("hand_key", "total")])


def _description(hand_id: str, started: object, players: str) -> str:
    return f"{hand_id} · {started:%Y-%m-%d %H:%M} · {players}" if started else f"{hand_id} · {players}"


keys = hands["hand_key"].to_list()
descriptions = {key: _description(hand_id, started, players) for key, hand_id, started, players
                in hands.select("hand_key", "hand_id", "started_at", "players").rows()}
if focus is not None:
    if focus not in descriptions:
        header = focus_header.row(0, named=True)
        seated = components.ask(read.hands.hand_players, focus)["player"].to_list()
        keys.insert(0, focus)
        descriptions[focus] = _description(header["hand_id"], header["started_at"],
                                           ", ".join(seated)) + " · opened from another page"
    if st.session_state.pop(components.FOCUS_NEW_KEY, False):
        st.session_state["hb_hand"] = focus
hand_key = st.selectbox("Replay hand", keys, format_func=lambda k: descriptions[k],
                        key="hb_hand")
if focus is not None and hand_key != focus:
    st.session_state.pop(components.FOCUS_KEY, None)  # another hand picked: the request is done
components.render_hand(int(hand_key), key="hb_replay")

grades = components.ask(read.grading.hand_grades, int(hand_key))
if not grades.is_empty():
    st.subheader("Decision grades")
    with st.expander(f"Every graded decision of this hand ({grades.height})", expanded=False):
        st.caption(
            "Each graded street of this hand (also drawn with its street above): the play made, "
            "the best play the grader found and the points the play made gave up against it (± "
            "standard error; exact when every deal of the unseen cards was played out). The "
            "grader's bot: what its rollout policy would have played, and how many points that "
            "play would have kept. The Decision grading page and the Trainer go through a "
            "player's costliest decisions.")
        tables.show(
            grades, "hb_grades",
            order=("player", "street", "situation", "chosen_placement", "best_placement",
                   "ev_loss", "loss_se", "mistake", "mistake_type", "exact",
                   "policy_placement", "policy_gap"),
            overrides={
                "chosen_placement": tables.Text("play made"),
                "best_placement": tables.Text("best play"),
                "ev_loss": tables.Number("EV loss (points)", format="%.2f"),
                "loss_se": tables.Number("± SE", format="%.2f"),
                "mistake_type": tables.Text("mistake type"),
                "policy_placement": tables.Text("the grader's bot"),
                "policy_gap": tables.Number("behind the bot (points)", format="%+.2f"),
            },
        )
