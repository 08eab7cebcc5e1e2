"""Opening a big library keeps the event loop free: what the UI thread does per row is done once
(docs/openstall-notes.md).

Counts, never times: a fill batch repaints no line already painted, the table does not measure rows
ThemedTable measured, and a Resize that keeps the table's size repaints nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console, RenderableType
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.coordinate import Coordinate
from textual.geometry import Size
from tui_fixture import settle

from lesson_credit.tui.widgets.themed_table import FILL_BATCH, FILL_FIRST, ThemedTable

N = FILL_FIRST + 3 * FILL_BATCH  # a first part and three batches
LESSONS = FILL_FIRST + 2 * FILL_BATCH + 30  # a library the Lessons table fills in three batches after the first rows


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        table = ThemedTable(id="t")
        table.add_column("n", key="n")
        table.add_column("square", key="square")
        yield table


def rows(n: int) -> list[tuple[str, list[Text]]]:
    """Every cell as wide as the others in its column: no row widens a column."""
    return [(f"r{i}", [Text(f"{i:06d}"), Text(f"{i * i:012d}")]) for i in range(n)]


class CellRenders:
    """Counts the cells the table renders (Rich's render_lines, which DataTable calls once per cell it paints)."""

    def __init__(self, console: Console) -> None:
        self.count = 0
        self.real = console.render_lines

        def counting(renderable: RenderableType, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return self.real(renderable, *args, **kwargs)

        console.render_lines = counting  # type: ignore[method-assign]  # this app's console only


async def test_fill_batches_below_the_painted_rows_repaint_none_of_them() -> None:
    # Each batch of a fill used to repaint every visible line (DataTable keys its painted lines by an update
    # count add_row bumps): 41 lines of a 3,000-lesson table, 15 times while it opened.
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(ThemedTable)
        table.fill(rows(N))
        await pilot.pause()  # the first rows painted
        renders = CellRenders(app.console)
        await settle(pilot)  # the three batches, a refresh after each
        assert table.row_count == N and not table.filling
        visible = table.size.height * 2  # the cells of one screenful (two columns)
        assert renders.count < visible, renders.count  # not one repaint of the screen, let alone one per batch
        assert [str(table.get_cell_at(Coordinate(i, 0))) for i in range(N)] == [f"{i:06d}" for i in range(N)]
        await pilot.press("end")  # the rows added in the batches paint when shown
        await pilot.pause()
        assert renders.count >= visible


async def test_the_table_does_not_measure_again_the_rows_themed_table_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    # Textual measures every new row when the table is next idle: 0.2 ms a row, a second time (add_row has the widths).
    from textual.render import measure
    from textual.widgets import _data_table

    calls = 0

    def counting(
        console: Console, renderable: RenderableType, default: int, *, container_width: int | None = None
    ) -> int:
        nonlocal calls
        calls += 1
        return measure(console, renderable, default, container_width=container_width)

    monkeypatch.setattr(_data_table, "measure", counting)
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(ThemedTable)
        table.fill(rows(N))
        await settle(pilot)
        assert table.row_count == N
        assert calls < N  # the headers and a few relayouts, not every cell (2N)
        widths = [column.content_width for column in table.ordered_columns]
        assert widths == [6, 12]  # as wide as the cells: add_row widened them


async def test_a_resize_that_keeps_the_size_repaints_no_line() -> None:
    # The Lessons table is sent a Resize of the same size while it fills (when the loading indicator over it
    # goes, a frame after its virtual size grew): DataTable's handler bumped its update count, and every
    # line on screen was painted again (measured in the dashboard: 3 full repaints while opening, 2 after).
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(ThemedTable)
        table.fill(rows(N))
        await settle(pilot)
        renders = CellRenders(app.console)
        table.post_message(events.Resize(table.size, table.virtual_size, table.container_size))
        table.refresh()
        await settle(pilot)
        assert renders.count == 0
        table.post_message(events.Resize(Size(30, 12), table.virtual_size, table.container_size))  # a new size
        table.refresh()
        await settle(pilot)
        assert renders.count > 0  # repainted as before
