"""The session detail's line: the session, its lessons counted (and how many of them the credits table
shows when it scrolls), and how credit is computed."""

from __future__ import annotations

from rich.text import Text

from lesson_credit.core.api import Explanation, cells, shorten
from lesson_credit.tui.text import counted, fmt_time, one_line
from lesson_credit.tui.widths import NARROW_BELOW, WIDE_FROM

JOURNAL_LABEL = "  ·  journal "


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


def line_path(path: str, room: int | None) -> str | None:
    """The journal's path as the session's line (100 columns and more) ends with it, in the `room` cells
    the line leaves (None: all it needs): whole, else its folders shortened ("state/jo…/2026-09-01-000.md");
    None where not even its file name fits (the journal pane's title names it then: `pane_title`)."""
    if room is None:
        return path
    room -= len(JOURNAL_LABEL)
    name = path.rsplit("/", 1)[-1]
    if cells(path) <= room or (cells(name) + 2 <= room and "/" in path):
        return shorten(path, room, "path")
    return None


def pane_title(path: str | None, screen_width: int, pane_width: int | None = None) -> Text:
    """The journal pane's title on a screen `screen_width` cells wide: "journal", then its path when given,
    shortened (its folders first) to the title's room, so that a long path never runs past the pane's corner.
    The pane's width is `pane_width` where it is laid out, else the stylesheet's: the whole width below 100
    columns, beside the side pane's 64 cells up to 150, a third from there (1fr beside 2fr) at most."""
    if path is None:
        return Text("journal")
    if pane_width:
        width = pane_width
    elif screen_width < NARROW_BELOW:
        width = screen_width
    else:
        width = screen_width - 64 if screen_width < WIDE_FROM else screen_width // 3
    room = width - len("╭─ journal  ─╮")  # the corners, the rule's first and last cells, a space each side
    return Text(f"journal {shorten(one_line(path), max(room, 1), 'path')}")


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
    path = line_path(one_line(s.journal_path, "—"), width - out.cell_len if width else None)
    out.append(f"{JOURNAL_LABEL}{path}\n" if path is not None else "\n", style="dim")
    out.append(f"credit: strategy {settings.strategy}, floor {settings.floor:g}", style="dim")
    if settings.decay < 1.0:
        out.append(f", decay {settings.decay:g}", style="dim")
    out.append("  ·  keyword hits highlighted, strongest for the selected lesson", style="dim")
    return out
