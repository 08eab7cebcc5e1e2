"""What the app says about writes that were waiting for another writer's lock once they are saved: the question
whether to discard them (ctrl+d's, or the one a waiting quit asks) goes, and the quit it was asked for goes on; a
write's "not saved yet" warning goes, and its save is confirmed. Another writer holds the lock for real
(tests/support/lock_holder.py) and times out the writes (LESSON_CREDIT_LOCK_TIMEOUT); the tests wait on what the app
says, never on time. s4 is pending (tests/tui/tui_fixture.py): `s n 7 c u` grades it 0.7, then undoes that."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui import app as app_module
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.support.lock_holder import LockHolder
from tests.support.textual_private import notification_texts
from tests.tui.test_tui_lock_wait import LOCK, grades, make_app
from tests.tui.tui_fixture import burst, settle, wait_until

GRADED = [("s4", 0.7), ("s4", None)]  # the grade, then its undo (a retraction: the session pending again)


def question(app: LessonCreditApp) -> str | None:
    return app.screen.question if isinstance(app.screen, ConfirmScreen) else None


async def two_writes_timed_out(pilot: Any, app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """`s n 7 c u` typed while another writer holds the lock: both writes wait, the oldest having failed (its lock
    wait timed out) and being tried again."""
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "0.05")
    monkeypatch.setattr(app_module, "TOAST_SECONDS", 3600.0)  # the toasts outlive a loaded machine's waits
    await settle(pilot)
    burst(pilot, "s", "n", "7", "c", "u")
    await wait_until(pilot, lambda: app.writes.waiting() is not None and app.writes.pending == 2)


async def saved(pilot: Any, app: LessonCreditApp, root: Path) -> None:
    """Until both writes are in the log and the queue is empty, then until the app has heard so."""
    await wait_until(pilot, lambda: grades(root) == GRADED and app.writes.pending == 0)
    await settle(pilot)


async def test_the_quit_goes_on_once_the_writes_its_discard_question_names_are_saved(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """q while the writes wait: once the oldest timed out, the quit asked whether to discard them. Saved meanwhile
    (the lock released), the question stayed up unchanged, naming writes in the log, and the app never quit."""
    app = make_app(workspace)
    with LockHolder(ws_root / LOCK) as holder:
        async with app.run_test(size=(80, 24)) as pilot:
            await two_writes_timed_out(pilot, app, monkeypatch)
            burst(pilot, "q")
            await wait_until(pilot, lambda: question(app) == "Discard 2 writes not saved yet and quit?")
            holder.release()
            await saved(pilot, app, ws_root)
            assert question(app) is None  # (the old code: the question, still up)
            await wait_until(pilot, lambda: not app.is_running)
    assert grades(ws_root) == GRADED


async def test_the_discard_question_goes_once_the_writes_it_names_are_saved(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ctrl+d's question, saved meanwhile: it went on asking about writes in the log (y discarded nothing)."""
    app = make_app(workspace)
    with LockHolder(ws_root / LOCK) as holder:
        async with app.run_test(size=(80, 24)) as pilot:
            await two_writes_timed_out(pilot, app, monkeypatch)
            burst(pilot, "ctrl+d")
            await wait_until(pilot, lambda: question(app) == "Discard 2 writes not saved yet?")
            holder.release()
            await saved(pilot, app, ws_root)
            assert question(app) is None and isinstance(app.screen, SessionDetailScreen)
            assert app.is_running  # (no quit was asked for)
    assert grades(ws_root) == GRADED


async def test_a_write_saved_after_waiting_is_confirmed_and_its_warning_goes(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The grade's "not saved yet" warning stayed up once it was saved, and of three toasts (two are shown) the
    oldest confirmation went first: "Saved grade 0.7" never showed, only the stale warning beside the undo's."""
    app = make_app(workspace)
    with LockHolder(ws_root / LOCK) as holder:
        async with app.run_test(size=(80, 24)) as pilot:
            await two_writes_timed_out(pilot, app, monkeypatch)
            await wait_until(pilot, lambda: any(t.startswith("Waiting to save") for t, _ in notification_texts(app)))
            holder.release()
            await saved(pilot, app, ws_root)
            shown = notification_texts(app)
            assert not [title for title, _ in shown if title.startswith("Waiting to save")]
            assert ("", "Saved grade 0.7 for s4 (was pending).") in shown
    assert grades(ws_root) == GRADED


async def test_keys_typed_after_q_are_not_dropped_when_the_quits_question_goes(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`q 5 c` typed as the quit's question came up: the question held `5 c` for its answer ("typed before this
    question"); saved meanwhile, it went and the quit went on at once, and the 0.5 was never written nor said (a
    review). Now the quit stops there and says so; the keys go on: s4 graded 0.5. The two keys are made as q is
    pressed (their time is then) and handed to the key router once the question shows, as a terminal's are."""
    from textual import events

    app = make_app(workspace)
    said: list[str] = []  # every notice, in order (the screen keeps the latest two)
    notify = app.notify

    def noting(message: str, *args: Any, **kwargs: Any) -> None:
        said.append(str(message))
        notify(message, *args, **kwargs)

    monkeypatch.setattr(app, "notify", noting)
    with LockHolder(ws_root / LOCK) as holder:
        async with app.run_test(size=(80, 24)) as pilot:
            await two_writes_timed_out(pilot, app, monkeypatch)
            typed = [events.Key("5", "5"), events.Key("c", "c")]
            burst(pilot, "q")
            await wait_until(pilot, lambda: question(app) == "Discard 2 writes not saved yet and quit?")
            await wait_until(pilot, lambda: getattr(app.screen, "asked_at", None) is not None)  # drawn
            for event in typed:
                app.keys.take(event)
            await wait_until(pilot, lambda: app.keys.held_for(app.screen) == 2)
            holder.release()
            await wait_until(pilot, lambda: grades(ws_root) == [*GRADED, ("s4", 0.5)] and app.writes.pending == 0)
            await wait_until(pilot, lambda: question(app) is None)
            assert app.is_running and question(app) is None
            assert any(text.startswith("Not quitting: 2 keys typed after q go on") for text in said), said
    assert grades(ws_root) == [*GRADED, ("s4", 0.5)]
