"""One lesson over time (Lessons, `d`): its joint effect by window of the log and its credit
posterior after each window, as two plots and a table (the table alone in an 80-column terminal)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Static

from lesson_credit.tui.over_time_view import LEVEL, OverTimeView, over_time_view
from lesson_credit.tui.screens.base import DataScreen, screen_css
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.text import one_line
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.over_time_plot import OverTimePlot
from lesson_credit.tui.widgets.themed_table import ThemedTable
from lesson_credit.tui.widgets.title_bar import TitleBar

COLUMNS = ("sessions", "with/without", f"joint effect ({LEVEL:.0%})", f"credit mean ({LEVEL:.0%})")


class LessonOverTimeScreen(DataScreen):
    """A lesson's joint effect per window of the log and its credit posterior after each window."""

    DEFAULT_CSS = screen_css("lesson_over_time.tcss")
    # keys typed before its load (down, end) wait for it (tui/keys.py): until then the table has no rows
    HOLDS_KEYS_UNTIL_LOADED = True
    AUTO_FOCUS = "#over-time-table"
    LESSON_IN_VIEW = "lesson_id"
    HELP = (
        "One lesson over time: the log cut into windows of about as many of its sessions each; per window, its "
        "joint effect per injection with a 90% interval (identified lessons only), and the credit posterior's mean "
        "and 90% interval after the window's last session. with/without counts the window's sessions in the "
        "baseline groups (category, time block, agent) where the lesson's injection varies: the ones its estimate "
        "reads."
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
    ]

    class Loaded(Message):
        def __init__(self, view: OverTimeView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, source: WorkspaceSource, lesson_id: str) -> None:
        super().__init__(source)
        self.lesson_id = lesson_id
        self.view: OverTimeView | None = None

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="over-time-info")
        with Horizontal(id="over-time-plots"):
            yield OverTimePlot(f"joint effect per injection, {LEVEL:.0%}", zero=True, id="effect-plot")
            yield OverTimePlot(f"credit mean after each window, {LEVEL:.0%}", unit=True, id="credit-plot")
        yield ThemedTable(id="over-time-table", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = f"Over time · {one_line(self.lesson_id)}"
        self.sub_title = self.source.name
        self.query_one("#over-time-info", Static).update(Text(one_line(self.lesson_id), style="bold"))
        table = self.query_one("#over-time-table", ThemedTable)
        for column in COLUMNS:
            table.add_column(Text(column), key=column)
        self.busy(self.query_one("#over-time-plots", Horizontal), delay=0)

    def reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="lesson-over-time")
    def _load(self) -> None:
        self.post_result(lambda: over_time_view(self.source, self.lesson_id), self.Loaded)

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        view = self.view = event.view
        self.done(self.query_one("#over-time-plots", Horizontal))
        info = Text()
        info.append(one_line(self.lesson_id), style="bold")
        info.append("\n" + view.summary)
        self.query_one("#over-time-info", Static).update(info)
        self.query_one("#effect-plot", OverTimePlot).series = view.effect
        self.query_one("#credit-plot", OverTimePlot).series = view.credit
        table = self.query_one("#over-time-table", ThemedTable)
        keep = table.cursor_row  # read again (the log changed): the cursor stays on its row
        table.clear()
        keys: list[str] = []
        for number, cells in enumerate(view.rows()):
            keys.append(str(number))
            texts = [Text(cell, justify="left" if i == 0 else "right") for i, cell in enumerate(cells)]
            table.add_row(*texts, key=keys[-1])
        table.restore_cursor(keys, None, place=keep)
        self.ready_for_keys()

    def action_back(self) -> None:
        self.dismiss()
