"""Decision grading: EV loss per placement (``ofc analyze``), worst decisions replayed with the
better play on the board, and Fantasyland hands against the exact solver."""

from __future__ import annotations

from dataclasses import replace

import polars as pl
import streamlit as st

from dashboard import components
from dashboard.components import board_html, cards_html, kpi, md, percent, show_html
from pipeline import read
from pipeline.read import charts

ROWS = ("top", "middle", "bottom")

GRADE_NOW_HANDS = (10, 25, 50)


def _grade_now(player: str | None, hands: int | None, outdated: bool = False) -> None:
    """Grade the player's most recent hands (or every hand holding an outdated grade) in this
    process, with a progress bar that shows the rate."""
    import time

    from pipeline.analysis.grade import GradeSettings
    from pipeline.analysis.rollout import prepare_policy
    from pipeline.analysis.runner import analyze_database
    from pipeline.rules.ruleset import STANDARD

    with st.spinner("preparing the rollout policy and the Fantasyland setter (compiled once "
                    "after an install, about 30 s; then loaded)…"):
        prepare_policy(GradeSettings().policy, STANDARD)
    bar = st.progress(0.0, text="grading…")
    started = time.perf_counter()

    def update(done: int, total: int) -> None:
        elapsed = time.perf_counter() - started
        rate = f" ({done / elapsed:.1f} a second)" if done and elapsed > 0 else ""
        bar.progress(done / total if total else 1.0,
                     text=f"grading: {done:,} of {total:,} decisions{rate}")

    try:
        with read.source.database_lock():
            summary = analyze_database(components.database_path(), player=player, hands=hands,
                                       settings=GradeSettings(), jobs=1, on_progress=update,
                                       outdated=outdated)
    except read.source.DatabaseBusy as error:
        st.warning(str(error))
        return
    bar.progress(1.0, text=f"graded {summary.decisions:,} decisions in {summary.hands:,} hands "
                           f"({summary.seconds:.0f} s)")


def _outdated_notice() -> None:
    """How many stored grades are outdated (an older grader or another rollout policy: left
    out of every figure here), with a button that regrades them."""
    decisions, hands = components.ask(read.grading.outdated_summary)
    if not decisions:
        return
    st.warning(f"{decisions:,} graded decisions in {hands:,} hands are outdated: made by an "
               "older version of the grader or with another rollout policy. They are left out of "
               "every figure on this page. Regrade them here or with "
               "`ofc analyze --db FILE --outdated`.")
    if st.button(f"Regrade the {hands:,} hands", key="grading_regrade"):
        _grade_now(None, None, outdated=True)
        st.button("Show the grades", key="grading_regrade_show")


def _empty_page(filters) -> None:  # noqa: ANN001
    """No grades yet: say what grading is, and offer to grade a few hands right here."""
    st.info("No graded decisions for these filters yet. Grading plays every placement a player "
            "made out many times from what they saw, and measures what each play gave up "
            "against the best one. `ofc analyze --db FILE` grades a whole database; you can "
            "also grade a few of a player's recent hands here.")
    _outdated_notice()
    gradable = components.ask(read.grading.gradable_players, filters)
    if gradable.is_empty():
        st.caption("No hand with recorded streets: only hands whose street-by-street placements "
                   "are known can be graded.")
        st.stop()
    players = gradable["player"].to_list()
    player = st.selectbox("Player to grade", players, key="grading_now_player")
    hands = st.segmented_control("Most recent hands", GRADE_NOW_HANDS, default=GRADE_NOW_HANDS[0],
                                 key="grading_now_hands", required=True)
    st.caption("About 1 s a hand on one core (street 1 has some 200 plays to try).")
    if st.button("Grade now", type="primary", key="grading_now"):
        _grade_now(player, int(hands or GRADE_NOW_HANDS[0]))
        st.button("Show the grades", key="grading_now_show")
    st.stop()


filters = components.current_filters()
st.title("Decision grading")
summary = components.ask(read.grading.grading_summary, filters)
if summary.is_empty():
    _empty_page(filters)
_outdated_notice()
graded = summary["player"].unique(maintain_order=True).to_list()
hero = st.selectbox("Player", graded, key="grading_hero",
                    help="Players with graded decisions or Fantasyland hands.")
mine = summary.filter(pl.col("player") == hero)
variants = mine["variant"].to_list()
variant = st.segmented_control("Variant", variants, default=variants[0], key="grading_variant",
                               required=True) if len(variants) > 1 else variants[0]
if variant not in variants:
    variant = variants[0]
row = mine.filter(pl.col("variant") == variant).row(0, named=True)
hero_filters = filters.with_players([hero])
variant_filters = replace(hero_filters, variants=(variant,))
first = row["first_hand"].strftime("%Y-%m-%d") if row["first_hand"] is not None else "?"
last = row["last_hand"].strftime("%Y-%m-%d") if row["last_hand"] is not None else "?"
st.caption(
    f"**Scope:** {md(hero)}, {md(variant)}: {row['decisions']:,} graded decisions in "
    f"{row['hands']:,} hands played {first} to {last} ({row['exact']:,} graded exactly: every "
    f"deal of the unseen cards played out; the others by {row['rollouts'] or 0:.0f} rollouts "
    "per play on average). Each street is played out from what the player saw (own board and "
    "discards, the opponents' placed cards); every seat finishes with a simulator bot. The best "
    "play is picked on one set of rollouts and the loss measured on another (unbiased: it can "
    "be below zero); a mistake is a loss beyond the noise and at least 0.25 points, that a "
    "second look with another bot finishing the hand confirms (*uncertain* when it does not: "
    "the verdict depends on how the hand is played on; never counted as a mistake)."
)

# two rows of three: the losses first (five figures in one row cut their values short)
columns = [*st.columns(3), *st.columns(3)]
if row["decisions"]:
    kpi(columns[0], "EV loss / decision",
        f"{row['ev_loss_per_decision']:.2f} ± {row['ev_loss_se']:.2f}",
        "points given up per graded decision against the best play (mean ± standard error)")
    kpi(columns[2], "EV loss / hand",
        f"{row['ev_loss_per_hand']:.2f} ± {row['ev_loss_per_hand_se']:.2f}",
        "the graded decisions of a hand added up, averaged over hands (± the standard error of "
        "the hands' sums)")
    kpi(columns[3], "Graded correct", percent(row["correct_share"]),
        f"{row['mistakes']:,} mistakes in {row['decisions']:,} decisions; "
        f"{row['uncertain']:,} more uncertain (a mistake by the grader's bot that a second bot "
        "does not confirm: not counted as a mistake)")
else:
    kpi(columns[0], "EV loss / decision", "–", "no graded decision")
if row["fl_hands"]:
    kpi(columns[4], "Fantasyland: given up / hand", f"{row['fl_given_up_per_hand']:.2f}",
        f"{row['fl_hands']:,} Fantasyland hands against the exact solver (royalties + stay "
        f"value); optimal in {percent(row['fl_optimal_share'])}")
else:
    kpi(columns[4], "Fantasyland: given up / hand", "–", "no Fantasyland hand graded")
if row["policy_decisions"]:
    kpi(columns[1], "Behind the grader's bot / decision",
        f"{row['policy_gap_per_decision']:.2f} ± {row['policy_gap_se'] or 0:.2f}",
        f"what the rollout policy's own play would have kept in the same spots "
        f"({row['policy_decisions']:,} decisions; its own plays score 0). The EV loss also "
        "counts what a lookahead finds beyond that bot, which every player pays (about 2 points "
        "a Pineapple decision for the bot itself); this leaves it out, so it tells careless "
        "play from sound play")
else:
    kpi(columns[1], "Behind the grader's bot / decision", "–",
        "not measured by the grades of these decisions: grade them again (ofc analyze)")

left, right = st.columns(2)
with left:
    by_street = components.ask(read.grading.grading_by_street, variant_filters)
    st.plotly_chart(charts.ev_loss_bars(by_street, "street", "EV loss by street"),
                    key="grading_by_street")
with right:
    by_situation = components.ask(read.grading.grading_by_situation, variant_filters)
    st.plotly_chart(charts.ev_loss_bars(by_situation, "situation", "EV loss by situation"),
                    key="grading_by_situation")
    st.caption("fantasyland_draw: the play made or the best one goes for Fantasyland; "
               "fantasyland_made: the top already qualifies. Pale bars: behind the grader's "
               "bot, what its own play would have kept in the same spots.")


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
worst = components.ask(read.grading.worst_decisions, variant_filters, 50, mistakes_only)
if worst.is_empty():
    st.info("No graded decision matches.")
else:
    st.dataframe(
        worst.select("hand_id", "started_at", "street", "situation", "mistake_type",
                     "chosen_placement", "best_placement", "ev_loss", "loss_se", "mistake",
                     "uncertain", "second_loss", "exact", "rollouts"),
        hide_index=True, key="grading_worst",
    )
    choices = list(range(worst.height))
    labels = {
        index: (f"{line['hand_id']} · street {line['street']} · lost {line['ev_loss']:.2f}"
                + (" · mistake" if line["mistake"] else " · uncertain" if line["uncertain"]
                   else ""))
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
    verdict = ("a mistake" if decision["mistake"] else
               f"uncertain: with {decision['second_policy']} finishing the hand the best play "
               f"gains only {decision['second_loss']:.2f} points, so the verdict depends on how "
               "the hand is played on" if decision["uncertain"] else "not a mistake")
    error = " (exact)" if decision["exact"] else f" ± {decision['loss_se']:.2f}"
    st.markdown(
        f"**{md(decision['hand_id'])}**, street {decision['street']}: the play made gave up "
        f"**{decision['ev_loss']:.2f}{error}** points against the best "
        f"of {decision['alternatives']} distinct plays ({md(verdict)})."
    )
    bot_play = components.bot_play_sentence(
        decision, alternatives, "The grader's bot (the rollout policy) makes the same play here.",
        "the play made")
    if bot_play:
        st.caption(bot_play)
    left, middle, right = st.columns(3)
    with left:
        show_html(board_html(before, caption="before the street"))
    with middle:
        show_html(board_html(_with_placement(before, chosen), caption="as played"))
        show_html(_placement_html("played", chosen,
                                  f"{chosen['value']:+.2f} ± {chosen['value_se'] or 0:.2f}"))
    with right:
        show_html(board_html(_with_placement(before, best), caption="better"))
        show_html(_placement_html("best", best,
                                  f"{best['value']:+.2f} ± {best['value_se'] or 0:.2f}"))
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
        alternatives.select("placement", "equivalents", "value", "value_se", "samples", "diff",
                            "diff_se", "eval_samples", "is_chosen", "is_best"),
        hide_index=True, key="grading_alternatives",
    )
    st.caption("value: points for the hand plus the value of earning Fantasyland (the best and "
               "the played play on independent samples, eval_samples; the others on the "
               "selection samples); diff: against the play made on the same selection samples; "
               "equivalents: placements worth exactly the same.")
    if st.button("Replay the whole hand in the Hand browser", key="grading_open_hand"):
        components.open_in_hand_browser(decision["hand_key"])

st.subheader("Fantasyland hands against the solver")
fantasyland = components.ask(read.grading.fantasyland_comparisons, variant_filters, 200)
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
