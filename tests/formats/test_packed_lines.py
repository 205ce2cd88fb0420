"""Packed batches of lines (``read_raw_batches``): what a worker gets from them
(``expand_lines``) is, batch by batch, exactly what ``read_raw_lines`` gives, on files with
every kind of odd line (blank runs longer than a read block, lines too long by a little and by
several blocks, NUL bytes, carriage returns, a byte-order mark, no newline at the end, gzip,
damaged gzip)."""

from __future__ import annotations

import gzip
import random
from collections.abc import Iterator
from itertools import chain, repeat
from pathlib import Path

import pytest

from pipeline.formats.source import (
    MAX_LINE_BYTES,
    READ_BLOCK_BYTES,
    LineBlock,
    expand_lines,
    read_raw_batches,
    read_raw_lines,
)


def _sizes(first: list[int], then: int) -> Iterator[int]:
    return chain(first, repeat(then))


def _batched(lines: list, sizes: Iterator[int]) -> list[list]:
    """Lines in batches of ``next(sizes)`` (as the ingest's own batching cuts them)."""
    batches, start = [], 0
    while start < len(lines):
        size = next(sizes)
        batches.append(lines[start:start + size])
        start += size
    return batches


def _odd_file(seed: int) -> bytes:
    """A few MiB of lines of many lengths, with the odd lines a real file may hold."""
    chance = random.Random(seed)
    parts = ["\ufeff{\"hand_id\": \"first\"}\n".encode()]
    for index in range(3000):
        roll = chance.random()
        if roll < 0.02:
            parts.append(b"\n" * chance.randint(1, 5))  # short blank runs
        elif roll < 0.03:
            parts.append(b'{"hand_id": "nul\x00here"}\n')
        elif roll < 0.05:
            parts.append(b'{"hand_id": "crlf"}\r\n')
        elif roll < 0.06:
            parts.append(b"x" * chance.randint(60_000, 400_000) + b"\n")  # long, not too long
        else:
            parts.append(b'{"hand_id": "h%d", "pad": "%s"}\n'
                         % (index, b"p" * chance.randint(0, 3000)))
        if index == 700:
            # a blank run over a whole block at least, in long lines (few of them to count)
            parts.append((b" " * 1020 + b"\t\r\n") * (2 * READ_BLOCK_BYTES // 1024 + 64))
        if index == 1500:
            parts.append(b"y" * (MAX_LINE_BYTES + 10) + b"\n")  # too long by a little
        if index == 2200:
            parts.append(b"z" * (3 * READ_BLOCK_BYTES) + b"\r\n")  # too long by blocks
    return b"".join(parts)


@pytest.fixture(scope="module")
def odd_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("packed")
    body = _odd_file(7)
    files = {
        "plain": body + b'{"hand_id": "last, no newline"}',
        "ends too long": body + b"w" * (MAX_LINE_BYTES + 3),
        "ends in NUL": body + b'{"cut": "\x00\x00',
        "ends with a newline": body,
        "small": b'a\n\nb\r\n\x00c\n  \nd',
        # a line that begins near a block's end and is too long only with its end in the next
        "straddles": (b"s" * 99 + b"\n") * ((READ_BLOCK_BYTES - 100) // 100)
        + b"L" * (MAX_LINE_BYTES + 50) + b"\nafter\n",
        "empty": b"",
    }
    paths = {}
    for name, data in files.items():
        path = folder / f"{name.replace(' ', '-')}.jsonl"
        path.write_bytes(data)
        paths[name] = path
    compressed = folder / "gzip.jsonl.gz"
    compressed.write_bytes(gzip.compress(files["plain"]))
    paths["gzip"] = compressed
    damaged = folder / "damaged.jsonl.gz"
    whole = gzip.compress(files["plain"])
    damaged.write_bytes(whole[:len(whole) * 2 // 3])
    paths["damaged gzip"] = damaged
    return paths


@pytest.mark.parametrize("skip_blank", [False, True])
@pytest.mark.parametrize("name", ["plain", "ends too long", "ends in NUL", "ends with a newline",
                                  "small", "straddles", "empty", "gzip", "damaged gzip"])
def test_packed_batches_expand_to_the_lines_read_one_by_one(
        odd_files: dict[str, Path], name: str, skip_blank: bool) -> None:
    path = odd_files[name]
    expected = _batched(list(read_raw_lines(path, skip_blank=skip_blank)),
                        _sizes([3, 50, 400], 1000))
    packed = list(read_raw_batches(path, _sizes([3, 50, 400], 1000), skip_blank=skip_blank))
    assert [expand_lines(batch) for batch in packed] == expected
    if name == "damaged gzip":
        assert expected[-1][-1].damaged  # the damage is there, and said in the same place


def test_the_lines_are_packed(odd_files: dict[str, Path]) -> None:
    """A batch of a thousand ordinary lines crosses to a worker as a handful of blocks (one per
    block read, a few more around odd lines), not a thousand tuples."""
    batches = list(read_raw_batches(odd_files["plain"], repeat(1000), skip_blank=True))
    assert len(batches) > 2
    for batch in batches[:-1]:
        assert sum(type(item) is LineBlock for item in batch) >= 1
        assert len(batch) <= 12, [type(item).__name__ for item in batch]


def test_another_line_limit_is_kept(odd_files: dict[str, Path]) -> None:
    """A longer limit than the default (lines of up to 4 MiB) and a shorter one than a read
    block (every line read one by one) give the lines read one by one, batch by batch."""
    for limit in (4 * MAX_LINE_BYTES, 100_000):
        path = odd_files["plain"]
        expected = _batched(list(read_raw_lines(path, limit, skip_blank=True)),
                            _sizes([7], 500))
        packed = read_raw_batches(path, _sizes([7], 500), limit, skip_blank=True)
        assert [expand_lines(batch) for batch in packed] == expected, limit
