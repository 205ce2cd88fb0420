"""Data: load hand histories from the browser, see what was read, what was refused and why."""

from __future__ import annotations

import streamlit as st

from dashboard import components
from pipeline import read

filters = components.current_filters()
st.title("Data")

st.subheader("Load hand histories")
components.upload_section()
st.caption("Or from a terminal (the dashboard shows the new hands on refresh):")
st.code(f"ofc ingest FILE_OR_FOLDER --db {components.database_path()}", language="bash")

st.subheader("Files ingested")
files = components.ask(read.data.ingested_files)
if files.is_empty():
    st.caption("No file yet.")
else:
    st.dataframe(files, hide_index=True, key="files")

st.subheader("Quarantined records")
open_rejects, resolved_rejects = components.ask(read.data.reject_counts)
st.caption(
    f"{open_rejects:,} records are refused; each keeps its reason and raw text. "
    f"{resolved_rejects:,} earlier rejects are resolved: their hand was stored since "
    "(a fixed file ingested again)."
)
reasons = components.ask(read.data.data_health)
if not reasons.is_empty():
    st.dataframe(reasons, hide_index=True, key="reject_reasons")
rejects = components.ask(read.data.rejected_records)
if not rejects.is_empty():
    st.dataframe(rejects, hide_index=True, key="rejects")

st.subheader("Audit: reported points that disagree with the re-score")
why = components.ask(read.audit.disagreement_reasons, filters)
if why.is_empty():
    st.caption("Every reported result agrees with the re-score.")
else:
    st.dataframe(why, hide_index=True, key="disagreement_reasons")
    disagreements = components.ask(read.audit.audit_disagreements, filters)
    st.caption(f"{int(disagreements['total'][0]):,} boards disagree; the most recent are listed.")
    st.dataframe(disagreements.drop("hand_key", "total"), hide_index=True, key="disagreements")
