"""ofc-analytics: hand-history analytics for Open Face Chinese Poker."""

from __future__ import annotations

__version__ = "0.1.0"
