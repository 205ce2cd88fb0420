"""The summary: one deviation, one item.

The corrected tests say what is clear; the summary groups them so that one deviation of the
player is one item, however many figures show it:

* a clear cause is one item (``leak`` or ``strength``), its components listed under it;
* clear causes that pull in opposite directions (fewer fouls, fewer royalties) are one
  ``trade-off`` with the net difference; so is a clear cause that the other causes offset (the
  net difference is not clearly in the same direction and the causes going the other way come to
  at least a third of it);
* the chasing answer joins the item of the fouls or Fantasyland cause when there is one;
* the seats are one item, the regular opponents one, and every clear change over time one.

Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pipeline.report.inference import Test
from pipeline.report.model import Cause, ChasingAnswer, Finding, SummaryItem

ADVICE_COST = {
    "fouls": "Foul less: before keeping a strong top row or a Fantasyland draw, check that the "
             "middle and the bottom can still beat it, and give the draw up when they cannot. "
             "The components below say where the fouls come from.",
    "fantasyland": "You get less out of Fantasyland than the group: look at the entry and stay "
                   "rates below. Queens or better on top pay when the rest of the board can "
                   "carry them.",
    "royalties": "Your legal boards collect fewer royalties than the group's: the rows below "
                 "show which row falls short.",
    "rows": "Your legal boards win fewer rows and scoops than the group's: compare the middle "
            "and bottom strength of your notable hands with your opponents'.",
}
ADVICE_GAIN = {
    "fouls": "Keep it: your boards stand up more often than the group's.",
    "fantasyland": "Keep it: you get more out of Fantasyland than the group.",
    "royalties": "Keep it: your legal boards collect more royalties than the group's.",
    "rows": "Keep it: your legal boards win more rows and scoops than the group's.",
}
SHORT = {"fouls": "fouls", "fantasyland": "Fantasyland", "royalties": "royalties",
         "rows": "rows and scoops"}
OFFSET_SHARE = 1 / 3
"""Causes going the other way offset a clear cause when they come to at least this share of it."""


def _cause_text(cause: Cause) -> str:
    return (f"{cause.title}: {cause.points_per_100:+.1f} points per 100 hands (95 %: "
            f"{cause.low:+.1f} to {cause.high:+.1f})")


def _net_text(net: Test) -> str:
    return (f"the net difference is {net.value:+.1f} points per 100 hands (95 %: "
            f"{net.low:+.1f} to {net.high:+.1f})")


def _net_clearly(net: Test, sign: float) -> bool:
    return (net.low > 0) if sign > 0 else (net.high < 0)


def cause_items(causes: Sequence[Cause], net: Test | None, label: str) -> list[SummaryItem]:
    """The items of the clear causes: leaks, strengths, or one trade-off (``net`` in points
    per 100 hands)."""
    clear = [c for c in causes if c.survives]
    if not clear:
        return []
    costs = [c for c in clear if c.points_per_100 < 0]
    gains = [c for c in clear if c.points_per_100 > 0]
    offsetting: list[Cause] = []
    if net is not None and not (costs and gains):
        sign = 1.0 if gains else -1.0
        shown = sum(c.points_per_100 for c in clear)
        others = [c for c in causes if not c.survives and c.points_per_100 * sign < 0]
        against = -sum(c.points_per_100 for c in others)
        if not _net_clearly(net, sign) and against * sign >= OFFSET_SHARE * abs(shown):
            offsetting = others
    if (costs and gains) or offsetting:
        every = sorted([*clear, *offsetting], key=lambda c: (c.points_per_100, c.key))
        cost_side = [c for c in every if c.points_per_100 < 0]
        gain_side = [c for c in every if c.points_per_100 > 0]
        parts = []
        for side, word in ((gain_side, "gains"), (cost_side, "costs")):
            if side:
                parts.append(f"{word}: " + "; ".join(
                    _cause_text(c) + ("" if c.survives else " (not clear on its own)")
                    for c in side))
        text = (f"Against {label}, one part of the play offsets another - "
                + " - ".join(parts))
        if net is not None:
            text += f". On balance {_net_text(net)}"
            verdict = ("a gain on balance" if net.low > 0 else
                       "a cost on balance" if net.high < 0 else "about even on balance")
            text += f": {verdict}."
        advice = ("A style, not a leak: weigh the two sides. Change the side that costs only "
                  "if the net is a clear cost; otherwise it is what this style costs to play.")
        return [SummaryItem(
            key="trade-off", kind="trade-off",
            title="Trade-off: " + ", ".join(
                f"{word} in " + " and ".join(SHORT[c.key] for c in side)
                for side, word in ((gain_side, "gains"), (cost_side, "costs")) if side),
            text=text, advice=advice,
            points_per_100=None if net is None else net.value,
            low=None if net is None else net.low, high=None if net is None else net.high,
            leaks=tuple(c.key for c in cost_side), gains=tuple(c.key for c in gain_side),
            tests=tuple(f"cause.{c.key}" for c in clear))]
    items = []
    for cause in sorted(clear, key=lambda c: (c.points_per_100, c.key)):
        cost = cause.points_per_100 < 0
        low, high = sorted((abs(cause.low), abs(cause.high)))
        text = (f"{'Costs' if cost else 'Gains'} {abs(cause.points_per_100):.1f} points per 100 "
                f"hands against {label} (95 %: {low:.1f} to {high:.1f}); "
                f"{cause.scope}")
        if net is not None:
            text += f"; {_net_text(net)}"
        items.append(SummaryItem(
            key=f"cause.{cause.key}", kind="leak" if cost else "strength",
            title=cause.title, text=text + ".",
            advice=(ADVICE_COST if cost else ADVICE_GAIN)[cause.key],
            points_per_100=cause.points_per_100, low=cause.low, high=cause.high,
            leaks=(cause.key,) if cost else (), gains=() if cost else (cause.key,),
            tests=(f"cause.{cause.key}",)))
    return items


def with_chasing(items: list[SummaryItem], chasing: ChasingAnswer | None) -> list[SummaryItem]:
    """The chasing answer, when clear, joins the item of the fouls or Fantasyland cause, else it
    is an item of its own."""
    if chasing is None or not chasing.survives:
        return items
    for index, item in enumerate(items):
        if {"fouls", "fantasyland"} & {*item.leaks, *item.gains}:
            items[index] = SummaryItem(
                key=item.key, kind=item.kind, title=item.title,
                text=f"{item.text} Does chasing Fantasyland pay? {chasing.answer}",
                advice=item.advice, points_per_100=item.points_per_100, low=item.low,
                high=item.high, leaks=item.leaks, gains=item.gains,
                tests=(*item.tests, "chasing"))
            return items
    pays = chasing.points_per_100 > 0
    return [*items, SummaryItem(
        key="chasing", kind="chasing", title="Chasing Fantasyland", text=chasing.answer,
        advice=("Keep chasing as you do: fouls and Fantasyland together gain against the group."
                if pays else "Fouls and Fantasyland together cost against the group: chase only "
                             "the draws the rest of the board can carry."),
        points_per_100=chasing.points_per_100, low=chasing.low, high=chasing.high,
        leaks=() if pays else ("fouls", "fantasyland"),
        gains=("fouls", "fantasyland") if pays else (), tests=("chasing",))]


def chasing_apart(data: dict[str, Any]) -> bool:
    """Whether a report (as :func:`~pipeline.report.model.report_dict` gives it) shows the
    chasing answer on its own below the summary: there is an answer and no summary item holds it
    already (a clear answer joins the fouls or Fantasyland item, or is an item of its own), so
    the question is asked once."""
    return bool(data.get("chasing")) and not any(
        "chasing" in item["tests"] for item in data.get("summary") or ())


FINDING_ITEMS: dict[str, tuple[str, str]] = {
    "Seats": ("seats", "Your results depend on the seat more than the group's do: look at the "
                       "seats where you lose most against the group (acting first, you see the "
                       "fewest of your opponents' cards)."),
    "Head-to-head": ("head-to-head", "Some opponents suit you more than others, compared with "
                                     "how the group does against them: replay your hands "
                                     "against the ones where you lose most (the Hand browser "
                                     "filters by opponent)."),
}
"""The summary item's kind and advice for a clear test of each topic that is not a cause."""


def finding_items(findings: Sequence[Finding]) -> list[SummaryItem]:
    """The items of the clear tests that are not causes: the seats, each regular opponent, and
    every clear change over time together."""
    items = [SummaryItem(key=finding.key, kind=FINDING_ITEMS[finding.topic][0],
                         title=finding.title, text=f"{finding.note} {finding.confidence}",
                         advice=FINDING_ITEMS[finding.topic][1], points_per_100=None, low=None,
                         high=None, leaks=(), gains=(), tests=(finding.key,))
             for finding in findings if finding.survives and finding.topic in FINDING_ITEMS]
    changes = [f for f in findings if f.survives and f.topic in ("Trend", "Did I improve?")]
    if changes:
        words = "; ".join(f"{f.title}: {f.verdict} ({f.confidence})" for f in changes)
        items.append(SummaryItem(
            key="over_time", kind="over time", title="Change over time", text=words,
            advice="Your play changed: compare the sessions before and after (the rolling "
                   "charts hold the mix of games fixed), and keep what you did better.",
            points_per_100=None, low=None, high=None, leaks=(), gains=(),
            tests=tuple(f.key for f in changes)))
    return items
