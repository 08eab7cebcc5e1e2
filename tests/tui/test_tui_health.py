"""Pilot tests for the Health screen: the CLI's words, and a first state that is never a wrong "no problems"."""

from __future__ import annotations

import datetime as dt
import io
from contextlib import redirect_stdout
from pathlib import Path

from lesson_credit.cli.main import main as cli_main
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.health import FindingCard, HealthScreen
from tests.tui.tui_fixture import FIXED_NOW, open_health, settle

SIZE = (120, 40)
LATER = FIXED_NOW + dt.timedelta(days=10)  # s4 has been pending for 11 days: a warning


def lint_summary(root: Path) -> str:
    """The last line `lesson-credit lint` prints: `N error(s), M warning(s); failing on errors`."""
    out = io.StringIO()
    with redirect_stdout(out):
        cli_main(["lint", "--workspace", str(root)], clock=lambda: LATER)
    return out.getvalue().strip().splitlines()[-1]


async def test_health_title_counts_errors_and_warnings_in_the_clis_words(ws_root: Path) -> None:
    # the fixture: a ghost arm (tools/old-lesson.md) and a session never graded, both warnings
    assert lint_summary(ws_root).startswith("0 error(s), 2 warning(s)")
    (ws_root / "lessons" / "tools" / "broken.md").write_text("---\nmatch: [unclosed\n---\n# Broken\n")
    assert lint_summary(ws_root).startswith("1 error(s), 2 warning(s)")
    app = LessonCreditApp(Workspace(ws_root, clock=lambda: LATER), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_health(pilot)
        assert screen.title == "Health · 1 error, 2 warnings"
        cards = list(screen.query(FindingCard))
        assert [c.finding.severity for c in cards] == ["error", "warning", "warning"]
        assert cards[0].has_class("-error") and not cards[1].has_class("-error")
        headings = [str(w.render()) for w in screen.query(".health-heading")]
        assert headings == ["Errors (1)", "Warnings (2)"]
        assert "problem" not in screen.title.lower()


async def test_health_says_nothing_about_problems_until_the_checks_have_run(ws_root: Path) -> None:
    import threading

    from lesson_credit.tui.source import WorkspaceSource
    from lesson_credit.tui.source_views import HealthView

    gate = threading.Event()
    real = WorkspaceSource.health

    def slow_health(self: WorkspaceSource, **kwargs: bool) -> HealthView:
        gate.wait(30)
        return real(self, **kwargs)

    app = LessonCreditApp(Workspace(ws_root, clock=lambda: LATER), poll_seconds=0)
    WorkspaceSource.health = slow_health  # type: ignore[method-assign]  # every source's health waits (restored below)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await app.run_action("show_health")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, HealthScreen) and screen.view is None
            assert not screen.query("#health-empty") and not screen.query(FindingCard)
            assert screen.title == "Health" and screen.query_one("#findings").loading  # checking, not "no problems"
            gate.set()  # the checks finish only after the screen has been looked at (a timer raced a loaded machine)
            await settle(pilot)
            assert screen.view is not None and screen.title == "Health · 0 errors, 2 warnings"
    finally:
        gate.set()  # a failed assertion must not leave the worker waiting
        WorkspaceSource.health = real  # type: ignore[method-assign]  # restores the method
