"""Chasing Fantasyland is a real draw, worked out by hand on small hands.

A hand outside Fantasyland chases Fantasyland when its final top row qualifies (QQ or better,
KK or better in 2-7 Pineapple, or trips) or when, as the last street was dealt, the top row
still had a slot and held a lone queen, king or ace (king or ace in 2-7) or a pair, with a card
of that rank the player had not seen. One high card put on top and then covered is not chasing.
Each hand below is two-handed Pineapple (or 2-7 Pineapple); the hero's streets are written out,
and the opponent's board is the same in every hand but the one that shows the queens.
"""

from __future__ import annotations

import polars as pl
import pytest

from pipeline import read
from pipeline.ingest.driver import ingest_mappings
from pipeline.read.scope import Filters

HERO, VILLAIN = "hero", "villain"

# the hero's board: top Q? 2c 3d, middle 4h 5h 6h 7h 9c, bottom Ts Js Ks As 8s
LONE_QUEEN_LATE = [  # the top's last slot is filled on the last street: a live draw until then
    (["Qh", "4h", "5h", "Ts", "Js"], {"top": ["Qh"], "middle": ["4h", "5h"],
                                      "bottom": ["Ts", "Js"]}, []),
    (["2c", "6h", "Tc"], {"top": ["2c"], "middle": ["6h"]}, ["Tc"]),
    (["7h", "Ks", "Th"], {"middle": ["7h"], "bottom": ["Ks"]}, ["Th"]),
    (["9c", "As", "Td"], {"middle": ["9c"], "bottom": ["As"]}, ["Td"]),
    (["3d", "8s", "Jc"], {"top": ["3d"], "bottom": ["8s"]}, ["Jc"]),
]
LONE_QUEEN_COVERED = [  # the top is full before the last street: no draw left
    (["Qh", "4h", "5h", "Ts", "Js"], {"top": ["Qh"], "middle": ["4h", "5h"],
                                      "bottom": ["Ts", "Js"]}, []),
    (["2c", "6h", "Tc"], {"top": ["2c"], "middle": ["6h"]}, ["Tc"]),
    (["3d", "Ks", "Th"], {"top": ["3d"], "bottom": ["Ks"]}, ["Th"]),
    (["9c", "As", "Td"], {"middle": ["9c"], "bottom": ["As"]}, ["Td"]),
    (["7h", "8s", "Jc"], {"middle": ["7h"], "bottom": ["8s"]}, ["Jc"]),
]
QUEENS_ON_TOP = [  # the final top qualifies (QQ): chasing, whatever happened before
    (["Qh", "4h", "5h", "Ts", "Js"], {"top": ["Qh"], "middle": ["4h", "5h"],
                                      "bottom": ["Ts", "Js"]}, []),
    (["Qd", "6h", "Tc"], {"top": ["Qd"], "middle": ["6h"]}, ["Tc"]),
    (["3d", "Ks", "Th"], {"top": ["3d"], "bottom": ["Ks"]}, ["Th"]),
    (["9c", "As", "Td"], {"middle": ["9c"], "bottom": ["As"]}, ["Td"]),
    (["7h", "8s", "Jc"], {"middle": ["7h"], "bottom": ["8s"]}, ["Jc"]),
]
KING_LATE = [  # as LONE_QUEEN_LATE with a king on top (for 2-7 Pineapple)
    (["Kh", "4h", "5h", "Ts", "Js"], {"top": ["Kh"], "middle": ["4h", "5h"],
                                      "bottom": ["Ts", "Js"]}, []),
    (["2c", "6h", "Tc"], {"top": ["2c"], "middle": ["6h"]}, ["Tc"]),
    (["7h", "Ks", "Th"], {"middle": ["7h"], "bottom": ["Ks"]}, ["Th"]),
    (["9c", "As", "Td"], {"middle": ["9c"], "bottom": ["As"]}, ["Td"]),
    (["3d", "8s", "Jc"], {"top": ["3d"], "bottom": ["8s"]}, ["Jc"]),
]


def _villain(queens: bool) -> list[tuple[list[str], dict, list[str]]]:
    """The opponent's streets; with ``queens`` the other three queens go on his board in the
    first two streets (seen by the hero before the last street)."""
    first = ["Qd", "Qs", "Qc"] if queens else ["2h", "2s", "3c"]
    return [
        ([*first, "4d", "5d"], {"top": first, "bottom": ["4d", "5d"]}, []),
        (["6d", "7d", "9h"], {"bottom": ["6d", "7d"]}, ["9h"]),
        (["4c", "5c", "9d"], {"middle": ["4c", "5c"]}, ["9d"]),
        (["6c", "7c", "9s"], {"middle": ["6c", "7c"]}, ["9s"]),
        (["8d", "8c", "Jh"], {"middle": ["8d"], "bottom": ["8c"]}, ["Jh"]),
    ]


def _record(hand_id: str, hero: list, villain: list, variant: str = "pineapple") -> dict:
    def streets(plan: list) -> list[dict]:
        return [{"dealt": dealt, "placed": placed, "discarded": discarded}
                for dealt, placed, discarded in plan]

    return {"hand_id": hand_id, "site": "chasing", "table": "T", "started_at": None,
            "variant": variant, "rules": "standard", "button": VILLAIN,
            "players": [{"name": HERO, "seat": 1, "fantasyland": False,
                         "streets": streets(hero)},
                        {"name": VILLAIN, "seat": 2, "fantasyland": False,
                         "streets": streets(villain)}]}


HANDS = {  # hand id -> (record pieces, the hero chases Fantasyland)
    "queen-late": (LONE_QUEEN_LATE, False, "pineapple", True),
    "queen-late-all-seen": (LONE_QUEEN_LATE, True, "pineapple", False),
    "queen-covered": (LONE_QUEEN_COVERED, False, "pineapple", False),
    "queens-on-top": (QUEENS_ON_TOP, False, "pineapple", True),
    "queen-late-2-7": (LONE_QUEEN_LATE, False, "2-7-pineapple", False),
    "king-late-2-7": (KING_LATE, False, "2-7-pineapple", True),
}


@pytest.fixture(scope="module")
def chasing(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """Per hand, whether the hero chased Fantasyland (read.report.report_session_sums)."""
    records = [_record(hand_id, hero, _villain(queens), variant)
               for hand_id, (hero, queens, variant, _) in HANDS.items()]
    database = tmp_path_factory.mktemp("chasing") / "chasing.duckdb"
    summary = ingest_mappings(records, database, "chasing.jsonl")
    assert summary.stored == len(records), summary
    sums = read.report.report_session_sums(database, Filters(players=(HERO,)))
    keys = read.source.frame(database, "SELECT hand_key, hand_id FROM hands")
    by_key = {f"hand:{key}": hand_id for key, hand_id in keys.rows()}
    # undated hands: each is a session of its own
    assert sums["session"].n_unique() == len(records)
    return {by_key[row["session"]]: int(row["chasing"])
            for row in sums.group_by("session").agg(pl.col("chasing").sum()).to_dicts()}


@pytest.mark.parametrize("hand_id", list(HANDS))
def test_chasing_is_a_real_fantasyland_draw(chasing: dict[str, int], hand_id: str) -> None:
    assert chasing[hand_id] == int(HANDS[hand_id][3]), hand_id
