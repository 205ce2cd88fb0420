"""The prompt loop of ``ofc record`` (:mod:`pipeline.cli.record`): ask each board, check it,
save the hand, print its result and the running totals, and keep the session in the database.

Kept apart from the command's module so that registering ``ofc record`` imports none of this
(the live session and storage bring the rules core, the ingest and DuckDB).
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

import duckdb

from pipeline import read
from pipeline.cli import CommandError
from pipeline.ingest.errors import IngestError
from pipeline.live.entry import EntryRejected, check_entry
from pipeline.live.session import (
    LiveError,
    LiveHand,
    LiveSession,
    default_fantasyland_cards,
)
from pipeline.live.state import Draft, LiveState
from pipeline.live.storage import (
    LiveStoreError,
    StaleSession,
    delete_last,
    end_session,
    finish_match,
    resume,
    save_entry,
)
from pipeline.live.text import board_text, format_money, format_points
from pipeline.rules.settlement import match_cap_of

WRITER = "ofc record"
"""How the terminal is named in the live_sessions table."""

HELP = """\
Type each board as "top / middle / bottom", e.g. Qs Qh 5d / Kc Kd 4h 3s 2c / Ac Ad Ah 9s 9c
(10h, ah and A♥ work too). At any board prompt:
  fl      toggle Fantasyland for this player this hand
  back    re-enter the previous player's board
  undo    delete the last saved hand
  edit    re-enter the last saved hand (Enter keeps a board as it was)
  totals  show the running totals
  match   end this match (it is settled: points, the match cap, money) and start the next
  help    show this text
  quit    stop here; the session stays open for --resume (a hand not finished is not saved)
  end     end the session (it is no longer offered for resume)"""

COMMANDS = frozenset(("fl", "back", "undo", "edit", "totals", "match", "help", "quit", "exit",
                      "end"))


def same_person_note(name: str, stored: str, hands: int) -> str:
    """What a name matching a stored player means (said once, at the start)."""
    count = f"{hands:,} hand{'s' if hands != 1 else ''}"
    if name == stored:
        return f"Note: {name} is the same person as {stored} ({count}): the hands add up."
    return (f"Note: {name} looks like {stored} ({count}) but is spelled differently: their hands "
            f"are kept apart. Use --players with {stored!r} if it is the same person.")


def resume_state(database: Path, session_id: str, rules: str | None) -> LiveState:
    """The kept session ``session_id`` of ``database`` (``rules``: another rules file, or None),
    or a :class:`CommandError` saying why not and which sessions are open."""
    if not database.exists():
        raise CommandError(f"no database at {database}", code=2)
    try:
        return resume(database, session_id, rules)
    except LiveError as error:
        offered = read.live.open_live_sessions(database)
        known = ", ".join(item.session_id for item in offered) or "none"
        raise CommandError(f"{error} (open sessions: {known})", code=2) from error
    except (LiveStoreError, IngestError, duckdb.Error) as error:
        raise CommandError(f"session {session_id} cannot be resumed: {error}") from error


# --- output ------------------------------------------------------------------------------------


def totals_line(session: LiveSession) -> str:
    """``Totals after 2 hands: mara +19 (+1.90) · jun ...``."""
    count = len(session.hands)
    money = session.money
    parts = [
        f"{name} {format_points(points)} ({format_money(money[name])})"
        for name, points in session.totals.items()
    ]
    return f"Totals after {count} hand{'s' if count != 1 else ''}: " + " · ".join(parts)


def match_line(session: LiveSession, number: int | None = None) -> str | None:
    """A match's settlement (the match being played by default) in one line, or None while it
    has no hand: ``Match 1 (3 hands, match cap 30): mara +45 → +40.00 (+4.00) · ...``. A
    player's settled points are shown when the cap changed them."""
    number = session.match_number if number is None else number
    found = dict(session.settlements()).get(number)
    if found is None:
        return None
    hands = sum(1 for hand in session.hands if hand.match == number)
    cap = match_cap_of(session.rules)
    parts = []
    for player in found.players:
        text = f"{player.player} {format_points(player.points)}"
        if player.settled != player.points:
            text += f" → {player.settled_shown:+}"
        text += f" ({format_money(player.money)})"
        if player.capped:
            text += " pays the cap"
        parts.append(text)
    cap_text = f", match cap {cap}" if cap else ""
    return (f"Match {number} ({hands} hand{'s' if hands != 1 else ''}{cap_text}): "
            + " · ".join(parts))


def shows_matches(session: LiveSession) -> bool:
    """Whether the match lines say more than the totals: a match cap, or a second match."""
    return bool(match_cap_of(session.rules)) or session.match_number > 1


def next_hand_lines(session: LiveSession) -> list[str]:
    """The button and the Fantasyland marks for the next hand."""
    last = session.last_hand
    if last is None:
        button = f"button {session.button}"
    elif last.played_fantasyland:
        button = f"button stays with {session.button} (Fantasyland was played)"
    else:
        button = f"button moves to {session.button}"
    marks = ", ".join(f"{name} ({cards} cards)" for name, cards in session.fantasyland.items())
    return [
        f"Hand {session.hand_number}: {button}; {session.action_order()[0]} acts first.",
        f"Fantasyland this hand: {marks or 'nobody'}.",
    ]


def hand_lines(session: LiveSession, hand: LiveHand) -> list[str]:
    """The scored result of a hand, one line per fact."""
    lines = [f"Hand {hand.number} saved as {hand.hand_id}."]
    width = max(len(name) for name in session.players)
    for player in hand.scored.players:
        board = board_text(hand.boards[player.name])
        played = " [Fantasyland]" if player.name in hand.fantasyland else ""
        lines.append(f"  {player.name:<{width}}  {board}{played}")
        if player.foul:
            detail = f"FOUL: {hand.foul_reasons.get(player.name, 'foul')}"
        else:
            royalties = "+".join(str(value) for value in player.royalties)
            detail = f"royalties {royalties} = {sum(player.royalties)}"
        detail += f"; points {format_points(player.points)}"
        if player.fantasyland_cards:
            verb = "stays in" if player.name in hand.fantasyland else "enters"
            detail += f"; {verb} Fantasyland next hand ({player.fantasyland_cards} cards)"
        lines.append(f"  {'':<{width}}  {detail}")
    lines.append("  Pairs:")
    for pair in hand.scored.pairs:
        won = pair.rows.count(1)
        lost = pair.rows.count(-1)
        extra = [f"rows {won}-{lost}"]
        if pair.scoop:
            extra.append("scoop" if pair.scoop > 0 else "scooped")
        if pair.royalty_points:
            extra.append(f"royalties {pair.royalty_points:+d}")
        settled = format_points(pair.settled)
        if pair.settled != pair.points:
            settled += f" (capped from {format_points(pair.points)})"
        lines.append(f"    {pair.first} vs {pair.second}: {settled} for {pair.first} "
                     f"({', '.join(extra)})")
    if shows_matches(session):
        lines.append(match_line(session) or "")
    lines.append(totals_line(session))
    lines.extend(next_hand_lines(session))
    return lines


# --- the loop ----------------------------------------------------------------------------------


class _EndOfInput(Exception):
    """stdin is exhausted."""


class _Quit(Exception):
    """The user typed quit."""


class _End(Exception):
    """The user typed end."""


class _Restart(Exception):
    """Abandon the hand being entered (after undo or edit)."""


class RecordLoop:
    """The prompt loop over a session; reads answers from ``stdin``, writes to ``stdout``."""

    def __init__(self, session: LiveSession, database: Path, stdin: TextIO, stdout: TextIO,
                 state: LiveState | None = None, notes: list[str] | None = None):
        """Start from ``session`` (or a kept ``state``); hands are saved into ``database``."""
        self.state = state if state is not None else LiveState(session)
        self.database = database
        self.stdin = stdin
        self.stdout = stdout
        self.notes = notes or []

    @property
    def session(self) -> LiveSession:
        """The session as it stands."""
        return self.state.session

    def say(self, *lines: str) -> None:
        """Print lines."""
        for line in lines:
            self.stdout.write(line + "\n")
        self.stdout.flush()

    def ask(self, prompt: str) -> str:
        """One answer; raises _EndOfInput at the end of input."""
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            self.stdout.write("\n")
            raise _EndOfInput
        answer = line.strip()
        if not self.stdin.isatty():
            self.stdout.write(answer + "\n")
        return answer

    def run(self) -> None:
        """Hands until quit or end of input, then the final totals."""
        session = self.session
        rules = session.rules
        resumed = " (resumed)" if session.hands else ""
        self.say(
            f"Live session {session.session_id}{resumed}: {', '.join(session.players)} — "
            f"{session.variant.value}, rules {rules.name}, "
            + (f"{session.stake} per point." if session.stake else "no stake (points only)."),
            *self.notes, HELP, "",
        )
        if session.hands:
            self.say(totals_line(session))
        self.say(*next_hand_lines(session))
        try:
            while True:
                try:
                    self.enter_hand()
                except _Restart:
                    continue
        except (_EndOfInput, _Quit):
            self.say("", f"Session {self.session.session_id} is kept: go on with "
                         f"ofc record --db {self.database} --resume {self.session.session_id} "
                         "(or type end to end it).")
            self.say("Stopped. " + totals_line(self.session))
        except _End:
            try:
                end_session(self.database, self.state)
            except duckdb.Error as error:
                raise CommandError(f"session {self.session.session_id} could not be ended: "
                                   f"{error}") from error
            if shows_matches(self.session):
                self.say("", *filter(None, (match_line(self.session, number)
                                            for number, _settled in self.session.settlements())))
            self.say("", f"Session {self.session.session_id} ended. " + totals_line(self.session))

    # -- one hand --

    def enter_hand(self, editing: LiveHand | None = None) -> None:
        """Ask every board of a hand (or of the last hand, when editing) and save it."""
        session = self.session
        button = editing.button if editing else session.button
        order = session.action_order(button)
        marks = dict(editing.fantasyland if editing else session.fantasyland)
        entries: dict[str, str] = {}
        index = 0
        while index < len(order):
            name = order[index]
            label = name
            if name in marks:
                label += f" [Fantasyland, {marks[name]} cards]"
            if editing:
                label += f" [Enter keeps {board_text(editing.boards[name])}]"
            answer = self.ask(f"{label}> ")
            command = answer.lower()
            if command in COMMANDS:
                if command == "back":
                    if index == 0:
                        self.say("  already at the first player of this hand")
                    else:
                        index -= 1
                        entries.pop(order[index], None)
                    continue
                if command == "fl":
                    if name in marks:
                        del marks[name]
                        self.say(f"  {name}: not in Fantasyland this hand")
                    else:
                        marks[name] = (session.fantasyland.get(name)
                                       or default_fantasyland_cards(session.variant,
                                                                         session.rules))
                        self.say(f"  {name}: Fantasyland this hand ({marks[name]} cards)")
                    continue
                dropped = None
                if editing is not None:
                    dropped = f"the edit of hand {editing.number} is dropped"
                elif entries:
                    dropped = f"the boards entered for hand {session.hand_number} are dropped"
                self.command(command, dropped)
                continue
            if not answer and editing:
                answer = board_text(editing.boards[name])
            if not answer:
                self.say("  type the board (top / middle / bottom), or help")
                continue
            check = check_entry(session, {**entries, name: answer})
            problems = check.messages_for(name, include_missing=False)
            if problems:
                for message in problems:
                    self.say(f"  ✗ {message}")
                continue
            entries[name] = answer
            index += 1
        self.save(entries, marks, editing)

    def save(self, entries: dict[str, str], marks: dict[str, int],
             editing: LiveHand | None) -> None:
        """Score, store and show the hand (and keep the session's row up to date)."""
        state = self.state.with_draft(Draft(editing=editing is not None))
        try:
            state, hand = save_entry(self.database, state, entries, marks, WRITER)
        except EntryRejected as error:  # pragma: no cover - entries were checked one by one
            self.say(f"  ✗ {error}")
            return
        except (LiveStoreError, IngestError, StaleSession, duckdb.Error) as error:
            raise CommandError(f"hand {self.session.hand_number} could not be saved: "
                               f"{error}") from error
        self.state = state
        if editing:
            self.say("Hand edited and re-scored.")
        self.say(*hand_lines(state.session, hand), "")

    def end_match(self, dropped: str | None) -> None:
        """Settle the match being played and start the next; the hand being entered (if any)
        stays where it is and belongs to the next match."""
        session = self.session
        ended = session.match_number
        try:
            state = finish_match(self.database, self.state, WRITER)
        except LiveError as error:
            self.say(f"  {error}")
            return
        except (StaleSession, duckdb.Error) as error:
            raise CommandError(f"match {ended} could not be ended: {error}") from error
        self.state = state
        line = match_line(state.session, ended)
        self.say(f"Match {ended} ended and settled ({session.match_id}).", line or "",
                 f"Match {state.session.match_number} starts now ({state.session.match_id})"
                 + ("; the boards entered so far count in it." if dropped else "."))

    def command(self, command: str, dropped: str | None) -> None:
        """undo, edit, totals, help, quit; ``dropped`` says what unsaved entry they abandon.

        Raises _Restart (undo, edit) or _Quit (quit) when the hand being entered is abandoned.
        """
        if command == "help":
            self.say(HELP)
            return
        if command == "totals":
            if shows_matches(self.session):
                self.say(*filter(None, (match_line(self.session, number)
                                        for number, _settled in self.session.settlements())))
            self.say(totals_line(self.session))
            return
        if command == "match":
            self.end_match(dropped)
            return
        if command in ("quit", "exit", "end"):
            if dropped:
                self.say(f"  {dropped} (not saved)")
            raise _End if command == "end" else _Quit
        last = self.session.last_hand
        if last is None:
            self.say(f"  no saved hand to {command} yet")
            return
        if dropped:
            self.say(f"  {dropped}")
        if command == "undo":
            try:
                state, hand = delete_last(self.database, self.state.with_draft(Draft()), WRITER)
            except (IngestError, StaleSession, duckdb.Error) as error:
                raise CommandError(f"hand {last.hand_id} could not be deleted: {error}") from error
            self.state = state.with_draft(Draft())
            session = state.session
            self.say(f"Hand {hand.number} ({hand.hand_id}) deleted.", totals_line(session),
                     *next_hand_lines(session))
            raise _Restart
        self.say(f"Editing hand {last.number} ({last.hand_id}).")
        self.enter_hand(editing=last)
        raise _Restart
