"""Writing the report: self-contained HTML (charts and plotly.js inline), Markdown and JSON.

All three start from :func:`~pipeline.report.model.report_dict`, so they carry the same numbers.
Names and every other value from hand histories are untrusted: the HTML template is autoescaped,
Plotly labels go through :func:`pipeline.read.charts.label`, the figure JSON inside ``<script>`` has
``<``, ``>`` and ``&`` escaped, and Markdown text goes through :func:`markdown_text`.
Nothing carries a timestamp of its own: the same inputs give byte-identical files.
"""

from __future__ import annotations

import contextlib
import json
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import polars as pl

from pipeline.report.model import Report, report_dict
from pipeline.report.stats import ordinal
from pipeline.report.summary import chasing_apart
from pipeline.rules.cards import card_symbol

if TYPE_CHECKING:  # Plotly and Jinja load only for the formats that use them (not JSON)
    import plotly.graph_objects as go
    from jinja2 import BytecodeCache, Environment

FORMATS = ("html", "md", "json")
VERDICT_CLASSES = {
    "strength": "good", "improving": "good", "improved": "good", "clear gain": "good",
    "better than the group": "good",
    "leak": "bad", "getting worse": "bad", "got worse": "bad", "clear cost": "bad",
    "worse than the group": "bad",
    "not clear": "pale", "component": "pale", "too few to judge": "pale",
}
KIND_TITLES = {
    "costliest_fouls": "Costliest fouls",
    "biggest_wins": "Biggest wins",
    "fantasyland": "Fantasyland hands",
}
# only what can make Markdown out of text, so the file also reads as text: (-5.98) stays as is
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_MARKDOWN_LINE_START = re.compile(
    r"^(\s*)(#{1,6}(?=\s|$)|>|[-+](?=\s|$)|\d{1,9}(?=[.)](?:\s|$)))")  # heading, quote, list
_ENTITY_START = re.compile(r"&(?=#?\w+;)")  # & that would read as an entity (&lt;)
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")  # < that would open an HTML tag
_UNSAFE_FILE_CHARACTERS = re.compile(r"[^\w.-]+")


# --- formatting (shared by the templates) ------------------------------------------------------


def format_value(value: float | None, unit: str) -> str:
    """A statistic in its unit: ``12.3 %``, ``+1.31``, ``0.38``, ``+0.125/session``."""
    if value is None:
        return "–"
    if unit == "rate":
        return f"{value * 100:.1f} %"
    if unit == "points":
        return f"{value:+.2f}"
    if unit == "royalties":
        return f"{value:.2f}"
    if unit == "points_slope":
        return f"{value:+.3f}/session"
    if unit == "rate_slope":
        return f"{value * 100:+.2f} pp/session"
    return f"{value:.3f}"


def format_interval(estimate: dict[str, Any] | None, unit: str) -> str:
    """``12.3 % (8.0 % – 17.1 %)``, ``+0.125/session (+0.010 – +0.240)``, or just the value."""
    if not estimate or estimate.get("value") is None:
        return "–"
    text = format_value(estimate["value"], unit)
    if estimate.get("low") is not None and estimate.get("high") is not None:
        bare = {"points_slope": "points", "rate_slope": "pp"}.get(unit)
        if bare == "pp":
            low, high = f"{estimate['low'] * 100:+.2f}", f"{estimate['high'] * 100:+.2f}"
        elif bare:
            low, high = f"{estimate['low']:+.3f}", f"{estimate['high']:+.3f}"
        else:
            low, high = format_value(estimate["low"], unit), format_value(estimate["high"], unit)
        text += f" ({low} – {high})"
    return text


def format_difference(finding: dict[str, Any]) -> str:
    """A finding's difference to the group with its 95 % interval, in its unit: ``+4.1 pp
    (95 %: +1.2 to +7.0)`` for rates (percentage points), ``+0.25 royalty points per hand (95 %: -0.10 to +0.60)``."""
    value = finding.get("difference")
    if value is None:
        return "–"
    low, high = finding.get("difference_low"), finding.get("difference_high")
    if finding["unit"] == "rate":
        text = f"{value * 100:+.1f} pp"
        if low is not None and high is not None:
            text += f" (95 %: {low * 100:+.1f} to {high * 100:+.1f})"
        return text
    words = {"royalties": " royalty points per hand", "points": " points"}.get(finding["unit"], "")
    text = f"{value:+.2f}{words}"
    if low is not None and high is not None:
        text += f" (95 %: {low:+.2f} to {high:+.2f})"
    return text


def format_points(value: float | None) -> str:
    """Points per hand, signed: ``+0.42``; ``–`` when unknown."""
    return "–" if value is None else f"{value:+.2f}"


def format_per_100(value: float | None) -> str:
    """Points per 100 hands, signed: ``+12.3``; ``–`` when unknown."""
    return "–" if value is None else f"{value:+.1f}"


def format_p(value: float | None) -> str:
    """A p- or q-value: ``0.012``, ``< 0.001``; ``–`` when there is none."""
    if value is None:
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def format_line(value: float | None, unit: str) -> str:
    """A balance-sheet figure: per 100 with one decimal, points with two."""
    if value is None:
        return "–"
    return f"{value:.1f}" if unit == "per_100" else f"{value:+.2f}"


def format_percentile(value: float | None) -> str:
    """``71st percentile`` (``–`` when not ranked)."""
    return "–" if value is None else f"{ordinal(round(value))} percentile"


def format_count(value: int | None) -> str:
    """``1,234``."""
    return "–" if value is None else f"{value:,}"


def class_label(value: str | None) -> str:
    """A hand class as words: ``high_card`` -> ``high card``."""
    return (value or "").replace("_", " ")


def markdown_text(value: object) -> str:
    """Untrusted text made inert in Markdown: no HTML tag or entity, and backslashes before only the
    characters that make Markdown (emphasis, code, links, tables, and a list, heading or quote
    at the start), so the downloaded file still reads as plain text."""
    text = "" if value is None else str(value)
    text = _ENTITY_START.sub("&amp;", text.replace("\n", " ").replace("\r", " "))
    text = _TAG_START.sub("&lt;", text)
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return _MARKDOWN_LINE_START.sub(
        lambda match: match.group(1) + (match.group(2) + "\\" if match.group(2)[0].isdigit()
                                        else "\\" + match.group(2)), text)


def report_file_name(player: str, output_format: str = "html") -> str:
    """``PLAYER-report.html`` with the name made safe for any file system."""
    name = unicodedata.normalize("NFKC", player)
    name = _UNSAFE_FILE_CHARACTERS.sub("_", name).strip("._-")[:80] or "player"
    return f"{name}-report.{output_format}"


# --- charts ------------------------------------------------------------------------------------


def _comparison_frame(findings: Sequence[dict[str, Any]], player: str, group: str,
                      item_of: dict[str, str]) -> pl.DataFrame:
    rows = []
    for finding in findings:
        if finding["key"] not in item_of or not finding["shown"] or not finding["reference"]:
            continue
        item = item_of[finding["key"]]
        for who, estimate in ((player, finding["player"]), (group, finding["reference"])):
            rows.append({"item": item, "who": who, "value": estimate["value"],
                         "low": estimate["low"], "high": estimate["high"]})
    schema = {"item": pl.String, "who": pl.String, "value": pl.Float64, "low": pl.Float64,
              "high": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


def report_figures(data: dict[str, Any]) -> list[tuple[str, str, go.Figure]]:
    """The report's charts as (id, caption, figure), built from the report's dictionary."""
    from pipeline.read import charts

    player = data["player"]
    group = data["reference"]["label"]
    findings = data["findings"]
    figures: list[tuple[str, str, go.Figure]] = []
    if data["causes"]:
        causes = pl.DataFrame(
            {"cause": [c["title"] for c in data["causes"]],
             "points_per_100": [c["points_per_100"] for c in data["causes"]],
             "low": [c["low"] for c in data["causes"]],
             "high": [c["high"] for c in data["causes"]],
             "clear": [c["survives"] for c in data["causes"]]},
            schema={"cause": pl.String, "points_per_100": pl.Float64, "low": pl.Float64,
                    "high": pl.Float64, "clear": pl.Boolean},
        )
        figures.append(("chart-causes", f"The ranked list: points per 100 hands against {group} "
                        "by cause (95 % intervals; pale: not clear after the correction)",
                        charts.ranked_causes_chart(causes, "Where the difference comes from")))
    cumulative = pl.DataFrame(
        {"player": [player] * len(data["cumulative"]),
         "hand_number": [number for number, _ in data["cumulative"]],
         "cumulative": [value for _, value in data["cumulative"]]},
        schema={"player": pl.String, "hand_number": pl.Int64, "cumulative": pl.Int64},
    )
    figures.append(("chart-cumulative", "Cumulative points over the player's hands",
                    charts.cumulative_points_chart(cumulative)))
    rolling = data["rolling"]
    if rolling:
        for chart_id, column, title, axis, percent in (
                ("chart-rolling-fouls", "foul", "Foul rate", "foul rate (%)", True),
                ("chart-rolling-points", "points", "Points per hand", "points per hand", False)):
            frame = pl.DataFrame(
                {"hand_number": rolling["hand_number"], "raw": rolling[f"{column}_raw"],
                 "adjusted": rolling[f"{column}_adjusted"]},
                schema={"hand_number": pl.Int64, "raw": pl.Float64, "adjusted": pl.Float64})
            figures.append((chart_id, f"{title} over the last {rolling['window']} hands, as "
                            "played and with the mix of games held fixed",
                            charts.rolling_mix_chart(
                                frame, f"{title}, rolling {rolling['window']} hands", axis,
                                percent)))
    sessions = data["sessions"]
    session_frame = pl.DataFrame(
        {"number": [s["number"] for s in sessions],
         "points_per_hand": [s["points_per_hand"] for s in sessions],
         "hands": [s["hands"] for s in sessions],
         "fitted": [None for _ in sessions]},
        schema={"number": pl.Int64, "points_per_hand": pl.Float64, "hands": pl.Int64,
                "fitted": pl.Float64},
    )
    figures.append(("chart-sessions", "Points per hand in each session (the fair trend, with "
                    "the mix held fixed, is in the findings)",
                    charts.session_fit_chart(session_frame, "Sessions")))
    groups = (
        ("chart-fouls", f"Foul rates against {group} (95 % intervals)", "Foul rate",
         "foul rate (%)", True, "fouls."),
        ("chart-fantasyland", f"Fantasyland rates against {group}", "Fantasyland",
         "rate (%)", True, "fantasyland."),
        ("chart-royalties", f"Royalty points per hand by row against {group}", "Royalties",
         "royalty points per hand", False, "royalties."),
        ("chart-results", f"Points per hand by variant and seat against {group}", "Results",
         "points per hand", False, "results."),
        ("chart-opponents", "Points per hand against regular opponents, and what the group "
         "scores against them", "Head-to-head", "points per hand", False, "head_to_head."),
    )
    for chart_id, caption, title, axis, percent, prefix in groups:
        item_of = {f["key"]: _short_title(f) for f in findings
                   if f["key"].startswith(prefix) and f["key"] not in ("fantasyland.points",
                                                                       "fouls.chase_frequency")}
        frame = _comparison_frame(findings, player, group, item_of)
        if frame.is_empty():
            continue
        figures.append((chart_id, caption,
                        charts.player_vs_field_chart(frame, title, axis, percent=percent)))
    return figures


def _short_title(finding: dict[str, Any]) -> str:
    title = finding["title"]
    for prefix in ("Points per hand, ", "Points per hand in ", "Foul rate ", "Royalties from the ",
                   "Against "):
        if title.startswith(prefix) and title != prefix.strip():
            title = title[len(prefix):]
            break
    return title or finding["title"]


def _script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>``, no HTML specials)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def figure_script(chart_id: str, figure: go.Figure) -> str:
    """The script that draws ``figure`` into the element ``chart_id`` (plotly.js loaded once)."""
    spec = json.loads(figure.to_json())
    config = {"displaylogo": False, "responsive": True,
              "modeBarButtonsToRemove": ["sendDataToCloud"]}
    return (f"Plotly.newPlot({_script_json(chart_id)}, {_script_json(spec.get('data', []))}, "
            f"{_script_json(spec.get('layout', {}))}, {_script_json(config)});")


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """The plotly.js bundle shipped with the plotly package (inlined once per HTML file)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


# --- templates ---------------------------------------------------------------------------------


def _bytecode_cache() -> BytecodeCache | None:
    """Jinja's cache of compiled templates in the user's temporary folder (``_jinja2-cache-UID``,
    private to the user; an entry is used only for the template source it was compiled from):
    a fresh ``ofc report`` then skips compiling the templates (about 0.1 s). A cache that cannot
    be written is no error: the template is compiled, as without one."""
    from jinja2 import FileSystemBytecodeCache
    from jinja2.bccache import Bucket

    class QuietBytecodeCache(FileSystemBytecodeCache):
        def dump_bytecode(self, bucket: Bucket) -> None:
            with contextlib.suppress(OSError):
                super().dump_bytecode(bucket)

    try:
        return QuietBytecodeCache()
    except (OSError, RuntimeError):  # no private temporary folder to be had
        return None


@lru_cache(maxsize=1)
def _environment() -> Environment:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    environment = Environment(
        loader=PackageLoader("pipeline.report", "templates"),
        bytecode_cache=_bytecode_cache(),
        autoescape=lambda name: bool(name and name.endswith(".html.j2")),
        undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters.update(
        value=format_value, interval=format_interval, points=format_points,
        count=format_count, card=card_symbol, md=markdown_text, cls=class_label,
        per100=format_per_100, p=format_p, line=format_line, percentile=format_percentile,
        difference=format_difference,
    )
    environment.globals.update(VERDICT_CLASSES=VERDICT_CLASSES, KIND_TITLES=KIND_TITLES,
                               TOPICS=_topics)
    return environment


def _topics(findings: Sequence[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Shown findings grouped by topic, topics in report order."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for finding in findings:
        if finding["shown"]:
            grouped.setdefault(finding["topic"], []).append(finding)
    return list(grouped.items())


def _context(report: Report) -> dict[str, Any]:
    data = report_dict(report)
    findings = {finding["key"]: finding for finding in data["findings"]}
    return {
        "r": data,
        "chasing_apart": chasing_apart(data),
        "findings_by_key": findings,
        "components": [f for f in data["findings"] if f["cause"] and f["shown"]],
        "tested": [f for f in data["findings"] if f["topic"] in ("Seats", "Head-to-head")
                   and f["shown"]],
        "insufficient": [f for f in data["findings"] if not f["shown"]],
        "notable_groups": [
            (kind, [hand for hand in data["notable"] if hand["kind"] == kind])
            for kind in KIND_TITLES if any(hand["kind"] == kind for hand in data["notable"])
        ],
    }


def render_json(report: Report) -> str:
    """The report as JSON (UTF-8 text, stable key order, trailing newline)."""
    return json.dumps(report_dict(report), ensure_ascii=False, indent=2) + "\n"


def render_markdown(report: Report) -> str:
    """The report as Markdown (tables; names escaped)."""
    return _environment().get_template("report.md.j2").render(**_context(report))


def render_html(report: Report) -> str:
    """The report as one self-contained HTML file: no external script, style, font or image."""
    context = _context(report)
    figures = report_figures(context["r"])
    context["charts"] = [
        {"id": chart_id, "caption": caption, "script": figure_script(chart_id, figure)}
        for chart_id, caption, figure in figures
    ]
    context["plotly_js"] = plotly_js()
    return _environment().get_template("report.html.j2").render(**context)


def render(report: Report, output_format: str) -> str:
    """The report in ``output_format`` (html, md or json)."""
    if output_format == "html":
        return render_html(report)
    if output_format == "md":
        return render_markdown(report)
    if output_format == "json":
        return render_json(report)
    raise ValueError(f"unknown report format {output_format!r} (use {', '.join(FORMATS)})")
