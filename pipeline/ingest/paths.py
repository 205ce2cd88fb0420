"""Which files an ingest reads: paths, folders and globs expanded, and a file's content hash.

A folder is read recursively, but only for hand-history file names: those ending in one of the
format registry's suffixes (:data:`pipeline.formats.FILE_SUFFIXES`), optionally followed by a
compression suffix (:data:`pipeline.formats.COMPRESSED_SUFFIXES`). Hidden files and folders are
skipped. A file named explicitly is read whatever its name.
"""

from __future__ import annotations

import glob
import hashlib
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from pipeline.formats import COMPRESSED_SUFFIXES, FILE_SUFFIXES
from pipeline.ingest.errors import IngestError

__all__ = ["HashAhead", "expand_paths", "file_hash", "glob_paths", "is_hand_file"]


def file_hash(path: Path) -> str:
    """The SHA-256 of a file's bytes (a file already ingested completely is skipped)."""
    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


class HashAhead:
    """The files' content hashes (:func:`file_hash`), each computed in a thread one file ahead of
    its ingest: the first file's from the moment this is made (while the command opens and
    checks the database), the next one's while a file is ingested. Hashing reads and digests
    outside the interpreter's lock, so it overlaps that work (a 160 MB file: about 0.14 s).

    Only one file is hashed ahead: a folder's files are not all read before their turn. A file
    whose size or modification time is not what it was when it was hashed (a client still
    writing it) is hashed again when its turn comes, so the hash is of the bytes then, as
    without hashing ahead: an "unchanged" file is never one that changed meanwhile."""

    def __init__(self, files: Sequence[Path]) -> None:
        """Start hashing the first of ``files`` (their order of ingest)."""
        self._files = list(files)
        self._next = 0
        self._ahead: tuple[Path, threading.Thread, list[str | OSError | _Stamp]] | None = None
        self._start_next()

    def _start_next(self) -> None:
        if self._next >= len(self._files):
            self._ahead = None
            return
        path = self._files[self._next]
        self._next += 1
        outcome: list[str | OSError | _Stamp] = []

        def hash_file() -> None:
            try:
                before = _stamp(path)
                digest = file_hash(path)
                if _stamp(path) == before:  # else it changed while hashed: hashed again later
                    outcome.extend((digest, before))
            except OSError as error:  # raised again where the hash is asked for
                outcome.append(error)

        # A daemon: a command that stops early (a database it cannot use) does not wait for it.
        thread = threading.Thread(target=hash_file, name="ofc-file-hash", daemon=True)
        thread.start()
        self._ahead = (path, thread, outcome)

    def __call__(self, path: Path) -> str:
        """The content hash of ``path`` (raises its OSError), then the next file's hash starts;
        a path out of order is hashed here."""
        ahead = self._ahead
        if ahead is None or ahead[0] != path:
            return file_hash(path)
        _, thread, outcome = ahead
        thread.join()
        self._start_next()
        if outcome and isinstance(outcome[0], OSError):
            raise outcome[0]
        if len(outcome) == 2 and _stamp(path) == outcome[1]:
            return str(outcome[0])
        return file_hash(path)  # changed since (or while) it was hashed


_Stamp = tuple[int, int]
"""A file's size and modification time (nanoseconds)."""


def _stamp(path: Path) -> _Stamp:
    status = os.stat(path)
    return status.st_size, status.st_mtime_ns


def is_hand_file(path: Path) -> bool:
    """Whether a file found in a folder is read: not hidden, and named like a hand history."""
    name = path.name.lower()
    if name.startswith("."):
        return False
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name.endswith(FILE_SUFFIXES)


def glob_paths(pattern: str) -> list[Path]:
    """The paths a glob matches (``**`` for any number of folders), never following a link to a
    folder while recursing, so a symbolic link that points back up its own tree (a loop) cannot
    make it endless: links to files match, links to folders are not entered by ``**`` (as a
    folder given to ingest is read). Names starting with a dot match only a pattern part that
    starts with a dot, as in the shell."""
    path = Path(pattern).expanduser()
    parts = path.parts
    first_magic = next(index for index, part in enumerate(parts) if glob.has_magic(part))
    root = Path(*parts[:first_magic]) if first_magic else Path(".")
    rest = parts[first_magic:]
    if not rest or not root.is_dir():
        return []
    names_dots = any(part.startswith(".") for part in rest)
    matches = []
    for match in root.glob(str(Path(*rest))):
        relative = match.relative_to(root).parts
        if not names_dots and any(part.startswith(".") for part in relative):
            continue
        matches.append(match)
    return matches


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files to read: files as given, folders recursively (hand-history file names only,
    see :func:`is_hand_file`), globs expanded; each file once, absolute, in order.

    Raises :class:`IngestError` for a path that does not exist or a glob that matches nothing.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    found: list[Path] = []
    for item in paths:
        text = os.fspath(item)
        path = Path(text).expanduser()
        if path.is_dir():
            found.extend(
                sorted(
                    candidate
                    for candidate in path.rglob("*")
                    if candidate.is_file()
                    and is_hand_file(candidate)
                    and not any(part.startswith(".") for part in candidate.relative_to(path).parts)
                )
            )
        elif path.is_file():
            found.append(path)
        elif glob.has_magic(text):
            matches = sorted(glob_paths(text))
            files = [match for match in matches if match.is_file()]
            for match in matches:
                if match.is_dir():
                    files.extend(expand_paths([match]))
            if not files:
                raise IngestError(f"no files match {text}")
            found.extend(files)
        elif path.exists():
            raise IngestError(f"not a regular file or folder: {text}")
        else:
            raise IngestError(f"no such file or folder: {text}")
    unique: dict[Path, None] = {}
    for path in found:
        unique.setdefault(path.resolve(), None)
    return list(unique)
