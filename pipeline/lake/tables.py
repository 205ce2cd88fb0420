"""The lake's tables: their columns, how they are partitioned, and partition folder names.

Every table of the DuckDB database that holds hand data has a folder of the same name with the
same columns (schemas/database.md): ``hands``, ``seats``, ``placements``, ``discards``,
``boards``, ``evaluations``, ``matchups``, ``results`` and ``sessions`` are Hive-partitioned
by site and month (``site=<site>/month=<YYYY-MM>/``: the month the hand started, the session's
first hand for ``sessions``, ``unknown`` for hands without a start time); ``rejects`` and
``ingested_files`` are one folder each, unpartitioned. ``player_totals`` is the lake's own
pre-aggregated table (additive sums per player, see :data:`PLAYER_TOTAL_COLUMNS`).

As in any Hive layout, a partition column is not stored in the files: ``hands.site`` and
``sessions.site`` come from the folder name. Partition values are escaped exactly as Spark
escapes them (:func:`partition_value`), so a lake written by either engine has the same folder
names, and DuckDB and Spark read the same values back.

Pure: Arrow schemas and text, no files.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pipeline.ingest.columns import TABLE_SCHEMAS
from pipeline.store.aggregates import PLAYER_TOTAL_COLUMNS

__all__ = [
    "HAND_TABLES",
    "LAKE_TABLES",
    "ORDER_COLUMN",
    "PARTITIONED_TABLES",
    "PARTITION_COLUMNS",
    "SCHEMAS",
    "UNKNOWN_MONTH",
    "file_schema",
    "months_of",
    "partition_path",
    "partition_value",
    "staged_schema",
]

HAND_TABLES: tuple[str, ...] = (
    "hands", "seats", "placements", "discards", "boards", "evaluations", "matchups", "results",
)
"""Tables built from a batch of hands by the batch core (ingest's frames), in insert order."""

PARTITION_COLUMNS: tuple[str, str] = ("site", "month")
"""Hive partition columns of the partitioned tables, outermost first."""

UNKNOWN_MONTH = "unknown"
"""The month partition of hands without a start time."""

ORDER_COLUMN = "_order"
"""Staged frames only: the record's place in the build (file, then line), for deduplication."""

_SEATS = TABLE_SCHEMAS["seats"]

SCHEMAS: dict[str, pa.Schema] = {
    **{name: TABLE_SCHEMAS[name] for name in HAND_TABLES},
    # Ingest's frames leave seats.session_id to the sessions step; the table has it.
    "seats": _SEATS.insert(_SEATS.get_field_index("extra"), pa.field("session_id", pa.string())),
    "sessions": pa.schema([
        ("session_id", pa.string()), ("player", pa.string()), ("site", pa.string()),
        ("table_name", pa.string()), ("started_at", pa.timestamp("us")),
        ("ended_at", pa.timestamp("us")), ("hands", pa.int32()), ("points", pa.int64()),
    ]),
    # The lake keeps what was rejected and why; the database's later columns (the site, and
    # resolved_at / resolved_by, set when a fixed file stores the hand) are the database's own.
    "rejects": pa.schema([field for field in TABLE_SCHEMAS["rejects"]
                          if field.name not in ("site", "resolved_at", "resolved_by")]),
    "ingested_files": pa.schema([
        ("path", pa.string()), ("content_hash", pa.string()), ("format", pa.string()),
        ("size_bytes", pa.int64()), ("ingested_at", pa.timestamp("us")),
        ("records", pa.int32()), ("stored", pa.int32()), ("duplicates", pa.int32()),
        ("rejected", pa.int32()), ("status", pa.string()), ("message", pa.string()),
    ]),
    "player_totals": pa.schema(
        [("player", pa.string())] + [(name, pa.int64()) for name in PLAYER_TOTAL_COLUMNS]
    ),
}
"""Every lake table's columns, as the table has them (partition columns included)."""

LAKE_TABLES: tuple[str, ...] = tuple(SCHEMAS)
"""Every table of a lake, one folder each."""

PARTITIONED_TABLES: frozenset[str] = frozenset((*HAND_TABLES, "sessions"))
"""Tables partitioned by site and month."""


def file_schema(table: str) -> pa.Schema:
    """The columns stored in a table's Parquet files: the table's, less the partition columns."""
    schema = SCHEMAS[table]
    if table not in PARTITIONED_TABLES:
        return schema
    return pa.schema([field for field in schema if field.name not in PARTITION_COLUMNS])


def staged_schema(table: str) -> pa.Schema:
    """A staged frame of a hand table: its columns, then site, month and the record's order."""
    schema = SCHEMAS[table]
    extra = [pa.field(name, pa.string()) for name in PARTITION_COLUMNS
             if name not in schema.names]
    return pa.schema([*schema, *extra, pa.field(ORDER_COLUMN, pa.int64())])


# Spark's ExternalCatalogUtils.escapePathName set: control characters and "#%'*/:=?\{[]^ and
# DEL. NUL is added (no file name can hold it).
_ESCAPED = frozenset(chr(code) for code in range(0, 32)) | frozenset("\"#%'*/:=?\\\x7f{[]^")


def partition_value(text: str) -> str:
    """A partition value as it appears in a folder name, escaped as Spark escapes it (``%2F``
    for ``/``...); DuckDB and Spark both decode it back. Letters beyond ASCII stay as they are
    (Spark decodes an escape byte by byte, so escaping them would not read back)."""
    if not text:
        return "__HIVE_DEFAULT_PARTITION__"
    return "".join(f"%{ord(char):02X}" if char in _ESCAPED else char for char in text)


def partition_path(site: str, month: str) -> str:
    """The relative folder of one partition: ``site=<site>/month=<month>``."""
    return f"site={partition_value(site)}/month={partition_value(month)}"


def months_of(started: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``YYYY-MM`` of each UTC start time, :data:`UNKNOWN_MONTH` where there is none."""
    values = started.to_numpy(zero_copy_only=False) if len(started) else np.zeros(
        0, "datetime64[us]")
    values = np.asarray(values, "datetime64[us]")
    unknown = np.isnat(values)
    texts = np.datetime_as_string(
        np.where(unknown, np.datetime64(0, "us"), values).astype("datetime64[M]"), unit="M"
    ).astype(object)
    texts[unknown] = UNKNOWN_MONTH
    return pa.array(texts, pa.string())
