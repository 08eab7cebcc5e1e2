"""Session detail at 80x24: the credit plot sits below "why this credit", where the side pane scrolls. Scrolled to
(the mouse wheel), it shows whole: its title names the lesson, its legend is under it. It was 12 rows in a pane of
11, its title (the lesson) always above the pane's top. And no first row or two of it shows under the box in the
unscrolled view, read as a flat curve (two lessons and no record: three rows of the plot showed, its title, its top
frame and one row of curves); those rows are the journal's."""

from __future__ import annotations

from pathlib import Path

from textual.widget import Widget

from lesson_credit.tui.app import LessonCreditApp
from tests.tui.test_tui_whole_headers import demo_app, row_text
from tests.tui.tui_fixture import burst, open_session, settle

TITLE = "before → after this session"


def rows_in_view(plot: Widget, pane: Widget) -> int:
    """The plot's rows inside the pane's region on the screen."""
    top, bottom = max(plot.region.y, pane.region.y), min(plot.region.bottom, pane.region.bottom)
    return max(0, bottom - top)


def screen_text(app: LessonCreditApp) -> list[str]:
    return [row_text(app, y) for y in range(app.size.height)]


async def test_scrolled_to_the_plot_it_shows_whole_with_its_title(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-23-157")  # four lessons, the judge's record
        pane, plot = detail.query_one("#detail-side"), detail.query_one("#credit-plot")
        assert rows_in_view(plot, pane) == 0  # the credit rows and "why this credit" fill the pane
        pane.scroll_end(animate=False, immediate=True)
        await settle(pilot)
        assert rows_in_view(plot, pane) == plot.outer_size.height > 0
        shown = screen_text(app)
        titled = [row for row in shown if TITLE in row]
        assert len(titled) == 1 and "communication/concise-status-updates: " + TITLE in titled[0], titled
        assert any("━━ before  ━━ after" in row for row in shown), shown


async def test_no_part_of_the_plot_shows_under_the_box(app: LessonCreditApp) -> None:
    """The fixture's s3: two lessons, no record. Its plot is in view whole or not at all."""
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s3")
        await settle(pilot)
        pane, plot = detail.query_one("#detail-side"), detail.query_one("#credit-plot")
        assert rows_in_view(plot, pane) in (0, plot.outer_size.height), (rows_in_view(plot, pane), screen_text(app))
        journal = detail.query_one("#journal")
        assert journal.outer_size.height > 5  # (the journal's three lines and borders, and the rows left)
        burst(pilot, "7", "8", "down", "up")  # a draft typed fast: the preview lays the screen out again
        await settle(pilot)
        assert detail.draft == 0.8
        assert rows_in_view(plot, pane) in (0, plot.outer_size.height), (rows_in_view(plot, pane), screen_text(app))
        pane.scroll_end(animate=False, immediate=True)
        await settle(pilot)
        assert rows_in_view(plot, pane) == plot.outer_size.height
        assert any("tools/git-worktree: before → after (draft) this session" in row for row in screen_text(app))
