"""`n` goes down the Sessions list a session was opened from, in the list's order (its sort and filter), every
key typed in one burst. Before, `n` followed the log's order wrapping round whatever the list showed: a grader
going down the list newest first went from the newest session to the oldest pending one. From the grading queue
(and from anywhere else) `n` still follows the queue's order.

The fixture's sessions plus s5 and s6, logged pending after s4: pending s4, s5, s6 (log order); the Sessions list,
newest first, reads s6, s5, s4, s3, s2, s1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.sessions import SessionsScreen
from tests.tui.test_tui_grading import every_toast, toasts
from tests.tui.tui_fixture import NEW_SESSION, burst, fixed_clock, log_lines, open_sessions, record, settle

SIZES = ((80, 24), (200, 50))


def grades(root: Path) -> list[tuple[str, float | None]]:
    return [(e["session_id"], e["base_reward"]) for e in log_lines(root) if e.get("type") == "grade"]


def stack(app: LessonCreditApp) -> list[str]:
    return [
        f"detail:{s.session_id}" if isinstance(s, SessionDetailScreen) else type(s).__name__ for s in app.screen_stack
    ]


pytestmark = pytest.mark.usefixtures(every_toast.__name__)  # (every toast kept: test_tui_grading's)


@pytest.fixture
def three_pending(ws_root: Path) -> LessonCreditApp:
    workspace = Workspace(ws_root, clock=fixed_clock)
    record(workspace, ws_root, (*NEW_SESSION[:3], None, *NEW_SESSION[4:]))  # s5, 2026-03-05
    record(workspace, ws_root, ("s6", *NEW_SESSION[1:3], None, "code", "2026-03-06T14:00:00Z"))
    return LessonCreditApp(workspace, poll_seconds=0)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_n_goes_down_the_list_newest_first(three_pending: LessonCreditApp, ws_root: Path, size: Any) -> None:
    """`n 7 c n 6 c n` from the top of the list: s6, then s5, then s4 (before: s4, s5, then s6)."""
    app = three_pending
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await open_sessions(pilot)
        burst(pilot, "n", "7", "c", "n", "6", "c", "n")
        await settle(pilot)
        assert stack(app)[-2:] == ["SessionsScreen", "detail:s4"]
    assert grades(ws_root) == [("s6", 0.7), ("s5", 0.6)]


async def test_n_starts_at_the_highlighted_row_and_wraps(three_pending: LessonCreditApp, ws_root: Path) -> None:
    """The cursor two rows down (s4): `n` opens s4 itself; graded, `n` wraps to the list's top (s6), then s5."""
    app = three_pending
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_sessions(pilot)
        burst(pilot, "down", "down", "n", "5", "c", "n", "4", "c", "n")
        await settle(pilot)
        assert stack(app)[-1] == "detail:s5"
    assert grades(ws_root) == [("s4", 0.5), ("s6", 0.4)]


async def test_n_follows_the_lists_sort_and_filter(three_pending: LessonCreditApp, ws_root: Path) -> None:
    """Oldest first (`r`; the cursor stays on s6, so `home` to the top), `n` goes s4, s5; filtered to s6 alone,
    `n` after s6 finds no other pending session in the list (the queue's order would have opened s4)."""
    app = three_pending
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await open_sessions(pilot)
        burst(pilot, "r", "home", "n", "3", "c", "n")
        await settle(pilot)
        assert screen.sort_column == "time" and not screen.sort_reverse
        assert stack(app)[-1] == "detail:s5"
        burst(pilot, "escape", "slash", "s", "6", "enter", "n", "2", "c", "n")
        await settle(pilot)
        assert stack(app)[-1] == "detail:s6"
        said = "No pending session left in the list filtered by 's6' (escape there clears it)."
        assert said in toasts(app)
    assert grades(ws_root) == [("s4", 0.3), ("s6", 0.2)]


async def test_from_the_grading_queue_n_follows_the_queue(three_pending: LessonCreditApp, ws_root: Path) -> None:
    """Opened from the queue (oldest first), `n` goes s4, s5, s6 as before."""
    app = three_pending
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "I", "n", "7", "c", "n", "6", "c", "n")
        await settle(pilot)
        assert stack(app)[-1] == "detail:s6"
    assert grades(ws_root) == [("s4", 0.7), ("s5", 0.6)]


async def test_n_never_shows_the_list_between_two_sessions(
    three_pending: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`n` on a session put the Sessions list back in view (the session's screen popped) until the next one's
    screen was up, a third of a second on a loaded machine: the list flashed at every `n`. The next session now
    takes the screen's place: the list is not resumed until escape."""
    resumed: list[str] = []
    on_resume = SessionsScreen.on_screen_resume

    def noting(self: SessionsScreen) -> None:
        resumed.append("sessions")
        on_resume(self)

    monkeypatch.setattr(SessionsScreen, "on_screen_resume", noting)
    app = three_pending
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_sessions(pilot)
        resumed.clear()
        burst(pilot, "n", "7", "c", "n", "6", "c", "n")
        await settle(pilot)
        assert stack(app)[-2:] == ["SessionsScreen", "detail:s4"]
        assert resumed == []
        burst(pilot, "escape")
        await settle(pilot)
        assert resumed == ["sessions"] and isinstance(app.screen, SessionsScreen)
    assert grades(ws_root) == [("s6", 0.7), ("s5", 0.6)]


async def test_u_after_n_names_the_session_the_latest_grade_went_to(
    three_pending: LessonCreditApp, ws_root: Path
) -> None:
    """`n 7 c n u`: the grade went to s6 and `u` is pressed on s5, pending: nothing to undo there, and the toast
    says where the latest grade from here is (it said only that s5 is pending, leaving the grader to guess)."""
    app = three_pending
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_sessions(pilot)
        burst(pilot, "n", "7", "c", "n", "u")
        await settle(pilot)
        assert stack(app)[-1] == "detail:s5"
        refused = [t for t in toasts(app) if t.startswith("Nothing to undo on s5")]
        assert refused == [
            "Nothing to undo on s5: session 's5' is pending. Your latest grade from here is on s6: u there undoes it."
        ]
    assert grades(ws_root) == [("s6", 0.7)]


async def test_u_on_a_pending_session_with_no_grade_from_here_says_no_more(
    three_pending: LessonCreditApp, ws_root: Path
) -> None:
    """`n u` before any grade: the refusal alone (no session to point at)."""
    app = three_pending
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_sessions(pilot)
        burst(pilot, "n", "u")
        await settle(pilot)
        assert [t for t in toasts(app) if t.startswith("Nothing to undo")] == [
            "Nothing to undo on s6: session 's6' is pending."
        ]
    assert grades(ws_root) == []


async def test_the_lists_order_is_read_once_for_a_run_of_n(
    three_pending: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every `n` searched the list's filter over every session (and sorted them all, and matched every row
    against the pending ones): about a second a key at a million sessions, on the app's thread; and the list under
    the sessions' screens was read again (and searched) at each grade, though nobody could see it. The order is now
    read once per list read, filter and sort, in a worker as the list is read (test_tui_order_worker), the list when
    it is shown again: `n 7 c n 6 c n` searches no more (before the worker: once, at the first `n`; before that, 4
    times, two `n` after a grade each finding a list read anew)."""
    from lesson_credit.tui.session_search import SessionSearch

    searched: list[str] = []
    find = SessionSearch.find

    def counting(self: SessionSearch, *args: Any, **kwargs: Any) -> Any:
        searched.append("find")
        return find(self, *args, **kwargs)

    app = three_pending
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_sessions(pilot)
        monkeypatch.setattr(SessionSearch, "find", counting)
        burst(pilot, "n", "7", "c", "n", "6", "c", "n")
        await settle(pilot)
        assert stack(app)[-2:] == ["SessionsScreen", "detail:s4"]
    assert searched == []
    assert grades(ws_root) == [("s6", 0.7), ("s5", 0.6)]
