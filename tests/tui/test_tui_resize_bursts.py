"""A terminal resized (or a list reloaded) while keys are typed ahead: every cursor move lands, on the row
it moved to.

The resize that crosses 100 columns rebuilds a list (its narrow headers and cells) keeping the highlighted
row. The highlighted row was the one the screen had last been told of, and the Resize can reach the screen
between a key's cursor move and the message that reports it (Textual hands a resize on from a timer, which
fires whenever the app next gets to it): the rebuild put the cursor back one row. In tmux, 12 downs, a
resize to 160x48 and `down up up` ended one row short in 2 runs of 10 on a loaded machine, and `enter`
opened the lesson above the one the keys led to.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.records_views import agreement_view, queue_view
from lesson_credit.tui.screens.agreement import AgreementScreen
from lesson_credit.tui.screens.analysis import AnalysisScreen
from lesson_credit.tui.screens.grading_queue import GradingQueueScreen
from lesson_credit.tui.screens.lesson_rewards import LessonRewardsScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.what_if import WhatIfScreen
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.textual_private import resize_now
from tests.tui.records_fixture import build_records_workspace
from tests.tui.tui_fixture import build_many_sessions_workspace, burst, fixed_clock, settle, table_keys

TABLES = {"a": "#loo-table", "l": "#lessons-table", "s": "#sessions-table"}


@pytest.fixture
def resize_at_second_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """The terminal is resized to 160x48 just as the second cursor move has moved the cursor, before the
    message that reports it has reached the screen (where a busy app's resize timer can fire)."""
    original = ThemedTable.action_cursor_down
    moves = 0

    def down(self: ThemedTable) -> None:
        nonlocal moves
        original(self)
        moves += 1
        if moves == 2:
            resize_now(self.app, 160, 48)

    monkeypatch.setattr(ThemedTable, "action_cursor_down", down)


@pytest.mark.parametrize("screen_key", ["a", "l", "s"])
async def test_a_resize_between_cursor_moves_loses_none(
    analysis_workspace: Workspace, resize_at_second_move: None, screen_key: str
) -> None:
    app = LessonCreditApp(analysis_workspace, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, screen_key)
        await settle(pilot)
        table = app.screen.query_one(TABLES[screen_key], ThemedTable)
        assert table.cursor_row == 0
        burst(pilot, "down", "down", "down")
        await settle(pilot)
        assert app.size.width == 160  # the resize happened, in the middle of the burst
        assert table.cursor_row == 3  # three downs from the first row
        assert getattr(app.screen, "highlighted", None) == table_keys(table)[3]


async def test_enter_after_a_resize_opens_the_lesson_the_keys_led_to(
    analysis_workspace: Workspace, resize_at_second_move: None
) -> None:
    app = LessonCreditApp(analysis_workspace, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "a")
        await settle(pilot)
        analysis = app.screen
        assert isinstance(analysis, AnalysisScreen)
        lessons = list(analysis.shown)
        burst(pilot, "down", "down", "down", "enter")
        await settle(pilot)
        rewards = app.screen
        assert isinstance(rewards, LessonRewardsScreen)
        assert rewards.lesson_id == lessons[3]  # the fourth row: three downs from the first


async def test_agreement_reloaded_between_cursor_moves_loses_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`+` and `-` reload Agreement's table without holding the keys after them: the answer for the threshold
    in force can land just as a key has moved the cursor (a reload after a write elsewhere too), and it put the
    cursor back on the row before the move."""
    root = build_records_workspace(tmp_path / "ws")
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), poll_seconds=0)
    original = ThemedTable.action_cursor_down
    moves = 0

    def down(self: ThemedTable) -> None:
        nonlocal moves
        original(self)
        moves += 1
        screen = self.screen
        if moves == 2 and isinstance(screen, AgreementScreen):  # the answer to `+ -` lands now
            screen.post_message(AgreementScreen.Loaded(agreement_view(screen.source, screen.threshold)))

    monkeypatch.setattr(ThemedTable, "action_cursor_down", down)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "A")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AgreementScreen) and len(screen.rows) >= 4
        burst(pilot, "plus", "minus", "down", "down", "down")
        await settle(pilot)
        table = screen.query_one("#agreement-table", ThemedTable)
        assert screen.threshold == 0.5  # the default, a step up and a step down
        assert table.cursor_row == 3  # three downs from the first row
        assert screen.highlighted == screen.rows[3][0]


async def test_what_if_keeps_its_row_across_a_resize(analysis_workspace: Workspace) -> None:
    """What-if lays its table out again when the terminal crosses 100 columns (short labels below): the
    cursor went back to the first row, and the rows typed down to with it."""
    app = LessonCreditApp(analysis_workspace, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "w")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WhatIfScreen)
        table = screen.query_one("#what-if-table", ThemedTable)
        burst(pilot, "down", "down", "down")
        await settle(pilot)
        lesson = table_keys(table)[3]  # three downs from the first row
        await pilot.resize_terminal(160, 48)
        await settle(pilot)
        assert table_keys(table)[table.cursor_row] == lesson
        burst(pilot, "down")
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert table.cursor_row == 4


async def test_the_grading_queue_resized_between_cursor_moves_loses_none(
    tmp_path: Path, resize_at_second_move: None
) -> None:
    build_many_sessions_workspace(tmp_path / "ws", n=20)  # 8 recorded pending, 7 still pending (i % 50 == 1 graded)
    app = LessonCreditApp(Workspace(tmp_path / "ws"), poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "I")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GradingQueueScreen)
        table = screen.query_one("#queue-table", ThemedTable)
        assert len(table_keys(table)) == 7 and table.cursor_row == 0
        burst(pilot, "down", "down", "down")
        await settle(pilot)
        assert app.size.width == 160  # the resize happened, in the middle of the burst
        assert table.cursor_row == 3  # three downs from the first row
        assert screen.highlighted == table_keys(table)[3]


async def test_the_grading_queue_reloaded_between_cursor_moves_loses_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reload of the queue (the log changed: a poll, a write) landing just as a key moved the cursor put
    the cursor back on the row before the move, as a resize did."""
    build_many_sessions_workspace(tmp_path / "ws", n=20)  # 7 sessions pending in the queue
    app = LessonCreditApp(Workspace(tmp_path / "ws"), poll_seconds=0)
    original = ThemedTable.action_cursor_down
    moves = 0

    def down(self: ThemedTable) -> None:
        nonlocal moves
        original(self)
        moves += 1
        screen = self.screen
        if moves == 2 and isinstance(screen, GradingQueueScreen):  # the reload lands now
            read_at, queue = queue_view(screen.source, screen.owner.grading_order)
            screen.post_message(GradingQueueScreen.Loaded(read_at, queue, screen.source.sessions_view()))

    monkeypatch.setattr(ThemedTable, "action_cursor_down", down)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "I")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GradingQueueScreen)
        table = screen.query_one("#queue-table", ThemedTable)
        assert len(table_keys(table)) == 7 and table.cursor_row == 0
        burst(pilot, "down", "down", "down")
        await settle(pilot)
        assert table.cursor_row == 3  # three downs from the first row
        assert screen.highlighted == table_keys(table)[3]


async def test_the_credits_table_resized_between_cursor_moves_loses_none(
    analysis_workspace: Workspace, resize_at_second_move: None
) -> None:
    """The session detail rebuilds its credits table on a resize across 100 columns (and on every preview):
    it put the cursor back on the lesson last reported by RowHighlighted, a message behind a key's move."""
    app = LessonCreditApp(analysis_workspace, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        session_id = max(analysis_workspace.sessions(), key=lambda s: s.n_lessons).session_id  # 3 lessons
        await app.open_session(session_id)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionDetailScreen)
        table = screen.query_one("#credits", ThemedTable)
        assert len(screen.rows) == 3 and table.cursor_row == 0
        burst(pilot, "down", "down")
        await settle(pilot)
        assert app.size.width == 160  # the resize happened, in the middle of the burst
        assert table.cursor_row == 2  # two downs from the first row
        assert screen.focused_lesson == screen.rows[2]


def test_screens_rebuild_through_the_base_hook() -> None:
    """The size classes are set, and their change detected, in one place (DataScreen.on_resize): a data
    screen says what a resize changes in `resized`, not in an `on_resize` of its own (Textual calls every
    class's, so an override that also called the base's set the classes twice per resize)."""
    from lesson_credit.tui.screens.base import DataScreen
    from lesson_credit.tui.screens.lazy import help_screens

    screens = {screen for _, screen in help_screens()}
    data_screens = [screen for screen in screens if issubclass(screen, DataScreen)]
    assert len(data_screens) >= 6, data_screens
    for screen in data_screens:
        for cls in screen.__mro__:
            if cls is DataScreen:
                break
            assert "on_resize" not in vars(cls), cls
