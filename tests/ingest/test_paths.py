"""Which files an ingest reads, and the one list of hand-history file names behind it: each
format in the registry declares its suffixes; folder expansion, the dashboard's upload widget
and ``ofc ingest --help`` all derive from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.formats import COMPRESSED_SUFFIXES, FILE_SUFFIXES, FORMATS
from pipeline.ingest.errors import IngestError
from pipeline.ingest.paths import expand_paths


def _hand_file_names() -> list[str]:
    """A file name for every registered suffix, plain and with every compression suffix."""
    return [
        f"hands{suffix}{compressed}"
        for suffix in FILE_SUFFIXES
        for compressed in ("", *COMPRESSED_SUFFIXES)
    ]


def test_every_format_declares_its_suffixes() -> None:
    for name, spec in FORMATS.items():
        assert spec.suffixes, name
        for suffix in spec.suffixes:
            assert suffix.startswith(".") and suffix == suffix.lower(), (name, suffix)
    assert set(FILE_SUFFIXES) == {suffix for spec in FORMATS.values() for suffix in spec.suffixes}
    assert len(FILE_SUFFIXES) == len(set(FILE_SUFFIXES))
    # What folders gave before the registry owned the list (ndjson included) still counts.
    assert {".jsonl", ".ndjson", ".json", ".csv", ".log", ".txt"} <= set(FILE_SUFFIXES)
    assert {".gz", ".gzip"} <= set(COMPRESSED_SUFFIXES)


def test_a_folder_gives_every_registered_suffix_and_nothing_else(tmp_path: Path) -> None:
    names = _hand_file_names()
    for index, name in enumerate(names):
        folder = tmp_path / ("nested" if index % 2 else "")
        folder.mkdir(exist_ok=True)
        (folder / name).write_text("x\n", encoding="utf-8")
    (tmp_path / "UPPER.JSONL").write_text("x\n", encoding="utf-8")  # names match without case
    for ignored in ("notes.md", "hands.jsonl.bak", ".hidden.jsonl", "archive.zip"):
        (tmp_path / ignored).write_text("x\n", encoding="utf-8")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "hands.jsonl").write_text("x\n", encoding="utf-8")

    found = sorted(path.name for path in expand_paths([tmp_path]))

    assert found == sorted([*names, "UPPER.JSONL"])


def test_a_file_named_explicitly_is_read_whatever_its_name(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("x\n", encoding="utf-8")
    assert expand_paths([path]) == [path.resolve()]
    with pytest.raises(IngestError, match="no such file or folder"):
        expand_paths([tmp_path / "missing.jsonl"])
    with pytest.raises(IngestError, match="no files match"):
        expand_paths([str(tmp_path / "*.csv")])


def test_the_dashboard_offers_every_registered_suffix_for_upload() -> None:
    from dashboard.components import UPLOAD_TYPES

    offered = {f".{kind}" for kind in UPLOAD_TYPES}
    assert offered == {*FILE_SUFFIXES, *COMPRESSED_SUFFIXES}
    for name in _hand_file_names():  # the upload widget judges a name by its last suffix
        assert Path(name).suffix in offered, name


def test_ingest_help_names_every_format_and_suffix(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # argparse would wrap lines at hyphens
    with pytest.raises(SystemExit):
        main(["ingest", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name, spec in FORMATS.items():
        assert f"{name} ({', '.join(spec.suffixes)}): {' '.join(spec.description.split())}" in text
    compressed = " or ".join(COMPRESSED_SUFFIXES)
    assert f"files ending in {', '.join(FILE_SUFFIXES)}, optionally {compressed})" in text



# --- the files' hashes, one file ahead --------------------------------------------------------


def test_each_file_is_hashed_ahead_while_the_caller_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first file's hash starts when the hashes are made, and the next one's as soon as a
    file's hash is taken (while that file is ingested), never two ahead: each hash here waits
    until the caller has seen it start, which a hash computed only when asked for never does.
    The digests are the files' own."""
    import threading

    from pipeline.ingest import paths

    files = [tmp_path / f"hands{number}.jsonl" for number in range(3)]
    for number, path in enumerate(files):
        path.write_bytes(b'{"hand_id": "%d"}\n' % number * 5000)
    plain_hash = paths.file_hash
    started = {path: threading.Event() for path in files}
    seen = {path: threading.Event() for path in files}

    def hash_once_seen(path: Path) -> str:
        started[path].set()
        assert seen[path].wait(10), f"{path.name} was hashed before its turn"
        return plain_hash(path)

    monkeypatch.setattr(paths, "file_hash", hash_once_seen)
    hashes = paths.HashAhead(files)
    for number, path in enumerate(files):
        assert started[path].wait(10), f"{path.name} was not being hashed ahead"
        assert not any(started[later].is_set() for later in files[number + 1:])  # one ahead
        seen[path].set()
        assert hashes(path) == plain_hash(path)


def test_a_file_that_cannot_be_hashed_raises_where_its_hash_is_asked_for(
    tmp_path: Path,
) -> None:
    """A file gone before its turn raises its OSError when its hash is taken (the ingest then
    reports it unreadable), and the next file is still hashed; a path out of order is hashed
    when asked for."""
    from pipeline.ingest.paths import HashAhead, file_hash

    gone, present = tmp_path / "gone.jsonl", tmp_path / "present.jsonl"
    present.write_bytes(b"{}\n")
    hashes = HashAhead([gone, present])
    with pytest.raises(FileNotFoundError):
        hashes(gone)
    assert hashes(present) == file_hash(present)
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"[]\n")
    assert hashes(other) == file_hash(other)


def test_a_file_changed_after_it_was_hashed_ahead_is_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file appended to (a client still writing it) between its hash ahead and its turn, or
    rewritten at the same size, gets the hash of its bytes at its turn: an ingest never calls
    it unchanged on the strength of an older hash."""
    import os
    import threading
    import time

    from pipeline.ingest import paths

    first, second, third = (tmp_path / f"{name}.jsonl" for name in ("first", "second", "third"))
    first.write_bytes(b"{}\n")
    second.write_bytes(b'{"hand_id": "1"}\n')
    third.write_bytes(b'{"hand_id": "3"}\n')
    plain_hash = paths.file_hash
    hashed = {path: threading.Event() for path in (first, second, third)}

    def recording_hash(path: Path) -> str:
        digest = plain_hash(path)
        hashed[path].set()
        return digest

    def hash_ahead_done(path: Path) -> None:
        """Until the file's hash ahead has been computed and its thread has ended."""
        assert hashed[path].wait(10)
        deadline = time.monotonic() + 10
        while any(thread.name == "ofc-file-hash" and thread.is_alive()
                  for thread in threading.enumerate()):
            assert time.monotonic() < deadline
            time.sleep(0.01)

    monkeypatch.setattr(paths, "file_hash", recording_hash)
    hashes = paths.HashAhead([first, second])
    hashes(first)  # the second file is now hashed ahead
    hash_ahead_done(second)
    with open(second, "ab") as stream:
        stream.write(b'{"hand_id": "2"}\n')
    assert hashes(second) == plain_hash(second)

    hashes = paths.HashAhead([third])
    hash_ahead_done(third)
    stamp = os.stat(third)
    third.write_bytes(b'{"hand_id": "4"}\n')  # the same size
    os.utime(third, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000))
    assert hashes(third) == plain_hash(third)
