"""Matches on the pages: each match's settlement (points, settled points, money).

Small components the Sessions and Record pages call (docs/rules.md, section 9): the figures
come from the rules core's settlement, through the read model for stored hands
(:func:`pipeline.read.matches.match_settlements`) and through the live session for the match
being recorded (:meth:`pipeline.live.session.LiveSession.settlements`). Player names and match
ids are untrusted: they reach the page as dataframe cells, escaped HTML or escaped Markdown.
"""

from __future__ import annotations

import html

import streamlit as st

from dashboard import components, tables
from pipeline import read
from pipeline.live.session import LiveSession, match_id_for
from pipeline.live.text import format_money, format_points
from pipeline.rules.settlement import Settlement, match_cap_of

SETTLEMENT_COLUMNS = {
    "settled": st.column_config.NumberColumn("settled", format="%+.2f",
                                             help="points after the match cap"),
    "money": st.column_config.NumberColumn("money", format="%+.2f",
                                           help="settled points × the stake"),
    "points": st.column_config.NumberColumn("points", format="%+d",
                                            help="hand points summed over the match"),
}


def show_session_matches(session_id: str) -> None:
    """The matches with a hand in a session (each taken whole), settled: one row per match and
    player; a match that cannot be settled says why."""
    matches = components.ask(read.matches.match_settlements, sessions=(session_id,))
    if not matches:
        return
    st.subheader("Matches", anchor=False)
    notes = []
    for match in matches:
        if match.settlement is None:
            notes.append(f"**{components.md(match.match_id)}**: not settled — "
                         f"{components.md(match.problem or '')}")
        else:
            cap = f"match cap {match.cap}" if match.cap else "no match cap"
            notes.append(f"**{components.md(match.match_id)}**: {match.hands:,} hands, rules "
                         f"{components.md(match.rules or '')}, {cap}, {match.stake} per point")
    st.caption("A match is settled at its last hand: a player below −cap pays only the cap, the "
               "winners give up the shortfall in proportion to their winnings. "
               + " · ".join(notes))
    frame = read.matches.settlement_frame(matches)
    tables.show(frame.drop("site"), "session_matches", overrides=SETTLEMENT_COLUMNS)


def _settlement_rows(settlement: Settlement) -> str:
    return "".join(
        f"<tr><td>{html.escape(player.player)}</td>"
        f"<td style='text-align:right'>{format_points(player.points)}</td>"
        f"<td style='text-align:right'>{player.settled_shown:+}</td>"
        f"<td style='text-align:right'>{html.escape(format_money(player.money))}"
        f"{' (cap)' if player.capped else ''}</td></tr>"
        for player in settlement.players
    )


def live_match_html(session: LiveSession, number: int, settlement: Settlement) -> str:
    """One match of a live session as a small HTML table (names escaped): points, settled
    points and money per player; the match being played is marked as running."""
    hands = sum(1 for hand in session.hands if hand.match == number)
    running = " — playing" if number == session.match_number else ""
    cap = match_cap_of(session.rules)
    title = (f"Match {number}{running}: {hands} hand{'s' if hands != 1 else ''}"
             + (f", match cap {cap}" if cap else ""))
    return (f"<table class='rec-match'><caption style='text-align:left'>{html.escape(title)}"
            "</caption><thead><tr><th>player</th><th style='text-align:right'>points</th>"
            "<th style='text-align:right'>settled</th><th style='text-align:right'>money</th>"
            f"</tr></thead><tbody>{_settlement_rows(settlement)}</tbody></table>")


def show_live_matches(session: LiveSession) -> None:
    """The live session's matches: the match being played (its running money) and, folded, the
    matches already ended."""
    settled = session.settlements()
    if not settled:
        return
    current = [(number, found) for number, found in settled if number == session.match_number]
    ended = [(number, found) for number, found in settled if number != session.match_number]
    for number, found in current:
        components.show_html(live_match_html(session, number, found))
    if ended:
        with st.expander(f"Matches ended ({len(ended)})", key="rec_matches_ended"):
            for number, found in ended:
                components.show_html(live_match_html(session, number, found))
                st.caption(f"Match id {components.md(match_id_for(session.session_id, number))}")
