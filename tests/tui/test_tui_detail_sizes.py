"""Session detail at the sizes people use (80 to 150 columns, 24 to 40 rows), on the demo's 2026-09-01-000
(eight lessons; its journal state/journals/2026-09-01-000.md): the journal's path takes one line, and the
whole of "why this credit" is in view (or its box scrolls, closed, with its scrollbar) beside every credit row."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.session_line import pane_title
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.textual_private import screen_lines
from tests.tui.test_tui_whole_headers import demo_app
from tests.tui.tui_fixture import open_session, settle

EIGHT = "2026-09-01-000"
JOURNAL_FILE = f"{EIGHT}.md"


def screen_text(app: object) -> list[str]:
    return ["".join(segment.text for segment in line) for line in screen_lines(app)]  # type: ignore[arg-type]


async def opened(pilot: object, size: tuple[int, int]) -> SessionDetailScreen:
    await pilot.resize_terminal(*size)  # type: ignore[attr-defined]
    await settle(pilot)
    return await open_session(pilot, EIGHT)  # type: ignore[arg-type]


@pytest.mark.parametrize("width", [100, 120, 149, 160])
async def test_the_journal_path_takes_one_line_beside_the_session(tmp_path: Path, width: int) -> None:
    """At 100x24 the session's line ended "·  journal" and the path wrapped onto a second line (the session
    block three lines tall, a row of the screen lost). Now the line keeps one line: the path, its folders
    shortened first, where the line has room for its file name, else in the journal pane's title. The file
    name is on screen whole, once."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(width, 24)) as pilot:
        detail = await opened(pilot, (width, 24))
        info = detail.query_one("#session-info")
        assert info.region.height == 2, info.region  # the session's line and the credit settings' line
        lines = screen_text(app)
        assert sum(line.count(JOURNAL_FILE) for line in lines) == 1, lines[:8]


@pytest.mark.parametrize("screen_width", [80, 99, 100, 149, 150, 200])
def test_a_long_journal_path_in_the_panes_title_keeps_its_file_name_within_the_pane(screen_width: int) -> None:
    """A journal outside the workspace keeps its absolute path (96 cells here): the pane's title said it whole
    and Textual cut it at the pane's corner, the file name lost. Its folders give way first. The pane is the
    screen's width below 100 columns, the screen's less the side pane's 64 to 149, a third from 150."""
    path = "/home/operator/.local/share/gptme/logs/2026-09-01-a-long-conversation-about-the-bandit/journal.md"
    pane = screen_width if screen_width < 100 else screen_width - 64 if screen_width < 150 else screen_width // 3
    title = pane_title(path, screen_width).plain
    assert title.startswith("journal /home/") and title.endswith("…/journal.md"), title
    assert len(title) <= pane - 6, (title, pane)  # inside "╭─ " and " ─╮"
    assert pane_title(None, screen_width).plain == "journal"


async def test_why_this_credit_is_whole_or_scrolls_in_its_box_at_80_columns_and_24_to_40_rows(tmp_path: Path) -> None:
    """Eight credit rows and "why this credit" (five lines for the first lesson: its keywords wrap) at 80 columns.
    At 32-34 rows the side pane's edge cut the box (its last lines, and its bottom border, below the edge, with
    nothing in the box to say so). Now at every height the box ends inside the pane, and either shows every line
    of the story or scrolls it with its scrollbar in view; every credit row is in view, and the journal keeps a
    line below 32 rows (the 80x24 layout) and three from 32."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        detail = await opened(pilot, (80, 24))
        for height in range(24, 41):
            await pilot.resize_terminal(80, height)
            await settle(pilot)
            side, box = detail.query_one("#detail-side"), detail.query_one("#credit-box")
            table = detail.query_one("#credits")
            story = box.query_one("#credit-story")
            assert table.max_scroll_y == 0 and table.region.bottom <= side.region.bottom, (height, table.region)
            assert side.scroll_y == 0 and box.region.bottom <= side.region.bottom, (height, box.region, side.region)
            whole = box.scrollable_content_region.height >= story.region.height
            assert whole or box.show_vertical_scrollbar, (height, box.region, story.region)
            journal = detail.query_one("#journal").scrollable_content_region.height
            assert journal >= (3 if height >= 32 else 1), (height, journal)


async def test_why_this_credit_stays_in_the_pane_for_every_lesson_at_80x33(tmp_path: Path) -> None:
    """The journal gives "why this credit" the rows it needs as the cursor moves from a four-line story to a
    five-line one and back at 80x33: the box's bottom border never goes below the pane's edge."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 33)) as pilot:
        detail = await opened(pilot, (80, 33))
        for _ in range(8):
            side, box = detail.query_one("#detail-side"), detail.query_one("#credit-box")
            assert box.region.bottom <= side.region.bottom, (detail.focused_lesson, box.region, side.region)
            await pilot.press("down")
            await settle(pilot)


async def test_the_journal_shows_three_lines_at_80x24_beside_up_to_six_credit_rows(tmp_path: Path) -> None:
    """At 80x24 the journal showed one line for sessions of four to six lessons (often the journal's heading),
    two for fewer. It now shows three, from the record (down to its first line, the judge's score and reason;
    the rest scrolls in it) and the boxes' bottom borders (the credit table's header closes the journal, the
    grade bar's rule the credit box): every credit row stays in view and "why this credit" keeps its four
    lines. The demo's 2026-09-02-002 has 4 lessons, 2026-09-01-001 5, 2026-09-03-004 6. The record's first line
    is read whole (tests/tui/test_tui_record_first_line.py): 2026-09-03-004's judge line is 82 cells, two rows of
    the 78, and the second comes from the journal, which shows two lines there."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        # (session, lessons, the journal's lines, the record's rows)
        for session, lessons, lines, record in (
            ("2026-09-02-002", 4, 3, 2),
            ("2026-09-01-001", 5, 3, 1),
            ("2026-09-03-004", 6, 2, 2),
        ):
            detail = await open_session(pilot, session)
            table = detail.query_one("#credits", ThemedTable)
            assert table.row_count == lessons and table.max_scroll_y == 0, (session, table.max_scroll_y)
            assert table.region.height == lessons + 1, (session, table.region)
            journal = detail.query_one("#journal")
            assert journal.scrollable_content_region.height == lines, (session, journal.region)
            assert detail.query_one("#record-panel").region.height == record, session
            box = detail.query_one("#credit-box")
            footer = detail.query_one("KeyFooter").region.y
            assert box.scrollable_content_region.height >= 4 and box.region.bottom <= footer, (session, box.region)
            assert detail.query_one("#grade-bar").region.bottom <= footer, session
            await pilot.press("escape")
            await settle(pilot)


async def test_at_200x50_the_credit_table_and_the_plots_title_use_the_width(tmp_path: Path) -> None:
    """The demo's 2026-10-26-167 at 200x50: beside a journal of 66 columns the credit table (160 cells wide
    whole: the keywords hit 51, missed 34) cut the keywords missed to `monkeyp…`, and the plot's title cut the
    lesson to 22 cells (`testi…/mock-boundaries`) over a plot 133 wide. The side pane now takes what the table
    needs, the journal keeping 50 columns: 150 for the table, its last column cut by 10 cells only."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-26-167")
        table = detail.query_one("#credits", ThemedTable)
        lines = screen_text(app)
        first = lines[table.region.y + 1][table.region.x : table.region.right]
        assert first.startswith(" testing/mock-boundaries") and first.rstrip().endswith("monkeypatch"), first
        plot = detail.query_one("#credit-plot")
        assert any("testing/mock-boundaries: before → after this session" in line for line in lines[plot.region.y :])
        assert detail.query_one("#journal").outer_size.width == 50 and table.max_scroll_x == 0


async def test_the_side_pane_follows_a_resize_from_200_columns(tmp_path: Path) -> None:
    """2026-10-26-167's credit table is 160 cells whole. At 200 columns the side pane takes 150 (the journal
    50); resized to 120 it is the stylesheet's 64 again, and at 160 it takes 110 (160 less the journal's 50),
    however the credit table's own width moved."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-26-167")
        for width, side in ((200, 150), (120, 64), (160, 110), (200, 150)):
            await pilot.resize_terminal(width, 50)
            await settle(pilot)
            region = detail.query_one("#detail-side").region
            assert (region.width, region.right) == (side, width), (width, region)


# widths either side of the layouts' edges (80: stacked, 100: the side pane 64 wide, 150: widened for its table)
# and heights from a 24-row terminal up (32: the compact forms end), on the demo's session of the tester's report
# (2026-10-26-167: four lessons, "why this credit" eight lines), eight lessons (2026-09-01-000) and eight lessons
# with stories of eight lines at 60 cells, the demo's longest (2026-10-25-164)
SIDE_WIDTHS = (80, 99, 100, 120, 150, 200)
SIDE_HEIGHTS = (24, 26, 28, 31, 32, 36, 50)


@pytest.mark.parametrize("session", ["2026-10-26-167", EIGHT, "2026-10-25-164"])
async def test_why_this_credit_ends_inside_its_pane_above_the_grade_bar_at_every_size(
    tmp_path: Path, session: str
) -> None:
    """At 100x24 and 120x24 the box of 2026-10-26-167 (eight lines of story and its borders: 10 rows) hung below
    its pane, which has 13 rows with 5 for the credit table (the header and four lessons): the box ended at row
    21, the pane and the grade bar's rule at 19, and its last line ("missed: monkeypatch") and its bottom border
    were hidden with no more-lines mark (the box itself was not scrolled). At 100x26 one row was hidden. And
    resized from 99 columns to 100, 2026-09-01-000's credit table kept the sideways scrollbar of its wider
    columns (nothing to scroll), a row that left the box three: one line of the story and no mark. Now at
    every size the box ends inside the pane and above the grade bar, and where its story is taller than the box
    its last line is the more-lines mark. The plot below it is whole or not drawn: from 100 columns it was cut at
    the pane's bottom (at 100x28 all but its title, at 100x34 its axis and legend); where its eight rows fit
    under the box, it is drawn."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, session)
        for width in SIDE_WIDTHS:
            for height in SIDE_HEIGHTS:
                await pilot.resize_terminal(width, height)
                await settle(pilot)
                side, box = detail.query_one("#detail-side"), detail.query_one("#credit-box")
                bar, more = detail.query_one("#grade-bar").region, box.query_one(".more")
                size = (width, height, box.region, side.region, bar.y)
                assert side.scroll_y == 0 and box.region.bottom <= min(side.region.bottom, bar.y), size
                assert box.region.height >= 3, size  # its borders and a line at least
                if box.max_scroll_y > box.scroll_y:
                    # its last row in the box's border (at 80x24 the grade bar's rule closes the box)
                    assert more.display and more.region.bottom == box.region.bottom - box.styles.gutter.bottom, size
                    assert "more line" in screen_text(app)[more.region.y], size
                plot = detail.query_one("#credit-plot")
                if plot.styles.visibility == "visible":
                    assert plot.region.bottom <= side.region.bottom or width < 100, (size, plot.region)
                else:
                    assert width >= 100 and side.region.bottom - box.region.bottom < 8, (size, plot.region)


async def test_fitting_a_side_pane_being_taken_down_does_nothing(tmp_path: Path) -> None:
    """`enter escape` typed fast: the pane's fit, queued for after a refresh, ran while its screen was taken
    down part by part, and `query_one("#credit-plot")` raised NoMatches, which ended the dashboard (the full
    suite caught it in a burst test). A pane whose parts are gone has nothing to fit."""
    from lesson_credit.tui.screens.detail_side import SidePane

    app = demo_app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-26-167")
        pane = detail.query_one(SidePane)
        await detail.query_one("#credit-plot").remove()
        pane.fit()  # raised NoMatches
        assert pane.is_mounted


async def test_fitting_a_side_pane_already_taken_off_its_screen_does_nothing(tmp_path: Path) -> None:
    """The same fit, run once the pane itself was taken off its screen (mounted, without a screen above it):
    `self.screen` raised NoScreen, which ended the dashboard (a burst test under load caught it in CI)."""
    from lesson_credit.tui.screens.detail_side import SidePane

    app = demo_app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-26-167")
        pane = detail.query_one(SidePane)
        await pane.remove()
        pane.fit()  # raised NoScreen
        assert app.is_running
