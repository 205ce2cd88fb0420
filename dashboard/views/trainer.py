"""Trainer: replay your own costliest graded mistakes as quizzes.

Each quiz is a decision graded a mistake by ``ofc analyze``, shown as the player saw it (their
board before the street, the cards dealt, the opponents' cards already placed). The player
places the cards with the card picker; the answer is checked against the grade (the best play,
every play's value with its error bar, the loss) and stored in ``trainer_answers``, so the
progress table shows which kinds of mistake keep coming back. The logic is in
:mod:`pipeline.analysis.trainer`; this page lays it out. Names are escaped (:func:`components.md`).
"""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard import components, quiz
from dashboard.components import board_html, cards_html, md, percent, show_html
from pipeline import read
from pipeline.analysis.trainer import AnswerCheck, AnswerError, check_answer, record_answer

ROWS = ("top", "middle", "bottom")
QUIZZES = 30
RESULT = "trainer_result"  # (quiz key, AnswerCheck)
NOTICE = "trainer_notice"
PICK = "trainer_pick"


def _quiz_key(row: dict) -> str:
    return f"trainer_{row['hand_key']}_{row['street']}"


def _check(row: dict, answer: dict[str, str]) -> None:
    """Check the answer against the grade and store it (a callback: runs before the rerun)."""
    state = st.session_state
    state[NOTICE] = None
    database = components.database_path()
    try:
        if components.read_only():
            # checked, not kept: a read-only dashboard writes nothing
            result = check_answer(database, row["hand_key"], row["player"], row["street"], answer)
            state[NOTICE] = ("This dashboard is read-only: the answer is checked but not kept "
                             "in your progress.")
        else:
            with read.source.database_lock():
                result = check_answer(database, row["hand_key"], row["player"], row["street"],
                                      answer)
                record_answer(database, result)
    except (AnswerError, read.source.DatabaseBusy) as error:
        state[NOTICE] = str(error)
        return
    state[RESULT] = (_quiz_key(row), result)


def _next(count: int) -> None:
    state = st.session_state
    state[PICK] = (int(state.get(PICK) or 0) + 1) % count
    state[RESULT] = None


def _position(frame: pl.DataFrame, player: str) -> tuple[dict[str, list[str]], list[str], int,
                                                         dict[str, dict[str, list[str]]],
                                                         list[str]]:
    """The player's board before the street, the dealt cards, the discards to make, the
    opponents' boards as seen, and the player's own earlier discards."""
    own: dict[str, list[str]] = {row: [] for row in ROWS}
    dealt: list[str] = []
    discards = 0
    thrown: list[str] = []
    seen: dict[str, dict[str, list[str]]] = {}
    for line in frame.iter_rows(named=True):
        if line["kind"] == "dealt":
            dealt.append(line["card"])
            discards += line["row_name"] == "discard"
        elif line["kind"] == "own":
            if line["row_name"] in own:
                own[line["row_name"]].append(line["card"])
            else:
                thrown.append(line["card"])
        else:
            seen.setdefault(line["player"], {row: [] for row in ROWS})[line["row_name"]].append(
                line["card"])
    return own, dealt, discards, seen, thrown


def _with(rows: dict[str, list[str]], placement: dict) -> dict[str, list[str]]:
    return {name: rows[name] + (placement[name] or "").split() for name in ROWS}


def _reveal(row: dict, result: AnswerCheck, own: dict[str, list[str]]) -> None:
    """The best play, each play's value with its error bar, and what the answer costs."""
    alternatives = components.ask(read.grading.decision_alternatives, row["hand_key"],
                                  row["player"], row["street"])
    best = alternatives.filter(pl.col("is_best")).row(0, named=True)
    played = alternatives.filter(pl.col("is_chosen")).row(0, named=True)
    exact = " (exact: every deal played out)" if result.exact else ""
    if result.is_best:
        st.success(f"Right: that is the best play{exact}.")
    elif result.correct:
        st.success(f"Good: not clearly worse than the best play (it gives up "
                   f"{result.loss:.2f} ± {result.loss_se:.2f} points){exact}.")
    else:
        error = "" if result.exact else f" ± {result.loss_se:.2f}"
        st.error(f"The best play gains {result.loss:.2f}{error} points over your answer{exact}.")
    if result.is_played:
        st.caption("Your answer is what you played at the table.")
    loss = (f"{row['ev_loss']:.2f} points" if row["exact"]
            else f"{row['ev_loss']:.2f} ± {row['loss_se']:.2f} points")
    st.markdown(f"At the table you played **{md(played['placement'])}**: it lost {loss} "
                f"against the best play ({md(row['mistake_type'] or 'mistake')}).")
    bot_play = components.bot_play_sentence(
        row, alternatives, "The grader's bot (the rollout policy) plays what you played at the "
        "table: the loss is what a lookahead finds beyond the bot's own judgement.",
        "what you played")
    if bot_play:
        st.caption(bot_play)
    left, right = st.columns(2)
    with left:
        show_html(board_html(_with(own, best), caption="best play"))
        show_html(f'<div style="font-size:0.9em">{md(best["placement"])}</div>')
    with right:
        show_html(board_html(_with(own, played), caption="played at the table"))
    st.plotly_chart(quiz.alternatives_chart(alternatives, result.alternative), key="trainer_chart")
    st.caption("Value: points for the hand plus the value of earning Fantasyland, under the "
               "grader's rollouts. The best play and the play made are measured on fresh samples "
               "(unbiased); bars are 95 % intervals.")


def main() -> None:
    """The page."""
    filters = components.current_filters()
    st.title("Trainer")
    summary = components.ask(read.grading.grading_summary, filters)
    if summary.is_empty():
        st.info("The trainer replays your graded mistakes. Grade some hands first: page "
                "Decision grading, or `ofc analyze --db FILE --player NAME`.")
        st.stop()
    players = summary.filter(pl.col("decisions") > 0)["player"].unique(maintain_order=True).to_list()
    hero = st.selectbox("Player", players, key="trainer_hero",
                        help="Whose mistakes to replay.")
    hero_filters = filters.with_players([hero])
    quizzes = components.ask(read.grading.trainer_quizzes, hero_filters, QUIZZES)
    if quizzes.is_empty():
        st.success(f"No graded mistake for {md(hero)} in these filters: nothing to replay.")
    else:
        count = quizzes.height
        if int(st.session_state.get(PICK) or 0) >= count:
            st.session_state[PICK] = 0
        labels = {
            index: (f"{index + 1}. hand {line['hand_id']} · {line['variant']} · street "
                    f"{line['street']}" + (" ✓" if line["solved"] else ""))
            for index, line in enumerate(quizzes.iter_rows(named=True))
        }
        what = "graded mistake" if count == 1 else f"{count} costliest graded mistakes"
        uncertain = int(summary.filter(pl.col("player") == hero)["uncertain"].sum())
        left_out = (f" {uncertain:,} uncertain verdicts (mistakes by the grader's bot that a "
                    "second bot finishing the hand does not confirm) are not quizzed."
                    if uncertain else "")
        st.caption(f"The {what} of {md(hero)}, largest first. Place the cards as you would now, "
                   f"then check.{left_out}")
        pick = st.selectbox("Quiz", list(labels), format_func=labels.__getitem__, key=PICK)
        row = quizzes.row(int(pick), named=True)
        position = components.ask(read.grading.quiz_position, row["hand_key"], row["player"],
                                  row["street"])
        own, dealt, discards, seen, thrown = _position(position, row["player"])
        when = row["started_at"].strftime("%Y-%m-%d") if row["started_at"] is not None else "undated"
        st.markdown(f"**Hand {md(row['hand_id'])}** ({when}, {md(row['variant'])}), street "
                    f"{row['street']}: where do the dealt cards go?"
                    + (f" Discard {discards}." if discards else ""))
        show_html(f'<div>dealt {cards_html(dealt)}</div>'
                  + (f'<div style="font-size:0.85em;color:#6b7280">your earlier discards '
                     f'{cards_html(thrown)}</div>' if thrown else ""))
        if seen:
            with st.expander("What you saw of the opponents", expanded=False):
                for name, rows in seen.items():
                    show_html(board_html(rows, caption=name))
        key = _quiz_key(row)
        answer = quiz.placement_picker(key, dealt, own, discards)
        notice = st.session_state.get(NOTICE)
        if notice:
            st.warning(notice)
        result = st.session_state.get(RESULT)
        if answer is not None:
            st.button("Check my answer", type="primary", key="trainer_check", on_click=_check,
                      args=(row, answer), width="stretch")
        if result is not None and result[0] == key:
            _reveal(row, result[1], own)
            st.button("Next quiz", key="trainer_next", on_click=_next, args=(count,),
                      width="stretch")

    st.subheader("Progress by mistake type")
    progress = components.ask(read.grading.trainer_progress, hero_filters)
    if progress.is_empty():
        st.caption("No answers yet: each answer is stored, and this table shows how each kind "
                   "of mistake fares over time.")
    else:
        shown = progress.with_columns(
            pl.col("correct_share").map_elements(percent, return_dtype=pl.String).alias("correct"),
            pl.col("recent_correct_share").map_elements(percent, return_dtype=pl.String)
            .alias("last five"),
        ).select("variant", "mistake_type", "answers", "correct", "last five",
                 "graded_mistakes", "first_answered", "last_answered")
        st.dataframe(shown, hide_index=True, key="trainer_progress")
    over_time = components.ask(read.grading.mistakes_over_time, hero_filters)
    if not over_time.is_empty():
        st.caption("Graded mistakes by type and month (share of that month's graded decisions):")
        table = over_time.with_columns(pl.col("month").cast(pl.String)).pivot(
            on="month", index=["variant", "mistake_type"], values="share").sort(
            ["variant", "mistake_type"])
        st.dataframe(table, hide_index=True, key="trainer_over_time")


main()
