"""The grade of a session: the one in force, the draft being previewed, the history, a note."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Input, Label, Static

from lesson_credit.core.api import GradeRecord
from lesson_credit.tui.text import fmt_grade, fmt_time, one_line
from lesson_credit.tui.widgets.filter_box import LEAVE_BY_TAB, MAX_NOTE, CappedInput

HISTORY_SHOWN = 4
# enter and escape both leave the note box for the credits, the note kept for the next commit
NOTE_KEYS = (("enter", "Keep note"), ("escape", "Back"), *LEAVE_BY_TAB)
# a draft's hint on the compact line, the longest that fits: at 80 columns with three other sources the line
# ended "· judge 0…" (the footer names c, and esc discards as everywhere a draft is left)
COMPACT_HINTS = (" not saved: c commits, esc discards ", " c commits, esc discards ", " unsaved ", "")
HISTORY_SHOWN_COMPACT = 2  # a 24-row terminal: the history's one line starts with the grade in force


def grade_status(
    committed: float | None,
    grader: str | None,
    draft: float | None,
    others: tuple[tuple[str, float | None], ...] = (),
    compact: bool = False,
    draft_word: str | None = None,
    unsaved: str | None = None,
    width: int = 0,
) -> Text:
    """`others`: the scores of the reward sources not in force (docs/records.md), shown after the grade.
    `compact` (a 24-row terminal, one line): the draft before the other sources, and no list of keys
    (the footer and `?` have them). `draft_word`: the gptme grading word the draft was typed as. `unsaved`: the
    session's latest write as typed ("0.4", "undo") while the writes wait to be retried. `width`: the compact line's
    cells (0: not known), which the draft's hint gives way to (COMPACT_HINTS), so the other sources show whole."""
    shown_draft = None if draft is None else fmt_grade(draft) + (f" {one_line(draft_word)}" if draft_word else "")
    out = Text()
    out.append("grade ", style="bold")
    if committed is None:
        out.append("pending", style="bold reverse")
    else:
        out.append(fmt_grade(committed), style="bold")
        out.append(f" ({one_line(grader, 'unknown')})")
    if unsaved is not None:  # committed while the log refuses writes: the grade above is the log's until saved
        out.append(f"  {unsaved} waiting to be saved", style="bold italic")
    if compact:
        hints = COMPACT_HINTS if draft is not None else ("",)
        for hint in hints:  # the longest hint that leaves the line whole in `width`, else the shortest
            line = out.copy()
            if draft is not None:
                line.append("  draft ", style="bold")
                line.append(f" {shown_draft} ", style="bold reverse")
                line.append(hint, style="italic")
            for source, score in others:
                line.append(f" · {source} {fmt_grade(score)}", style="dim")
            if not width or line.cell_len <= width:
                break
        return line
    for source, score in others:
        out.append(f" · {source} {fmt_grade(score)}", style="dim")
    if draft is not None:
        out.append("   draft ", style="bold")
        out.append(f" {shown_draft} ", style="bold reverse")
        out.append("  previewed on screen, not saved: c commits, escape discards", style="italic")
    else:
        out.append("   0-9 tenths · f 1.0 · +/- 0.05 · g exact · c commit · u undo · n next to grade", style="dim")
    return out


def grade_history(grades: tuple[GradeRecord, ...], compact: bool = False) -> Text:
    out = Text()
    out.append("history (H) ", style="bold")  # (H: every grade whole, what the line cuts or leaves out too)
    if not grades:
        out.append("never graded", style="dim")
        return out
    shown = grades[-(HISTORY_SHOWN_COMPACT if compact else HISTORY_SHOWN) :]
    earlier = len(grades) - len(shown)
    # the latest first at every size (a line cut at the edge cuts an older entry, never the grade in force):
    # at 24 rows it ran newest first and at 50 oldest first
    for i, record in enumerate(reversed(shown)):
        if i:
            out.append(" ← ", style="dim")
        value = "retracted" if record.base_reward is None else fmt_grade(record.base_reward)
        out.append(value, style="bold" if i == 0 else "")
        out.append(f" {one_line(record.grader)} {fmt_time(record.timestamp)}", style="" if i == 0 else "dim")
        if record.note:
            out.append(f" “{one_line(record.note)}”", style="italic")
    if earlier:
        out.append(f" (+{earlier} earlier)", style="dim")
    return out


class GradeBar(Widget):
    """Set the reactives; the bar posts `NoteChanged` / `NoteSubmitted` as the operator types a note."""

    DEFAULT_CSS = """
    GradeBar {
        height: auto;
        border-top: solid $primary 50%;
        padding: 0 1;
    }
    GradeBar.-draft {
        border-top: heavy $warning;
    }
    /* one line each, cut at the edge with an ellipsis: with a draft, "· heuristic 0.47" was cut to "·",
       as if nothing came after */
    GradeBar.-compact #grade-status, GradeBar.-compact #grade-history {
        height: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    GradeBar #note-row {
        height: 1;
    }
    GradeBar #note-row Label {
        width: auto;
        padding: 0 1 0 0;
    }
    GradeBar #note {
        border: none;
        height: 1;
        width: 1fr;
        padding: 0;
    }
    """

    committed: reactive[float | None] = reactive(None)
    grader: reactive[str | None] = reactive(None)
    draft: reactive[float | None] = reactive(None)
    grades: reactive[tuple[GradeRecord, ...]] = reactive(())
    others: reactive[tuple[tuple[str, float | None], ...]] = reactive(())  # other reward sources' scores
    compact: reactive[bool] = reactive(False)  # a 24-row terminal: the status and the history one line each
    draft_word: reactive[str | None] = reactive(None)  # the grading word the draft was typed as
    unsaved: reactive[str | None] = reactive(None)  # the session's latest write while the writes wait to be retried

    class NoteChanged(Message):
        def __init__(self, note: str) -> None:
            super().__init__()
            self.note = note

    class NoteSubmitted(Message):
        pass

    def compose(self) -> ComposeResult:
        yield Static(id="grade-status")
        yield Static(id="grade-history")
        with Horizontal(id="note-row"):
            yield Label("note (e)")
            yield CappedInput("optional note saved with the next commit", "note", MAX_NOTE, "A note", NOTE_KEYS)

    def on_mount(self) -> None:
        self._update_status()
        self.watch_grades(self.grades)

    def _update_status(self) -> None:
        self.set_class(self.draft is not None, "-draft")
        for status in self.query("#grade-status").results(Static):  # none before compose
            status.update(
                grade_status(
                    self.committed,
                    self.grader,
                    self.draft,
                    self.others,
                    self.compact,
                    self.draft_word,
                    self.unsaved,
                    self.content_region.width,
                )
            )

    def on_resize(self) -> None:
        self._update_status()  # the draft's hint fitted to the width (compact)

    def watch_compact(self, compact: bool) -> None:
        self.set_class(compact, "-compact")
        self._update_status()
        self.watch_grades(self.grades)

    def watch_committed(self) -> None:
        self._update_status()

    def watch_grader(self) -> None:
        self._update_status()

    def watch_draft(self) -> None:
        self._update_status()

    def watch_others(self) -> None:
        self._update_status()

    def watch_unsaved(self) -> None:
        self._update_status()

    def watch_draft_word(self) -> None:
        self._update_status()

    def watch_grades(self, grades: tuple[GradeRecord, ...]) -> None:
        for history in self.query("#grade-history").results(Static):
            history.update(grade_history(grades, self.compact))

    def focus_note(self) -> None:
        self.query_one("#note", Input).focus()

    def clear_note(self) -> None:
        self.query_one("#note", Input).value = ""

    @on(Input.Changed, "#note")
    def _note_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.NoteChanged(event.value))

    @on(Input.Submitted, "#note")
    def _note_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.NoteSubmitted())
