"""Coaching report: one player's report (the same as ``ofc report``), shown here and downloadable.

Against a chosen reference group (outlier rule visible and switchable), with the ranked list of
causes, the balance sheets, fair trends and a before/after date.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import polars as pl
import streamlit as st

from dashboard import components
from dashboard.comparison import reference_picker
from dashboard.components import kpi, md
from pipeline import read
from pipeline.report import NoHandsError, ReportRequest, ReportSettings, create_report, report_dict
from pipeline.report.model import Report
from pipeline.report.reference import ReferenceError
from pipeline.report.render import (
    KIND_TITLES,
    format_difference,
    format_interval,
    format_line,
    format_p,
    format_per_100,
    format_points,
    format_value,
    render,
    report_figures,
    report_file_name,
)
from pipeline.report.summary import chasing_apart

FORMAT_LABELS = {"html": "HTML (works offline)", "md": "Markdown", "json": "JSON"}
MIME_TYPES = {"html": "text/html", "md": "text/markdown", "json": "application/json"}


@st.cache_data(show_spinner=False, max_entries=16)
def build(path: str, state: tuple[int, int, int, int], request: ReportRequest,
          settings: ReportSettings, _connect: Any = None) -> Report | str:
    """The report (cached until the database changes), or why there is none."""
    try:
        if _connect is None:
            return create_report(path, request, settings)
        with _connect() as connection:
            return create_report(connection, request, settings)
    except (NoHandsError, ReferenceError) as error:
        return str(error)


def text_table(rows: list[dict[str, str]], columns: tuple[str, ...], key: str) -> None:
    """A table of text cells shown in ``columns``' order; each row also carries its finding's
    ``key`` (kept for tests and links, not shown)."""
    st.dataframe(pl.DataFrame(rows, schema={name: pl.String for name in (*columns, "key")}),
                 hide_index=True, key=key, column_order=columns)


def rendered(report: Report, output_format: str) -> Callable[[], bytes]:
    """One form of the report as bytes, made when its download button is clicked (the HTML
    carries plotly.js: 4.5 MB that no page view should build or send before it is asked for)."""
    return lambda: render(report, output_format).encode("utf-8")


@st.cache_data(show_spinner=False, max_entries=16)
def described(path: str, state: tuple[int, int, int, int], request: ReportRequest,
              settings: ReportSettings, _report: Report) -> tuple[dict[str, Any], list[Any]]:
    """The report as the page shows it: its dictionary and its figures, made once per report
    (cached with it: rebuilding ten Plotly figures took most of a page run)."""
    data = report_dict(_report)
    return data, report_figures(data)


filters = components.current_filters()
options: read.overview.FilterOptions = components.ask(read.overview.filter_options)
st.title("Coaching report")
st.caption("One player's play explained with evidence, against a reference group you choose: one "
           "ranked list of causes that add up, a Fantasyland balance sheet, fair trends, and "
           "only what survives a false-discovery correction in the summary. The same report as "
           "`ofc report`; download it below.")
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
since = until = change_date = None
if options.first_day is not None and options.last_day is not None:
    left, right = st.columns(2)
    chosen = left.date_input("Dates (UTC, inclusive; empty: every date)", value=(),
                             min_value=options.first_day, max_value=options.last_day,
                             key="report_dates")
    if isinstance(chosen, date):
        chosen = (chosen,)
    chosen = tuple(chosen or ())
    if chosen:
        since, until = chosen[0], chosen[1] if len(chosen) > 1 else chosen[0]
    change_date = right.date_input(
        "Did I improve? Compare before and after (a lesson, a rule change)", value=None,
        min_value=options.first_day, max_value=options.last_day, key="report_change_date")
reference = reference_picker("report_reference", players, options.rules,
                             exclude=(player, *aliases))
defaults = ReportSettings()
with st.expander("Thresholds"):
    columns = st.columns(5)
    min_sample = columns[0].number_input(
        "Minimum sample per finding", min_value=1, value=defaults.min_sample, step=5,
        key="report_min_sample")
    min_sessions = columns[1].number_input(
        "Sessions for a trend", min_value=3, value=defaults.min_sessions, step=1,
        key="report_min_sessions")
    rank_hands = columns[2].number_input(
        "Hands in a variant for a percentile", min_value=1, value=defaults.percentile_min_hands,
        step=10, key="report_rank_hands")
    fdr = columns[3].number_input(
        "False-discovery rate (%)", min_value=0.1, max_value=50.0, value=defaults.fdr * 100,
        step=1.0, key="report_fdr")
    window = columns[4].number_input(
        "Rolling window (hands)", min_value=10, value=defaults.rolling_window, step=50,
        key="report_window")

request = ReportRequest(player=player, aliases=tuple(aliases), since=since, until=until,
                        variant=None if variant == "All variants" else variant,
                        reference=reference, change_date=change_date)
settings = ReportSettings(min_sample=int(min_sample), min_sessions=int(min_sessions),
                          percentile_min_hands=int(rank_hands), fdr=float(fdr) / 100,
                          rolling_window=int(window))
path = components.database_path()
state = read.source.database_state(path)
with st.spinner("Building the report…"):
    report = build(str(path), state, request, settings,
                   lambda: components.view_reading(path))
if isinstance(report, str):
    st.info(f"Nothing to report: {md(report)}.")
    st.stop()
data, report_charts = described(str(path), state, request, settings, report)
group = data["reference"]

# --- downloads ---------------------------------------------------------------------------------
columns = st.columns(3)
for column, output_format in zip(columns, ("html", "md", "json"), strict=True):
    column.download_button(
        f"Download {FORMAT_LABELS[output_format]}",
        data=rendered(report, output_format),
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
st.info(f"Compared with **{md(group['label'])}** — {md(group['description'])}")
# two rows of three: five in one row cut "+2.65 ± 0.53" short
columns = [*st.columns(3), *st.columns(3)]
kpi(columns[0], "Hands", f"{headline['hands']:,}")
kpi(columns[1], "Sessions", f"{headline['sessions']:,}")
kpi(columns[2], "Points", f"{headline['points']:+,}")
se = headline["points_se"]
kpi(columns[3], "Points / hand", format_points(headline["points_per_hand"])
    + ("" if se is None else f" ± {se:.2f}"), "mean ± standard error")
strength = data["strength"]
kpi(columns[4], "Strength (points / hand, shrunk)",
    "–" if strength is None or strength["value"] is None else format_points(strength["value"]),
    "not shrunk: beyond the outlier rule" if strength is None else md(strength["note"]))
st.dataframe(
    pl.DataFrame(
        [{"variant": line["variant"], "hands": line["hands"], "sessions": line["sessions"],
          "points": line["points"], "points/hand": line["points_per_hand"],
          "SE": line["points_se"], "percentile": line["percentile_label"] or "–",
          "why": line["percentile_note"]} for line in headline["variants"]],
        schema={"variant": pl.String, "hands": pl.Int64, "sessions": pl.Int64,
                "points": pl.Int64, "points/hand": pl.Float64, "SE": pl.Float64,
                "percentile": pl.String, "why": pl.String},
    ),
    hide_index=True, key="report_variants",
    column_config={"points/hand": st.column_config.NumberColumn(format="%+.2f"),
                   "SE": st.column_config.NumberColumn(format="%.2f")},
)
for note in data["data_notes"]:
    st.caption(md(note))

# --- summary -----------------------------------------------------------------------------------
findings = {finding["key"]: finding for finding in data["findings"]}
st.subheader("Summary", anchor=False)
st.caption(f"One item per difference in play, and only what is clear after the false-discovery "
           f"correction ({data['tests']} tests at {settings.fdr * 100:g} %); every test is in the "
           "appendix below. Every figure is against the group named above.")
if data["summary"]:
    for number, item in enumerate(data["summary"], start=1):
        st.markdown(f"{number}. **{item['kind']}: {md(item['title'])}**: {md(item['text'])}  \n"
                    f"_What to do:_ {md(item['advice'])}")
else:
    st.markdown(f"Nothing is clear against {md(group['label'])}: every difference below is "
                "within what luck gives over these hands and sessions.")
if chasing_apart(data):
    st.markdown(f"**Does chasing Fantasyland pay?** {md(data['chasing']['answer'])}")

# --- the ranked list ---------------------------------------------------------------------------
st.subheader("The ranked list: where the difference comes from", anchor=False)
figures = {chart_id: (caption, figure) for chart_id, caption, figure in report_charts}
if data["causes"]:
    caption, figure = figures["chart-causes"]
    st.plotly_chart(figure, key="report_chart-causes")
    st.caption(caption)
    st.dataframe(
        pl.DataFrame(
            [{"#": number, "cause": cause["title"],
              "points/100 hands": cause["points_per_100"],
              "95 %": f"{format_per_100(cause['low'])} – {format_per_100(cause['high'])}",
              "q": format_p(cause["q_value"]), "verdict": cause["verdict"],
              "covers": cause["scope"], "key": cause["key"]}
             for number, cause in enumerate(data["causes"], start=1)],
            schema={"#": pl.Int64, "cause": pl.String, "points/100 hands": pl.Float64,
                    "95 %": pl.String, "q": pl.String, "verdict": pl.String,
                    "covers": pl.String, "key": pl.String}),
        hide_index=True, key="report_causes",
        column_order=("#", "cause", "points/100 hands", "95 %", "q", "verdict", "covers"),
        column_config={"points/100 hands": st.column_config.NumberColumn(format="%+.1f")},
    )
    st.caption(md(group["basis"]))
else:
    st.caption("Nothing to compare: the group has no hands at the player's variants.")

# --- balance sheets ----------------------------------------------------------------------------
if data["balance"]:
    st.subheader("Fantasyland balance sheet", anchor=False)
    tabs = st.tabs(["All variants" if sheet["variant"] == "all" else sheet["variant"]
                    for sheet in data["balance"]])
    for tab, sheet in zip(tabs, data["balance"], strict=True):
        with tab:
            rows = [{"line": line["label"],
                     "player": format_line(line["player"], line["unit"]),
                     "reference": format_line(line["reference"], line["unit"])}
                    for line in sheet["lines"]]
            rows += [{"line": f"{key}: points per 100 hands", "player": format_per_100(value),
                      "reference": ""} for key, value in sheet["causes"]]
            rows.append({"line": "Net: points per 100 hands",
                         "player": format_per_100(sheet["net_per_100"]), "reference": ""})
            st.dataframe(pl.DataFrame(rows, schema={"line": pl.String, "player": pl.String,
                                                    "reference": pl.String}),
                         hide_index=True, key=f"report_balance_{sheet['variant']}")

# --- trends and "did I improve?" ---------------------------------------------------------------
st.subheader("Trends and \"did I improve?\"", anchor=False)
st.caption("Within each variant and table size, so a change in the mix of games never reads as "
           "a change in play.")
progress = [f for f in data["findings"] if f["topic"] in ("Trend", "Did I improve?")]
text_table(
    [{"question": f["title"],
      "estimate (95 %)": format_interval(f["player"], f["unit"]) if f["shown"] else "–",
      "q": format_p(f["q_value"]), "verdict": f["verdict"], "confidence": f["confidence"],
      "key": f["key"]} for f in progress],
    ("question", "estimate (95 %)", "q", "verdict", "confidence"), "report_progress")
columns = st.columns(2)
for column, chart_id in zip(columns, ("chart-rolling-fouls", "chart-rolling-points"),
                            strict=True):
    if chart_id in figures:
        with column:
            caption, figure = figures[chart_id]
            st.plotly_chart(figure, key=f"report_{chart_id}")
            st.caption(caption)

# --- components, seats, opponents ----------------------------------------------------------------
st.subheader("What explains each cause", anchor=False)
st.caption(f"The rates under each cause: the player's, {md(group['label'])}'s in the player's mix "
           "of games, and the difference with its 95 % interval (pp: percentage points). They "
           "explain a cause and are never findings of their own.")
titles = {cause["key"]: cause["title"] for cause in data["causes"]}
text_table(
    [{"cause": titles.get(f["cause"], f["cause"]), "component": f["title"],
      "player (95 %)": format_interval(f["player"], f["unit"]),
      "group": format_value(f["reference"]["value"], f["unit"]) if f["reference"] else "–",
      "difference (95 %)": format_difference(f) if f["verdict"] == "component"
      else f["confidence"],
      "sample": f"{f['player']['sample']:,} {f['sample_unit']}", "key": f["key"]}
     for f in data["findings"] if f["cause"] and f["shown"]],
    ("cause", "component", "player (95 %)", "group", "difference (95 %)", "sample"),
    "report_components")
tested = [f for f in data["findings"] if f["topic"] in ("Seats", "Head-to-head") and f["shown"]]
st.subheader("Seats and regular opponents", anchor=False)
if not tested:
    st.caption("Too few hands to compare the seats or any opponent.")
else:
    text_table(
        [{"test": f["title"], "difference (95 %)": format_difference(f),
          "q": format_p(f["q_value"]), "verdict": f["verdict"], "note": f["note"],
          "key": f["key"]} for f in tested],
        ("test", "difference (95 %)", "q", "verdict", "note"), "report_tested")
with st.expander(f"Appendix: every test ({data['tests']})"):
    st.caption("p: each test's own p-value; q: after the false-discovery correction. What is "
               "not clear is a hint at best: each could be luck.")
    text_table(
        [{"test": t["title"], "p": format_p(t["p_value"]), "q": format_p(t["q_value"]),
          "clear": "clear" if t["clear"] else "not clear", "key": t["key"]}
         for t in data["family"]],
        ("test", "p", "q", "clear"), "report_family")
missing = [finding for finding in data["findings"] if not finding["shown"]]
if missing:
    with st.expander(f"Too few to judge ({len(missing)})"):
        st.markdown("\n".join(f"- {md(f['title'])}: {md(f['confidence'])}" for f in missing))

# --- charts ------------------------------------------------------------------------------------
st.subheader("Charts", anchor=False)
others = [(chart_id, caption, figure) for chart_id, (caption, figure) in figures.items()
          if chart_id not in ("chart-causes", "chart-rolling-fouls", "chart-rolling-points")]
# drawn when opened (a lazy expander): seven more Plotly charts cost the page most of its time
more_charts = st.expander(f"The other {len(others)} charts of the report", key="report_charts",
                          on_change="rerun")
if more_charts.open:
    with more_charts:
        for index in range(0, len(others), 2):
            columns = st.columns(2)
            for column, (chart_id, caption, figure) in zip(columns, others[index:index + 2],
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
                    if board["foul_reason"]:
                        st.caption(f"Why it fouls: {md(board['foul_reason'])}")
            st.dataframe(
                pl.DataFrame(hand["pairings"], schema={
                    "opponent": pl.String, "rows_won": pl.Int64, "rows_lost": pl.Int64,
                    "scoop": pl.Int64, "royalty_points": pl.Int64, "points": pl.Int64,
                    "settled": pl.Int64}),
                hide_index=True, key=f"report_pairings_{kind}_{number}",
            )
            if hand["grades"]:
                st.caption("Graded decisions of this hand (see the Decision grading page):")
                st.dataframe(
                    pl.DataFrame(hand["grades"], schema={
                        "street": pl.Int64, "situation": pl.String, "chosen": pl.String,
                        "best": pl.String, "ev_loss": pl.Float64, "loss_se": pl.Float64,
                        "mistake": pl.Boolean}),
                    hide_index=True, key=f"report_grades_{kind}_{number}",
                )

with st.expander("How to read this report"):
    st.markdown("\n".join(f"- **{term}**: {text}" for term, text in data["definitions"]))
