"""The Lessons table's cells, now built by the load worker: the same Text as the UI thread built before."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

import pytest
from rich.style import Style
from rich.text import Text
from textual.widgets import DataTable
from tui_fixture import settle

from core.lessons import MISSING
from core.views import LessonRow
from tui.app import LessonCreditApp
from tui.screens import lessons as lessons_module
from tui.screens.lessons import PIN_MARK, LessonsScreen, lesson_cells, lesson_name
from tui.source import BROKEN
from tui.text import fmt, fmt_interval, one_line, spaced, spaced_text
from tui.widgets.themed_table import TONES, ThemedTable

SIZE = (120, 40)

# a stand-in for ThemedTable.tone: a distinct style per tone
STYLES = {name: Style(color=f"color({i + 1})", bold=i % 2 == 0) for i, name in enumerate(TONES)}


def tone(name: str) -> Style:
    return STYLES[name]


def toned(value: str, name: str | None) -> Text:
    return Text(value, style=tone(name) if name else "", end="")


def old_cells(row: LessonRow, pinned: bool) -> list[Text]:
    """LessonsScreen._cells and _name_cell as they were, then `spaced` as _rebuild applied it."""
    if row.status in (MISSING, BROKEN):
        status_tone: str | None = "warning" if row.status == MISSING else "error"
    elif row.status != "active":
        status_tone = "muted"
    else:
        status_tone = None
    name = Text(end="")
    if pinned:
        name_tone: str | None = "pinned"
    else:
        name_tone = "muted" if row.status not in ("active", MISSING, BROKEN) else None
    name.append(one_line(lesson_name(row)), style=tone(name_tone) if name_tone else "")
    if pinned:
        name.append(" " + PIN_MARK, style=tone("pinned"))
    cells = [
        name,
        toned(one_line(row.category, "—"), None),
        toned(one_line(row.status), status_tone),
        Text(str(row.n), justify="right"),
        Text(fmt(row.mean, 3), justify="right"),
        Text(fmt_interval(row.ci_low, row.ci_high)),
        Text(fmt(row.last_credit), justify="right"),
    ]
    return [spaced(cell) for cell in cells]


def state(text: Text) -> tuple[Any, ...]:
    """Everything a Text renders from (Text.__eq__ compares only the characters and spans)."""
    return (text.plain, text.spans, text.style, text.justify, text.end, text.no_wrap, text.overflow, text.tab_size)


ROW = LessonRow(
    path="tools/git-worktree.md",
    title="Keep worktrees tidy",
    category="tools",
    status="active",
    n=3,
    alpha=2.5,
    beta=1.5,
    mean=0.625,
    ci_low=0.2,
    ci_high=0.9,
    rewarded=2,
    last_session="s1",
    last_credit=0.52,
)


def test_cells_are_the_old_cells() -> None:
    rows = [
        ROW,
        replace(ROW, status="deprecated", last_credit=None),
        replace(ROW, status=MISSING, category=""),
        replace(ROW, status=BROKEN, path="bad\x1b[31m.md", category="x\ty", n=0),
        replace(ROW, path="no-folder.md", category="other", mean=0.577499999, title="[red]markup[/]"),
        replace(ROW, path="tools/\x07.md"),  # a name that is only a control character
    ]
    for row in rows:
        for pinned in (False, True):
            new = lesson_cells(row, tone, pinned)
            assert [state(c) for c in new] == [state(c) for c in old_cells(row, pinned)], (row.path, pinned)


def test_spaced_text_is_spaced_text_of_one_style() -> None:
    for value in ("", "abc", "\x07", "a\x07b", "wide 漢字"):
        for style in ("", "bold", Style(), Style(italic=True)):
            for justify in (None, "right", "left"):
                expected = spaced(Text(value, style=style, justify=justify, end=""))
                assert state(spaced_text(value, style, justify)) == state(expected)


async def test_the_table_shows_the_worker_cells_and_rebuilds_them_for_a_new_theme(
    app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_ui_thread: list[bool] = []  # per row built: on the UI thread?

    def recorded(row: LessonRow, tone: Any, pinned: bool = False) -> list[Text]:
        on_ui_thread.append(threading.current_thread() is threading.main_thread())
        return lesson_cells(row, tone, pinned)

    monkeypatch.setattr(lessons_module, "lesson_cells", recorded)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonsScreen) and screen.view is not None and screen.cells is not None
        table = screen.query_one("#lessons-table", DataTable)
        themed = screen.query_one("#lessons-table", ThemedTable)
        assert table.row_count == len(screen.view.rows) > 0

        def shown_cells_are_fresh() -> None:
            for row in screen.view.rows if screen.view else ():
                expected = lesson_cells(row, themed.tone, row.path in screen.pins)
                assert [state(c) for c in table.get_row(row.path)] == [state(c) for c in expected], row.path

        shown_cells_are_fresh()
        # every row's cells were built by the load worker, none on the UI thread
        assert len(on_ui_thread) >= len(screen.view.rows) and not any(on_ui_thread)

        missing = "tools/old-lesson.md"
        before = state(table.get_row(missing)[2])
        on_ui_thread.clear()
        app.theme = "textual-light"
        await settle(pilot)
        assert on_ui_thread and all(on_ui_thread)  # the worker's cells have the old tones: built again
        shown_cells_are_fresh()  # the new theme's tones, not the worker's old ones
        assert state(table.get_row(missing)[2]) != before  # its status is in the new theme's warning colour

        # pin the highlighted lesson: its name cell gets the mark, the others keep theirs
        await pilot.press("p")
        await settle(pilot)
        assert screen.pins and str(table.get_row(screen.pins[0])[0]).endswith(PIN_MARK)
        shown_cells_are_fresh()
