"""Session detail: "why this credit" says a lesson was included during the session (record --during), as
`show` does under its credit table: credited as the others, no treatment of the effect estimates. It said
nothing, so the lesson read as one chosen before the session while the Analysis screen counted the session as
one without it."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from tests.tui.tui_fixture import fixed_clock, open_session, settle

GIT, TESTS = "tools/git-worktree.md", "testing/run-tests.md"
SAID = "included during the session (record --during)"


async def test_why_this_credit_says_a_lesson_was_included_during_the_session(ws_root: Path) -> None:
    ws = Workspace(ws_root, clock=fixed_clock)
    journal = ws_root / "state" / "journals" / "s1.md"
    ws.record("d1", journal, [GIT], reward=0.8, during=[TESTS], timestamp="2026-03-06T10:00:00Z")
    for size in ((80, 24), (200, 50)):
        app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), seed=0, poll_seconds=0)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            detail = await open_session(pilot, "d1")
            story = str(detail.query_one("#credit-story").render())
            assert SAID not in story, story  # GIT, first: chosen before the session
            await pilot.press("down")
            await settle(pilot)
            story = str(detail.query_one("#credit-story").render())
            # s1.md names pytest, not "tests pass": salience 1/2, weight 0.3 + 0.7 x 0.5 = 0.65, credited 0.8 x 0.65
            assert "0.52" in story and SAID in story, story
            first = story.split("\n")[: 3 if size == (80, 24) else 5]
            assert any(SAID in line for line in first), story  # in view without scrolling the box
