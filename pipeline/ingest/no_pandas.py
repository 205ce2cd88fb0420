"""pyarrow without pandas, in a process that only ingests.

pyarrow looks for pandas the first time a process builds an array (to tell pandas objects from
other sequences), and importing pandas costs about 0.2 s of CPU: a fifth of a 2,000-hand
``ofc ingest``. An ingest worker, and ``ofc ingest`` and ``ofc watch`` in a process of their own
(:func:`pipeline.cli.common.only_ingests`), build their Arrow tables from numpy arrays and Python
lists only: they tell pyarrow that pandas is absent (:func:`hide_pandas_from_pyarrow`) and never
import it. pandas stays importable there,
and pyarrow's conversions (``to_pandas``, ``from_pandas``) import it themselves and still work;
only ``pyarrow.array`` of a pandas object would take it for a plain sequence.

Not for a process that may hand pandas objects to pyarrow later (the dashboard, a test
session): pyarrow looks for pandas once per process.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

__all__ = ["hide_pandas_from_pyarrow"]


class _PandasHidden:
    """A finder that answers every import of pandas with ImportError, as if it were missing."""

    @staticmethod
    def find_spec(name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        """ImportError for pandas and its submodules; None (ask the next finder) for any other."""
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas is hidden from pyarrow in this process")
        return None


def hide_pandas_from_pyarrow() -> bool:
    """Have pyarrow take pandas for absent in this process: pandas is hidden from the import
    system while pyarrow builds a first array (its one look for pandas), then shown again.
    Returns False, doing nothing, when pandas is imported already (nothing to save then)."""
    if "pandas" in sys.modules:
        return False
    import pyarrow

    sys.meta_path.insert(0, _PandasHidden)
    try:
        pyarrow.array([0])  # pyarrow's first array: it looks for pandas now, and not again
    finally:
        sys.meta_path.remove(_PandasHidden)
    return True
