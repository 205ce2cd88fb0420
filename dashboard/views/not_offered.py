"""Record, on a dashboard that offers no page that writes: what is not here, and why.

A direct link to ``/record`` used to show the Overview without a word; it lands here instead.
"""

from __future__ import annotations

import streamlit as st

from dashboard import components

st.title("Record")
st.info(f"Recording live games is not offered here: {components.read_only_reason()}.")
st.caption("Everything else (the review pages, the Hand browser, the Data page's tables) is "
           "here as usual.")
