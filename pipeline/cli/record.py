"""``ofc record``: record a live game hand by hand at a terminal prompt.

Each hand asks every player's final board (``top / middle / bottom``) in action order, checks it
at once (re-asking with the reason), then saves the hand through ingestion and prints the
result: fouls, royalties, points per pair and per player, who plays Fantasyland next (with the
card count), the running totals in points and money, and who has the button next. Works with
piped stdin: one answer per line.

The session is kept in the database as it goes (the ``live_sessions`` table, like the dashboard's
Record page): ``quit`` or the end of input pauses it, ``ofc record --db FILE --resume ID`` goes on
(here or on the Record page), and ``end`` ends it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipeline.cli import CommandError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``record`` command."""
    parser = subparsers.add_parser(
        "record",
        help="record a live game: type each player's board per hand; scored and saved at once",
        description=(
            "Record a live game at a prompt. Per hand, type each player's final board as "
            '"top / middle / bottom"; the hand is checked, scored, saved into the database '
            "(like an ingested file) and the result shown with running totals. Commands: "
            "fl, back, undo, edit, totals, match, help, quit, end. Reads piped stdin too. The "
            "session is kept in the database: --resume ID goes on with it (here or on the "
            "dashboard). A session is one match unless 'match' ends it and starts the next; each "
            "match is settled (the match cap of the rules or of --match-cap, money at the stake)."
        ),
    )
    parser.add_argument("--db", required=True, metavar="FILE", help="DuckDB database file")
    parser.add_argument(
        "--players", default=None, metavar="A,B,C",
        help="player names, comma separated, in clockwise seat order (not with --resume)",
    )
    parser.add_argument("--resume", default=None, metavar="ID",
                        help="go on with a session kept in the database (its id)")
    parser.add_argument("--variant", default="pineapple",
                        help="classic, pineapple or 2-7-pineapple (default pineapple)")
    parser.add_argument("--rules", default="standard", metavar="NAME|FILE",
                        help="a rules preset or a TOML rules file (default standard)")
    parser.add_argument("--stake", default=None, metavar="MONEY",
                        help="money per point (default: the rules' stake)")
    parser.add_argument("--match-cap", default=None, type=int, metavar="POINTS",
                        help="the most a player can lose over a match (a match cap on top of "
                             "the rules; the 'match' command ends a match and settles it)")
    parser.add_argument("--button", default=None, metavar="NAME",
                        help="who has the button for the first hand (default: the last player)")
    parser.add_argument("--fantasyland", default="", metavar="A,B",
                        help="players in Fantasyland on the first hand")
    parser.add_argument("--session", default=None, metavar="ID",
                        help="session id, the prefix of every hand id (default live-DATE-TIME)")
    parser.add_argument("--table", default=None, metavar="NAME",
                        help="table name (default: the session id)")
    parser.set_defaults(handler=run)


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def run(arguments: argparse.Namespace) -> int:
    """Run the prompt loop until ``quit``, ``end`` or the end of input."""
    import duckdb

    from pipeline import read, store
    from pipeline.cli.record_prompt import WRITER, RecordLoop, resume_state, same_person_note
    from pipeline.live.session import LiveError, start_session
    from pipeline.live.state import LiveState
    from pipeline.live.storage import StaleSession, persist, stored_hand_ids

    database = Path(arguments.db)
    if arguments.resume:
        state = resume_state(database, arguments.resume, arguments.rules if arguments.rules != "standard"
                        else None)
        RecordLoop(state.session, database, sys.stdin, sys.stdout, state=state).run()
        return 0
    if not arguments.players:
        raise CommandError("--players is needed to start a session (or --resume ID)", code=2)
    try:
        session = start_session(
            _names(arguments.players), arguments.variant, arguments.rules,
            arguments.stake, arguments.button, arguments.session, arguments.table,
            fantasyland=_names(arguments.fantasyland), match_cap=arguments.match_cap,
        )
    except LiveError as error:
        raise CommandError(str(error), code=2) from error
    try:
        with store.open_database(database):
            pass
        taken = stored_hand_ids(database, session.session_id)
        kept = read.live.live_session_revision(database, session.session_id)
        matches = read.live.players_like(database, session.players)
    except (duckdb.Error, OSError) as error:
        raise CommandError(f"cannot use database {database}: {error}") from error
    if taken:
        raise CommandError(
            f"session {session.session_id} already has {len(taken)} hand(s) in {database} "
            f"(last {taken[-1]}); choose another --session", code=2)
    if kept is not None:
        raise CommandError(
            f"session {session.session_id} is already kept in {database}: go on with it with "
            f"--resume {session.session_id}, or choose another --session", code=2)
    notes = [same_person_note(name, stored, hands) for name, (stored, hands) in matches.items()]
    try:
        state = persist(database, LiveState(session, confirmed=tuple(
            stored for stored, _hands in matches.values())), WRITER)
    except (StaleSession, duckdb.Error) as error:
        raise CommandError(f"session {session.session_id} cannot be kept: {error}") from error
    RecordLoop(session, database, sys.stdin, sys.stdout, state=state, notes=notes).run()
    return 0
