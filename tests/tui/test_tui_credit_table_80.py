"""Session detail at 80x24: the credit table fits the screen without scrolling sideways, even for long lesson
ids: the arithmetic (salience to credited) and the keywords hit whole, the keywords missed in what is left;
Δα and Δβ are in "why this credit" below it."""

from __future__ import annotations

from pathlib import Path

from textual.widgets.data_table import ColumnKey

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.tui.tui_fixture import fixed_clock, lesson, open_session, record, settle

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


async def test_credit_table_fits_at_80_columns(ws_root: Path) -> None:
    """On the old code Δα and Δβ took the line and the hit column was cut ("stale branc" and a scrollbar)."""
    app = LessonCreditApp(long_ids_workspace(ws_root), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s9")
        await pilot.press("5")
        await settle(pilot)
        table = detail.query_one("#credits", ThemedTable)
        # the names (32 cells), sal, wt, credited, hit and missed (4, 5, 8, 12, 6) with 2 cells of padding each
        # take 79 of the table's 78: the keywords missed ("none" here) are left to the panel, before a name is cut
        assert [key.value for key in table.columns] == ["lesson", "salience", "weight", "credited", "hit"]
        assert table.columns[ColumnKey("lesson")].get_render_width(table) == 32 + 2
        assert "missed: none" in str(detail.query_one("#credit-story").render())
        used = sum(column.get_render_width(table) for column in table.columns.values())
        assert used <= table.scrollable_content_region.width and table.max_scroll_x == 0
        # the lesson column names each lesson (its file name at 80 columns; the full id is in the panel)
        lessons = [str(table.get_cell(path, "lesson")) for path in LONG]
        assert lessons == ["run-tests-before-claiming", "git-worktree-hygiene-and-cleanup"]
        hits = [str(table.get_cell(path, "hit")) for path in LONG]
        assert hits == ["pytest", "git worktree"]  # s1.md names both (the fixture's journal)
        assert table.columns[ColumnKey("hit")].get_render_width(table) - 2 >= len("git worktree")
        # run-tests (focused, first): its one keyword hit, salience 1, weight 0.3 + 0.7 = 1; draft 0.5 x 1:
        # alpha +0.5, beta +0.5, in the story below the table
        story = str(detail.query_one("#credit-story").render())
        assert "α +0.500   β +0.500" in story
