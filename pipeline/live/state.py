"""Everything a live session needs to survive a reload: the session, the hand being entered, the
last action (for undo) and the names already confirmed; as plain JSON values and back.

A :class:`LiveState` is what the ``live_sessions`` table keeps per session
(:mod:`pipeline.live.storage` writes it after every change). Pure: no database here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from pipeline.live.entry import entry_rows
from pipeline.live.session import (
    Clock,
    LiveError,
    LiveHand,
    LiveSession,
    hand_from_mapping,
    hand_mapping,
    session_from_mapping,
    session_mapping,
    utc_now,
)
from pipeline.live.text import board_text
from pipeline.rules.ruleset import RuleSet

__all__ = ["ActionKind", "Draft", "LastAction", "LiveState", "state_from_mapping", "state_mapping"]

STATE_FORMAT = 1
"""Version of :func:`state_mapping`'s layout."""


@dataclass(frozen=True, slots=True)
class Draft:
    """The hand being entered: each player's board as typed or tapped so far.

    ``marks`` names who plays it in Fantasyland (None: the session's pre-marks). ``editing`` is
    True while the last saved hand is being re-entered; ``put_aside`` then holds the boards of
    the new hand that were there before, so they come back after the edit.
    """

    boards: Mapping[str, str] = field(default_factory=dict)
    marks: tuple[str, ...] | None = None
    editing: bool = False
    put_aside: Mapping[str, str] = field(default_factory=dict)

    @property
    def cards(self) -> int:
        """How many card tokens are entered over every board (0: nothing to lose)."""
        return sum(len(tokens) for text in self.boards.values() for tokens in entry_rows(text))

    def mapping(self) -> dict[str, Any]:
        """As plain JSON values."""
        return {"boards": {name: text for name, text in self.boards.items() if text},
                "marks": None if self.marks is None else list(self.marks),
                "editing": self.editing,
                "put_aside": {name: text for name, text in self.put_aside.items() if text}}

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any] | None) -> Draft:
        """Read :meth:`mapping`'s output (an empty draft for None)."""
        if not mapping:
            return cls()
        marks = mapping.get("marks")
        return cls(boards={str(k): str(v) for k, v in dict(mapping.get("boards") or {}).items()},
                   marks=None if marks is None else tuple(str(name) for name in marks),
                   editing=bool(mapping.get("editing")),
                   put_aside={str(k): str(v)
                              for k, v in dict(mapping.get("put_aside") or {}).items()})


def boards_of(hand: LiveHand) -> dict[str, str]:
    """A saved hand's boards as entry texts (to put them back into the fields)."""
    return {name: board_text(board) for name, board in hand.boards.items()}


class ActionKind(StrEnum):
    """What the last action did (each can be undone)."""

    SAVED = "saved"
    EDITED = "edited"
    DELETED = "deleted"
    MATCH_ENDED = "match_ended"


@dataclass(frozen=True, slots=True)
class LastAction:
    """The last change to the saved hands, kept so that it can be undone.

    ``hand`` is the hand as it was before: the deleted hand, or the version an edit replaced
    (None for a save and for the end of a match). ``number`` is the hand's number, or the
    number of the match that ended. ``draft`` is the entry as it was before the action.
    """

    kind: ActionKind
    number: int
    hand: LiveHand | None = None
    draft: Draft = field(default_factory=Draft)

    @property
    def text(self) -> str:
        """``Hand 3 deleted`` / ``Hand 3 saved`` / ``Hand 3 changed`` / ``Match 1 ended``."""
        if self.kind is ActionKind.MATCH_ENDED:
            return f"Match {self.number} ended"
        verb = {ActionKind.SAVED: "saved", ActionKind.EDITED: "changed",
                ActionKind.DELETED: "deleted"}[self.kind]
        return f"Hand {self.number} {verb}"


@dataclass(frozen=True, slots=True)
class LiveState:
    """A live session as kept between page loads: session, draft, last action, confirmations.

    ``confirmed`` lists the names the user confirmed as stored players (asked once per
    session); ``revision`` is the stored row's revision this copy was read or written at (None
    before the first write).
    """

    session: LiveSession
    draft: Draft = field(default_factory=Draft)
    last_action: LastAction | None = None
    confirmed: tuple[str, ...] = ()
    revision: int | None = None

    def with_draft(self, draft: Draft) -> LiveState:
        """The same state with another draft."""
        return replace(self, draft=draft)


def state_mapping(state: LiveState) -> dict[str, Any]:
    """The state as plain JSON values (what the ``live_sessions.state`` column holds)."""
    action = state.last_action
    return {
        "format": STATE_FORMAT,
        "session": session_mapping(state.session),
        "draft": state.draft.mapping(),
        "last_action": None if action is None else {
            "kind": action.kind.value,
            "number": action.number,
            "hand": None if action.hand is None else hand_mapping(action.hand),
            "draft": action.draft.mapping(),
        },
        "confirmed": list(state.confirmed),
    }


def state_from_mapping(
    mapping: Mapping[str, Any], revision: int | None = None, rules: RuleSet | str | None = None,
    clock: Clock = utc_now,
) -> LiveState:
    """Rebuild :func:`state_mapping`'s output: every hand is checked and re-scored.

    Raises :class:`LiveError` when the stored state cannot be read.
    """
    if int(mapping.get("format", 0)) != STATE_FORMAT:
        raise LiveError(f"unknown live state format {mapping.get('format')!r}")
    session = session_from_mapping(mapping["session"], rules=rules, clock=clock)
    action_mapping = mapping.get("last_action")
    action = None
    if action_mapping:
        try:
            earlier = action_mapping.get("hand")
            action = LastAction(
                kind=ActionKind(action_mapping["kind"]),
                number=int(action_mapping["number"]),
                hand=None if earlier is None else hand_from_mapping(session, earlier),
                draft=Draft.from_mapping(action_mapping.get("draft")),
            )
        except (KeyError, ValueError, TypeError):
            action = None  # an unreadable undo step is dropped, the session is kept
    return LiveState(session=session, draft=Draft.from_mapping(mapping.get("draft")),
                     last_action=action,
                     confirmed=tuple(str(name) for name in mapping.get("confirmed") or ()),
                     revision=revision)

