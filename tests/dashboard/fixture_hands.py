"""A small, known set of canonical hand records for the dashboard tests, and what they should show.

The records are dealt from seeded decks (boards arranged legally most of the time, some fouls),
plus hand-made Fantasyland hands. :func:`expected_totals` re-derives every number the pages show
straight from these records with the rules core (``evaluate_board`` / ``score_hand``) and plain
Python — never through the database — so the tests compare two independent computations.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pipeline.rules import STANDARD, Variant, evaluate_board, parse_cards, score_hand

MARA = "mara"
JUN = "jun"
SCRIPT = "<script>alert(1)</script>"
OBRIEN = "O'Brien \"the kid\""
RANKS = "23456789TJQKA"
SUITS = "cdhs"
ROWS = ("top", "middle", "bottom")

T1_START = datetime(2026, 3, 1, 20, 0, 0)
T1_SECOND_SESSION = datetime(2026, 3, 1, 23, 0, 0)
T2_START = datetime(2026, 3, 2, 19, 0, 0)

# mara's hand-made Fantasyland run at T1: QQ on top (entry), then trips on top (stay), then a
# Fantasyland board that does not stay.
ENTRY_BOARD = {"top": "Qh Qd 2c", "middle": "Ks Kd 3h 4s 5c", "bottom": "As Ac 7d 8h 9s"}
STAY_BOARD = {"top": "3s 3h 3d", "middle": "4c 5d 6h 7s 8c", "bottom": "2h 9h Jh Kh Ah"}
LEAVE_BOARD = {"top": "4h 4d 9c", "middle": "5s 5h Td Tc 2d", "bottom": "6c 6d 6s Js Jd"}


def _deck(rng: random.Random) -> list[str]:
    deck = [rank + suit for rank in RANKS for suit in SUITS]
    rng.shuffle(deck)
    return deck


def _board_rows(text_rows: dict[str, str]) -> dict[str, list[str]]:
    return {row: text_rows[row].split() for row in ROWS}


def _evaluate(rows: dict[str, list[str]], variant: str, in_fantasyland: bool = False):  # noqa: ANN202
    return evaluate_board(parse_cards(rows["top"]), parse_cards(rows["middle"]),
                          parse_cards(rows["bottom"]), Variant(variant), STANDARD, in_fantasyland)


def arrange(cards: list[str], rng: random.Random, variant: str, legal: bool) -> dict[str, list[str]]:
    """Split 13 cards into rows: a legal board when ``legal`` (if one is found), else random."""
    rows: dict[str, list[str]] = {}
    for _ in range(400 if legal else 1):
        shuffled = cards[:]
        rng.shuffle(shuffled)
        rows = {"top": shuffled[:3], "middle": shuffled[3:8], "bottom": shuffled[8:13]}
        if not legal or not _evaluate(rows, variant).foul:
            return rows
    return rows


def _streets(rows: dict[str, list[str]], variant: str, extra: list[str],
             rng: random.Random) -> list[dict]:
    """Street-by-street play that ends on ``rows``; pineapple discards come from ``extra``."""
    order = [(card, row) for row in ROWS for card in rows[row]]
    rng.shuffle(order)
    first, rest = order[:5], order[5:]
    streets = [{"dealt": [c for c, _ in first], "placed": _placed(first), "discarded": []}]
    if variant == "classic":
        for card, row in rest:
            streets.append({"dealt": [card], "placed": {row: [card]}, "discarded": []})
        return streets
    for index in range(4):
        pair = rest[index * 2: index * 2 + 2]
        discard = extra.pop()
        dealt = [pair[0][0], discard, pair[1][0]]
        streets.append({"dealt": dealt, "placed": _placed(pair), "discarded": [discard]})
    return streets


def _placed(cards: list[tuple[str, str]]) -> dict[str, list[str]]:
    placed: dict[str, list[str]] = {}
    for card, row in cards:
        placed.setdefault(row, []).append(card)
    return placed


def _settlement_order(players: list[dict], button: str) -> list[int]:
    by_seat = sorted(range(len(players)), key=lambda i: players[i]["seat"])
    start = (next(i for i, p in enumerate(by_seat) if players[p]["name"] == button) + 1) % len(by_seat)
    return by_seat[start:] + by_seat[:start]


def score_record(record: dict) -> dict[str, int]:
    """Each player's points in a record, by the rules core (settlement from left of the button)."""
    variant = record["variant"]
    evaluations = []
    for player in record["players"]:
        rows: dict[str, list[str]] = {row: [] for row in ROWS}
        for street in player["streets"]:
            for row, cards in street["placed"].items():
                rows[row].extend(cards)
        evaluations.append(_evaluate(rows, variant, player["fantasyland"]))
    order = _settlement_order(record["players"], record["button"])
    result = score_hand(evaluations, STANDARD, order)
    return {player["name"]: points
            for player, points in zip(record["players"], result.points, strict=True)}


def _hand(hand_id: str, table: str, started: datetime, variant: str, names: list[str],
          button: str, rng: random.Random, fixed: dict[str, tuple[dict, int]] | None = None,
          foul_chance: float = 0.25) -> dict:
    """One record: ``fixed`` maps a name to (board rows text, Fantasyland cards dealt)."""
    fixed = fixed or {}
    deck = _deck(rng)
    for rows_text, _ in fixed.values():
        for cards in rows_text.values():
            for card in cards.split():
                deck.remove(card)
    players = []
    for seat, name in enumerate(names, start=1):
        if name in fixed:
            rows_text, dealt_count = fixed[name]
            rows = _board_rows(rows_text)
            board_cards = [c for row in ROWS for c in rows[row]]
            discards = [deck.pop() for _ in range(dealt_count - 13)]
            dealt = board_cards + discards
            rng.shuffle(dealt)
            streets = [{"dealt": dealt, "placed": rows, "discarded": discards}]
            players.append({"name": name, "seat": seat, "fantasyland": True, "streets": streets})
            continue
        cards = [deck.pop() for _ in range(13)]
        rows = arrange(cards, rng, variant, legal=rng.random() >= foul_chance)
        extra = [deck.pop() for _ in range(4)] if variant != "classic" else []
        players.append({"name": name, "seat": seat, "fantasyland": False,
                        "streets": _streets(rows, variant, extra, rng)})
    record = {
        "hand_id": hand_id, "site": "fixture", "table": table,
        "started_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"), "variant": variant,
        "rules": "standard", "button": button, "players": players,
    }
    points = score_record(record)
    for player in players:
        player["reported_points"] = points[player["name"]]
    return record


def fixture_records() -> list[dict]:
    """47 hands: two sessions at T1 (3-handed pineapple), one at T2 (heads-up classic)."""
    rng = random.Random(20261101)
    records = []
    t1_names = [MARA, JUN, SCRIPT]
    for index in range(20):
        button = t1_names[index % 3]
        fixed = None
        if index == 5:
            fixed_entry = ENTRY_BOARD
            record = _hand(f"T1-{index:03}", "T1", T1_START + timedelta(minutes=2 * index),
                           "pineapple", t1_names, button, rng)
            # mara's board replaced by the hand-made QQ entry board (cards re-dealt around it)
            record = _hand_with_board(record, MARA, fixed_entry, rng)
            records.append(record)
            continue
        if index == 6:
            fixed = {MARA: (STAY_BOARD, 14)}
        if index == 7:
            fixed = {MARA: (LEAVE_BOARD, 14)}
        records.append(_hand(f"T1-{index:03}", "T1", T1_START + timedelta(minutes=2 * index),
                             "pineapple", t1_names, button, rng, fixed))
    for index in range(20, 35):
        button = t1_names[index % 3]
        started = T1_SECOND_SESSION + timedelta(minutes=3 * (index - 20))
        records.append(_hand(f"T1-{index:03}", "T1", started, "pineapple", t1_names, button, rng))
    for index in range(12):
        button = (MARA, OBRIEN)[index % 2]
        started = T2_START + timedelta(minutes=4 * index)
        records.append(_hand(f"T2-{index:03}", "T2", started, "classic", [MARA, OBRIEN], button,
                             rng, foul_chance=0.15))
    # one deliberate audit disagreement: jun's reported result is off by five points
    target = records[10]
    for player in target["players"]:
        if player["name"] == JUN:
            player["reported_points"] += 5
    return records


def _hand_with_board(record: dict, name: str, rows_text: dict[str, str],
                     rng: random.Random) -> dict:
    """Re-deal ``record`` so that ``name`` plays (normally) the given final board."""
    deck = _deck(rng)
    rows = _board_rows(rows_text)
    for row in ROWS:
        for card in rows[row]:
            deck.remove(card)
    players = []
    for player in record["players"]:
        if player["name"] == name:
            player_rows = rows
        else:
            player_rows = arrange([deck.pop() for _ in range(13)], rng, record["variant"], True)
        extra = [deck.pop() for _ in range(4)]
        players.append({"name": player["name"], "seat": player["seat"], "fantasyland": False,
                        "streets": _streets(player_rows, record["variant"], extra, rng)})
    new = dict(record, players=players)
    points = score_record(new)
    for player in players:
        player["reported_points"] = points[player["name"]]
    return new


def invalid_lines() -> list[str]:
    """Two records ingestion must quarantine: broken JSON, and a card dealt twice."""
    rng = random.Random(5)
    duplicate = _hand("BAD-001", "T1", T1_START - timedelta(days=1), "pineapple",
                      [MARA, JUN, SCRIPT], MARA, rng)
    first = duplicate["players"][0]["streets"][0]
    second = duplicate["players"][1]["streets"][0]
    old = second["dealt"][0]
    second["dealt"][0] = first["dealt"][0]
    for row, cards in second["placed"].items():
        second["placed"][row] = [first["dealt"][0] if c == old else c for c in cards]
    return ['{"hand_id": "BROKEN", "players": [', json.dumps(duplicate)]


def write_fixture(path) -> list[dict]:  # noqa: ANN001
    """Write the fixture records (and the two bad lines) as JSON Lines; return the records."""
    records = fixture_records()
    lines = [json.dumps(record, ensure_ascii=False) for record in records] + invalid_lines()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return records


# --- the numbers the pages should show, computed from the records -------------------------------


@dataclass
class PlayerTotals:
    """Everything the player pages show for one player, from the records alone."""

    hands: int = 0
    points: int = 0
    point_list: list[int] = field(default_factory=list)
    fouls: int = 0
    royalties: int = 0
    fl_hands: int = 0
    fl_entries: int = 0
    fl_stays: int = 0
    fl_points: int = 0
    matchups: int = 0
    scoops: int = 0
    royalty_by_row: dict[str, int] = field(default_factory=lambda: defaultdict(int))


@dataclass
class Expected:
    """Totals over the fixture records."""

    hands: int
    players: dict[str, PlayerTotals]
    net: dict[tuple[str, str], int]  # (player, opponent) -> points player won from opponent
    boards: int
    fouls: int
    disagreements: int


def expected_totals(records: list[dict]) -> Expected:
    """Recompute every number from the records with the rules core and plain Python."""
    players: dict[str, PlayerTotals] = defaultdict(PlayerTotals)
    net: dict[tuple[str, str], int] = defaultdict(int)
    boards = fouls = disagreements = 0
    for record in records:
        variant = record["variant"]
        evaluations = []
        for player in record["players"]:
            rows: dict[str, list[str]] = {row: [] for row in ROWS}
            for street in player["streets"]:
                for row, cards in street["placed"].items():
                    rows[row].extend(cards)
            evaluations.append(_evaluate(rows, variant, player["fantasyland"]))
        order = _settlement_order(record["players"], record["button"])
        result = score_hand(evaluations, STANDARD, order)
        for player, evaluation, points in zip(record["players"], evaluations, result.points,
                                              strict=True):
            totals = players[player["name"]]
            totals.hands += 1
            totals.points += points
            totals.point_list.append(points)
            totals.fouls += evaluation.foul
            totals.royalties += sum(evaluation.royalties)
            for row, value in zip(ROWS, evaluation.royalties, strict=True):
                totals.royalty_by_row[row] += value
            if player["fantasyland"]:
                totals.fl_hands += 1
                totals.fl_points += points
                totals.fl_stays += evaluation.fantasyland_next
            else:
                totals.fl_entries += evaluation.fantasyland_next
            boards += 1
            fouls += evaluation.foul
            disagreements += player.get("reported_points") not in (None, points)
        for matchup in result.matchups:
            first = record["players"][matchup.first]["name"]
            second = record["players"][matchup.second]["name"]
            net[(first, second)] += matchup.settled
            net[(second, first)] -= matchup.settled
            for name, scoop in ((first, matchup.outcome.scoop), (second, -matchup.outcome.scoop)):
                players[name].matchups += 1
                players[name].scoops += scoop > 0
    return Expected(len(records), dict(players), dict(net), boards, fouls, disagreements)
