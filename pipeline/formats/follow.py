"""Reading a file that is still being written: a part of it at a time, from a line on.

``ofc watch`` (:mod:`pipeline.ingest.watch`) reads a growing file in parts. A reader of a format
whose records span several lines (a poker-arena hand, the rows of a boards-CSV hand) must then
be told two things a whole-file read knows by itself: what it had seen before the part (the
sheet's header, the match a hand belongs to...), and whether the part ends where the file will
end. It answers with the line where the part's unfinished records start, and with what it knew
there, so the next part is read exactly as a whole-file read of the final file would read it.

A :class:`Follow` carries that between parts; its ``state`` is plain JSON (it is stored with the
file's offset, in the same transaction as the hands read up to there).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Follow", "FollowMode"]


class FollowMode(enum.Enum):
    """How far a part of a file may be taken as final."""

    OPEN = "open"
    """More may come: a record a later line could still change is left for the next part
    (a poker-arena hand whose every seat is scored is over, and taken)."""

    SETTLED = "settled"
    """The file has been quiet for a while: a last record that looks whole is taken too (the
    last hand of a boards CSV, whose end only the next hand's first row shows), but not one
    left inside an open quoted cell."""

    FINAL = "final"
    """The part ends where the file ends, as in a whole-file read: everything is taken."""


@dataclass(slots=True)
class Follow:
    """One part of a file for a reader that follows it.

    Set by the caller: ``mode``, ``start_line`` (the number of the part's first line) and
    ``state`` (what the reader returned with the previous part; ``{}`` at the start of a file).
    Set by the reader once it has run to the end of the part: ``resume_line``, the first line
    of the part it did not take (None when it took every line), ``state`` as it was at that
    line (or at the end of the part), and ``finished``.
    """

    mode: FollowMode
    start_line: int = 1
    state: dict[str, Any] = field(default_factory=dict)
    resume_line: int | None = None
    finished: bool = False

    @property
    def final(self) -> bool:
        """True when the part ends where the file ends (read as a whole-file read would)."""
        return self.mode is FollowMode.FINAL
