"""Opening a big library keeps the event loop free: what the UI thread does per row is done once, and the
work that is not the UI's runs elsewhere (docs/performance.md, the `tui_open` stall).

Counts and threads, never times: a fill batch repaints no line already painted, the table does not measure
rows ThemedTable measured, a Resize that keeps the table's size repaints nothing, the intervals replace one
cell a row with one repaint, no view or cells are written out (repr) on the UI thread, the density plot is
imported on a worker thread, the workers run below the UI thread's priority, and keys typed while the
table fills are handled in order.
"""

from __future__ import annotations

import importlib.abc
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, RenderableType
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.coordinate import Coordinate
from textual.geometry import Size
from textual.widgets import DataTable

from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.lesson_cells import LessonCells
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.source_views import LessonsView
from lesson_credit.tui.widgets.themed_table import FILL_BATCH, FILL_FIRST, ThemedTable
from tests.support.textual_private import count_table_measures, type_ahead
from tests.tui.tui_fixture import fixed_clock, lesson, settle

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
        await settle(pilot)
        assert renders.count >= visible


async def test_the_table_does_not_measure_again_the_rows_themed_table_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    # Textual measures every new row when the table is next idle: 0.2 ms a row, a second time (add_row has the widths).
    calls = count_table_measures(monkeypatch)
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(ThemedTable)
        table.fill(rows(N))
        await settle(pilot)
        assert table.row_count == N
        assert 0 < calls[0] < N  # the headers and a few relayouts, not every cell (2N)
        widths = [column.content_width for column in table.ordered_columns]
        assert widths == [6, 12]  # as wide as the cells: add_row widened them


def big_library(root: Path, lessons: int = LESSONS) -> Workspace:
    """`lessons` lesson files, a few sessions using some of them."""
    for i in range(lessons):
        path = root / "lessons" / f"cat{i % 4}" / f"lesson-{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(lesson([f"keyword{i}"], f"Lesson {i}"), encoding="utf-8")
    journal = root / "state" / "journals" / "j.md"
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text("Ran pytest and made one commit.\n", encoding="utf-8")
    ws = Workspace(root, clock=fixed_clock)
    for s in range(6):
        used = [f"cat{i % 4}/lesson-{i:04d}.md" for i in range(s, lessons, 37)]
        ws.record(
            f"s{s}", journal, used, reward=0.2 + 0.1 * s, category="code", timestamp=f"2026-03-0{s + 1}T10:00:00Z"
        )
    return Workspace(root, clock=fixed_clock)


def cell_ids(table: DataTable[Any]) -> dict[tuple[str, str], int]:
    return {
        (str(row.value), str(column.value)): id(table.get_cell(row, column))
        for row in table.rows
        for column in table.columns
    }


async def test_the_intervals_replace_one_cell_a_row_with_one_repaint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first view comes without intervals (as in a fresh process: scipy not imported yet); when they land,
    # every row changed, and every cell of every row was set, each with Textual's update_cell (a repaint
    # each): 24,000 for 3,000 lessons, 0.15-0.5 s of event loop.
    monkeypatch.setattr(beta_mod, "loaded", lambda: False)
    # The joint effects are fitted meanwhile and may land between the intervals' build and their arrival:
    # the intervals' cells then no longer match what is shown, and every cell is set again (the right text,
    # more repainting). That race is not what this counts: no fit here.
    monkeypatch.setattr(LessonsScreen, "_fit_effects", lambda self: None)
    ws = big_library(tmp_path)
    before: dict[tuple[str, str], int] = {}
    after: dict[tuple[str, str], int] = {}
    refreshes: list[int] = []
    real = LessonsScreen._update_in_place  # what the intervals' handler calls with them

    def spying(self: LessonsScreen, *args: Any) -> bool:
        table = self.query_one("#lessons-table", ThemedTable)
        before.update(cell_ids(table))
        real_refresh = table.refresh
        count = 0

        def counting(*args: Any, **kwargs: Any) -> Any:
            nonlocal count
            count += 1
            return real_refresh(*args, **kwargs)

        table.refresh = counting  # type: ignore[method-assign]  # this table, while the intervals land
        try:
            return real(self, *args)
        finally:
            del table.refresh
            refreshes.append(count)
            after.update(cell_ids(table))

    monkeypatch.setattr(LessonsScreen, "_update_in_place", spying)
    app = LessonCreditApp(ws, seed=0, poll_seconds=0)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)  # the intervals land while the table fills: rows added then and rows waiting
        screen = app.screen
        assert isinstance(screen, LessonsScreen) and screen.view is not None and not screen.view.intervals_missing
        table = screen.query_one("#lessons-table", ThemedTable)
        assert table.row_count == LESSONS and len(refreshes) == 1
        replaced = {key for key, ident in before.items() if after[key] != ident}
        added = {path for path, _ in before}
        assert replaced == {(path, "interval") for path in added}  # the interval cells only, of the rows added then
        assert refreshes[0] <= 2  # one repaint (and a relayout when a column widened), not one per cell
        for path, _ in before:  # and they show the intervals
            row = screen.view.row(path)
            assert row is not None and str(table.get_cell(path, "interval")).strip() != "…"


async def test_no_view_or_cells_are_written_out_on_the_ui_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Textual describes a worker by the repr of its arguments, on the thread that starts it: a 3,000-lesson
    # view's repr is 2.8 MB (30-60 ms of event loop), and a reload's cells as long.
    monkeypatch.setattr(beta_mod, "loaded", lambda: False)  # the intervals worker runs too
    threads: list[str] = []

    def recording(self: object) -> str:
        threads.append(threading.current_thread().name)
        return f"<{type(self).__name__}>"

    monkeypatch.setattr(LessonsView, "__repr__", recording)
    monkeypatch.setattr(LessonCells, "__repr__", recording)
    ws = big_library(tmp_path, lessons=20)
    app = LessonCreditApp(ws, seed=0, poll_seconds=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonsScreen) and screen.view is not None and not screen.view.intervals_missing
        screen.reload()  # a reload passes the cells it has
        await settle(pilot)
    assert threading.main_thread().name not in threads


async def test_keys_typed_while_a_big_table_fills_are_handled_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The table's batches wait until the keys are typed (on a busy machine the polling below could
    # otherwise see the view only after the last batch), then go on as they would, among the keys.
    held = True
    fill_more = ThemedTable._fill_more

    def held_back(self: ThemedTable, fill: int) -> None:
        if held:
            self.call_after_refresh(self._fill_more, fill)
        else:
            fill_more(self, fill)

    monkeypatch.setattr(ThemedTable, "_fill_more", held_back)
    ws = big_library(tmp_path)
    app = LessonCreditApp(ws, seed=0, poll_seconds=0)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        assert isinstance(screen, LessonsScreen)
        for _ in range(2000):  # until the first rows are on screen (a minute: only a hang fails)
            if screen.view is not None:
                break
            await pilot.pause(0.01)
        table = screen.query_one("#lessons-table", ThemedTable)
        # down three rows and pin that lesson, down two more and pin it too: typed at once, while the table fills
        filling = table.filling
        type_ahead(app, "down", "down", "down", "p", "down", "down", "p")
        held = False
        table.refresh()
        await settle(pilot)
        shown = [str(key.value) for key in table.rows]
        assert len(shown) == LESSONS
        assert screen.pins == [shown[3], shown[5]]
        assert screen.highlighted == shown[5]
        assert filling  # the keys really came while the rows were still being added


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


async def test_the_density_plot_is_imported_off_the_ui_thread(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The plot beside the Lessons table mounts after the first rows; importing it (plotext) held the event
    # loop 30-70 ms while a big table filled.
    name = "lesson_credit.tui.widgets.density_plot"
    importers: list[str] = []

    class Recorder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
            if fullname == name:
                importers.append(threading.current_thread().name)
            return None  # the usual finders import it

    monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(sys, "meta_path", [Recorder(), *sys.meta_path])
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.screen.query_one("#lesson-plot").query("DensityPlot")  # mounted
    assert importers and threading.main_thread().name not in importers


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own niceness is Linux's")
@pytest.mark.skipif(
    sys.platform == "linux" and os.getpriority(os.PRIO_PROCESS, 0) >= 19, reason="the suite runs at the lowest priority"
)
async def test_the_workers_run_below_the_ui_threads_priority(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # At start-up on a big log five workers ran beside the UI thread at its priority: on a busy 2-core
    # machine they took the CPU it needed to paint and to answer keys. (The first Lessons view is not
    # one of them: the first paint waits for it, tests/tui/test_tui_first_frame.py.)
    seen: list[tuple[str, int]] = []
    real = WorkspaceSource.p_top_k

    def recording(self: WorkspaceSource) -> tuple[int, Mapping[str, float]]:
        seen.append((threading.current_thread().name, os.getpriority(os.PRIO_PROCESS, 0)))
        return real(self)

    monkeypatch.setattr(WorkspaceSource, "p_top_k", recording)
    ws = big_library(tmp_path, lessons=20)
    app = LessonCreditApp(ws, seed=0, poll_seconds=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        ui = os.getpriority(os.PRIO_PROCESS, 0)  # this thread runs the app's event loop
        assert seen, "P(top-k) was estimated"
        name, niceness = seen[0]  # a worker of the start-up work that follows the first frame
        assert name != threading.current_thread().name
        assert niceness > ui
