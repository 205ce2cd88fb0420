"""Scoring canonical hand records with the rules core: one at a time or whole batches.

:func:`score_record` is the scalar reference; :func:`score_records` does the same for many
records through the vectorised evaluator (:mod:`pipeline.rules.batch`), grouping them by variant
and rule set. Both return :class:`ScoredHand` values with identical content.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.record import HandRecord
from pipeline.rules.batch import BoardColumns, evaluate_boards, settle_pairs
from pipeline.rules.board import BoardEvaluation, evaluate_board
from pipeline.rules.game import ROWS, Variant
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.scoring import score_hand
from pipeline.rules.values import HIGH_CLASS_LABELS, LOW_CLASS_LABELS


@dataclass(slots=True)
class PlayerVerdict:
    """The re-scored result of one player in one hand."""

    name: str
    seat: int
    classes: tuple[str, str, str]
    values: tuple[int, int, int]
    foul: bool
    raw_royalties: tuple[int, int, int]
    royalties: tuple[int, int, int]
    points: int
    fantasyland_cards: int
    reported_points: float | None

    @property
    def disagrees(self) -> bool:
        """True when the source reported points that differ from the re-score."""
        return self.reported_points is not None and self.reported_points != self.points


@dataclass(slots=True)
class PairVerdict:
    """One ordered-by-settlement pair of a hand (first player's view)."""

    first: str
    second: str
    rows: tuple[int, int, int]
    scoop: int
    royalty_points: int
    points: int  # before the cap
    settled: int  # after the cap


@dataclass(slots=True)
class ScoredHand:
    """A hand re-scored under one rule set: players in record order, pairs in settlement order."""

    hand_id: str
    site: str
    rules: str
    players: tuple[PlayerVerdict, ...]
    pairs: tuple[PairVerdict, ...]


RulesLookup = Callable[[str], RuleSet]


def _settlement_order(hand: HandRecord) -> list[int]:
    ordered = hand.action_order()
    index = {id(player): position for position, player in enumerate(hand.players)}
    return [index[id(player)] for player in ordered]


def score_record(hand: HandRecord, rules: RuleSet) -> ScoredHand:
    """Re-score one validated hand with the scalar rules core."""
    evaluations: list[BoardEvaluation] = [
        evaluate_board(player.board.top, player.board.middle, player.board.bottom,
                       hand.variant, rules, player.fantasyland)
        for player in hand.players
    ]
    order = _settlement_order(hand)
    result = score_hand(evaluations, rules, order)
    players = tuple(
        PlayerVerdict(
            name=player.name, seat=player.seat, classes=evaluation.classes,
            values=evaluation.values, foul=evaluation.foul,
            raw_royalties=evaluation.raw_royalties, royalties=evaluation.royalties,
            points=result.points[index], fantasyland_cards=evaluation.fantasyland_cards,
            reported_points=player.reported_points,
        )
        for index, (player, evaluation) in enumerate(zip(hand.players, evaluations, strict=True))
    )
    pairs = tuple(
        PairVerdict(
            first=hand.players[matchup.first].name, second=hand.players[matchup.second].name,
            rows=matchup.outcome.rows, scoop=matchup.outcome.scoop,
            royalty_points=matchup.outcome.royalty_points, points=matchup.outcome.points,
            settled=matchup.settled,
        )
        for matchup in result.matchups
    )
    return ScoredHand(hand.hand_id, hand.site, rules.name, players, pairs)


def _class_labels(variant: Variant, classes: np.ndarray) -> list[tuple[str, str, str]]:
    middle_labels = LOW_CLASS_LABELS if variant.lowball_middle else HIGH_CLASS_LABELS
    return [
        (HIGH_CLASS_LABELS[top], middle_labels[middle], HIGH_CLASS_LABELS[bottom])
        for top, middle, bottom in classes.tolist()
    ]


def score_records(hands: Sequence[HandRecord], rules_for: RulesLookup) -> list[ScoredHand]:
    """Re-score many validated hands through the batch evaluator, in input order.

    ``rules_for`` maps a record's ``rules`` name to a RuleSet (it may ignore the name to apply an
    override). Hands are grouped by (variant, rule set) and each group is evaluated as columns.
    """
    groups: dict[tuple[Variant, RuleSet], tuple[RuleSet, list[int]]] = {}
    for position, hand in enumerate(hands):
        rules = rules_for(hand.rules)
        key = (hand.variant, rules)  # the whole rule set: two files may share a name
        groups.setdefault(key, (rules, []))[1].append(position)
    results: list[ScoredHand | None] = [None] * len(hands)
    for (variant, _), (rules, positions) in groups.items():
        for position, scored in zip(
            positions, _score_group([hands[p] for p in positions], variant, rules), strict=True
        ):
            results[position] = scored
    return results  # type: ignore[return-value]


def _score_group(hands: Sequence[HandRecord], variant: Variant, rules: RuleSet) -> list[ScoredHand]:
    board_count = sum(len(hand.players) for hand in hands)
    cards = np.empty((board_count, 13), dtype=np.int8)
    in_fantasyland = np.empty(board_count, dtype=bool)
    max_players = max(len(hand.players) for hand in hands)
    seats = np.full((len(hands), max_players), -1, dtype=np.int64)
    first_board: list[int] = []
    orders: list[list[int]] = []  # per hand: settlement order (record indexes), computed once
    board_cards: list[tuple[int, ...]] = []
    fantasyland_flags: list[bool] = []
    board = 0
    for hand_index, hand in enumerate(hands):
        first_board.append(board)
        for player in hand.players:
            board_cards.append(player.board.cards)
            fantasyland_flags.append(player.fantasyland)
        order = _settlement_order(hand)
        orders.append(order)
        seats[hand_index, : len(order)] = [board + position for position in order]
        board += len(hand.players)
    cards[:] = board_cards
    in_fantasyland[:] = fantasyland_flags
    columns = evaluate_boards(cards, variant, rules, in_fantasyland)
    totals, settled_pairs = settle_pairs(columns, seats, rules)
    return _assemble(hands, orders, rules, _class_labels(variant, columns.classes), columns,
                     totals, settled_pairs, first_board)


def _assemble(hands, orders, rules, labels, columns: BoardColumns, totals, settled_pairs, first_board):  # noqa: ANN001
    values = list(map(tuple, columns.values.tolist()))
    foul = columns.foul.tolist()
    raw = list(map(tuple, columns.raw_royalties.tolist()))
    royalties = list(map(tuple, columns.royalties.tolist()))
    fantasyland = columns.fantasyland_cards.tolist()
    total_rows = totals.tolist()
    # settle_pairs yields position pairs (i, j), i < j, in lexicographic order: appending them
    # hand by hand gives each hand's pairs in strict settlement order (settlement_pairs).
    pairs_of_hand: list[list[PairVerdict]] = [[] for _ in hands]
    for pair in settled_pairs:
        outcome = pair.outcome
        for hand_index, rows, scoop, royalty, points, settled in zip(
            pair.hands.tolist(), map(tuple, outcome.rows.tolist()), outcome.scoop.tolist(),
            outcome.royalty_points.tolist(), outcome.points.tolist(), pair.settled.tolist(),
            strict=True,
        ):
            order = orders[hand_index]
            hand_players = hands[hand_index].players
            pairs_of_hand[hand_index].append(PairVerdict(
                first=hand_players[order[pair.first_position]].name,
                second=hand_players[order[pair.second_position]].name,
                rows=rows, scoop=scoop, royalty_points=royalty, points=points, settled=settled,
            ))
    output: list[ScoredHand] = []
    for hand_index, hand in enumerate(hands):
        base = first_board[hand_index]
        points_of = [0] * len(hand.players)
        for position, total in zip(orders[hand_index], total_rows[hand_index], strict=False):
            points_of[position] = total
        players = tuple(
            PlayerVerdict(
                name=player.name, seat=player.seat, classes=labels[base + offset],
                values=values[base + offset], foul=foul[base + offset],
                raw_royalties=raw[base + offset], royalties=royalties[base + offset],
                points=points_of[offset], fantasyland_cards=fantasyland[base + offset],
                reported_points=player.reported_points,
            )
            for offset, player in enumerate(hand.players)
        )
        output.append(ScoredHand(hand_id=hand.hand_id, site=hand.site, rules=rules.name,
                                 players=players, pairs=tuple(pairs_of_hand[hand_index])))
    return output


def score_output(scored: ScoredHand) -> dict:
    """The ``ofc score`` JSON object for one scored hand (spec/hand-format.md, plus row classes)."""
    return {
        "hand_id": scored.hand_id,
        "players": [
            {
                "name": player.name,
                "foul": player.foul,
                "royalties": dict(zip((row.value for row in ROWS), player.royalties, strict=True)),
                "points": player.points,
                "fantasyland_next": player.fantasyland_cards > 0,
                "fantasyland_cards": player.fantasyland_cards,
                "classes": dict(zip((row.value for row in ROWS), player.classes, strict=True)),
            }
            for player in scored.players
        ],
    }
