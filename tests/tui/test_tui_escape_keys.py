"""Escape typed at once before another key, as a terminal delivers them when both arrive together (typed
fast, over ssh, through tmux): each burst goes through Textual's terminal parser, as the terminal's bytes.

Textual's parser read Escape and the Enter, space or symbol right after it (`\\x1b\\r`) as that key alone,
the Escape lost; and it kept reading after Escape until a pause or the next Escape, when it made the first
Escape a `^` (`\\x1b\\r6c\\x1b`: `^`, enter, 6, c).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.grade_value import GradeValueScreen
from lesson_credit.tui.screens.grading_queue import GradingQueueScreen
from lesson_credit.tui.screens.help import HelpScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.what_if import WhatIfScreen
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.textual_private import type_bytes
from tests.tui.tui_fixture import (
    NEW_SESSION,
    log_lines,
    open_session,
    open_sessions,
    record,
    settle,
    table_keys,
    wait_until,
)

SIZE = (100, 30)


@pytest.mark.parametrize("typed", ["\x1b\r", "\x1b/", "\x1b "], ids=["enter", "slash", "space"])
async def test_escape_typed_at_once_before_enter_or_a_symbol_is_not_lost(app: LessonCreditApp, typed: str) -> None:
    """On the help screen over Lessons, escape then enter stayed on help (the parser made one `enter`).
    Now the Escape closes help and the key after it acts on Lessons: enter opens the highlighted lesson's
    last session, / its filter box."""
    from textual.widgets import Input

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        type_bytes(app, typed)
        await settle(pilot)
        assert not isinstance(app.screen, HelpScreen)
        if typed.endswith("\r"):
            assert isinstance(app.screen, SessionDetailScreen)
        elif typed.endswith("/"):
            assert isinstance(app.focused, Input)


async def test_grading_the_queue_in_one_burst_with_escape_enter(workspace: Workspace, ws_root: Path) -> None:
    """`enter 5 c escape enter 6 c escape` on the grading queue (s4, then s5: both pending), as one burst of
    bytes: the parser read on after the first Escape and, meeting the second, made the first a `^`: the
    second enter landed on s4's screen and `6 c` asked to replace the 0.5 just given; s5 stayed pending."""
    session_id, journal, lessons, _, category, stamp = NEW_SESSION
    record(workspace, ws_root, (session_id, journal, lessons, None, category, stamp))
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        type_bytes(app, "\r5c\x1b\r6c\x1b")
        await settle(pilot)
        await wait_until(pilot, lambda: app.writes.pending == 0)
        await settle(pilot)
        assert isinstance(app.screen, GradingQueueScreen)
    grades = [(e["session_id"], e["base_reward"]) for e in log_lines(ws_root) if e.get("type") == "grade"]
    assert grades == [("s4", 0.5), ("s5", 0.6)]


async def test_the_queue_refilled_after_a_grade_says_its_new_row_before_the_cursor_message(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Back on the queue after grading s4 here, the refill (on_screen_resume) moves the cursor to s5; `enter`
    typed ahead reads the row the screen was told of, which the cursor's message reports a turn later. Under
    load `enter` came first and opened s4 again (the burst test above then ended on s4's screen)."""
    session_id, journal, lessons, _, category, stamp = NEW_SESSION
    record(workspace, ws_root, (session_id, journal, lessons, None, category, stamp))
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GradingQueueScreen) and screen.queue is not None and screen.sessions is not None
        table = screen.query_one("#queue-table", ThemedTable)
        assert (screen.highlighted, table.cursor_row) == ("s4", 0)
        monkeypatch.setattr(app.writes, "graded_unread", lambda sid, _: sid == "s4")  # graded here, not read yet
        screen._fill(table, screen.queue, screen.sessions)
        assert screen.highlighted == "s5"  # at once, with no message in between


async def test_the_pending_sessions_rebuilt_after_a_grade_say_their_new_row_at_once(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions, pending only (`v`): the highlighted session graded here leaves the list, the cursor goes to
    the next; the screen says so at once, not a message later, so `enter` typed ahead opens that one."""
    session_id, journal, lessons, _, category, stamp = NEW_SESSION
    record(workspace, ws_root, (session_id, journal, lessons, None, category, stamp))
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_sessions(pilot)
        await pilot.press("v")
        await settle(pilot)
        table = screen.query_one("#sessions-table", ThemedTable)
        first, second = table_keys(table)[:2]
        assert screen.highlighted == first
        monkeypatch.setattr(app.writes, "graded_unread", lambda sid, _: sid == first)  # its write not read yet
        screen._rebuild()
        assert screen.highlighted == second


async def test_a_grade_read_while_the_queue_was_under_its_session_leaves_the_queue_on_return(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The grade given on s4's screen is written and read in a snapshot (the log says s4 is graded) before
    `escape` is handled, and the queue's reload for it (a worker) has not landed: the queue holds what it read
    before, s4 first. Back on it, s4 leaves at once and the cursor is on s5, so `enter` typed ahead opens s5.
    It stayed: the queue asked whether the write was still unread, and once a snapshot had read it, it was not
    (CI: the burst test above ended on s4's screen asking to replace 0.5 with 0.6)."""
    session_id, journal, lessons, _, category, stamp = NEW_SESSION
    record(workspace, ws_root, (session_id, journal, lessons, None, category, stamp))
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        queue = app.screen
        assert isinstance(queue, GradingQueueScreen) and queue.highlighted == "s4"
        monkeypatch.setattr(queue, "reload", lambda: None)  # its reload has not landed yet
        await pilot.press("enter", "5", "c")
        await wait_until(pilot, lambda: app.writes.pending == 0 and "s4" not in app.writes.touched())
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen)  # the queue is under it, as it was read
        table = queue.query_one("#queue-table", ThemedTable)
        assert table_keys(table)[:2] == ["s4", "s5"]
        queue.on_screen_resume()  # what `escape` runs on it first, before the reload's worker
        assert (table_keys(table)[0], queue.highlighted) == ("s5", "s5")


async def test_a_grade_read_while_the_pending_list_was_under_its_session_leaves_the_list_on_return(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions, pending only: the same for the pending list under a session graded, read in a snapshot and
    not reloaded yet."""
    session_id, journal, lessons, _, category, stamp = NEW_SESSION
    record(workspace, ws_root, (session_id, journal, lessons, None, category, stamp))
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_sessions(pilot)
        await pilot.press("v")
        await settle(pilot)
        table = screen.query_one("#sessions-table", ThemedTable)
        first, second = table_keys(table)[:2]
        assert screen.highlighted == first
        monkeypatch.setattr(screen, "reload", lambda: None)  # its reload has not landed yet
        await pilot.press("enter", "5", "c")
        await wait_until(pilot, lambda: app.writes.pending == 0 and first not in app.writes.touched())
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and table_keys(table)[0] == first
        screen.on_screen_resume()
        assert (table_keys(table)[0], screen.highlighted) == (second, second)


async def test_escape_typed_at_once_before_a_control_key_keeps_the_key(app: LessonCreditApp) -> None:
    """Escape then Enter typed while the dashboard starts reach it as `\\x1b\\n` (the terminal turns the
    carriage return into a newline until it is set raw), Escape then ctrl+q as `\\x1b\\x11`: the parser
    read them as alt+ctrl+j and alt+ctrl+q, and the key after the Escape was handed on as a key named by
    its control character, which nothing binds: the Enter and the quit were lost. Now on help over
    Lessons the Escape closes help, then Enter opens the highlighted lesson's last session (as a lone
    newline does), then ctrl+q quits."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        type_bytes(app, "\x1b\n")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen)
        assert app.return_code is None
        type_bytes(app, "\x1b\x11")
        await settle(pilot)
        assert app.return_code == 0


async def test_escape_in_the_journal_goes_back_to_the_credits_keeping_the_draft(app: LessonCreditApp) -> None:
    """`j` puts the focus in the journal (to scroll it); escape there left the session, or discarded the draft
    typed before: escape in the note box goes back to the credits table, and so does it in the journal."""
    async with app.run_test(size=SIZE) as pilot:
        detail = await open_session(pilot, "s1")
        await pilot.press("7", "j")
        await settle(pilot)
        assert detail.focused is detail.query_one("#journal")
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is detail and detail.draft == 0.7
        assert detail.focused is detail.query_one("#credits")
        await pilot.press("escape")  # then, as before: the draft goes, and the next escape leaves
        await settle(pilot)
        assert app.screen is detail and detail.draft is None


@pytest.mark.parametrize(
    ("combined", "floor"),
    [("alt+right_square_bracket", 0.35), ("alt+left_square_bracket", 0.25)],
    ids=["]", "["],
)
async def test_escape_then_a_bracket_read_as_one_alt_key_is_escape_then_the_bracket(
    app: LessonCreditApp, combined: str, floor: float
) -> None:
    """Escape then `]` arriving as one key (`\\x1b]` then a pause, or a terminal that reports Alt+]): on help
    over What-if, help closes and `]` steps the floor from the saved 0.3 by 0.05 (0.35; `[`: 0.25). On the old
    code a named key with no character after Escape was not split: help stayed, the floor unchanged."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        what_if = app.screen
        assert isinstance(what_if, WhatIfScreen)
        await pilot.press("question_mark")
        await settle(pilot)
        await pilot.press(combined)
        await settle(pilot)
        assert app.screen is what_if and isinstance(what_if, WhatIfScreen)
        assert what_if.view is not None and what_if.view.proposed.floor == pytest.approx(floor)


@pytest.mark.parametrize("combined", ["alt+tab", "alt+backspace", "alt+shift+o", "alt+shift+p"])
async def test_escape_then_tab_backspace_o_or_p_read_as_one_alt_key_closes_help(
    app: LessonCreditApp, combined: str
) -> None:
    """Escape then Tab, Backspace, `O` or `P` as one Alt key on help over Lessons: the Escape closes help (on the
    old code Alt+Tab and Alt+Backspace were lost there, help stayed), then the key acts on Lessons: Tab moves the
    focus off the lessons table to the next widget, as a lone Tab does."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lessons = app.screen
        table = lessons.query_one("#lessons-table")
        assert app.focused is table
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press(combined)
        await settle(pilot)
        assert app.screen is lessons
        assert (app.focused is not table) == (combined == "alt+tab")


async def test_a_real_alt_arrow_is_not_escape_then_the_arrow(app: LessonCreditApp) -> None:
    """Alt+Up and Alt+Left as xterm sends them (`ESC [1;3A`, `ESC [1;3D`) are keys of their own: only Tab,
    Backspace and the brackets reported with Alt and no character are Escape typed before them. When every
    unbound Alt key was split, Alt+Up discarded Session detail's draft and Alt+Left closed the exact-grade
    box with what was typed in it."""
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        await pilot.press("4")
        await settle(pilot)
        assert detail.draft == 0.4
        type_bytes(app, "\x1b[1;3A")
        await settle(pilot)
        assert app.screen is detail and detail.draft == 0.4
        await pilot.press("g", "0", ".", "3", "7")
        await settle(pilot)
        assert isinstance(app.screen, GradeValueScreen)
        type_bytes(app, "\x1b[1;3D")
        await settle(pilot)
        assert isinstance(app.screen, GradeValueScreen)
