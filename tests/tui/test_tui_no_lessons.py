"""Session detail of a session that injected no lesson: its "why this credit" box says what such a session
does (moves no posterior, counts for the baseline), as `show` and `explain` do, instead of asking to select a
lesson there is none of."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from tests.tui.tui_fixture import burst, fixed_clock, log_lines, open_session, record, settle


def story_text(app: LessonCreditApp) -> str:
    return str(app.screen.query_one("#credit-story").render())


async def test_a_session_without_lessons_says_it_counts_for_the_baseline_only(ws_root: Path) -> None:
    """On the old code the box said "Select a lesson to see its credit." over an empty credits table, pending
    or graded. The words are the CLI's (`show s0`: "no lessons: no posterior moves; it counts for the
    baseline only"), "once graded" while pending."""
    ws = Workspace(ws_root, clock=fixed_clock)
    record(ws, ws_root, ("s0", "s4.md", [], None, "code", "2026-03-06T10:00:00Z"))
    for size in ((80, 24), (200, 50)):
        app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), seed=0, poll_seconds=0)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await open_session(pilot, "s0")
            story = story_text(app)
            assert "Select a lesson" not in story
            assert "no posterior moves; once graded, it counts for the baseline only" in story, story
    app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_session(pilot, "s0")
        burst(pilot, "7", "c")
        await settle(pilot)
        grades = [e for e in log_lines(ws_root) if e.get("type") == "grade"]
        assert [(e["session_id"], e["base_reward"]) for e in grades] == [("s0", 0.7)]
        story = story_text(app)
        assert "no posterior moves; it counts for the baseline only" in story, story
