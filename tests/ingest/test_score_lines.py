"""``ofc score`` on the batch core prints, byte for byte, what the scalar path printed.

The scalar path (:func:`pipeline.ingest.score_lines.scalar_output`: every line through
``parse_hand`` and the scalar rules core, as ``ofc score`` did before) is the reference. The
block path (:func:`score_blocks`: the columnar parser, the batch rules core, worker processes)
must give the same bytes on the golden files, on random hands of every variant and several
rule sets (boards from tests/rules/generate.py, the simulator's demo sample, the dealer of the
ingest tests) and on mutated, damaged and blank lines, in one process and in workers.
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.formats.source import read_raw_lines, read_stream_raw
from pipeline.ingest.fast_canonical import parse_canonical_batch
from pipeline.ingest.score_lines import scalar_output, score_block, score_blocks
from pipeline.records.rules_file import RulesResolver
from pipeline.rules.cards import card_text
from pipeline.rules.ruleset import preset
from tests.ingest.conftest import deal_hand
from tests.ingest.test_fast_canonical import demo_records, mutate, special_records
from tests.rules.generate import dealt_hands

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "score"


def scalar_text(lines: list, resolver: RulesResolver) -> str:
    """The reference: every line alone through the per-record path."""
    return "".join(scalar_output(line, resolver)[0] + "\n" for line in lines)


def block_text(lines: list, resolver: RulesResolver, **options: int) -> str:
    return "".join(block.text for block in score_blocks(iter(lines), resolver, **options))


def board_records(seed: int, count: int) -> list[dict]:
    """Hands of boards only (no streets): every variant, 2-4 players, Fantasyland flags,
    legal and fouled boards, rules names of several presets."""
    rng = random.Random(seed)
    records = []
    variants = (("classic", 2, 4), ("pineapple", 2, 3), ("2-7-pineapple", 2, 3))
    for number in range(count):
        variant, low, high = variants[number % 3]
        (boards,) = dealt_hands(rng, 1, low, high, legal_bias=0.7)
        players = []
        for seat, board in enumerate(boards, 1):
            texts = [card_text(card) for card in board]
            players.append({
                "name": f"p{seat}", "seat": seat, "fantasyland": rng.random() < 0.2,
                "board": {"top": texts[:3], "middle": texts[3:8], "bottom": texts[8:]},
            })
        records.append({
            "hand_id": f"b{seed}-{number}", "variant": variant,
            "rules": rng.choice(("standard", "progressive", "flat-trips", "standard")),
            "button": rng.choice(players)["name"], "players": players,
        })
    return records


def as_lines(texts: list[str]) -> list[tuple[int, bytes, bool]]:
    return [(number, text.encode("utf-8", "surrogatepass"), True)
            for number, text in enumerate(texts, 1)]


@pytest.mark.parametrize("name", ["hands.jsonl", "invalid.jsonl"])
@pytest.mark.parametrize("rules", [None, "house.toml"])
def test_golden_files_score_the_same_on_both_paths(name: str, rules: str | None) -> None:
    override = None
    if rules is not None:
        from pipeline.records.rules_file import resolve_rules

        override = resolve_rules(str(GOLDEN / rules))
    resolver = RulesResolver(override=override, search_directories=[GOLDEN])
    lines = list(read_raw_lines(GOLDEN / name))
    expected = scalar_text(lines, resolver)
    assert block_text(lines, resolver) == expected
    if name == "hands.jsonl" and rules is None:  # and that is the golden file itself
        assert expected == (GOLDEN / "hands.expected.jsonl").read_text(encoding="utf-8")


def test_random_hands_of_every_variant_and_rule_set_score_the_same() -> None:
    records = board_records(1, 600) + demo_records(300) + special_records() + [
        deal_hand(seed, players=2 + seed % 2) for seed in range(200)]
    texts = [json.dumps(record, separators=(",", ":") if index % 2 else (", ", ": "))
             for index, record in enumerate(records)]
    lines = as_lines(texts)
    _, accepted, rest = parse_canonical_batch([line[:2] for line in lines], "", identity=False)
    assert rest == [] and len(accepted) == len(lines)  # every one goes through the batch core
    resolver = RulesResolver()
    expected = scalar_text(lines, resolver)
    assert expected.count('"error"') == 0
    assert block_text(lines, resolver, block_lines=128) == expected
    assert block_text(lines, RulesResolver(override=preset("progressive")),
                      block_lines=500) == scalar_text(
        lines, RulesResolver(override=preset("progressive")))


@pytest.mark.parametrize("seed", range(3))
def test_mutated_damaged_and_blank_lines_get_the_same_line(seed: int) -> None:
    rng = random.Random(seed)
    bases = demo_records(40) + special_records() + board_records(seed, 40)
    texts = []
    for _ in range(400):
        record = mutate(rng.choice(bases), rng)
        try:
            text = json.dumps(record, allow_nan=True)
        except (TypeError, ValueError, OverflowError):
            continue
        if rng.random() < 0.1:  # byte damage: a cut, or a stray character
            cut = rng.randrange(len(text))
            text = text[:cut] + rng.choice(["", "]", '"', "\\", "x"]) + text[cut + 1:]
        texts.append(text)
    texts += ["", "   ", "[1, 2]", '{"hand_id": "x"', "null", '"text"', "NaN",
              '{"hand_id": "dup", "hand_id": "dup2", "variant": "pineapple", "players": []}']
    valid = json.dumps(deal_hand(seed))  # a key given twice: the last one counts, both ways
    texts += [valid.replace('"hand_id": ', '"hand_id": "first", "hand_id": ', 1),
              valid.replace('"name": "', '"name": "zed", "name": "', 1)]
    rng.shuffle(texts)
    lines = as_lines(texts)
    lines.insert(5, (len(lines) + 1, b'{"hand_id": "\xff\xfe"}', True))  # not UTF-8
    resolver = RulesResolver()
    expected = scalar_text(lines, resolver)
    assert expected.count('"error"') > 50 and expected.count('"players"') > 50
    assert block_text(lines, resolver, block_lines=97) == expected


def test_a_byte_order_mark_unknown_rules_and_an_unterminated_last_line(tmp_path: Path) -> None:
    good = json.dumps(deal_hand(3))
    unknown = json.dumps(deal_hand(4) | {"rules": "friday"})
    path = tmp_path / "hands.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + good.encode() + b"\n" + unknown.encode() + b"\n"
                     + good.encode())
    resolver = RulesResolver(search_directories=[tmp_path])
    lines = list(read_raw_lines(path))
    text = block_text(lines, resolver)
    assert text == scalar_text(lines, resolver)
    first, second, third = text.splitlines()
    assert json.loads(first)["players"] and json.loads(third)["players"]
    assert "unknown rules 'friday'" in json.loads(second)["error"]
    (tmp_path / "friday.toml").write_text("[scoring]\nscoop_bonus = 6\n", encoding="utf-8")
    resolver = RulesResolver(search_directories=[tmp_path])
    assert block_text(lines, resolver) == scalar_text(lines, resolver)
    assert '"error"' not in block_text(lines, resolver)


def test_worker_processes_give_the_same_bytes_in_order() -> None:
    records = demo_records(200) + board_records(5, 200)
    texts = [json.dumps(record) for record in records]
    texts[17] = "not json"
    texts[333] = ""
    lines = as_lines(texts)
    resolver = RulesResolver()
    blocks = list(score_blocks(iter(lines), resolver, workers=2, block_lines=37))
    assert len(blocks) == -(-len(lines) // 37)
    assert [block.lines for block in blocks][:-1] == [37] * (len(blocks) - 1)
    assert "".join(block.text for block in blocks) == scalar_text(lines, resolver)
    assert sum(block.invalid for block in blocks) == 2


def test_a_stream_is_read_a_bounded_number_of_blocks_ahead() -> None:
    """On a pipe the input is not read to its end before scoring starts: when a block comes
    out, at most two blocks per worker (and the one being read) have been taken in."""
    text = "".join(json.dumps(deal_hand(seed)) + "\n" for seed in range(40)).encode()
    taken = 0

    def lines() -> Iterator:
        nonlocal taken
        for line in itertools.cycle(list(read_stream_raw(io.BytesIO(text)))):
            taken += 1
            if taken > 4000:
                return
            yield line

    blocks = score_blocks(lines(), RulesResolver(), workers=2, block_lines=10)
    try:
        for count, block in enumerate(blocks, 1):
            assert block.lines == 10
            assert taken <= 10 * (count + 2 * 2 + 2)
            if count == 30:
                break
    finally:
        blocks.close()
    assert taken < 4000


def test_ofc_score_reads_stdin_and_files_alike(tmp_path: Path) -> None:
    records = demo_records(30)
    path = tmp_path / "hands.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as stream:
        for record in records:
            stream.write(json.dumps(record) + "\n")
        stream.write("{broken\n")
    command = [sys.executable, "-m", "pipeline.cli", "score"]
    from_file = subprocess.run([*command, str(path), "--jobs", "2"], capture_output=True,
                               cwd=REPO, timeout=120)
    from_pipe = subprocess.run([*command, "-"], input=gzip.decompress(path.read_bytes()),
                               capture_output=True, cwd=REPO, timeout=120)
    assert from_file.returncode == from_pipe.returncode == 2
    assert from_file.stdout == from_pipe.stdout
    assert from_file.stdout.decode().count("\n") == 31
    assert b"1 invalid line(s)" in from_file.stderr
    refused = subprocess.run([*command, str(path), "--jobs", "0"], capture_output=True,
                             cwd=REPO, timeout=60)
    assert refused.returncode == 2 and b"--jobs must be 1 or more" in refused.stderr


def test_ofc_score_on_a_pipe_with_forked_workers_prints_the_same_bytes() -> None:
    """Three blocks on standard input (a pipe), a damaged line, a line without its newline
    and non-ASCII names: two forked workers and one process print the same bytes."""
    records = [deal_hand(seed) for seed in range(2100)]
    records[5]["players"][0]["name"] = "Zoë ☃"
    records[1500]["players"][1]["name"] = "Łukasz"
    data = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    data = data.encode() + b'{"broken\n' + b"\xff\xfe not text\n" + json.dumps(
        deal_hand(9000)).encode()  # the last line without its newline
    command = [sys.executable, "-m", "pipeline.cli", "score", "-", "--jobs"]
    runs = [subprocess.run([*command, jobs], input=data, capture_output=True, cwd=REPO,
                           timeout=300) for jobs in ("1", "2")]
    assert runs[0].returncode == runs[1].returncode == 2
    assert runs[0].stdout == runs[1].stdout
    assert runs[0].stdout.count(b"\n") == 2103
    assert "Zoë ☃".encode() in runs[1].stdout


def test_one_block_scores_in_this_process() -> None:
    lines = as_lines([json.dumps(deal_hand(1)), "{}"])
    block = score_block(lines, RulesResolver())
    assert block.lines == 2 and block.invalid == 1
    assert block.text == scalar_text(lines, RulesResolver())


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_a_line_typed_at_a_terminal_is_scored_at_once() -> None:
    """At a terminal ``ofc score -`` answers each line as it is typed (not a block later)."""
    import os
    import pty
    import select
    import time

    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "score", "-"],
                               stdin=follower, stdout=follower, stderr=subprocess.DEVNULL,
                               cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    os.close(follower)
    try:
        os.write(leader, json.dumps(deal_hand(5)).encode() + b"\n")
        seen = b""
        deadline = time.monotonic() + 60
        while b'"fantasyland_cards"' not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                seen += os.read(leader, 65536)
        # the answer (the terminal also echoes the typed line: only the output has this key),
        # while the input is still open
        assert b'"fantasyland_cards"' in seen
        assert process.poll() is None
    finally:
        process.kill()
        process.wait()
        os.close(leader)


def test_distinct_parts_are_rendered_for_every_row_whatever_their_size() -> None:
    """The repeated parts of the output lines are rendered once per distinct row: small rows
    (packed into one key) and rows too wide for it (compared whole) give each row its text."""
    import numpy as np

    from pipeline.ingest.score_lines import _distinct_texts

    rng = random.Random(3)
    for width in (4, 6):
        for low, high in ((-5, 60), (0, 1), (-(1 << 20), 1 << 20), (-(1 << 40), 1 << 40)):
            rows = np.array([[rng.randint(low, high) for _ in range(width)] for _ in range(300)]
                            + [list(range(width))] * 5)
            texts = _distinct_texts(rows, lambda *row: repr(row))
            assert texts == [repr(tuple(row)) for row in rows.tolist()]


def test_a_block_ends_early_once_its_lines_hold_enough_bytes() -> None:
    """Besides its line count, a block ends once its lines hold ``block_bytes`` (checked every
    16 lines: memory stays bounded by that, however long the lines), in one process and with
    workers; the output is the same."""
    lines = as_lines([json.dumps(deal_hand(seed)) for seed in range(100)])
    resolver = RulesResolver()
    size = len(lines[0][1])
    for workers in (1, 2):
        blocks = list(score_blocks(iter(lines), resolver, workers=workers, block_lines=1000,
                                   block_bytes=20 * size))
        assert [block.lines for block in blocks] == [32, 32, 32, 4]
        assert "".join(block.text for block in blocks) == scalar_text(lines, resolver)


def test_ofc_score_in_process_leaves_the_garbage_collector_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ofc score`` freezes the imported objects for the collector while it runs; called in a
    process that goes on (a test, a notebook), it leaves none frozen and the collector on."""
    import gc

    from pipeline.cli import main

    path = tmp_path / "hands.jsonl"
    path.write_text("".join(json.dumps(deal_hand(seed)) + "\n" for seed in range(3)),
                    encoding="utf-8")
    assert gc.isenabled()
    assert main(["score", "--jobs", "1", str(path)]) == 0
    assert capsys.readouterr().out.count('"fantasyland_cards"') >= 6
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_workers_are_started_for_idle_cpus_only() -> None:
    """The default number of workers: one per idle CPU (counting this process's own), never
    more than the CPUs, never fewer than one (scoring here)."""
    from pipeline.ingest.score_lines import default_workers, usable_workers, workers_for

    assert [workers_for(2, load) for load in (0.0, 0.9, 1.4, 1.6, 2.0, 9.0)] == [
        2, 2, 2, 1, 1, 1]
    assert [workers_for(8, load) for load in (0.0, 3.0, 7.6, 20.0)] == [8, 6, 1, 1]
    assert workers_for(1, 0.0) == 1
    assert 1 <= default_workers() <= usable_workers()


def test_what_runs_now_is_read_from_the_runnable_count() -> None:
    """The default counts the tasks runnable at this moment (not the one-minute average, which
    still counts a command that ended seconds ago): this process is not counted, two busy
    processes are."""
    import time

    from pipeline.ingest.score_lines import running_others

    assert running_others("0.00 0.01 0.05 1/96 4242") == 0
    assert running_others("2.10 1.50 0.90 4/120 4242") == 3
    assert running_others("2.10 1.50 0.90") is None
    assert running_others("2.10 1.50 0.90 x/120 4242") is None
    loadavg = Path("/proc/loadavg")
    if not loadavg.exists():
        pytest.skip("no /proc/loadavg here")
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(0.3)
        seen = max(running_others(loadavg.read_text()) or 0 for _ in range(20))
    finally:
        for process in spinning:
            process.kill()
            process.wait()
    assert seen >= 2


def test_ofc_score_starts_without_the_table_and_database_libraries(tmp_path: Path) -> None:
    """``ofc score`` needs numpy and msgspec, nothing heavier (pyarrow, DuckDB, polars... cost
    more start-up time than a small input takes to score)."""
    from tests.cli.test_startup import HEAVY, imported

    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(deal_hand(1)) + "\n", encoding="utf-8")
    modules, result = imported("score", str(path))
    assert result.returncode == 0, result.stderr[-2000:]
    assert '"fantasyland_cards"' in result.stdout
    assert {"numpy", "msgspec", "pipeline"} <= modules  # the list is real
    assert not modules & (set(HEAVY) - {"numpy"}), modules & set(HEAVY)


def test_a_block_message_gives_back_the_same_lines() -> None:
    """A block goes to a forked worker as one message: the usual block (numbered one after
    the other, raw lines, each but the last ending in a newline) as its bytes joined by
    newlines, any other pickled; the worker gets the same lines back either way."""
    from pipeline.formats.source import SourceLine
    from pipeline.ingest.score_lines import (
        _HEADER,
        _LINES,
        _PICKLED,
        _block_message,
        _block_of_message,
    )

    def round_trip(block: list) -> tuple[int, list]:
        header, body = _block_message(block)
        length, kind, first, count, ended = _HEADER.unpack(header)
        assert length == len(body) and count == len(block)
        return kind, _block_of_message(kind, first, count, ended, body)

    usual = [(7, b'{"a": 1}', True), (8, b"", True), (9, b"\r x \xff", True), (10, b"z", False)]
    for block in (usual, usual[:3], usual[1:2], [(1, b"", False)]):
        assert round_trip(block) == (_LINES, block)
    unusual = [
        [(7, b"a", True), (9, b"b", True)],  # a number skipped
        [(7, b"a", True), (6, b"b", True)],
        [(7, b"a", False), (8, b"b", True)],  # an inner line without its newline
        [(7, b"a", 1), (8, b"b", True)],
        [(7, b"a"), (8, b"b")],
        [(7, b"a", True), SourceLine(8, None, "line 8: too long", "x", True)],
        [(7, b"a\nb", True), (8, b"c", True)],  # not a reader's line: it holds a newline
    ]
    for block in unusual:
        assert round_trip(block) == (_PICKLED, block)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers forked on Linux")
def test_forked_workers_end_when_scoring_stops_early() -> None:
    """Closing the blocks before the end (the reader of the output went away) ends the forked
    workers, also those with blocks still queued; none is left behind."""
    import os

    from pipeline.ingest import score_lines

    lines = as_lines([json.dumps(deal_hand(seed)) for seed in range(400)])
    forked: list[int] = []
    fork = score_lines._fork_worker

    def recording_fork(*arguments: object) -> object:
        channel = fork(*arguments)  # type: ignore[arg-type]
        forked.append(channel.pid)
        return channel

    score_lines._fork_worker = recording_fork  # type: ignore[assignment]
    try:
        blocks = score_blocks(iter(lines), RulesResolver(), workers=3, block_lines=10)
        assert next(blocks).lines == 10
        blocks.close()
    finally:
        score_lines._fork_worker = fork  # type: ignore[assignment]
    assert len(forked) == 2
    for pid in forked:  # reaped: no such child any more
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers forked on Linux")
def test_a_forked_worker_that_dies_is_an_error_not_a_hang() -> None:
    import os
    import signal

    from pipeline.ingest import score_lines

    lines = as_lines([json.dumps(deal_hand(seed)) for seed in range(300)])
    fork = score_lines._fork_worker

    def killed_fork(*arguments: object) -> object:
        channel = fork(*arguments)  # type: ignore[arg-type]
        os.kill(channel.pid, signal.SIGKILL)
        return channel

    score_lines._fork_worker = killed_fork  # type: ignore[assignment]
    try:
        with pytest.raises(RuntimeError, match="worker process ended"):
            list(score_blocks(iter(lines), RulesResolver(), workers=2, block_lines=10))
    finally:
        score_lines._fork_worker = fork  # type: ignore[assignment]


def test_the_process_pool_where_workers_are_not_forked_gives_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pipeline.ingest import score_lines

    monkeypatch.setattr(score_lines, "_FORK_WORKERS", False)
    records = demo_records(60) + board_records(6, 60)
    texts = [json.dumps(record) for record in records]
    texts[5] = "{broken"
    lines = as_lines(texts)
    resolver = RulesResolver()
    assert block_text(lines, resolver, workers=2, block_lines=16) == scalar_text(lines, resolver)
