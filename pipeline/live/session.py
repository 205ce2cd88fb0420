"""The live session state machine: who plays, the button, Fantasyland marks, the hands so far.

A :class:`LiveSession` is an immutable value: the players in clockwise seat order, the variant,
the rule set, the money value of a point, who has the button next, who is pre-marked for
Fantasyland next hand (with the card count) and the hands saved so far (running totals are
derived from them). Every step returns a new session:

* :func:`start_session` sets one up (raising :class:`LiveError` saying what is wrong);
* :func:`record_hand` checks the entry (:func:`pipeline.live.entry.check_entry`), builds the
  canonical record (site ``live``, hand id ``{session_id}-{number:04d}``, a final ``board`` per
  player), scores it with the rules core and advances: the button moves one seat left unless
  anyone played Fantasyland, and the next hand's Fantasyland marks come from the boards that
  qualify;
* a session is played in **matches** (docs/rules.md, section 9): the first match's id is the
  session's, every hand carries it as its ``match_id``; :func:`end_match` ends the open match
  (it is settled: :meth:`LiveSession.settlements`) and starts the next (id
  ``{session_id}-m{number}``), :func:`reopen_match` takes that back while the new match has
  no hand;
* :func:`edit_last_hand` re-enters the last hand (re-scored, same id and time);
  :func:`delete_last_hand` takes it back; :func:`restore_last_hand` and
  :func:`replace_last_hand` undo a delete or an edit;
* :func:`board_verdicts` judges the boards while they are entered (foul and why, royalties,
  Fantasyland next hand), before anything is saved;
* :func:`session_mapping` / :func:`session_from_mapping` write a session as plain JSON values
  and rebuild it (every hand re-scored from its boards), so a session survives a reload.

Nothing here touches the database (that is :mod:`pipeline.live.storage`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from pipeline.ingest.evaluate import ScoredHand, score_record
from pipeline.live.entry import BoardInput, EntryCheck, EntryRejected, check_entry
from pipeline.live.text import board_text
from pipeline.records.record import FinalBoard
from pipeline.records.rules_file import resolve_rules
from pipeline.records.validate import parse_hand
from pipeline.rules.board import BoardEvaluation, evaluate_board
from pipeline.rules.cards import card_text
from pipeline.rules.game import ROWS, Variant
from pipeline.rules.ruleset import (
    PRESET_NAMES,
    RulesError,
    RuleSet,
    preset,
    ruleset_from_mapping,
    ruleset_to_mapping,
    with_match_cap,
)
from pipeline.rules.settlement import (
    MatchTotal,
    Settlement,
    SettlementError,
    settle_under_rules,
    stake_value,
)

__all__ = [
    "LIVE_SITE",
    "Clock",
    "LiveError",
    "LiveHand",
    "LiveSession",
    "board_verdicts",
    "build_record",
    "default_fantasyland_cards",
    "delete_last_hand",
    "edit_last_hand",
    "end_match",
    "fantasyland_marks",
    "hand_from_mapping",
    "hand_id_for",
    "hand_mapping",
    "match_id_for",
    "next_button",
    "record_hand",
    "reopen_match",
    "replace_last_hand",
    "restore_last_hand",
    "session_from_mapping",
    "session_mapping",
    "start_session",
    "utc_now",
]

LIVE_SITE = "live"
"""The ``site`` of every hand recorded live."""

MAX_NAME_LENGTH = 40
"""Longest accepted player name (characters)."""

Clock = Callable[[], datetime]
"""Returns the current time; tests inject a fixed one."""


def utc_now() -> datetime:
    """The current time in UTC (the default clock)."""
    return datetime.now(UTC)


class LiveError(ValueError):
    """A session that cannot be set up or a step that cannot be taken; the message says why."""


@dataclass(frozen=True, slots=True)
class LiveHand:
    """One saved hand of a live session: the canonical record as stored and its score."""

    number: int
    record: dict[str, Any]
    scored: ScoredHand
    button: str
    fantasyland: Mapping[str, int]
    """Players who played this hand in Fantasyland, with the cards they were dealt."""
    boards: Mapping[str, FinalBoard]
    foul_reasons: Mapping[str, str] = field(default_factory=dict)
    """Why each fouled board fouls (``top (pair of queens) beats middle (...)``)."""
    match: int = 1
    """The number of the session's match the hand belongs to (1 for the first)."""

    @property
    def hand_id(self) -> str:
        """The hand's id (unique within site ``live``)."""
        return self.record["hand_id"]

    @property
    def started_at(self) -> str:
        """When the hand was first saved (ISO 8601, UTC)."""
        return self.record["started_at"]

    @property
    def points(self) -> dict[str, int]:
        """Each player's points for this hand."""
        return {player.name: player.points for player in self.scored.players}

    @property
    def played_fantasyland(self) -> bool:
        """True when anyone played this hand in Fantasyland (the button then stays)."""
        return bool(self.fantasyland)

    @property
    def fantasyland_next(self) -> dict[str, int]:
        """Players who play Fantasyland next hand, with the number of cards they are dealt."""
        return fantasyland_marks(self.scored)


@dataclass(frozen=True, slots=True)
class LiveSession:
    """A live game in progress; every step returns a new value."""

    session_id: str
    players: tuple[str, ...]
    """Names in clockwise seat order (seat 1, 2, ...)."""
    variant: Variant
    rules: RuleSet
    stake: Decimal
    """Money per point."""
    table: str
    button: str
    """Who has the button for the next hand."""
    fantasyland: Mapping[str, int] = field(default_factory=dict)
    """Pre-marks for the next hand: player -> Fantasyland cards."""
    hands: tuple[LiveHand, ...] = ()
    clock: Clock = field(default=utc_now, compare=False, repr=False)
    match_number: int = 1
    """The match being played: the next hand belongs to it."""

    @property
    def match_id(self) -> str:
        """The id of the match being played (:func:`match_id_for`)."""
        return match_id_for(self.session_id, self.match_number)

    @property
    def match_hands(self) -> tuple[LiveHand, ...]:
        """The saved hands of the match being played (none yet right after a match ended)."""
        return tuple(hand for hand in self.hands if hand.match == self.match_number)

    def settlements(self) -> tuple[tuple[int, Settlement], ...]:
        """Every match with a saved hand, settled (docs/rules.md, section 9): (match number,
        settlement) in order; the open match is settled as it stands (its running money).
        Each player's points over the match's hands, the rule set's match cap, the session's
        stake: :func:`pipeline.rules.settlement.settle_under_rules`, as ``ofc settle`` settles
        the stored hands."""
        numbers = sorted({hand.match for hand in self.hands})
        settled = []
        for number in numbers:
            totals = dict.fromkeys(self.players, 0)
            hands = dict.fromkeys(self.players, 0)
            for hand in self.hands:
                if hand.match == number:
                    for name, points in hand.points.items():
                        totals[name] += points
                        hands[name] += 1
            settled.append((number, settle_under_rules(
                [MatchTotal(name, hands[name], totals[name]) for name in self.players],
                self.rules, self.stake)))
        return tuple(settled)

    @property
    def hand_number(self) -> int:
        """The number of the next hand to record (1 for the first)."""
        return len(self.hands) + 1

    @property
    def last_hand(self) -> LiveHand | None:
        """The most recently saved hand, if any."""
        return self.hands[-1] if self.hands else None

    @property
    def totals(self) -> dict[str, int]:
        """Running points per player over every saved hand."""
        totals = dict.fromkeys(self.players, 0)
        for hand in self.hands:
            for name, points in hand.points.items():
                totals[name] += points
        return totals

    @property
    def money(self) -> dict[str, Decimal]:
        """Running money per player over the session: each match's settled money, summed (with
        no match cap, points × stake)."""
        money = dict.fromkeys(self.players, Decimal(0))
        for _number, settlement in self.settlements():
            for player in settlement.players:
                money[player.player] += player.money
        return money

    def action_order(self, button: str | None = None) -> tuple[str, ...]:
        """Players clockwise starting left of the button (the next hand's button by default)."""
        index = self.players.index(button or self.button)
        return self.players[index + 1:] + self.players[: index + 1]

    def fantasyland_cards(self, player: str) -> int:
        """Cards a player is pre-marked to get in Fantasyland next hand (0: not marked)."""
        return int(self.fantasyland.get(player, 0))


def default_fantasyland_cards(variant: Variant, rules: RuleSet) -> int:
    """Cards dealt in Fantasyland when a player is marked by hand (no qualifying board seen)."""
    fl = rules.fantasyland
    if variant is Variant.CLASSIC:
        return fl.cards_classic
    if variant is Variant.LOWBALL_PINEAPPLE:
        return fl.lowball_cards
    return fl.progressive_cards[0] if fl.progressive else fl.cards_pineapple


def _clean_players(players: Iterable[str], variant: Variant) -> tuple[str, ...]:
    names: list[str] = []
    seen: dict[str, str] = {}
    for raw in players:
        name = unicodedata.normalize("NFC", str(raw)).strip()
        if not name:
            raise LiveError("a player name is empty")
        if len(name) > MAX_NAME_LENGTH:
            raise LiveError(f"player name {name[:20]!r}... is longer than {MAX_NAME_LENGTH} characters")
        if any(unicodedata.category(char).startswith("C") for char in name):
            raise LiveError(f"player name {name!r} contains control characters")
        key = name.casefold()
        if key in seen:
            raise LiveError(f"player {name!r} is listed twice (also as {seen[key]!r})")
        seen[key] = name
        names.append(name)
    if not variant.min_players <= len(names) <= variant.max_players:
        raise LiveError(
            f"{variant.value} is played by {variant.min_players}-{variant.max_players} players, "
            f"got {len(names)}"
        )
    return tuple(names)


def _stake(value: Decimal | float | int | str | None, rules: RuleSet) -> Decimal:
    if value is None or value == "":
        value = rules.scoring.stake
    try:
        return stake_value(value)  # read and bounded as every settlement does
    except SettlementError as error:
        raise LiveError(f"{error} (money per point, e.g. 0.10)") from None


def start_session(
    players: Iterable[str],
    variant: Variant | str = Variant.PINEAPPLE,
    rules: RuleSet | str = "standard",
    stake: Decimal | float | int | str | None = None,
    button: str | None = None,
    session_id: str | None = None,
    table: str | None = None,
    fantasyland: Mapping[str, int] | None = None,
    clock: Clock = utc_now,
    match_cap: int | None = None,
) -> LiveSession:
    """Set up a live session; raises :class:`LiveError` saying what is wrong.

    ``players`` are in clockwise seat order. ``rules`` is a RuleSet, a preset name or a rules
    file; ``match_cap`` (points a player can lose over a match, > 0) puts a match cap on it
    (:func:`pipeline.rules.ruleset.with_match_cap`). ``stake`` (money per point) defaults to
    the rule set's. The button starts with the last
    player, so the first listed acts first. ``session_id`` defaults to ``live-YYYYMMDD-HHMMSS``
    from the clock and ``table`` to the session id (so each session is its own table).
    ``fantasyland`` pre-marks players for the first hand (player -> cards).
    """
    try:
        variant = variant if isinstance(variant, Variant) else Variant.parse(variant)
    except ValueError as error:
        raise LiveError(str(error)) from None
    if not isinstance(rules, RuleSet):
        try:
            rules = resolve_rules(rules)
        except RulesError as error:
            raise LiveError(str(error)) from None
    if match_cap:
        try:
            rules = with_match_cap(rules, int(match_cap))
        except (RulesError, ValueError, TypeError):
            raise LiveError(f"match cap {match_cap!r} must be a whole number of points from 0 to "
                            "1,000,000") from None
    names = _clean_players(players, variant)
    if button is None:
        button = names[-1]
    elif button not in names:
        raise LiveError(f"button {button!r} is not one of the players ({', '.join(names)})")
    if session_id is None:
        session_id = "live-" + _as_utc(clock()).strftime("%Y%m%d-%H%M%S")
    session_id = session_id.strip()
    if not session_id:
        raise LiveError("the session id is empty")
    marks = _marks(fantasyland or {}, names, variant, rules)
    return LiveSession(
        session_id=session_id, players=names, variant=variant, rules=rules,
        stake=_stake(stake, rules), table=(table or "").strip() or session_id, button=button,
        fantasyland=marks, clock=clock,
    )


def _marks(
    fantasyland: Mapping[str, int] | Collection[str], players: Sequence[str], variant: Variant,
    rules: RuleSet, previous: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """Normalise Fantasyland marks: names (cards from ``previous`` or the default) or name -> cards."""
    marks: dict[str, int] = {}
    default = default_fantasyland_cards(variant, rules)
    for name in fantasyland:
        if name not in players:
            raise LiveError(f"Fantasyland mark for {name!r}, who is not playing")
        cards = fantasyland[name] if isinstance(fantasyland, Mapping) else None
        if cards is None or cards is True:
            cards = (previous or {}).get(name) or default
        cards = int(cards)
        if cards <= 0:
            continue
        if not 13 <= cards <= 17:
            raise LiveError(f"Fantasyland for {name}: {cards} cards (13-17 are dealt)")
        marks[name] = cards
    return {name: marks[name] for name in players if name in marks}


def next_button(players: Sequence[str], button: str, played_fantasyland: bool) -> str:
    """Who has the button after a hand: one seat left, unless anyone played Fantasyland."""
    if played_fantasyland:
        return button
    return players[(players.index(button) + 1) % len(players)]


def fantasyland_marks(scored: ScoredHand) -> dict[str, int]:
    """Players who play Fantasyland next hand (entry or stay), with their card counts."""
    return {player.name: player.fantasyland_cards for player in scored.players
            if player.fantasyland_cards > 0}


def hand_id_for(session_id: str, number: int) -> str:
    """The id of hand ``number`` of a session: ``{session_id}-{number:04d}``."""
    return f"{session_id}-{number:04d}"


def match_id_for(session_id: str, number: int) -> str:
    """The id of match ``number`` of a session: the session's id for the first match,
    ``{session_id}-m{number}`` for the next ones."""
    return session_id if number == 1 else f"{session_id}-m{number}"


def end_match(session: LiveSession) -> LiveSession:
    """End the match being played (it is settled as it stands) and start the next one: the
    next hand belongs to it. Raises :class:`LiveError` when the match has no hand yet."""
    if not session.match_hands:
        raise LiveError(f"match {session.match_number} has no hand yet: nothing to end")
    return replace(session, match_number=session.match_number + 1)


def reopen_match(session: LiveSession) -> LiveSession:
    """Undo :func:`end_match`: the previous match goes on (only while the new one has no
    hand)."""
    if session.match_number == 1 or session.match_hands:
        raise LiveError(f"match {session.match_number} has started: the previous match cannot "
                        "go on")
    return replace(session, match_number=session.match_number - 1)


def _as_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _iso(moment: datetime) -> str:
    return _as_utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_record(
    session: LiveSession,
    boards: Mapping[str, FinalBoard],
    fantasyland: Mapping[str, int] | Collection[str],
    started_at: datetime | str,
    number: int | None = None,
    button: str | None = None,
    match: int | None = None,
) -> dict[str, Any]:
    """The canonical record (docs/hand-format.md) of a live hand: final boards, no streets,
    the ``match_id`` of its match (``match``, default the match being played)."""
    number = session.hand_number if number is None else number
    match = session.match_number if match is None else match
    return {
        "hand_id": hand_id_for(session.session_id, number),
        "site": LIVE_SITE,
        "table": session.table,
        "match_id": match_id_for(session.session_id, match),
        "started_at": started_at if isinstance(started_at, str) else _iso(started_at),
        "variant": session.variant.value,
        "rules": session.rules.name,
        "button": button or session.button,
        "players": [
            {
                "name": name,
                "seat": seat,
                "fantasyland": name in fantasyland,
                "board": {row.value: [card_text(card) for card in boards[name].row(row)]
                          for row in ROWS},
            }
            for seat, name in enumerate(session.players, start=1)
        ],
    }


def _make_hand(
    session: LiveSession,
    entries: Mapping[str, BoardInput],
    fantasyland: Mapping[str, int] | Collection[str] | None,
    number: int,
    button: str,
    started_at: datetime | str,
    previous_marks: Mapping[str, int],
    match: int,
) -> LiveHand:
    check = check_entry(session, entries)
    if not check.ok:
        raise EntryRejected(check)
    marks = _marks(previous_marks if fantasyland is None else fantasyland,
                   session.players, session.variant, session.rules, previous_marks)
    record = build_record(session, check.boards, marks, started_at, number, button, match)
    scored = score_record(parse_hand(record), session.rules)
    foul_reasons = {}
    for player in scored.players:
        if player.foul:
            board = check.boards[player.name]
            verdict = evaluate_board(board.top, board.middle, board.bottom, session.variant,
                                     session.rules, player.name in marks)
            foul_reasons[player.name] = verdict.foul_reason or "foul"
    return LiveHand(number=number, record=record, scored=scored, button=button,
                    fantasyland=marks, boards=dict(check.boards), foul_reasons=foul_reasons,
                    match=match)


def record_hand(
    session: LiveSession,
    entries: Mapping[str, BoardInput],
    fantasyland: Mapping[str, int] | Collection[str] | None = None,
) -> tuple[LiveSession, LiveHand]:
    """Save the next hand in the session (not yet in a database): check, build, score, advance.

    ``fantasyland`` says who plays this hand in Fantasyland (names, or name -> cards); by default
    the session's pre-marks. Raises :class:`EntryRejected` (with every problem) when any board is
    missing or wrong. Returns the advanced session and the new hand.
    """
    hand = _make_hand(session, entries, fantasyland, session.hand_number, session.button,
                      session.clock(), session.fantasyland, session.match_number)
    return _advance(session, session.hands + (hand,)), hand


def _advance(session: LiveSession, hands: tuple[LiveHand, ...]) -> LiveSession:
    last = hands[-1]
    return replace(
        session,
        hands=hands,
        button=next_button(session.players, last.button, last.played_fantasyland),
        fantasyland=last.fantasyland_next,
        match_number=max(session.match_number, last.match),
    )


def edit_last_hand(
    session: LiveSession,
    entries: Mapping[str, BoardInput],
    fantasyland: Mapping[str, int] | Collection[str] | None = None,
) -> tuple[LiveSession, LiveHand]:
    """Replace the last hand with corrected boards: same number, id, button and start time.

    The hand is re-scored, and the next hand's button and Fantasyland marks follow the edit.
    ``fantasyland`` defaults to the marks the hand was played with.
    """
    last = session.last_hand
    if last is None:
        raise LiveError("no hand to edit yet")
    hand = _make_hand(session, entries, fantasyland, last.number, last.button,
                      last.started_at, last.fantasyland, last.match)
    return _advance(session, session.hands[:-1] + (hand,)), hand


def delete_last_hand(session: LiveSession) -> tuple[LiveSession, LiveHand]:
    """Take back the last hand: the session is as it was before it (button, marks, totals)."""
    last = session.last_hand
    if last is None:
        raise LiveError("no hand to delete yet")
    return replace(session, hands=session.hands[:-1], button=last.button,
                   fantasyland=dict(last.fantasyland), match_number=last.match), last


def restore_last_hand(session: LiveSession, hand: LiveHand) -> LiveSession:
    """Undo :func:`delete_last_hand`: put the deleted hand back as the last one (same number)."""
    if hand.number != session.hand_number:
        raise LiveError(f"hand {hand.number} cannot come back: the session is at hand "
                        f"{session.hand_number}")
    return _advance(replace(session, match_number=hand.match), session.hands + (hand,))


def replace_last_hand(session: LiveSession, hand: LiveHand) -> LiveSession:
    """Undo :func:`edit_last_hand`: the last hand becomes ``hand`` (its earlier version) again."""
    last = session.last_hand
    if last is None or last.number != hand.number:
        raise LiveError(f"hand {hand.number} is not the last hand of the session")
    return _advance(session, session.hands[:-1] + (hand,))


def board_verdicts(
    session: LiveSession, check: EntryCheck, fantasyland: Collection[str] = (),
) -> dict[str, BoardEvaluation]:
    """The verdict on every complete, valid board of a hand being entered (nothing is saved).

    ``check`` is :func:`pipeline.live.entry.check_entry` of the entries; ``fantasyland`` names the
    players in Fantasyland this hand (it changes what a stay needs). Each verdict has the foul and
    its reason, the royalties and the Fantasyland cards earned for the next hand.
    """
    return {
        name: evaluate_board(board.top, board.middle, board.bottom, session.variant,
                             session.rules, name in fantasyland)
        for name, board in check.boards.items()
    }


MAPPING_FORMAT = 1
"""Version of :func:`session_mapping`'s layout."""


def session_mapping(session: LiveSession) -> dict[str, Any]:
    """The session as plain JSON values: setup, button and marks, every hand's boards.

    Scores are not kept: :func:`session_from_mapping` re-scores the boards, so the figures never
    disagree with the rules core.
    """
    return {
        "format": MAPPING_FORMAT,
        "session_id": session.session_id,
        "players": list(session.players),
        "variant": session.variant.value,
        "rules": session.rules.name,
        **({} if _is_preset(session.rules) else
           {"rules_definition": ruleset_to_mapping(session.rules)}),
        "stake": str(session.stake),
        "table": session.table,
        "button": session.button,
        "fantasyland": dict(session.fantasyland),
        "match": session.match_number,
        "hands": [hand_mapping(hand) for hand in session.hands],
    }


def _is_preset(rules: RuleSet) -> bool:
    """Whether a rule set is a preset as it stands (found again by its name alone)."""
    return rules.name in PRESET_NAMES and rules == preset(rules.name)


def hand_mapping(hand: LiveHand) -> dict[str, Any]:
    """One saved hand as plain JSON values (number, match, button, start time, marks, boards)."""
    return {
        "number": hand.number,
        "match": hand.match,
        "button": hand.button,
        "started_at": hand.started_at,
        "fantasyland": dict(hand.fantasyland),
        "boards": {name: board_text(board) for name, board in hand.boards.items()},
    }


def hand_from_mapping(session: LiveSession, mapping: Mapping[str, Any]) -> LiveHand:
    """Rebuild a hand of ``session`` from :func:`hand_mapping` (checked and re-scored)."""
    try:
        marks = {str(name): int(cards) for name, cards in dict(mapping["fantasyland"]).items()}
        return _make_hand(session, dict(mapping["boards"]), marks, int(mapping["number"]),
                          str(mapping["button"]), str(mapping["started_at"]), marks,
                          int(mapping.get("match", 1)))
    except (KeyError, TypeError, ValueError) as error:
        raise LiveError(f"a stored hand of session {session.session_id} cannot be read: "
                        f"{error}") from None


def session_from_mapping(
    mapping: Mapping[str, Any], rules: RuleSet | str | None = None, clock: Clock = utc_now,
) -> LiveSession:
    """Rebuild a session written by :func:`session_mapping`; raises :class:`LiveError`.

    ``rules`` overrides the stored rules. A session whose rules are not a preset keeps their
    definition (``rules_definition``) and is rebuilt with it; one kept before that needs
    ``rules`` when it used a rules file.
    """
    try:
        if int(mapping.get("format", 0)) != MAPPING_FORMAT:
            raise LiveError(f"unknown live session format {mapping.get('format')!r}")
        if rules is None and mapping.get("rules_definition"):
            try:
                rules = ruleset_from_mapping(mapping["rules_definition"],
                                             default_name=str(mapping["rules"]))
            except RulesError as error:
                raise LiveError(f"the stored live session's rules cannot be read: {error}"
                                ) from None
        hands = list(mapping.get("hands") or ())
        first = hands[0] if hands else None
        session = start_session(
            mapping["players"], mapping["variant"], rules or mapping["rules"], mapping["stake"],
            button=first["button"] if first else mapping["button"],
            session_id=mapping["session_id"], table=mapping["table"],
            fantasyland=dict(first["fantasyland"]) if first else dict(mapping["fantasyland"]),
            clock=clock,
        )
    except (KeyError, TypeError) as error:
        raise LiveError(f"the stored live session cannot be read: missing {error}") from None
    for entry in hands:
        hand = hand_from_mapping(session, entry)
        if hand.number != session.hand_number:
            raise LiveError(f"session {session.session_id}: hand {hand.number} stored where "
                            f"hand {session.hand_number} belongs")
        if hand.match < session.match_number or hand.match < 1:
            raise LiveError(f"session {session.session_id}: hand {hand.number} is in match "
                            f"{hand.match}, after a hand of match {session.match_number}")
        session = _advance(session, session.hands + (hand,))
    marks = _marks(dict(mapping.get("fantasyland") or {}), session.players, session.variant,
                   session.rules)
    button = str(mapping.get("button") or session.button)
    if button not in session.players:
        raise LiveError(f"session {session.session_id}: button {button!r} is not playing")
    try:
        match_number = int(mapping.get("match", session.match_number))
    except (TypeError, ValueError):
        raise LiveError(f"session {session.session_id}: match {mapping.get('match')!r} is not "
                        "a number") from None
    if match_number < session.match_number:
        raise LiveError(f"session {session.session_id}: match {match_number} is before the "
                        f"match of its last hand ({session.match_number})")
    return replace(session, button=button, fantasyland=marks, match_number=match_number)
