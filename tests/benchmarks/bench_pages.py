"""Benchmark: how long each dashboard page takes in a real browser, against a bare Streamlit page.

Not a test. Serves, in the same run on the same machine:

* a **bare Streamlit page** (a title, one Plotly chart, one table: the floor any Streamlit page
  pays), the baseline;
* ``ofc dashboard`` on the demo database (``ofc demo --no-serve``; built once and kept);
* with ``--big``, ``ofc dashboard`` on a database of ``--big-hands`` hands (built once and kept
  with :func:`tests.benchmarks.bench_dashboard.build_database`);
* with ``--code DIR``, the same dashboard from another source tree (an earlier commit:
  ``git archive COMMIT | tar -x -C DIR``), so that before and after are measured side by side.

and drives them with Debian's Chromium (Playwright, ``executable_path=/usr/bin/chromium``, never a
downloaded browser). A page's time runs from the navigation's start (the browser's own clock,
``performance.timeOrigin``) until the page's script has run and nothing is loading — Streamlit's
script state is "notRunning" after a run, no skeleton or spinner is left, every Plotly chart has
drawn — and stayed so for 0.3 s (the time is when it first became so). Each visit is a new tab
of one browser window, so a new Streamlit session; the browser's HTTP cache and the server's
caches are warm after the first visit, as they are for a returning visitor. Median of ``--repeat`` visits (the
pages alternate, so noise spreads over all of them).

Also timed: four (and eight) tabs opening Player review at once (until the last is done), and
the bare page in as many tabs at once (the floor of that figure on this machine),
switching the hero on Player review, adding three players one after another on Compare players,
a step of the Hand browser's street replay, and (with ``--big``) the pages at a million hands.

Prints every figure with its ratio to the bare page of the same run and the load average (the
machine is shared: compare ratios, not seconds). Run from the repository root::

    .venv/bin/python tests/benchmarks/bench_pages.py [--repeat 3] [--big] [--code DIR]
        [--page NAME ...] [--cache DIR]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.serving import free_port, stop, wait_for_server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGUMENTS = ["--headless=new", "--no-sandbox", "--disable-background-networking"]
LAPTOP = {"width": 1280, "height": 800}

PAGES = (
    ("Overview", ""),
    ("Player review", "player_review"),
    ("Coaching report", "report"),
    ("Decision grading", "decision_grading"),
    ("Trainer", "trainer"),
    ("Compare players", "compare_players"),
    ("Point flow", "point_flow"),
    ("Sessions", "sessions"),
    ("Hand browser", "hand_browser"),
    ("Data", "data"),
    ("Record", "record"),
)
"""Every page of the dashboard: (name, URL path)."""

BARE_PAGE = textwrap.dedent('''\
    """The baseline of bench_pages.py: a title, one Plotly chart, one table."""
    import plotly.graph_objects as go
    import polars as pl
    import streamlit as st

    st.set_page_config(page_title="bare", layout="wide")
    st.title("A bare page")
    frame = pl.DataFrame({"day": list(range(30)), "hands": [(i * 37) % 101 for i in range(30)]})
    st.plotly_chart(go.Figure(go.Bar(x=frame["day"].to_list(), y=frame["hands"].to_list())))
    st.dataframe(frame, hide_index=True)
''')

WATCH = r"""
(() => {
  const s = window.__ofcBench = {runs: 0, mark: 0, candidate: null, state: null};
  const ready = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return false;
    const state = app.getAttribute('data-test-script-state');
    if (state !== s.state) { if (state === 'running') s.runs += 1; s.state = state; }
    if (state !== 'notRunning' || s.runs <= s.mark) return false;
    if (!document.querySelector('[data-testid="stMain"] h1, [data-testid="stMain"] h3')) return false;
    if (document.querySelector('[data-testid="stSkeleton"], [data-testid="stSpinner"]')) return false;
    for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
      if (!chart.querySelector('.main-svg')) return false;
    }
    return true;
  };
  const check = () => {
    if (ready()) { if (s.candidate === null) s.candidate = performance.now(); }
    else s.candidate = null;
  };
  new MutationObserver(check).observe(document, {subtree: true, childList: true, attributes: true});
  setInterval(check, 10);
})();
"""
"""Injected into every page before its own scripts: notes when the page became done."""

SETTLED_MS = 300
DONE = f"""() => {{
  const s = window.__ofcBench;
  return !!s && s.candidate !== null && performance.now() - s.candidate >= {SETTLED_MS};
}}"""


def load_average() -> str:
    """The machine's load averages (1, 5, 15 minutes)."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


@contextmanager
def streamlit_server(script: Path, arguments: list[str], code: Path) -> Iterator[str]:
    """``streamlit run SCRIPT -- ARGUMENTS`` with the options ``ofc dashboard`` uses, the tree
    ``code`` first on the path; yields the base URL."""
    port = free_port()
    environment = dict(os.environ, PYTHONPATH=str(code))
    for name in ("OFC_DASHBOARD_DB", "OFC_DASHBOARD_LAKE", "OFC_DASHBOARD_SECRET"):
        environment.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true",
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
         "--client.toolbarMode", "minimal", "--server.enableXsrfProtection", "true",
         "--", *arguments],
        cwd=code, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(url, process, 90)
        yield url
    finally:
        stop(process)


@dataclass
class Served:
    """One server of the run: what it shows and where."""

    label: str
    url: str


class Browser:
    """Chromium through Playwright: one browser window (its HTTP cache warm after the first
    visit, as a returning visitor's), a new tab per visit (a new Streamlit session)."""

    def __init__(self, playwright: object) -> None:
        self.chromium = playwright.chromium.launch(  # type: ignore[attr-defined]
            executable_path=CHROMIUM, args=CHROMIUM_ARGUMENTS)
        self.context = self.chromium.new_context(viewport=LAPTOP)
        self.context.add_init_script(WATCH)

    def close(self) -> None:
        """Close the browser."""
        self.context.close()
        self.chromium.close()

    def page(self) -> object:
        """A new tab, watched for being done."""
        page = self.context.new_page()
        page.set_default_timeout(180_000)
        return page


def visit(browser: Browser, url: str) -> float:
    """Seconds from navigation start until the page was done (a new visitor)."""
    page = browser.page()
    try:
        page.goto(url, wait_until="commit")
        page.wait_for_function(DONE, polling=50)
        return page.evaluate("() => window.__ofcBench.candidate") / 1000
    finally:
        page.close()


def visit_at_once(browser: Browser, url: str, tabs: int) -> tuple[float, list[float]]:
    """Open ``url`` in ``tabs`` new visitors at the same moment: seconds until the last was done
    (from the first navigation's start), and each one's own time."""
    pages = [browser.page() for _ in range(tabs)]
    try:
        for page in pages:
            page.goto(url, wait_until="commit")
        origins, dones = [], []
        for page in pages:
            page.wait_for_function(DONE, polling=100)
            origin, done = page.evaluate(
                "() => [performance.timeOrigin, window.__ofcBench.candidate]")
            origins.append(origin)
            dones.append(done)
        last = max(origin + done for origin, done in zip(origins, dones, strict=True))
        return (last - min(origins)) / 1000, [done / 1000 for done in dones]
    finally:
        for page in pages:
            page.close()


def after_action(page: object, action: object) -> float:
    """Seconds from ``action()`` until the page's rerun is done."""
    page.evaluate("() => { const s = window.__ofcBench; s.mark = s.runs; s.candidate = null; }")
    started = page.evaluate("() => performance.now()")
    action()
    page.wait_for_function(DONE, polling=50)
    return (page.evaluate("() => window.__ofcBench.candidate") - started) / 1000


def choose(page: object, container: object, option: str) -> None:
    """Open a select box or multiselect and pick ``option`` by typing it."""
    container.locator("input").first.click()
    page.keyboard.type(option)
    page.keyboard.press("Enter")


def hero_switch(browser: Browser, url: str, heroes: list[str]) -> float:
    """Seconds to show Player review for another hero (the hero select box)."""
    page = browser.page()
    try:
        page.goto(f"{url}/player_review", wait_until="commit")
        page.wait_for_function(DONE, polling=50)
        box = page.locator('[data-testid="stSelectbox"]').filter(has_text="Hero")
        return after_action(page, lambda: choose(page, box, heroes[1]))
    finally:
        page.close()


def add_players(browser: Browser, url: str, players: list[str]) -> list[float]:
    """Seconds for each of three players added one after another on Compare players (the
    sidebar's player filter)."""
    page = browser.page()
    try:
        page.goto(f"{url}/compare_players", wait_until="commit")
        page.wait_for_function(DONE, polling=50)
        box = page.locator('[data-testid="stSidebar"] [data-testid="stMultiSelect"]').first
        times = []
        for player in players[:3]:
            def add(player: str = player) -> None:
                choose(page, box, player)
                page.keyboard.press("Escape")
            times.append(after_action(page, add))
        return times
    finally:
        page.close()


STEP_CLIENT = """async () => {
  const find = (root) => {
    const here = root.querySelector('.hand-replay');
    if (here) return here;
    for (const node of root.querySelectorAll('*')) {
      if (node.shadowRoot) { const inner = find(node.shadowRoot); if (inner) return inner; }
    }
    return null;
  };
  const replay = find(document);
  if (!replay) return null;
  const buttons = [...replay.querySelectorAll('button[data-street]')];
  if (buttons.length < 2) return null;
  const started = performance.now();
  buttons[0].click();
  const drawn = find(document);
  if (!drawn || drawn.dataset.street !== '1') return null;
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const elapsed = performance.now() - started;
  [...drawn.querySelectorAll('button[data-street]')].pop().click();
  return elapsed;
}"""
"""A street step drawn in the browser: from the click until the next frame is painted (ms)."""


def street_step(browser: Browser, url: str) -> tuple[str, float]:
    """One step of the Hand browser's street replay: ("client", seconds) when the page draws
    streets in the browser, ("server", seconds) when the step is a rerun (a slider)."""
    page = browser.page()
    try:
        page.goto(f"{url}/hand_browser", wait_until="commit")
        page.wait_for_function(DONE, polling=50)
        if page.locator(".hand-replay").count():  # Playwright's locators see into shadow roots
            times = []
            for _ in range(5):
                elapsed = page.evaluate(STEP_CLIENT)
                if elapsed is None:
                    break
                times.append(elapsed / 1000)
            if times:
                return "client", statistics.median(times)
        slider = page.locator('[data-testid="stSlider"]').filter(has_text="Street")
        if not slider.count():
            return "none", float("nan")
        thumb = slider.locator('input[type="range"]').first
        times = []
        for key in ("ArrowLeft", "ArrowLeft", "ArrowRight"):
            times.append(after_action(page, lambda key=key: (thumb.focus(), page.keyboard.press(key))))
        return "server", statistics.median(times)
    finally:
        page.close()


def demo_database(cache: Path) -> Path:
    """The demo database (``ofc demo --no-serve``), built once into ``cache``."""
    database = cache / "demo.duckdb"
    if not database.exists():
        subprocess.run([sys.executable, "-m", "pipeline.cli", "demo", "--no-serve", "--db",
                        str(database)], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    return database


def big_database(cache: Path, hands: int) -> Path:
    """A database of ``hands`` generated hands (bench_dashboard's generator), built once."""
    from pipeline import read
    from tests.benchmarks.bench_dashboard import build_database, ensure_aggregates

    database = cache / f"big-{hands}.duckdb"
    if not database.exists() or read.overview.database_status(database).hands != hands:
        started = time.perf_counter()
        build_database(database, hands)
        print(f"built {hands:,} hands in {time.perf_counter() - started:.0f} s", flush=True)
    else:
        ensure_aggregates(database)
    return database


def players_of(database: Path) -> list[str]:
    """The most active players of a database (for the hero switch and Compare)."""
    from pipeline import read

    return list(read.overview.filter_options(database).players[:6])


def line(label: str, seconds: float, baseline: float, extra: str = "") -> str:
    """One printed figure with its ratio to the bare page."""
    return (f"  {label:<44} {seconds:>7.2f} s  {seconds / baseline:>6.2f}×"
            + (f"  {extra}" if extra else ""))


def main() -> None:
    """Serve the bare page and the dashboards, time every page, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="visits per page (median)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ofc-bench-pages"),
                        help="where the databases are kept between runs")
    parser.add_argument("--page", action="append", default=None,
                        help="time only this page (its name; repeatable)")
    parser.add_argument("--code", type=Path, metavar="DIR",
                        help="also time the dashboard of the source tree DIR (an earlier "
                             "commit, from git archive), alternating with this one")
    parser.add_argument("--big", action="store_true", help="also time the pages at --big-hands")
    parser.add_argument("--big-hands", type=int, default=1_000_000)
    parser.add_argument("--tabs", type=int, action="append", default=None,
                        help="tabs opening Player review at once (default 4 and 8)")
    parser.add_argument("--skip-actions", action="store_true",
                        help="only page visits (no hero switch, Compare, street step)")
    arguments = parser.parse_args()
    from playwright.sync_api import sync_playwright

    arguments.cache.mkdir(parents=True, exist_ok=True)
    demo = demo_database(arguments.cache)
    bare = arguments.cache / "bare_page.py"
    bare.write_text(BARE_PAGE, encoding="utf-8")
    pages = [(name, path) for name, path in PAGES
             if not arguments.page or name in arguments.page]
    players = players_of(demo)
    trees = [("this tree", REPO)]
    if arguments.code:
        trees.append((f"code {arguments.code}", arguments.code.resolve()))
    print(f"load average at start {load_average()} (2 cores); median of {arguments.repeat} "
          f"visits; a visit is a new tab at {LAPTOP['width']}×{LAPTOP['height']}")
    with ExitStack() as stack:
        bare_url = stack.enter_context(streamlit_server(bare, [], REPO))
        served = []
        for label, tree in trees:
            app = tree / "dashboard" / "app.py"
            served.append(Served(f"{label}, demo", stack.enter_context(
                streamlit_server(app, ["--db", str(demo)], tree))))
        big = None
        if arguments.big:
            big_db = big_database(arguments.cache, arguments.big_hands)
            big = Served(f"this tree, {arguments.big_hands:,} hands",
                         stack.enter_context(streamlit_server(
                             REPO / "dashboard" / "app.py", ["--db", str(big_db)], REPO)))
        playwright = stack.enter_context(sync_playwright())
        browser = Browser(playwright)
        stack.callback(browser.close)
        # warm every server once (first imports, first queries), as any server is after a visit
        print("  (warming every server: one visit of each page)", file=sys.stderr, flush=True)
        visit(browser, bare_url)
        for server in [*served, *([big] if big else [])]:
            for _name, path in pages:
                visit(browser, f"{server.url}/{path}")
        times: dict[tuple[str, str], list[float]] = {}
        baseline_times: list[float] = []
        for round_number in range(arguments.repeat):
            baseline_times.append(visit(browser, bare_url))
            for server in [*served, *([big] if big else [])]:
                for name, path in pages:
                    times.setdefault((server.label, name), []).append(
                        visit(browser, f"{server.url}/{path}"))
            baseline_times.append(visit(browser, bare_url))
            print(f"  (round {round_number + 1} of {arguments.repeat} done, load "
                  f"{load_average()})", file=sys.stderr, flush=True)
        baseline = statistics.median(baseline_times)
        print(f"bare Streamlit page (title, one Plotly chart, one table): {baseline:.2f} s "
              f"median of {len(baseline_times)} (range {min(baseline_times):.2f}–"
              f"{max(baseline_times):.2f})")
        for server in [*served, *([big] if big else [])]:
            print(f"{server.label}: each page, median of {arguments.repeat} (target ≤ 2× on "
                  f"the demo, ≤ 3× at a million hands)")
            for name, _path in pages:
                runs = times[(server.label, name)]
                print(line(name, statistics.median(runs), baseline,
                           f"runs {' '.join(f'{run:.2f}' for run in runs)}"), flush=True)
        # the floor of several visitors at once: the bare page itself in as many tabs (the
        # browser and the server share the machine's two cores)
        print("bare Streamlit page: several visitors at once (the floor, not a target)")
        for tabs in arguments.tabs or [4, 8]:
            results = [visit_at_once(browser, bare_url, tabs)
                       for _ in range(max(1, arguments.repeat // 2 + 1))]
            print(line(f"{tabs} tabs of the bare page at once (last done)",
                       statistics.median(result[0] for result in results), baseline,
                       "runs " + " ".join(f"{result[0]:.2f}" for result in results)), flush=True)
        for server in served:
            print(f"{server.label}: several visitors at once (target: four ≤ 3×)")
            for tabs in arguments.tabs or [4, 8]:
                results = [visit_at_once(browser, f"{server.url}/player_review", tabs)
                           for _ in range(max(1, arguments.repeat // 2 + 1))]
                whole = statistics.median(result[0] for result in results)
                each = statistics.median(t for result in results for t in result[1])
                print(line(f"{tabs} tabs of Player review at once (last done)", whole, baseline,
                           f"each tab's median {each:.2f} s; runs "
                           + " ".join(f"{result[0]:.2f}" for result in results)), flush=True)
            if arguments.skip_actions:
                continue
            print(f"{server.label}: actions")
            switches = [hero_switch(browser, server.url, players) for _ in range(arguments.repeat)]
            print(line("switch the hero (Player review)", statistics.median(switches), baseline,
                       f"runs {' '.join(f'{run:.2f}' for run in switches)}"), flush=True)
            adds = [add_players(browser, server.url, players) for _ in range(arguments.repeat)]
            totals = [sum(run) for run in adds]
            print(line("add 3 players on Compare (all three)", statistics.median(totals),
                       baseline, "each " + " | ".join(
                           " ".join(f"{t:.2f}" for t in run) for run in adds)), flush=True)
            steps = [street_step(browser, server.url) for _ in range(arguments.repeat)]
            kind = steps[0][0]
            step = statistics.median(t for _kind, t in steps)
            print(line(f"a street step in the Hand browser ({kind})", step, baseline,
                       f"{step * 1000:.0f} ms" + (" (target ≤ 100 ms, drawn in the browser)"
                                                  if kind == "client" else " (a rerun)")),
                  flush=True)
    print(f"load average at the end {load_average()}")


def _stop_cleanly(signum: int, _frame: object) -> None:
    """A terminated benchmark still stops its servers and browser (the ExitStack unwinds)."""
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop_cleanly)
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} is missing (Debian's chromium package)")
    main()
