"""The Beta plot's legend: one line per entry, never an id broken across lines; a long id shortened; on the
Lessons screen every curve drawn named."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widget import Widget

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.widgets.beta_plot import BetaPlot, Curve
from tests.support.textual_private import screen_lines
from tests.tui.tui_fixture import burst, settle


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
            "━━ …/check-ci-before-done",  # its folder left out: "…/" and the file name's 20 fit the 23
            # the file name (29) does not fit either: its middle goes, 11 characters each side of the ellipsis
            "━━ fixture-sco…s-in-suites",
        ]


async def test_short_entries_share_a_line() -> None:
    app = PlotApp()
    async with app.run_test(size=(40, 16)) as pilot:
        plot = app.query_one(BetaPlot)
        plot.curves = (Curve("before", 1, 1, "before"), Curve("after", 2, 1, "after"))
        await settle(pilot)
        assert shown(app, plot.query_one("#legend")) == ["━━ before  ━━ after"]


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
async def test_lessons_legend_names_every_pin_and_the_highlighted_lesson(
    size: tuple[int, int], workspace: Workspace
) -> None:
    """Three pins and a fourth lesson highlighted draw five curves. The old legend stopped at three lines:
    the prior and the first two pins; the third pin and the highlighted lesson were drawn but not named.
    The fixture's lessons by mean: run-tests, git-worktree, small-commits, shell-quoting, ..."""
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        burst(pilot, "p", "down", "p", "down", "p", "down")
        await settle(pilot)
        plot = app.screen.query_one("#lesson-plot", BetaPlot)
        assert len(plot.curves) == 5
        legend = plot.query_one("#legend")
        entries = [
            "━━ prior Beta(1,1)",
            "━━ testing/run-tests",
            "━━ tools/git-worktree",
            "━━ workflow/small-commits",
            "━━ tools/shell-quoting",
        ]
        if size[0] == 80:  # one entry a line: no two fit in the side pane's 28 columns
            assert shown(app, legend) == entries
        else:  # from 150 columns the side pane takes what the table leaves (86 of 160 here): entries share lines
            assert legend.size.width > 80 and "  ".join(shown(app, legend)) == "  ".join(entries)
        # the densities keep the 7 rows they had over a 3-line legend (title, box, 2 rows of curves, axis)
        assert plot.content_region.height - legend.outer_size.height >= 7
