"""A table rebuilt between typed-ahead keys (a result landing, a resize, a reload) leaves its cursor where the
keys led and the screen's record of the highlighted row in step with it, at once.

Textual reports a cursor move with a message (RowHighlighted) a turn after the move; a rebuild that lands in
that turn and puts the cursor back on the row it was last told of undoes the key's move. Each test stands for
that turn without timing: the rebuild is called (or the result posted) right after the move.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot

from lesson_credit.core.api import CreditSettings, SimulationReport
from lesson_credit.core.sim.simulate import run_simulation, scenario
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.health import FindingCard
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.simulation import SimulationScreen
from lesson_credit.tui.screens.what_if import WhatIfScreen
from lesson_credit.tui.what_if_view import WhatIfView
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.textual_private import messages_waiting, notification_texts, resize_now
from tests.tui.tui_fixture import (
    NEW_SESSION,
    burst,
    open_health,
    open_session,
    record,
    settle,
    table_keys,
    wait_until,
)

# ---------------------------------------------------------------------------- Simulation


@pytest.fixture(scope="module")
def small_report() -> SimulationReport:
    """A one-seed report of a small world (every estimator a row): what a finished run shows."""
    return run_simulation(scenario("few-sessions", n_lessons=20, n_sessions=40), 1)


async def show_report(pilot: Pilot[None], app: LessonCreditApp, report: SimulationReport) -> SimulationScreen:
    await settle(pilot)
    burst(pilot, "m")
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, SimulationScreen)
    screen.report = report
    screen._show_report()  # what a run's Finished message does
    return screen


async def test_a_simulation_report_shown_names_its_first_estimator_at_once(
    app: LessonCreditApp, small_report: SimulationReport
) -> None:
    """The first report puts the cursor on its first row: the estimator's detail below the table is that row's
    from the same call, not once the cursor's message lands."""
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await show_report(pilot, app, small_report)
        table = screen.query_one("#sim-table", ThemedTable)
        assert table.cursor_row == 0 and screen.highlighted == table_keys(table)[0] == "seed"


async def test_a_simulation_report_rebuilt_between_cursor_moves_loses_none(
    app: LessonCreditApp, small_report: SimulationReport, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The terminal crosses 100 columns (the short headers) just as the second of three downs has moved the
    cursor: the rebuild put the cursor back on the row last reported, and the three downs ended on row 2."""
    original = ThemedTable.action_cursor_down
    moves = 0

    def down(self: ThemedTable) -> None:
        nonlocal moves
        original(self)
        moves += 1
        if moves == 2:
            resize_now(self.app, 160, 48)

    monkeypatch.setattr(ThemedTable, "action_cursor_down", down)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await show_report(pilot, app, small_report)
        await settle(pilot)
        table = screen.query_one("#sim-table", ThemedTable)
        burst(pilot, "down", "down", "down")
        await settle(pilot)
        assert app.size.width == 160  # the resize happened, in the middle of the burst
        assert table.cursor_row == 3  # three downs from the first row
        assert screen.highlighted == table_keys(table)[3]


async def test_a_simulation_report_rebuilt_right_after_a_move_keeps_the_row_moved_to(
    app: LessonCreditApp, small_report: SimulationReport
) -> None:
    """The same, called directly: a report landing (or the theme changing) right after a cursor move."""
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await show_report(pilot, app, small_report)
        await settle(pilot)
        table = screen.query_one("#sim-table", ThemedTable)
        table.move_cursor(row=4, animate=False)  # a key's move; its message not handled yet
        screen._show_report()
        assert table.cursor_row == 4 and screen.highlighted == table_keys(table)[4]


# ---------------------------------------------------------------------------- What-if


async def open_what_if(pilot: Pilot[None], app: LessonCreditApp) -> WhatIfScreen:
    await settle(pilot)
    burst(pilot, "w")
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, WhatIfScreen) and screen.view is not None
    return screen


def held_folds(app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """What-if's folds wait until the returned event is set (a busy machine, a big log): a test sets it in
    `finally` (bounded here too: a test whose event never comes fails, not hangs)."""
    release = threading.Event()
    fold = app.source.what_if

    def held(settings: CreditSettings, priority: tuple[str, ...] | None = None) -> WhatIfView:
        release.wait(timeout=60)
        return fold(settings, priority)

    monkeypatch.setattr(app.source, "what_if", held)
    return release


def downs_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The table's downs acted on from now, counted in the returned list's one item."""
    original = ThemedTable.action_cursor_down
    moves = [0]

    def down(self: ThemedTable) -> None:
        original(self)
        moves[0] += 1

    monkeypatch.setattr(ThemedTable, "action_cursor_down", down)
    return moves


def keys_taken(app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The keys the app's router has taken from the terminal from now, counted in the returned list's one item
    (a burst reaches the app's loop a turn after it is typed)."""
    taken = [0]
    take = app.keys.take

    def counted(event: events.Key | events.Paste) -> None:
        taken[0] += 1
        take(event)

    monkeypatch.setattr(app.keys, "take", counted)
    return taken


def handed_on(app: LessonCreditApp) -> bool:
    """No key waits in the router, and every queue is empty: the keys handed on have been acted on, or lost."""
    return app.keys.waiting == 0 and messages_waiting(app) == 0


def downs_done_or_waiting(app: LessonCreditApp, moves: list[int], typed: int = 2) -> bool:
    """The downs typed acted on, or the next one waiting for the table's load (tui/keys.py)."""
    return moves[0] == typed or app.keys.waiting_for_load


async def test_keys_typed_after_a_setting_change_move_from_the_new_tables_first_row(
    app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`] down down`: the floor's fold lands after the two downs (held here until they are handled, as a busy
    machine holds it). The downs moved the cursor on the table as it was, and the fold's table put it back on
    its first row: they were lost. They now move from the first row, where the new table starts, and stay
    there when it lands: the third row of the new ranking. On a loaded machine the table may show its loading
    indicator before the downs are handled: then they wait for the fold, and move the new table from its first
    row (the next test makes that order sure)."""
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_what_if(pilot, app)
        table = screen.query_one("#what-if-table", ThemedTable)
        burst(pilot, "down")  # somewhere else than the first row before the change
        await settle(pilot)
        assert table.cursor_row == 1
        moves = downs_counted(monkeypatch)
        release = held_folds(app, monkeypatch)
        try:
            burst(pilot, "right_square_bracket", "down", "down")
            await wait_until(pilot, lambda: downs_done_or_waiting(app, moves))
        finally:
            release.set()
        await settle(pilot)
        view = screen.view
        assert moves[0] == 2 and view is not None and view.proposed.floor == pytest.approx(0.35)  # 0.3, a step up
        assert table.cursor_row == 2  # two downs from the new table's first row


async def test_keys_typed_once_the_new_table_shows_it_is_loading_wait_for_it(
    app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`]`, then `down down` once the fold has taken long enough for the table to show its loading indicator
    (held here). Textual skips the bindings of a widget that shows one: the downs did nothing, and the cursor
    stayed on the new table's first row (the test above failed so once in a full run under load). They wait
    for the fold and move from the new table's first row: its third row."""
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_what_if(pilot, app)
        table = screen.query_one("#what-if-table", ThemedTable)
        moves, taken = downs_counted(monkeypatch), keys_taken(app, monkeypatch)
        release = held_folds(app, monkeypatch)
        try:
            burst(pilot, "right_square_bracket")
            await wait_until(pilot, lambda: table.loading)  # the indicator's delay has run out
            burst(pilot, "down", "down")
            # acted on (or lost: the old code), or waiting for the fold
            await wait_until(pilot, lambda: taken[0] == 3 and (downs_done_or_waiting(app, moves) or handed_on(app)))
        finally:
            release.set()
        await settle(pilot)
        view = screen.view
        assert view is not None and view.proposed.floor == pytest.approx(0.35)
        assert moves[0] == 2 and table.cursor_row == 2


async def test_a_key_on_its_way_when_the_table_starts_loading_waits_for_it(
    app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The indicator's delay runs out while a `down` typed after `]` goes from the table to the screen to the
    app, where its binding runs (here: the screen shows the indicator as the key reaches it). Handed on before
    the table was loading, it reached its binding after, and did nothing; it goes back to wait for the fold."""
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_what_if(pilot, app)
        table = screen.query_one("#what-if-table", ThemedTable)
        moves = downs_counted(monkeypatch)
        release = held_folds(app, monkeypatch)
        monkeypatch.setattr(screen, "busy", lambda widget, delay=0.0: None)  # the indicator: shown below instead
        shown: list[events.Key] = []

        def on_key(self: WhatIfScreen, event: events.Key) -> None:
            if event.key == "down" and not shown:
                shown.append(event)
                table.loading = True  # what the indicator's timer does, with the fold under way

        monkeypatch.setattr(WhatIfScreen, "on_key", on_key, raising=False)
        try:
            burst(pilot, "right_square_bracket", "down")
            # acted on (or lost: the old code), or waiting for the fold
            await wait_until(pilot, lambda: bool(shown) and (downs_done_or_waiting(app, moves, 1) or handed_on(app)))
        finally:
            release.set()
        await settle(pilot)
        assert not table.loading and moves[0] == 1 and table.cursor_row == 1  # one down from the first row


async def test_what_if_reloaded_after_a_log_change_keeps_the_cursors_lesson(app: LessonCreditApp) -> None:
    """The log changed (a grade, another process): What-if folds it again under the same settings, and the
    cursor went back to the first row, under the keys moving it."""
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_what_if(pilot, app)
        table = screen.query_one("#what-if-table", ThemedTable)
        burst(pilot, "down", "down", "down")
        await settle(pilot)
        lesson = table_keys(table)[3]
        screen.reload()  # what a new snapshot starts
        await settle(pilot)
        assert table_keys(table)[table.cursor_row] == lesson


async def test_the_next_selection_policy_leaves_the_cursor_where_it_is(app: LessonCreditApp) -> None:
    """`T` proposes another selection policy, which changes the summary above the table, not its rows: the
    table was laid out again and the cursor sent back to the first row."""
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_what_if(pilot, app)
        table = screen.query_one("#what-if-table", ThemedTable)
        policy = screen.policy
        burst(pilot, "down", "down", "T")
        await settle(pilot)
        assert screen.policy != policy
        assert table.cursor_row == 2


async def test_a_setting_typed_with_w_waits_for_the_first_fold(
    app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`w ]` in one burst: `]` reached What-if before its first fold (the saved settings it steps from) and
    did nothing. The fold is held here until `]` has been handed on, or is being held for it."""
    import time

    fold = app.source.what_if

    def gated(settings: CreditSettings, priority: tuple[str, ...] | None = None) -> WhatIfView:
        deadline = time.monotonic() + 60  # (a bound: a test whose key never comes fails, not hangs)
        while time.monotonic() < deadline:
            screen = app.screen_stack[-1]
            if isinstance(screen, WhatIfScreen) and (screen.keys_held or app.keys.waiting == 0):
                break
            time.sleep(0.01)
        return fold(settings, priority)

    monkeypatch.setattr(app.source, "what_if", gated)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        burst(pilot, "w", "right_square_bracket")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WhatIfScreen) and screen.view is not None
        assert screen.view.proposed.floor == pytest.approx(0.35)  # the default 0.3, a step up


async def test_escape_on_a_what_if_still_folding_goes_back_at_once(
    app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What-if holds the keys typed for it until its first fold lands (`]` steps from the saved settings), and
    Escape waited with them: `w`, then `escape`, stayed on What-if for the whole fold (seconds at a million
    sessions).
    Escape reads nothing the fold brings: it goes back while the fold is held here."""
    released = threading.Event()
    fold = app.source.what_if

    def held(settings: CreditSettings, priority: tuple[str, ...] | None = None) -> WhatIfView:
        released.wait(timeout=60)  # (a bound: a test that never releases it fails, not hangs)
        return fold(settings, priority)

    monkeypatch.setattr(app.source, "what_if", held)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        burst(pilot, "w")
        try:
            await wait_until(pilot, lambda: isinstance(app.screen, WhatIfScreen) and app.keys.waiting == 0)
            burst(pilot, "escape")  # while the fold is held
            await wait_until(pilot, lambda: isinstance(app.screen, LessonsScreen), timeout=30)
        finally:
            released.set()
        await settle(pilot)
        assert isinstance(app.screen, LessonsScreen)


# ---------------------------------------------------------------------------- Session detail


async def test_a_draft_discarded_before_its_preview_lands_leaves_the_credits_table_usable(
    app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`5` starts the draft's preview (held here) and the credits table shows its loading indicator; `escape`
    discards the draft before the preview lands. The preview, for a draft gone, was dropped and the indicator
    stayed until the next reload, the table's keys doing nothing (now they would wait for it). The table shows
    the credits as logged again, and `down` moves it."""
    release = threading.Event()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_session(pilot, "s4")
        table = screen.query_one("#credits", ThemedTable)
        assert table.row_count == 2 and table.cursor_row == 0
        explain = app.source.explain

        def held(session_id: str, draft: float | None = None, *, with_journal: bool = True) -> Any:
            if draft is not None:
                release.wait(timeout=60)  # (a bound: a test that never releases it fails, not hangs)
            return explain(session_id, draft, with_journal=with_journal)

        monkeypatch.setattr(app.source, "explain", held)
        try:
            burst(pilot, "5")
            await wait_until(pilot, lambda: table.loading)  # the indicator's delay has run out
            burst(pilot, "escape")
            await wait_until(pilot, lambda: screen.draft is None)
        finally:
            release.set()
        await settle(pilot)
        assert not table.loading
        burst(pilot, "down")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and table.cursor_row == 1


# ---------------------------------------------------------------------------- Lessons


async def test_lessons_reordered_by_a_reload_between_cursor_moves_keep_the_row_moved_to(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new session (s5: 0.9 for git-worktree and shell-quoting) read in just as the second of three downs
    has moved the cursor: the same lessons sort in another order, moved in place, and the cursor followed the
    lesson it was last told of (the first down's), not the one the second down led to."""
    original = ThemedTable.action_cursor_down
    moves = 0

    def down(self: ThemedTable) -> None:
        nonlocal moves
        original(self)
        moves += 1
        screen = self.screen
        if moves == 2 and isinstance(screen, LessonsScreen):  # the reload lands now
            screen.source.check()
            screen.post_message(LessonsScreen.Loaded(screen.source.lessons_view()))

    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonsScreen)
        table = screen.query_one("#lessons-table", ThemedTable)
        before = table_keys(table)
        record(workspace, ws_root, NEW_SESSION)
        monkeypatch.setattr(ThemedTable, "action_cursor_down", down)
        burst(pilot, "down", "down", "down")
        await settle(pilot)
        after = table_keys(table)
        assert sorted(after) == sorted(before) and after != before  # the same lessons, reordered in place
        assert after[table.cursor_row - 1] == before[2]  # one down from where the first two led
        assert screen.highlighted == after[table.cursor_row]


async def test_lessons_refiltered_past_the_highlighted_lesson_name_the_first_row_at_once(
    app: LessonCreditApp,
) -> None:
    """A rebuild that leaves the highlighted lesson out (a filter, a reload without it) puts the cursor on the
    first row and says so at once: `d` or `p` typed ahead read the lesson no longer listed, and did nothing."""
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonsScreen)
        table = screen.query_one("#lessons-table", ThemedTable)
        first = table_keys(table)[0]
        assert screen.highlighted == first == "testing/run-tests.md"
        screen.filter_text = "work"  # git-worktree and small-commits: not run-tests
        screen._rebuild()
        assert table.cursor_row == 0 and screen.highlighted == table_keys(table)[0] == "tools/git-worktree.md"


# ---------------------------------------------------------------------------- Health


async def test_health_rechecked_keeps_the_focus_on_the_finding_it_was_on(tmp_path: Path) -> None:
    """Health checks again when the log changes, and lays its cards out anew: the focus went back to the first
    card, so `enter` typed after a down opened the first finding's session, not the one the down led to."""
    from tests.tui.test_tui_whole_headers import demo_app

    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await open_health(pilot)
        cards = list(screen.query(FindingCard))
        assert len(cards) == 3 and screen.focused is cards[0]
        burst(pilot, "down")
        await settle(pilot)
        assert screen.focused is cards[1]
        finding = cards[1].finding
        screen.reload()  # what a new snapshot starts
        await settle(pilot)
        focused = screen.focused
        assert isinstance(focused, FindingCard) and focused not in cards  # laid out anew
        assert focused.finding == finding


async def test_a_grade_read_while_health_was_under_its_session_leaves_its_finding_on_return(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Health's "waiting for a grade" finding names s4 and s5; enter opens s4, `5 c` grades it, and the grade is
    written and read in a snapshot before `escape` is handled, Health's reload for it not landed (held here).
    `escape enter` typed ahead opened s4 again, from the finding as Health had read it; it opens s5."""
    session_id, journal, lessons, _, category, stamp = NEW_SESSION
    record(workspace, ws_root, (session_id, journal, lessons, None, category, stamp))  # s5, pending too
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_health(pilot)
        card = next(c for c in screen.query(FindingCard) if c.finding.items[:2] == ("s4", "s5"))
        card.focus()
        await settle(pilot)
        monkeypatch.setattr(screen, "reload", lambda: None)  # its reload has not landed yet
        await pilot.press("enter", "5", "c")
        await wait_until(pilot, lambda: app.writes.pending == 0 and "s4" not in app.writes.touched())
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == "s4"
        assert card.finding.items[:2] == ("s4", "s5")  # Health as it was read
        await pilot.press("escape", "enter")
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, SessionDetailScreen) and detail.session_id == "s5"
        await pilot.press("5", "c")  # s5 graded too: the finding, as read, names no session pending now
        await wait_until(pilot, lambda: app.writes.pending == 0 and "s5" not in app.writes.touched())
        await pilot.press("escape", "enter")
        await settle(pilot)
        assert app.screen_stack[-1] is screen  # back on Health, nothing opened
        said = [text for _, text in notification_texts(app)]
        assert "Every session this finding names has been graded here since." in said


# ---------------------------------------------------------------------------- Lesson over time


async def test_a_key_typed_with_d_waits_for_the_lessons_windows(
    analysis_workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`d end` in one burst: `end` reached the over-time table before its rows (a worker's) and did nothing.
    The load is held here until `end` has been handed on, or is being held for it."""
    import time

    from lesson_credit.tui.over_time_view import OverTimeView, over_time_view
    from lesson_credit.tui.screens import lesson_over_time
    from lesson_credit.tui.screens.lesson_over_time import LessonOverTimeScreen
    from lesson_credit.tui.source import WorkspaceSource

    app = LessonCreditApp(analysis_workspace, seed=0, poll_seconds=0)

    def gated(source: WorkspaceSource, lesson_id: str) -> OverTimeView:
        deadline = time.monotonic() + 60  # (a bound: a test whose key never comes fails, not hangs)
        while time.monotonic() < deadline:
            screen = app.screen_stack[-1]
            if isinstance(screen, LessonOverTimeScreen) and (screen.keys_held or app.keys.waiting == 0):
                break
            time.sleep(0.01)
        return over_time_view(source, lesson_id)

    monkeypatch.setattr(lesson_over_time, "over_time_view", gated)
    async with app.run_test(size=(120, 40)) as pilot:
        burst(pilot, "slash", *"commit", "enter", "d", "end")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonOverTimeScreen) and screen.lesson_id == "workflow/commit-often.md"
        table = screen.query_one("#over-time-table", ThemedTable)
        assert table.row_count == 2 and table.cursor_row == 1  # two windows (test_tui_over_time.py): the last


async def test_the_lessons_windows_read_again_keep_the_row_the_cursor_is_on(analysis_workspace: Workspace) -> None:
    """A log change reads the windows again: the table was refilled with the cursor on its first row."""
    from lesson_credit.tui.screens.lesson_over_time import LessonOverTimeScreen

    app = LessonCreditApp(analysis_workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(120, 40)) as pilot:
        burst(pilot, "slash", *"commit", "enter", "d")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonOverTimeScreen)
        table = screen.query_one("#over-time-table", ThemedTable)
        burst(pilot, "down")
        await settle(pilot)
        assert table.row_count == 2 and table.cursor_row == 1
        screen.reload()  # what a new snapshot starts
        await settle(pilot)
        assert table.row_count == 2 and table.cursor_row == 1
