"""Ingestion: hand histories into the DuckDB database, validated, re-scored and audited.

Owns the only way hand data gets into the database (and out again, for a correction), and the
batch scoring shared with ``ofc score``. Entry points: :func:`pipeline.ingest.driver.ingest_paths`
(files, folders, globs), :func:`~pipeline.ingest.driver.ingest_mappings` (hands from the
dashboard), :func:`pipeline.ingest.rescore.rescore` and :func:`pipeline.ingest.delete.delete_hand`.

Modules (the first ones in the order a file goes through them):

* :mod:`~pipeline.ingest.driver` — ``ingest_paths`` and ``ingest_mappings``: the run, per file
  (skip unchanged files, pick the reader and whether to use worker processes, close the file);
* :mod:`~pipeline.ingest.paths` — which files: paths, folders and globs expanded (hand-history
  file names from the format registry), a file's content hash;
* :mod:`~pipeline.ingest.ingestor` — one source, batch by batch, written in order;
* :mod:`~pipeline.ingest.batches` — a batch validated, scored together and turned into columns
  (no database, no processes: runs the same in a worker);
* :mod:`~pipeline.ingest.fast_canonical` — the columnar path for plainly valid canonical lines;
* :mod:`~pipeline.ingest.fast_streets` — the same with each street read as one raw text, a
  block's streets checked by their distinct shapes (``ofc score``'s parser);
* :mod:`~pipeline.ingest.columns` — validated hands as columns, scored by the batch core
  (numpy only);
* :mod:`~pipeline.ingest.tables` — the Arrow tables of a batch, built from its columns;
* :mod:`~pipeline.ingest.evaluate` — scoring records with the rules core (also ``ofc score``);
* :mod:`~pipeline.ingest.score_lines` — ``ofc score``'s engine: JSON Lines scored block by
  block through the batch core, in worker processes for a large input;
* :mod:`~pipeline.ingest.workers` — the worker process pool for large canonical files;
* :mod:`~pipeline.ingest.lifetime` — worker processes that end with the process they serve;
* :mod:`~pipeline.ingest.defaults` — default settings, importable without the ingest itself;
* :mod:`~pipeline.ingest.writer` — the write connection and its hold, batch inserts (new,
  duplicate, conflict), rejects, the ``ingested_files`` record;
* :mod:`~pipeline.ingest.sessions` — sessions, recomputed where a run's new hands change them;
* :mod:`~pipeline.ingest.summary` — what a run reports (per file, per run, per batch);
* :mod:`~pipeline.ingest.errors` — what it raises when nothing can be ingested;
* :mod:`~pipeline.ingest.progress` — the progress display;
* :mod:`~pipeline.ingest.rescore` — verdicts of stored hands recomputed under other rules;
* :mod:`~pipeline.ingest.watch` — ``ofc watch``: folders followed, what is new in their files
  ingested as it is written (:mod:`~pipeline.ingest.tail`: the new part of a growing file;
  :mod:`~pipeline.ingest.offsets`: how far each file was read, stored with its hands);
* :mod:`~pipeline.ingest.delete` — a stored hand taken back out;
* :mod:`~pipeline.ingest.demo` — the demo database of ``ofc demo`` and the dashboard.

Rules are resolved once, at the edge: the caller passes a RuleSet (or None) and each entry point
builds the one :class:`~pipeline.records.rules_file.RulesResolver` every batch and worker uses.

Layer: imports :mod:`pipeline.rules`, :mod:`pipeline.records`, :mod:`pipeline.formats` and
:mod:`pipeline.store`. May be imported by the layers above it: simulate, analysis, read, report,
live, cli and the dashboard. Import the module that holds a name (``from pipeline.ingest.driver
import ingest_paths``): this package file stays empty of imports, so importing a part does not
load the others (the writer's DuckDB among them).
"""
