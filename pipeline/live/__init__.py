"""A live game recorded at the table: the logic behind ``ofc record`` and the dashboard's Record page.

It owns everything about recording a game hand by hand, with no user interface: both front ends
only collect text (or tapped cards) and show what these functions return.

Modules, each with one reason to change:

* :mod:`pipeline.live.entry` - checking and editing one hand's boards as typed or tapped
  (card tokens, 13 cards without separators, row sizes, cards used twice, every card previewed
  with the extra ones marked); nothing is saved until the whole hand is valid;
* :mod:`pipeline.live.session` - the session state machine: start a session, record, edit or
  delete the last hand and undo that (canonical record, scoring, button, Fantasyland marks,
  running totals); verdicts on boards while they are entered; a session as JSON values and back;
* :mod:`pipeline.live.state` - what survives a reload: the session, the hand being entered, the
  last action (for undo), the names confirmed as stored players;
* :mod:`pipeline.live.text` - how boards, verdicts, points and money are written for the players;
* :mod:`pipeline.live.storage` - saving, replacing and deleting hands in the database, always
  through :mod:`pipeline.ingest.driver` (the same tables and keys as file ingestion), and the
  steps on a live state (save, delete, undo, persist, resume, end) that keep the session's row
  in the ``live_sessions`` table.

Who may import it: the CLI (:mod:`pipeline.cli.record`) and the dashboard
(``dashboard/views/record.py``); nothing else in ``pipeline`` depends on it. It imports
:mod:`pipeline.read` (stored sessions and names), :mod:`pipeline.ingest`, :mod:`pipeline.store`,
:mod:`pipeline.records` and :mod:`pipeline.rules`.

Import from the modules themselves; this package re-exports nothing, so importing one module
does not load the others (``entry`` and ``text`` need no database or scoring).
"""
