"""The grading queue: sessions waiting for a person, in the order `n` (next to grade) follows.

Two orders: oldest first (pending sessions in log order, as `n` has always gone) and informative
(sessions no person graded, those whose grade would most change their lessons' estimates first;
core.analysis.informative says how). `o` switches the order in force for the whole dashboard.
"""

from __future__ import annotations

import math
from typing import ClassVar, Protocol, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static

from lesson_credit.core.api import GradingQueue
from lesson_credit.tui.records_views import queue_view
from lesson_credit.tui.screens.base import DataScreen, screen_css
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.source_views import SessionsView
from lesson_credit.tui.text import counted, fmt, fmt_time, one_line, phrase_lines
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.phrase_text import PhraseText
from lesson_credit.tui.widgets.themed_table import ThemedTable
from lesson_credit.tui.widgets.title_bar import TitleBar
from lesson_credit.tui.widths import NARROW_BELOW
from lesson_credit.tui.writes import WriteQueue

ROWS_SHOWN = 500
EXPLAIN = {
    "oldest": "pending sessions (no source scores them), oldest first",
    "informative": "sessions no person graded, first those whose grade would most change their lessons' means",
}
NEXT_FOLLOWS = "n (next to grade) follows this order"
# under the informative order's table: its numbers in words, `shift` as `sessions --order informative` says it;
# a line breaks between phrases (two lines at 80 columns, the most it has), never inside one
LEGEND = (
    "expected±sd: a person's likely grade",
    "spread: its highest score minus lowest",
    "shift: how far that grade would move its lessons' means",
)
COLUMNS = ("#", "session", "time", "category", "in force", "expected", "±", "spread", "shift")
OLDEST_COLUMNS = COLUMNS[:5]  # oldest first nothing is expected, spread or shifted: no columns of dashes
# where the full table does not fit (below 100 columns; at 100 its widest cells may not): why the session is next in
# one column (expected±sd, spread between sources, shift)
NARROW_COLUMNS = ("#", "session", "in force", "why next")


class QueueOwner(Protocol):
    """What the screen asks of the app: the order in force, and opening the next session in it."""

    grading_order: str
    writes: WriteQueue

    def set_grading_order(self, order: str, session_ids: tuple[str, ...] | None) -> None: ...

    async def open_next_pending(self, after: str | None) -> None: ...


class GradingQueueScreen(DataScreen):
    """Sessions to grade, in the order in force; enter opens one, n the first."""

    # keys typed before its first load (enter, a cursor move) wait for it (tui/keys.py)
    HOLDS_KEYS_UNTIL_LOADED = True

    AUTO_FOCUS = "#queue-table"
    DEFAULT_CSS = screen_css("grading_queue.tcss")
    HELP = (
        "Sessions waiting for a person's grade, in the order n (next to grade) follows everywhere. o switches "
        "between oldest first and informative first (the sessions whose grade would most change the lessons' "
        "estimates: a pending session, or one where the judge, the heuristic and the outcome disagree). There, "
        "expected±sd is the grade a person is expected to give, spread how far the session's scores disagree, and "
        "shift how far a person's grade is expected to move its lessons' means (the CLI's `sessions --order "
        "informative` column)."
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_session", "Open", priority=True),
        Binding("n", "next_pending", "Next to grade"),
        Binding("o", "cycle_sort", "Order"),
        Binding("escape", "back", "Back"),
        Binding("u", "undo", "Undo (on a session)", show=False),
    ]

    class Loaded(Message):
        def __init__(self, read_at: int, queue: GradingQueue, sessions: SessionsView) -> None:
            super().__init__()
            self.read_at = read_at  # the source's version the queue was read at
            self.queue = queue
            self.sessions = sessions

    def __init__(self, source: WorkspaceSource) -> None:
        super().__init__(source)
        self.queue: GradingQueue | None = None
        self.read_at = 0  # the source's version `queue` was read at
        self.sessions: SessionsView | None = None
        self.highlighted: str | None = None
        self._full_needs = 0  # columns the full table needs (its widest cells): else the one-column form
        self._full_shown = False

    @property
    def owner(self) -> QueueOwner:
        return cast(QueueOwner, self.app)

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="queue-summary")
        yield ThemedTable(id="queue-table", cursor_type="row", zebra_stripes=True)
        yield PhraseText(id="queue-legend")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = "Grading queue"
        self.sub_title = self.source.name
        self.busy(self.query_one("#queue-table", ThemedTable), delay=0)
        legend = [Text(phrase, style="dim") for phrase in LEGEND]
        self.query_one("#queue-legend", PhraseText).show(lambda width: phrase_lines([legend], width))

    def reload(self) -> None:
        self._load(self.owner.grading_order)

    @work(thread=True, exclusive=True, group="queue")
    def _load(self, order: str) -> None:
        self.post_result(
            lambda: (*queue_view(self.source, order), self.source.sessions_view()),
            lambda found: self.Loaded(*found),
            choice=order,
        )

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        if event.queue.order != self.owner.grading_order:
            return  # the order changed while this was computed
        self.queue, self.read_at = event.queue, event.read_at
        self.owner.set_grading_order(event.queue.order, event.queue.session_ids)
        table = self.query_one("#queue-table", ThemedTable)
        self.done(table)
        self._fill(table, event.queue, event.sessions)
        self.ready_for_keys()

    def resized(self, rebuild: bool) -> None:
        if (rebuild or self._fits() != self._full_shown) and self.queue is not None and self.sessions is not None:
            self._fill(self.query_one("#queue-table", ThemedTable), self.queue, self.sessions)

    def _fits(self) -> bool:
        """Whether the full table fits the screen (else the one-column form)."""
        return self.size.width >= max(NARROW_BELOW, self._full_needs)

    def _fill(self, table: ThemedTable, queue: GradingQueue, sessions: SessionsView) -> None:
        self.sessions = sessions
        keep = table.row_to_keep(self.highlighted)  # the row a key moved to, maybe not reported yet (a resize, a load)
        info = queue.informative
        # a session graded here leaves the queue at once, not when the queue has been read again (on_screen_resume);
        # enough of the queue's head is looked at to fill the table with the others
        head = ROWS_SHOWN + self.owner.writes.written_here()
        pairs = zip(queue.rows[:head], queue.session_ids[:head], strict=False)
        listed = self.owner.writes.still_to_grade(pairs, self.read_at, lambda pair: pair[1])
        kept = {session_id for _, session_id in listed}
        if keep is not None and keep not in kept:  # graded (here or not): the row after it takes its place
            keep = table.next_kept(keep, kept) or keep
        full, compact = _rows(listed[:ROWS_SHOWN], sessions, queue)
        # the full table's columns, each its widest cell and a cell's padding, the scrollbar and the borders: the
        # one-column form when they do not fit (100 columns: the shift, what the order sorts by, fell off the edge)
        columns = COLUMNS if info is not None else OLDEST_COLUMNS
        self._full_needs = (
            sum(max([len(label), *(cells[i].cell_len for cells, _ in full)]) + 2 for i, label in enumerate(columns)) + 4
        )
        self._full_shown = self._fits()
        narrow = not self._full_shown
        table.clear(columns=True)
        for label in NARROW_COLUMNS if narrow else columns:
            table.add_column(label, key=label)
        for cells, session_id in compact if narrow else full:
            table.add_row(*cells, key=session_id)
        hidden = min(head, len(queue.session_ids)) - len(listed)
        ids = [session_id for _, session_id in listed[:ROWS_SHOWN]]
        self.highlighted = table.restore_cursor(ids, keep)  # told now: `enter` typed ahead reads it
        count = len(queue.session_ids) - hidden
        other = "informative" if queue.order == "oldest" else "oldest"
        # what the list is, that n goes down it and o's other order, in words ("order: oldest (o switches; n
        # follows it)" said neither what o switches to nor what n is); a line breaks between phrases
        phrases = [Text(counted(count, "session"), style="bold"), Text(NEXT_FOLLOWS), Text(f"o: {other} first")]
        summary = phrase_lines([phrases], self.size.width - 2)
        summary.append("\n" + EXPLAIN[queue.order], style="dim")
        if not count:  # (the Sessions screen says how to log one)
            logged = len(sessions.table)
            done = "every session logged has a score" if queue.order == "oldest" else "a person graded every session"
            summary.append("\nNothing to grade: " + (f"{done}." if logged else "no session is logged yet."))
        self.query_one("#queue-summary", Static).update(summary)
        self.query_one("#queue-legend", Static).display = info is not None

    def _graded(self, session_id: str) -> bool:
        return self.owner.writes.graded_unread(session_id, self.read_at)

    def on_screen_resume(self) -> None:
        """Back from a session graded here: it leaves the queue now, so `escape enter` typed ahead opens the
        next one (the base class reloads the queue too, in a worker, when the log has changed). Its write may
        have been read in a snapshot while this screen was under the session's: the queue still lists it."""
        if self.queue is None or self.sessions is None:
            return
        table = self.query_one("#queue-table", ThemedTable)
        if any(self._graded(key.value) for key in table.rows if key.value is not None):
            self._fill(table, self.queue, self.sessions)

    @on(DataTable.RowHighlighted, "#queue-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None:
            self.highlighted = event.row_key.value

    async def action_open_session(self) -> None:
        from lesson_credit.tui.screens.session_detail import SessionDetailScreen

        if self.highlighted is not None:
            await self.app.push_screen(SessionDetailScreen(self.source, self.highlighted))

    async def action_next_pending(self) -> None:
        await self.owner.open_next_pending(None)

    def action_cycle_sort(self) -> None:
        """`o`, the next order, as it sorts by the next column on the other screens."""
        order = "oldest" if self.owner.grading_order == "informative" else "informative"
        self.owner.set_grading_order(order, None)
        self.highlighted = None  # the new order's first session
        self.busy(self.query_one("#queue-table", ThemedTable))
        self.hold_keys()  # enter typed after o opens the new order's first session, once it is there
        self._load(order)

    def action_back(self) -> None:
        self.dismiss()

    def action_undo(self) -> None:
        """`u` undoes a grade on a session's screen, not here: say so (once however often it is typed: a toast
        repeated replaces the one shown)."""
        self.notify("u undoes a grade on a session's screen: enter opens the highlighted session.", markup=False)


Row = tuple[list[Text], str]  # a row's cells and its session id


def _rows(listed: list[tuple[int, str]], sessions: SessionsView, queue: GradingQueue) -> tuple[list[Row], list[Row]]:
    """The rows of the full table (COLUMNS) and of the one-column form (NARROW_COLUMNS: why the session is next)."""
    info = queue.informative
    full: list[Row] = []
    compact: list[Row] = []
    for place, (row, session_id) in enumerate(listed):
        s = sessions.table.summary(row)
        in_force = "pending" if s.base_reward is None else f"{fmt(s.base_reward, 3)} {one_line(s.grader)}"
        head = [Text(str(place + 1), justify="right"), Text(one_line(session_id))]
        if info is not None:
            spread = float(info.disagreement[row])
            numbers = (
                fmt(float(info.expected[row])),
                fmt(float(info.spread[row])),
                "—" if math.isnan(spread) else fmt(spread),
            )
            # commas, not " · ": the 80-column table keeps the grade in force to three places beside it
            why = f"{numbers[0]}±{numbers[1]}, spread {numbers[2]}, shift {_shift(float(info.score[row]))}"
            tail = [Text(n, justify="right") for n in (*numbers, _shift(float(info.score[row])))]
        else:
            why = f"pending since {fmt_time(s.timestamp)}"
            tail = []
        compact.append(([*head, Text(in_force), Text(why)], session_id))
        middle = [Text(fmt_time(s.timestamp)), Text(one_line(s.category, "—")), Text(in_force)]
        full.append(([*head, *middle, *tail], session_id))
    return full, compact


def _shift(information: float) -> str:
    """How far a person's grade is expected to move the session's lessons' means: the root of the summed
    expected squared changes, on the reward's scale, in the CLI's words and places (`sessions --order
    informative`'s `shift`). The dashboard showed the sum itself, `info 4.5e-3`, for the CLI's 0.067. A sum of
    squares summed in floating point may come out a hair below zero: that is no shift (its root raised)."""
    return fmt(math.sqrt(max(information, 0.0)), 3)
