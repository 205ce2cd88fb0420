"""The Arrow tables of a batch (schemas/database.md), built from its columns.

:func:`hand_tables` turns :class:`~pipeline.ingest.columns.HandColumns` into every hand table:
the rule-independent ones (hands, seats, boards, placements, discards) and the verdicts of the
batch rules core (evaluations, matchups, results, :func:`verdict_tables`), scored in one go.

Pure: no files, no database.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.ingest.columns import (
    CARD_TEXT,
    CLASS_LABELS,
    HandColumns,
    VerdictFacts,
    disagreement_texts,
    json_or_none,
    score_columns,
)
from pipeline.rules.game import ROWS
from pipeline.rules.ruleset import RuleSet

__all__ = ["FRAME_ORDER", "TABLE_SCHEMAS", "hand_tables", "verdict_tables"]

TABLE_SCHEMAS: dict[str, pa.Schema] = {
    "hands": pa.schema([
        ("hand_key", pa.int64()), ("site", pa.string()), ("hand_id", pa.string()),
        ("table_name", pa.string()), ("started_at", pa.timestamp("us")),
        ("variant", pa.string()), ("rules", pa.string()), ("button", pa.string()),
        ("player_count", pa.int8()), ("has_streets", pa.bool_()),
        ("any_fantasyland", pa.bool_()), ("content_hash", pa.string()),
        ("source_path", pa.string()), ("source_line", pa.int32()), ("extra", pa.string()),
        ("match_id", pa.string()),
    ]),
    "seats": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("seat", pa.int16()),
        ("position", pa.int8()), ("is_button", pa.bool_()), ("fantasyland", pa.bool_()),
        ("cards_dealt", pa.int8()), ("reported_points", pa.float64()), ("extra", pa.string()),
    ]),
    "placements": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("street", pa.int8()),
        ("card_order", pa.int8()), ("card", pa.string()), ("row_name", pa.string()),
    ]),
    "discards": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("street", pa.int8()),
        ("card", pa.string()),
    ]),
    "boards": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("top", pa.string()),
        ("middle", pa.string()), ("bottom", pa.string()),
    ]),
    "evaluations": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("ruleset", pa.string()),
        ("top_class", pa.string()), ("middle_class", pa.string()), ("bottom_class", pa.string()),
        ("top_value", pa.int32()), ("middle_value", pa.int32()), ("bottom_value", pa.int32()),
        ("foul", pa.bool_()), ("royalty_top", pa.int16()), ("royalty_middle", pa.int16()),
        ("royalty_bottom", pa.int16()), ("royalties", pa.int16()),
        ("fantasyland_next", pa.bool_()), ("fantasyland_cards", pa.int8()),
        ("raw_royalty_top", pa.int16()), ("raw_royalty_middle", pa.int16()),
        ("raw_royalty_bottom", pa.int16()),
    ]),
    "matchups": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("opponent", pa.string()),
        ("rows_won", pa.int8()), ("rows_lost", pa.int8()), ("scoop", pa.int8()),
        ("royalty_points", pa.int32()), ("points", pa.int32()), ("settled", pa.int32()),
    ]),
    "results": pa.schema([
        ("hand_key", pa.int64()), ("player", pa.string()), ("points", pa.int32()),
        ("reported_points", pa.float64()), ("disagrees", pa.bool_()),
        ("disagreement", pa.string()),
    ]),
    "rejects": pa.schema([
        ("path", pa.string()), ("line", pa.int32()), ("hand_id", pa.string()),
        ("reason", pa.string()), ("raw", pa.string()), ("rejected_at", pa.timestamp("us")),
        ("kind", pa.string()), ("conflict_with", pa.string()), ("reject_key", pa.string()),
        ("site", pa.string()), ("resolved_at", pa.timestamp("us")), ("resolved_by", pa.string()),
    ]),
}
"""The Arrow schema of every table a batch writes (column order as in the database)."""

FRAME_ORDER = ("hands", "seats", "evaluations", "matchups", "results", "boards", "placements",
               "discards")
"""The tables :func:`hand_tables` builds, in the order a batch inserts them."""


@cache
def _card_texts() -> pa.Array:
    """The cards' texts by card code (built on first use: pyarrow imports pandas on its first
    array, which a writer that only inserts the workers' batches never needs)."""
    return pa.array(CARD_TEXT, pa.string())


@cache
def _row_names() -> pa.Array:
    """The rows' names by row index (built on first use, as :func:`_card_texts`)."""
    return pa.array([row.value for row in ROWS], pa.string())



def _optional_strings(values: Sequence[str | None]) -> pa.Array:
    return pa.array(values, pa.string())


def hand_tables(
    columns: HandColumns, rules_for: Callable[[str], RuleSet]
) -> dict[str, pa.Table]:
    """Every hand table of the batch as Arrow, in :data:`FRAME_ORDER`.

    ``rules_for`` maps a record's rules name to the RuleSet that scores it.
    """
    tables = _rule_independent_tables(columns)
    tables.update(verdict_tables(columns, rules_for))
    return {name: tables[name] for name in FRAME_ORDER}


def _rule_independent_tables(columns: HandColumns) -> dict[str, pa.Table]:
    player_counts = columns.player_counts
    hand_count = columns.hand_count
    player_count = len(columns.names)
    player_hand = np.repeat(np.arange(hand_count), player_counts)
    player_keys = columns.keys[player_hand]
    names = pa.array(columns.names, pa.string())
    fantasyland = columns.fantasyland
    first_players = np.cumsum(player_counts) - player_counts
    any_fantasyland = (
        np.bitwise_or.reduceat(fantasyland, first_players) if player_count else np.zeros(0, bool)
    )
    has_streets = (  # every player's streets known
        np.bitwise_and.reduceat(columns.cards_dealt >= 0, first_players) if player_count
        else np.zeros(0, bool)
    )
    hands = pa.Table.from_pydict({
        "hand_key": pa.array(columns.keys, pa.int64()),
        "site": pa.array(columns.sites, pa.string()),
        "hand_id": pa.array(columns.hand_ids, pa.string()),
        "table_name": _optional_strings(columns.tables),
        "started_at": pa.array(columns.started, pa.timestamp("us"),
                               mask=np.isnat(columns.started)),
        "variant": pa.array([variant.value for variant in columns.variants], pa.string()),
        "rules": pa.array(columns.rules, pa.string()),
        "button": _optional_strings(columns.buttons),
        "player_count": pa.array(player_counts.astype(np.int8)),
        "has_streets": pa.array(has_streets, pa.bool_()),
        "any_fantasyland": pa.array(any_fantasyland.astype(bool), pa.bool_()),
        "content_hash": pa.array(columns.digests, pa.string()),
        "source_path": pa.array(columns.paths, pa.string()),
        "source_line": pa.array(columns.lines, pa.int32()),
        "extra": _optional_strings(columns.hand_extras),
        "match_id": _optional_strings(columns.match_ids),
    }, schema=TABLE_SCHEMAS["hands"])

    buttons = columns.buttons
    is_button = [
        buttons[hand] is not None and buttons[hand] == name
        for hand, name in zip(player_hand.tolist(), columns.names, strict=True)
    ]
    dealt = columns.cards_dealt
    seats = pa.Table.from_pydict({
        "hand_key": pa.array(player_keys, pa.int64()), "player": names,
        "seat": pa.array(columns.seats.astype(np.int16)),
        "position": pa.array(columns.positions.astype(np.int8)),
        "is_button": pa.array(is_button, pa.bool_()),
        "fantasyland": pa.array(fantasyland, pa.bool_()),
        "cards_dealt": pa.array(dealt.astype(np.int8), mask=dealt < 0),
        "reported_points": pa.array(columns.reported, pa.float64()),
        "extra": _optional_strings([json_or_none(extra) for extra in columns.player_extras]),
    }, schema=TABLE_SCHEMAS["seats"])

    codes = columns.boards.astype(np.int64)
    texts = [_card_texts().take(pa.array(codes[:, column])) for column in range(13)]

    def joined(first: int, last: int) -> pa.Array:
        if not player_count:
            return pa.array([], pa.string())
        return pc.binary_join_element_wise(*texts[first:last], " ")

    boards = pa.Table.from_pydict({
        "hand_key": pa.array(player_keys, pa.int64()), "player": names,
        "top": joined(0, 3), "middle": joined(3, 8), "bottom": joined(8, 13),
    }, schema=TABLE_SCHEMAS["boards"])

    street_keys = player_keys[columns.street_players]
    street_names = names.take(pa.array(columns.street_players))

    def street_columns(counts: np.ndarray) -> dict[str, Any]:
        streets = np.repeat(np.arange(len(counts)), counts)
        return {
            "hand_key": pa.array(street_keys[streets], pa.int64()),
            "player": street_names.take(pa.array(streets)),
            "street": pa.array(columns.street_numbers[streets].astype(np.int8)),
        }

    placed_counts = columns.placed_counts
    placement_columns = street_columns(placed_counts)
    starts = np.cumsum(placed_counts) - placed_counts
    placed = columns.placed.astype(np.int64)
    placement_columns["card_order"] = pa.array(
        (np.arange(len(placed)) - np.repeat(starts, placed_counts)).astype(np.int8)
    )
    placement_columns["card"] = _card_texts().take(pa.array(placed // 3))
    placement_columns["row_name"] = _row_names().take(pa.array(placed % 3))
    placements = pa.Table.from_pydict(placement_columns, schema=TABLE_SCHEMAS["placements"])

    discard_columns = street_columns(columns.discard_counts)
    discard_columns["card"] = _card_texts().take(pa.array(columns.discarded.astype(np.int64)))
    discards = pa.Table.from_pydict(discard_columns, schema=TABLE_SCHEMAS["discards"])
    return {"hands": hands, "seats": seats, "boards": boards, "placements": placements,
            "discards": discards}



def verdict_tables(
    columns: HandColumns, rules_for: Callable[[str], RuleSet]
) -> dict[str, pa.Table]:
    """Evaluations, matchups and results of the batch, built as columns straight from
    :func:`score_columns` (the rows :func:`pipeline.ingest.evaluate.score_records` gives, in the same
    order: hands in batch order, players in record order, pairs in settlement order each
    followed by its mirror)."""
    scored = score_columns(columns, rules_for)
    player_counts = columns.player_counts
    first_boards = np.cumsum(player_counts) - player_counts
    board_count = len(columns.names)
    player_hand = np.repeat(np.arange(columns.hand_count), player_counts)
    pair_counts = scored.pair_counts
    pair_count = len(scored.pair_first)
    values, class_codes, foul = scored.values, scored.class_codes, scored.foul
    raw, royalties = scored.raw_royalties, scored.royalties
    fantasyland_cards, points = scored.fantasyland_cards, scored.points
    pair_first, pair_second, pair_rows = scored.pair_first, scored.pair_second, scored.pair_rows
    pair_scoop, pair_royalty = scored.pair_scoop, scored.pair_royalty
    pair_points, pair_settled = scored.pair_points, scored.pair_settled
    rule_names = scored.rule_names

    key_array = columns.keys[player_hand]
    player_array = pa.array(columns.names, pa.string())
    labels = pa.array(CLASS_LABELS, pa.string())
    ruleset = pa.array(rule_names, pa.string()).take(pa.array(player_hand))
    evaluations = pa.Table.from_pydict({
        "hand_key": pa.array(key_array, pa.int64()), "player": player_array, "ruleset": ruleset,
        "top_class": labels.take(pa.array(class_codes[:, 0])),
        "middle_class": labels.take(pa.array(class_codes[:, 1])),
        "bottom_class": labels.take(pa.array(class_codes[:, 2])),
        "top_value": values[:, 0], "middle_value": values[:, 1], "bottom_value": values[:, 2],
        "foul": foul, "royalty_top": royalties[:, 0], "royalty_middle": royalties[:, 1],
        "royalty_bottom": royalties[:, 2],
        "royalties": royalties.astype(np.int64).sum(axis=1).astype(np.int16),
        "fantasyland_next": fantasyland_cards > 0, "fantasyland_cards": fantasyland_cards,
        "raw_royalty_top": raw[:, 0], "raw_royalty_middle": raw[:, 1],
        "raw_royalty_bottom": raw[:, 2],
    }, schema=TABLE_SCHEMAS["evaluations"])

    won = (pair_rows == 1).sum(axis=1)
    lost = (pair_rows == -1).sum(axis=1)

    def interleaved(forward: np.ndarray, mirror: np.ndarray, dtype: Any) -> np.ndarray:
        both = np.empty(2 * pair_count, dtype)
        both[0::2] = forward
        both[1::2] = mirror
        return both

    pair_hands = np.repeat(columns.keys, pair_counts)
    matchups = pa.Table.from_pydict({
        "hand_key": pa.array(np.repeat(pair_hands, 2), pa.int64()),
        "player": player_array.take(pa.array(interleaved(pair_first, pair_second, np.int64))),
        "opponent": player_array.take(pa.array(interleaved(pair_second, pair_first, np.int64))),
        "rows_won": interleaved(won, lost, np.int8),
        "rows_lost": interleaved(lost, won, np.int8),
        "scoop": interleaved(pair_scoop, -pair_scoop, np.int8),
        "royalty_points": interleaved(pair_royalty, -pair_royalty, np.int32),
        "points": interleaved(pair_points, -pair_points, np.int32),
        "settled": interleaved(pair_settled, -pair_settled, np.int32),
    }, schema=TABLE_SCHEMAS["matchups"])

    texts: list[str | None] = [None] * board_count
    reported = columns.reported
    extras = columns.player_extras
    names = columns.names
    # Only a hand with a player whose reported points differ from the re-score, or with a
    # source's own verdict (an extra), can disagree: the rest are found with numpy, not
    # looked at one player at a time.
    reported_points = np.array(reported, dtype=np.float64)  # None (not reported) becomes NaN
    differs = ~np.isnan(reported_points) & (reported_points != points)  # reported: finite
    with_extra = np.fromiter(map(bool, extras), bool, board_count)
    checked = np.flatnonzero(differs | with_extra)
    for hand in np.unique(player_hand[checked]).tolist():
        first = int(first_boards[hand])
        last = first + int(player_counts[hand])
        hand_verdicts = [
            VerdictFacts(names[index], reported[index], extras[index] or {}, bool(foul[index]),
                     tuple(int(value) for value in raw[index]),
                     int(fantasyland_cards[index]), int(points[index]))
            for index in range(first, last)
        ]
        texts[first:last] = disagreement_texts(hand_verdicts)
    results = pa.Table.from_pydict({
        "hand_key": pa.array(key_array, pa.int64()), "player": player_array,
        "points": points.astype(np.int32),
        "reported_points": pa.array(reported, pa.float64()),
        "disagrees": pa.array([text is not None for text in texts], pa.bool_()),
        "disagreement": pa.array(texts, pa.string()),
    }, schema=TABLE_SCHEMAS["results"])
    return {"evaluations": evaluations, "matchups": matchups, "results": results}
