"""The start page, shown while the database is missing or holds no hands."""

from __future__ import annotations

import streamlit as st

from dashboard import components
from pipeline import read
from pipeline.ingest import demo

st.title("OFC analytics")
path = components.database_path()
status = components.database_status()
if not status.exists:
    st.info(f"There is no database at {components.md(path)} yet.")
else:
    st.info(f"The database {components.md(path)} holds no hands yet.")
st.markdown(
    "Review your Open Face Chinese Poker play, compare players and follow the points. "
    "To begin, load some hand histories:"
)
left, right = st.columns(2)
with left:
    st.subheader("Try it with demo data")
    st.write("Loads a few thousand sample Pineapple hands into this database.")
    if st.button("Load the demo data", type="primary", key="load_demo"):
        with st.spinner("Building the demo database…"):
            try:
                with read.source.database_lock():
                    summary = demo.build_demo_database(path)
            except Exception as error:  # shown, not raised: the start page never shows a traceback
                st.error(f"Could not load the demo data: {error}")
            else:
                st.success(f"Loaded {summary.stored:,} hands.")
                st.rerun()
with right:
    st.subheader("Ingest your own hands")
    st.code(f"ofc ingest path/to/hand-histories --db {path}\nofc dashboard --db {path}",
            language="bash")
    st.caption("Or upload files here:")
    components.upload_section()
if status.rejects:
    st.warning(f"{status.rejects:,} records were quarantined; none could be stored.")
    st.dataframe(components.ask(read.data.rejected_records), hide_index=True, key="start_rejects")
