"""pipeline.read.charts: figures from small frames, names escaped, empty frames handled."""

from __future__ import annotations

import polars as pl

from pipeline.read import charts

SCRIPT = "<script>alert(1)</script>"


def test_point_flow_links_and_sankey_escape_names() -> None:
    pairs = pl.DataFrame({
        "player": ["a", SCRIPT, "a", "b", SCRIPT, "b"],
        "opponent": [SCRIPT, "a", "b", "a", "b", SCRIPT],
        "hands": [3] * 6,
        "points": [5, -5, -2, 2, 0, 0],
        "scoops": [0] * 6,
    })
    assert charts.point_flow_links(pairs) == [(SCRIPT, "a", 5.0), ("a", "b", 2.0)]
    figure = charts.point_flow_sankey(pairs)
    labels = list(figure.data[0].node.label)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; paid" in labels
    assert not any("<script" in text for text in labels)
    rows, columns, matrix = charts.net_points_matrix(pairs)
    assert rows == sorted(["a", "b", SCRIPT])
    assert matrix[rows.index("a")][columns.index(SCRIPT)] == 5
    heatmap = charts.point_flow_heatmap(pairs)
    assert all("<script" not in text for text in heatmap.data[0].y)


def test_quotes_are_left_alone_for_plotly() -> None:
    assert charts.label('O\'Brien "the kid" & co') == 'O\'Brien "the kid" &amp; co'


def test_empty_frames_give_a_message_not_an_error() -> None:
    empty = pl.DataFrame()
    for figure in (
        charts.cumulative_points_chart(empty), charts.royalty_sources_chart(empty),
        charts.point_flow_heatmap(empty), charts.hands_per_day_chart(empty),
        charts.kpi_comparison_chart(empty),
    ):
        assert figure.layout.annotations[0].text
    funnel = pl.DataFrame({"stage": ["Entered", "Played in Fantasyland", "Stayed"],
                           "count": [0, 0, 0], "points": [None, 0.0, None]})
    assert charts.fantasyland_funnel_chart(funnel).layout.annotations[0].text == "No Fantasyland yet"


def test_points_per_hand_bars_use_95_percent_errors() -> None:
    frame = pl.DataFrame({"variant": ["classic", "pineapple"], "hands": [10, 20],
                          "points_per_hand": [1.5, -0.5], "points_se": [1.0, 0.5]})
    figure = charts.points_per_hand_bars(frame, "variant", "by variant")
    assert list(figure.data[0].error_y.array) == [1.96, 0.98]
    assert list(figure.data[0].marker.color) == [charts.WIN_COLOUR, charts.LOSS_COLOUR]


def test_small_multiples_leave_room_for_their_panel_titles() -> None:
    frame = pl.DataFrame({"player": ["a", "b"], "points_per_hand": [1.0, -1.0],
                          "points_se": [0.5, 0.5], "foul_rate": [0.2, 0.3],
                          "royalties_per_hand": [2.0, 3.0], "fl_entry_rate": [0.1, 0.2],
                          "scoop_rate": [0.3, 0.4]})
    figure = charts.kpi_comparison_chart(frame)
    titles = [note.text for note in figure.layout.annotations]
    assert titles == ["points / hand", "foul rate", "royalties / hand",
                      "Fantasyland entry rate", "scoop rate"]
    # a title's line (about 16 px at Plotly's default font) fits above the plots
    assert figure.layout.title.text is None and figure.layout.margin.t >= 25
    # a chart without panel titles or a title keeps its narrow top margin
    bars = charts.points_per_hand_bars(frame.with_columns(variant=pl.col("player"),
                                                          hands=pl.lit(5)), "variant", "")
    assert bars.layout.margin.t == 10
