"""The Streamlit entry point: ``streamlit run dashboard/app.py -- --db FILE`` (or ``ofc dashboard``).

Chooses the pages with ``st.navigation``: the start page alone while the database is missing or
empty, else every page with the shared sidebar filters.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import components
from pipeline import read

# Page scripts live in views/, not pages/: a pages/ folder beside the main script would make
# Streamlit treat this as an old-style multipage app (deep links bypassing app.py).
PAGES = Path(__file__).parent / "views"
HOME = "home"


def record_page() -> st.Page:
    """The live-game Record page, offered even while the database is empty."""
    return st.Page(PAGES / "record.py", title="Record", icon=":material/edit_note:")


def record_not_offered() -> st.Page:
    """A read-only dashboard's page at the Record page's address, out of the menu: a direct
    link to ``/record`` says why recording is not offered instead of showing another page."""
    return st.Page(PAGES / "not_offered.py", title="Record", icon=":material/edit_off:",
                   url_path="record", visibility="hidden")


def read_only_start() -> None:
    """The start page of a read-only dashboard on a database without hands: nothing to load here."""
    st.title("OFC analytics")
    st.info(f"The database {components.md(components.database_path())} holds no hands yet, and "
            f"{components.read_only_reason()}.")


def main() -> None:
    """Sign the visitor in, pick the pages for the database's state (none that write on a
    read-only dashboard), draw the sidebar, run the chosen page."""
    st.set_page_config(page_title="OFC analytics", page_icon="🃏", layout="wide")
    read_only = components.read_only()
    if not components.access_granted():
        st.stop()
    try:
        status = components.database_status()
    except read.source.DatabaseBusy as error:
        st.warning(str(error))
        st.stop()
    if status.empty and read_only:
        page = st.navigation([st.Page(read_only_start, title="Start", icon=":material/home:",
                                      default=True, url_path=HOME), record_not_offered()])
    elif status.empty:
        # the start page and the overview share their URL (and so their page id): once hands are
        # loaded, the same address shows the overview instead of "page not found"
        page = st.navigation([st.Page(PAGES / "start.py", title="Start", icon=":material/home:",
                                      default=True, url_path=HOME),
                              record_page()])
    else:
        page = st.navigation({
            "Review": [
                st.Page(PAGES / "overview.py", title="Overview", icon=":material/dashboard:", default=True,
                        url_path=HOME),
                st.Page(PAGES / "player_review.py", title="Player review", icon=":material/person_search:"),
                st.Page(PAGES / "report.py", title="Coaching report", icon=":material/summarize:"),
                st.Page(PAGES / "decision_grading.py", title="Decision grading", icon=":material/grading:"),
                st.Page(PAGES / "trainer.py", title="Trainer", icon=":material/school:"),
                st.Page(PAGES / "compare_players.py", title="Compare players", icon=":material/groups:"),
            ],
            "Follow the points": [
                st.Page(PAGES / "point_flow.py", title="Point flow", icon=":material/swap_horiz:"),
                st.Page(PAGES / "sessions.py", title="Sessions", icon=":material/event_note:"),
                st.Page(PAGES / "hand_browser.py", title="Hand browser", icon=":material/style:"),
            ],
            # read-only: the Data page keeps its tables (its upload is replaced by a note), the
            # Record page, which only writes, is not offered
            "Data": [st.Page(PAGES / "data.py", title="Data", icon=":material/upload_file:"),
                     record_not_offered() if read_only else record_page()],
        })
        try:
            components.sidebar_filters(components.ask(read.overview.filter_options))
        except read.source.DatabaseBusy as error:
            st.warning(str(error))
            st.stop()
        st.sidebar.caption(f"Database: {components.md(components.database_path())} · {status.hands:,} hands")
        if read_only:
            st.sidebar.caption("Read-only: no upload, no Record page.")
    try:
        page.run()
    except read.source.DatabaseBusy as error:
        st.warning(str(error))


try:
    main()
finally:
    components.release_connection()
