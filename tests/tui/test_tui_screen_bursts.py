"""A key typed right after the key that opens a list screen acts on that list's first load.

Each burst is queued at the terminal driver at once (the way a terminal delivers fast typing). Before,
the Analysis, Grading queue, Health and Agreement screens took the keys while their first load was still
running: `a enter` opened no distributions, `I enter` no session, `h enter` no finding's session, and
`A down` moved no cursor; each key was lost without a word.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.agreement import AgreementScreen
from lesson_credit.tui.screens.analysis import AnalysisScreen
from lesson_credit.tui.screens.base import DataScreen
from lesson_credit.tui.screens.grading_queue import GradingQueueScreen
from lesson_credit.tui.screens.health import FindingCard, HealthScreen
from lesson_credit.tui.screens.lesson_rewards import LessonRewardsScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.tui.records_fixture import build_records_workspace
from tests.tui.tui_fixture import burst, fixed_clock, settle

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def slow_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every screen's load takes 0.3 s longer (in its worker thread): the keys come before it lands, as
    they do on a big log or a busy machine, however fast this machine is."""
    post_result = DataScreen.post_result

    def slow(
        self: DataScreen, compute: Callable[[], Any], message: Callable[[Any], Any], *more: Any, **kw: Any
    ) -> None:
        time.sleep(0.3)
        post_result(self, compute, message, *more, **kw)

    monkeypatch.setattr(DataScreen, "post_result", slow)


async def test_enter_typed_with_a_opens_the_first_lessons_distributions(analysis_workspace: Workspace) -> None:
    app = LessonCreditApp(analysis_workspace, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "a", "enter")
        await settle(pilot)
        rewards = app.screen
        assert isinstance(rewards, LessonRewardsScreen)
        analysis = app.screen_stack[-2]
        assert isinstance(analysis, AnalysisScreen) and analysis.shown
        assert rewards.lesson_id == analysis.shown[0]  # the row the cursor starts on


async def test_enter_typed_with_i_opens_the_first_pending_session(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "I", "enter")
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, SessionDetailScreen)
        assert isinstance(app.screen_stack[-2], GradingQueueScreen)
        assert detail.session_id == "s4"  # the fixture's one pending session


async def test_enter_typed_after_i_o_opens_the_first_session_of_the_new_order(app: LessonCreditApp) -> None:
    """`I o enter` in one burst: o switched the order and enter opened nothing (it landed while the
    queue was being refilled in the new order)."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "I", "o", "enter")
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, SessionDetailScreen), app.screen_stack
        queue = app.screen_stack[-2]
        assert isinstance(queue, GradingQueueScreen) and queue.queue is not None
        assert app.grading_order == "informative" and detail.session_id == queue.queue.session_ids[0]


async def test_keys_typed_with_h_move_through_the_findings(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "h", "down")
        await settle(pilot)
        health = app.screen
        assert isinstance(health, HealthScreen)
        cards = list(health.query(FindingCard))
        assert len(cards) >= 2  # the fixture's log has a missing lesson and a pending session at least
        assert health.focused is cards[1]  # the first card has the focus when they land; down moved it on


async def test_a_cursor_key_typed_with_capital_a_moves_the_agreement_cursor(tmp_path: Path) -> None:
    root = build_records_workspace(tmp_path / "ws")
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "A", "down")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AgreementScreen)
        assert len(screen.rows) >= 2
        assert screen.highlighted == screen.rows[1][0]  # the second row: down moved from the first


async def test_a_session_opened_from_the_queue_over_a_session_is_not_stacked_on_it(app: LessonCreditApp) -> None:
    """`s n I enter`: the queue opened over a session, and enter there opened the next session over both; escape
    then went back to the queue and on to the first session. Opening the queue leaves the session (as
    opening any session does), so escape goes back to the queue, then to the list."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "s", "n", "I", "enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen)
        assert sum(isinstance(screen, SessionDetailScreen) for screen in app.screen_stack) == 1, app.screen_stack
        assert isinstance(app.screen_stack[-2], GradingQueueScreen)
        burst(pilot, "escape", "escape")
        await settle(pilot)
        assert len(app.screen_stack) == 1, app.screen_stack


async def test_the_queue_opened_over_a_draft_asks_first(app: LessonCreditApp) -> None:
    """`s n 7 I`: a draft is never left without asking, as when opening another session."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "s", "n", "7", "I")
        await settle(pilot)
        assert not isinstance(app.screen, GradingQueueScreen)
        assert any(isinstance(screen, SessionDetailScreen) and screen.draft is not None for screen in app.screen_stack)
