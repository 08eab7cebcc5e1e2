"""ThemedTable.fill: a big table is added in batches, in order, and a clear or refill stops the rest."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets.data_table import ColumnKey

from lesson_credit.tui.widgets.themed_table import FILL_BATCH, FILL_FIRST, ThemedTable
from tests.support.textual_private import count_table_measures
from tests.tui.tui_fixture import settle

N = FILL_FIRST + 3 * FILL_BATCH + 7  # a first part, three whole batches and a short one


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        table = ThemedTable(id="t")
        table.add_column("n", key="n")
        table.add_column("square", key="square")
        yield table


def rows(n: int, tag: str = "") -> list[tuple[str, list[Text]]]:
    return [(f"r{i}", [Text(f"{tag}{i}"), Text(str(i * i))]) for i in range(n)]


def column(table: ThemedTable, key: str) -> list[str]:
    return [str(table.get_cell(f"r{i}", key)) for i in range(table.row_count)]


async def test_fill_adds_the_first_rows_at_once_and_the_rest_in_batches() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(ThemedTable)
        batches: list[tuple[int, int]] = []  # (rows in the table, rows not measured yet) before each batch
        real = table._fill_more

        def spy(fill: int) -> None:
            batches.append((table.row_count, len(table._new_rows)))
            real(fill)

        table._fill_more = spy  # type: ignore[method-assign]  # records this table's batches
        table.fill(rows(N))
        assert table.row_count == FILL_FIRST and table.filling
        await settle(pilot)
        assert table.row_count == N and not table.filling
        assert [count for count, _ in batches] == [FILL_FIRST + i * FILL_BATCH for i in range(4)]
        # the event loop ran between batches: each one found the previous one measured already
        assert [unmeasured for _, unmeasured in batches] == [0, 0, 0, 0]
        assert column(table, "n") == [str(i) for i in range(N)]  # in order
        assert column(table, "square") == [str(i * i) for i in range(N)]


async def test_a_clear_or_a_refill_stops_the_rest_of_a_fill() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(ThemedTable)
        table.fill(rows(N))
        table.clear()
        assert not table.filling
        await settle(pilot)
        assert table.row_count == 0
        table.fill(rows(N, "old "))
        table.clear()
        table.fill(rows(FILL_FIRST + 10, "new "))
        await settle(pilot)
        assert table.row_count == FILL_FIRST + 10
        assert column(table, "n") == [f"new {i}" for i in range(FILL_FIRST + 10)]


async def test_set_cell_reaches_a_row_still_waiting_in_a_fill() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(ThemedTable)
        table.fill(rows(N))
        late = f"r{N - 1}"  # not in the table yet
        table.set_cell(late, "square", Text("changed"))
        table.set_cell("r0", "square", Text("also"))  # already in the table
        await settle(pilot)
        assert str(table.get_cell(late, "square")) == "changed"
        assert str(table.get_cell("r0", "square")) == "also"
        assert str(table.get_cell(late, "n")) == str(N - 1)


async def test_setting_every_cell_of_a_column_measures_each_new_cell_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The dashboard fills the Lessons table's intervals cell by cell after the first paint (3,000 rows
    # at scale). Textual's update_cell(update_width=True) re-measures the whole column whenever a new
    # value is narrower than the column, so filling a column cost n^2 measurements: minutes at 3,000.
    app = TableApp()
    n = 300
    async with app.run_test() as pilot:
        table = app.query_one(ThemedTable)
        table.fill([(f"r{i}", [Text(str(i)), Text("a wide placeholder value")]) for i in range(n)], first=n)
        await settle(pilot)
        calls = count_table_measures(monkeypatch)
        for i in range(n):
            table.set_cell(f"r{i}", "square", Text(str(i * i)))  # each narrower than the column
        table.set_cell("r7", "square", Text("a value wider than the placeholder was"))
        await settle(pilot)
        # one measurement per set cell and a few per relayout, not one per cell of the column each time (n^2 = 90,000)
        assert calls[0] < 10 * n
        assert table.columns[ColumnKey("square")].content_width == len("a value wider than the placeholder was")
        assert str(table.get_cell("r299", "square")) == str(299 * 299)


async def test_restore_cursor_goes_by_the_row_kept_then_the_place_then_the_first_row() -> None:
    """r5 moved from line 5 to line 4 of a rebuild (the rows reversed): the cursor follows it; a row no
    longer listed: the line asked for (7), the first line when there are fewer (3 rows), none when empty."""
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(ThemedTable)
        table.fill(rows(10))
        await settle(pilot)
        keys = [f"r{i}" for i in range(10)]
        assert table.restore_cursor(keys, "r5") == "r5" and table.cursor_row == 5
        table.clear()
        table.fill(rows(10)[::-1])
        assert table.restore_cursor(keys[::-1], "r5") == "r5" and table.cursor_row == 4  # r9 r8 r7 r6 r5
        assert table.restore_cursor(keys[::-1], "gone", place=7) == "r2" and table.cursor_row == 7
        assert table.restore_cursor(keys[::-1], None, place=2) == "r7" and table.cursor_row == 2
        table.clear()
        table.fill(rows(3))
        assert table.restore_cursor(keys[:3], "gone", place=7) == "r0" and table.cursor_row == 0
        table.clear()
        assert table.restore_cursor([], "r1") is None and table.cursor_row == 0
