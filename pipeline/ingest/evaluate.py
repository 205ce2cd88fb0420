"""Scoring canonical hand records with the rules core: one at a time or whole batches.

:func:`score_record` is the scalar reference; :func:`score_records` does the same for many
records through the batch core ingest also uses (:func:`pipeline.ingest.columns.score_columns`).
Both return :class:`ScoredHand` values with identical content.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.ingest.columns import CLASS_LABELS, score_columns, scoring_columns
from pipeline.records.record import HandRecord
from pipeline.rules.board import BoardEvaluation, evaluate_board
from pipeline.rules.game import ROWS
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.scoring import score_hand


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


def score_records(hands: Sequence[HandRecord], rules_for: RulesLookup) -> list[ScoredHand]:
    """Re-score many validated hands through the batch evaluator, in input order.

    ``rules_for`` maps a record's ``rules`` name to a RuleSet (it may ignore the name to apply an
    override). The hands are scored as one batch of columns by
    :func:`pipeline.ingest.columns.score_columns`, the same core ingest uses.
    """
    if not hands:
        return []
    positions: list[int] = []
    for hand in hands:
        order = _settlement_order(hand)
        hand_positions = [0] * len(order)
        for position, index in enumerate(order):
            hand_positions[index] = position
        positions += hand_positions
    players = [player for hand in hands for player in hand.players]
    scored = score_columns(scoring_columns(
        keys=np.arange(len(hands)), variants=[hand.variant for hand in hands],
        rules=[hand.rules for hand in hands],
        player_counts=np.asarray([len(hand.players) for hand in hands], np.int64),
        names=[player.name for player in players], positions=np.asarray(positions, np.int64),
        fantasyland=np.asarray([player.fantasyland for player in players], bool),
        reported=[player.reported_points for player in players],
        player_extras=[None] * len(players),
        boards=np.asarray([player.board.cards for player in players], np.uint8),
    ), rules_for)

    classes = [tuple(CLASS_LABELS[code] for code in row) for row in scored.class_codes.tolist()]
    values = list(map(tuple, scored.values.tolist()))
    foul = scored.foul.tolist()
    raw = list(map(tuple, scored.raw_royalties.tolist()))
    royalties = list(map(tuple, scored.royalties.tolist()))
    fantasyland = scored.fantasyland_cards.tolist()
    points = scored.points.tolist()
    pair_rows = list(map(tuple, scored.pair_rows.tolist()))
    pair_first, pair_second = scored.pair_first.tolist(), scored.pair_second.tolist()
    scoop, royalty = scored.pair_scoop.tolist(), scored.pair_royalty.tolist()
    pair_points, settled = scored.pair_points.tolist(), scored.pair_settled.tolist()
    output: list[ScoredHand] = []
    board = pair = 0
    for hand_index, hand in enumerate(hands):
        player_verdicts = tuple(
            PlayerVerdict(
                name=player.name, seat=player.seat,
                classes=classes[board + offset],  # type: ignore[arg-type]
                values=values[board + offset], foul=foul[board + offset],
                raw_royalties=raw[board + offset], royalties=royalties[board + offset],
                points=points[board + offset], fantasyland_cards=fantasyland[board + offset],
                reported_points=player.reported_points,
            )
            for offset, player in enumerate(hand.players)
        )
        pair_end = pair + int(scored.pair_counts[hand_index])
        pair_verdicts = tuple(
            PairVerdict(
                first=players[pair_first[index]].name, second=players[pair_second[index]].name,
                rows=pair_rows[index], scoop=scoop[index], royalty_points=royalty[index],
                points=pair_points[index], settled=settled[index],
            )
            for index in range(pair, pair_end)
        )
        output.append(ScoredHand(hand.hand_id, hand.site, scored.rule_names[hand_index],
                                 player_verdicts, pair_verdicts))
        board += len(hand.players)
        pair = pair_end
    return output


def score_output(scored: ScoredHand) -> dict:
    """The ``ofc score`` JSON object for one scored hand (docs/hand-format.md, plus row classes)."""
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
