"""Yes/no questions against keys typed ahead: a key typed before a question was on screen never answers
it, and none is lost or applied to another session.

The fixture's sessions: s1 0.8, s2 0.4 and s3 0.6 scored by the heuristic (recorded with a reward; a
person's grade outranks it under the default [rewards] priority), s4 pending.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.widgets import Static

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmCommit, ConfirmScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.support.textual_private import notification_texts, type_bytes
from tests.tui.tui_fixture import NEW_SESSION, burst, fixed_clock, log_lines, record, settle, wait_until

SIZE = (120, 40)


def grades(root: Path) -> list[tuple[str, float | None]]:
    return [(e["session_id"], e["base_reward"]) for e in log_lines(root) if e.get("type") == "grade"]


async def test_a_burst_over_heuristic_scores_grades_each_session_in_turn(app: LessonCreditApp, ws_root: Path) -> None:
    """`n 8 c n 3 c n 9 c` in one burst on the informative queue (sessions no person graded, the
    heuristic's scores in force): the first `c` asked "in force over the heuristic's?", the dialog
    swallowed `n 3` and `n 9`, and a later `c` answered it. A person's grade over a lower-priority
    source erases nothing (both stay in the log): it is committed without a question."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "I", "o")
        await settle(pilot)
        order = app.queue_ids
        assert app.grading_order == "informative" and order is not None and len(order) == 4
        burst(pilot, "n", "8", "c", "n", "3", "c", "n", "9", "c")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == order[2]
    # the first three of the queue, each with its own grade, in key order
    assert grades(ws_root) == [(order[0], 0.8), (order[1], 0.3), (order[2], 0.9)]


@pytest.fixture
def two_pending(ws_root: Path) -> LessonCreditApp:
    """The fixture plus s5, logged pending after s4: `n` goes from s4 to s5."""
    workspace = Workspace(ws_root, clock=fixed_clock)
    record(workspace, ws_root, (*NEW_SESSION[:3], None, *NEW_SESSION[4:]))
    return LessonCreditApp(workspace, poll_seconds=0)


def typed_ahead_line(app: LessonCreditApp) -> str:
    """The dialog's line naming the keys typed before it ("" when it shows none)."""
    line = app.screen.query_one("#confirm-typed-ahead", Static)
    return str(line.render()) if line.display else ""


async def graded_s4_by_hand(pilot: Pilot[Any], root: Path) -> None:
    """s4 open, with the operator's grade 0.5 on it (a person's grade: replacing it asks)."""
    await settle(pilot)
    burst(pilot, "s", "down", "n", "5", "c")  # down: the cursor on s4 (s5 is the top row)
    await settle(pilot)
    assert grades(root) == [("s4", 0.5)]


async def test_keys_typed_before_a_question_wait_for_its_answer(two_pending: LessonCreditApp, ws_root: Path) -> None:
    """`8 c n 3 c` in one burst over the operator's own 0.5: the `c` typed ahead answered "replace?"
    before it was read, and `n 3` were swallowed by the dialog. Now the question stays until a key typed
    after it answers it; the keys typed before it wait, named in it, and go on after the yes: s5 (next
    pending) gets the 0.3 typed for it."""
    app = two_pending
    async with app.run_test(size=SIZE) as pilot:
        await graded_s4_by_hand(pilot, ws_root)
        burst(pilot, "8", "c", "n", "3", "c")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmCommit)
        assert "Replace the grade 0.5 of s4 with 0.8?" in app.screen.question
        assert "waiting for your answer: n 3 c" in typed_ahead_line(app)
        assert grades(ws_root) == [("s4", 0.5)]
        burst(pilot, "y")  # typed after the question appeared
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == "s5"
        assert app.screen.draft is None
    assert grades(ws_root) == [("s4", 0.5), ("s4", 0.8), ("s5", 0.3)]


async def test_the_keys_waiting_for_a_question_name_each_escape_typed_among_them(
    two_pending: LessonCreditApp, ws_root: Path
) -> None:
    """`8 c escape n 3 c` typed in one burst over the operator's 0.5: the terminal sends Escape and the `n` after
    it together, read as one key (alt+n), and the dialog named the keys waiting as `n 3 c`, the Escape left out,
    though it goes on as Escape (back to the list, from which `n` opens s5). Every key is named, in order; the
    warning of an answer no names them the same way."""
    app = two_pending
    async with app.run_test(size=SIZE) as pilot:
        await graded_s4_by_hand(pilot, ws_root)
        type_bytes(app, "8c\x1bn3c")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmCommit) and bool(typed_ahead_line(app)))
        await settle(pilot)
        assert typed_ahead_line(app).endswith("waiting for your answer: escape n 3 c")
        burst(pilot, "y")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == "s5"
    assert grades(ws_root) == [("s4", 0.5), ("s4", 0.8), ("s5", 0.3)]  # the keys went on as typed


async def test_an_answer_no_names_each_escape_among_the_keys_it_drops(
    two_pending: LessonCreditApp, ws_root: Path
) -> None:
    app = two_pending
    async with app.run_test(size=SIZE) as pilot:
        await graded_s4_by_hand(pilot, ws_root)
        type_bytes(app, "8c\x1bn3c")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmCommit) and bool(typed_ahead_line(app)))
        await settle(pilot)
        burst(pilot, "escape")
        await settle(pilot)
        said = [message for _, message in notification_texts(app)]
        assert any(message.endswith("answered no: escape n 3 c") for message in said), said
    assert grades(ws_root) == [("s4", 0.5)]


async def test_no_drops_the_keys_typed_before_the_question_and_says_so(
    two_pending: LessonCreditApp, ws_root: Path
) -> None:
    """Answered no, the keys typed for what a yes does are not applied (`n 3 c` would have left the
    draft, or graded s4 0.3), and a warning names them."""
    app = two_pending
    async with app.run_test(size=SIZE) as pilot:
        await graded_s4_by_hand(pilot, ws_root)
        burst(pilot, "8", "c", "n", "3", "c")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmCommit)
        burst(pilot, "escape")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == "s4"
        assert app.screen.draft == 0.8  # escape keeps the draft
        said = [message for _, message in notification_texts(app)]
        assert any("typed before the question you answered no: n 3 c" in message for message in said), said
    assert grades(ws_root) == [("s4", 0.5)]


async def test_keys_typed_before_leaving_a_draft_go_to_the_session_opened(
    two_pending: LessonCreditApp, ws_root: Path
) -> None:
    """`5 n 3 c` on s4: `n` asks whether to discard the draft 0.5; the `3 c` typed for s5 were swallowed
    by the dialog, silently. They now wait, named in it, and grade s5 once the discard is confirmed."""
    app = two_pending
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "s", "down", "n", "5", "n", "3", "c")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen) and app.screen.question.startswith("Discard the draft grade 0.5")
        assert "waiting for your answer: 3 c" in typed_ahead_line(app)
        burst(pilot, "y")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == "s5"
    assert grades(ws_root) == [("s5", 0.3)]


async def test_a_key_the_question_does_not_take_is_refused_aloud(two_pending: LessonCreditApp, ws_root: Path) -> None:
    """`6` typed once "replace the grade?" shows (the operator meant a new draft) was dropped without a
    word, and the `c` after it wrote the old draft. Now the dialog says the 6 meant nothing there."""
    app = two_pending
    async with app.run_test(size=SIZE) as pilot:
        await graded_s4_by_hand(pilot, ws_root)
        burst(pilot, "7", "c")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmCommit)
        burst(pilot, "6")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmCommit)
        refused = app.screen.query_one("#confirm-refused", Static)  # in the dialog: no toast shows over it
        said = str(refused.render()) if refused.display else ""
        assert said == "6 means nothing in this question: c or y replaces the grade, escape keeps the draft."
    assert grades(ws_root) == [("s4", 0.5)]


async def test_keys_waiting_for_a_question_wait_through_the_command_palette(
    two_pending: LessonCreditApp, ws_root: Path
) -> None:
    """`8 c n 3 c` over the operator's 0.5, then ctrl+p (the command palette opens over any screen, a
    question too): the `n 3 c` waiting for the answer were handed to the palette's search box and lost when
    it closed. They keep waiting under it, and go on to s5 once the question is answered yes."""
    app = two_pending
    async with app.run_test(size=SIZE) as pilot:
        await graded_s4_by_hand(pilot, ws_root)
        burst(pilot, "8", "c", "n", "3", "c")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmCommit)
        burst(pilot, "ctrl+p")
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette)
        burst(pilot, "escape")  # closes the palette: the question is back, the keys still waiting in it
        await settle(pilot)
        assert isinstance(app.screen, ConfirmCommit)
        assert "waiting for your answer: n 3 c" in typed_ahead_line(app)
        burst(pilot, "y")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == "s5"
    # s4 replaced by 0.8, then s5 graded the 0.3 typed for it
    assert grades(ws_root) == [("s4", 0.5), ("s4", 0.8), ("s5", 0.3)]
