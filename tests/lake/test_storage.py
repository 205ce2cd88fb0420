"""The lake folder: partition names, the commit protocol, the lock, and how files are split."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.formats.source import read_raw_lines
from pipeline.lake.build import build_lake
from pipeline.lake.engine import LocalEngine
from pipeline.lake.plan import scan_file, work_units
from pipeline.lake.storage import MANIFEST_NAME, Lake, LakeBusy, LakeError
from pipeline.lake.tables import partition_path, partition_value
from pipeline.lake.units import _unit_lines
from pipeline.read.lake import LakeUnreadable, ParquetLake
from tests.lake.conftest import SAMPLES, lake_tables


@pytest.fixture
def small_lake(tmp_path: Path) -> Path:
    """A lake of the five-hand example."""
    lake = tmp_path / "lake"
    build_lake([SAMPLES / "canonical-example.jsonl"], lake, LocalEngine())
    return lake


@pytest.mark.parametrize(("site", "folder"), [
    ("poker-arena", "poker-arena"),
    ("home/game: #1", "home%2Fgame%3A %231"),
    ("a=b%c", "a%3Db%25c"),
    ("café 'n' [bar]", "café %27n%27 %5Bbar%5D"),
])
def test_partition_values_are_escaped_as_spark_escapes_them(site: str, folder: str,
                                                            tmp_path: Path) -> None:
    assert partition_value(site) == folder
    # DuckDB reads the value back from the folder name
    path = tmp_path / "t" / partition_path(site, "2026-01") / "part.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(pa.table({"x": [1]}), path)
    rows = duckdb.sql(
        f"SELECT site, month FROM read_parquet('{path}', hive_partitioning = true, "
        "hive_types = {'site': VARCHAR, 'month': VARCHAR})").fetchall()
    assert rows == [(site, "2026-01")]


def test_a_commit_replaces_the_manifest_and_the_reader_sees_only_its_files(
    small_lake: Path
) -> None:
    store = Lake(small_lake)
    manifest = store.manifest()
    assert manifest.version == 1 and len(manifest.files("hands")) == 1
    before = lake_tables(small_lake)
    # a file no commit names (what a killed writer leaves) is not read...
    stray = small_lake / "hands" / "site=sim" / "month=2026-10" / "part-stray.parquet"
    pq.write_table(pq.read_table(store.files("hands")[0]), stray)
    assert lake_tables(small_lake) == before
    # ...and the next writer removes it
    with store.writing():
        pass
    assert not stray.exists()


def test_a_folder_that_is_not_a_lake_is_never_cleaned(tmp_path: Path) -> None:
    folder = tmp_path / "my-documents"
    folder.mkdir()
    (folder / "thesis.txt").write_text("precious", encoding="utf-8")
    with pytest.raises(LakeError, match="not empty and not a lake"), Lake(folder).writing():
        pass
    assert (folder / "thesis.txt").read_text(encoding="utf-8") == "precious"


def test_one_writer_at_a_time(small_lake: Path) -> None:
    with Lake(small_lake).writing(), pytest.raises(LakeBusy, match="another ofc lake"), \
            Lake(small_lake).writing():
        pass


def test_a_damaged_manifest_is_an_error_not_a_crash(small_lake: Path) -> None:
    (small_lake / MANIFEST_NAME).write_text("{not json", encoding="utf-8")
    with pytest.raises(LakeUnreadable, match="is not a lake manifest"):
        ParquetLake(small_lake).open()
    with pytest.raises(LakeError, match="is not a lake manifest"):
        Lake(small_lake).manifest()
    (small_lake / MANIFEST_NAME).write_text(json.dumps({"format": "other"}), encoding="utf-8")
    with pytest.raises(LakeUnreadable, match="expected 'ofc-lake/1'"):
        ParquetLake(small_lake).open()


def test_split_units_read_exactly_the_lines_of_the_whole_file(tmp_path: Path) -> None:
    """Parts of a plain canonical file number and hold their lines as the whole file does: a
    byte-order mark, CRLF endings, blank lines and a last line without a newline included."""
    example = (SAMPLES / "canonical-example.jsonl").read_bytes().splitlines()
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(example[:3]) + b"\r\n\n\n"
                     + b"\n".join(example[3:]))
    scan = scan_file(0, str(path), split_bytes=1000)
    units = work_units([scan], None, None)
    assert len(units) >= 4
    assert units[0].start == 0 and units[-1].end == path.stat().st_size
    assert all(left.end == right.start for left, right in zip(units, units[1:], strict=False))
    parts = [line for unit in units for line in _unit_lines(unit)]
    assert parts == list(read_raw_lines(path))


def test_a_gzip_or_other_format_file_is_read_whole(tmp_path: Path) -> None:
    for name in ("demo-hands.jsonl.gz", "live-boards.csv"):
        scan = scan_file(0, str(SAMPLES / name), split_bytes=1000)
        assert scan.splits == ()
        assert len(work_units([scan], None, None)) == 1


def test_a_site_too_long_for_a_folder_name_is_quarantined_not_a_crash(tmp_path: Path) -> None:
    from tests.ingest.conftest import deal_hand, write_jsonl

    # within validation's 128 characters, but escaped (%23 per '#') past a folder name's 255 bytes
    site = "#" * 100
    path = write_jsonl(tmp_path / "hands.jsonl", [
        deal_hand(1, site=site, hand_id="long"), deal_hand(2, hand_id="fine"),
        deal_hand(3, site=site, hand_id="long"),  # the same key again
    ])
    lake = tmp_path / "lake"
    summary = build_lake([path], lake, LocalEngine())
    assert (summary.stored, summary.rejected) == (1, 2)
    tables = lake_tables(lake)
    assert [row[2] for row in tables["hands"]] == ["fine"]
    reasons = sorted((row[1], row[3]) for row in tables["rejects"])
    assert [line for line, _ in reasons] == [1, 3]
    assert all("site name too long for a lake" in reason for _, reason in reasons)
