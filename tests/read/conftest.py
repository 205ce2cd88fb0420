"""The read model is checked on the dashboard's fixture database (the same hands, ingested by the
real ingest path), so each figure is compared with numbers recomputed from the records."""

from __future__ import annotations

from tests.dashboard.conftest import expected, fixture_db, fixture_source

__all__ = ["expected", "fixture_db", "fixture_source"]
