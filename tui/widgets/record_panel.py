"""A session's gptme-sessions record and reward sources, as plain text (docs/records.md).

Every reward source's score (the one in force marked); the judge's score, model and reason;
harness, model, duration, outcome; deliverables; per-dimension grades with their weights; and
the session's trajectory (`V` shows it as a transcript). Everything comes from files others write, so it is `Text`,
never markup. Hidden while the workspace has no records file and the session has one source.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.widgets import Static

from lesson_credit.core.api import logged_judge
from lesson_credit.tui.records_views import SessionOutside
from lesson_credit.tui.text import fmt_grade, one_line
from lesson_credit.tui.widgets.key_scroll import KeyScroll


def sources_text(outside: SessionOutside) -> Text:
    out = Text()
    out.append("sources ", style="bold")
    if not outside.sources:
        out.append("none: pending", style="dim")
    for i, source in enumerate(outside.sources):
        if i:
            out.append(" · ", style="dim")
        value = "withdrawn" if source.score is None else fmt_grade(source.score)
        out.append(f"{source.source} {value}", style="bold" if source.in_force else "")
        out.append(f" ({one_line(source.grader)})", style="" if source.in_force else "dim")
        if source.in_force:
            out.append(" in force", style="italic")
    return out


def outside_text(outside: SessionOutside, compact: bool = False) -> Text:
    """Most telling first (a narrow terminal shows the first lines): the sources, the judge, the record.

    `compact` (a 24-row terminal): the judge first, then the record; not the sources (the grade bar lists
    each source's score, and the one in force) nor the transcript line (V opens it)."""
    out = Text() if compact else sources_text(outside)
    judge = [line for line in outside.record_lines if line.startswith("judge ")]
    rest = [line for line in outside.record_lines if not line.startswith("judge ")]
    # dim where a judge's score logged since replaces the record's, as its line says (`logged_judge`); a
    # retraction in the log lets the record's count again: not dim then
    later = logged_judge(outside.sources) is not None
    for line in judge:
        out.append("\n")
        out.append(one_line(line), style="dim" if later else "")
    out.append("\nrecord ", style="bold")
    if rest:
        out.append("\n".join(one_line(line) for line in rest))
    else:
        out.append(one_line(outside.record_note or "none"), style="dim")
    if compact:
        return out[1:] if out.plain.startswith("\n") else out
    out.append("\ntrajectory ", style="bold")  # the row's name in `show` (V opens it as a transcript)
    if outside.trajectory is not None:
        out.append(one_line(outside.trajectory))
        out.append(" · V shows it", style="dim")
    else:  # the reason begins with its own "no trajectory": after the row's name, "none" says it once
        note = one_line(outside.trajectory_note or "none")
        said = "none" + note.removeprefix("no trajectory") if note.startswith("no trajectory") else note
        out.append(said, style="dim")
    return out


class RecordPanel(KeyScroll):
    """Set `outside`; the panel shows it (and hides itself when there is nothing to add), scrolling when it
    is taller than the panel may be (at 80x24 three lines: the record's deliverables and grades below
    them could not be reached). `compact`: a 24-row terminal's form (see `outside_text`). Its text is
    the Static `#record-text`."""

    DEFAULT_CSS = """
    RecordPanel {
        height: auto;
        max-height: 8;
        padding: 0 0 0 1;
        scrollbar-size-vertical: 1;  /* in the right padding's cell: the lines as wide as without it */
    }
    RecordPanel > #record-text {
        height: auto;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="record-text")

    def first_rows(self, width: int) -> int:
        """The rows the compact text's first line (the judge's score and reason, else the record's harness to
        outcome) takes wrapped in `width` cells (its scrollbar's cell out): 1 while there is nothing to show."""
        if self.outside is None or not self.display:
            return 1
        first = outside_text(self.outside, compact=True).split("\n")[0]
        return max(1, len(first.wrap(self.app.console, max(width, 1))))

    def on_mount(self) -> None:
        self.watch_outside(self.outside)

    outside: reactive[SessionOutside | None] = reactive(None)
    compact: reactive[bool] = reactive(False)

    def watch_compact(self) -> None:
        self.watch_outside(self.outside)

    def watch_outside(self, outside: SessionOutside | None) -> None:
        shown = outside is not None and (
            outside.has_records or outside.trajectory is not None or len(outside.sources) > 1
        )
        self.display = shown
        if outside is not None and shown:
            for text in self.query("#record-text").results(Static):  # none before compose
                text.update(outside_text(outside, self.compact))
