"""What the first frame waits for, and what waits for it (tui/background.py, `after_shown` in
tui/textual_private.py, the import diet). No timing: which thread, which order, which modules."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui import app as tui_app
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.background import NICENESS
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.source import Opening, WorkspaceSource
from lesson_credit.tui.source_views import LessonsView
from tests.support.cli_run import run
from tests.tui.tui_fixture import as_on_a_terminal, burst, headless_run, settle

SIZE = (120, 40)
REPO = Path(__file__).parents[2]
# the groups of the workers the Lessons screen and its plot start once the rows are on screen
AFTER_FIRST_FRAME = ("lessons-intervals", "lessons-p-top-k", "lessons-effects", "plot-import")


def niceness() -> int:
    """The calling thread's niceness (on Linux, niceness belongs to the thread)."""
    return os.getpriority(os.PRIO_PROCESS, 0)


async def test_the_first_lessons_view_is_read_at_the_ui_threads_priority(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The view the first paint waits for is not niced like the background work; a later reload is."""
    seen: list[int] = []
    real = WorkspaceSource.lessons_view

    def recording(self: WorkspaceSource) -> LessonsView:
        seen.append(niceness())
        return real(self)

    monkeypatch.setattr(WorkspaceSource, "lessons_view", recording)
    ui = niceness()
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonsScreen) and screen.view is not None
        screen.reload()  # as after a change of the log
        await settle(pilot)
    assert seen == [ui, min(ui + NICENESS, 19)]  # 19: the most a thread can be niced


async def test_the_work_after_the_first_frame_waits_until_a_frame_can_be_shown(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows that land while the app holds its repaints (Textual's start-up does, until its mount has run)
    start nothing: no frame showed them. Once repaints go on, the intervals and the rest start."""
    monkeypatch.setattr(beta_mod, "loaded", lambda: False)  # the first view comes without its intervals
    gate = threading.Event()
    real = WorkspaceSource.lessons_view

    def gated(self: WorkspaceSource) -> LessonsView:
        gate.wait(60)
        return real(self)

    monkeypatch.setattr(WorkspaceSource, "lessons_view", gated)
    started: list[str] = []  # what the work after the first frame asked the source for
    real_intervals, real_p_top_k, real_effects = (
        WorkspaceSource.with_intervals,
        WorkspaceSource.p_top_k,
        WorkspaceSource.effects,
    )

    def with_intervals(view: LessonsView) -> LessonsView:
        started.append("intervals")
        return real_intervals(view)

    def p_top_k(self: WorkspaceSource) -> Any:
        started.append("p_top_k")
        return real_p_top_k(self)

    def effects(self: WorkspaceSource) -> Any:
        started.append("effects")
        return real_effects(self)

    monkeypatch.setattr(WorkspaceSource, "with_intervals", staticmethod(with_intervals))
    monkeypatch.setattr(WorkspaceSource, "p_top_k", p_top_k)
    monkeypatch.setattr(WorkspaceSource, "effects", effects)
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, LessonsScreen)
        with app.batch_update():
            gate.set()
            for _ in range(3000):  # a minute: only catches a view that never comes
                if screen.view is not None:
                    break
                await asyncio.sleep(0.02)
            assert screen.view is not None and screen.view.intervals_missing
            for _ in range(10):  # refreshes that draw nothing run meanwhile
                await asyncio.sleep(0.02)
            assert started == [] and [w.group for w in app.workers if w.group in AFTER_FIRST_FRAME] == []
        await settle(pilot)
        assert sorted(started) == ["effects", "intervals", "p_top_k"]
        assert screen.view is not None and not screen.view.intervals_missing and screen.view.p_top_k is not None


def cells(table: Any) -> list[list[str]]:
    return [[str(cell).strip() for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def pins_after(workspace: Workspace, held: bool) -> tuple[str | None, list[str], list[list[str]]]:
    """Type `down down p` (pin the third lesson), while the log's first read is held (`held`: the
    keys go in while only the names are shown) or once the view is shown; then what it came to:
    (the highlighted lesson, the pins, what the table showed while the read was held)."""
    gate = threading.Event()
    if not held:
        gate.set()

    class Held(WorkspaceSource):
        def lessons_view(self) -> LessonsView:
            assert gate.wait(60)
            return super().lessons_view()

    app = LessonCreditApp(Held(workspace), seed=0, poll_seconds=0)
    before: list[list[str]] = []
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, LessonsScreen)
        table = screen.query_one("#lessons-table", DataTable)
        if held:
            for _ in range(3000):  # a minute: only catches names that never come
                if table.row_count > 0:
                    break
                await asyncio.sleep(0.02)
            before = cells(table)
            burst(pilot, "down", "down", "p")
            await asyncio.sleep(0.1)
            assert screen.view is None and screen.pins == []  # the keys wait for the numbers
            gate.set()
        else:
            await settle(pilot)
            burst(pilot, "down", "down", "p")
        await settle(pilot)
        return screen.highlighted, screen.pins, before


async def test_the_first_frame_shows_the_names_before_the_log_is_read_and_keys_typed_then_act_on_the_view(
    workspace: Workspace,
) -> None:
    """While the log's first read is under way (seconds at a million sessions) the table lists the
    library's lessons by name, "…" for every number; keys typed meanwhile act on the view once it is
    shown, as the same keys typed after it (not on the names' alphabetical order)."""
    highlighted, pins, names_frame = await pins_after(workspace, held=True)
    lessons = workspace.root / "lessons"
    names = sorted(path.relative_to(lessons).as_posix().removesuffix(".md") for path in lessons.rglob("*.md"))
    assert [row[0] for row in names_frame] == names
    assert {cell for row in names_frame for cell in row[1:]} == {"…"}
    expected = await pins_after(workspace, held=False)
    assert (highlighted, pins) == expected[:2] and pins == [highlighted] and highlighted != names[2] + ".md"


FIRST_FRAMES = """
import asyncio, json, sys
from pathlib import Path
from lesson_credit.tui import gc_settings
gc_settings.start()
from textual.app import App
from textual.widgets import DataTable
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.source import Opening
gc_settings.freeze()
shown = {}
display, render_lines = App._display, DataTable.render_lines
def rows_drawn(table, crop):
    lines = render_lines(table, crop)
    if table.row_count > 0:
        shown.setdefault("rows", True)
    return lines
def recording(app, screen, renderable):
    display(app, screen, renderable)
    if renderable is None or app._batch_count:
        return
    if "rows" in shown and "names" not in shown:
        shown["names"] = sorted(sys.modules)
    if getattr(screen, "view", None) is not None and "view" not in shown:
        shown["view"] = sorted(sys.modules)
DataTable.render_lines, App._display = rows_drawn, recording
def open_workspace():
    from lesson_credit.core.workspace import Workspace
    return Workspace(Path(sys.argv[1]))
async def main():
    app = LessonCreditApp(Opening(Path(sys.argv[1]), open_workspace), poll_seconds=0)
    async with app.run_test(size=(120, 40)):
        for _ in range(3000):
            if "view" in shown:
                break
            await asyncio.sleep(0.02)
asyncio.run(main())
print(json.dumps(shown))
"""
# what the first frame does not show: the other screens, the analysis, the joint fit, the plots
NOT_BY_THE_FIRST_FRAME = (
    "scipy",
    "plotext",
    "textual_plotext",
    "lesson_credit.core.analysis.effects",
    "lesson_credit.core.analysis.joint",
    "lesson_credit.core.analysis.claims",
    "lesson_credit.core.health",
    "lesson_credit.tui.widgets.density_plot",
    "lesson_credit.tui.what_if_view",
    "lesson_credit.tui.session_search",
    "lesson_credit.tui.series",
    "lesson_credit.tui.effects_job",
    "lesson_credit.tui.screens.sessions",
    "lesson_credit.tui.screens.analysis",
    "lesson_credit.tui.screens.health",
    "lesson_credit.tui.screens.what_if",
)


# what the first frame with the names does not show either: the engine that reads the log, and the lesson
# files' YAML parser (the names are the files' ids; the view loads the library)
NOT_BY_THE_NAMES = (
    "numpy",
    "yaml",
    "frontmatter",
    "lesson_credit.core.workspace",
    "lesson_credit.core.reader",
    "lesson_credit.core.views",
    "lesson_credit.core.model.beta",
)


def test_the_first_frame_with_the_lessons_rows_imports_nothing_it_does_not_show(workspace: Workspace) -> None:
    """In a process of its own (other tests' imports would be there), the dashboard opening its workspace
    as on a terminal (an Opening): the modules loaded when the first frame with the lessons' names, then
    the first with the Lessons view, is handed to the driver."""
    proc = subprocess.run(
        [sys.executable, "-c", FIRST_FRAMES, str(workspace.root)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    frames = json.loads(proc.stdout.splitlines()[-1])
    names, view = set(frames["names"]), set(frames["view"])
    assert "lesson_credit.tui.screens.lessons" in names and {"numpy", "lesson_credit.core.workspace"} <= view
    not_shown = (*NOT_BY_THE_FIRST_FRAME, *NOT_BY_THE_NAMES)
    assert sorted(m for m in names if m in not_shown or m.split(".")[0] in not_shown) == []
    loaded = sorted(m for m in view if m in NOT_BY_THE_FIRST_FRAME or m.split(".")[0] in NOT_BY_THE_FIRST_FRAME)
    assert loaded == []


def test_a_workspace_the_dashboard_cannot_open_ends_it_with_that_error(
    ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The open fails after the first frame (an Opening): the app exits, and `run` raises the error
    the CLI turns into its one line and exit code, as when it opened the workspace itself."""
    from lesson_credit.core.api import WorkspaceError

    error = WorkspaceError("config.toml: cannot be read")
    opened: list[str] = []

    def fail() -> Workspace:
        opened.append("tried")
        raise error

    monkeypatch.setattr(LessonCreditApp, "run", headless_run)
    with pytest.raises(WorkspaceError) as raised:
        tui_app.run(Opening(ws_root, fail))
    assert raised.value is error and opened == ["tried"]  # once: later callers get the same error


def test_the_cli_on_a_terminal_fails_on_a_bad_workspace_with_one_line(
    ws_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`lesson-credit tui` opens the workspace in the dashboard (after its first frame): a config.toml
    that cannot be read ends it with one line and exit code 1."""
    (ws_root / "state" / "lesson-thompson" / "config.toml").write_text("[credit\n")
    monkeypatch.setattr(LessonCreditApp, "run", headless_run)
    as_on_a_terminal(monkeypatch)
    code, out, err = run(capsys, "tui", "-w", str(ws_root))
    assert code == 1 and out == ""
    assert err.startswith("lesson-credit: ") and err.count("\n") == 1 and "config.toml" in err, err


@pytest.mark.parametrize("redirected", ["stdin", "stdout", "stderr"])
def test_the_dashboard_is_not_started_without_a_terminal(
    ws_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], redirected: str
) -> None:
    """It reads keys on stdin and draws on stderr; with any of the three redirected it ran on (drawing
    into a file, or where nobody looks, waiting for keys). Now one line and exit 1, the app never run."""
    started: list[LessonCreditApp] = []
    monkeypatch.setattr(LessonCreditApp, "run", started.append)
    as_on_a_terminal(monkeypatch, redirected)
    code, out, err = run(capsys, "tui", "-w", str(ws_root))
    assert (code, out, started) == (1, "", [])
    assert err.startswith("lesson-credit: the dashboard needs a terminal") and err.count("\n") == 1, err
    assert f"{redirected} is not one" in err, err  # which of the three, so `2>err.log` is not a puzzle


@pytest.mark.parametrize("redirected", ["stdin", "stdout", "stderr"])
def test_no_command_without_a_terminal_names_the_stream_that_is_not_one(
    ws_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], redirected: str
) -> None:
    """`lesson-credit -w DIR 2>err.log` in a terminal: no dashboard (it would draw into the file), and the line
    says stderr is why; it said only "no terminal for the dashboard", on a terminal."""
    started: list[LessonCreditApp] = []
    monkeypatch.setattr(LessonCreditApp, "run", started.append)
    as_on_a_terminal(monkeypatch, redirected)
    code, out, err = run(capsys, "-w", str(ws_root))
    assert (code, out, started) == (2, "", [])
    assert err.startswith("lesson-credit: no command, and no terminal for the dashboard") and err.count("\n") == 1
    assert f"{redirected} is not one" in err, err
