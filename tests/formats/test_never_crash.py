"""No input crashes a reader: anything not readable becomes error records or a FormatError."""

from __future__ import annotations

import contextlib
import gzip
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.formats import FORMATS, FormatError, read_source

DATA = Path(__file__).parent / "data"
REAL_LINES = (DATA / "ofc-pineapple.jsonl").read_bytes().splitlines(keepends=True)[:40]
CSV_LINES = [
    b"hand_id,started_at,table,variant,player,seat,top,middle,bottom,fantasyland,points\n",
    b"h1,,t,classic,a,1,Ah Kd 2c,2d 3d 4d 5d 6d,7s 8s 9s Ts Js,no,3\n",
    b"h1,,t,classic,b,2,,,,yes,-3\n",
]

# Real lines, cut, shuffled and mixed with junk: the shapes damaged logs really have.
line_pieces = st.one_of(
    st.sampled_from(REAL_LINES + CSV_LINES),
    st.sampled_from(REAL_LINES + CSV_LINES).map(lambda line: line[: len(line) // 2]),
    st.binary(max_size=40),
    st.sampled_from([b"\n", b"\r\n", b"{}\n", b"[]\n", b'{"hand": -1}\n', b'{"log_summary": 1}\n',
                     b'{"hand": 1, "ev": 5}\n', b'{"hand": 1, "seats": "x"}\n', b"\xef\xbb\xbf"]),
)


def _read_everything(path: Path, format_name: str) -> None:
    options = {"game": "ofc"} if FORMATS[format_name].takes_game else {}
    with contextlib.suppress(FormatError):
        for record in read_source(path, format=format_name, **options):
            assert (record.record is None) == (record.error is not None)
            assert record.line >= 1


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(line_pieces, max_size=30), compress=st.booleans())
def test_readers_survive_damaged_input(pieces: list[bytes], compress: bool) -> None:
    data = b"".join(pieces)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "input"
        path.write_bytes(gzip.compress(data) if compress else data)
        for format_name in FORMATS:
            _read_everything(path, format_name)
        with contextlib.suppress(FormatError):
            list(read_source(path))
