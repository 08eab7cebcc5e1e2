"""The Beta plot's legend: one line per entry, never an id broken across lines; a long id shortened."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widget import Widget

from lesson_credit.tui.widgets.beta_plot import BetaPlot, Curve
from tests.support.textual_private import screen_lines
from tests.tui.tui_fixture import settle


class PlotApp(App[None]):
    CSS = "BetaPlot { width: 28; height: 14; }"  # the plot's width beside the Lessons table at 80x24

    def compose(self) -> ComposeResult:
        yield BetaPlot(id="plot")


def shown(app: App[None], widget: Widget) -> list[str]:
    """The widget's content lines as painted."""
    region = widget.content_region
    strips = screen_lines(app)
    return [strips[y].text[region.x : region.right].rstrip() for y in range(region.y, region.bottom)]


async def test_legend_keeps_each_curve_on_one_line() -> None:
    app = PlotApp()
    async with app.run_test(size=(40, 16)) as pilot:
        plot = app.query_one(BetaPlot)
        plot.curves = (
            Curve("prior Beta(1,1)", 1, 1, "prior"),
            Curve("workflow/check-ci-before-done", 3, 2, "main"),  # 29 characters: more than the 23 left
            Curve("testing/fixture-scope-leaks-in-suites", 2, 3, "pin", 0),  # its file name is too long too
        )
        await settle(pilot)
        # 26 columns inside the padding; an entry is the mark (2), a space and its label (23 at most);
        # entries share a line, two spaces apart, only when both fit whole
        assert shown(app, plot.query_one("#legend")) == [
            "━━ prior Beta(1,1)",
            "━━ check-ci-before-done",  # the file name: the id is too long
            "━━ fixture-scope-leaks-in…",  # 22 characters of the file name and an ellipsis
        ]


async def test_short_entries_share_a_line() -> None:
    app = PlotApp()
    async with app.run_test(size=(40, 16)) as pilot:
        plot = app.query_one(BetaPlot)
        plot.curves = (Curve("before", 1, 1, "before"), Curve("after", 2, 1, "after"))
        await settle(pilot)
        assert shown(app, plot.query_one("#legend")) == ["━━ before  ━━ after"]
