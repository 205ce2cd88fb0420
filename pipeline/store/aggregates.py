"""What the kept aggregates are: their versions, grains, sums and the SQL both sides share.

The writers (:mod:`pipeline.ingest.aggregates`, :mod:`pipeline.ingest.play_order`) keep the
aggregate tables up to date with the hands; the read model (:mod:`pipeline.read.totals`,
:mod:`pipeline.read.hands`, :mod:`pipeline.read.report`) reads them, and trusts them only when
they follow the definition named here. The definition therefore lives below both, with the
schema that holds the tables (``schemas/database.md``): the read model never imports ingest.

Layer: the store. Imports DuckDB and, for one value (the weakest top row that earns
Fantasyland), the rules core.
"""

from __future__ import annotations

import functools

import duckdb

from pipeline.store import get_meta, kept_and_counts_agree

PLAYER_TOTAL_COLUMNS: tuple[str, ...] = (
    "hands", "points", "points_squares", "disagreements", "fl_hands", "fl_points", "fouls",
    "royalties", "fl_next", "fl_stays", "matchups", "scoops", "scooped",
)
"""Columns of the lake's ``player_totals`` after ``player``: additive per-player sums behind
every figure of ``ofc players`` (:func:`pipeline.read.players.player_kpis` without filters).
The lake's writers (:mod:`pipeline.lake`) and its reader (:mod:`pipeline.read.lake`) both take
them from here."""

__all__ = [
    "AGGREGATES_META_KEY",
    "AGGREGATES_VERSION",
    "BOARD_GRAIN",
    "BOARD_SUMS",
    "FANTASYLAND_CARD_RANKS",
    "PAIR_GRAIN",
    "PAIR_SUMS",
    "PLAYER_TOTAL_COLUMNS",
    "PLAY_ORDER_META_KEY",
    "PLAY_ORDER_VERSION",
    "ROLLUP_META_KEY",
    "ROLLUP_VERSION",
    "SUMMARY_META_KEY",
    "SUMMARY_VERSION",
    "aggregates_current",
    "fantasyland_top_value",
    "play_order_current",
    "play_order_ready",
    "summaries_sql",
]

AGGREGATES_VERSION = "1"
"""The definition the stored aggregates follow; a change of definition bumps it, and the next
write rebuilds them (readers ignore aggregates of another version meanwhile)."""

AGGREGATES_META_KEY = "aggregates_version"
"""meta key: :data:`AGGREGATES_VERSION` once the aggregates are built and kept."""

ROLLUP_VERSION = "1"
"""The definition the day-free rollups (``board_totals_all``, ``pair_totals_all``) follow."""

ROLLUP_META_KEY = "rollup_version"
"""meta key: :data:`ROLLUP_VERSION` once the rollups are built and kept (a database whose
aggregates were made before them gets them at its next write; readers use the per-day tables
meanwhile)."""

SUMMARY_VERSION = "1"
"""The definition the stored ``hand_summaries`` follow."""

SUMMARY_META_KEY = "hand_summary_version"
"""meta key: :data:`SUMMARY_VERSION` once ``hand_summaries`` is built and kept (a database whose
aggregates were made before it gets it at its next write; the hand browser reads the boards
meanwhile)."""

PLAY_ORDER_VERSION = "2"  # 2: each row also holds its hand's game, points and foul
"""The definition the stored numbering (``play_order``) follows."""

PLAY_ORDER_META_KEY = "play_order_version"
"""meta key: :data:`PLAY_ORDER_VERSION` once ``play_order`` is built and kept."""

FANTASYLAND_CARD_RANKS = ("Q", "K", "A")
"""A card of these ranks on the top row with the first five cards counts as chasing Fantasyland."""

BOARD_GRAIN = ("player", "day", "variant", "rules", "player_count", "position", "fantasyland",
               "foul")
"""The columns a ``board_totals`` row is one of (``day`` is null for undated hands)."""

BOARD_SUMS = (
    "boards", "buttons", "with_streets", "chasing", "fantasyland_next", "disagreements",
    "points", "points_sq", "royalty_top", "royalty_top_sq", "royalty_middle",
    "royalty_middle_sq", "royalty_bottom", "royalty_bottom_sq", "matchups", "scoops", "scooped",
    "paired_boards", "settled", "settled_sq", "royalty_points", "royalty_points_sq",
    "royalty_settled",
)
"""The sums of a ``board_totals`` row."""

PAIR_GRAIN = ("player", "opponent", "day", "variant", "rules", "player_count", "position",
              "fantasyland", "foul")
"""The columns a ``pair_totals`` row is one of (the grain of ``board_totals`` and an opponent)."""

PAIR_SUMS = ("hands", "points", "points_sq", "scoops", "scooped", "scoop_points",
             "scooped_points", "neither_points", "fantasyland_next", "royalty", "royalty_sq",
             "royalty_points", "board_points", "board_points_sq", "board_royalty",
             "board_royalty_sq", "board_royalty_points", "cross_points", "cross_royalty",
             "cross_royalty_points", "cross_points_royalty")
"""The sums of a ``pair_totals`` row."""


@functools.cache
def fantasyland_top_value() -> int:
    """The weakest top row that earns Fantasyland under the standard rule (QQ2), as a row value.

    ``evaluations.top_value`` at or above it means a pair of queens or better, or trips.
    """
    from pipeline.rules.cards import parse_cards
    from pipeline.rules.values import evaluate_row

    return evaluate_row(parse_cards("Qc Qd 2h"))


def summaries_sql(results: str, seats: str, evaluations: str, where: str = "") -> str:
    """``hand_summaries`` rows of the hands in ``results``, ``seats`` and ``evaluations``
    (relations; their rows passing ``where``, a condition on ``hand_key``): what the hand
    browser shows beside each hand (:func:`pipeline.read.hands.hand_list` reads the kept rows,
    or computes these for the hands it shows)."""
    keep = f"WHERE {where}" if where else ""
    return f"""
        SELECT p.hand_key, p.players, p.disagreements, b.fouls, b.max_royalties
        FROM (
            SELECT r.hand_key, string_agg(r.player, ', ' ORDER BY s.position) AS players,
                   count(*) FILTER (WHERE r.disagrees) AS disagreements
            FROM (SELECT hand_key, player, disagrees FROM {results} {keep}) r
            JOIN (SELECT hand_key, player, position FROM {seats} {keep}) s
                 ON s.hand_key = r.hand_key AND s.player = r.player
            GROUP BY r.hand_key
        ) p
        LEFT JOIN (
            SELECT hand_key, count(*) FILTER (WHERE foul) AS fouls,
                   max(royalties) AS max_royalties
            FROM {evaluations} {keep} GROUP BY hand_key
        ) b ON b.hand_key = p.hand_key
    """


def aggregates_current(connection: duckdb.DuckDBPyConnection) -> bool:
    """True when the stored aggregates follow :data:`AGGREGATES_VERSION` (kept by the writers)."""
    return get_meta(connection, AGGREGATES_META_KEY) == AGGREGATES_VERSION


def play_order_current(connection: duckdb.DuckDBPyConnection) -> bool:
    """True when the database's ``play_order`` follows :data:`PLAY_ORDER_VERSION`."""
    return get_meta(connection, PLAY_ORDER_META_KEY) == PLAY_ORDER_VERSION


def play_order_ready(connection: duckdb.DuckDBPyConnection) -> bool:
    """True when ``play_order`` is kept and numbers every result (a reader may trust it)."""
    return kept_and_counts_agree(
        connection, PLAY_ORDER_META_KEY, PLAY_ORDER_VERSION,
        ("SELECT count(*) FROM play_order", "SELECT count(*) FROM results"))
