"""Hand-made hands for the coaching-report tests, and what the report must say about them.

Every board comes from a small table of hand-checked boards (:data:`BOARDS`): for each one the
foul, the royalties per row and whether its top row qualifies for Fantasyland were worked out by
hand and are written next to it. The cards of the hero's boards (slot A, plus the spare slot D
for Fantasyland boards), of ``bo``'s boards (slot B) and of ``cy``'s boards (slot C) never
overlap, so any combination makes a legal deal.

:func:`expected_rows` re-derives every board's facts and every pair's points from the records
alone (the rules core's ``score_hand`` settles each hand; the hand-written facts are checked
against the rules core too), never through the database or the report. The tests then compute
each statistic of the report from these rows with plain Python.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pipeline.rules import STANDARD, Variant, evaluate_board, parse_cards, score_hand

HERO = "ana"
ALIAS = "ana_alt"
BO = "bo"
CY = "cy"
DEE = "dee"
SCRIPT = "<script>alert(1)</script>"
ROWS = ("top", "middle", "bottom")
SITE = "handmade"

RANKS = "23456789TJQKA"
DECK = [rank + suit for rank in RANKS for suit in "cdhs"]


@dataclass(frozen=True)
class Board:
    """A hand-checked board: rows, and its facts worked out by hand."""

    top: str
    middle: str
    bottom: str
    foul: bool
    royalties: tuple[int, int, int]  # collected (zero when fouled)
    qualifying_top: bool  # QQ+ or trips on top (the standard Fantasyland entry)
    stays: bool = False  # in Fantasyland: earns another one

    def rows(self) -> dict[str, list[str]]:
        """Row name -> cards."""
        return {"top": self.top.split(), "middle": self.middle.split(),
                "bottom": self.bottom.split()}

    def cards(self) -> list[str]:
        """All 13 cards."""
        return [card for row in ROWS for card in self.rows()[row]]


BOARDS: dict[str, Board] = {
    # slot A (the hero): Qh Qd Qc Ks Kd As Ac 2c 3h 4s 5c 7d 9s
    # QQ on top (7), KK middle, AA bottom: legal, earns Fantasyland
    "E": Board("Qh Qd 2c", "Ks Kd 3h 4s 5c", "As Ac Qc 7d 9s", False, (7, 0, 0), True),
    # KK on top over a QQ middle: foul while chasing Fantasyland
    "F": Board("Ks Kd 2c", "Qh Qd 3h 4s 5c", "As Ac Qc 7d 9s", True, (0, 0, 0), True),
    # 4-high top, QQ middle, AAKK bottom: legal, nothing
    "P": Board("2c 3h 4s", "Qh Qd 5c 7d 9s", "As Ac Ks Kd Qc", False, (0, 0, 0), False),
    # 9-high top, KKQQ middle over an AA bottom: foul, not chasing
    "f": Board("2c 7d 9s", "Qh Qd Ks Kd 3h", "As Ac Qc 4s 5c", True, (0, 0, 0), False),
    # a lone king on top (K-high), QQ middle, AA bottom: legal; chasing only when the streets
    # show the king on top with the first five cards
    "K": Board("Ks 2c 3h", "Qh Qd 4s 5c 7d", "As Ac Kd Qc 9s", False, (0, 0, 0), False),
    # Fantasyland boards of the hero (slots A and D)
    # QQQ on top (20), 6-T straight middle (4), heart flush bottom (4): stays
    "S": Board("Qh Qd Qc", "6s 7s 8s 9d Ts", "3h 8h Th Jh Ah", False, (20, 4, 4), True, True),
    # KK on top (8), AA middle, QQQ99 full house bottom (6): legal, does not stay
    "L": Board("Kd Ks 2c", "Ac As 4s 5c 7d", "Qh Qd Qc 9s 9d", False, (8, 0, 6), True, False),
    # slot B (bo, and the script-named player in classic): 2d 3d 4d 5d 6d Jc Js 7h Kc Kh Tc Td 8c
    # JJ on top (6), KKTT middle, straight flush bottom (15)
    "B_SF": Board("Jc Js 7h", "Kc Kh Tc Td 8c", "2d 3d 4d 5d 6d", False, (6, 0, 15), False),
    # T-high top, KKJJ middle, straight flush bottom (15)
    "B_PLAIN": Board("7h 8c Tc", "Jc Js Kc Kh Td", "2d 3d 4d 5d 6d", False, (0, 0, 15), False),
    # 7-high top, JJ middle, KKTT bottom: legal, nothing
    "B_LOW": Board("2d 3d 7h", "Jc Js 4d 5d 6d", "Kc Kh Tc Td 8c", False, (0, 0, 0), False),
    # KK on top over a JJ middle: foul while chasing
    "B_FOUL": Board("Kc Kh Tc", "Jc Js 7h 8c Td", "2d 3d 4d 5d 6d", True, (0, 0, 0), True),
    # slot C (cy and dee): 2s 3s 5s Qs 7c 9c Ad 3c 2h 4h 5h 6h 9h
    # 5-high top, A-high middle, heart flush bottom (4)
    "C_FLUSH": Board("2s 3s 5s", "Qs 7c 9c Ad 3c", "2h 4h 5h 6h 9h", False, (0, 0, 4), False),
    # 99 on top over an A-high middle: foul, not chasing
    "C_FOUL": Board("9c 9h 2s", "3s 5s Qs 7c Ad", "2h 3c 4h 5h 6h", True, (0, 0, 0), False),
}
FANTASYLAND_BOARDS = ("S", "L")

# the hero's boards, session by session (12 hands each); E is followed by a Fantasyland hand,
# S (a stay) by another. Fouls thin out: the hero improves.
PINEAPPLE_SESSIONS = (
    ("FfPFELfPKFPf", HERO),
    ("FPfPESLPKfPP", ALIAS),   # played under the alias
    ("PFPKELPPfPKP", HERO),    # dee replaces cy for the first six hands
    ("PPKPESSLPfPP", HERO),
    ("PKPPELPKPPPP", HERO),    # recorded as final boards only (no streets)
    ("PPKPPESLPKPP", HERO),
)
CLASSIC_SESSIONS = ("PfPKPPFPPELP", "PPKPPPfPPPPP")
BO_CYCLE = ("B_SF", "B_PLAIN", "B_LOW", "B_FOUL")
CY_CYCLE = ("C_FLUSH", "C_FLUSH", "C_FOUL")
SCRIPT_CYCLE = ("B_LOW", "B_SF", "B_PLAIN", "B_LOW", "B_FOUL")
FIRST_DAY = datetime(2026, 1, 5, 20, 0, 0)
BOARD_ONLY_SESSION = 4  # index in PINEAPPLE_SESSIONS


def _streets(board: Board, variant: str, spare: list[str], fantasyland: bool) -> list[dict]:
    """Street-by-street play ending on ``board``: the top row goes first (with two middle cards)."""
    rows = board.rows()
    if fantasyland:
        discards = [spare.pop(0)] if variant == "pineapple" else []
        return [{"dealt": board.cards() + discards, "placed": rows, "discarded": discards}]
    order = ([(c, "top") for c in rows["top"]] + [(c, "middle") for c in rows["middle"]]
             + [(c, "bottom") for c in rows["bottom"]])
    first, rest = order[:5], order[5:]
    streets = [{"dealt": [c for c, _ in first], "placed": _placed(first), "discarded": []}]
    if variant == "classic":
        for card, row in rest:
            streets.append({"dealt": [card], "placed": {row: [card]}, "discarded": []})
        return streets
    for index in range(4):
        pair = rest[index * 2: index * 2 + 2]
        discard = spare.pop(0)
        streets.append({"dealt": [pair[0][0], pair[1][0], discard], "placed": _placed(pair),
                        "discarded": [discard]})
    return streets


def _placed(cards: list[tuple[str, str]]) -> dict[str, list[str]]:
    placed: dict[str, list[str]] = {}
    for card, row in cards:
        placed.setdefault(row, []).append(card)
    return placed


def _record(hand_id: str, table: str, started: datetime, variant: str,
            seats: list[tuple[str, str, bool]], button: str, with_streets: bool) -> dict:
    """One record: ``seats`` lists (name, board code, in Fantasyland) clockwise from seat 1."""
    used = {card for _, code, _ in seats for card in BOARDS[code].cards()}
    assert len(used) == 13 * len(seats), f"{hand_id}: boards overlap"
    spare = [card for card in DECK if card not in used]
    players = []
    for seat, (name, code, fantasyland) in enumerate(seats, start=1):
        board = BOARDS[code]
        player: dict = {"name": name, "seat": seat, "fantasyland": fantasyland}
        if with_streets:
            player["streets"] = _streets(board, variant, spare, fantasyland)
        else:
            player["board"] = board.rows()
        players.append(player)
    return {"hand_id": hand_id, "site": SITE, "table": table,
            "started_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"), "variant": variant,
            "rules": "standard", "button": button, "players": players}


def records() -> list[dict]:
    """The hands: six 3-handed pineapple sessions and two heads-up classic sessions."""
    result = []
    for number, (pattern, hero) in enumerate(PINEAPPLE_SESSIONS):
        start = FIRST_DAY + timedelta(days=number)
        for index, code in enumerate(pattern):
            third = DEE if number == 2 and index < 6 else CY
            names = [hero, BO, third]
            seats = [(hero, code, code in FANTASYLAND_BOARDS),
                     (BO, BO_CYCLE[(number + index) % len(BO_CYCLE)], False),
                     (third, CY_CYCLE[(number * 2 + index) % len(CY_CYCLE)], False)]
            result.append(_record(
                f"P{number + 1}-{index + 1:02}", "P1", start + timedelta(minutes=3 * index),
                "pineapple", seats, names[index % 3], number != BOARD_ONLY_SESSION))
    for number, pattern in enumerate(CLASSIC_SESSIONS):
        start = FIRST_DAY + timedelta(days=len(PINEAPPLE_SESSIONS) + number)
        for index, code in enumerate(pattern):
            seats = [(HERO, code, code in FANTASYLAND_BOARDS),
                     (SCRIPT, SCRIPT_CYCLE[(number + index) % len(SCRIPT_CYCLE)], False)]
            result.append(_record(
                f"C{number + 1}-{index + 1:02}", "C1", start + timedelta(minutes=4 * index),
                "classic", seats, (HERO, SCRIPT)[index % 2], True))
    return result


# --- what the report must find, from the records alone -----------------------------------------


@dataclass
class Row:
    """One board of one hand, as the test derives it."""

    hand_id: str
    player: str
    variant: str
    table: str
    day: str
    started: datetime
    player_count: int
    position: int
    fantasyland: bool
    code: str
    foul: bool
    royalties: tuple[int, int, int]
    fantasyland_next: bool
    chasing: bool
    has_streets: bool
    points: int


@dataclass
class Pair:
    """One ordered pairing (player's side)."""

    hand_id: str
    variant: str
    player: str
    opponent: str
    settled: int
    scoop: int


@dataclass
class Expected:
    """Every board and pairing of the hands."""

    rows: list[Row] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)


def _board_code(player: dict) -> str:
    if "board" in player:
        rows = {row: " ".join(player["board"][row]) for row in ROWS}
    else:
        cards: dict[str, list[str]] = {row: [] for row in ROWS}
        for street in player["streets"]:
            for row, placed in street["placed"].items():
                cards[row].extend(placed)
        rows = {row: " ".join(cards[row]) for row in ROWS}
    for code, board in BOARDS.items():
        if (board.top, board.middle, board.bottom) == (rows["top"], rows["middle"], rows["bottom"]):
            return code
    raise AssertionError(f"unknown board {rows}")


def expected_rows(hand_records: list[dict]) -> Expected:
    """Each board's facts (hand-checked table) and points (rules core), from the records."""
    expected = Expected()
    for record in hand_records:
        players = record["players"]
        count = len(players)
        codes = [_board_code(player) for player in players]
        evaluations = []
        for player, code in zip(players, codes, strict=True):
            board = BOARDS[code]
            rows = board.rows()
            evaluation = evaluate_board(parse_cards(rows["top"]), parse_cards(rows["middle"]),
                                        parse_cards(rows["bottom"]), Variant(record["variant"]),
                                        STANDARD, player["fantasyland"])
            # the hand-worked facts agree with the rules core
            assert evaluation.foul == board.foul, code
            assert tuple(evaluation.royalties) == board.royalties, code
            if player["fantasyland"]:
                assert evaluation.fantasyland_next == board.stays, code
            else:
                assert evaluation.fantasyland_next == (board.qualifying_top and not board.foul)
            evaluations.append(evaluation)
        button_seat = next(p["seat"] for p in players if p["name"] == record["button"])
        by_seat = sorted(range(count), key=lambda i: players[i]["seat"])
        start = (by_seat.index(next(i for i in by_seat if players[i]["seat"] == button_seat))
                 + 1) % count
        order = by_seat[start:] + by_seat[:start]
        score = score_hand(evaluations, STANDARD, order)
        started = datetime.strptime(record["started_at"], "%Y-%m-%dT%H:%M:%SZ")
        for index, (player, code, evaluation) in enumerate(zip(players, codes, evaluations,
                                                                strict=True)):
            board = BOARDS[code]
            expected.rows.append(Row(
                hand_id=record["hand_id"], player=player["name"], variant=record["variant"],
                table=record["table"], day=record["started_at"][:10], started=started,
                player_count=count, position=order.index(index),
                fantasyland=player["fantasyland"], code=code, foul=board.foul,
                royalties=board.royalties,
                fantasyland_next=evaluation.fantasyland_next,
                # the top is full after the first street here: no live draw is ever left, so
                # a hand chases Fantasyland when its final top qualifies
                chasing=not player["fantasyland"] and board.qualifying_top,
                has_streets="streets" in player, points=score.points[index],
            ))
        for matchup in score.matchups:
            first, second = players[matchup.first]["name"], players[matchup.second]["name"]
            expected.pairs.append(Pair(record["hand_id"], record["variant"], first, second,
                                       matchup.settled, matchup.outcome.scoop))
            expected.pairs.append(Pair(record["hand_id"], record["variant"], second, first,
                                       -matchup.settled, -matchup.outcome.scoop))
    return expected


# --- plain statistics the tests use (written independently of pipeline.report) -----------------


def mean(values: list[float]) -> float:
    """Arithmetic mean."""
    return sum(values) / len(values)


def standard_error(values: list[float]) -> float:
    """Sample standard deviation over sqrt(n)."""
    centre = mean(values)
    return math.sqrt(sum((v - centre) ** 2 for v in values) / (len(values) - 1) / len(values))


def group(rows: list, key) -> dict:  # noqa: ANN001
    """Rows grouped by ``key(row)``."""
    grouped: dict = defaultdict(list)
    for row in rows:
        grouped[key(row)].append(row)
    return dict(grouped)
