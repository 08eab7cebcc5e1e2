"""Pilot tests: arms retired by `lesson-credit prune` are hidden from the Lessons table, as `status` hides them;
what the Lessons title counts (retired arms, lessons never used; a broken lesson file is neither).

The fixture logs tools/old-lesson.md and then deletes its file (a ghost arm); `prune` retires it.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

from textual.coordinate import Coordinate
from textual.widgets import DataTable

from lesson_credit.cli.main import main as cli_main
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.screens.what_if import WhatIfScreen
from tests.support.textual_private import notification_texts
from tests.tui.tui_fixture import fixed_clock, settle

SIZE = (120, 40)
GHOST = "tools/old-lesson.md"


def cli(*argv: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli_main(list(argv), clock=fixed_clock) == 0
    return out.getvalue()


def status_paths(root: Path, *extra: str) -> set[str]:
    return {row["path"] for row in json.loads(cli("status", "--workspace", str(root), "--json", *extra))["lessons"]}


def table_keys(table: DataTable[object]) -> set[str]:
    return {str(table.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value) for row in range(table.row_count)}


async def test_retired_arms_are_hidden_like_status_hides_them_and_a_key_shows_them(ws_root: Path) -> None:
    assert GHOST in status_paths(ws_root)  # a ghost arm: listed (status missing) until pruned
    cli("prune", "--workspace", str(ws_root))
    hidden, everything = status_paths(ws_root), status_paths(ws_root, "--all")
    assert everything - hidden == {GHOST}
    app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonsScreen)
        table = screen.query_one("#lessons-table", DataTable)
        assert table_keys(table) == hidden
        assert "1 retired" in str(screen.title)  # says something is hidden, and how to show it
        await pilot.press("R")
        await settle(pilot)
        assert table_keys(table) == everything
        await pilot.press("R")
        await settle(pilot)
        assert table_keys(table) == hidden
        await pilot.press("w")  # What-if follows `replay`: retired arms hidden there too
        await settle(pilot)
        what_if = app.screen
        assert isinstance(what_if, WhatIfScreen) and what_if.view is not None
        assert {row.path for row in what_if.view.rows} == hidden


async def test_a_restored_lesson_file_brings_the_retired_arm_back(ws_root: Path) -> None:
    cli("prune", "--workspace", str(ws_root))
    (ws_root / "lessons" / GHOST).write_text("---\nmatch:\n  keywords: [legacy]\n---\n# Back again\n")
    assert GHOST in status_paths(ws_root)
    app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#lessons-table", DataTable)
        assert GHOST in table_keys(table)
        assert "retired" not in str(app.screen.title)


async def test_R_with_no_retired_arms_says_so(ws_root: Path) -> None:
    """Before any prune nothing is retired: R changes nothing in the table, so it says why."""
    app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#lessons-table", DataTable)
        before = table_keys(table)
        await pilot.press("R")
        await settle(pilot)
        assert table_keys(table) == before
        assert any("No retired arms" in message for _, message in notification_texts(app))


async def test_a_broken_lesson_file_is_not_counted_as_never_used(ws_root: Path) -> None:
    """A symlink loop in lessons/ (`ln -s loop.md lessons/loop.md`) is a broken file, not a lesson: it is
    listed as a row that says why, and the title counted it among the lessons never used ("2 never used
    last"). The fixture's one lesson never used is communication/ask-first.md (n 0)."""
    (ws_root / "lessons" / "loop.md").symlink_to("loop.md")
    app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonsScreen) and screen.view is not None
        assert str(screen.title).endswith(" · 1 never used, listed last")
        # the problem is still told: its row, and the notification naming the file
        row = screen.view.row("loop.md")
        assert row is not None and row.status == "broken"
        assert "loop.md" in table_keys(screen.query_one("#lessons-table", DataTable))
        assert any("could not be loaded" in title for title, _ in notification_texts(app))


async def test_a_library_of_retired_arms_only_says_so(ws_root: Path) -> None:
    """Every lesson file deleted and `prune` run: the table is empty, and the line above it says why and
    which key shows the retired arms (not the fresh workspace's hint, nor a bare header)."""
    import shutil

    from textual.widgets import Static

    shutil.rmtree(ws_root / "lessons")
    (ws_root / "lessons").mkdir()
    cli("prune", "--workspace", str(ws_root))
    assert status_paths(ws_root) == set() != status_paths(ws_root, "--all")
    app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        empty = app.screen.query_one("#lessons-empty", Static)
        assert empty.display and str(empty.render()) == "Every lesson is retired (R shows them)."
        await pilot.press("R")
        await settle(pilot)
        assert not empty.display
