"""Model-based test: random key sequences, typed with no waits, against a model of what the operator committed.

Hypothesis draws sequences of grade keys, `c`, `u`, `n` (next pending), `y` (answer a dialog),
screen switches and escape. All keys of a sequence are queued at once, as a terminal delivers
fast typing; then the test waits for the app and checks that the log's grade events are exactly
the model's, in order, each by the operator, and that no exception reached the app.

The default run is 24 sequences (under a minute); LESSON_CREDIT_MODEL_EXAMPLES=400
runs more (250 took about 7 minutes here).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual import events
from textual.screen import Screen
from tui_fixture import SESSIONS, build_workspace, fixed_clock, log_lines, settle

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmCommit, ConfirmScreen
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.sessions import SessionsScreen

EXAMPLES = int(os.environ.get("LESSON_CREDIT_MODEL_EXAMPLES", "24"))
MODEL = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SIZE = (120, 40)
KEYS = ["3", "5", "7", "8", "c", "c", "u", "n", "n", "y", "s", "l", "escape"]
LOG_ORDER = [s[0] for s in SESSIONS]


@dataclass
class Model:
    """What the operator sees and what must be in the log."""

    grades: dict[str, float | None] = field(default_factory=lambda: {s[0]: s[3] for s in SESSIONS})
    stacks: dict[str, list[tuple[float, float | None]]] = field(default_factory=dict)  # (value, replaced)
    log: list[tuple[str, float | None]] = field(default_factory=list)
    screen: str = "lessons"  # lessons | sessions | detail
    session: str | None = None  # the detail's
    draft: float | None = None
    dialog: tuple[str, object] | None = None  # ("commit", value) or ("leave", what to do on yes)

    def press(self, key: str) -> None:
        if self.dialog is not None:
            self._answer(key)
        elif self.screen == "detail":
            self._detail(key)
        elif self.screen == "sessions" and key == "n":
            self._open_next(None)
        elif key in ("s", "l"):
            self._go("sessions" if key == "s" else "lessons")

    def _answer(self, key: str) -> None:
        assert self.dialog is not None
        kind, payload = self.dialog
        yes = key == "y" or (kind == "commit" and key == "c")
        if not yes and key not in ("n", "escape"):
            return  # the dialog ignores every other key (screen keys are off while it is open)
        self.dialog = None
        if not yes:
            return
        if kind == "commit":
            assert isinstance(payload, float)
            self._commit(payload)
        else:
            assert callable(payload)
            payload()

    def _detail(self, key: str) -> None:
        sid = self.session
        assert sid is not None
        if key.isdigit():
            self.draft = int(key) / 10
        elif key == "c":
            if self.draft is None:
                return
            if self.grades[sid] is None:
                self._commit(self.draft)
            else:
                self.dialog = ("commit", self.draft)
        elif key == "u":
            self.draft = None
            stack = self.stacks.get(sid)
            if stack:
                value, replaced = stack.pop()
                if replaced != value:
                    self.log.append((sid, replaced))
                self.grades[sid] = replaced
        elif key == "n":
            self._open_next(sid)
        elif key == "escape":
            if self.draft is not None:
                self.draft = None
            else:
                self.screen, self.session = "sessions", None
        elif key in ("s", "l"):
            self._go("sessions" if key == "s" else "lessons")

    def _commit(self, value: float) -> None:
        sid = self.session
        assert sid is not None
        self.stacks.setdefault(sid, []).append((value, self.grades[sid]))
        self.grades[sid] = value
        self.log.append((sid, value))
        self.draft = None

    def _leave(self, go: object) -> None:
        if self.screen == "detail" and self.draft is not None:
            self.dialog = ("leave", go)
        else:
            assert callable(go)
            go()

    def _go(self, screen: str) -> None:
        def go() -> None:
            self.screen, self.session, self.draft = screen, None, None

        self._leave(go)

    def _open_next(self, after: str | None) -> None:
        pending = [sid for sid in LOG_ORDER if self.grades[sid] is None]
        start = LOG_ORDER.index(after) + 1 if after is not None else 0
        ordered = [s for s in pending if LOG_ORDER.index(s) >= start] + [
            s for s in pending if LOG_ORDER.index(s) < start
        ]
        target = next((s for s in ordered if s != after), None)
        if target is None:
            return

        def go() -> None:
            self.screen, self.session, self.draft = "detail", target, None

        self._leave(go)


def expected_screen(model: Model) -> type[Screen[object]]:
    if model.dialog is not None:
        return ConfirmCommit if model.dialog[0] == "commit" else ConfirmScreen
    return {"lessons": LessonsScreen, "sessions": SessionsScreen, "detail": SessionDetailScreen}[model.screen]


async def drive(root: Path, keys: list[str]) -> tuple[list[tuple[str, float | None, str]], LessonCreditApp]:
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        driver = app._driver
        assert driver is not None
        for key in keys:  # queued at once: nothing waits between them
            event = events.Key(key, key if len(key) == 1 else None)
            event.set_sender(app)
            driver.send_message(event)
        await settle(pilot)
        await asyncio.sleep(0.05)
        await settle(pilot)
        assert app.return_code is None and app.is_running, "an exception reached the app"
        screen = app.screen
    logged = [(e["session_id"], e["base_reward"], e["grader"]) for e in log_lines(root) if e.get("type") == "grade"]
    app.final_screen = screen  # type: ignore[attr-defined]
    return logged, app


@pytest.mark.long
@MODEL
@given(st.lists(st.sampled_from(KEYS), min_size=1, max_size=30))
def test_random_fast_key_sequences_log_exactly_what_was_committed(keys: list[str]) -> None:
    model = Model()
    for key in keys:
        model.press(key)
    with tempfile.TemporaryDirectory() as tmp:
        root = build_workspace(Path(tmp) / "ws")
        logged, app = asyncio.run(drive(root, keys))
    assert logged == [(sid, value, "manual") for sid, value in model.log], keys
    assert type(app.final_screen) is expected_screen(model), keys  # type: ignore[attr-defined]


def test_the_model_agrees_with_the_issue_examples() -> None:
    """The model itself, on sequences whose outcome is known by hand (fast commits, undos and
    drafts that once went wrong)."""
    model = Model()
    for key in ["s", "n", "7", "c", "8", "c", "c", "u", "u", "u"]:  # s4 is the only pending session
        model.press(key)
    assert model.log == [("s4", 0.7), ("s4", 0.8), ("s4", 0.7), ("s4", None)]
    assert model.screen == "detail" and model.session == "s4" and model.grades["s4"] is None
    model = Model()
    for key in ["s", "n", "3", "c", "n"]:  # s4 graded: no pending session left, n stays
        model.press(key)
    assert model.session == "s4" and model.log == [("s4", 0.3)]
