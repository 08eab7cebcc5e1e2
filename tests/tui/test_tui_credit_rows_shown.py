"""Session detail: a session of more lessons than the credits table has rows for says how many are in view
(on the session's line, where the lessons are counted), the table's columns fit the table at 100-149 columns,
and the dashboard's counts agree with their nouns ("1 lesson", "1 unreadable line")."""

from __future__ import annotations

from pathlib import Path

from textual.widgets._toast import Toast

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.session_line import lessons_shown
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.textual_private import notification_texts
from tests.tui.test_tui_80x24_in_view import shown
from tests.tui.test_tui_trust import demo_copy
from tests.tui.test_tui_whole_headers import row_text
from tests.tui.tui_fixture import LOG_REL, burst, fixed_clock, open_session, record, settle, toasts_shown

ELEVEN = (  # demo lessons
    "autonomous/rate-limit-backoff.md",
    "autonomous/context-budget-management.md",
    "testing/flaky-test-handling.md",
    "testing/fixture-scope-leaks.md",
    "tools/git-worktree-hygiene.md",
    "tools/gh-cli-pr-workflow.md",
    "testing/pytest-targeted-runs.md",
    "workflow/check-ci-before-done.md",
    "tools/force-push-safety.md",
    "tools/shell-quoting-pitfalls.md",
    "patterns/read-before-edit.md",
)


def demo_with_eleven(tmp_path: Path) -> LessonCreditApp:
    """The demo with a pending session of eleven lessons, s11 (the demo's largest has eight)."""
    root = demo_copy(tmp_path / "demo")
    (root / "state" / "journals" / "s11.md").write_text("Ran into rate limit here; then a flaky test.\n")
    ws = Workspace(root, clock=fixed_clock)
    record(ws, root, ("s11", "s11.md", list(ELEVEN), None, "code", "2026-12-05T09:00:00Z"))
    return LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)


async def test_a_session_of_eleven_lessons_says_how_many_rows_are_in_view_at_80x24(tmp_path: Path) -> None:
    """At 80x24 the table has nine lines for eleven lessons (header + 8, as for eight lessons: the most
    tui/widths.py takes from the journal and the record); on the old code the line said "11 lessons" and
    only the scrollbar showed that three were below. The line keeps its one row."""
    app = demo_with_eleven(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s11")
        table = detail.query_one("#credits", ThemedTable)
        await settle(pilot)
        assert table.row_count == 11 and table.max_scroll_y == 3, (table.row_count, table.max_scroll_y)
        assert table.scrollable_content_region.height == 1 + 8
        line = "s11 · 8 of 11 lessons shown, scroll for more · 2026-12-05 09:00 · code"
        assert shown(app, "session-info") == [line]
        await pilot.press("end")  # at the last row: still 8 of the 11 in view
        await settle(pilot)
        assert table.cursor_row == 10 and shown(app, "session-info") == [line]
        await pilot.press("escape")
        await settle(pilot)
        # eight lessons, all in view: the line as it was
        await open_session(pilot, "2026-09-01-000")
        assert shown(app, "session-info") == ["2026-09-01-000 · 8 lessons · 2026-09-01 17:03 · autonomous-run"]


async def test_at_80x40_the_credit_table_shows_ten_lessons(tmp_path: Path) -> None:
    """80 columns and 40 rows (not short): the table had header + 5 rows (the stylesheet's 6), so an
    eight-lesson session showed 5 where 80x24 shows all 8 (the journal gives rows there). It now takes
    header + 10, the plot below giving way (the side pane scrolls): eleven lessons, 10 in view (11 - 10 = 1
    row to scroll); the demo's eight-lesson session whole."""
    app = demo_with_eleven(tmp_path)
    async with app.run_test(size=(80, 40)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s11")
        table = detail.query_one("#credits", ThemedTable)
        await settle(pilot)
        assert (table.scrollable_content_region.height, table.max_scroll_y) == (1 + 10, 1)
        assert shown(app, "session-info")[0].startswith("s11 · 10 of 11 lessons shown")
        await pilot.press("escape")
        await settle(pilot)
        detail = await open_session(pilot, "2026-09-01-000")
        table = detail.query_one("#credits", ThemedTable)
        await settle(pilot)
        assert (table.row_count, table.max_scroll_y) == (8, 0)
        assert shown(app, "session-info") == ["2026-09-01-000 · 8 lessons · 2026-09-01 17:03 · autonomous-run"]


async def test_the_credit_table_fits_and_shows_every_row_at_120x30(tmp_path: Path) -> None:
    """At 100-149 columns the table beside the journal is 64 cells wide: on the old code its full columns
    ran past the edge ("rewar" cut, the rest sideways) and their scrollbar hid the eleventh row. Now the
    compact columns (as below 100) fit it, and all eleven rows are in view."""
    app = demo_with_eleven(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s11")
        await settle(pilot)
        table = detail.query_one("#credits", ThemedTable)
        assert table.max_scroll_x == 0 and table.max_scroll_y == 0, (table.max_scroll_x, table.max_scroll_y)
        labels = [str(column.label) for column in table.columns.values()]
        assert "credited" in labels and "reward" not in labels, labels
        for column in table.columns.values():  # no header cut
            assert column.get_render_width(table) >= len(str(column.label)) + 2 * table.cell_padding
        names = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert names[:2] == ["rate-limit-backoff", "context-budget-management"]  # whole (25 cells)
        assert table.columns[next(iter(table.columns))].get_render_width(table) >= len(names[1]) + 2
        assert "·  11 lessons  ·" in shown(app, "session-info")[0]


async def test_at_80x24_the_keywords_hit_give_way_before_a_lessons_name(tmp_path: Path) -> None:
    """The demo's 2026-10-26-167 hits many keywords (mock, unittest.mock, mock.patch, ...): the compact table
    leaves the keywords missed to "why this credit", cuts the keywords hit to 16 cells, and only then the
    names. On the old code the name column was 12 cells ("run-tests-b…") beside 39 cells of keywords hit.
    run-tests-before-claiming is 25 cells; 25 + sal 4 + wt 5 + credited 8 + hit 16 + 2 x 5 padding = 68,
    within the table's 78 (the hit column takes what is left: 26)."""
    app = LessonCreditApp(Workspace(demo_copy(tmp_path / "demo"), clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-26-167")
        await settle(pilot)
        table = detail.query_one("#credits", ThemedTable)
        names = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert "run-tests-before-claiming" in names
        cells = {str(c.label): c.get_render_width(table) - 2 * table.cell_padding for c in table.columns.values()}
        assert "missed" not in cells and cells["lesson"] >= 25 and cells["hit"] >= 16, cells


def test_the_count_of_lessons_takes_the_words_that_fit() -> None:
    assert lessons_shown(1, None) == "1 lesson" and lessons_shown(2, None, 3) == "2 lessons"
    assert lessons_shown(11, 8) == "8 of 11 lessons shown, scroll for more"  # 38 cells
    assert lessons_shown(11, 8, 38) == "8 of 11 lessons shown, scroll for more"
    assert lessons_shown(11, 8, 37) == "8 of 11 lessons shown"  # 21 cells
    assert lessons_shown(11, 8, 20) == "11 lessons, 8 shown"


async def test_counts_on_screen_agree_with_their_nouns(workspace: Workspace, ws_root: Path) -> None:
    """On the old code: "1 lessons" on the session's line, "1 unreadable line(s) in sessions.jsonl"."""
    (ws_root / "state" / "journals" / "s6.md").write_text("One git worktree.\n")
    record(workspace, ws_root, ("s6", "s6.md", ["tools/git-worktree.md"], 0.5, "code", "2026-03-06T10:00:00Z"))
    with open(ws_root / LOG_REL, "a", encoding="utf-8") as log:
        log.write("this is not json\n")
    app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        titles = [title for title, _ in notification_texts(app)]
        assert f"1 unreadable line in {app.source.store_name}" in titles, titles
        await open_session(pilot, "s6")
        assert shown(app, "session-info") == ["s6 · 1 lesson · 2026-03-06 10:00 · code"]


async def test_a_toast_leaves_the_count_of_lessons_in_view_at_80x24(tmp_path: Path) -> None:
    """At 80 columns a session's toasts show at the top right, over the session's line (clear of the grade
    bar and the credits): on the old code the count came last on that line and "Graded s11 …" covered it
    for 4 s ("s11 · 2026-12-05 09:00 · code · 8 of 1" and the toast). The count now comes after the id:
    "s11 · 8 of 11 lessons shown" is 27 cells, left of the toast (at most half the width, 40 cells)."""
    app = demo_with_eleven(tmp_path)
    setattr(app, "NOTIFICATION_TIMEOUT", 3600)  # noqa: B010 (a class variable, set for this app only): the toast outlives a loaded machine's settle
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s11")
        await settle(pilot)
        y = detail.query_one("#session-info").region.y
        burst(pilot, "7", "c")
        await settle(pilot)
        await toasts_shown(pilot)
        (toast,) = detail.query(Toast)
        assert str(toast.render()) == "Saved grade 0.7 for s11 (was pending)." and toast.region.y == y
        assert row_text(app, y).startswith(" s11 · 8 of 11 lessons shown"), row_text(app, y)
