"""``ofc score`` keeps freed memory for reuse (glibc's thresholds fixed): memory freed and
allocated again in the same sizes is no longer faulted in page by page."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import resource, sys
sys.path.insert(0, sys.argv[2])
if sys.argv[1] == "keep":
    from pipeline.formats.source import keep_freed_memory
    assert keep_freed_memory()
if sys.argv[1] == "score":  # ofc score in this process, its output to a file
    import contextlib
    from pipeline.cli import main
    with open(sys.argv[4], "w") as output, contextlib.redirect_stdout(output):
        assert main(["score", "--jobs", "1", sys.argv[3]]) == 0

def blocks(rounds):  # a block's worth of buffers, built and freed, as a command does per block
    for _ in range(rounds):
        held = [bytearray(4 << 20) for _ in range(8)]
        del held

blocks(2)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
blocks(20)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _page_faults(mode: str, tmp_path: Path) -> int:
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, mode, str(REPO),
         str(REPO / "sample_data" / "canonical-example.jsonl"), str(tmp_path / "scored.jsonl")],
        capture_output=True, text=True, timeout=60, check=True)
    return int(completed.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="glibc's malloc settings only")
def test_freed_blocks_are_reused_not_faulted_in_again(tmp_path: Path) -> None:
    """20 rounds of 32 MiB built and freed: by default the freed heap top is given back and
    faulted in again (about 8,000 faults a round); kept, it is reused. ``ofc score`` keeps it:
    after it ran in a process, the rounds cost as few faults there."""
    default = _page_faults("default", tmp_path)
    kept = _page_faults("keep", tmp_path)
    after_score = _page_faults("score", tmp_path)
    assert default > 20 * 1000, default
    assert kept < default / 20, (kept, default)
    assert after_score < default / 20, (after_score, default)
    assert (tmp_path / "scored.jsonl").read_text(encoding="utf-8").count("\n") > 0
