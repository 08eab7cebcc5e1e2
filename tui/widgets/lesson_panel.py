"""The facts about one lesson's posterior: counts, interval, salience, usage, P(top-k), problems."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text
from textual.reactive import reactive

from lesson_credit.core.api import MISSING
from lesson_credit.tui.source_views import BROKEN
from lesson_credit.tui.text import break_words, fmt, fmt_interval, one_line
from lesson_credit.tui.widgets.phrase_text import PhraseText

if TYPE_CHECKING:
    from lesson_credit.core.api import Lesson, LessonRow, LessonUsage


@dataclass(frozen=True)
class LessonDetail:
    row: LessonRow
    usage: LessonUsage | None
    p_top_k: float | None  # None: not selectable (not active, or not in the library)
    k: int
    lesson: Lesson | None
    problem: str | None  # what is wrong with the lesson file, if anything
    pinned: bool = False
    estimating: bool = False  # P(top-k) not estimated yet


def explain_status(detail: LessonDetail) -> str | None:
    """Why a lesson is shown but not a normal library lesson, in words."""
    row = detail.row
    if row.status == BROKEN:
        return f"The lesson file could not be loaded: {detail.problem}. It is not selectable until fixed."
    if row.status == MISSING:
        if detail.problem:
            return (
                f"In the log but the library could not load it: {detail.problem}. "
                "Its evidence still counts; it is not selectable."
            )
        return (
            "In the log but not in the library (renamed or deleted?). Its evidence still counts; it is not selectable."
        )
    if detail.problem:
        return detail.problem
    return None


class LessonPanel(PhraseText):
    """Set `detail`; the panel re-renders, laid out at its width (a path broken between its parts, not mid-word:
    `break_words`), again on a resize. Every value from disk is literal Text."""

    DEFAULT_CSS = """
    LessonPanel {
        height: auto;
        padding: 0 1;
        border: round $primary 50%;
        border-title-color: $text-primary;
    }
    LessonPanel.-problem {
        border: round $warning;
    }
    """

    detail: reactive[LessonDetail | None] = reactive(None)

    def watch_detail(self, detail: LessonDetail | None) -> None:
        self.set_class(detail is not None and explain_status(detail) is not None, "-problem")
        self.border_title = "lesson"
        self.show(lambda width: self.describe(detail, width))

    @staticmethod
    def describe(detail: LessonDetail | None, width: int = 0) -> Text:
        """The lesson's title, then its numbers, then what it is (path, category, description): on a
        short terminal the panel's bottom is scrolled to (its box's bar shows it), and what is first out of view
        is the lesson's own text. The numbers' lines fit the narrow panel (25 columns of text at 80 columns); a word
        wider than `width` (a path, an id) is broken after a `/`, `-` or `_` (0: as it comes)."""
        if detail is None:
            return Text("No lesson highlighted.", style="italic")
        row = detail.row
        out = Text()
        title = detail.lesson.title if detail.lesson else row.title
        out.append(break_words(one_line(title), width), style="bold")
        if detail.pinned:
            out.append("  ◆ pinned", style="bold")
        out.append("\n")
        problem = explain_status(detail)
        if problem:
            out.append(break_words("⚠ " + one_line(problem), width) + "\n", style="bold")
        out.append(f"mean {fmt(row.mean, 3)} · n {row.n}\n")
        out.append(f"α {fmt(row.alpha)} · β {fmt(row.beta)}\n")
        out.append(f"95% interval {fmt_interval(row.ci_low, row.ci_high, 3)}\n")
        if detail.estimating:
            out.append(f"P(in a top-{detail.k} draw) estimating…\n", style="dim")
        elif detail.p_top_k is None:
            out.append(f"P(in a top-{detail.k} draw) — not selectable\n", style="dim")
        else:
            out.append(f"P(in a top-{detail.k} draw) {fmt(detail.p_top_k)}\n")
        usage = detail.usage
        if usage and usage.injected:
            out.append(f"injected in {usage.injected} session{'' if usage.injected == 1 else 's'}\n")
            out.append(f"  a keyword hit in {usage.salient}\n")
            out.append(f"  avg salience {fmt(usage.mean_salience)}\n")
        else:
            out.append("never injected\n", style="dim")
        if row.last_session is not None:
            session_id = one_line(row.last_session)
            session = f"  in session {session_id}"
            if width and cell_len(session) > width:  # wrapped at its space, the id was alone on a line of its own
                session = break_words(f"  in {session_id}", width)
            out.append(f"last credit {fmt(row.last_credit)}\n{session}\n")
        else:
            out.append("no graded session yet\n", style="dim")
        out.append(break_words(one_line(row.path), width) + "\n", style="dim")
        kind = f"{one_line(row.category, '(no category)')} · {one_line(row.status)}"
        out.append(break_words(kind, width), style="dim")
        if detail.lesson and detail.lesson.session_categories:  # select draws it for these kinds of work alone
            only = "for " + one_line(", ".join(detail.lesson.session_categories)) + " sessions only"
            out.append("\n" + break_words(only, width), style="dim")
        if detail.lesson and detail.lesson.description:
            out.append("\n" + break_words(one_line(detail.lesson.description), width), style="italic")
        return out
