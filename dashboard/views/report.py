"""Coaching report: one player's report (the same as ``ofc report``), shown here and downloadable."""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl
import streamlit as st

from dashboard import components
from dashboard.components import kpi, md
from pipeline import read
from pipeline.report import NoHandsError, ReportRequest, ReportSettings, create_report, report_dict
from pipeline.report.model import Report
from pipeline.report.render import (
    KIND_TITLES,
    format_interval,
    format_points,
    format_value,
    render,
    report_figures,
    report_file_name,
)

FORMAT_LABELS = {"html": "HTML (works offline)", "md": "Markdown", "json": "JSON"}
MIME_TYPES = {"html": "text/html", "md": "text/markdown", "json": "application/json"}


@st.cache_data(show_spinner=False, max_entries=16)
def build(path: str, state: tuple[int, int, int, int], request: ReportRequest,
          settings: ReportSettings, _connect: Any = None) -> Report | str:
    """The report (cached until the database changes), or why there is none."""
    try:
        return create_report(_connect() if _connect else path, request, settings)
    except NoHandsError as error:
        return str(error)


@st.cache_data(show_spinner=False, max_entries=16)
def rendered(path: str, state: tuple[int, int, int, int], request: ReportRequest,
             settings: ReportSettings, output_format: str, _report: Report) -> bytes:
    """One form of the report as bytes, for the download buttons."""
    return render(_report, output_format).encode("utf-8")


filters = components.current_filters()
options: read.overview.FilterOptions = components.ask(read.overview.filter_options)
st.title("Coaching report")
st.caption("One player's play explained with evidence: each finding compares the player with "
           "everyone else in scope and says how sure it is. The same report as `ofc report`; "
           "download it below.")
if not options.players:
    st.info("No players yet.")
    st.stop()

players = list(options.players)
default_player = filters.players[0] if filters.players and filters.players[0] in players else None
left, middle, right = st.columns([2, 2, 1])
player = left.selectbox("Player", players,
                        index=players.index(default_player) if default_player else 0,
                        key="report_player")
aliases = middle.multiselect("Also playing as (aliases)", [p for p in players if p != player],
                             key="report_aliases",
                             help="Other screen names of the same person: merged into one.")
variant_options = ["All variants", *options.variants]
variant = right.selectbox("Variant", variant_options, key="report_variant")
since = until = None
if options.first_day is not None and options.last_day is not None:
    chosen = st.date_input("Dates (UTC, inclusive; empty: every date)", value=(),
                           min_value=options.first_day, max_value=options.last_day,
                           key="report_dates")
    if isinstance(chosen, date):
        chosen = (chosen,)
    chosen = tuple(chosen or ())
    if chosen:
        since, until = chosen[0], chosen[1] if len(chosen) > 1 else chosen[0]
defaults = ReportSettings()
with st.expander("Thresholds"):
    columns = st.columns(3)
    min_sample = columns[0].number_input(
        "Minimum sample per finding", min_value=1, value=defaults.min_sample, step=5,
        key="report_min_sample")
    min_sessions = columns[1].number_input(
        "Sessions for a trend", min_value=3, value=defaults.min_sessions, step=1,
        key="report_min_sessions")
    rank_hands = columns[2].number_input(
        "Hands to be ranked in a variant", min_value=1, value=defaults.percentile_min_hands,
        step=10, key="report_rank_hands")

request = ReportRequest(player=player, aliases=tuple(aliases), since=since, until=until,
                        variant=None if variant == "All variants" else variant)
settings = ReportSettings(min_sample=int(min_sample), min_sessions=int(min_sessions),
                          percentile_min_hands=int(rank_hands))
path = components.database_path()
state = read.source.database_state(path)
with st.spinner("Building the report…"):
    report = build(str(path), state, request, settings,
                   lambda: components.run_connection(path))
if isinstance(report, str):
    st.info(f"Nothing to report: {md(report)}.")
    st.stop()
data = report_dict(report)

# --- downloads ---------------------------------------------------------------------------------
columns = st.columns(3)
for column, output_format in zip(columns, ("html", "md", "json"), strict=True):
    column.download_button(
        f"Download {FORMAT_LABELS[output_format]}",
        data=rendered(str(path), state, request, settings, output_format, report),
        file_name=report_file_name(player, output_format), mime=MIME_TYPES[output_format],
        key=f"report_download_{output_format}", on_click="ignore",
    )

# --- headline ----------------------------------------------------------------------------------
headline = data["headline"]
st.header(f"Coaching report: {md(player)}", anchor=False)
if data["aliases"]:
    st.caption("Also playing as: " + ", ".join(md(alias) for alias in data["aliases"]))
if headline["first_hand"]:
    st.caption(f"Played from {headline['first_hand']} to {headline['last_hand']} (UTC)")
columns = st.columns(4)
kpi(columns[0], "Hands", f"{headline['hands']:,}")
kpi(columns[1], "Sessions", f"{headline['sessions']:,}")
kpi(columns[2], "Points", f"{headline['points']:+,}")
se = headline["points_se"]
kpi(columns[3], "Points / hand", format_points(headline["points_per_hand"])
    + ("" if se is None else f" ± {se:.2f}"), "mean ± standard error")
st.dataframe(
    pl.DataFrame(
        [{"variant": line["variant"], "hands": line["hands"], "sessions": line["sessions"],
          "points": line["points"], "points/hand": line["points_per_hand"],
          "SE": line["points_se"], "percentile": line["percentile"],
          "standing": line["percentile_note"]} for line in headline["variants"]],
        schema={"variant": pl.String, "hands": pl.Int64, "sessions": pl.Int64,
                "points": pl.Int64, "points/hand": pl.Float64, "SE": pl.Float64,
                "percentile": pl.Float64, "standing": pl.String},
    ),
    hide_index=True, key="report_variants",
    column_config={"points/hand": st.column_config.NumberColumn(format="%+.2f"),
                   "SE": st.column_config.NumberColumn(format="%.2f"),
                   "percentile": st.column_config.NumberColumn(format="%.0f")},
)
for note in data["data_notes"]:
    st.caption(note)

# --- summary -----------------------------------------------------------------------------------
by_key = {finding["key"]: finding for finding in data["findings"]}


def summary_lines(keys: list[str]) -> str:
    """Markdown bullets for summary findings (titles escaped)."""
    lines = []
    for key in keys:
        finding = by_key[key]
        field = finding["field"]
        versus = f" vs field {format_value(field['value'], finding['unit'])}" if field else ""
        lines.append(f"- {md(finding['title'])}: {format_value(finding['player']['value'], finding['unit'])}"
                     f"{versus}, **{format_points(finding['points_per_hand'])}** points/hand "
                     f"({finding['verdict']})")
    return "\n".join(lines)


left, right = st.columns(2)
with left:
    st.subheader("What works", anchor=False)
    st.markdown(summary_lines(data["strengths"]) or "No clear strength against the field yet.")
with right:
    st.subheader("Where points leak", anchor=False)
    st.markdown(summary_lines(data["leaks"]) or "No clear leak against the field yet.")
st.caption("Points/hand: the estimated effect on the overall result per hand compared with the "
           "field (positive a gain, negative a cost). Intervals are 95 %.")

# --- findings ----------------------------------------------------------------------------------
st.subheader("Findings", anchor=False)
shown = [finding for finding in data["findings"] if finding["shown"]]
topics = list(dict.fromkeys(finding["topic"] for finding in shown))
for topic in topics:
    st.markdown(f"**{topic}**")
    st.dataframe(
        pl.DataFrame(
            [{"finding": f["title"], "verdict": f["verdict"],
              "player (95 %)": format_interval(f["player"], f["unit"]),
              "field": format_value(f["field"]["value"], f["unit"]) if f["field"] else "–",
              "sample": f"{f['player']['sample']:,} {f['sample_unit']}",
              "confidence": f["confidence"], "points/hand": format_points(f["points_per_hand"]),
              "key": f["key"]}
             for f in shown if f["topic"] == topic],
            schema={name: pl.String for name in ("finding", "verdict", "player (95 %)", "field",
                                                 "sample", "confidence", "points/hand", "key")},
        ),
        hide_index=True, key=f"report_findings_{topic}",
        column_order=("finding", "verdict", "player (95 %)", "field", "sample", "confidence",
                      "points/hand"),
    )
missing = [finding for finding in data["findings"] if not finding["shown"]]
if missing:
    with st.expander(f"Not enough data yet ({len(missing)})"):
        st.markdown("\n".join(f"- {md(f['title'])}: {f['confidence']}" for f in missing))

# --- charts ------------------------------------------------------------------------------------
st.subheader("Charts", anchor=False)
figures = report_figures(data)
for index in range(0, len(figures), 2):
    columns = st.columns(2)
    for column, (chart_id, caption, figure) in zip(columns, figures[index:index + 2],
                                                   strict=False):
        with column:
            st.plotly_chart(figure, key=f"report_{chart_id}")
            st.caption(caption)

# --- notable hands -----------------------------------------------------------------------------
st.subheader("Notable hands", anchor=False)
if not data["notable"]:
    st.caption("No notable hands.")
for kind, title in KIND_TITLES.items():
    hands = [hand for hand in data["notable"] if hand["kind"] == kind]
    if not hands:
        continue
    st.markdown(f"**{title}**")
    for number, hand in enumerate(hands):
        label = (f"{hand['reason']} · hand {md(hand['hand_id'])} · {hand['variant']} · "
                 f"{hand['started_at'] or 'undated'}")
        with st.expander(label, expanded=number == 0):
            columns = st.columns(max(1, len(hand["boards"])))
            for column, board in zip(columns, hand["boards"], strict=False):
                with column:
                    badges = [text for flag, text in (
                        (board["is_player"], "the player"), (board["is_button"], "button"),
                        (board["fantasyland"], "Fantasyland"), (board["foul"], "foul"))
                        if flag]
                    caption = board["player"] + (f" · {', '.join(badges)}" if badges else "")
                    components.show_html(components.board_html(
                        {"top": board["top"], "middle": board["middle"],
                         "bottom": board["bottom"]}, caption=caption))
                    st.caption(f"royalties {'/'.join(str(r) for r in board['royalties'])} · "
                               f"points {board['points']:+d}")
            st.dataframe(
                pl.DataFrame(hand["pairings"], schema={
                    "opponent": pl.String, "rows_won": pl.Int64, "rows_lost": pl.Int64,
                    "scoop": pl.Int64, "royalty_points": pl.Int64, "points": pl.Int64,
                    "settled": pl.Int64}),
                hide_index=True, key=f"report_pairings_{kind}_{number}",
            )

with st.expander("How to read this report"):
    st.markdown("\n".join(f"- **{term}**: {text}" for term, text in data["definitions"]))
