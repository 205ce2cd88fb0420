"""Player review: one hero's key rates with their uncertainty, against a chosen reference group,
fair trends and before/after, and where points came from."""

from __future__ import annotations

import streamlit as st

from dashboard import components, tables
from dashboard.comparison import reference_picker, show_comparison, show_progress
from dashboard.components import kpi, md, percent, signed
from pipeline import read
from pipeline.read import charts
from pipeline.report.stats import wilson_interval

filters = components.current_filters()
st.title("Player review")
hero = components.choose_hero(filters)
if hero is None:
    st.info("No player matches these filters.")
    st.stop()
hero_filters = filters.with_players([hero])
kpis = components.ask(read.players.player_kpis, hero_filters)
if kpis.is_empty():
    st.info("No hands for this player with these filters.")
    st.stop()
row = kpis.row(0, named=True)
st.caption(f"{md(hero)} · {row['hands']:,} hands · intervals are 95 %")

hands = row["hands"]
foul_low, foul_high = wilson_interval(row["fouls"], hands)
entry_low, entry_high = wilson_interval(row["fl_entries"], row["entry_chances"])
stay_low, stay_high = wilson_interval(row["fl_stays"], row["fl_hands"])
# the first column is wider: "+2.65 ± 0.53" is cut short in a quarter of a 1,280 px screen
WIDTHS = [1.5, 1, 1, 1]
columns = st.columns(WIDTHS)
kpi(columns[0], "Points / hand",
    f"{signed(row['points_per_hand'])} ± {row['points_se']:.2f}",
    f"mean ± standard error over {hands:,} hands; total {row['points']:+,} points")
kpi(columns[1], "Foul rate", percent(row["foul_rate"]),
    f"{row['fouls']:,} of {hands:,} boards; 95 % Wilson interval "
    f"{percent(foul_low)} – {percent(foul_high)}")
kpi(columns[2], "Royalties / hand", f"{row['royalties_per_hand']:.2f}",
    f"{row['royalties']:,} royalty points collected")
kpi(columns[3], "Scoop rate", percent(row["scoop_rate"]),
    f"scooped {row['scoops']:,} of {row['matchups']:,} opponents; scooped by them "
    f"{row['scooped']:,} times")
columns = st.columns(WIDTHS)
kpi(columns[0], "Hands", f"{hands:,}", "sample size")
kpi(columns[1], "Fantasyland entry", percent(row["fl_entry_rate"]),
    f"{row['fl_entries']:,} entries in {row['entry_chances']:,} normal hands; 95 % "
    f"{percent(entry_low)} – {percent(entry_high)}")
kpi(columns[2], "Fantasyland stay", percent(row["fl_stay_rate"]),
    f"{row['fl_stays']:,} stays in {row['fl_hands']:,} Fantasyland hands; 95 % "
    f"{percent(stay_low)} – {percent(stay_high)}")
kpi(columns[3], "Fantasyland points", f"{row['fl_points']:+,}",
    f"over {row['fl_hands']:,} Fantasyland hands")
st.caption(
    f"Foul rate 95 % interval: {percent(foul_low)} – {percent(foul_high)} · "
    f"Fantasyland entry 95 %: {percent(entry_low)} – {percent(entry_high)}"
)

# one tab at a time: only the open tab's figures are asked for and drawn (a tab is one rerun
# away), so the page answers with its headline first
results, sources, split, group, progress = st.tabs(
    ["Results", "Royalties and Fantasyland", "By variant and position",
     "Against a reference group", "Trend and \"did I improve?\""],
    key="review_tab", on_change="rerun")
if results.open:
    with results:
        st.plotly_chart(charts.cumulative_points_chart(
            components.ask(read.players.cumulative_points, hero_filters)))
if sources.open:
    with sources:
        left, right = st.columns(2)
        with left:
            st.plotly_chart(charts.royalty_sources_chart(
                components.ask(read.players.royalty_sources, hero_filters)))
        with right:
            st.plotly_chart(charts.fantasyland_funnel_chart(
                components.ask(read.players.fantasyland_funnel, hero_filters)))
if split.open:
    with split:
        left, right = st.columns(2)
        with left:
            by_variant = components.ask(read.players.points_by_variant, hero_filters)
            st.plotly_chart(charts.points_per_hand_bars(by_variant, "variant",
                                                        "Points per hand by variant"))
            tables.show(by_variant, "by_variant")
        with right:
            by_position = components.ask(read.players.points_by_position, hero_filters)
            st.plotly_chart(charts.points_per_hand_bars(
                by_position, "seat_label", "Points per hand by position (button acts last)"))
            tables.show(by_position, "by_position",
                        order=("seat_label", "hands", "points", "points_per_hand", "points_se"))
if group.open:
    with group:
        options = components.ask(read.overview.filter_options)
        spec = reference_picker("review_reference", options.players, options.rules,
                                exclude=(hero,))
        show_comparison(filters, [hero], spec, "review_reference")
if progress.open:
    with progress:
        # the rolling foul rate is here, raw and with the mix of games held fixed: one window
        show_progress(filters, hero, "review_progress")
