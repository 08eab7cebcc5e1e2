"""The Lessons table's cells (built by the load worker): their text, tones and justification by hand."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from msgspec.structs import replace
from rich.style import Style
from rich.text import Span, Text
from textual.widgets import DataTable

from lesson_credit.core.library.lessons import MISSING
from lesson_credit.core.views import LessonRow
from lesson_credit.tui import lesson_cells as cells_module
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.lesson_cells import lesson_cells
from lesson_credit.tui.lesson_sorts import SORTS
from lesson_credit.tui.screens import lessons as lessons_module
from lesson_credit.tui.screens.lessons import PIN_MARK, LessonsScreen
from lesson_credit.tui.source_views import BROKEN
from lesson_credit.tui.text import spaced, spaced_text
from lesson_credit.tui.widgets.themed_table import TONES, ThemedTable
from tests.tui.tui_fixture import settle

SIZE = (120, 40)

# a stand-in for ThemedTable.tone: a distinct style per tone
STYLES = {name: Style(color=f"color({i + 1})", bold=i % 2 == 0) for i, name in enumerate(TONES)}


def tone(name: str) -> Style:
    return STYLES[name]


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


Cell = tuple[str, list[tuple[int, int, str]], str | None]  # (text, [(start, end, tone)], justify)


def cell_state(cell: Cell, overflow: str | None = None) -> tuple[Any, ...]:
    """The `state` of a cell written by hand: its text, tone spans and justification, and the overflow
    given (the name's: cut with an ellipsis); nothing else set."""
    plain, spans, justify = cell
    return (plain, [Span(a, b, tone(name)) for a, b, name in spans], "", justify, "", None, overflow, None)


def numbers(n: str, mean: str, interval: str, last: str) -> list[Cell]:
    """The number cells: one space before each; all but the interval right-justified. The effect
    column (between the interval and the last credit) shows … until its estimates arrive."""
    return [
        (" " + n, [], "right"),
        (" " + mean, [], "right"),
        (" " + interval, [], None),
        (" …", [], "right"),
        (" " + last, [], "right"),
    ]


# The cells by hand, from the rules: the name is the id less its category folder and `.md`, muted for a
# retired lesson and in the `pinned` tone after "◆ " when pinned; the status is toned warning (missing),
# error (broken) or muted (not active); control characters show as their pictures (\x07 -> ␇,
# \x1b -> ␛) and a tab as a space; an empty category shows as —; every cell starts with one space.
# ROW: n 3, mean 0.625 -> "0.625", interval 0.2..0.9 -> "0.20–0.90", last credit 0.52 -> "0.52".
ROW_NUMBERS = numbers("3", "0.625", "0.20–0.90", "0.52")
HAND: list[tuple[LessonRow, bool, list[Cell]]] = [
    # " git-worktree" is 13 characters: the name's tone covers 1..13
    (ROW, False, [(" git-worktree", [], None), (" tools", [], None), (" active", [], None), *ROW_NUMBERS]),
    # pinned: "◆ " (1..3) in the pinned tone, then the name (3..15) in it too
    (
        ROW,
        True,
        [
            (" ◆ git-worktree", [(1, 3, "pinned"), (3, 15, "pinned")], None),
            (" tools", [], None),
            (" active", [], None),
            *ROW_NUMBERS,
        ],
    ),
    # deprecated: name muted (1..13), status " deprecated" muted (1..11); no last credit -> "—"
    (
        replace(ROW, status="deprecated", last_credit=None),
        False,
        [
            (" git-worktree", [(1, 13, "muted")], None),
            (" tools", [], None),
            (" deprecated", [(1, 11, "muted")], None),
            *numbers("3", "0.625", "0.20–0.90", "—"),
        ],
    ),
    # pinned wins over muted for the name; the status stays muted
    (
        replace(ROW, status="deprecated", last_credit=None),
        True,
        [
            (" ◆ git-worktree", [(1, 3, "pinned"), (3, 15, "pinned")], None),
            (" tools", [], None),
            (" deprecated", [(1, 11, "muted")], None),
            *numbers("3", "0.625", "0.20–0.90", "—"),
        ],
    ),
    # missing with no category: the whole id less `.md` is the name (not muted); category "—";
    # " missing" (8 characters) in the warning tone
    (
        replace(ROW, status=MISSING, category=""),
        False,
        [(" tools/git-worktree", [], None), (" —", [], None), (" missing", [(1, 8, "warning")], None), *ROW_NUMBERS],
    ),
    # broken, with an escape in the id and a tab in the category: " broken" (7) in the error tone, n 0
    (
        replace(ROW, status=BROKEN, path="bad\x1b[31m.md", category="x\ty", n=0),
        False,
        [
            (" bad␛[31m", [], None),
            (" x y", [], None),
            (" broken", [(1, 7, "error")], None),
            *numbers("0", "0.625", "0.20–0.90", "0.52"),
        ],
    ),
    # no folder in the id; a mean just under 0.5775 prints 0.577 (three places); the title is not shown
    (
        replace(ROW, path="no-folder.md", category="other", mean=0.577499999, title="[red]markup[/]"),
        False,
        [
            (" no-folder", [], None),
            (" other", [], None),
            (" active", [], None),
            *numbers("3", "0.577", "0.20–0.90", "0.52"),
        ],
    ),
    # a name that is only a control character (BEL -> ␇), pinned: "◆ " over 1..3, the name over 3..4
    (
        replace(ROW, path="tools/\x07.md"),
        True,
        [
            (" ◆ ␇", [(1, 3, "pinned"), (3, 4, "pinned")], None),
            (" tools", [], None),
            (" active", [], None),
            *ROW_NUMBERS,
        ],
    ),
]


@pytest.mark.parametrize(("row", "pinned", "cells"), HAND, ids=[f"{r.path}-{r.status}-{p}" for r, p, _ in HAND])
def test_cells_by_hand(row: LessonRow, pinned: bool, cells: list[Cell]) -> None:
    # HAND lists name, category, status, then the numbers; the table shows the numbers right after
    # the name (what an 80-column terminal must keep), category and status last
    shown = [cells[0], *cells[3:], cells[1], cells[2]]
    expected = [cell_state(shown[0], "ellipsis"), *(cell_state(c) for c in shown[1:])]
    assert [state(c) for c in lesson_cells(row, tone, pinned)] == expected


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

    def recorded(row: LessonRow, tone: Any, pinned: bool = False, effects: Any = None, alike: Any = None) -> list[Text]:
        on_ui_thread.append(threading.current_thread() is threading.main_thread())
        return lesson_cells(row, tone, pinned, effects, alike)

    monkeypatch.setattr(cells_module, "lesson_cells", recorded)  # the worker's LessonCells.build
    monkeypatch.setattr(lessons_module, "lesson_cells", recorded)  # and the screen's own
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonsScreen) and screen.view is not None and screen.cells is not None
        table = screen.query_one("#lessons-table", DataTable)
        themed = screen.query_one("#lessons-table", ThemedTable)
        assert table.row_count == len(screen.view.rows) > 0

        def shown_cells_are_fresh() -> None:
            columns = [str(column.key.value) for column in table.ordered_columns]  # the sort column second
            view = screen.view
            for row in view.rows if view else ():
                assert view is not None  # the loop runs only over a view's rows
                built = lesson_cells(row, themed.tone, row.path in screen.pins, view.effects)
                expected = [built[list(SORTS).index(key)] for key in columns]
                assert [state(c) for c in table.get_row(row.path)] == [state(c) for c in expected], row.path

        shown_cells_are_fresh()
        # every row's cells were built by the load worker, none on the UI thread
        assert len(on_ui_thread) >= len(screen.view.rows) and not any(on_ui_thread)

        missing = "tools/old-lesson.md"
        before = state(table.get_row(missing)[7])
        on_ui_thread.clear()
        app.theme = "textual-light"
        await settle(pilot)
        assert on_ui_thread and all(on_ui_thread)  # the worker's cells have the old tones: built again
        shown_cells_are_fresh()  # the new theme's tones, not the worker's old ones
        assert state(table.get_row(missing)[7]) != before  # its status is in the new theme's warning colour

        # pin the highlighted lesson: its name cell gets the mark, the others keep theirs
        await pilot.press("p")
        await settle(pilot)
        assert screen.pins and str(table.get_row(screen.pins[0])[0]).startswith(" " + PIN_MARK)
        shown_cells_are_fresh()


@pytest.mark.parametrize(("injected", "said"), [(1, "injected in 1 session\n"), (2, "injected in 2 sessions\n")])
def test_the_lesson_panel_counts_sessions_in_words(injected: int, said: str) -> None:
    from lesson_credit.core.views import LessonUsage
    from lesson_credit.tui.widgets.lesson_panel import LessonDetail, LessonPanel

    row = LessonRow("tools/a.md", "A", "tools", "active", 1, 1.5, 1.5, 0.5, 0.1, 0.9, 1, "s1", 0.5)
    detail = LessonDetail(row, LessonUsage(injected, 1, 0.5), None, 10, None, None)
    assert said in LessonPanel.describe(detail).plain


def test_the_lesson_panel_says_which_kinds_of_work_a_lesson_is_for() -> None:
    """gptme-contrib's match.session_categories decide which sessions `select` draws a lesson for; the panel
    never said, so nothing in the dashboard told why a lesson was never drawn for a research session."""
    from lesson_credit.core.library.lessons import parse_lesson
    from lesson_credit.tui.widgets.lesson_panel import LessonDetail, LessonPanel

    row = LessonRow("tools/a.md", "A", "tools", "active", 1, 1.5, 1.5, 0.5, 0.1, 0.9, 1, "s1", 0.5)
    text = "---\nmatch:\n  keywords: [a]\n  session_categories: [code, infrastructure]\n---\n# A\n"
    detail = LessonDetail(row, None, 0.5, 10, parse_lesson(text, "tools/a.md"), None)
    assert "\nfor code, infrastructure sessions only" in LessonPanel.describe(detail).plain
    anyone = LessonDetail(row, None, 0.5, 10, parse_lesson("---\nmatch:\n  keywords: [a]\n---\n# A\n", "a.md"), None)
    assert "sessions only" not in LessonPanel.describe(anyone).plain


def test_a_rebuild_keeps_the_names_set_it_had_when_the_names_are_the_same() -> None:
    """The names' cuts are cached by the column's set of names: a rebuild whose rows have the same names (a
    commit changed a count) hands on the very set, not an equal new one that each lookup compares name by
    name (30,000 names: 42 ms for 20 rows, against 0.3 ms); a new name makes a new set."""
    rows = (ROW, replace(ROW, path="tools/other.md"))
    first = cells_module.LessonCells.build(rows, STYLES)
    again = cells_module.LessonCells.build((replace(ROW, n=4), rows[1]), STYLES, previous=first)
    assert again.alike is first.alike
    grown = cells_module.LessonCells.build((*rows, replace(ROW, path="tools/third.md")), STYLES, previous=again)
    assert grown.alike == frozenset({"git-worktree", "other", "third"})


@pytest.mark.parametrize(("width", "said"), [(26, "  in 2026-10-20-148"), (27, "  in session 2026-10-20-148")])
def test_the_lesson_panels_last_session_keeps_its_id_beside_in(width: int, said: str) -> None:
    """At 80x24 the panel is 26 cells wide: "  in session 2026-10-20-148" (27 cells) wrapped at its space and
    left the id alone on a line of its own, under "  in session"; where it does not fit, "session" goes."""
    from lesson_credit.tui.widgets.lesson_panel import LessonDetail, LessonPanel

    row = LessonRow("tools/a.md", "A", "tools", "active", 1, 1.5, 1.5, 0.5, 0.1, 0.9, 1, "2026-10-20-148", 0.5)
    lines = LessonPanel.describe(LessonDetail(row, None, 0.5, 10, None, None), width).plain.splitlines()
    at = lines.index("last credit 0.50")
    assert lines[at + 1] == said
