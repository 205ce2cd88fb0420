"""Run Streamlit on the dashboard: ``python -m dashboard.serve run dashboard/app.py [options]``.

``ofc dashboard`` starts Streamlit through this module instead of the ``streamlit`` script for one
reason: ``app.py`` sits next to the ``pages/`` folder, and Streamlit treats an app with a
``pages/`` folder beside its main script as an old-style multipage app until ``st.navigation``
has run once in the process. A browser whose first request is a deep link (``/sessions``) would
then get that page script alone — no sidebar filters, no wide layout. Marking the process as a
``st.navigation`` app before the server starts makes every request go through ``app.py``.
"""

from __future__ import annotations

import sys


def main() -> int:
    """Start the Streamlit command line with multipage "pages folder" detection switched off."""
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    PagesManager.uses_pages_directory = False
    return int(cli.main(prog_name="streamlit", standalone_mode=True) or 0)


if __name__ == "__main__":
    sys.exit(main())
