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


# --- charts that tell the truth at a glance (issue 30) ----------------------------------------


def test_fantasyland_funnel_only_narrows_and_says_where_entries_went() -> None:
    # the demo's numbers: more hands played in Fantasyland than entries (a stay plays another)
    frame = pl.DataFrame({"stage": ["Entered", "Played in Fantasyland", "Stayed"],
                          "count": [168, 201, 36], "points": [None, 512.0, None]})
    figure = charts.fantasyland_funnel_chart(frame)
    widths = list(figure.data[0].x)
    assert widths == sorted(widths, reverse=True), widths  # a funnel never widens
    assert widths == [201, 36]
    note = " ".join(annotation.text for annotation in figure.layout.annotations)
    assert "168 entries" in note and "stay" in note


def test_royalty_sources_name_classes_in_words_each_in_its_own_colour() -> None:
    classes = ["pair", "trips", "straight", "flush", "full_house", "quads", "straight_flush",
               "royal_flush", "seven_low", "perfect_low"]
    frame = pl.DataFrame({
        "row_name": ["bottom"] * len(classes),
        "hand_class": classes,
        "boards": [1] * len(classes),
        "royalty_points": list(range(len(classes), 0, -1)),
    })
    figure = charts.royalty_sources_chart(frame)
    names = [trace.name for trace in figure.data]
    assert not any("_" in name for name in names), names
    assert "full house" in names and "royal flush" in names
    colours = [trace.marker.color for trace in figure.data]
    assert None not in colours
    assert len(set(colours)) == len(colours), colours
    # the same class keeps its colour whatever else is in the chart
    alone = charts.royalty_sources_chart(frame.filter(pl.col("hand_class") == "royal_flush"))
    assert alone.data[0].marker.color == colours[names.index("royal flush")]
    # strength order in the legend, weakest first
    assert names.index("pair") < names.index("full house") < names.index("royal flush")


def test_rolling_foul_rate_draws_only_full_windows() -> None:
    window = 100
    hands = list(range(1, 301))
    frame = pl.DataFrame({
        "player": ["a"] * len(hands), "hand_number": hands,
        "foul_rate": [1.0 if hand == 1 else 0.2 for hand in hands],  # a foul in the first hand
        "window_hands": [min(hand, window) for hand in hands],
    })
    figure = charts.rolling_foul_rate_chart(frame, window)
    assert min(figure.data[0].x) == window
    assert max(figure.data[0].y) < 100  # no spike to 100 % from a one-hand "window"
    short = frame.filter(pl.col("hand_number") < window)
    message = charts.rolling_foul_rate_chart(short, window).layout.annotations[0].text
    assert "100" in message


def test_point_flow_labels_are_readable() -> None:
    pairs = pl.DataFrame({
        "player": ["a", "b", "a", "c", "b", "c"], "opponent": ["b", "a", "c", "a", "c", "b"],
        "hands": [3] * 6, "points": [12000, -12000, -5, 5, 40, -40], "scoops": [0] * 6,
    })
    heatmap = charts.point_flow_heatmap(pairs)
    assert heatmap.data[0].textfont.size >= 12
    assert "+12,000" in [cell for line in heatmap.data[0].text for cell in line]
    sankey = charts.point_flow_sankey(pairs)
    font = sankey.data[0].textfont
    assert font.size >= 12
    assert font.color == charts.TEXT_COLOUR  # dark text, not the theme's grey
    assert "#ffffff" in font.shadow  # in a light halo over the links


def test_cumulative_panels_give_each_player_their_own_scale() -> None:
    rows = []
    for player, step in (("big loser", -400), ("a", 2), ("b", -1)):
        total = 0
        for hand in range(1, 31):
            total += step
            rows.append({"player": player, "hand_number": hand, "cumulative": total})
    figure = charts.cumulative_points_panels(pl.DataFrame(rows))
    assert len(figure.data) == 3
    axes = [trace.yaxis for trace in figure.data]
    assert len(set(axes)) == 3  # one y axis per player
    layout = figure.to_plotly_json()["layout"]
    assert all(not layout[name].get("matches") for name in layout if name.startswith("yaxis"))
    titles = [annotation.text for annotation in figure.layout.annotations]
    assert "big loser: -12,000" in titles and "a: +60" in titles
