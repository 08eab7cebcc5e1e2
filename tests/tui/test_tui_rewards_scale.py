"""The Rewards screen (Analysis, enter) at 80x24: both plots shared one y range, so bar heights compare across
them. Where one group is all in one bin (a lesson's 8 sessions all graded 0.95: 100%) the range was 0-100% for
both, and the other group's bins, 3% to 25% of its sessions, were all drawn one row tall: its shape was gone. Each
plot now has its own range where a group's tallest bar would be under half the shared one, and its title says so;
otherwise (the demo's lessons) one range still."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.lesson_rewards import LessonRewardsScreen
from lesson_credit.tui.widgets.reward_histogram import RewardHistogramPlot
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.textual_private import screen_lines
from tests.tui.test_tui_whole_headers import demo_app
from tests.tui.tui_fixture import ANALYSIS_SESSIONS, analysis_session, burst, fixed_clock, settle, table_keys

LESSON = "tools/retry-budget.md"  # in sessions i % 5 == 0 (docs: tests/tui/tui_fixture.py)


def tops(app: LessonCreditApp) -> tuple[float, float]:
    return tuple(app.screen.query_one(f"#{p}-plot", RewardHistogramPlot).y_max for p in ("with", "without"))  # type: ignore[return-value]


async def open_rewards(app: LessonCreditApp, pilot: object, lesson: str) -> LessonRewardsScreen:
    await settle(pilot)
    burst(pilot, "a")
    await settle(pilot)
    table = app.screen.query_one("#loo-table", ThemedTable)
    burst(pilot, *["down"] * table_keys(table).index(lesson), "enter")
    await settle(pilot)
    assert isinstance(app.screen, LessonRewardsScreen) and app.screen.lesson_id == lesson
    return app.screen


async def test_a_group_in_one_bin_does_not_flatten_the_other(analysis_root: Path) -> None:
    ws = Workspace(analysis_root, clock=fixed_clock)
    with_it = [f"a{i:02d}" for i in range(ANALYSIS_SESSIONS) if i % 5 == 0]
    for session_id in with_it:
        ws.grade(session_id, 0.95, grader="manual")  # all in the 0.9-1.0 bin: 100% of the group
    # the other group's shares by hand: its rewards' bins of 0.1 (1.0 in the last)
    others = [analysis_session(i)[3] for i in range(ANALYSIS_SESSIONS) if i % 5 != 0]
    counts = [sum(min(int(r * 10 + 1e-9), 9) == b for r in others) for b in range(10)]
    tallest = max(counts) / len(others)
    own = -(-round(tallest * 1000) // 100) / 10  # up to the next 0.1 (tallest is a share of 32: 0.25 -> 0.3)
    assert 0.1 < own <= 0.5
    app = LessonCreditApp(Workspace(analysis_root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_rewards(app, pilot, LESSON)
        assert tops(app) == pytest.approx((1.0, own))
        shown = [row.strip() for row in (line.text for line in screen_lines(app)) if ": n=" in row]
        burst(pilot, "end")  # the without plot in view (the body scrolls at 24 rows)
        await settle(pilot)
        text = [line.text for line in screen_lines(app)]
        shown += [row.strip() for row in text if ": n=" in row and row.strip() not in shown]
        assert shown == [
            f"with the lesson: n={len(with_it)}, mean 0.950 (line) · own y scale",
            f"without it: n={len(others)}, mean {sum(others) / len(others):.3f} (line) · own y scale",
        ], shown
        assert any(row.startswith(f"{own:.0%}┤") for row in text), text  # the without plot's top tick


async def test_the_demos_lessons_keep_one_scale(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_rewards(app, pilot, "workflow/resolve-merge-conflicts.md")  # with: 26% at most, without: 18%
        assert tops(app) == pytest.approx((0.3, 0.3))
        assert not any("own y scale" in line.text for line in screen_lines(app))
