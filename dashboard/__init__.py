"""The Streamlit dashboard: ``app.py`` (the entry point and navigation), ``components.py`` (the
shared widgets, cached questions and card HTML) and ``views/`` (one thin page each).

Layer: the top floor, beside the command line. Pages lay out widgets and call the read model
(:mod:`pipeline.read`), the report, ingest and live entry; nothing under :mod:`pipeline` imports
the dashboard.
"""
