"""Write ``broken-example.jsonl``: the canonical example's hands with four of them broken.

Run from the repository root (after making ``canonical-example.jsonl``, see README.md)::

    .venv/bin/python sample_data/make_broken_example.py [OUT]

Lines 1, 4 and 7 are good hands; line 2 is cut off (bad JSON); line 3 deals a card twice;
line 5 has a Pineapple street with nothing discarded (an impossible street); line 6 ends with
four cards on top (wrong row sizes). ``ofc score`` reports each reason on its line and
``ofc ingest`` keeps the good hands and quarantines the rest with the same reasons.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def encode(record: dict) -> str:
    """One compact JSON line, as the simulator writes them."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def duplicate_card(record: dict) -> dict:
    """The second player is dealt (and places) a card the first player already holds."""
    broken = copy.deepcopy(record)
    first, second = broken["players"][0], broken["players"][1]
    taken = first["streets"][0]["dealt"][0]
    street = second["streets"][0]
    replaced = street["dealt"][0]
    street["dealt"][0] = taken
    for row in street["placed"].values():
        row[:] = [taken if card == replaced else card for card in row]
    return broken


def no_discard(record: dict) -> dict:
    """A Pineapple street whose third card is placed instead of discarded."""
    broken = copy.deepcopy(record)
    player = next(player for player in broken["players"] if not player["fantasyland"])
    street = player["streets"][1]
    card = street["discarded"].pop()
    row = next(iter(street["placed"]))
    street["placed"][row].append(card)
    return broken


def four_on_top(record: dict) -> dict:
    """A card placed in the middle on the last street goes to the top instead."""
    broken = copy.deepcopy(record)
    player = next(player for player in broken["players"] if not player["fantasyland"])
    for street in reversed(player["streets"]):
        if street["placed"].get("middle"):
            card = street["placed"]["middle"].pop()
            if not street["placed"]["middle"]:
                del street["placed"]["middle"]
            street["placed"].setdefault("top", []).append(card)
            break
    return broken


def main(out: Path = HERE / "broken-example.jsonl") -> None:
    """Read the canonical example and write the broken one (next to it unless told)."""
    lines = (HERE / "canonical-example.jsonl").read_text(encoding="utf-8").splitlines()
    hands = [json.loads(line) for line in lines]
    output = [
        lines[0],
        lines[1][: len(lines[1]) // 2],
        encode(duplicate_card(hands[2])),
        lines[3],
        encode(no_discard(hands[1])),
        encode(four_on_top(hands[0] | {"hand_id": hands[0]["hand_id"] + "-edited"})),
        lines[4],
    ]
    out.write_text("\n".join(output) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(*(Path(argument) for argument in sys.argv[1:2]))
