"""Snapshot tests: each screen at 80x24 and 160x45 on the fixture workspace (fixed clock, seed, timestamps).

The workspace lives in a tmp folder whose name is always `ws`; no absolute path is rendered.
Update with `pytest tests/tui --snapshot-update` after checking the change is wanted.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui import highlights
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.simulation import SimulationScreen
from tests.tui.tui_fixture import FIXED_NOW, add_hostile_session, burst, fixed_clock, open_session, settle

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 45), id="160x45")]
sizes = pytest.mark.parametrize("size", SIZES)

SnapCompare = Callable[..., bool]
Size = tuple[int, int]


def steps(*keys: str, session: str | None = None) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """Settle, optionally open a session from the Sessions screen, press keys, settle."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        if session is not None:
            await open_session(pilot, session)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run_before


def make_app(workspace: Workspace) -> LessonCreditApp:
    return LessonCreditApp(workspace, seed=0, poll_seconds=0)


@sizes
def test_snapshot_lessons(size: Size, snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=size, run_before=steps("down", "p", "down"))


@sizes
def test_snapshot_lessons_missing_lesson(size: Size, snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=size, run_before=steps("slash", *"missing", "enter"))


@sizes
def test_snapshot_sessions(size: Size, snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=size, run_before=steps("s"))


@sizes
def test_snapshot_session_detail(size: Size, snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=size, run_before=steps(session="s1"))


@sizes
def test_snapshot_session_detail_markup_journal(size: Size, snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=size, run_before=steps(session="s3"))


def test_snapshot_session_detail_highlights_past_the_budget(
    snap_compare: SnapCompare, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lesson of 200 keywords whose matches do not all fit the highlights' budget (made 1,000,000 here, as in
    tests/tui/test_highlights_budget.py: the first 6 fit): the journal pane's first line says so."""
    monkeypatch.setattr(highlights, "HIGHLIGHT_CHARS", 1_000_000)
    add_hostile_session(ws_root)
    app = make_app(Workspace(ws_root, clock=fixed_clock))
    assert snap_compare(app, terminal_size=(80, 24), run_before=steps(session="s6"))


@sizes
def test_snapshot_grading_preview(size: Size, snap_compare: SnapCompare, workspace: Workspace, ws_root: Path) -> None:
    log = (ws_root / "state" / "lesson-thompson" / "sessions.jsonl").read_bytes()
    assert snap_compare(make_app(workspace), terminal_size=size, run_before=steps("3", "down", session="s1"))
    assert (ws_root / "state" / "lesson-thompson" / "sessions.jsonl").read_bytes() == log


@sizes
def test_snapshot_what_if(size: Size, snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=size, run_before=steps("w", "t", "right_square_bracket"))


@sizes
def test_snapshot_what_if_policy(size: Size, snap_compare: SnapCompare, workspace: Workspace) -> None:
    # the selection policy switched from joint (the default) to uniform (T three times), not saved yet
    assert snap_compare(make_app(workspace), terminal_size=size, run_before=steps("w", "T", "T", "T"))


@sizes
def test_snapshot_help(size: Size, snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=size, run_before=steps("question_mark"))


@sizes
def test_snapshot_help_after_a_toast(size: Size, snap_compare: SnapCompare, workspace: Workspace) -> None:
    # `Draft discarded` said just before `?`: none over the help, nor beside it at 160 columns (held until the help
    # closes, with the time it had left); the toast's time is made long so that no snapshot depends on its end
    app = make_app(workspace)
    setattr(app, "NOTIFICATION_TIMEOUT", 3600)  # noqa: B010 (a class variable, set for this app only)
    assert snap_compare(app, terminal_size=size, run_before=steps("3", "escape", "question_mark", session="s4"))


@sizes
def test_snapshot_note_box(size: Size, snap_compare: SnapCompare, workspace: Workspace) -> None:
    # a note being typed: the footer says what enter, escape and tab do from the box
    assert snap_compare(make_app(workspace), terminal_size=size, run_before=steps("e", "o", "k", session="s1"))


@sizes
def test_snapshot_analysis(size: Size, snap_compare: SnapCompare, analysis_workspace: Workspace) -> None:
    # the fifth row has too little data and two confound flags: dimmed, its reasons in the panel
    keys = ("a", "down", "down", "down", "down")
    assert snap_compare(make_app(analysis_workspace), terminal_size=size, run_before=steps(*keys))


@sizes
def test_snapshot_lesson_rewards(size: Size, snap_compare: SnapCompare, analysis_workspace: Workspace) -> None:
    assert snap_compare(make_app(analysis_workspace), terminal_size=size, run_before=steps("a", "enter"))


@sizes
def test_snapshot_lesson_over_time(size: Size, snap_compare: SnapCompare, analysis_workspace: Workspace) -> None:
    # Lessons, `d` on commit-often (24 of the 40 sessions: two windows); 80 columns: the table alone
    keys = ("slash", *"commit", "enter", "d")
    assert snap_compare(make_app(analysis_workspace), terminal_size=size, run_before=steps(*keys))


@sizes
def test_snapshot_simulation(size: Size, snap_compare: SnapCompare, workspace: Workspace) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await steps("m")(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, SimulationScreen)
        screen.query_one("#scenario", Select).value = "few-sessions"
        screen.query_one("#seeds", Input).value = "2"
        await pilot.press("ctrl+r")
        for _ in range(600):
            if screen.report is not None:
                break
            await asyncio.sleep(0.05)
            await pilot.pause()
        await settle(pilot)

    assert snap_compare(make_app(workspace), terminal_size=size, run_before=run_before)


@sizes
def test_snapshot_health(size: Size, snap_compare: SnapCompare, ws_root: Path) -> None:
    later = FIXED_NOW + dt.timedelta(days=10)  # s4 pending for 11 days: a problem; old-lesson: a ghost arm
    app = make_app(Workspace(ws_root, clock=lambda: later))
    assert snap_compare(app, terminal_size=size, run_before=steps("h"))


@sizes
def test_snapshot_confirm_replacing_a_grade(size: Size, snap_compare: SnapCompare, workspace: Workspace) -> None:
    """The operator's 0.5 on s4 (pending: no question), then `3 c n` in one burst: the question to replace
    the 0.5, naming the `n` typed before it, which waits for the answer. (Over the heuristic's score in
    force on s1-s3 `c` asks nothing.)"""

    async def run_before(pilot: Pilot[Any]) -> None:
        await steps("5", "c", session="s4")(pilot)
        pilot.app.clear_notifications()  # the first commit's toast: gone before the question, whatever the timing
        burst(pilot, "3", "c", "n")
        await settle(pilot)

    assert snap_compare(make_app(workspace), terminal_size=size, run_before=run_before)


@sizes
def test_snapshot_empty_workspace(size: Size, snap_compare: SnapCompare, tmp_path: Path) -> None:
    app = make_app(Workspace(tmp_path / "empty", clock=lambda: FIXED_NOW))
    assert snap_compare(app, terminal_size=size, run_before=steps())
