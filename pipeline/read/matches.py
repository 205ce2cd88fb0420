"""Matches: the hands carrying one ``match_id``, and each match's settlement.

A match is a site and a ``match_id`` (``hands.match_id``); it ends with its last stored hand.
:func:`match_settlements` settles every match (or the ones asked for) with the rules core's
:func:`pipeline.rules.settlement.settle_under_rules`: each player's hand points summed over the
match, the match cap of the rule set that scored the hands, money at its stake. It is the one
definition of a match's settlement: ``ofc settle``, the Sessions page and the coaching report
show it (the Record page settles its hands in memory with the same function).

A match is **not settled** (``problem`` says why, its players are still listed with their
points) when its hands have different player sets, different rules or games, or were played at
more than one table, or when the rule set that scored them is not known here (a rules file given
to ``ofc ingest --rules`` is kept in ``meta``; a database made before that needs ``--rules``).
Nothing is merged or guessed.

A match recorded live is paid at its session's money per point (set up at the table; the
rules' stake is its default), kept with the session (:func:`pipeline.read.live.live_match_stakes`).

With ``rules`` (``ofc settle --rules``) the matches' boards are scored again in memory under that
rule set, as ``ofc rescore --rules`` would score them (the database is not changed), and settled
under its cap and stake; the rules each record names (and a live session's stake) then no longer
matter.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import duckdb
import polars as pl

from pipeline import store
from pipeline.ingest.rescore import score_stored
from pipeline.read.live import live_match_stakes
from pipeline.read.scope import placeholders
from pipeline.read.source import Database, reading
from pipeline.rules.ruleset import PRESET_NAMES, RulesError, RuleSet, preset, ruleset_from_mapping
from pipeline.rules.settlement import (
    MatchTotal,
    Settlement,
    SettlementError,
    match_cap_of,
    settle_under_rules,
)

__all__ = [
    "SETTLEMENT_COLUMNS",
    "MatchSettlement",
    "match_settlements",
    "settlement_frame",
    "settlement_rows",
    "stored_rule_sets",
]

SETTLEMENT_COLUMNS: tuple[str, ...] = (
    "match", "player", "hands", "points", "settled", "money", "site", "note",
)
"""The columns of :func:`settlement_frame` (and of ``ofc settle``): one row per match and
player."""


@dataclass(frozen=True, slots=True)
class MatchSettlement:
    """One match: what it is, each player's totals, and its settlement (or why there is none)."""

    site: str
    match_id: str
    hands: int
    started_at: datetime | None
    """The first hand's start (None: no hand of the match has a time)."""
    ended_at: datetime | None
    """The last hand's start: the match ends with it."""
    tables: tuple[str | None, ...]
    rules: str | None
    """The name of the rule set the match is settled under (None: none could be chosen)."""
    cap: int
    stake: Decimal | None
    players: tuple[MatchTotal, ...]
    settlement: Settlement | None
    problem: str | None
    """Why the match is not settled (None: it is)."""

    @property
    def table(self) -> str | None:
        """The match's table (None: none given, or several: see ``problem``)."""
        return self.tables[0] if len(self.tables) == 1 else None


def stored_rule_sets(db: Database) -> dict[str, RuleSet]:
    """The rule sets the database keeps by name (``meta`` keys ``ruleset:<name>``, written by
    ``ofc ingest --rules``, ``ofc rescore --rules`` and live sessions). A definition that no
    longer reads is left out (its matches then need ``--rules``)."""
    with reading(db) as connection:
        rows = connection.sql(
            "SELECT key, value FROM meta WHERE starts_with(key, ?)",
            params=[store.RULESET_META_PREFIX]).fetchall()
    kept: dict[str, RuleSet] = {}
    for key, value in rows:
        name = key[len(store.RULESET_META_PREFIX):]
        try:
            mapping = json.loads(value)
            kept[name] = ruleset_from_mapping(mapping, default_name=name)
        except (ValueError, TypeError, RulesError):
            continue
    return kept


def _picked_sql(match: str | None, site: str | None, players: Sequence[str],
                sessions: Sequence[str]) -> tuple[str, list[Any]]:
    """The hands of the matches asked for: a CTE body selecting (hand_key, site, match_id)."""
    conditions = ["h.match_id IS NOT NULL"]
    params: list[Any] = []
    if match is not None:
        conditions.append("h.match_id = ?")
        params.append(match)
    if site is not None:
        conditions.append("h.site = ?")
        params.append(site)
    if players or sessions:
        seat_conditions = []
        if players:
            seat_conditions.append(f"s.player IN ({placeholders(players)})")
            params.extend(players)
        if sessions:
            seat_conditions.append(f"s.session_id IN ({placeholders(sessions)})")
            params.extend(sessions)
        conditions.append(
            "(h.site, h.match_id) IN (SELECT x.site, x.match_id FROM seats s "
            f"JOIN hands x ON x.hand_key = s.hand_key WHERE {' AND '.join(seat_conditions)} "
            "AND x.match_id IS NOT NULL)")
    return (f"SELECT h.hand_key, h.site, h.match_id FROM hands h "
            f"WHERE {' AND '.join(conditions)}", params)


def _facts(connection: duckdb.DuckDBPyConnection, picked: str,
           params: list[Any]) -> list[dict[str, Any]]:
    """Per match: hands, first and last start, tables, rules names, games, the rule sets its
    hands were scored under, and (for a match whose hands do not all seat the same players)
    its player sets with how many hands each.

    A hand seats every player of its match exactly when it seats as many players as the match
    has, so the player sets are only listed for the matches where that fails."""
    sql = f"""
        WITH picked AS ({picked}),
        match_players AS (
            SELECT p.site, p.match_id, count(DISTINCT s.player) AS players
            FROM picked p JOIN seats s ON s.hand_key = p.hand_key GROUP BY ALL
        ),
        scored AS (
            SELECT p.site, p.match_id, list(DISTINCT e.ruleset ORDER BY e.ruleset) AS rulesets
            FROM picked p JOIN evaluations e ON e.hand_key = p.hand_key GROUP BY ALL
        )
        SELECT p.site, p.match_id, count(*) AS hands, min(h.started_at) AS started_at,
               max(h.started_at) AS ended_at,
               list(DISTINCT h.table_name ORDER BY h.table_name) FILTER (
                   WHERE h.table_name IS NOT NULL) AS tables,
               count(*) FILTER (WHERE h.table_name IS NULL) AS untabled,
               list(DISTINCT h.rules ORDER BY h.rules) AS rules,
               list(DISTINCT h.variant ORDER BY h.variant) AS variants,
               any_value(c.rulesets) AS rulesets,
               count(*) FILTER (WHERE h.player_count <> x.players) AS short_hands
        FROM picked p
        JOIN hands h ON h.hand_key = p.hand_key
        LEFT JOIN match_players x ON x.site = p.site AND x.match_id = p.match_id
        LEFT JOIN scored c ON c.site = p.site AND c.match_id = p.match_id
        GROUP BY p.site, p.match_id
        ORDER BY min(h.started_at) NULLS LAST, p.site, p.match_id
    """
    facts = connection.sql(sql, params=params).pl().to_dicts()
    mixed = [f"{fact['site']}\x1f{fact['match_id']}" for fact in facts if fact["short_hands"]]
    sets: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if mixed:
        rows = connection.sql(f"""
            WITH picked AS ({picked}),
            odd AS (SELECT p.* FROM picked p
                    WHERE p.site || chr(31) || p.match_id IN (SELECT unnest(?::VARCHAR[]))),
            hand_sets AS (
                SELECT o.site, o.match_id, string_agg(s.player, chr(31) ORDER BY s.player)
                           AS players
                FROM odd o JOIN seats s ON s.hand_key = o.hand_key
                GROUP BY o.site, o.match_id, o.hand_key
            )
            SELECT site, match_id, players, count(*) AS hands FROM hand_sets
            GROUP BY ALL ORDER BY site, match_id, hands DESC, players
        """, params=[*params, mixed]).fetchall()
        for site, match_id, players, hands in rows:
            sets.setdefault((site, match_id), []).append({"players": players, "hands": hands})
    for fact in facts:
        fact["player_sets"] = sets.get((fact["site"], fact["match_id"]), [])
    return facts


def _stored_totals(connection: duckdb.DuckDBPyConnection, picked: str,
                   params: list[Any]) -> dict[tuple[str, str], list[MatchTotal]]:
    """Per match, each player's hands and summed points as stored (``results.points``)."""
    rows = connection.sql(f"""
        WITH picked AS ({picked})
        SELECT p.site, p.match_id, r.player, count(*) AS hands, sum(r.points)::BIGINT AS points
        FROM picked p JOIN results r ON r.hand_key = p.hand_key
        GROUP BY ALL ORDER BY p.site, p.match_id, r.player
    """, params=params).fetchall()
    totals: dict[tuple[str, str], list[MatchTotal]] = {}
    for site, match_id, player, hands, points in rows:
        totals.setdefault((site, match_id), []).append(MatchTotal(player, int(hands), int(points)))
    return totals


def _rescored_totals(connection: duckdb.DuckDBPyConnection, picked: str, params: list[Any],
                     rules: RuleSet) -> dict[tuple[str, str], list[MatchTotal]]:
    """Per match, each player's hands and summed points with the boards scored under ``rules``
    (in memory, as ``ofc rescore --rules`` scores them)."""
    boards = connection.sql(f"""
        WITH picked AS ({picked})
        SELECT s.hand_key, h.variant, h.rules, s.player, s.position, s.fantasyland,
               s.reported_points, s.extra, b.top, b.middle, b.bottom, p.site, p.match_id
        FROM picked p
        JOIN hands h ON h.hand_key = p.hand_key
        JOIN seats s ON s.hand_key = p.hand_key
        JOIN boards b ON b.hand_key = s.hand_key AND b.player = s.player
        ORDER BY s.hand_key, s.position
    """, params=params).to_arrow_table()
    totals: dict[tuple[str, str], dict[str, list[int]]] = {}
    if boards.num_rows == 0:
        return {}
    results = score_stored(boards, lambda _name: rules)["results"]
    match_of = {
        key: (site, match_id) for key, site, match_id in zip(
            boards.column("hand_key").to_pylist(), boards.column("site").to_pylist(),
            boards.column("match_id").to_pylist(), strict=True)
    }
    for key, player, points in zip(results.column("hand_key").to_pylist(),
                                   results.column("player").to_pylist(),
                                   results.column("points").to_pylist(), strict=True):
        entry = totals.setdefault(match_of[key], {}).setdefault(player, [0, 0])
        entry[0] += 1
        entry[1] += int(points)
    return {match: [MatchTotal(player, hands, points)
                    for player, (hands, points) in sorted(players.items())]
            for match, players in totals.items()}


def _problem(facts: dict[str, Any], overridden: bool) -> str | None:
    """Why a match cannot be settled as one, from its facts (None: it can)."""
    tables = list(facts["tables"] or [])
    if len(tables) + (1 if facts["untabled"] and tables else 0) > 1:
        shown = ", ".join(repr(table) for table in tables)
        if facts["untabled"]:
            shown += f" and {facts['untabled']} hand(s) without a table"
        return f"its hands were played at more than one table ({shown})"
    sets = facts["player_sets"] or []
    if len(sets) > 1:
        shown = "; ".join(
            f"{', '.join(entry['players'].split(chr(31)))} in {entry['hands']} hand"
            f"{'s' if entry['hands'] != 1 else ''}" for entry in sets)
        return f"its hands have different players ({shown})"
    variants = list(facts["variants"] or [])
    if len(variants) > 1:
        return f"its hands are of different games ({', '.join(variants)})"
    if not overridden:
        rules = list(facts["rules"] or [])
        if len(rules) > 1:
            return f"its hands name different rules ({', '.join(rules)})"
        scored = list(facts["rulesets"] or [])
        if len(scored) > 1:
            return f"its hands were scored under different rule sets ({', '.join(scored)})"
    return None


def match_settlements(
    db: Database, rules: RuleSet | None = None, match: str | None = None,
    site: str | None = None, players: Sequence[str] = (), sessions: Sequence[str] = (),
) -> tuple[MatchSettlement, ...]:
    """Every match asked for, settled: each player's totals and the settlement, or why none.

    ``match`` / ``site``: only that match id (on that site); ``players``: only matches one of
    them played; ``sessions``: only matches with a hand in one of those sessions (a match is
    always taken whole). ``rules``: score the matches' boards under this rule set (in memory)
    and settle under its cap and stake. Matches come in the order of their first hand.
    """
    picked, params = _picked_sql(match, site, players, sessions)
    with reading(db) as connection:
        facts = _facts(connection, picked, params)
        if not facts:
            return ()
        totals = (_rescored_totals(connection, picked, params, rules) if rules is not None
                  else _stored_totals(connection, picked, params))
        kept = {} if rules is not None else stored_rule_sets(connection)
        live_stakes = {} if rules is not None else live_match_stakes(connection)
    settled = []
    for fact in facts:
        key = (fact["site"], fact["match_id"])
        match_totals = tuple(totals.get(key, ()))
        problem = _problem(fact, rules is not None)
        rule_set = rules
        if rule_set is None and problem is None:
            name = (fact["rulesets"] or [None])[0]
            rule_set = kept.get(name) if name is not None else None
            if rule_set is None and name in PRESET_NAMES:
                rule_set = preset(name)
            if rule_set is None:
                problem = (f"its rule set {name!r} is not known here: not a preset, and not "
                           "kept by this database (settle it with --rules FILE)")
        settlement = None
        if problem is None and rule_set is not None:
            try:
                settlement = settle_under_rules(match_totals, rule_set, live_stakes.get(key))
            except SettlementError as error:
                problem = str(error)
        settled.append(MatchSettlement(
            site=fact["site"], match_id=fact["match_id"], hands=int(fact["hands"]),
            started_at=fact["started_at"], ended_at=fact["ended_at"],
            tables=tuple(fact["tables"] or ()) + ((None,) if fact["untabled"] else ()),
            rules=rule_set.name if rule_set is not None else None,
            cap=match_cap_of(rule_set) if rule_set is not None else 0,
            stake=settlement.stake if settlement is not None else None,
            players=match_totals, settlement=settlement,
            problem=problem,
        ))
    return tuple(settled)


def settlement_rows(matches: Sequence[MatchSettlement], exact: bool = False) -> list[dict[str, Any]]:
    """One row per match and player (:data:`SETTLEMENT_COLUMNS`): the match id, the player,
    hands played, hand points summed, settled points (to the hundredth) and money (in the
    match's money unit), the site, and a note: ``capped at N`` for a player who paid only the
    cap, ``not settled: …`` (settled and money None) for a match that cannot be settled.
    ``exact``: settled and money as :class:`~decimal.Decimal` (else floats)."""
    rows: list[dict[str, Any]] = []
    for match in matches:
        for total in match.players:
            settled = (match.settlement.player(total.player) if match.settlement is not None
                       else None)
            if settled is None:
                note = f"not settled: {match.problem}" if match.problem else ""
                shown = money = None
            else:
                note = f"capped at {match.cap}" if settled.capped else ""
                shown, money = settled.settled_shown, settled.money
            rows.append({
                "match": match.match_id, "player": total.player, "hands": total.hands,
                "points": total.points,
                "settled": shown if exact or shown is None else float(shown),
                "money": money if exact or money is None else float(money),
                "site": match.site, "note": note,
            })
    return rows


def settlement_frame(matches: Sequence[MatchSettlement]) -> pl.DataFrame:
    """:func:`settlement_rows` as a frame (settled and money as floats), for the pages."""
    schema = {"match": pl.String, "player": pl.String, "hands": pl.Int64, "points": pl.Int64,
              "settled": pl.Float64, "money": pl.Float64, "site": pl.String, "note": pl.String}
    rows = settlement_rows(matches)
    return pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
