"""Pieces shared by the pages: the database path, cached questions, sidebar filters, cards.

Player names and every other value read from hand histories are untrusted: they reach the page
as widget options and table cells (plain text), through :func:`md` for Markdown, or through
:func:`html.escape` inside the card HTML — never raw.
"""

from __future__ import annotations

import html
import logging
import os
import re
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from datetime import date
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import polars as pl
import streamlit as st

from pipeline import read, store
from pipeline.formats import COMPRESSED_SUFFIXES, FILE_SUFFIXES
from pipeline.read.lake import ParquetLake
from pipeline.read.overview import FilterOptions
from pipeline.read.scope import Filters
from pipeline.read.source import Database
from pipeline.read.totals import readiness_checked_once
from pipeline.rules.cards import SUIT_SYMBOLS
from pipeline.rules.game import ROW_SIZES

DATABASE_ENV = "OFC_DASHBOARD_DB"
LAKE_ENV = "OFC_DASHBOARD_LAKE"
FILTERS_KEY = "ofc_filters"

P = ParamSpec("P")
R = TypeVar("R")

SUIT_COLOURS = {"s": "#1f2328", "h": "#c62828", "d": "#1565c0", "c": "#2e7d32"}
CARD_CSS = (
    "display:inline-block;min-width:2.1em;padding:0.15em 0.3em;margin:0.1em;"
    "border:1px solid #c9ccd1;border-radius:0.3em;background:#fff;text-align:center;"
    "font:600 1.05em/1.2 ui-monospace,SFMono-Regular,Menlo,monospace;"
)
SLOT_CSS = CARD_CSS + "color:#c9ccd1;border-style:dashed;"

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>$:])")


# --- the database -----------------------------------------------------------------------------


def _argument(name: str) -> str | None:
    """The value of ``-- --name VALUE`` (or ``--name=VALUE``) after the script's name."""
    value = None
    arguments = sys.argv[1:]
    for index, argument in enumerate(arguments):
        if argument == name and index + 1 < len(arguments):
            value = arguments[index + 1]
        elif argument.startswith(name + "="):
            value = argument.split("=", 1)[1]
    return value


def database_path() -> Path:
    """What this dashboard shows: a Parquet lake folder (``$OFC_DASHBOARD_LAKE``, else
    ``-- --lake DIR``), else the database ``$OFC_DASHBOARD_DB``, else ``-- --db FILE``, else the
    default. The read model reads a lake folder in place (``read.source.as_source``)."""
    value = os.environ.get(LAKE_ENV) or _argument("--lake")
    if not value:
        value = os.environ.get(DATABASE_ENV) or _argument("--db")
    return Path(value or store.DEFAULT_DATABASE).expanduser()


_RUN = threading.local()


def _run_connection(path: Path) -> tuple[Any, dict[tuple[int, str], bool]]:
    """The read-only connection of the current script run, opened on first use, and what it has
    answered about the kept aggregates being current.

    One connection serves every question of a page view, and :func:`release_connection` (called
    when the run ends, and before this process writes) closes it: the dashboard never keeps the
    database open between page views, so a terminal ``ofc ingest`` can write. Nothing can write
    the database while the connection is open, so the readiness answers are kept with it
    (:func:`~pipeline.read.totals.readiness_checked_once`): looked at once per view, forgotten
    with the connection.
    """
    current = getattr(_RUN, "value", None)
    if current is not None and current[0] == path:
        return current[1], current[3]
    release_connection()
    access = read.source.read_access()
    access.__enter__()
    try:
        connection = read.source.as_source(path).open()
    except BaseException:
        access.__exit__(None, None, None)
        raise
    _RUN.value = (path, connection, access, {})
    return connection, _RUN.value[3]


@contextmanager
def view_reading(path: Path) -> Iterator[Any]:
    """This page view's read-only connection (:func:`_run_connection`), its readiness answers
    kept for the whole view."""
    connection, readiness = _run_connection(path)
    with readiness_checked_once(readiness):
        yield connection


def release_connection() -> None:
    """Close this run's connection, if one is open."""
    current = getattr(_RUN, "value", None)
    if current is None:
        return
    _RUN.value = None
    try:
        current[1].close()
    finally:
        current[2].__exit__(None, None, None)


read.source.before_write(release_connection)


@st.cache_data(show_spinner=False, max_entries=512)
def _answer(question_name: str, path: str, state: Hashable, arguments: tuple, keywords: tuple,
            _question: Callable[..., Any], _connect: Callable[[], Any]) -> Any:
    # question_name, path, state and the arguments are the cache key; _question and _connect
    # (leading underscore: not hashed) do the work on a miss
    with _connect() as connection:
        return _question(connection, *arguments, **dict(keywords))


def ask(question: Callable[Concatenate[Database, P], R], *arguments: P.args,
        **keywords: P.kwargs) -> R:
    """Answer one question of the read model (:mod:`pipeline.read`) on the current database.

    ``question`` is the function itself (``ask(read.players.player_kpis, filters)``), so a rename or a
    wrong argument shows in the editor and the type checker. The answer is cached until the
    database file changes (a new ingest), so a refresh shows new hands while repeated page views
    cost nothing.
    """
    path = database_path()
    name = f"{question.__module__}.{question.__qualname__}"
    return _answer(name, str(path), read.source.database_state(path), tuple(arguments),
                   tuple(sorted(keywords.items())), question, lambda: view_reading(path))


def database_status() -> read.overview.DatabaseStatus:
    """The status of the current database (missing, empty, or how many hands)."""
    path = database_path()
    return _answer("database_status", str(path), read.source.database_state(path), (), (),
                   lambda _connection: read.overview.database_status(path), nullcontext)


# --- following new hands ------------------------------------------------------------------------

FOLLOW_SECONDS = 2.0
"""How often a page that follows new hands looks at the database file (a file status, no query)."""


def follow_new_hands(key: str) -> bool:
    """The page's "Follow new hands" switch (off by default). While it is on, the page looks at
    the database file every :data:`FOLLOW_SECONDS` and runs again when the file changed (``ofc
    watch`` or an ingest stored hands), so its figures take in new hands without a click. The
    answers of :func:`ask` are cached by the file's state, so only changed data is read again."""
    following = st.toggle(
        "Follow new hands", key=key,
        help="Show hands as they are stored (by ofc watch, say): the page refreshes itself "
             f"within {FOLLOW_SECONDS:g} seconds of a change to the database.",
    )
    if following:
        seen_key = f"{key}_seen"
        path = database_path()
        st.session_state[seen_key] = read.source.database_state(path)
        _follow(path, seen_key)
    return following


@st.fragment(run_every=FOLLOW_SECONDS)
def _follow(path: Path, seen_key: str) -> None:
    """Every few seconds: run the whole page again when the database file changed since it was
    drawn (never while the page itself is being drawn: then the states are equal)."""
    if database_changed(path, st.session_state.get(seen_key)):
        st.rerun(scope="app")
    st.caption(f"Following new hands · looked {time.strftime('%H:%M:%S')}")


def database_changed(path: Path, seen: Hashable) -> bool:
    """True when the database file (or its write-ahead log) is not as it was when ``seen``
    (:func:`pipeline.read.source.database_state`) was taken."""
    return read.source.database_state(path) != seen


# --- access -----------------------------------------------------------------------------------

def read_only() -> bool:
    """True when the dashboard was started with ``--read-only``, or shows a Parquet lake (which
    only ``ofc lake build`` writes): no page that writes."""
    return read.access.writes_forbidden() or isinstance(
        read.source.as_source(database_path()), ParquetLake)


SIGNED_OUT_KEY = "ofc_signed_out"


def read_only_reason() -> str:
    """Why this dashboard offers no page that writes (when :func:`read_only`)."""
    if isinstance(read.source.as_source(database_path()), ParquetLake):
        return ("this dashboard reads a Parquet lake, which only `ofc lake build` writes: add "
                "hands with `ofc lake build PATH --lake DIR`")
    return ("this dashboard is read-only (started with `ofc dashboard --read-only`): no page "
            "writes to the database. Load hands with `ofc ingest` and record games with `ofc "
            "record` in a terminal, or ask whoever runs the dashboard to start it without "
            "`--read-only`")


def access_granted() -> bool:
    """True when this visitor may see the dashboard; else says how to sign in and returns False.

    Without a secret (``ofc dashboard`` on 127.0.0.1 without ``--password-file``) everyone on
    this machine may. With one, the dashboard's server (``dashboard/serve.py``) lets nobody in
    before signing in on its own page; here the sign-in cookie is checked again on every run,
    so a sign-in that ends or is signed out elsewhere stops the page too. Signed in, the sidebar
    says until when, offers signing out and (token mode) a one-time link for another device."""
    try:
        state = read.access.server_access()
    except ValueError:
        st.error("The dashboard's access setting is damaged: restart it with ofc dashboard.")
        return False
    if state.secret is None:
        return True
    sign_in = state.sign_ins.verify(st.context.cookies.get(read.access.SIGN_IN_COOKIE),
                                    time.time())
    if sign_in is None:
        st.title("OFC analytics")
        if st.session_state.get(SIGNED_OUT_KEY):
            st.info("You are signed out. Reload the page to sign in again.")
        else:
            st.info("Sign in to see this dashboard: this browser has not signed in, or its "
                    "sign-in has ended. Reload the page to sign in.")
        target = urllib.parse.quote(_current_path())
        st.link_button("Sign in", f"{read.access.SIGN_IN_PATH}?next={target}", type="primary")
        return False
    _signed_in_sidebar(state, sign_in)
    return True


def _current_path() -> str:
    """The path of the page in the browser's address bar (``/`` when not known)."""
    url = st.context.url
    path = urllib.parse.urlsplit(url).path if url else ""
    return path if path.startswith("/") else "/"


def _signed_in_sidebar(state: read.access.ServerAccess, sign_in: read.access.SignIn) -> None:
    """Until when the sign-in lasts, signing out, and a link for another device (token mode)."""
    until = time.strftime("%Y-%m-%d %H:%M", time.localtime(sign_in.expires))
    st.sidebar.caption(f"Signed in until {until}")
    if st.sidebar.button("Sign out", key="sign_out"):
        # revoked on the server: this browser's cookie no longer opens anything
        state.sign_ins.revoke(sign_in, time.time())
        st.session_state[SIGNED_OUT_KEY] = True
        st.rerun()
    if not state.token:
        return
    with st.sidebar.expander("Sign in another device"):
        st.caption("The token printed by ofc dashboard signs in once. Make a link that signs in "
                   f"one more browser, once, within {read.access.DEVICE_LINK_SECONDS // 60} "
                   "minutes (keep it private).")
        if st.button("Make a sign-in link", key="device_link"):
            parts = urllib.parse.urlsplit(st.context.url or "")
            origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""
            st.code(f"{origin}/?token={state.device_link_token(time.time())}", language=None)


# --- text -------------------------------------------------------------------------------------


def md(text: object) -> str:
    """Untrusted text made safe for Markdown: HTML escaped, Markdown punctuation backslashed."""
    escaped = str(text).replace("&", "&amp;").replace("<", "&lt;")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", escaped)


def bot_play_sentence(decision: dict, alternatives: pl.DataFrame, same: str,
                      made: str) -> str | None:
    """What the grader's bot (the rollout policy) would have played at a graded decision and
    its gap to the play made: ``same`` when that is the play made; None when not measured.
    ``decision`` is a row with chosen, exact and the policy columns (``worst_decisions``,
    ``trainer_quizzes``); ``made`` names the play made ("the play made", "what you played")."""
    choice = decision["policy_alternative"]
    if choice is None:
        return None
    if choice == decision["chosen"]:
        return same
    bot = alternatives.filter(pl.col("alternative") == choice)
    if not bot.height:
        return None
    error = "" if decision["exact"] else f" ± {decision['policy_gap_se'] or 0:.2f}"
    return (f"The grader's bot would have played {md(bot['placement'][0])}: "
            f"{decision['policy_gap']:+.2f}{error} points against {made}.")


HAND_BROWSER = "views/hand_browser.py"
FOCUS_KEY = "hb_focus"
"""Session key of a hand another page asked the Hand browser to replay: it stays among the
browser's choices until another hand is picked."""
FOCUS_NEW_KEY = "hb_focus_new"
"""Set with :data:`FOCUS_KEY` until the Hand browser has selected that hand once."""


def open_in_hand_browser(hand_key: int) -> None:
    """Go to the Hand browser with this hand replayed (whether or not its list holds it)."""
    st.session_state[FOCUS_KEY] = int(hand_key)
    st.session_state[FOCUS_NEW_KEY] = True
    st.switch_page(HAND_BROWSER)


def percent(value: float | None, digits: int = 1) -> str:
    """0.123 -> ``12.3 %``."""
    return "–" if value is None else f"{value * 100:.{digits}f} %"


def signed(value: float | None, digits: int = 2) -> str:
    """3.5 -> ``+3.50``."""
    return "–" if value is None else f"{value:+.{digits}f}"


# --- cards ------------------------------------------------------------------------------------


def card_html(card: str | None) -> str:
    """One card as an HTML chip in its suit colour (``None``: an empty slot)."""
    if card is None:
        return f'<span style="{SLOT_CSS}">·</span>'
    text = str(card)
    if len(text) == 2 and text[1] in SUIT_SYMBOLS:
        rank, suit = text[0], text[1]
        return (
            f'<span class="ofc-card" title="{html.escape(text)}" '
            f'style="{CARD_CSS}color:{SUIT_COLOURS[suit]}">'
            f"{html.escape(rank)}{SUIT_SYMBOLS[suit]}</span>"
        )
    return f'<span class="ofc-card" style="{CARD_CSS}">{html.escape(text)}</span>'


def cards_html(cards: Sequence[str | None]) -> str:
    """A row of card chips."""
    return "".join(card_html(card) for card in cards)


def board_html(rows: dict[str, Sequence[str]], caption: str | None = None) -> str:
    """A board as three lines of cards (top 3, middle 5, bottom 5), empty slots dashed."""
    lines = []
    for row, size in ROW_SIZES.items():
        cards: list[str | None] = list(rows.get(row, ()))[:size]
        cards += [None] * (size - len(cards))
        lines.append(
            f'<div style="white-space:nowrap"><span style="display:inline-block;width:4.2em;'
            f'color:#6b7280;font-size:0.85em">{row}</span>{cards_html(cards)}</div>'
        )
    head = (f'<div style="color:#6b7280;font-size:0.85em">{html.escape(caption)}</div>'
            if caption else "")
    return f'<div class="ofc-board">{head}{"".join(lines)}</div>'


def show_html(fragment: str) -> None:
    """Render an HTML fragment built from escaped values (no JavaScript runs)."""
    st.html(fragment)


# --- sidebar filters --------------------------------------------------------------------------


def session_labels(sessions: pl.DataFrame) -> dict[str, str]:
    labels = {}
    for session_id, player, table, started, hands in sessions.select(
        "session_id", "player", "table_name", "started_at", "hands"
    ).rows():
        when = started.strftime("%Y-%m-%d %H:%M") if started else "undated"
        labels[session_id] = f"{player} · {table or 'no table'} · {when} · {hands} hands"
    return labels


def _keep_valid(key: str, options: Sequence[Any]) -> None:
    """Drop chosen values that are no longer offered (new data, or narrower choices)."""
    chosen = st.session_state.get(key)
    if chosen:
        allowed = set(options)
        kept = [value for value in chosen if value in allowed]
        if kept != list(chosen):
            st.session_state[key] = kept


def sidebar_filters(options: FilterOptions) -> Filters:
    """Draw the shared filters in the sidebar and return them (also kept in session state)."""
    sidebar = st.sidebar
    sidebar.header("Filters")
    for key, offered in (("f_players", options.players), ("f_opponents", options.players),
                         ("f_variants", options.variants), ("f_rules", options.rules),
                         ("f_tables", options.tables)):
        _keep_valid(key, offered)
    players = sidebar.multiselect(
        "Players (the first is the hero)", options.players, key="f_players",
        help="Player pages review these players; other pages keep hands where one of them sat.",
    )
    opponents = sidebar.multiselect(
        "Opponents", options.players, key="f_opponents",
        help="Keep only hands against one of these players.",
    )
    date_from = date_to = None
    if options.first_day is not None and options.last_day is not None:
        chosen = sidebar.date_input(
            "Dates", value=(), min_value=options.first_day, max_value=options.last_day,
            key="f_dates", help="Empty: every date.",
        )
        if isinstance(chosen, date):
            chosen = (chosen,)
        chosen = tuple(chosen or ())
        if len(chosen) >= 1:
            date_from = chosen[0]
            date_to = chosen[1] if len(chosen) > 1 else chosen[0]
    variants = sidebar.multiselect("Variant", options.variants, key="f_variants")
    rules = sidebar.multiselect("Rules", options.rules, key="f_rules")
    tables = sidebar.multiselect("Table", options.tables, key="f_tables")
    sessions_frame = options.sessions
    if players and not sessions_frame.is_empty():
        sessions_frame = sessions_frame.filter(pl.col("player").is_in(players))
    sessions_frame = sessions_frame.head(500)
    labels = session_labels(sessions_frame)
    _keep_valid("f_sessions", list(labels))
    session_ids = sidebar.multiselect(
        "Session", list(labels), format_func=lambda value: labels.get(value, value),
        key="f_sessions", help="The 500 most recent sessions (of the chosen players).",
    )
    filters = Filters(
        players=tuple(players), opponents=tuple(opponents), date_from=date_from, date_to=date_to,
        variants=tuple(variants), rules=tuple(rules), tables=tuple(tables),
        sessions=tuple(session_ids),
    )
    st.session_state[FILTERS_KEY] = filters
    return filters


def current_filters() -> Filters:
    """The filters chosen in the sidebar (no restriction before the sidebar has run)."""
    return st.session_state.get(FILTERS_KEY, Filters())


def choose_hero(filters: Filters, key: str = "hero") -> str | None:
    """The hero: chosen on the page among the sidebar's players (or everyone)."""
    options: FilterOptions = ask(read.overview.filter_options)
    candidates = list(filters.players) or list(options.players)
    if not candidates:
        return None
    return st.selectbox("Hero", candidates, index=0, key=key)


def kpi(column: Any, label_text: str, value: str, help_text: str | None = None) -> None:
    """One metric card (label is our own text, never a player name)."""
    column.metric(label_text, value, help=help_text, border=True)


# --- a hand, street by street -----------------------------------------------------------------


def render_hand(hand_key: int, key: str = "replay") -> None:
    """Replay one hand: a header line, then every street drawn in the browser (a step costs no
    round trip) with each graded decision under its street, then the scoring in detail.

    One page run per hand: the hand's rows, cards and grades are read once and sent together.
    """
    from dashboard import tables
    from dashboard.hand_replay import hand_replay, replay_data

    header = ask(read.hands.hand_header, hand_key)
    if header.is_empty():
        st.info("That hand is no longer in the database.")
        return
    hand = header.row(0, named=True)
    players: pl.DataFrame = ask(read.hands.hand_players, hand_key)
    cards: pl.DataFrame = ask(read.hands.hand_streets, hand_key)
    grades: pl.DataFrame = ask(read.grading.hand_grades, hand_key)
    when = hand["started_at"].strftime("%Y-%m-%d %H:%M:%S") if hand["started_at"] else "undated"
    st.markdown(
        f"**Hand {md(hand['hand_id'])}** · site {md(hand['site'])} · "
        f"table {md(hand['table_name'] or '–')} · {md(when)} · {md(hand['variant'])} · "
        f"rules {md(hand['rules'])} · button {md(hand['button'] or '–')}"
    )
    hand_replay(f"{key}_streets", replay_data(hand, players, cards, grades))
    with st.expander("Scoring in detail: verdicts and each pair of players"):
        verdicts = players.select(
            "player", "position", "fantasyland", "top_class", "middle_class", "bottom_class",
            "foul", "royalty_top", "royalty_middle", "royalty_bottom", "royalties",
            "fantasyland_next", "points", "reported_points", "disagreement",
        ).with_columns(pl.col(f"{row}_class").str.replace_all("_", " ")
                       for row in ("top", "middle", "bottom"))
        tables.show(verdicts, f"{key}_verdicts")
        st.caption("Per opponent (each pair from both sides; settled is after any cap):")
        tables.show(ask(read.hands.hand_matchups, hand_key), f"{key}_matchups")


# --- loading data from the browser ------------------------------------------------------------

UPLOAD_TYPES = tuple(suffix.removeprefix(".") for suffix in (*FILE_SUFFIXES, *COMPRESSED_SUFFIXES))
"""File name endings offered for upload: the format registry's (plain, or compressed)."""


def max_upload_mb() -> int:
    """The upload size limit in MB per file (``$OFC_MAX_UPLOAD_MB``, default 200; the server
    keeps to it too)."""
    return read.access.upload_limit_mb()


def _safe_name(name: str) -> str:
    base = Path(name).name or "upload"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", base)[:120] or "upload"


def ingest_uploads(files: Sequence[Any]) -> None:
    """Save uploaded files to a temporary folder and ingest them one by one, with progress."""
    import tempfile

    from pipeline.ingest.driver import ingest_paths
    from pipeline.ingest.errors import IngestError

    database = database_path()
    bar = st.progress(0.0, text="Starting…")
    lines: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ofc-upload-") as folder:
        for index, upload in enumerate(files):
            target = Path(folder) / _safe_name(upload.name)
            target.write_bytes(upload.getvalue())
            bar.progress(index / len(files), text=f"Ingesting {upload.name} ({index + 1}/{len(files)})")

            def on_batch(report: Any, index: int = index, name: str = upload.name) -> None:
                bar.progress(index / len(files),
                             text=f"Ingesting {name}: {report.records:,} records in batch {report.batch}")

            try:
                with read.source.database_lock():
                    summary = ingest_paths([target], database, on_batch=on_batch)
            except IngestError as error:
                lines.append({"file": upload.name, "status": "failed", "stored": 0,
                              "duplicates": 0, "rejected": 0, "message": str(error)})
                continue
            except Exception as error:  # noqa: BLE001 - one file's failure never costs the others
                lines.append({"file": upload.name, "status": "failed", "stored": 0,
                              "duplicates": 0, "rejected": 0,
                              "message": _upload_failure(error)})
                continue
            for file_summary in summary.files:
                lines.append({
                    "file": upload.name, "status": file_summary.status,
                    "stored": file_summary.stored, "duplicates": file_summary.duplicates,
                    "rejected": file_summary.rejected,
                    "message": file_summary.message or "; ".join(file_summary.reasons[:3]),
                })
    bar.progress(1.0, text="Done")
    st.session_state["ofc_last_ingest"] = lines
    st.rerun()


def _upload_failure(error: Exception) -> str:
    """What to show for an upload whose ingest failed unexpectedly: a full disk or a read-only
    database said in words; anything else by its type only (the details, with the server's
    paths, go to the server's log)."""
    from pipeline.store.faults import storage_fault

    fault = storage_fault(error)
    if fault is not None:
        return fault.sentence()
    logging.getLogger(__name__).exception("ingesting an upload failed")
    return (f"could not be read ({type(error).__name__}; the details are in the dashboard's "
            "log): the other files were still read")


def upload_section() -> None:
    """The upload widget, the ingest button and the last run's summary (a note instead on a
    read-only dashboard or a Parquet lake)."""
    if isinstance(read.source.as_source(database_path()), ParquetLake):
        st.info("This dashboard reads a Parquet lake; add hands to it with "
                "`ofc lake build PATH --lake DIR`.")
        return
    if read_only():
        st.info(f"Uploading is not offered here: {read_only_reason()}.")
        return
    limit = max_upload_mb()
    files = st.file_uploader(
        f"Hand-history files (canonical JSON Lines, poker-arena logs, boards CSV; plain or .gz; "
        f"up to {limit} MB each)",
        type=list(UPLOAD_TYPES), accept_multiple_files=True, max_upload_size=limit,
        key="uploads",
    )
    if st.button("Ingest", type="primary", disabled=not files, key="ingest_button"):
        ingest_uploads(files or [])
    last = st.session_state.get("ofc_last_ingest")
    if last:
        stored = sum(line["stored"] for line in last)
        rejected = sum(line["rejected"] for line in last)
        st.success(f"Last ingest: {stored:,} hands stored, {rejected:,} records quarantined.")
        st.dataframe(pl.DataFrame(last), hide_index=True, key="last_ingest")
