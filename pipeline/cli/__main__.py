"""``python -m pipeline.cli``: the same as the ``ofc`` console script."""

from __future__ import annotations

import sys

from pipeline.cli import main

sys.exit(main())
