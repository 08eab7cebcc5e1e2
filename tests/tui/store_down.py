"""Setups the write-queue tests share: the dashboard on the fixture workspace with manual's 0.5 on s4 logged
before it starts (so `u` undoes it as `lesson-credit undo s4` would), retrying a failed write at once; every
toast kept (a toast expires before a loaded machine finishes); the source's undos failing while an event is set
(a stopped database: a test releases it in `finally`, or the writer, retrying until written, keeps the app from
closing)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.base.files import StoreUnavailable
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from tests.tui.tui_fixture import log_lines


def graded_app(workspace: Workspace, ws_root: Path) -> LessonCreditApp:
    """The dashboard, manual's 0.5 on s4 logged before it starts, a failed write tried again at once."""
    Workspace(ws_root).append_grade("s4", 0.5, grader="manual")
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    app.retry_seconds = 0.01
    return app


def keep_toasts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every notification the app shows, as "title: message", in `toasts(app)`."""
    real = LessonCreditApp.notify

    def notify(self: LessonCreditApp, message: str, *args: Any, **kwargs: Any) -> None:
        self.__dict__.setdefault("toasts_seen", []).append(f"{kwargs.get('title', '')}: {message}")
        real(self, message, *args, **kwargs)

    monkeypatch.setattr(LessonCreditApp, "notify", notify)


def toasts(app: LessonCreditApp) -> list[str]:
    return list(app.__dict__.get("toasts_seen", []))


def undos_down(app: LessonCreditApp) -> threading.Event:
    """The source's undos raise while the returned event is set (set here: a stopped database)."""
    down = threading.Event()
    down.set()
    real = app.source.append_undo

    def append_undo(*args: Any, **kwargs: Any) -> Any:
        if down.is_set():
            raise StoreUnavailable("postgresql://db: cannot append: connection refused")
        return real(*args, **kwargs)

    app.source.append_undo = append_undo  # type: ignore[method-assign]
    return down


def grades(root: Path) -> list[tuple[float | None, str]]:
    """The log's grade events: (value, grader)."""
    return [(e["base_reward"], e["grader"]) for e in log_lines(root) if e.get("type") == "grade"]
