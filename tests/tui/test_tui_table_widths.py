"""A table rebuilt with new rows is painted at its cells' widths, even when a frame comes before
Textual's idle pass measures the rows (a loaded machine: the What-if snapshot flaked).

Textual's DataTable measures new rows when it is next idle and caches painted lines keyed by its
update count, not by the column widths; a frame painted between the rebuild and that pass showed the
columns as wide as their labels, and the idle pass, finding the same widths as before the rebuild,
changed no key, so the cut lines stayed on screen."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets.data_table import ColumnKey

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.what_if import WhatIfScreen
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.tui.tui_fixture import LESSONS, settle


def painted(table: ThemedTable) -> list[str]:
    """The table's lines as the compositor would take them now (header first)."""
    return [table.render_line(y).text for y in range(table.size.height)]


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ThemedTable(id="t")


def rebuild(table: ThemedTable) -> None:
    """As every screen does: clear the columns too, add them back, add the rows."""
    table.clear(columns=True)
    table.add_column("id", key="id")
    table.add_column("n", key="n")
    table.add_row(Text("tools/git-worktree.md"), Text("12345"), key="a")  # wider than the labels
    table.add_row(Text("x"), Text("1"), key="b")


async def test_rows_added_widen_their_columns_before_any_frame() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(ThemedTable)
        rebuild(table)
        await settle(pilot)
        rebuild(table)  # the same rows again: the idle pass will find the widths it found before
        # no await: this is the frame a loaded machine paints before the table's idle pass
        assert table.columns[ColumnKey("id")].content_width == len("tools/git-worktree.md")
        assert table.columns[ColumnKey("n")].content_width == len("12345")
        assert "tools/git-worktree.md" in painted(table)[1]
        await settle(pilot)
        assert "tools/git-worktree.md" in painted(table)[1]  # and after it, not a cached cut line


async def test_what_if_table_shows_whole_lesson_ids_when_a_fold_lands(workspace: Workspace) -> None:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WhatIfScreen)
        table = screen.query_one("#what-if-table", ThemedTable)
        screen._show()  # a fold landing: the table is rebuilt; then a frame before the idle pass
        lines = painted(table)
        await settle(pilot)
        ids = [lesson_id for lesson_id in LESSONS if lesson_id != "tools/old-lesson.md"] + ["tools/old-lesson.md"]
        for frame in (lines, painted(table)):
            body = "\n".join(frame)
            assert all(lesson_id in body for lesson_id in ids), body
            assert "missing" in body  # the status column, not cut to `missin`
