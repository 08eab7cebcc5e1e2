"""Lessons, `d`: one lesson's joint effect by window of the log and its credit posterior after each
(tui/screens/lesson_over_time.py), driven like a user; the numbers are core.analysis.over_time's
(checked in tests/core/test_over_time.py), shown as the core gives them."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import Static

from lesson_credit.core.analysis.one_step import Interval
from lesson_credit.core.analysis.over_time import OverTime, Window
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.over_time_view import Series, view_of
from lesson_credit.tui.screens.lesson_over_time import LessonOverTimeScreen
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.widgets.over_time_plot import OverTimePlot
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.textual_private import screen_lines
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


class EffectPlotApp(App[None]):
    def compose(self) -> ComposeResult:
        yield OverTimePlot("effect", zero=True)


@pytest.mark.parametrize(("low", "high"), [(-0.05, 0.2), (-0.1, 0.5), (-0.05, 0.15), (-0.2, 0.07)])
async def test_the_effect_plots_zero_line_is_labelled_zero(low: float, high: float) -> None:
    """The effect's y ticks were plotext's, evenly spread between the interval's ends: the tick that fell on
    the row of the zero line read "-0.008" for [-0.05, 0.2] (and "-0.00", "0.017", "-0.020" for the others),
    a zero line labelled as if it were not zero. Every tick is now a round step apart, zero one of them."""
    app = EffectPlotApp()
    async with app.run_test(size=(60, 16)) as pilot:
        middle = (low + high) / 2
        app.query_one(OverTimePlot).series = Series((10.0, 30.0), (middle, middle), (low, low), (high, high), 40)
        await pilot.pause()
        rows = [strip.text for strip in screen_lines(app)]
        axis = [row.index("┤" if "┤" in row else "├") for row in rows if "┤" in row[:9] or "├" in row[:9]]
        labels = {row[: axis[0]].strip(): "├" in row[:9] for row in rows if row[axis[0] : axis[0] + 1] in "┤├"}
        ticks = {float(label): on_zero_line for label, on_zero_line in labels.items() if label}
        assert ticks.get(0.0) is True, labels  # the zero line is a tick, labelled 0
        assert not any(label.startswith("-0") and float(label) == 0 for label in labels), labels  # not "-0.00"
        values = sorted(ticks)
        steps = {round(b - a, 9) for a, b in zip(values, values[1:], strict=False)}
        assert len(steps) == 1, values  # evenly spaced round ticks
        assert values[0] <= low and values[-1] >= high, values  # the intervals are inside the ticks


@pytest.mark.parametrize(
    ("sizes", "said"),
    [
        # 59 in 5: the windows end at the ceil(59 k / 5)-th injection, 12, 24, 36, 48 and 59: 12, 12, 12, 12 and 11
        # (an older code floored the mean 11.8 to "about 11", a later one rounded it to "about 12")
        ((12, 12, 12, 12, 11), "5 windows of the 154 graded sessions, 11 or 12 of its 59 each"),
        # 25 in 2: the first ends at the ceil(12.5) = 13th, so 13 and 12 (rounded half to even it read "about 12")
        ((13, 12), "2 windows of the 154 graded sessions, 12 or 13 of its 25 each"),
        ((10, 10, 10), "3 windows of the 154 graded sessions, 10 of its 30 each"),  # (it read "about 10")
    ],
    ids=["59-in-5", "25-in-2", "30-in-3"],
)
def test_the_summary_says_how_many_injections_each_window_holds(sizes: tuple[int, ...], said: str) -> None:
    """A lesson's graded sessions are cut into windows holding as many of its injections each, up to one: the
    summary says the one count, or the two, each window holds (the sessions' positions do not matter here)."""
    windows = tuple(Window(10 * i + 1, 10 * i + 10, f"s{i}", None, 0.4, 0.3, 0.5) for i in range(len(sizes)))
    over = OverTime("tools/reading-large-files.md", 154, sum(sizes), False, "not identified", (), "seed", windows)
    assert said in view_of(over).summary


def test_the_summary_says_the_first_sessions_set_apart() -> None:
    """A lesson injected in 99 graded sessions has its first 20 set apart (a column of their own in the claims fit):
    its 7 windows hold 11 or 12 of the other 79 each (79 = 7 x 11 + 2), which it said as "of its 79", as if it had
    been injected 79 times."""
    sizes = (12, 12, 11, 11, 11, 11, 11)
    windows = tuple(Window(10 * i + 1, 10 * i + 10, f"s{i}", None, 0.4, 0.3, 0.5) for i in range(len(sizes)))
    over = OverTime("tools/reading-large-files.md", 200, 79, False, "not identified", (), "seed", windows, apart=20)
    assert "7 windows of the 200 graded sessions, 11 or 12 of its 79 each after its first 20 ·" in view_of(over).summary


def test_a_window_effect_that_rounds_to_zero_reads_zero_as_everywhere_else() -> None:
    """On the demo after a few grades, workflow/check-ci-before-done.md's second window read "-0.000 [-0.13, +0.12]":
    an effect that rounds to zero is 0.000, no sign, on Analysis, a session's credits and `loo` (a value never says
    above or below zero when it rounds to none), and its interval's bounds keep their signs. Estimate -0.0003, se 0.06,
    30 df: the 90% bounds are -0.0003 ± 1.697 × 0.06 = -0.102 and +0.102."""
    effect = Interval(-0.0003, 0.06, 30.0, 13, 75)
    window = Window(75, 162, "s162", effect, 0.465, 0.31, 0.62)
    over = OverTime("workflow/check-ci-before-done.md", 162, 26, True, None, (), "seed", (window,))
    assert view_of(over).rows()[0] == ("75–162", "13/75", "0.000 [-0.10, +0.10]", "0.465 [0.31, 0.62]")
