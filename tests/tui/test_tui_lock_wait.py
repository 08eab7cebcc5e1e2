"""A write while another process holds the log's writers' lock: the title bar says why the write waits as the
wait starts, and once the lock timeout has passed the warning names the lock in words that read whole at 80
columns. Another writer holds the lock for real (tests/support/lock_holder.py): the tests wait on what the app
says, never on time. s4 is pending (tests/tui/tui_fixture.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static
from textual.widgets._toast import Toast

from lesson_credit.core.base.files import LockHeld
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui import app as app_module
from lesson_credit.tui import app_writes
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.app_writes import lock_words
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.support.lock_holder import LockHolder
from tests.support.textual_private import screen_lines
from tests.tui.store_down import keep_toasts, toasts
from tests.tui.tui_fixture import log_lines, settle, toasts_shown, wait_until

LOCK = Path("state") / "lesson-thompson" / "sessions.jsonl.lock"


def make_app(workspace: Workspace) -> LessonCreditApp:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    app.retry_seconds = 0.01
    return app


def grades(root: Path) -> list[tuple[str, float | None]]:
    return [(e["session_id"], e["base_reward"]) for e in log_lines(root) if e.get("type") == "grade"]


async def open_s4(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, LessonCreditApp)
    await app.push_screen(SessionDetailScreen(app.source, "s4"))
    await settle(pilot)


@pytest.fixture
def no_slow_write_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """A write is never said for having taken a while ("saving 1 write…"), and the title bar is not looked at
    every PROGRESS_EVERY_S: whatever it says about the lock is said when something happened, not by a clock."""
    monkeypatch.setattr(app_writes, "SLOW_WRITE_S", 1e9)
    monkeypatch.setattr(app_module, "PROGRESS_EVERY_S", 1e9)


@pytest.mark.usefixtures("no_slow_write_said")
async def test_the_title_bar_says_a_write_waits_for_another_writers_lock_as_the_wait_starts(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said `saving 1 write…` once the write had taken 0.5 s, and why only once the lock timeout (30 s)
    had passed."""
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "600")  # the writer waits; it does not fail
    app = make_app(workspace)
    with LockHolder(ws_root / LOCK) as holder:
        async with app.run_test(size=(80, 24)) as pilot:
            await open_s4(pilot)
            await pilot.press("7", "c")
            await wait_until(pilot, lambda: app.saving == "1 write waits for another writer's lock")
            assert grades(ws_root) == []
            holder.release()
            await wait_until(pilot, lambda: grades(ws_root) == [("s4", 0.7)] and app.saving == "")
            await settle(pilot)
    assert grades(ws_root) == [("s4", 0.7)]


def grade_line(app: LessonCreditApp) -> str:
    return str(app.screen.query_one("#grade-status", Static).render())


@pytest.mark.usefixtures("no_slow_write_said")
async def test_the_grade_line_says_the_grade_waits_to_be_saved_while_the_lock_is_held(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The title bar said the write waited for another writer's lock; the grade line, where the 0.7 typed is
    echoed, said "grade pending" as if nothing had been typed. It says "0.7 waiting to be saved" until the write
    lands, then the grade in force."""
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "600")
    app = make_app(workspace)
    with LockHolder(ws_root / LOCK) as holder:
        async with app.run_test(size=(80, 24)) as pilot:
            await open_s4(pilot)
            await pilot.press("7", "c")
            await wait_until(pilot, lambda: app.saving == "1 write waits for another writer's lock")
            await pilot.pause()
            assert "0.7 waiting to be saved" in grade_line(app), grade_line(app)
            await pilot.press("u")  # the undo, queued behind it: the session's latest write
            await wait_until(pilot, lambda: app.saving == "2 writes wait for another writer's lock")
            await pilot.pause()
            assert "undo waiting to be saved" in grade_line(app), grade_line(app)
            holder.release()
            await wait_until(pilot, lambda: app.writes.pending == 0 and app.saving == "")
            await settle(pilot)
            assert "waiting to be saved" not in grade_line(app), grade_line(app)
    assert grades(ws_root) == [("s4", 0.7), ("s4", None)]


@pytest.mark.usefixtures("no_slow_write_said")
async def test_a_write_typed_behind_one_waiting_for_the_lock_is_counted_at_once(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The count in the title bar changed only at its next look (every 0.5 s): the key typed seemed not taken."""
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "600")
    app = make_app(workspace)
    with LockHolder(ws_root / LOCK) as holder:
        async with app.run_test(size=(80, 24)) as pilot:
            await open_s4(pilot)
            await pilot.press("7", "c")
            await wait_until(pilot, lambda: app.saving == "1 write waits for another writer's lock")
            await pilot.press("u")  # the undo of the 0.7, queued behind it
            assert app.writes.pending == 2
            assert app.saving == "2 writes wait for another writer's lock"
            holder.release()
            await wait_until(pilot, lambda: app.writes.pending == 0 and app.saving == "")
            await settle(pilot)
    assert grades(ws_root) == [("s4", 0.7), ("s4", None)]  # the 0.7, then its undo: back to pending


def test_the_lock_is_named_from_the_workspace_in_whole_words(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    lock = root / LOCK
    said = f"{lock}: another writer held the lock for 30 s; nothing written, retry later"
    assert lock_words(LockHeld(said, lock, 30), root) == (
        "another writer held the lock for 30 s; nothing written (sessions.jsonl.lock in state/lesson-thompson)"
    )  # ("retry later" goes: the dashboard retries, as its warning says next)
    outside = Path("/srv/logs/sessions.jsonl.lock")  # a log outside the workspace: its folder whole
    assert lock_words(LockHeld("held", outside, 30), root) == (
        "another writer held the lock for 30 s; nothing written (sessions.jsonl.lock in /srv/logs)"
    )
    database = "postgresql://db: another writer held the lock for 30 s; nothing written, retry later"
    assert lock_words(LockHeld(database), root) is None  # no lock file: as the store says it


def lock_timed_out_app(workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch) -> LessonCreditApp:
    """s4's grade, tried while another writer holds the lock past the lock timeout (0.05 s here): its warning."""
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "0.05")
    monkeypatch.setattr(app_module, "TOAST_SECONDS", 3600.0)  # the warning outlives a loaded machine's waits
    keep_toasts(monkeypatch)
    return make_app(workspace)


async def until_warned(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, LessonCreditApp)
    await open_s4(pilot)
    await pilot.press("7", "c")
    await wait_until(pilot, lambda: any(t.startswith("Waiting to save: s4: ") for t in toasts(app)))
    await toasts_shown(pilot)


async def test_the_lock_timeout_warning_reads_whole_at_80_columns(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warning named the lock by its absolute path, which the toast (36 cells of text at 80 columns) broke
    mid-word: `…/state/lesson-thompson/sessio` / `ns.jsonl.lock: another…`."""
    app = lock_timed_out_app(workspace, ws_root, monkeypatch)
    with LockHolder(ws_root / LOCK) as holder:
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await until_warned(pilot)
            (toast,) = app.screen.query(Toast)
            lines, region = screen_lines(app), toast.region
            shown = [lines[y].crop(region.x, region.right).text for y in range(region.y, region.bottom)]
            text = " ".join(line.strip(" ▌") for line in shown)
            assert str(ws_root) not in text
            assert "(sessions.jsonl.lock in state/lesson-thompson)" in text, shown  # whole words, each on a line
            assert app.saving == "waiting to save 1 write (ctrl+d discards)"
            holder.release()
            await wait_until(pilot, lambda: grades(ws_root) == [("s4", 0.7)] and app.saving == "")
            await settle(pilot)


def test_snapshot_the_lock_timeout_warning_at_80x24(
    snap_compare: Any, workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = lock_timed_out_app(workspace, ws_root, monkeypatch)
    with LockHolder(ws_root / LOCK):
        assert snap_compare(app, terminal_size=(80, 24), run_before=until_warned)
