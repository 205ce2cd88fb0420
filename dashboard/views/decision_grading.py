"""Decision grading: EV loss per placement (``ofc analyze``), worst decisions replayed with the
better play on the board, and Fantasyland hands against the exact solver."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard import components
from dashboard.components import board_html, cards_html, kpi, md, percent, show_html
from pipeline import read
from pipeline.read import charts

ROWS = ("top", "middle", "bottom")

filters = components.current_filters()
st.title("Decision grading")
summary = components.ask(read.grading.grading_summary, filters)
if summary.is_empty():
    st.info("No graded decisions for these filters yet. Grade stored hands (with streets) with "
            "`ofc analyze --db FILE [--player NAME] [--rollouts 100]`.")
    st.stop()
graded = summary["player"].to_list()
hero = st.selectbox("Player", graded, key="grading_hero",
                    help="Players with graded decisions or Fantasyland hands.")
row = summary.filter(pl.col("player") == hero).row(0, named=True)
hero_filters = filters.with_players([hero])
st.caption(
    "Each street the player decided is played out many times from what the player saw (own "
    "board and discards, the opponents' placed cards); every seat finishes with a simulator bot. "
    "A decision is a mistake only when the better play's margin is beyond the noise. "
    f"{md(hero)}: {row['decisions']:,} decisions in {row['hands']:,} hands, "
    f"{row['rollouts'] or 0:.0f} rollouts per decision on average."
)

columns = st.columns(4)
if row["decisions"]:
    kpi(columns[0], "EV loss / decision",
        f"{row['ev_loss_per_decision']:.2f} ± {row['ev_loss_se']:.2f}",
        "points given up per graded decision against the best play (mean ± standard error)")
    kpi(columns[1], "EV loss / hand", f"{row['ev_loss_per_hand']:.2f}",
        "the graded decisions of a hand added up, averaged over hands")
    kpi(columns[2], "Graded correct", percent(row["correct_share"]),
        f"{row['mistakes']:,} mistakes in {row['decisions']:,} decisions")
else:
    kpi(columns[0], "EV loss / decision", "–", "no graded decision")
if row["fl_hands"]:
    kpi(columns[3], "Fantasyland: given up / hand", f"{row['fl_given_up_per_hand']:.2f}",
        f"{row['fl_hands']:,} Fantasyland hands against the exact solver (royalties + stay "
        f"value); optimal in {percent(row['fl_optimal_share'])}")
else:
    kpi(columns[3], "Fantasyland: given up / hand", "–", "no Fantasyland hand graded")

left, right = st.columns(2)
with left:
    by_street = components.ask(read.grading.grading_by_street, hero_filters)
    st.plotly_chart(charts.ev_loss_bars(by_street, "street", "EV loss by street"))
with right:
    by_situation = components.ask(read.grading.grading_by_situation, hero_filters)
    st.plotly_chart(charts.ev_loss_bars(by_situation, "situation", "EV loss by situation"))
    st.caption("fantasyland_draw: the play made or the best one goes for Fantasyland; "
               "fantasyland_made: the top already qualifies.")


def _board_before(cards: pl.DataFrame, player: str, street: int, include: bool) -> dict[str, list[str]]:
    """A player's rows after the streets before ``street`` (and ``street`` itself if ``include``)."""
    last = street if include else street - 1
    rows: dict[str, list[str]] = {name: [] for name in ROWS}
    part = cards.filter((pl.col("player") == player) & (pl.col("street") <= last)
                        & (pl.col("row_name") != "discard")).sort("street", "card_order")
    for card, row_name in part.select("card", "row_name").rows():
        rows[row_name].append(card)
    return rows


def _with_placement(rows: dict[str, list[str]], placement: dict) -> dict[str, list[str]]:
    return {name: rows[name] + (placement[name] or "").split() for name in ROWS}


def _placement_html(title: str, placement: dict, estimate: str) -> str:
    parts = []
    for name in ROWS:
        cards = (placement[name] or "").split()
        if cards:
            parts.append(f"{name} {cards_html(cards)}")
    if placement["discards"]:
        parts.append(f"discard {cards_html(placement['discards'].split())}")
    return (f'<div style="font-size:0.9em"><b>{title}</b> · {estimate}<br>'
            + " · ".join(parts) + "</div>")


st.subheader("Worst decisions")
mistakes_only = st.checkbox("Mistakes only", key="grading_mistakes_only")
worst = components.ask(read.grading.worst_decisions, hero_filters, 50, mistakes_only)
if worst.is_empty():
    st.info("No graded decision matches.")
else:
    st.dataframe(
        worst.select("hand_id", "started_at", "street", "situation", "chosen_placement",
                     "best_placement", "ev_loss", "loss_se", "mistake", "rollouts"),
        hide_index=True, key="grading_worst",
    )
    choices = list(range(worst.height))
    labels = {
        index: (f"{line['hand_id']} · street {line['street']} · lost {line['ev_loss']:.2f}"
                + (" · mistake" if line["mistake"] else ""))
        for index, line in enumerate(worst.iter_rows(named=True))
    }
    picked = st.selectbox("Replay", choices, format_func=labels.__getitem__, key="grading_pick")
    decision = worst.row(int(picked), named=True)
    alternatives = components.ask(read.grading.decision_alternatives, decision["hand_key"], hero,
                                  decision["street"])
    cards = components.ask(read.hands.hand_streets, decision["hand_key"])
    players = components.ask(read.hands.hand_players, decision["hand_key"])
    chosen = alternatives.filter(pl.col("is_chosen")).row(0, named=True)
    best = alternatives.filter(pl.col("is_best")).row(0, named=True)
    before = _board_before(cards, hero, decision["street"], include=False)
    verdict = "a mistake" if decision["mistake"] else "within the noise"
    st.markdown(
        f"**{md(decision['hand_id'])}**, street {decision['street']}: the play made gave up "
        f"**{decision['ev_loss']:.2f} ± {decision['loss_se']:.2f}** points against the best "
        f"of {decision['alternatives']} distinct plays ({md(verdict)})."
    )
    left, middle, right = st.columns(3)
    with left:
        show_html(board_html(before, caption="before the street"))
    with middle:
        show_html(board_html(_with_placement(before, chosen), caption="as played"))
        show_html(_placement_html("played", chosen,
                                  f"{chosen['ev']:+.2f} ± {chosen['se'] or 0:.2f}"))
    with right:
        show_html(board_html(_with_placement(before, best), caption="better"))
        show_html(_placement_html("best", best, f"{best['ev']:+.2f} ± {best['se'] or 0:.2f}"))
    seen = players.filter(pl.col("player") != hero)
    hero_position = players.filter(pl.col("player") == hero)["position"][0]
    if not seen.is_empty():
        st.caption("What the player saw of the opponents (a Fantasyland board is set in private):")
        columns = st.columns(seen.height)
        for column, opponent in zip(columns, seen.iter_rows(named=True), strict=True):
            with column:
                st.markdown(md(opponent["player"]))
                if opponent["fantasyland"]:
                    st.caption("Fantasyland")
                    continue
                show_html(board_html(_board_before(
                    cards, opponent["player"], decision["street"],
                    include=opponent["position"] < hero_position)))
    st.dataframe(
        alternatives.select("placement", "equivalents", "samples", "ev", "se", "diff", "diff_se",
                            "is_chosen", "is_best"),
        hide_index=True, key="grading_alternatives",
    )
    st.caption("ev: points for the hand plus the value of earning Fantasyland; diff: against the "
               "play made on the same rollouts; equivalents: placements worth exactly the same.")

st.subheader("Fantasyland hands against the solver")
fantasyland = components.ask(read.grading.fantasyland_comparisons, hero_filters, 200)
if fantasyland.is_empty():
    st.info("No Fantasyland hand graded for this player.")
else:
    st.dataframe(
        fantasyland.select("hand_id", "started_at", "cards_dealt", "played_value", "solver_value",
                           "points_given_up", "played_stays", "solver_stays", "played_foul"),
        hide_index=True, key="grading_fantasyland",
    )
    labels = {index: f"{line['hand_id']} · gave up {line['points_given_up']:.1f}"
              for index, line in enumerate(fantasyland.iter_rows(named=True))}
    picked = st.selectbox("Compare", list(labels), format_func=labels.__getitem__,
                          key="grading_fl_pick")
    hand = fantasyland.row(int(picked), named=True)
    left, right = st.columns(2)
    for column, side, caption in ((left, "played", "as played"), (right, "solver", "solver")):
        with column:
            rows = {name: (hand[f"{side}_{name}"] or "").split() for name in ROWS}
            show_html(board_html(rows, caption=f"{caption}: value {hand[f'{side}_value']:g}"))
            if hand[f"{side}_discards"]:
                show_html(f'<div style="font-size:0.85em">discarded '
                          f'{cards_html(hand[f"{side}_discards"].split())}</div>')
