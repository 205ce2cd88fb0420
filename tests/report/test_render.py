"""The three forms of the report: offline HTML, escaping, determinism, same numbers everywhere."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pipeline.report import ReportRequest, create_report
from pipeline.report.render import (
    markdown_text,
    plotly_js,
    render,
    render_html,
    render_json,
    render_markdown,
    report_file_name,
)
from tests.report.conftest import SETTINGS
from tests.report.hands import ALIAS, HERO, SCRIPT

EXTERNAL = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)


class Markup(HTMLParser):
    """Every tag with its attributes, the text outside scripts and styles, and script bodies."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._inside: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._inside.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._inside and self._inside[-1] == tag:
            self._inside.pop()

    def handle_data(self, data: str) -> None:
        where = self._inside[-1] if self._inside else ""
        if where == "script":
            self.scripts.append(data)
        elif where == "style":
            self.styles.append(data)
        else:
            self.text.append(data)


def parse(html: str) -> Markup:
    """The parsed document."""
    markup = Markup()
    markup.feed(html)
    markup.close()
    return markup


@pytest.fixture(scope="module")
def forms(report_db: Path) -> dict[str, str]:
    """ana's report (with the alias) in every format."""
    report = create_report(report_db, ReportRequest(HERO, aliases=(ALIAS,)), SETTINGS)
    return {"html": render_html(report), "md": render_markdown(report), "json": render_json(report)}


@pytest.fixture(scope="module")
def hostile(report_db: Path) -> dict[str, str]:
    """The report of the player named ``<script>alert(1)</script>``."""
    report = create_report(report_db, ReportRequest(SCRIPT), SETTINGS)
    return {form: render(report, form) for form in ("html", "md", "json")}


def test_html_references_nothing_external(forms: dict[str, str]) -> None:
    html = forms["html"]
    markup = parse(html)
    tags = [tag for tag, _ in markup.tags]
    for tag, attributes in markup.tags:
        for name in ("src", "href", "srcset", "data", "action", "poster", "xlink:href"):
            value = attributes.get(name)
            assert value is None or not EXTERNAL.match(value), (tag, name, value)
        assert tag not in ("link", "img", "iframe", "object", "embed", "base"), tag
    assert not any(tag == "script" and "src" in attributes for tag, attributes in markup.tags)
    for style in markup.styles:
        assert "url(" not in style and "@import" not in style
    # plotly.js is inlined exactly once (its source mentions map-tile URLs it never fetches
    # for these charts); everything else - markup, styles, chart data - has no URL at all
    bundle = plotly_js()
    assert html.count(bundle) == 1
    assert "http" not in html.replace(bundle, "")
    assert tags.count("script") == 1 + html.count("Plotly.newPlot(")
    assert sum(len(script) > 1_000_000 for script in markup.scripts) == 1
    assert html.count("Plotly.newPlot(") >= 6


def test_hostile_name_is_text(hostile: dict[str, str]) -> None:
    html = hostile["html"]
    markup = parse(html)
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    visible = "".join(markup.text)
    assert "Coaching report: <script>alert(1)</script>" in visible  # shown as text
    # chart data carries the name as a Plotly label (HTML entities, shown by Plotly as text)
    # inside JSON whose <, > and & are escaped: no chart script holds a < or > at all
    charts = [script for script in markup.scripts if script.startswith("Plotly.newPlot(")]
    assert charts
    for script in charts:
        assert "<" not in script and ">" not in script
    assert any("\\u0026lt;script\\u0026gt;alert(1)\\u0026lt;/script\\u0026gt;" in script
               for script in charts)
    markdown = hostile["md"]
    assert "<script>" not in markdown
    assert "# Coaching report: &lt;script>alert(1)&lt;/script>" in markdown
    data = json.loads(hostile["json"])
    assert data["player"] == SCRIPT and data["title"] == f"Coaching report: {SCRIPT}"


def test_same_inputs_same_bytes(report_db: Path, forms: dict[str, str]) -> None:
    again = create_report(report_db, ReportRequest(HERO, aliases=(ALIAS,)), SETTINGS)
    assert render_json(again) == forms["json"]
    assert render_markdown(again) == forms["md"]
    assert render_html(again) == forms["html"]


def _percent(value: float) -> str:
    return f"{value * 100:.1f} %"


def _unit(value: float | None, unit: str) -> str:
    if value is None:
        return "–"
    return {"rate": _percent(value), "points": f"{value:+.2f}", "royalties": f"{value:.2f}",
            "points_slope": f"{value:+.3f}/session",
            "rate_slope": f"{value * 100:+.2f} pp/session"}[unit]


def _md(text: str) -> str:
    return markdown_text(text)


def _p(value: float | None) -> str:
    return "–" if value is None else ("< 0.001" if value < 0.001 else f"{value:.3f}")


def _difference(finding: dict) -> str:
    value, low, high = finding["difference"], finding["difference_low"], finding["difference_high"]
    if finding["unit"] == "rate":
        return f"{value * 100:+.1f} pp (95 %: {low * 100:+.1f} to {high * 100:+.1f})"
    words = {"royalties": " royalty points per hand", "points": " points"}[finding["unit"]]
    return f"{value:+.2f}{words} (95 %: {low:+.2f} to {high:+.2f})"


def test_markdown_and_html_carry_the_json_numbers(forms: dict[str, str]) -> None:
    data = json.loads(forms["json"])
    markdown, html = forms["md"], forms["html"]
    ranked = markdown[markdown.index("\n## The ranked list"):
                      markdown.index("\n## Fantasyland balance sheet")]
    rows = [line for line in ranked.splitlines() if line.startswith("| ")]
    components = [f for f in data["findings"] if f["cause"] and f["shown"]]
    assert len(components) >= 10
    for finding in components:
        # under its cause: the player's figure, the group's, the difference and its interval
        line = next(r for r in rows if r.startswith(f"|  | ↳ {_md(finding['title'])} ("))
        assert _unit(finding["player"]["value"], finding["unit"]) in line, (finding["key"], line)
        if finding["reference"]:
            assert f"vs {_unit(finding['reference']['value'], finding['unit'])}" in line
        if finding["verdict"] == "component":
            assert _difference(finding) in line
        cell = re.search(rf'<tr class="sub" data-evidence="{re.escape(_html(finding["key"]))}">'
                         r"(.*?)</tr>", html, re.DOTALL)
        assert cell, finding["key"]
        assert _html(_unit(finding["player"]["value"], finding["unit"])) in cell.group(1)
        if finding["verdict"] == "component":
            assert _html(_difference(finding)) in cell.group(1)
    # the seats and the regular opponents, with their verdicts
    tested = [f for f in data["findings"] if f["topic"] in ("Seats", "Head-to-head")
              and f["shown"]]
    assert tested
    section = markdown[markdown.index("\n## Seats and regular opponents"):]
    for finding in tested:
        line = next(r for r in section.splitlines() if r.startswith(f"| {_md(finding['title'])}"))
        assert f"| {finding['verdict']}: {_md(finding['confidence'])} |" in line
        assert f'<tr data-key="{_html(finding["key"])}">' in html
    # every test of the correction, with p and q, in the appendix of both forms
    appendix = markdown[markdown.index("## Appendix: every test"):]
    assert len(data["family"]) == data["tests"] >= 6
    for test in data["family"]:
        line = next(r for r in appendix.splitlines() if r.startswith(f"| {_md(test['title'])} |"))
        verdict = "clear" if test["clear"] else "not clear"
        assert f"| {_p(test['p_value'])} | {_p(test['q_value'])} | {verdict} |" in line
        row = re.search(rf'<tr data-key="{re.escape(_html(test["key"]))}">(.*?)</tr>', html)
        assert row and row.group(1).endswith(f"<td>{verdict}</td>"), test["key"]
    assert any(not test["clear"] for test in data["family"])
    # the summary: one item per clear difference (or the sentence that says there is none)
    for item in data["summary"]:
        assert _md(item["text"]) in markdown and _html(item["text"]) in html
    if not data["summary"]:
        assert "Nothing is clear against the field" in markdown
    # the ranked list and the balance sheets: the same numbers in both forms
    for cause in data["causes"]:
        assert f"**{cause['title']}**" in markdown and cause["title"] in html
        assert f"{cause['points_per_100']:+.1f} ({cause['low']:+.1f} – {cause['high']:+.1f})" in markdown
        assert f'data-cause="{cause["key"]}"' in html
    for sheet in data["balance"]:
        assert f"**{sheet['net_per_100']:+.1f}**" in markdown
        assert f'data-variant="{sheet["variant"]}"' in html
    headline = data["headline"]
    assert f"- Hands: {headline['hands']:,}" in markdown
    assert f"- Points per hand: {headline['points_per_hand']:+.2f} ± {headline['points_se']:.2f}" \
        in markdown
    assert f"{headline['points_per_hand']:+.2f} ± {headline['points_se']:.2f}" in html
    for line in headline["variants"]:
        assert f"| {line['variant']} | {line['hands']:,} | {line['sessions']:,} |" in markdown
        if line["percentile_label"]:
            assert f"{line['percentile_label']}:" in markdown
            assert line["percentile_label"] in html
    for wrong in ("1th percentile", "2th percentile", "3th percentile"):
        assert wrong not in markdown.replace("11th", "").replace("12th", "").replace("13th", "")
    for session in data["sessions"]:
        assert (f"| {session['number']} | {session['started_at']} | {session['hands']} | "
                f"{session['points']:+d} |") in markdown
    # the reference group is named at the top of both forms
    assert "**Compared with the field**" in markdown and "Compared with <strong>the field</strong>" in html


def _html(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&#34;").replace("'", "&#39;"))


def test_notable_hands_are_boards(forms: dict[str, str]) -> None:
    data = json.loads(forms["json"])
    html = forms["html"]
    hand = next(h for h in data["notable"] if h["kind"] == "costliest_fouls")
    board = next(b for b in hand["boards"] if b["is_player"])
    assert board["foul"]
    card = board["top"][0]
    symbol = card[:-1] + {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}[card[-1]]
    assert f'<span class="card {card[-1]}" title="{card}">{symbol}</span>' in html
    assert "Costliest fouls" in html and "Biggest wins" in html and "Fantasyland hands" in html
    assert "scooped them" in html or "was scooped" in html


@pytest.mark.parametrize(("player", "name"), [
    ("ana", "ana-report.html"),
    (SCRIPT, "script_alert_1_script-report.html"),
    ("../../etc/passwd", "etc_passwd-report.html"),
    ("José Ñ", "José_Ñ-report.html"),
    ("...", "player-report.html"),
    ("a" * 200, "a" * 80 + "-report.html"),
])
def test_file_names(player: str, name: str) -> None:
    assert report_file_name(player) == name
    assert "/" not in report_file_name(player, "md")


def test_compiled_templates_are_cached_and_give_the_same_bytes(
        report_db: Path, forms: dict[str, str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Jinja's compiled templates are kept in a private temporary folder, so a fresh
    ``ofc report`` does not compile them again; the output is the same bytes, from a cold
    cache, a warm one, or none at all (no temporary folder to be had)."""
    import tempfile

    from pipeline.report import render as render_module

    report = create_report(report_db, ReportRequest(HERO, aliases=(ALIAS,)), SETTINGS)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    render_module._environment.cache_clear()
    try:
        cold = (render_html(report), render_markdown(report))
        cached = sorted(tmp_path.glob("_jinja2-cache-*/*.cache"))
        assert len(cached) == 2  # the HTML and the Markdown template
        render_module._environment.cache_clear()
        warm = (render_html(report), render_markdown(report))
        blocked = tmp_path / "not-a-folder"
        blocked.write_text("a file where the cache folder would go")
        monkeypatch.setattr(tempfile, "tempdir", str(blocked))
        render_module._environment.cache_clear()
        uncached = (render_html(report), render_markdown(report))
    finally:
        render_module._environment.cache_clear()
    assert cold == warm == uncached == (forms["html"], forms["md"])
