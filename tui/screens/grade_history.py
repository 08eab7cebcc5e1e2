"""`H` on a session: every grade it has had, newest first, each with its grader, time and note, none cut.

The grade bar's history line shows the latest few, and at 24 rows on one line cut with an ellipsis at the edge
(at 80 columns an older grade's note and every grade before it); the grades before those it shows it counts.
Here they are whole; escape goes back to the session. It follows the session's grades while it is open: opened
right after typed-ahead writes, before they are written, it shows them once they land.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Static

from lesson_credit.core.api import GradeRecord
from lesson_credit.tui.screens.base import screen_css
from lesson_credit.tui.screens.dialog_toasts import ToastsAsBelow
from lesson_credit.tui.text import counted, fmt_grade, fmt_time, one_line
from lesson_credit.tui.widgets.grade_bar import GradeBar
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.key_scroll import FootedKeyScroll

CLOSE_KEYS = (("escape", "Close"),)


def history_text(grades: tuple[GradeRecord, ...]) -> Text:
    """Each grade on a line of its own, newest first (as the grade bar's line): the grade in force bold, then
    its grader and time; a note on the next line, indented. Plain text: graders and notes come from the log."""
    out = Text()
    if not grades:
        out.append("never graded", style="dim")
        return out
    for i, record in enumerate(reversed(grades)):
        if i:
            out.append("\n")
        value = "retracted" if record.base_reward is None else fmt_grade(record.base_reward)
        out.append(value, style="bold" if i == 0 else "")
        out.append(f" {one_line(record.grader)} {fmt_time(record.timestamp)}", style="" if i == 0 else "dim")
        if i == 0:
            out.append("  (in force)", style="dim")
        if record.note:
            out.append(f"\n  “{one_line(record.note)}”", style="italic")
    return out


class GradeHistoryScreen(ToastsAsBelow, ModalScreen[None]):
    """A session's grades, whole; escape closes."""

    DEFAULT_CSS = screen_css("grade_history.tcss")
    HELP = "Every grade of the session, newest first, with its grader, time and note, none cut; escape closes."

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", key_display="esc"),  # (H is the session's: each key means one thing)
    ]

    def __init__(self, session_id: str, bar: GradeBar) -> None:
        super().__init__()
        self.session_id = session_id
        self.bar = bar  # the session's grade bar: its grades are the log's as the session last read it
        self.grades = bar.grades

    def compose(self) -> ComposeResult:
        with FootedKeyScroll(id="history-body"):  # a long history scrolls; the footer names its keys
            yield Static(history_text(self.grades), id="history-text")
        yield KeyFooter(keys=CLOSE_KEYS)

    def on_mount(self) -> None:
        self._show_title()
        self.query_one("#history-body", FootedKeyScroll).focus()
        self.watch(self.bar, "grades", self._grades_read, init=False)  # writes that land while it is open

    def _show_title(self) -> None:
        body = self.query_one("#history-body", FootedKeyScroll)
        body.border_title = Text(f"{counted(len(self.grades), 'grade')} of {one_line(self.session_id)}")

    def _grades_read(self, grades: tuple[GradeRecord, ...]) -> None:
        self.grades = grades
        self.query_one("#history-text", Static).update(history_text(grades))
        self._show_title()

    def action_close(self) -> None:
        self.dismiss(None)
