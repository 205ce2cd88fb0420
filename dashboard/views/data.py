"""Data: load hand histories from the browser, see what was read, what was refused and why."""

from __future__ import annotations

import streamlit as st

from dashboard import components, tables
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
    tables.show(files, "files", overrides={
        "path": tables.Text("file"), "size_bytes": tables.Number("size", format="bytes"),
        "ingested_at": tables.When("read (UTC)", format="YYYY-MM-DD HH:mm"),
        "records": tables.Number("records read", format=tables.COUNT),
        "stored": tables.Number("hands stored", format=tables.COUNT),
        "duplicates": tables.Number("already stored", format=tables.COUNT),
        "rejected": tables.Number("quarantined", format=tables.COUNT)})

st.subheader("Quarantined records")
open_rejects, resolved_rejects = components.ask(read.data.reject_counts)
st.caption(
    f"{open_rejects:,} records are refused; each keeps its reason and raw text. "
    f"{resolved_rejects:,} earlier rejects are resolved: their hand was stored since "
    "(a fixed file ingested again)."
)
reasons = components.ask(read.data.data_health)
if not reasons.is_empty():
    tables.show(reasons, "reject_reasons")
rejects = components.ask(read.data.rejected_records)
if not rejects.is_empty():
    tables.show(rejects, "rejects", overrides={
        "path": tables.Text("file"), "raw": tables.Text("the record as read"),
        "rejected_at": tables.When("refused (UTC)", format="YYYY-MM-DD HH:mm"),
        "resolved_by": tables.Text("resolved by")})

st.subheader("Audit: reported points that disagree with the re-score")
why = components.ask(read.audit.disagreement_reasons, filters)
if why.is_empty():
    st.caption("Every reported result agrees with the re-score.")
else:
    tables.show(why, "disagreement_reasons")
    disagreements = components.ask(read.audit.audit_disagreements, filters)
    st.caption(f"{int(disagreements['total'][0]):,} boards disagree; the most recent are listed.")
    tables.show(disagreements, "disagreements",
                order=[column for column in disagreements.columns
                       if column not in ("hand_key", "total")],
                overrides={"rescored": tables.Number("points (re-scored)", format=tables.POINTS),
                           "reported": tables.Number("points (source)", format=tables.POINTS)})
