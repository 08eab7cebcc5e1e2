"""The dashboard on a folder of lessons alone (a checkout of a library, no state/): every screen read, nothing
written into the folder, as the command line's reads (tests/core/test_lessons_only_folder.py). It made
`state/lesson-thompson/.cache/` there."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from tests.support.engine_helpers import make_workspace
from tests.tui.tui_fixture import fixed_clock, settle


async def test_the_dashboard_on_lessons_alone_makes_no_state_folder(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {"tools/git.md": (["git worktree"], "active")})
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in ("s", "a", "m", "h", "A", "I", "l"):
            await pilot.press(key)
            await settle(pilot)
        assert (app.screen.title or "").startswith("Lessons")
    assert sorted(p.name for p in root.iterdir()) == ["lessons"]
