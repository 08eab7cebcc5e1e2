"""Start-up: the Lessons view is loaded once, and a later append still reaches the screen."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui import app as tui_app
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.source_views import LessonsView, SourceSnapshot
from tests.tui.tui_fixture import LOG_REL, settle


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The log version each Lessons view was built at, in order."""
    seen: list[int] = []
    real = WorkspaceSource.lessons_view

    def counting(self: WorkspaceSource) -> LessonsView:
        view = real(self)
        seen.append(view.version)
        return view

    monkeypatch.setattr(WorkspaceSource, "lessons_view", counting)
    return seen


async def test_the_lessons_view_is_loaded_once_at_start(
    workspace: Workspace, loads: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    checks: list[object] = []
    real_check = WorkspaceSource.check

    def counted(self: WorkspaceSource, *, wrote: bool = False) -> SourceSnapshot | None:
        result = real_check(self, wrote=wrote)
        checks.append(result)
        return result

    monkeypatch.setattr(WorkspaceSource, "check", counted)
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        # not "wait half a second and see nothing happened": wait until the poll has really looked at
        # the unchanged log five times, however slow the machine
        for _ in range(6000):  # (a minute: only a poll that never runs fails)
            if len(checks) >= 5:
                break
            await asyncio.sleep(0.01)
        await settle(pilot)
        assert len(checks) >= 5
        assert len(loads) == 1


async def test_an_append_after_the_first_load_reloads_the_screen(
    workspace: Workspace, loads: list[int], ws_root: Path
) -> None:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        first = list(loads)
        grade = {"type": "grade", "session_id": "s1", "base_reward": 0.25, "grader": "manual"}
        with (ws_root / LOG_REL).open("a") as handle:  # another process appends
            handle.write(json.dumps(grade) + "\n")
        for _ in range(1200):  # a minute at most: a limit that only catches a screen that never reloads
            await asyncio.sleep(0.05)
            if len(loads) > len(first):
                break
        await settle(pilot)
        assert len(first) == 1 and len(loads) == 2 and loads[1] > loads[0]
        screen = app.screen
        assert isinstance(screen, LessonsScreen) and screen.view is not None and screen.view.version == loads[1]


async def test_p_top_k_is_estimated_after_the_table_is_shown(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from lesson_credit.tui.widgets.lesson_panel import LessonPanel

    release = threading.Event()
    real = WorkspaceSource.p_top_k

    def slow(self: WorkspaceSource) -> tuple[int, Mapping[str, float]]:
        release.wait(120)  # released by the test; the limit only keeps a failing test from hanging
        return real(self)

    monkeypatch.setattr(WorkspaceSource, "p_top_k", slow)
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(3000):  # the table fills while the estimate is still running (a minute: only a hang fails)
            await asyncio.sleep(0.02)
            screen = app.screen
            if isinstance(screen, LessonsScreen) and screen.view is not None and screen.shown:
                break
        screen = app.screen
        assert isinstance(screen, LessonsScreen) and screen.view is not None and screen.view.p_top_k is None
        await pilot.pause()
        panel = screen.query_one("#lesson-panel", LessonPanel)
        assert panel.detail is not None and panel.detail.estimating
        assert "estimating…" in panel.describe(panel.detail).plain
        release.set()
        await settle(pilot)
        detail = panel.detail
        assert detail is not None and not detail.estimating
        expected = Workspace(workspace.root).p_top_k(seed=0)
        assert detail.p_top_k == pytest.approx(expected[detail.row.path])
        assert "estimating" not in panel.describe(detail).plain


def test_start_up_imports_only_what_the_first_screen_needs() -> None:
    """Health, Simulation, Analysis (and scipy) load when first needed, not with the app."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = (
        "import sys, lesson_credit.tui.app; "
        "print(' '.join(m for m in ('lesson_credit.core.health', 'lesson_credit.core.sim.simulate', "
        "'lesson_credit.tui.screens.analysis', "
        "'lesson_credit.tui.screens.simulation', 'lesson_credit.tui.screens.health', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env={"PYTHONPATH": str(root)}, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


class OrderSource(WorkspaceSource):
    """Records when the app's first snapshot is taken: how many Lessons views were built by then,
    and whether the Lessons table was showing rows."""

    def __init__(self, workspace: Workspace, fail_view: bool = False) -> None:
        super().__init__(workspace)
        self.fail_view = fail_view
        self.views = 0
        self.app: LessonCreditApp | None = None
        self.at_snapshot: list[tuple[int, int]] = []  # (views built, rows in the table)

    def lessons_view(self) -> LessonsView:
        if self.fail_view:
            raise OSError("lessons: unreadable")
        view = super().lessons_view()
        self.views += 1
        return view

    def snapshot(self) -> SourceSnapshot:
        screen = self.app.screen if self.app is not None else None
        rows = len(screen.shown) if isinstance(screen, LessonsScreen) else -1
        self.at_snapshot.append((self.views, rows))
        return super().snapshot()


async def test_the_first_snapshot_waits_until_the_lessons_rows_are_drawn(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It holds the source's lock the first rows need: taken at mount it delayed the first paint."""
    monkeypatch.setattr(tui_app, "FIRST_SNAPSHOT_LATEST_S", 600.0, raising=False)  # the timer never wins
    source = OrderSource(workspace)
    app = LessonCreditApp(source, seed=0, poll_seconds=0)
    source.app = app
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.snapshot is not None
        # five lesson files, and one lesson the log names that the library no longer has: six rows
        assert source.at_snapshot == [(1, 6)]


async def test_the_first_snapshot_is_taken_when_the_lessons_screen_never_fills(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its read failed: the snapshot (next-pending, the problems notice) still comes, after the timer."""
    monkeypatch.setattr(tui_app, "FIRST_SNAPSHOT_LATEST_S", 0.1)
    source = OrderSource(workspace, fail_view=True)
    app = LessonCreditApp(source, seed=0, poll_seconds=0)
    source.app = app
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(3000):  # a minute: only catches a snapshot that never comes
            await asyncio.sleep(0.02)
            if app.snapshot is not None:
                break
        await settle(pilot)
        assert source.at_snapshot == [(0, 0)] and app.snapshot is not None


def test_the_dashboard_command_sets_the_collector_before_importing_the_engine() -> None:
    """`lesson-credit` (the dashboard) raises the young threshold and turns the collector off before
    the command imports the engine (core/library/journals.py first; the app opens the workspace), and
    freezes what the imports made and turns it on again before the app starts (tui/gc_settings.py)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = """
import gc, sys
seen = {}
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "lesson_credit.core.library.journals" and "core" not in seen:
            seen["core"] = (gc.get_threshold(), gc.isenabled())
        return None
sys.meta_path.insert(0, Watch())
import textual.app  # not the engine
def fake_run(self):
    seen["run"] = (gc.get_threshold(), gc.get_freeze_count() > 0, gc.isenabled())
textual.app.App.run = fake_run
import lesson_credit.cli.common
lesson_credit.cli.common.on_a_terminal = lambda: True  # as the dashboard is opened in one
from lesson_credit.cli.main import main
main(["tui", "--workspace", sys.argv[1]])
print(seen["core"], seen["run"])
"""
    out = subprocess.run(
        [sys.executable, "-c", code, str(root)], cwd=root, env={"PYTHONPATH": str(root)}, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    # CPython's default is (700, 10, 10); the dashboard's young threshold is 10,000
    assert out.stdout.split() == ["((10000,", "10,", "10),", "False)", "((10000,", "10,", "10),", "True,", "True)"]
