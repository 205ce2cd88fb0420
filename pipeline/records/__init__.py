"""Hand records: the canonical hand (docs/hand-format.md) as typed values, its validation, and
rule sets read by name or from files.

Owns what a valid hand is and how the rules a hand names are found. Pure data and checks: no
database; the only files read are rules files.

Modules:

* :mod:`~pipeline.records.record` — :class:`~pipeline.records.record.HandRecord` and its parts;
* :mod:`~pipeline.records.validate` — a canonical mapping into a record, or one precise reason
  why not (:func:`~pipeline.records.validate.parse_hand`), and back;
* :mod:`~pipeline.records.rules_file` — rule sets by preset name or TOML file
  (:func:`~pipeline.records.rules_file.resolve_rules`, for the ``--rules`` edge), and the
  :class:`~pipeline.records.rules_file.RulesResolver` that resolves the rules name each record
  carries.

Layer: imports only :mod:`pipeline.rules`. May be imported by store and every layer above it
(ingest, simulate, analysis, read, report, live, cli, the dashboard); not by
:mod:`pipeline.formats`, which sits beside it. This package file imports nothing.
"""
