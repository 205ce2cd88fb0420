"""The lake on disk: its manifest, the build lock, the staging area and the atomic commit.

A lake is a folder::

    LAKE/_lake.json                    the manifest: every live file of every table, the meta
    LAKE/<table>/site=<s>/month=<m>/   Parquet files of a partitioned table
    LAKE/<table>/                      Parquet files of an unpartitioned one
    LAKE/_staging/<commit>/            a commit being prepared (never read)
    LAKE/_lake.lock                    held by the one build or re-score writing the lake

A write prepares every new file under ``_staging/<commit>/<table>/...`` (the same layout as the
lake), then :meth:`Lake.commit` moves the files into place (a rename each, names are unique) and
replaces the manifest in one atomic rename: that rename is the commit. Readers only read the files
the manifest names, so they see the lake before or after a commit, never half of one. Files of a
killed writer (staged, or moved but never committed, or replaced but not yet deleted) are
removed by the next writer (:meth:`Lake.writing`), so the folders hold exactly the manifest's
files whenever no writer is running: any engine can read them as a plain Hive layout.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pipeline.lake.tables import LAKE_TABLES, PARTITIONED_TABLES
from pipeline.read.lake import FORMAT, MANIFEST_NAME, LakeUnreadable, is_lake, read_manifest

__all__ = [
    "LOCK_NAME",
    "MANIFEST_NAME",
    "STAGING_NAME",
    "Lake",
    "LakeBusy",
    "LakeError",
    "Manifest",
    "is_lake",
]

STAGING_NAME = "_staging"
LOCK_NAME = "_lake.lock"


class LakeError(Exception):
    """The lake cannot be used: not a lake, a damaged manifest, a folder that cannot be written."""


class LakeBusy(LakeError):
    """Another build or re-score is writing the lake."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """One committed state of the lake: the live files of each table (paths relative to the
    lake folder) and the lake's meta facts (``session_gap_minutes``, ``rescored_with``)."""

    version: int = 0
    tables: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    meta: Mapping[str, str] = field(default_factory=dict)
    committed_at: str | None = None

    def files(self, table: str) -> tuple[str, ...]:
        """The live files of ``table`` (relative paths)."""
        return tuple(self.tables.get(table, ()))

    def to_json(self) -> str:
        """The manifest as JSON text (read by :mod:`pipeline.read.lake`)."""
        return json.dumps({
            "format": FORMAT, "version": self.version, "committed_at": self.committed_at,
            "meta": dict(self.meta), "partitioned": sorted(PARTITIONED_TABLES),
            "tables": {name: list(self.files(name)) for name in LAKE_TABLES},
        }, indent=1)


class Lake:
    """A lake folder: reads its manifest, and (under :meth:`writing`) stages and commits."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().absolute()

    @property
    def manifest_path(self) -> Path:
        """Where the manifest is."""
        return self.root / MANIFEST_NAME

    def exists(self) -> bool:
        """Whether the folder is a lake (a build has committed at least once)."""
        return is_lake(self.root)

    def manifest(self) -> Manifest:
        """The committed state (version 0, no files, when nothing was committed yet).

        Raises :class:`LakeError` when the manifest cannot be read."""
        try:
            data = read_manifest(self.root)
        except LakeUnreadable as error:
            raise LakeError(str(error)) from error
        if data is None:
            return Manifest()
        try:
            return Manifest(
                version=int(data["version"]),
                tables={str(name): tuple(str(path) for path in paths)
                        for name, paths in data["tables"].items()},
                meta={str(key): str(value) for key, value in data.get("meta", {}).items()},
                committed_at=data.get("committed_at"),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise LakeError(f"{self.manifest_path} is not a lake manifest: {error}") from error

    def files(self, table: str, manifest: Manifest | None = None) -> list[Path]:
        """Absolute paths of the live files of ``table``."""
        manifest = manifest if manifest is not None else self.manifest()
        return [self.root / relative for relative in manifest.files(table)]

    # --- writing ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self) -> Iterator[Manifest]:
        """Hold the lake for writing: the lock, then leftovers of a killed writer removed.

        Yields the committed manifest. Raises :class:`LakeBusy` when another process holds the
        lake, :class:`LakeError` when the folder is not a lake and not empty (so a mistyped
        ``--lake`` never deletes anything) or cannot be written."""
        if self.root.exists() and not self.root.is_dir():
            raise LakeError(f"{self.root} is a file, not a lake folder")
        if self.root.is_dir() and not self.exists() and any(
            entry.name not in (STAGING_NAME, LOCK_NAME, *LAKE_TABLES)
            for entry in self.root.iterdir()
        ):
            raise LakeError(
                f"{self.root} is not empty and not a lake (no {MANIFEST_NAME}): choose a new or "
                "empty folder"
            )
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            handle = open(self.root / LOCK_NAME, "a+")  # noqa: SIM115 - closed below
        except OSError as error:
            raise LakeError(f"cannot write the lake {self.root}: {error.strerror or error}") from error
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as error:
                raise LakeBusy(
                    f"another ofc lake build or rescore is writing {self.root}; try again when "
                    "it is done"
                ) from error
            manifest = self.manifest()
            self.clean(manifest)
            yield manifest
            shutil.rmtree(self.root / STAGING_NAME, ignore_errors=True)
        finally:
            handle.close()  # releases the lock

    def clean(self, manifest: Manifest) -> int:
        """Remove the staging area and every Parquet file of a table folder that the manifest
        does not name (left by a killed writer). Returns the files removed."""
        shutil.rmtree(self.root / STAGING_NAME, ignore_errors=True)
        for leftover in self.root.glob(f"{MANIFEST_NAME}.tmp*"):
            leftover.unlink(missing_ok=True)
        removed = 0
        for table in LAKE_TABLES:
            folder = self.root / table
            if not folder.is_dir():
                continue
            live = {self.root / relative for relative in manifest.files(table)}
            for path in sorted(folder.rglob("*"), reverse=True):
                if path.is_file() and path not in live:
                    path.unlink()
                    removed += 1
                elif path.is_dir() and not any(path.iterdir()):
                    path.rmdir()
        return removed

    def staging(self) -> Path:
        """A new, empty staging folder for one commit (removed by :meth:`commit`)."""
        folder = self.root / STAGING_NAME / uuid.uuid4().hex[:12]
        folder.mkdir(parents=True)
        return folder

    def commit(
        self,
        base: Manifest,
        staging: Path,
        replaced: Mapping[str, Iterable[str]] | None = None,
        meta: Mapping[str, str | None] | None = None,
    ) -> Manifest:
        """Commit a staging folder: its Parquet files (``staging/<table>/...``) join their
        tables, the ``replaced`` files (relative paths, per table) leave them, ``meta`` is
        merged in (a key given None is removed). The manifest's atomic replacement is the commit; the replaced files and the
        staging folder are deleted after it. Returns the new manifest."""
        replaced = {table: set(paths) for table, paths in (replaced or {}).items()}
        tables = {table: [path for path in base.files(table)
                          if path not in replaced.get(table, set())]
                  for table in LAKE_TABLES}
        for table in LAKE_TABLES:
            source = staging / table
            if not source.is_dir():
                continue
            for path in sorted(source.rglob("*.parquet")):
                relative = f"{table}/{path.relative_to(source).as_posix()}"
                target = self.root / relative
                if target.exists():
                    raise LakeError(f"{target} already exists; staged file names must be new")
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, target)
                tables[table].append(relative)
        manifest = Manifest(
            version=base.version + 1,
            tables={table: tuple(paths) for table, paths in tables.items()},
            meta={key: value for key, value in {**base.meta, **(meta or {})}.items()
                  if value is not None},
            committed_at=datetime.now(UTC).replace(tzinfo=None).isoformat(timespec="seconds"),
        )
        self._write_manifest(manifest)
        for paths in replaced.values():
            for relative in paths:
                (self.root / relative).unlink(missing_ok=True)
        shutil.rmtree(staging, ignore_errors=True)
        return manifest

    def _write_manifest(self, manifest: Manifest) -> None:
        temporary = self.root / f"{MANIFEST_NAME}.tmp{os.getpid()}"
        with open(temporary, "w", encoding="utf-8") as stream:
            stream.write(manifest.to_json())
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, self.manifest_path)
        with contextlib.suppress(OSError):  # not every platform opens folders
            folder = os.open(self.root, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
