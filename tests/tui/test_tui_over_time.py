"""Lessons, `d`: one lesson's joint effect by window of the log and its credit posterior after each
(tui/screens/lesson_over_time.py), driven like a user; the numbers are core.analysis.over_time's
(checked in tests/core/test_over_time.py), shown as the core gives them."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.lesson_over_time import LessonOverTimeScreen
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.widgets.over_time_plot import OverTimePlot
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.tui.tui_fixture import burst, settle, table_keys

COMMIT = "workflow/commit-often.md"
SIZE = (120, 40)


def cells(screen: LessonOverTimeScreen) -> list[list[str]]:
    table = screen.query_one("#over-time-table", ThemedTable)
    return [[str(cell) for cell in table.get_row(key)] for key in table_keys(table)]


async def test_d_typed_ahead_opens_the_highlighted_lessons_series(analysis_workspace: Workspace) -> None:
    app = LessonCreditApp(analysis_workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        # typed before the Lessons list has loaded: the keys wait for it, the series load in a worker
        burst(pilot, "slash", *"commit", "enter", "d")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonOverTimeScreen) and screen.lesson_id == COMMIT
        assert screen.view is not None
        expected = Workspace(analysis_workspace.root).lesson_over_time(COMMIT)
        assert len(expected.windows) == 2 and expected.identified  # 24 sessions with it: two windows
        rows = cells(screen)
        assert [row[0] for row in rows] == [f"{w.first}–{w.last}" for w in expected.windows] == ["1–19", "20–40"]
        for row, window in zip(rows, expected.windows, strict=True):
            assert window.effect is not None
            assert row[1] == f"{window.effect.n_with}/{window.effect.n_without}"
            assert row[2].startswith(f"{window.effect.estimate:+.3f} [")
            assert row[3].startswith(f"{window.credit_mean:.3f} [")
        effect = screen.query_one("#effect-plot", OverTimePlot).series
        credit = screen.query_one("#credit-plot", OverTimePlot).series
        assert effect is not None and credit is not None
        assert credit.xs == (19.0, 40.0) and effect.xs == (10.0, 30.0)  # after each window; each window's middle
        # back, clear the filter, the next lesson down, `d` again: all typed at once
        burst(pilot, "escape", "escape", "down", "d")
        await settle(pilot)
        lessons = app.screen_stack[-2]
        assert isinstance(lessons, LessonsScreen)
        following = lessons.shown[lessons.shown.index(COMMIT) + 1]
        assert isinstance(app.screen, LessonOverTimeScreen) and app.screen.lesson_id == following
        burst(pilot, "escape")
        await settle(pilot)
        back: object = app.screen  # (mypy narrowed app.screen above)
        assert back is lessons


async def test_lesson_text_is_plain_and_a_lesson_never_injected_says_so(analysis_root: Path) -> None:
    app = LessonCreditApp(Workspace(analysis_root), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        name = "[bold red]odd[/].md"
        await app.push_screen(LessonOverTimeScreen(app.source, name))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonOverTimeScreen)
        info = screen.query_one("#over-time-info", Static).render()
        plain = info.plain if isinstance(info, Text) else str(info)
        assert plain == f"{name}\nNothing to show over time: not injected in any graded session."
        assert cells(screen) == []
        assert screen.query_one("#over-time-plots").display is False  # 80 columns: the table alone
