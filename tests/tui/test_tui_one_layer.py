"""`A` on Agreement and `I` on the grading queue (or on a session opened from it) open no second copy of the
screen in view: they stacked one, and the next `escape` closed it onto its twin, a key that changed nothing on
screen. Each escape closes one layer that shows: `I enter I escape` from Sessions ends on Sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.agreement import AgreementScreen
from lesson_credit.tui.screens.grading_queue import GradingQueueScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.sessions import SessionsScreen
from tests.tui.test_tui_snapshots import SnapCompare
from tests.tui.test_tui_whole_headers import demo_app
from tests.tui.tui_fixture import burst, open_sessions, settle, wait_until

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((200, 50), id="200x50")]


def stacked(app: LessonCreditApp, kind: type[Any]) -> int:
    return sum(isinstance(screen, kind) for screen in app.screen_stack)


async def test_agreement_typed_twice_is_one_screen_and_one_escape_leaves_it(app: LessonCreditApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        sessions = await open_sessions(pilot)
        burst(pilot, "A", "A", "A")
        await wait_until(pilot, lambda: isinstance(app.screen, AgreementScreen))
        await settle(pilot)
        assert stacked(app, AgreementScreen) == 1, app.screen_stack
        burst(pilot, "escape")
        await wait_until(pilot, lambda: app.screen is sessions)
        await settle(pilot)
        assert app.screen is sessions and stacked(app, AgreementScreen) == 0


async def test_the_queue_typed_again_from_its_session_is_the_queue_it_was_opened_from(app: LessonCreditApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        sessions = await open_sessions(pilot)
        burst(pilot, "I", "I")
        await wait_until(pilot, lambda: isinstance(app.screen, GradingQueueScreen))
        await settle(pilot)
        assert stacked(app, GradingQueueScreen) == 1, app.screen_stack
        queue = app.screen
        burst(pilot, "enter", "I")  # a session from the queue, then the queue again: the same one, on top
        await wait_until(pilot, lambda: app.screen is queue)
        await settle(pilot)
        assert app.screen is queue and stacked(app, GradingQueueScreen) == 1, app.screen_stack
        assert stacked(app, SessionDetailScreen) == 0
        burst(pilot, "escape")
        await wait_until(pilot, lambda: app.screen is sessions)
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen) and len(app.screen_stack) == 1, app.screen_stack


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_agreement_typed_twice_then_escape(
    size: tuple[int, int], snap_compare: SnapCompare, tmp_path: Path
) -> None:
    """The demo's Sessions after `s A A escape` (it showed Agreement, the second one's twin)."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        burst(pilot, "s", "A", "A", "escape")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen))
        await settle(pilot)

    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=run_before)
