"""Screen 1, the home screen: every lesson's posterior, sortable and filterable, with its density."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, ClassVar, cast

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Static
from textual.worker import get_current_worker

from lesson_credit.tui.background import at_ui_priority
from lesson_credit.tui.grading import Grading
from lesson_credit.tui.lesson_cells import PIN_MARK as PIN_MARK  # imported from here too
from lesson_credit.tui.lesson_cells import LessonCells, lesson_cells, name_cell, name_only_cells
from lesson_credit.tui.lesson_cells import lesson_name as lesson_name
from lesson_credit.tui.lesson_sorts import LESSONS_HELP, SORTS, lessons_title, matches, sorted_rows
from lesson_credit.tui.messages import FirstViewShown
from lesson_credit.tui.screens.base import screen_css
from lesson_credit.tui.screens.sortable import SortableScreen
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.source_views import BROKEN, MAX_PINS, LessonsView
from lesson_credit.tui.text import EMPTY_WORKSPACE_HINT, no_lesson_listed
from lesson_credit.tui.textual_private import after_shown
from lesson_credit.tui.widgets.beta_plot import BetaPlot, Curve
from lesson_credit.tui.widgets.filter_box import FilterBox
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.key_scroll import KeyScroll
from lesson_credit.tui.widgets.lesson_panel import LessonDetail, LessonPanel
from lesson_credit.tui.widgets.themed_table import FILL_FIRST, ThemedTable
from lesson_credit.tui.widgets.title_bar import TitleBar
from lesson_credit.tui.widths import sort_column_second

if TYPE_CHECKING:
    from lesson_credit.core.api import LessonRow

PLOT_ROWS = 9  # the densities' rows at least: the title, the box, four rows of curves (pins told apart at 80x24),
# the axis and its labels; below it the panel shows its numbers to "injected in" there, and its box scrolls
# (tab, then the arrows) to the rest
NAMES_FRAME_LATEST_S = 1.0  # the first read waits this long at most for the names' frame (held repaints)


class LessonsScreen(SortableScreen):
    """Lessons table, the highlighted lesson's Beta density (with pins and the prior), its facts."""

    DEFAULT_CSS = screen_css("lessons.tcss")
    AUTO_FOCUS = "#lessons-table"
    HELP = LESSONS_HELP  # (what each column means)

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_filter", "Filter"),
        Binding("o", "cycle_sort", "Sort by next column"),
        Binding("r", "reverse_sort", "Reverse order"),
        Binding("p", "toggle_pin", "Pin"),
        Binding("P", "clear_pins", "Clear pins", show=False),
        # priority: shown in the footer over the table's own (hidden) enter; off while typing a filter
        Binding("enter", "open_last_session", "Open last graded session", priority=True),
        Binding("w", "what_if", "What-if"),
        Binding("d", "over_time", "The highlighted lesson over time"),
        Binding("R", "toggle_retired", "Show or hide retired arms", show=False),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]
    SORT_COLUMNS = SORTS
    FILTER_BOX = "filter"
    HOLDS_KEYS_UNTIL_LOADED = True
    LESSON_IN_VIEW = "highlighted"
    DESCENDING_FIRST = ("n", "mean", "interval", "effect", "last")
    CYCLE_KEEPS_DIRECTION = True

    class Named(Message):
        def __init__(self, names: tuple[str, ...]) -> None:
            super().__init__()
            self.names = names

    class Loaded(Message):
        def __init__(self, view: LessonsView, cells: LessonCells | None = None) -> None:
            super().__init__()
            self.view = view
            self.cells = cells

    def __init__(self, source: WorkspaceSource) -> None:
        super().__init__(source, sort_column="mean")
        self.view: LessonsView | None = None
        self.cells: LessonCells | None = None  # the view's cells, built off the UI thread
        self._tones: Mapping[str, Style] = {}  # the table's tones as of the current fill
        self.pins: list[str] = []
        self.highlighted: str | None = None
        self.shown: list[str] = []  # lesson ids in table order
        self.show_retired = False  # arms `prune` retired are hidden, as `lesson-credit status` hides them
        self._names_shown = threading.Event()  # the first frame (the names) is drawn: the first read may start
        self._fitting = False  # a worker waits for the joint fit (`_fit_effects`): the next starts after it

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield FilterBox("filter lessons: id, title, category or status  (/)", id="filter")
        yield Static(Text(EMPTY_WORKSPACE_HINT), id="lessons-empty")
        with Horizontal(id="lessons-body"):
            yield ThemedTable(id="lessons-table", cursor_type="row", zebra_stripes=True, cell_padding=0)
            with Vertical(id="lessons-side"):
                yield BetaPlot(plot_rows=PLOT_ROWS, id="lesson-plot")
                with KeyScroll(id="lesson-panel-box"):  # as tall as the plot leaves (`_fit_panel`): the rest scrolls
                    yield LessonPanel(id="lesson-panel")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = "Lessons"
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._rebuild())
        table = self.query_one("#lessons-table", ThemedTable)
        table.focus()
        self.busy(table)

    # ---------------------------------------------------------------- loading

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open_last_session" and isinstance(self.focused, Input):
            return False  # enter submits the filter instead
        return True

    def reload(self) -> None:
        # the theme's tones are read here, on the UI thread: the worker builds the cells with them
        view = self.view
        shown = None if view is None or view.effects is None else (view.effects_of, view.effects)
        self._load(self.query_one("#lessons-table", ThemedTable).tones(), shown, self.cells)

    # Each worker that takes a view or cells has a description: Textual's default is the repr of its
    # arguments, built on the UI thread (a 3,000-lesson view's is 2.8 MB: 30-60 ms of event loop).
    @work(exclusive=True, group="lessons", description="the Lessons view")
    async def _load(
        self,
        tones: Mapping[str, Style],
        shown: tuple[int | None, Mapping[str, float]] | None = None,
        cells: LessonCells | None = None,
    ) -> None:
        # the first view may come without intervals ("…" until `_fill_intervals` adds them); without
        # its own joint effects it shows those shown until now (an older log's) while they are fitted
        def compute() -> tuple[LessonsView, LessonCells] | None:
            self.source.call(lambda _ws: None)  # the log's first read, which another screen may need too
            if not self.in_view:
                return None  # a key typed meanwhile opened another screen: its view first (`Deferred`)
            view = self.source.lessons_view()
            if view.effects is None and shown is not None:
                view = replace(view, effects=shown[1], effects_of=shown[0])
            return view, LessonCells.build(view.rows, tones, view.effects, cells)

        worker = get_current_worker()  # (the read's thread has none: a newer load cancels this one)

        def load(first: bool = False) -> None:
            if first:  # the names first: the numbers wait for the log's first read (seconds at 1M sessions)
                self.post_result(self.source.lesson_names, self.Named, worker)
                # and that read (with the engine's import, the workspace's open) for their frame, which it
                # would otherwise hold up: it holds the GIL the UI thread paints with
                self._names_shown.wait(NAMES_FRAME_LATEST_S)
            self.post_result(
                compute, lambda loaded: self.Deferred() if loaded is None else self.Loaded(*loaded), worker
            )

        if self.view is None:  # the first paint waits for it: not niced like the background work
            await at_ui_priority(partial(load, True))
        else:
            await asyncio.get_running_loop().run_in_executor(None, load)

    @on(Named)
    def _named(self, event: Named) -> None:
        """The first frame, before the first read: each lesson's name, "…" for its numbers. Keys wait
        for the view (`ready_for_keys`), which replaces these rows in its own order."""
        table = self.query_one("#lessons-table", ThemedTable)
        if self.view is not None or not event.names or table.columns:  # (a deferred first load names again)
            self._names_shown.set()
            return
        self.done(table)
        headers = dict(self.sort_headers())
        for key in sort_column_second(list(SORTS), self.sort_column):
            table.add_column(Text(" " + headers[key]), key=key)
        table.fill([(name, name_only_cells(name, len(SORTS))) for name in event.names])
        after_shown(self, self._names_shown.set)

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        previous, before = self.view, self.cells
        self.view = event.view
        self.cells = event.cells
        known = {row.path for row in event.view.rows}
        self.pins = [p for p in self.pins if p in known]
        self.done(self.query_one("#lessons-table", ThemedTable))
        if previous is None or not self._update_in_place(previous, before):
            self._rebuild()
        self._title()  # the policy in force may have changed (What-if saves it)
        self.refresh_bindings()  # the footer's keys depend on the table having rows
        self.ready_for_keys()
        # what the table can show without: computed once the frame with the rows is drawn, so
        # that their threads (and the imports they start) do not hold up the first paint
        after_shown(self, partial(self._complete, event.view))
        if previous is None:  # once that frame is drawn: what the app then starts must not delay it
            after_shown(self, partial(self.post_message, FirstViewShown()))

    def _complete(self, view: LessonsView) -> None:
        if self.view is None or self.view.version != view.version:
            return  # the log moved on: that reload completes its own view
        if self.view.intervals_missing:
            self._fill_intervals(self.view, self._tones, self.cells)
        if self.view.p_top_k is None:
            self._estimate()
        self._fit_effects()

    def _fit_effects(self) -> None:
        """Fit the joint effects of the view's log when those shown are older, unless a worker waits
        for a fit already: its answer starts the next fit if the log moved on meanwhile. One worker at
        a time: a cancelled thread worker keeps its thread until the fit it waits for ends (seconds
        at 1M sessions), and Textual's workers share a few threads (six on two cores)."""
        view = self.view
        if self._fitting or view is None or (view.effects_of is not None and view.effects_of >= view.version):
            return
        self._fitting = True
        self._estimate_effects(self._tones)

    class IntervalsFilled(Message):
        def __init__(self, view: LessonsView, cells: LessonCells) -> None:
            super().__init__()
            self.view = view
            self.cells = cells

    @work(thread=True, exclusive=True, group="lessons-intervals", description="the Lessons intervals")
    def _fill_intervals(self, view: LessonsView, tones: Mapping[str, Style], cells: LessonCells | None) -> None:
        def compute() -> tuple[LessonsView, LessonCells]:
            filled = self.source.with_intervals(view)
            effects = self.view.effects if self.view else None
            return filled, LessonCells.build(filled.rows, tones, effects, cells)  # only the interval cells new

        self.post_result(compute, lambda result: self.IntervalsFilled(*result))

    @on(IntervalsFilled)
    def _intervals_filled(self, event: IntervalsFilled) -> None:
        previous = self.view
        if previous is None or previous.version != event.view.version or not previous.intervals_missing:
            return  # the log moved on: the reload under way has its own intervals
        before = self.cells
        self.view = replace(previous, rows=event.view.rows, table=event.view.table)
        self.cells = event.cells
        if not self.is_mounted:
            return
        if not self._update_in_place(previous, before):
            self._rebuild()

    class EffectsComputed(Message):
        def __init__(self, version: int, effects: Mapping[str, float], cells: LessonCells) -> None:
            super().__init__()
            self.version = version
            self.effects = effects
            self.cells = cells

    @work(thread=True, group="lessons-effects", description="the lessons' joint effects")
    def _estimate_effects(self, tones: Mapping[str, Style]) -> None:
        def compute() -> tuple[int, Mapping[str, float], LessonCells]:
            try:
                version, effects = self.source.effects()
            finally:
                self._fitting = False  # before the message: its handler may start the next fit
            # the rows shown once the fit is done (the intervals may have been filled meanwhile): the
            # cells are then the ones the table shows, not built again on the UI thread
            view = self.view
            rows = view.rows if view is not None else ()
            return version, effects, LessonCells.build(rows, tones, effects)

        self.post_result(compute, lambda result: self.EffectsComputed(*result))

    @on(EffectsComputed)
    def _effects_computed(self, event: EffectsComputed) -> None:
        self._show_effects(event)
        self._fit_effects()  # the log moved on while this fit ran: fit the latest

    def _show_effects(self, event: EffectsComputed) -> None:
        view = self.view
        if view is None or (view.version != event.version and (view.effects_of or -1) >= event.version):
            return  # the log moved on and newer effects are shown: the reload under way fits them again
        self.view = replace(view, effects=event.effects, effects_of=event.version)
        self.cells = event.cells
        if not self.is_mounted:
            return
        table = self.query_one("#lessons-table", ThemedTable)
        if self.sort_column == "effect":
            self._rebuild()
            return
        position = list(SORTS).index("effect")
        shown = set(self.shown)  # the order stands: only the effect cells change (one repaint)
        table.set_cells(
            (row.path, "effect", self._cells(table, row)[position]) for row in self.view.rows if row.path in shown
        )
        self._fit_lesson_column()

    class Estimated(Message):
        def __init__(self, version: int, p_top_k: Mapping[str, float]) -> None:
            super().__init__()
            self.version = version
            self.p_top_k = p_top_k

    @work(thread=True, exclusive=True, group="lessons-p-top-k")
    def _estimate(self) -> None:
        self.post_result(self.source.p_top_k, lambda result: self.Estimated(*result))

    @on(Estimated)
    def _estimated(self, event: Estimated) -> None:
        if self.view is None or self.view.version != event.version:
            return  # the log moved on: the reload under way estimates again
        self.view = replace(self.view, p_top_k=event.p_top_k)
        self._show_highlighted()

    def _update_in_place(self, previous: LessonsView, before: LessonCells | None) -> bool:
        """After a log change, redraw only the rows that changed, and when the same rows now sort in
        another order, move them (DataTable.sort: one pass) rather than refill the table.

        A full rebuild of a big library's table blocks the screen for a moment (refilling 3,000 rows
        took seconds: the table measures its height again after every row added); a new session
        usually changes about ten lessons, and sorted by mean, moves them.
        """
        if self.view is None or self.filter_pending:
            return False
        rows = [r for r in self._listed() if matches(r, self.filter_text)]
        rows = sorted_rows(tuple(rows), self.sort_column, self.sort_reverse, self.view.effects)
        order = [row.path for row in rows]
        table = self.query_one("#lessons-table", ThemedTable)
        if order != self.shown and (table.filling or set(order) != set(self.shown)):
            return False
        old = {row.path: row for row in previous.rows}
        # the cells the table shows, when they are `before`'s: a cell the worker kept (the very object:
        # LessonCells.build) is not set again (the intervals change one cell in eight)
        shown_cells = (
            before.cells
            if before is not None and before.shown_for(previous.rows, previous.effects, self._tones)
            else {}
        )
        self._tones = table.tones()
        changes: list[tuple[str, str, Text]] = []
        for row in rows:
            if old.get(row.path) != row:
                was = shown_cells.get(row.path) if row.path not in self.pins else None
                cells = self._cells(table, row)
                if was is None:
                    changes += [(row.path, key, cell) for key, cell in zip(SORTS, cells, strict=True)]
                else:
                    changes += [(row.path, key, c) for key, c, w in zip(SORTS, cells, was, strict=True) if c is not w]
        table.set_cells(changes)
        if order != self.shown:
            keep = table.row_to_keep(self.highlighted)  # the row a key moved to, maybe not reported yet
            first = next(iter(SORTS))
            place = {id(table.get_cell(path, first)): at for at, path in enumerate(order)}
            table.sort(first, key=lambda cell: place[id(cell)])
            self.shown = order
            # the lesson, not the line; told now, as `_rebuild` does
            self.highlighted = table.restore_cursor(order, keep) or self.highlighted
        self._fit_lesson_column()  # a cell may have widened its column
        self._show_highlighted()
        return True

    # ---------------------------------------------------------------- table

    def _rebuild(self) -> None:
        """Refill the table from the view, the filter, the sort and the pins; keep the highlight."""
        if self.view is None or not self.is_mounted:
            return
        table = self.query_one("#lessons-table", ThemedTable)
        self._tones = table.tones()
        self._title()
        self.shown_filter = self.filter_text
        rows = [r for r in self._listed() if matches(r, self.filter_text)]
        empty = self.query_one("#lessons-empty", Static)  # above an empty table: why it is empty
        empty.display = not rows
        empty.update(Text(no_lesson_listed(bool(self.view.rows), self.filter_text)))
        rows = sorted_rows(tuple(rows), self.sort_column, self.sort_reverse, self.view.effects)
        keep = table.row_to_keep(self.highlighted)
        table.clear(columns=True)
        headers = dict(self.sort_headers())
        order = sort_column_second(list(SORTS), self.sort_column)
        places = [list(SORTS).index(key) for key in order]  # cells come in SORTS order
        built = [self._cells(table, row) for row in rows]
        for key in order:
            table.add_column(Text(" " + headers[key]), key=key)
        self.shown = [row.path for row in rows]
        at = self.shown.index(keep) if keep in self.shown else 0
        table.fill(
            [(row.path, [cells[i] for i in places]) for row, cells in zip(rows, built, strict=True)],
            first=max(FILL_FIRST, at + FILL_FIRST),
        )
        # told now: `enter` typed ahead reads it; the first row, not the lesson left out, when that is not
        # listed (`d`, `p` typed ahead read it); an empty list keeps it (a filter cleared finds it again)
        self.highlighted = table.restore_cursor(self.shown, keep) or self.highlighted
        self._fit_lesson_column()  # the fill measured every row's cells
        self._show_highlighted()

    def resized(self, rebuild: bool) -> None:
        super().resized(rebuild)
        self.call_after_refresh(self._fit_lesson_column)
        self.call_after_refresh(self._fit_panel)

    def _fit_panel(self) -> None:
        """The panel's box as tall as the side column leaves below the plot's least height (its rows and its
        legend's lines, more with pins): the rest of the panel scrolls in the box, its bar saying so. At 80x24 the
        panel's last lines (avg salience, the last credit) ran under the footer with no sign."""
        least = self.query_one("#lesson-plot", BetaPlot).styles.min_height
        room = self.query_one("#lessons-side").size.height - (int(least.value) if least is not None else 0)
        self.query_one("#lesson-panel-box", KeyScroll).styles.max_height = max(3, room)

    def on_themed_table_resized(self, message: ThemedTable.Resized) -> None:
        """The table's first layout (a first load can land before it) or a later resize: fit the lesson column."""
        if message.table.id == "lessons-table":
            self._fit_lesson_column()

    def _fit_lesson_column(self) -> None:
        """The lesson column's width for the table's size: the columns after it whole or out of sight, and
        the sort column, n, mean, interval and ranking in sight, the names cut if need be (the panel shows
        the full id)."""
        if not self.is_mounted:
            return
        table = self.query_one("#lessons-table", ThemedTable)
        order = [column.key.value for column in table.ordered_columns]
        if "effect" in order:
            table.fit_name_column(max(order.index("effect"), order.index(self.sort_column)))

    def _listed(self) -> list[LessonRow]:
        """The view's rows the table lists: retired arms only after R (`status --all`)."""
        if self.view is None:
            return []
        if self.show_retired or not self.view.retired:
            return list(self.view.rows)
        return [row for row in self.view.rows if row.path not in self.view.retired]

    def _title(self) -> None:
        view = self.view
        retired = len(view.retired) if view is not None else 0
        self.title = lessons_title(view.policy if view else None, retired, self.show_retired, self._unused())

    def _unused(self) -> int:
        """Lessons never used, when sorted by mean (they come last); a broken file is not a lesson."""
        return sum(1 for r in self._listed() if r.n <= 0 and r.status != BROKEN) if self.sort_column == "mean" else 0

    def action_toggle_retired(self) -> None:
        if self.view is not None and not self.view.retired:
            self.notify("No retired arms: `prune` retires arms whose lesson file is gone.", markup=False)
            return
        self.show_retired = not self.show_retired
        self._rebuild()

    def _cells(self, table: ThemedTable, row: LessonRow) -> list[Text]:
        """The row's cells: the worker's, unless the row is pinned or the theme changed since."""
        pinned = row.path in self.pins
        built = self.cells
        view = self.view
        current = view is not None and built is not None and built.rows is view.rows and built.effects is view.effects
        if not pinned and built is not None and current and built.tones == self._tones:
            cells = built.cells.get(row.path)
            if cells is not None:
                return cells
        alike = built.alike if built is not None else None
        return lesson_cells(row, table.tone, pinned, self.view.effects if self.view is not None else None, alike)

    @on(DataTable.RowHighlighted, "#lessons-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None or event.row_key.value is None or self.view is None:
            return  # an empty table (filtered to nothing, or nothing yet), or the names before the view
        self.highlighted = event.row_key.value
        self._show_highlighted()

    @on(DataTable.RowSelected, "#lessons-table")
    async def _row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key is None or event.row_key.value is None or self.view is None:
            return  # an empty table (filtered to nothing, or nothing yet), or the names before the view
        self.highlighted = event.row_key.value
        await self.action_open_last_session()

    # ---------------------------------------------------------------- side panel

    def detail(self, path: str) -> LessonDetail | None:
        view = self.view
        if view is None:
            return None
        row = view.row(path)
        if row is None:
            return None
        return LessonDetail(
            row=row,
            usage=view.usage.get(path),
            p_top_k=view.p_top_k.get(path) if view.p_top_k is not None else None,
            k=view.k,
            lesson=view.lessons.get(path),
            problem=view.problems.get(path),
            pinned=path in self.pins,
            estimating=view.p_top_k is None,
        )

    def _show_highlighted(self) -> None:
        view = self.view
        if view is None:
            return
        path = self.highlighted if self.highlighted in self.shown else None
        detail = self.detail(path) if path else None
        self.query_one("#lesson-panel", LessonPanel).detail = detail
        settings = view.table.settings
        curves = [
            Curve(
                f"prior Beta({settings.prior_alpha:g},{settings.prior_beta:g})",
                settings.prior_alpha,
                settings.prior_beta,
                "prior",
            )
        ]
        for slot, pin in enumerate(self.pins):
            pinned = view.row(pin)
            if pinned is not None and pin != path:
                curves.append(Curve(pin, pinned.alpha, pinned.beta, "pin", slot))  # the legend cuts it to its line
        if detail is not None:
            curves.append(Curve(detail.row.path, detail.row.alpha, detail.row.beta, "main"))
        plot = self.query_one("#lesson-plot", BetaPlot)
        plot.plot_title = "posterior density"
        plot.curves = tuple(curves)
        self.call_after_refresh(self._fit_panel)  # a pin's legend line raises the plot's least height

    # ---------------------------------------------------------------- actions

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        self.filter_typed("")
        self.apply_filter()
        self.query_one("#lessons-table", ThemedTable).focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_typed(event.value)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.apply_filter()
        self.query_one("#lessons-table", ThemedTable).focus()

    def action_toggle_pin(self) -> None:
        path = self.highlighted
        if path is None or path not in self.shown:
            return
        if path in self.pins:
            self.pins.remove(path)
        elif len(self.pins) >= MAX_PINS:
            self.notify(
                f"At most {MAX_PINS} lessons can be pinned: unpin one first (p).", severity="warning", markup=False
            )
            return
        else:
            self.pins.append(path)
        self._mark_pin(path)

    def _mark_pin(self, path: str) -> None:
        """Redraw one row's pin mark (a full rebuild is slow with a big library), then the plot."""
        row = self.view.row(path) if self.view else None
        if row is not None:
            table = self.query_one("#lessons-table", ThemedTable)
            alike = self.cells.alike if self.cells is not None else None
            table.set_cell(path, "lesson", name_cell(row, table.tone, path in self.pins, alike))
            self._fit_lesson_column()  # the pin's mark may widen the names
        self._show_highlighted()

    def action_clear_pins(self) -> None:
        pinned, self.pins = self.pins, []
        for path in pinned:
            if path in self.shown:
                self._mark_pin(path)
        self._show_highlighted()

    async def action_open_last_session(self) -> None:
        if self.highlighted is None or self.highlighted not in self.shown:
            return  # the table is filtered to nothing (or the lesson is filtered out)
        detail = self.detail(self.highlighted)
        if detail is None:
            return
        if detail.row.last_session is None:
            self.notify("This lesson has not been in a graded session yet.", severity="information", markup=False)
            return
        await cast(Grading, self.app).open_session(detail.row.last_session, focus_lesson=detail.row.path)

    async def action_what_if(self) -> None:
        await self.app.run_action("what_if")  # (the app's: from any screen, on the lesson highlighted)

    def action_over_time(self) -> None:
        from lesson_credit.tui.screens.lesson_over_time import LessonOverTimeScreen

        if self.highlighted in self.shown:
            self.app.push_screen(LessonOverTimeScreen(self.source, self.highlighted))
