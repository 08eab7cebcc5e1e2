"""Pilot tests: the Sessions screen on a log of more sessions than it shows (its MAX_ROWS).

The screen's limit is lowered for these tests (MAX_ROWS 1000 -> SHOWN), the log cut to match (3000 -> SESSIONS):
the ratios the tests need stay (pending sessions outnumber the rows shown; the needles below match fewer),
and a table of hundreds of rows, rebuilt on every key typed into the filter, costs a quarter of the time."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens import sessions as sessions_module
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.sessions import SessionsScreen
from tests.tui.tui_fixture import ManySession, build_many_sessions_workspace, fixed_clock, settle, table_keys

SIZE = (120, 40)
SHOWN = 250  # the screen's MAX_ROWS in these tests: more than a first fill of the table (FILL_FIRST = 100)
SESSIONS = 750  # two in five pending: 300 > SHOWN


def matching(sessions: list[ManySession], needle: str = "", pending_only: bool = False) -> list[ManySession]:
    """The sessions the filter should find, newest first, computed from what was written."""
    needle = needle.lower()
    out = []
    for s in reversed(sessions):
        if pending_only and s.base is not None:
            continue
        fields = (s.session_id, s.category or "", s.grader or "", s.timestamp)
        if needle and not any(needle in field.lower() for field in fields):
            continue
        out.append(s)
    return out


def summary_text(screen: SessionsScreen) -> str:
    return str(screen.query_one("#sessions-summary", Static).render())


@pytest.fixture
def many(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Workspace, list[ManySession]]:
    monkeypatch.setattr(sessions_module, "MAX_ROWS", SHOWN)
    root = tmp_path / "ws"
    expected = build_many_sessions_workspace(root, n=SESSIONS)
    return Workspace(root, clock=fixed_clock), expected


async def open_sessions(pilot: Pilot[None]) -> tuple[SessionsScreen, DataTable[object]]:
    await settle(pilot)
    await pilot.press("s")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SessionsScreen)
    return screen, screen.query_one("#sessions-table", DataTable)


async def type_filter(pilot: Pilot[None], text: str) -> None:
    await pilot.press("slash")
    await pilot.press(*text)
    await settle(pilot)  # the filter re-runs after a pause in typing


async def test_newest_rows_pending_toggle_and_counts(many: tuple[Workspace, list[ManySession]]) -> None:
    workspace, sessions = many
    assert len(sessions) == SESSIONS > SHOWN
    pending = [s for s in sessions if s.base is None]
    assert SHOWN < len(pending) < SESSIONS  # both lists are cut to the newest SHOWN
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen, table = await open_sessions(pilot)
        newest = [s.session_id for s in reversed(sessions)][:SHOWN]
        assert table_keys(table) == newest
        assert summary_text(screen) == (
            f"{SESSIONS} sessions · {len(pending)} pending · showing {SHOWN} newest of {SESSIONS} "
            "(filter with / to find older ones)"
        )
        # the cells of a few rows: pending, graded by the heuristic, graded later by hand
        by_id = {s.session_id: s for s in sessions}
        for session_id in newest[:12]:
            s = by_id[session_id]
            cells = [str(cell).strip() for cell in table.get_row(session_id)]
            assert cells[0] == session_id and cells[2] == (s.category or "—")
            if s.base is None:
                assert cells[3] == "pending" and cells[4] == "—"  # no one scored it: no grader
            else:
                assert cells[3] == f"{s.base:.3f}" and cells[4] == s.grader

        await pilot.press("v")
        await settle(pilot)
        assert table_keys(table) == [s.session_id for s in reversed(pending)][:SHOWN]
        assert summary_text(screen) == (
            f"{SESSIONS} sessions · {len(pending)} pending · showing {SHOWN} newest of {len(pending)} "
            "(filter with / to find older ones) (pending only: v shows all)"
        )
        await pilot.press("v")
        await settle(pilot)
        assert table_keys(table) == newest


async def test_text_filter_reaches_sessions_older_than_the_rows_shown(
    many: tuple[Workspace, list[ManySession]],
) -> None:
    workspace, sessions = many
    pending = sum(1 for s in sessions if s.base is None)
    old = sessions[7]  # far older than the newest SHOWN
    assert old.session_id not in {s.session_id for s in sessions[-SHOWN:]}
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen, table = await open_sessions(pilot)
        assert old.session_id not in table_keys(table)
        await type_filter(pilot, old.session_id.lower())  # any case
        assert table_keys(table) == [old.session_id]
        assert summary_text(screen) == f"{SESSIONS} sessions · {pending} pending · showing 1"

        # enter submits the filter, enter again opens the session found
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, SessionDetailScreen) and detail.session_id == old.session_id
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen

        # a filter over the grader column: the sessions graded by hand after they were logged
        await pilot.press("escape")  # clear the filter
        await settle(pilot)
        assert screen.query_one("#session-filter", Input).value == ""
        assert len(table_keys(table)) == SHOWN
        await type_filter(pilot, "MANUAL")
        manual = matching(sessions, "manual")
        assert 0 < len(manual) < SHOWN
        assert table_keys(table) == [s.session_id for s in manual]
        assert all(s.grader == "manual" for s in manual)


async def test_text_filter_with_more_matches_than_shown_and_pending_only(
    many: tuple[Workspace, list[ManySession]],
) -> None:
    workspace, sessions = many
    pending = sum(1 for s in sessions if s.base is None)
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        screen, table = await open_sessions(pilot)
        # "-0" is in every timestamp (2025-0...) and in every id (Run-00000 ...)
        await type_filter(pilot, "-0")
        found = matching(sessions, "-0")
        assert len(found) == SESSIONS
        assert table_keys(table) == [s.session_id for s in found][:SHOWN]
        assert summary_text(screen) == (
            f"{SESSIONS} sessions · {pending} pending · showing {SHOWN} newest of {SESSIONS} "
            "(filter with / to find older ones)"
        )
        # a needle matching about one session in eight (the id's letter), then pending only as well
        await pilot.press("escape")
        await settle(pilot)
        await type_filter(pilot, "-e")
        found = matching(sessions, "-e")
        assert 0 < len(found) < SHOWN
        assert table_keys(table) == [s.session_id for s in found]
        assert summary_text(screen) == f"{SESSIONS} sessions · {pending} pending · showing {len(found)}"
        await pilot.press("enter")  # to the table: v toggles there, it is not typed
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        found = matching(sessions, "-e", pending_only=True)
        assert 0 < len(found) and all(s.base is None for s in found)
        assert table_keys(table) == [s.session_id for s in found]
        assert summary_text(screen) == (
            f"{SESSIONS} sessions · {pending} pending · showing {len(found)} (pending only: v shows all)"
        )
        # another needle, still pending only: a category logged as "Docs"
        await pilot.press("escape")  # clears the filter, keeps pending only
        await settle(pilot)
        assert len(table_keys(table)) == SHOWN
        await type_filter(pilot, "docs")
        found = matching(sessions, "docs", pending_only=True)
        assert 0 < len(found) < SHOWN
        assert table_keys(table) == [s.session_id for s in found]
        assert all(s.category == "Docs" and s.base is None for s in found)
        assert summary_text(screen) == (
            f"{SESSIONS} sessions · {pending} pending · showing {len(found)} (pending only: v shows all)"
        )
