"""Pilot tests for grading at typing speed: every commit, undo and note reaches the log in key order.

Keys are pressed with no settle between them (the way an operator types); only then do the
tests wait for the workers and read the log. s1 is logged graded 0.8 (heuristic), s4 pending.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import DataTable

from lesson_credit.core.views import Explanation
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.sessions import SessionsScreen
from lesson_credit.tui.screens.what_if import WhatIfScreen
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.source_views import SourceSnapshot
from tests.tui.tui_fixture import fixed_clock, log_lines, open_session, settle

SIZE = (120, 40)


def burst(pilot: Pilot[None], *keys: str) -> None:
    """Deliver keys the way a terminal does when they are typed fast: all queued at once, no
    waiting between them (`pilot.press` idles after each key, which lets workers finish)."""
    driver = pilot.app._driver
    assert driver is not None
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(pilot.app)
        driver.send_message(event)


def grades(root: Path) -> list[tuple[str, float | None, str]]:
    return [(e["session_id"], e["base_reward"], e["grader"]) for e in log_lines(root) if e.get("type") == "grade"]


def notes(root: Path) -> list[str]:
    return [str(e.get("note", "")) for e in log_lines(root) if e.get("type") == "grade"]


@pytest.fixture(autouse=True)
def every_toast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every notification's text (a toast expires after a few seconds, sooner than a loaded
    machine may take to finish a test)."""
    real = LessonCreditApp.notify

    def notify(self: LessonCreditApp, message: str, *args: Any, **kwargs: Any) -> None:
        self.__dict__.setdefault("toasts_seen", []).append(str(message))
        real(self, message, *args, **kwargs)

    monkeypatch.setattr(LessonCreditApp, "notify", notify)


def toasts(app: LessonCreditApp) -> list[str]:
    return list(app.__dict__.get("toasts_seen", []))


async def test_commit_then_undo_typed_fast_writes_both_in_order(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")  # graded 0.8
        burst(pilot, "5", "c", "u")  # over the heuristic's 0.8: no question (it stays in the log)
        await settle(pilot)
        # the undo withdraws the operator's grade (no person had graded s1): the heuristic's 0.8 is in force
        assert grades(ws_root) == [("s1", 0.5, "manual"), ("s1", None, "manual")]
        assert "line" in notes(ws_root)[1] and "0.5" in notes(ws_root)[1]  # says which event it reverts
        assert detail.base is not None and detail.base.session.base_reward == 0.8
        messages = toasts(app)
        assert any("0.5" in m and "s1" in m for m in messages)
        assert "Undid your grade on s1 (line 5): 0.5 back to 0.8 (heuristic)." in messages
        assert app.is_running


async def test_two_commits_typed_fast_both_reach_the_log(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")  # pending: the first commit does not ask
        burst(pilot, "7", "c", "8", "c")  # the second asks (over the operator's 0.7, not written yet)
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        burst(pilot, "c")  # typed once the question shows
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7, "manual"), ("s4", 0.8, "manual")]
        messages = toasts(app)
        assert any("0.7" in m and "s4" in m for m in messages)
        assert any("0.8" in m and "s4" in m for m in messages)


async def test_a_digit_typed_right_after_a_commit_is_the_next_draft(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        burst(pilot, "3", "c", "6")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.3, "manual")]
        assert detail.draft == 0.6
        assert detail.shown is not None and detail.shown.base_reward == 0.6


async def test_undo_is_a_stack_logged_by_the_operator(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s1")
        await pilot.press("u")  # nothing this dashboard wrote: refused, nothing written
        burst(pilot, "3", "c", "5", "c")  # 0.3 over the heuristic's 0.8; 0.5 over the operator's 0.3 asks
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        burst(pilot, "c")
        await settle(pilot)
        burst(pilot, "u", "u", "u")
        await settle(pilot)
        # the operator's own grades are put back (0.3), then withdrawn: the heuristic's 0.8 is in force again,
        # and no grade the operator never gave is logged
        assert [value for _, value, _ in grades(ws_root)] == [0.3, 0.5, 0.3, None]
        assert Workspace(ws_root).session("s1").base_reward == 0.8
        assert {grader for _, _, grader in grades(ws_root)} == {"manual"}
        assert sum("nothing to undo" in m.lower() for m in toasts(app)) == 2


async def test_nothing_to_undo_after_every_grade_is_undone_does_not_say_it_was_never_graded(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """7 c u u: the second u finds nothing left; the dashboard did grade the session, so the warning
    must not say it has not (it said 'this dashboard has not graded it since it started')."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        burst(pilot, "7", "c", "u", "u")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7, "manual"), ("s4", None, "manual")]
        refusals = [m for m in toasts(app) if "nothing to undo" in m.lower()]
        assert refusals == [  # (the CLI's `undo s4` says the same: one undo)
            "Nothing to undo on s4: your grades on session 's4' are undone already or changed nothing."
        ]


async def test_u_over_a_draft_discards_the_draft_and_keeps_the_commit(app: LessonCreditApp, ws_root: Path) -> None:
    """7 c 3 u: the u takes back the latest change, the draft 0.3, and nothing else; it undid the
    committed 0.7 too, a commit the operator had not asked to lose. The next u undoes the commit."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        burst(pilot, "7", "c", "3", "u")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7, "manual")]
        assert detail.draft is None
        assert "Draft 0.3 on s4 discarded (nothing written); u again undoes the last commit." in toasts(app)
        await pilot.press("u")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7, "manual"), ("s4", None, "manual")]


async def test_undoing_a_first_grade_makes_the_session_pending_again(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        burst(pilot, "7", "c", "u")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7, "manual"), ("s4", None, "manual")]
        assert detail.base is not None and detail.base.session.base_reward is None
        assert [g.base_reward for g in detail.base.grades] == [0.7, None]
    assert Workspace(ws_root).session("s4").pending


async def test_a_no_op_undo_is_refused(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        # 0.8, then 0.8 again over the operator's own 0.8: undoing the second would log 0.8 again
        burst(pilot, "8", "c", "8", "c")
        await settle(pilot)
        burst(pilot, "c", "u")  # typed once the question shows
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.8, "manual"), ("s4", 0.8, "manual")]
        assert any("already 0.8" in m for m in toasts(app))


async def test_undoing_a_grade_equal_to_the_heuristics_withdraws_it(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s1")
        # 0.8 over the heuristic's 0.8: the value stays, the source in force becomes the operator's;
        # the undo withdraws it (the heuristic's 0.8 in force again), it is not a no-op
        burst(pilot, "8", "c", "u")
        await settle(pilot)
        assert grades(ws_root) == [("s1", 0.8, "manual"), ("s1", None, "manual")]
        assert Workspace(ws_root).session("s1").grader == "heuristic"


async def test_the_undo_stack_outlives_the_screen(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s1")
        burst(pilot, "3", "c", "escape")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
        await open_session(pilot, "s1")
        await pilot.press("u")
        await settle(pilot)
        assert grades(ws_root) == [("s1", 0.3, "manual"), ("s1", None, "manual")]


async def test_commit_over_a_persons_grade_asks_and_escape_writes_nothing(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")
        burst(pilot, "4", "c", "6", "c")  # 0.4 over the heuristic's 0.8 (no question), then 0.6 over it
        await settle(pilot)
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert confirm.question == "Replace the grade 0.4 of s1 with 0.6?"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is detail and detail.draft == 0.6
        assert grades(ws_root) == [("s1", 0.4, "manual")]


class CountingSource(WorkspaceSource):
    """An injected source that records every change it announces and every explanation asked of it."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        self.announced: list[int] = []
        self.explained: list[str] = []

    def check(self, *, wrote: bool = False) -> SourceSnapshot | None:
        snapshot = super().check(wrote=wrote)
        if snapshot is not None:
            self.announced.append(snapshot.version)
        return snapshot

    def explain(self, session_id: str, draft: float | None = None, *, with_journal: bool = True) -> Explanation:
        if draft is None:
            self.explained.append(session_id)
        return super().explain(session_id, draft, with_journal=with_journal)


async def test_one_change_message_per_commit(ws_root: Path) -> None:
    source = CountingSource(Workspace(ws_root, clock=fixed_clock))
    app = LessonCreditApp(source, poll_seconds=0.05)  # the poll runs too: it must not announce the commit again
    versions: list[int] = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        app.watch(app, "data_version", lambda version: versions.append(version), init=False)
        loads_before = len(source.explained)
        await pilot.press("7", "c")
        await settle(pilot)
        for _ in range(6):  # several polls
            await pilot.pause(0.05)
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7, "manual")]
        assert source.announced == [1] and versions == [1]
        assert len(source.explained) - loads_before == 1  # the detail reloads once
        assert detail.base is not None and detail.base.session.base_reward == 0.7


async def test_fast_steps_are_never_dropped(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        burst(pilot, "5", "plus", "plus", "plus", "minus")
        await settle(pilot)
        assert detail.draft == 0.6  # 0.5 + 3 x 0.05 - 0.05
        credits = detail.query_one("#credits", DataTable)
        for credit in detail.credits():  # every row shows the draft's credit, none collapsed to +0
            w = 0.3 + 0.7 * credit.salience
            assert str(credits.get_cell(credit.path, "credited")) == f"{0.6 * w:.3f}"
        await pilot.press("escape", "l")
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        burst(pilot, *["right_square_bracket"] * 4)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WhatIfScreen) and screen.view is not None
        assert screen.view.proposed.floor == 0.5  # 0.3 + 4 x 0.05
    assert grades(ws_root) == []


async def test_leaving_with_a_draft_asks_first(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        burst(pilot, "5", "l")
        await settle(pilot)
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is detail and detail.draft == 0.5
        burst(pilot, "s")
        await settle(pilot)
        burst(pilot, "y")  # typed once the question shows
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)  # the list, draft discarded
    assert grades(ws_root) == []


async def test_next_pending_grades_a_queue_from_the_keyboard(ws_root: Path) -> None:
    from tests.tui.tui_fixture import NEW_SESSION, record

    workspace = Workspace(ws_root, clock=fixed_clock)
    record(workspace, ws_root, (*NEW_SESSION[:3], None, *NEW_SESSION[4:]))  # s5, pending
    app = LessonCreditApp(workspace, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        burst(pilot, "down", "n", "7", "c", "n", "6", "c", "n")  # down: s4 (s5 is the top row)
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7, "manual"), ("s5", 0.6, "manual")]
        detail = app.screen
        assert isinstance(detail, SessionDetailScreen) and detail.session_id == "s5"
        assert any("no pending session left" in m.lower() for m in toasts(app))


async def test_a_grade_from_another_process_is_shown_and_the_draft_kept(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        await pilot.press("5")
        await settle(pilot)
        Workspace(ws_root, clock=fixed_clock).grade("s4", 0.9, grader="judge")
        app._check_source()  # the poll (off in this test)
        await settle(pilot)
        assert detail.draft == 0.5
        assert detail.base is not None and detail.base.session.base_reward == 0.9
        assert any("graded 0.9 by judge elsewhere" in m and "draft 0.5 is kept" in m for m in toasts(app))
        status = str(detail.query_one("#grade-status").render())
        assert "0.9 (judge)" in status and "draft" in status and "0.5" in status
    assert grades(ws_root) == [("s4", 0.9, "judge")]


async def test_a_grade_is_shown_as_typed_and_the_arithmetic_checks(app: LessonCreditApp, ws_root: Path) -> None:
    from textual.widgets import Input

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        await pilot.press("g")
        await settle(pilot)
        app.screen.query_one("#grade-value", Input).value = "0.725"
        await pilot.press("enter")
        await settle(pilot)
        assert detail.draft == 0.725
        assert " 0.725 " in str(detail.query_one("#grade-status").render())
        story = str(detail.query_one("#credit-story").render())
        line = next(part for part in story.splitlines() if part.startswith("credited "))
        # "credited 0.725×W = R (seed)": the product of the numbers shown is the number shown
        product, shown = line.removeprefix("credited ").split(" (")[0].split(" = ")
        base, weight = product.split("×")
        assert base == "0.725" and abs(float(base) * float(weight) - float(shown)) < 1e-9
        await pilot.press("c")
        await settle(pilot)
    assert grades(ws_root) == [("s4", 0.725, "manual")]


async def test_quit_asks_about_a_draft_and_keeps_every_queued_write(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        burst(pilot, "7", "c", "5", "q")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)  # the draft 0.5 is not committed: quit asks
        assert app.screen.question == "Discard the draft grade 0.5 of s4 and quit?"  # (it did not say "quit")
        await pilot.press("y")
        for _ in range(3000):  # until it has quit (a minute: only an app that never quits fails)
            if not app.is_running:
                break
            await asyncio.sleep(0.02)  # (not a pause: one that began before the app quit reads its screen after)
    assert grades(ws_root) == [("s4", 0.7, "manual")]


async def test_leaving_a_draft_for_another_screen_says_where_to(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        burst(pilot, "5", "l")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.question == "Discard the draft grade 0.5 of s4 and open Lessons?"
        await pilot.press("escape")  # back to the draft: nothing written
        await settle(pilot)
        burst(pilot, "I")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.question == "Discard the draft grade 0.5 of s4 and open the grading queue?"
    assert grades(ws_root) == []


async def test_a_draft_typed_right_after_opening_keeps_the_credit_columns_whole(app: LessonCreditApp) -> None:
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        burst(pilot, "n", "9")  # s4 opens; its preview arrives before (or with) its explanation
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, SessionDetailScreen) and detail.draft == 0.9
        table = detail.query_one("#credits", DataTable)
        for column in table.columns.values():  # no column cut to its header's width
            assert column.get_render_width(table) >= column.content_width + 2 * table.cell_padding
        for path in detail.rows:
            assert str(table.get_row(path)[4]).startswith("+0.")  # the Δα cell, whole
