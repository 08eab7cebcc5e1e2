"""Session detail at 80x24: the record panel's first line (the judge's score and reason, or where there is no
judge the record's harness, model, duration and outcome) is read whole. From five lessons the panel was cut to
one row, its first line with it: "judge 0.35 (claude-haiku-4-5), replaced by the judge's 0.63 logged on line 41,"
and nothing of the score that counts or the reason, a scrollbar thumb the only sign of the rest. The panel now
gets the rows that line needs wrapped (up to three), from the journal (down to one line) and then from the
credit box (its story scrolls in it, its more-lines mark says so); every credit row stays in view."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.textual_private import screen_lines
from tests.tui.test_tui_whole_headers import demo_app
from tests.tui.tui_fixture import burst, open_session, settle

CASES = {
    # the demo's sessions: lessons, the first line (163 cells: three rows of the 78), the rows it takes
    "2026-09-07-017": (
        5,
        "judge 0.35 (claude-haiku-4-5), replaced by the judge's 0.63 logged on line 41, the score in force; "
        "the record's reason: Spent the session without a working change.",
        3,
    ),
    # eight lessons, pending, no judge: the record's line (142 cells, two rows)
    "2026-10-25-164": (
        8,
        "record gptme · anthropic/claude-sonnet-4-6 · 25m 24s · outcome unknown (maps to no reward) · exit code 0 "
        "· record 2026-10-25-164, joined by id",
        2,
    ),
}


@pytest.mark.parametrize("session", list(CASES))
async def test_the_records_first_line_is_whole_at_80x24(tmp_path: Path, session: str) -> None:
    lessons, first, rows = CASES[session]
    assert -(-len(first) // 78) == rows  # (the words wrap within those rows: checked on screen below)
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, session)
        burst(pilot, "down", "down", "down", "up")  # the credit rows moved fast: the layout holds
        await settle(pilot)
        panel = detail.query_one("#record-panel")
        assert panel.region.height == rows and panel.scroll_y == 0, (panel.region, panel.scroll_y)
        lines = [line.text for line in screen_lines(app)]
        shown = " ".join(line[panel.region.x : panel.region.right].strip() for line in lines[panel.region.y :][:rows])
        assert shown == first, shown
        table = detail.query_one("#credits", ThemedTable)
        assert table.row_count == lessons and table.max_scroll_y == 0, table.max_scroll_y
        footer = detail.query_one("KeyFooter").region.y
        box = detail.query_one("#credit-box")
        assert box.region.bottom <= footer and detail.query_one("#grade-bar").region.bottom <= footer
        assert detail.query_one("#journal").scrollable_content_region.height >= 1
        assert "more line" in "".join(lines[box.region.y : box.region.bottom])  # the rest of its story: below
