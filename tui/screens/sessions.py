"""Screen 2: the session history, newest first, with reward over time; pending sessions stand out."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, ClassVar, cast

import numpy as np
import numpy.typing as npt
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from lesson_credit.core.api import SessionSummary, SessionTable, order_rows
from lesson_credit.tui.grading import Grading
from lesson_credit.tui.next_pending import ListOrder
from lesson_credit.tui.screens.base import screen_css
from lesson_credit.tui.screens.sortable import SortableScreen
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.source_views import SessionsView
from lesson_credit.tui.text import EMPTY_WORKSPACE_HINT, counted, fmt, fmt_time, listed, one_line, spaced
from lesson_credit.tui.widgets.filter_box import FilterBox
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.reward_plot import RewardPlot
from lesson_credit.tui.widgets.themed_table import FILL_FIRST, ThemedTable
from lesson_credit.tui.widgets.title_bar import TitleBar
from lesson_credit.tui.widths import NARROW_BELOW, sort_column_second

PROBLEMS_SHOWN = 3
MAX_ROWS = 1000  # newest matching sessions shown; the filter reaches the rest


def problems_text(view: SessionsView, store: str) -> Text:
    """The log's problems, naming the store they are in (its file's name, or the database's URL)."""
    problems = view.log_problems
    out = Text()
    out.append(f"⚠ {counted(len(problems), 'problem')} in {store}: ", style="bold")
    shown = [one_line(str(p)) for p in problems[:PROBLEMS_SHOWN]]
    out.append(listed(shown, PROBLEMS_SHOWN, "; ", total=len(problems), ellipsis=True))
    return out


# column key -> (header, how its rows are ordered): `sessions --sort`'s order (core.query.order_rows) over
# every matching session, so the table and the CLI agree, ties included (log order; a pending grade, a
# missing category or grader last either way). "time" (log order, newest first) is the default.
SESSION_SORTS: dict[str, tuple[str, Callable[..., Any]]] = {
    key: (header, partial(order_rows, column=column))
    for key, header, column in (
        ("id", "session", "id"),
        ("time", "time", "line"),
        ("category", "category", "category"),
        ("grade", "grade", "reward"),
        ("grader", "grader", "grader"),
        ("lessons", "lessons", "lessons"),
        ("salience", "mean salience", "salience"),
    )
}
LESSON_PREFIX = "lesson:"
IntRows = npt.NDArray[np.int64]
OrderKey = tuple[str, str, bool]  # (the filter shown, the sort column, reversed)


class SessionsScreen(SortableScreen):
    """Every logged session; enter opens one to see why each lesson was credited and to grade it."""

    AUTO_FOCUS = "#sessions-table"
    DEFAULT_CSS = screen_css("sessions.tcss")
    HELP = (
        "The session history, newest first. Pending sessions (not graded yet) are marked; enter opens one, "
        "n the first pending one from the highlighted row down, and n on a session opened from here the next "
        "one down this list (as sorted and filtered; from elsewhere n follows the grading queue, I). v lists "
        "only the pending ones. o / r / "
        "a header click sort every matching session as `lesson-credit sessions --sort` does (the first 1,000 "
        "are listed); home / end go to the first / last row. The filter matches id, category, grader or "
        "date, or `lesson:ID` the sessions a lesson was injected in. On a 24-row terminal the reward plot is "
        "folded away: x shows it."
    )
    SORT_COLUMNS = SESSION_SORTS
    DESCENDING_FIRST = ("time", "grade", "lessons", "salience")
    # below 100 columns "sal" and the time without its year; the sort column comes second (as on Lessons) and the
    # category is cut to keep the columns after it in sight: "autonomous-run" and "record:judge" (the demo's)
    # pushed "sal" past 80 columns, so sorted by it no header said what the rows were ordered by
    NARROW_HEADERS = {"salience": "sal"}
    FILTER_BOX = "session-filter"
    HOLDS_KEYS_UNTIL_LOADED = True

    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: shown in the footer over the table's own (hidden) enter; off while typing a filter
        Binding("enter", "open_session", "Open", priority=True),
        Binding("v", "toggle_pending", "Pending only"),
        Binding("n", "next_pending", "Next to grade"),
        Binding("slash", "focus_filter", "Filter"),
        Binding("o", "cycle_sort", "Sort by next column", show=False),
        Binding("r", "reverse_sort", "Reverse order", show=False),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("x", "toggle_expand", "Show / fold the plot"),  # in the footer where it folds (check_action)
    ]

    class Loaded(Message):
        def __init__(self, view: SessionsView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, source: WorkspaceSource) -> None:
        super().__init__(source, "time")
        self.view: SessionsView | None = None
        self.pending_only = False
        self.highlighted: str | None = None
        self._order: tuple[SessionsView, OrderKey, ListOrder] | None = None  # the list's order as last built
        self._order_job: tuple[SessionsView, OrderKey] | None = None  # the build under way
        self._order_failed: tuple[SessionsView, OrderKey] | None = None  # a build that failed: not tried again
        self._after_order: list[Callable[[], Awaitable[None]]] = []  # `n` typed before the order landed

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield RewardPlot(id="reward-plot")
        yield FilterBox("filter: id, category, grader, date, or lesson:ID  (/)", id="session-filter")
        yield Static(id="sessions-summary")
        yield Static(Text(EMPTY_WORKSPACE_HINT), id="sessions-empty")
        yield ThemedTable(id="sessions-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="log-problems")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = "Sessions"
        self.sub_title = self.source.name
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._rebuild())
        table = self.query_one("#sessions-table", ThemedTable)
        table.focus()
        self.busy(table, delay=0)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open_session" and isinstance(self.focused, Input):
            return False  # enter submits the filter instead
        return action != "toggle_expand" or self.has_class("-short")  # the plot folds on a short terminal only

    def reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="sessions")
    def _load(self) -> None:
        self.post_result(self.source.sessions_view, self.Loaded)

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        self.view = event.view
        self.done(self.query_one("#sessions-table", ThemedTable))
        self.query_one("#reward-plot", RewardPlot).series = event.view.rewards
        problems = self.query_one("#log-problems", Static)
        problems.display = bool(event.view.log_problems)
        if event.view.log_problems:
            problems.update(problems_text(event.view, self.source.store_name))
        self._rebuild()
        self.refresh_bindings()  # the footer's keys depend on the table having rows
        self.ready_for_keys()

    def _rebuild(self) -> None:
        if self.view is None or not self.is_mounted:
            return
        table = self.query_one("#sessions-table", ThemedTable)
        keep = table.row_to_keep(self.highlighted)
        refiltered = self.shown_filter != self.filter_text
        self.shown_filter = self.filter_text
        newest_first = self.sort_column == "time" and self.sort_reverse
        limit = MAX_ROWS if newest_first else len(self.view.table)  # another order needs every match
        # over the columns: SessionSummary objects only for the rows shown
        count, rows = self._matching(self.view, self.filter_text, self.pending_only, limit)
        rows = rows[:MAX_ROWS]
        sessions = [self.view.table.summary(row) for row in rows.tolist()]
        if self.pending_only:  # not pending as the operator will find it: graded here (`n` goes by the same)
            writes = cast(Grading, self.app).writes
            sessions = writes.still_to_grade(sessions, self.view.read_at, lambda s: s.session_id)
            listed = {s.session_id for s in sessions}
            if keep is not None and keep not in listed and not refiltered:  # graded (here or not): the row after it
                keep = table.next_kept(keep, listed) or keep
        table.clear(columns=True)
        headers = dict(self.sort_headers())
        order = sort_column_second(list(SESSION_SORTS), self.sort_column)
        places = [list(SESSION_SORTS).index(key) for key in order]  # cells come in SESSION_SORTS order
        # below 100 columns one space between columns, not two cells of padding: at 80 the demo's mean salience
        # was one cell past the edge, beside categories whole
        narrow = self.size.width < NARROW_BELOW
        table.cell_padding = 0 if narrow else 1
        for key in order:
            table.add_column(" " + headers[key] if narrow else headers[key], key=key)
        ids = [s.session_id for s in sessions]
        at = ids.index(keep) if keep in ids else 0
        cells = [(s.session_id, self._cells(table, s)) for s in sessions]
        if narrow:
            cells = [(key, [spaced(cell) for cell in row]) for key, row in cells]
        table.fill([(key, [row[i] for i in places]) for key, row in cells], first=max(FILL_FIRST, at + FILL_FIRST))
        self._fit_category_column()
        # told now (`enter` typed ahead reads it); None on an empty list: enter must not open a session no longer listed
        self.highlighted = table.restore_cursor(ids, keep)
        total = len(self.view.table)
        summary = Text()
        summary.append(f"{counted(total, 'session')} · {self.view.pending} pending")
        if self.pending_only or self.filter_text or count > len(sessions):
            summary.append(f" · showing {len(sessions)}", style="bold")
            if count > len(sessions):
                if newest_first:
                    summary.append(f" newest of {count} (filter with / to find older ones)", style="bold")
                else:
                    first = f"first by {SESSION_SORTS[self.sort_column][0]}"
                    summary.append(f" {first} of {count} (filter with / to narrow them)", style="bold")
            if self.pending_only:
                summary.append(" (pending only: v shows all)", style="italic")
        self.query_one("#sessions-summary", Static).update(summary)
        self._no_matches(total, count)
        self._build_order()  # `n` reads it: built now, off the app's thread, for the list as it shows

    def _fit_category_column(self) -> None:
        """The category column as wide as the table leaves it: the columns after it whole or out of sight
        (none cut in part at the edge), in sight if the categories cut to an ellipsis make room."""
        table = self.query_one("#sessions-table", ThemedTable)
        order = [column.key.value for column in table.ordered_columns]
        if "category" in order:
            at = order.index("category")
            table.fit_name_column(len(order) - at - 1, at=at)

    def on_themed_table_resized(self, message: ThemedTable.Resized) -> None:
        if message.table.id == "sessions-table":
            self._fit_category_column()

    def _no_matches(self, total: int, matched: int) -> None:
        """Below an empty table: nothing logged yet (the hint), or nothing matching (say what to clear)."""
        empty = self.query_one("#sessions-empty", Static)
        empty.display = not total or not matched
        if not total:
            empty.update(Text(EMPTY_WORKSPACE_HINT))
        elif not matched:
            why = f"the filter {self.filter_text!r}" if self.filter_text else "pending only"
            clear = "escape clears the filter" if self.filter_text else "v shows all"
            empty.update(Text(f"No sessions match {why} ({clear})."))

    def _cells(self, table: ThemedTable, s: SessionSummary) -> list[Text]:
        tone = "warning" if s.pending else None
        grade = "pending" if s.base_reward is None else fmt(s.base_reward, 3)  # the CLI's places (`sessions`, `show`)
        if self.view is not None and s.session_id in self.view.words:  # gptme's word: noop, failed... differ
            grade = one_line(self.view.words[s.session_id])
        troubled = self.view is not None and s.session_id in self.view.troubled
        return [
            # ⚠: a line of the log about this session could not be used (listed below the table)
            table.toned(("⚠ " if troubled else "") + one_line(s.session_id), "warning" if troubled else tone),
            table.toned(fmt_time(s.timestamp, year=self.size.width >= NARROW_BELOW), None),
            table.toned(one_line(s.category, "—"), None, overflow="ellipsis"),
            Text(grade, style=table.tone("warning") if s.pending else "", justify="right"),
            # pending once, under grade: no one scored it, so no grader (the cell read "pending" twice)
            table.toned("—" if s.pending else one_line(s.grader, "—"), tone),
            Text(str(s.n_lessons), justify="right"),
            Text(fmt(s.mean_salience), justify="right"),
        ]

    def on_screen_resume(self) -> None:
        """Back from a session graded here: the pending list drops it at once, not when the log has been read
        again (the base class's reload, a worker), so `escape enter` typed ahead opens the next pending one. Its
        write may have been read in a snapshot while this screen was under the session's: the list still has it."""
        if not self.pending_only or self.view is None:
            return
        writes, read_at = cast(Grading, self.app).writes, self.view.read_at
        table = self.query_one("#sessions-table", ThemedTable)
        if any(writes.graded_unread(key.value, read_at) for key in table.rows if key.value is not None):
            self._rebuild()

    @on(DataTable.RowHighlighted, "#sessions-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None or event.row_key.value is None:
            return  # an empty table (filtered to nothing, or nothing yet)
        self.highlighted = event.row_key.value

    @on(DataTable.RowSelected, "#sessions-table")
    async def _row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key is None or event.row_key.value is None:
            return  # an empty table (filtered to nothing, or nothing yet)
        self.highlighted = event.row_key.value
        await self.action_open_session()

    async def action_open_session(self) -> None:
        if self.highlighted is None:
            return
        await cast(Grading, self.app).open_session(self.highlighted)

    async def action_next_pending(self) -> None:
        """The first pending session at or below the highlighted row, in the list's order (sessions with a grade
        still being written are skipped); a session opened from here goes on down the list with its own `n`."""
        await cast(Grading, self.app).open_next_pending(None)

    def _matching(
        self, view: SessionsView, text: str, pending_only: bool, limit: int, sort: tuple[str, bool] | None = None
    ) -> tuple[int, IntRows]:
        """(how many sessions `text` matches, their rows in the list's order): newest first up to `limit`; in any
        other order every match, sorted (the order of `sessions --sort`). `sort`: (column, reverse), the screen's
        when None; a worker passes the one it builds the order for (it reads nothing else of the screen)."""
        column, reverse = (self.sort_column, self.sort_reverse) if sort is None else sort
        if text.lower().startswith(LESSON_PREFIX):
            found = view.with_lesson(text[len(LESSON_PREFIX) :].strip(), pending_only, limit)
        else:
            found = view.search.find(text, pending_only, limit)
        rows = found.rows  # newest first
        if not (column == "time" and reverse):
            rows = SESSION_SORTS[column][1](view.table, np.sort(rows), descending=reverse)
        return found.count, np.asarray(rows, dtype=np.int64)

    # ---------------------------------------------------------------- the list's order, for `n`

    def _order_key(self) -> OrderKey:
        """What the list's order depends on besides its read: the filter the rows show (not one still being typed)
        and the sort."""
        return (self.shown_filter, self.sort_column, self.sort_reverse)

    def list_order(self) -> tuple[ListOrder, SessionTable] | None:
        """Every session the filter matches (pending or not, none cut at the rows shown), in the list's order, as
        rows of `table`, with those pending when it was read; None before the list is read, or while its order is
        being built (`order_building`). Built once per list read, filter and sort, in a worker (`_build_order`):
        `n` costs the sessions it looks at, not a search and a sort of all on the app's thread (1.4 s for the first
        `n` at a million sessions)."""
        view, built = self.view, self._order
        if view is None or built is None or built[0] is not view or built[1] != self._order_key():
            return None
        return built[2], view.table

    @property
    def order_building(self) -> bool:
        """The list is read and its order for the filter and sort shown is on its way (`after_order` waits)."""
        view = self.view
        return view is not None and self.list_order() is None and self._order_failed != (view, self._order_key())

    def after_order(self, call: Callable[[], Awaitable[None]]) -> None:
        """`call` once the order of the list as it shows then has landed (or its build failed): `n` typed before."""
        self._after_order.append(call)
        self._build_order()

    def _build_order(self) -> None:
        """Start building the list's order for the list as it shows, one build at a time: a filter typed or a sort
        chosen meanwhile is built once the build under way lands (only the last one asked for)."""
        if not self.order_building or self._order_job is not None:
            return
        assert self.view is not None  # (order_building)
        self._order_job = (self.view, self._order_key())
        self._order_worker(*self._order_job)

    @work(thread=True, group="list-order", description="the Sessions list's order")
    def _order_worker(self, view: SessionsView, key: OrderKey) -> None:
        shown, column, reverse = key
        order: ListOrder | None
        try:
            rows = self._matching(view, shown, False, len(view.table), (column, reverse))[1]
            order = ListOrder.of(rows, view.search.pending_rows, len(view.table))
            snapshot = getattr(self.app, "snapshot", None)
            if snapshot is not None and len(snapshot.session_ids):  # `n` finds rows by id: their table sorted now
                snapshot.session_ids.index(snapshot.session_ids[0])
        except Exception as exc:  # reported, not raised: a worker must not take the app down
            self.fail(exc)
            order = None
        self.app.call_from_thread(self.call_later, self._order_landed, view, key, order)

    async def _order_landed(self, view: SessionsView, key: OrderKey, order: ListOrder | None) -> None:
        self._order_job = None
        if order is not None:
            self._order = (view, key, order)
        else:
            self._order_failed = (view, key)  # (what waits goes on: the app says the order could not be read)
        self._build_order()  # the list shown changed meanwhile: its order next
        if self._order_job is not None:
            return  # what waits, waits for that one
        waiting, self._after_order = self._after_order, []
        for call in waiting:
            await call()

    def action_toggle_expand(self) -> None:
        """x: on a 24-row terminal the reward plot is folded away (the rows are the answer); x shows it."""
        self.toggle_class("-expanded")

    def action_toggle_pending(self) -> None:
        self.pending_only = not self.pending_only
        self._rebuild()

    def action_focus_filter(self) -> None:
        self.query_one("#session-filter", Input).focus()

    def action_clear_filter(self) -> None:
        self.query_one("#session-filter", Input).value = ""
        self.filter_typed("")
        self.apply_filter()
        self.query_one("#sessions-table", ThemedTable).focus()

    @on(Input.Changed, "#session-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_typed(event.value)

    @on(Input.Submitted, "#session-filter")
    def _filter_submitted(self) -> None:
        self.apply_filter()
        self.query_one("#sessions-table", ThemedTable).focus()
