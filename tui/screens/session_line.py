"""The session detail's line: the session, its lessons counted (and how many of them the credits table
shows when it scrolls), and how credit is computed."""

from __future__ import annotations

from rich.text import Text

from lesson_credit.core.api import Explanation
from lesson_credit.tui.text import counted, fmt_time, one_line


def lessons_shown(lessons: int, shown: int | None, room: int | None = None) -> str:
    """The session's count of lessons; when the credits table scrolls, showing `shown` rows of them, that
    too (no line is spent on it), in the longest words that fit in `room` cells (None: the longest)."""
    if shown is None:
        return counted(lessons, "lesson")
    of = f"{shown} of {counted(lessons, 'lesson')} shown"
    return next(
        (form for form in (f"{of}, scroll for more", of) if room is None or len(form) <= room),
        f"{counted(lessons, 'lesson')}, {shown} shown",
    )


def session_info(explanation: Explanation, compact: bool = False, shown: int | None = None, width: int = 0) -> Text:
    """The session's line and how credit is computed. `compact` (below 100 columns): one line, the lessons
    counted after the id (a toast at 80 columns covers the line's right half), whole sentences only (the
    journal's path is the journal pane's title; the strategy and the floor are in the credit panel's
    lines, "weight 0.3 + 0.7×…" and "(seed)": at 80 columns the floor was cut off). `shown`: the credit
    rows in view when the table scrolls, said in words that fit in `width` cells."""
    s = explanation.session
    settings = explanation.settings
    out = Text()
    out.append(one_line(s.session_id), style="bold")
    if compact:  # the count right after the id: a toast (at most half the width) covers the line's right end
        after = f" · {fmt_time(s.timestamp)} · {one_line(s.category, '—')}"
        decay = f" · decay {settings.decay:g}" if settings.decay < 1.0 else ""
        room = width - out.cell_len - 3 - len(after) - len(decay) if width else None
        out.append(" · " + lessons_shown(s.n_lessons, shown, room))
        out.append(after)
        out.append(decay, style="dim")
        return out
    out.append(f"  ·  {fmt_time(s.timestamp)}  ·  category {one_line(s.category, '—')}  ·  ")
    out.append(lessons_shown(s.n_lessons, shown))
    out.append(f"  ·  journal {one_line(s.journal_path, '—')}\n", style="dim")
    out.append(f"credit: strategy {settings.strategy}, floor {settings.floor:g}", style="dim")
    if settings.decay < 1.0:
        out.append(f", decay {settings.decay:g}", style="dim")
    out.append("  ·  keyword hits highlighted, strongest for the selected lesson", style="dim")
    return out
