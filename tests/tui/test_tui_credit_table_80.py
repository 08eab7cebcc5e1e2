"""Session detail at 80x24: the credit table's arithmetic (salience to Δβ) is on screen without scrolling,
even for long lesson ids; the rest (hit, missed) is reachable by scrolling right."""

from __future__ import annotations

from pathlib import Path

from textual.widgets.data_table import ColumnKey
from tui_fixture import fixed_clock, lesson, open_session, record, settle

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.widgets.themed_table import ThemedTable

LONG = {
    "testing/run-tests-before-claiming.md": lesson(["pytest"], "Run the tests"),
    "tools/git-worktree-hygiene-and-cleanup.md": lesson(["git worktree"], "Worktree hygiene"),
}


def long_ids_workspace(root: Path) -> Workspace:
    for lesson_id, text in LONG.items():
        (root / "lessons" / lesson_id).write_text(text, encoding="utf-8")
    ws = Workspace(root, clock=fixed_clock)
    record(ws, root, ("s9", "s1.md", list(LONG), 0.8, "code", "2026-03-06T10:00:00Z"))
    return ws


async def test_credit_arithmetic_fits_at_80_columns(ws_root: Path) -> None:
    app = LessonCreditApp(long_ids_workspace(ws_root), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s9")
        await pilot.press("5")
        await settle(pilot)
        table = detail.query_one("#credits", ThemedTable)
        arithmetic = ("lesson", "salience", "weight", "reward", "d_alpha", "d_beta")
        used = sum(table.columns[ColumnKey(key)].get_render_width(table) for key in arithmetic)
        assert used <= table.scrollable_content_region.width
        # the lesson column names each lesson (its file name at 80 columns; the full id is in the panel)
        lessons = [str(table.get_cell(path, "lesson")) for path in LONG]
        assert lessons == ["run-tests-before-claiming", "git-worktree-hygiene-and-cleanup"]
        # the last columns are reachable: right scrolls the table (a cell a key) to them
        await pilot.press(*["right"] * 40)
        await settle(pilot)
        assert table.scroll_x == table.max_scroll_x > 0
