"""The whole-table scaling of board-state sums (``report_state_totals``): the vectorised
computation gives, to the last bit, what adding the parts a row at a time gives, also for
six-handed tables whose boards count one to five opponents, for null keys, and for sums too
large for a float's exact integers (then the rows are added one at a time, exactly)."""

from __future__ import annotations

import random
from fractions import Fraction

import polars as pl
from polars.testing import assert_frame_equal

from pipeline.read.report import STATE_KEYS, _scaled_states, _scaled_states_by_rows

SUM_COLUMNS = ("boards", "settled", "settled_sq", "royalty", "royalty_sq", "royalty_settled",
               "fantasyland_next")


def _sums(seed: int, magnitude: int = 400) -> pl.DataFrame:
    """Random integer state sums: tables of 2 to 6, each board counting 1 to size - 1
    opponents, several parts per group, listed in no order."""
    chooser = random.Random(seed)
    rows = []
    for player in ("ann", "bo", None):
        for size in (2, 3, 6):
            for position in range(size):
                for state in ("normal", "foul", "fantasyland"):
                    for pairings in chooser.sample(range(1, size), chooser.randint(1, size - 1)):
                        boards = chooser.randint(1, 50)
                        settled = chooser.randint(-magnitude, magnitude) * boards
                        royalty = chooser.randint(0, magnitude // 4) * boards
                        rows.append({
                            "player": player, "variant": "pineapple", "player_count": size,
                            "position": position, "rules": chooser.choice(["standard", None]),
                            "state": state, "pairings": pairings, "boards": boards,
                            "settled": settled, "settled_sq": settled * settled // boards + 7,
                            "royalty": royalty, "royalty_sq": royalty * royalty // boards + 3,
                            "royalty_settled": royalty * settled // boards,
                            "fantasyland_next": chooser.randint(0, boards)})
    chooser.shuffle(rows)
    schema = {"player": pl.String, "variant": pl.String, "player_count": pl.Int8,
              "position": pl.Int8, "rules": pl.String, "state": pl.String,
              "pairings": pl.Int64, **dict.fromkeys(SUM_COLUMNS, pl.Int64)}
    return pl.DataFrame(rows, schema=schema)


def test_the_vectorised_scaling_is_the_row_by_row_sum_to_the_last_bit() -> None:
    for seed in range(6):
        sums = _sums(seed)
        assert sums["pairings"].n_unique() == 5
        by_rows = _scaled_states_by_rows(sums.sort([*STATE_KEYS, "pairings"]))
        assert_frame_equal(_scaled_states(sums), by_rows, check_exact=True)


def test_a_six_handed_group_worked_out_by_hand() -> None:
    """Two parts of one group: 10 boards that counted all 5 opponents (settled 40) and 4 that
    counted 2 (settled 6): value = 5·40/5 + 5·6/2 = 55; pairings = 10·5 + 4·2 = 58."""
    sums = pl.DataFrame({
        "player": ["ann", "ann"], "variant": ["pineapple"] * 2, "player_count": [6, 6],
        "position": [0, 0], "rules": ["standard"] * 2, "state": ["normal"] * 2,
        "pairings": [5, 2], "boards": [10, 4], "settled": [40, 6], "settled_sq": [300, 20],
        "royalty": [5, 0], "royalty_sq": [25, 0], "royalty_settled": [50, 0],
        "fantasyland_next": [1, 0]}).cast({"player_count": pl.Int8, "position": pl.Int8})
    row = _scaled_states(sums).row(0, named=True)
    assert (row["boards"], row["pairings"], row["settled"]) == (14, 58, 46)
    assert row["value"] == 55.0
    assert row["value_sq"] == float(Fraction(25 * 300, 25) + Fraction(25 * 20, 4))  # 425
    assert row["royalty"] == 5.0
    assert row["fantasyland_next"] == 1


def test_sums_beyond_a_floats_exact_integers_are_added_exactly() -> None:
    sums = _sums(3).with_columns(pl.col("settled_sq") * 2 ** 40)
    scaled = _scaled_states(sums)
    assert_frame_equal(scaled, _scaled_states_by_rows(sums.sort([*STATE_KEYS, "pairings"])),
                       check_exact=True)
    assert float(scaled["value_sq"].abs().max()) >= 2 ** 53
