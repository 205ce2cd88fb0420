"""What the comparison pages share (Coaching report, Compare players, Player review, Sessions):
the reference-group picker (whom to compare with; the outlier rule, visible and switchable), the
table of players against the group with their shrunk strength, and a player's progress with the
mix of games held fixed (fair trend, before/after a date, rolling windows).

Names are untrusted: they reach the page as widget options and table cells (plain text), or
through :func:`dashboard.components.md`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import polars as pl
import streamlit as st

from dashboard import components
from dashboard.components import md
from pipeline.read import charts
from pipeline.read.scope import Filters
from pipeline.report.compare import PlayerComparison, Progress, compare_players, player_progress
from pipeline.report.model import DEFAULT_SETTINGS, ReportSettings
from pipeline.report.reference import (
    DEFAULT_OUTLIER_SD,
    FIELD,
    GroupKind,
    ReferenceError,
    ReferenceSpec,
)

KIND_LABELS = {
    GroupKind.FIELD: "The field (everyone else)",
    GroupKind.STAKE: "Players of a stake (by rules)",
    GroupKind.NAMED: "Named regulars",
    GroupKind.QUALIFIED: "Enough hands, low foul rate",
}


def reference_picker(key: str, players: Sequence[str], rules: Sequence[str],
                     exclude: Sequence[str] = ()) -> ReferenceSpec:
    """Draw the group controls (keys start with ``key``) and return the chosen group.

    An incomplete choice (no names, no rules) shows a warning and falls back to the field.
    """
    columns = st.columns([2, 3, 2])
    kind = columns[0].selectbox("Compare with", list(KIND_LABELS),
                                format_func=lambda value: KIND_LABELS[value],
                                key=f"{key}_kind",
                                help="The reference group every comparison is made against.")
    names: tuple[str, ...] = ()
    stake: tuple[str, ...] = ()
    min_hands, max_foul = 0, None
    if kind is GroupKind.NAMED:
        names = tuple(columns[1].multiselect(
            "Regulars", [p for p in players if p not in exclude], key=f"{key}_names"))
    elif kind is GroupKind.STAKE:
        stake = tuple(columns[1].multiselect("Rules (the stake)", list(rules),
                                             key=f"{key}_rules"))
    elif kind is GroupKind.QUALIFIED:
        inner = columns[1].columns(2)
        min_hands = int(inner[0].number_input("At least hands", min_value=1, value=300,
                                              step=50, key=f"{key}_min_hands"))
        max_foul = float(inner[1].number_input("Foul rate below (%)", min_value=1.0,
                                               max_value=100.0, value=25.0, step=1.0,
                                               key=f"{key}_max_foul")) / 100
    with columns[2]:
        rule = st.checkbox("Leave out outliers", value=True, key=f"{key}_outliers",
                           help="Players whose results sit beyond this many times the "
                                "field's typical spread (robust standard deviations) from the "
                                "field's median are left out, and pairings against them do "
                                "not count.")
        sd = st.number_input("Robust SDs", min_value=1.0, value=DEFAULT_OUTLIER_SD, step=0.5,
                             key=f"{key}_sd", disabled=not rule)
    spec = ReferenceSpec(kind, names, stake, min_hands, max_foul, float(sd) if rule else None)
    try:
        spec.check()
    except ReferenceError as error:
        st.warning(f"{error}: comparing with the field meanwhile.")
        return ReferenceSpec(outlier_sd=float(sd) if rule else None) if rule else \
            ReferenceSpec(outlier_sd=None)
    return spec


def show_comparison(filters: Filters, players: Sequence[str], spec: ReferenceSpec, key: str,
                    settings: ReportSettings = DEFAULT_SETTINGS) -> PlayerComparison:
    """The players against the group (each without himself): a table and the shrunk-strength
    chart, the coaching report's figures."""
    comparison: PlayerComparison = components.ask(compare_players, filters, tuple(players),
                                                  spec, settings)
    group = comparison.group
    if group is None:
        st.info("None of these players has hands here.")
        return comparison
    if len(comparison.groups) == 1:
        st.caption(f"Compared with **{md(group.label)}** — {md(group.description)}")
    else:
        st.caption(f"Each player against **{md(group.label)}** without himself, as his coaching "
                   f"report compares him ({md(group.spec.outlier_text)}). Trend tests: "
                   f"{comparison.tests} through one false-discovery correction at "
                   f"{comparison.fdr * 100:g} %.")
    table = comparison.table
    st.dataframe(
        table.select("player", "status", "group_players", "hands", "points_per_hand",
                     "basis_per_hand", "strength", "strength_low", "strength_high", "rank",
                     "foul_rate", "group_foul_rate", "foul_difference", "royalties_per_hand",
                     "group_royalties_per_hand", "fl_entry_rate", "group_fl_entry_rate",
                     "trend_points", "trend_points_q", "trend_fouls", "trend_fouls_q",
                     "trend_clear", "standing"),
        hide_index=True, key=f"{key}_table",
        column_config={
            "group_players": st.column_config.NumberColumn(
                "group", help="Players in this player's group (never the player himself)."),
            "points_per_hand": st.column_config.NumberColumn("points/hand", format="%+.2f"),
            "basis_per_hand": st.column_config.NumberColumn(
                "vs players not left out", format="%+.2f",
                help="Points per hand against everyone but the players left out as outliers."),
            "strength": st.column_config.NumberColumn(
                "strength (points/hand)", format="%+.2f",
                help="Points per hand pulled toward the group's mean by how much of it could be "
                     "luck; empty when the group's players differ no more than luck makes them "
                     "(everyone would be the group's mean; see 'standing')."),
            "strength_low": st.column_config.NumberColumn("95 % low", format="%+.2f"),
            "strength_high": st.column_config.NumberColumn("95 % high", format="%+.2f"),
            "rank": st.column_config.NumberColumn(
                "rank", help="Only when the players can be told apart by their results "
                             "(heterogeneity test p < 0.05) and at least 5 have enough hands, "
                             "the player included (see 'standing')."),
            "foul_rate": st.column_config.NumberColumn("foul rate", format="percent"),
            "group_foul_rate": st.column_config.NumberColumn(
                "group's", format="percent", help="In the player's own mix of variants and "
                                                  "table sizes."),
            "foul_difference": st.column_config.NumberColumn(
                "difference (pp)", format="%+.3f",
                help="Percentage points / 100: +0.050 is 5 percentage points more fouls."),
            "royalties_per_hand": st.column_config.NumberColumn("royalties/hand", format="%.2f"),
            "group_royalties_per_hand": st.column_config.NumberColumn("group's", format="%.2f"),
            "fl_entry_rate": st.column_config.NumberColumn("FL entry", format="percent"),
            "group_fl_entry_rate": st.column_config.NumberColumn("group's", format="percent"),
            "trend_points": st.column_config.NumberColumn(
                "trend points/hand per session", format="%+.3f",
                help="Change per session within each variant and table size."),
            "trend_points_q": st.column_config.NumberColumn("q", format="%.3f"),
            "trend_fouls": st.column_config.NumberColumn("trend foul rate per session",
                                                         format="percent"),
            "trend_fouls_q": st.column_config.NumberColumn("q", format="%.3f"),
            "trend_clear": st.column_config.CheckboxColumn("clear trend"),
            "standing": st.column_config.TextColumn(
                "standing", help="The strength and rank in words, or why there is none."),
        },
    )
    ranked = table.filter(pl.col("strength").is_not_null()).sort("strength", descending=True)
    if ranked.is_empty():
        st.caption("No strength to chart: the players of each group differ no more than luck "
                   "makes them, or too few of them have enough hands.")
        return comparison
    figure = charts.shrunk_strength_chart(
        ranked.select("player", pl.col("basis_per_hand").alias("raw"),
                      pl.col("strength").alias("shrunk"), pl.col("strength_low").alias("low"),
                      pl.col("strength_high").alias("high")),
        f"Strength, shrunk toward {comparison.label}")
    st.plotly_chart(figure, key=f"{key}_strength")
    return comparison


def show_progress(filters: Filters, player: str, key: str,
                  change_date: date | None = None) -> Progress:
    """A player's progress with the mix held fixed: the trend, before/after a date (picked
    here when ``change_date`` is None), rolling windows."""
    if change_date is None:
        change_date = st.date_input("Did it improve? Compare before and after this day",
                                    value=None, key=f"{key}_date",
                                    help="A lesson, a rule change: hands from this day on "
                                         "against the hands before it.")
    window = st.select_slider("Rolling window (hands)", [50, 100, 200, 500, 1000], value=200,
                              key=f"{key}_window")
    progress: Progress = components.ask(player_progress, filters, player, change_date, window)
    rows = []
    for test in progress.tests:
        fit = test.fit
        scale = 100.0 if test.unit.startswith("rate") else 1.0
        suffix = " pp" if scale == 100.0 else ""
        rows.append({
            "question": test.title,
            "estimate": None if fit is None else fit.estimate * scale,
            "95 % interval": "–" if fit is None else
            f"{fit.low * scale:+.3f}{suffix} – {fit.high * scale:+.3f}{suffix}",
            "q": test.q_value, "verdict": test.verdict, "note": test.note,
            "key": test.key,
        })
    st.caption(f"{md(player)}: {progress.hands:,} hands in {progress.sessions:,} sessions"
               + (f"; {progress.before:,} before and {progress.after:,} from "
                  f"{progress.change_date.isoformat()}" if progress.change_date else "")
               + ". Within each variant and table size, so a change of games is not a change "
                 "of play.")
    st.dataframe(pl.DataFrame(rows, schema={
        "question": pl.String, "estimate": pl.Float64, "95 % interval": pl.String,
        "q": pl.Float64, "verdict": pl.String, "note": pl.String, "key": pl.String}),
        hide_index=True, key=f"{key}_tests",
        column_order=("question", "estimate", "95 % interval", "q", "verdict", "note"),
        column_config={"estimate": st.column_config.NumberColumn(format="%+.3f"),
                       "q": st.column_config.NumberColumn(format="%.3f")})
    columns = st.columns(2)
    for column, series, title, axis, percent in (
            (columns[0], progress.fouls, "Foul rate", "foul rate (%)", True),
            (columns[1], progress.points, "Points per hand", "points per hand", False)):
        frame = pl.DataFrame(
            {"hand_number": list(series.hand_number) if series else [],
             "raw": list(series.raw) if series else [],
             "adjusted": list(series.adjusted) if series else []},
            schema={"hand_number": pl.Int64, "raw": pl.Float64, "adjusted": pl.Float64})
        title_text = f"{title}, rolling {series.window} hands" if series else title
        column.plotly_chart(charts.rolling_mix_chart(frame, title_text, axis, percent),
                            key=f"{key}_{'fouls' if percent else 'points'}")
    shown = progress.fouls or progress.points
    if shown and shown.window < window:  # the slider says one window, the titles another: why
        st.caption(f"Rolling {shown.window} hands, not the {window} chosen: a quarter of the "
                   f"player's {progress.hands:,} hands, so the lines have enough windows to "
                   "show a change.")
    return progress


__all__ = ["FIELD", "KIND_LABELS", "reference_picker", "show_comparison", "show_progress"]
