"""Saving, replacing and deleting live hands in the database, always through :mod:`pipeline.ingest.driver`.

A live hand is stored exactly like an ingested file's hand (the same tables and keys); the
source is named ``live:{table}``.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from pipeline import store
from pipeline.ingest.delete import delete_hand
from pipeline.ingest.driver import ingest_mappings
from pipeline.live.session import LIVE_SITE, LiveHand
from pipeline.rules.ruleset import RuleSet

__all__ = ["LiveStoreError", "remove_hand", "replace_hand", "store_hand", "stored_hand_ids"]


class LiveStoreError(RuntimeError):
    """A hand the database did not take; the message says why."""


def _source_name(hand: LiveHand) -> str:
    return f"live:{hand.record['table']}"


def store_hand(database: str | Path, hand: LiveHand, rules: RuleSet) -> None:
    """Write a saved hand to the database through :func:`pipeline.ingest.driver.ingest_mappings`.

    Storing the same hand twice is harmless (a duplicate); a different hand under the same id
    raises :class:`LiveStoreError` (use :func:`replace_hand` for an edit).
    """
    summary = ingest_mappings([hand.record], database, _source_name(hand), rules=rules)
    if summary.stored + summary.duplicates != 1:
        reasons = "; ".join(summary.first_reasons) or "not stored"
        raise LiveStoreError(f"hand {hand.hand_id} was not saved: {reasons}")


def remove_hand(database: str | Path, hand: LiveHand) -> bool:
    """Delete a saved hand from the database; False when it was not stored."""
    return delete_hand(database, LIVE_SITE, hand.hand_id)


def replace_hand(database: str | Path, hand: LiveHand, rules: RuleSet) -> None:
    """Store an edited hand in place of the stored one with the same id (delete, then ingest)."""
    remove_hand(database, hand)
    store_hand(database, hand, rules)


def stored_hand_ids(database: str | Path, session_id: str) -> list[str]:
    """Ids of the hands of a live session already in the database (none without a database).

    Lets a new session refuse an id that would collide with hands saved earlier.
    """
    path = Path(database)
    if not path.exists():
        return []
    with store.open_database(path, read_only=True) as connection:
        try:
            rows = connection.execute(
                "SELECT hand_id FROM hands WHERE site = ? AND starts_with(hand_id, ?) "
                "ORDER BY hand_id",
                [LIVE_SITE, f"{session_id}-"],
            ).fetchall()
        except duckdb.CatalogException:
            return []
    return [row[0] for row in rows]
