"""At 80x24 (and 200x50) every answer the dashboard gives is whole or says it is cut: a table's header names
its column (no column shown in part at the table's right edge, "ra" for ranking), a cut name or keyword list
ends in an ellipsis, Help's wrapped descriptions hang under their description, a session's "why this credit"
box is closed and its record scrolls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.widgets.themed_table import ThemedTable
from lesson_credit.tui.widths import name_column_width
from tests.support.engine_helpers import make_workspace, session
from tests.support.records_helpers import agreement_workspace
from tests.support.textual_private import screen_lines
from tests.tui.test_tui_trust import demo_copy
from tests.tui.tui_fixture import burst, fixed_clock, open_session, settle

SIZE = (80, 24)
# the Lessons table's headers, as the help lists its columns (the sort mark beside the sort column's)
LESSON_HEADERS = {"lesson", "n", "mean", "95%", "CI", "ranking", "last", "category", "status", "▼", "▲"}


def demo_app(tmp_path: Path) -> LessonCreditApp:
    """The dashboard on a copy of the demo workspace, at the fixed clock and seed."""
    return LessonCreditApp(Workspace(demo_copy(tmp_path / "demo"), clock=fixed_clock), seed=0, poll_seconds=0)


def row_text(app: Any, row: int) -> str:
    return "".join(segment.text for segment in screen_lines(app)[row])


def lessons_header(app: Any) -> list[str]:
    """The words of the Lessons table's header row, as drawn (the table's region only)."""
    table = app.screen.query_one("#lessons-table", ThemedTable)
    return row_text(app, table.region.y)[table.region.x : table.region.right].split()


async def test_every_lessons_header_is_whole_at_80_columns_in_every_sort_order(tmp_path: Path) -> None:
    """The demo's names are 26 cells: on the old code the columns after `95% CI` were cut at the table's
    edge, their headers with them ("ra", "95%" over "0.2", "me" over "0."). The ranking (what the demo's
    joint policy ranks by) shows whole, sorted by mean, beside the lesson, n, mean and interval."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, LessonsScreen)
        header = lessons_header(app)
        assert header[:7] == ["lesson", "mean", "▼", "n", "95%", "CI", "ranking"], header
        for _ in range(8):  # every column as the sort column, pressed as fast as a user does
            burst(pilot, "o")
            await settle(pilot)
            header = lessons_header(app)
            assert set(header) <= LESSON_HEADERS, header


async def test_a_lesson_name_cut_for_the_columns_shows_an_ellipsis(tmp_path: Path) -> None:
    """The demo's escalate-when-blocked (21 cells) in a name column of 19 cells (80 columns: the table is
    49 cells, less 2 for its scrollbar, less 28 for mean 7, n 3, 95% CI 10 and ranking 8): a leading space,
    then 18 cells: its middle left out, 9 cells of its start, the ellipsis, its last 8 (its end tells it from
    a lesson named alike). Cut without the ellipsis, it read as if "escalate-when-blo" were its name."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#lessons-table", ThemedTable)
        rows = [
            row_text(app, y)[table.region.x : table.region.right] for y in range(table.region.y, table.region.bottom)
        ]
        assert any(row.startswith(" escalate-…-blocked ") for row in rows), rows
        assert not any(" escalate-when-blo " in row for row in rows)


async def test_help_descriptions_that_wrap_hang_under_their_description(app: LessonCreditApp) -> None:
    """At 80 columns the help's text is 72 cells (80, less the border 2, padding 4 and scrollbar 2). The
    Lessons columns' keys are right-aligned to `category` (8 cells) after 2 spaces and before 2: their
    descriptions start at cell 12. On the old code a wrapped description went on at cell 0."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        text = app.screen.query_one("#help-text")
        lines = [text.render_line(y).text.rstrip() for y in range(text.size.height)]
        start = lines.index("Lessons columns")
        section = lines[start + 1 : lines.index("Sessions columns")]
        mean = section.index("      mean  posterior mean alpha/(alpha+beta): the expected reward rate;")
        # 60 cells a line: the first is 60 to "rate;", the next 56 (with " come", 61)
        assert section[mean + 1] == " " * 12 + "sorted by it, lessons never used (n 0, the prior's mean)"
        assert section[mean + 2] == " " * 12 + "come last"
        for line in section:
            if line:  # each a key at cells 2-9, or a description going on at cell 12
                assert line[10:12] == "  " and (line[:2] == "  " and line[9] != " " or line[:12].isspace()), line


async def test_why_this_credit_is_a_closed_box_at_80x24(tmp_path: Path) -> None:
    """The demo's 2026-10-23-158: small-focused-commits' keywords (hit commit message and diff too large,
    missed git add -a and unrelated changes) take two lines of the compact story, five in all. On the old
    code the box was 7 rows under the credits table's 4, in a side pane of 10: its bottom border showed
    only when the pane was scrolled. The box now shows four lines, closed (the last saying that two more are
    below), and scrolls to the fifth."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-23-158")
        side = detail.query_one("#detail-side")
        box = next(w for w in side.children if "why this credit" in str(w.border_title))
        shown = detail.find_widget(box).region
        assert shown.y >= side.region.y and shown.bottom <= side.region.bottom and side.scroll_y == 0
        rows = [row_text(app, y)[shown.x : shown.right] for y in range(shown.y, shown.bottom)]
        assert rows[0].startswith("╭─ why this credit: workflow/small-focused-commits.md")
        assert rows[-1].startswith("╰") and rows[-1].endswith("╯"), rows
        # three lines of the story and a mark saying two more are below (the hits' line and the misses' end)
        assert len(rows) == 6 and rows[4].startswith("│ ▼ 2 more lines: tab to this box and ↓"), rows
        box.scroll_end(animate=False, immediate=True)  # and the fifth line is in it
        await settle(pilot)
        assert any("unrelated" in row_text(app, y) for y in range(shown.y, shown.bottom))


def test_the_name_column_takes_what_whole_columns_leave() -> None:
    # names 26 beside 7+3+10 (46 of 47): ranking's 8 more fit only with the names cut to 47-28 = 19
    assert name_column_width(26, [7, 3, 10, 8, 5], visible=47, keep=4) == 19
    # the same with only three kept: the names whole, and 47-20 = 27, the 1 cell left to the names
    assert name_column_width(26, [7, 3, 10, 8, 5], visible=47, keep=3) == 27
    # an empty table (names 7, its header): 12 at least, so 7+2+7+8+5 = 29 whole beside it and
    # category's 9 (12+29+9 = 50 > 49) starts at the edge: 49-29 = 20
    assert name_column_width(7, [7, 2, 7, 8, 5, 9, 7], visible=49, keep=4) == 20
    assert name_column_width(7, [7, 2], visible=49, keep=2) is None  # every column fits


def table_header(app: Any, table_id: str) -> list[str]:
    """The words of a table's header row, as drawn (the table's region only)."""
    table = app.screen.query_one(f"#{table_id}", ThemedTable)
    return row_text(app, table.region.y)[table.region.x : table.region.right].split()


ANALYSIS_HEADERS = {"lesson", "effect", "95%", "CI", "p", "BH", "with", "w/o", "naive", "Δ", "cat", "IPW", "flags"}


async def test_every_analysis_header_is_whole_at_80_columns_in_every_sort_order(tmp_path: Path) -> None:
    """The demo's ids are up to 35 cells (communication/escalate-when-blocked): on the old code `naive Δ`
    showed in part at the table's edge, its header cut to "n". Sorted by a column further right, the ids
    are cut (with an ellipsis) for the columns to w/o and the sort column."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "a")
        await settle(pilot)
        assert table_header(app, "loo-table") == ["lesson", "effect", "▼", "95%", "CI", "p", "BH", "with", "w/o"]
        for presses in range(1, 11):  # every column as the sort column
            burst(pilot, "o")
            await settle(pilot)
            header = table_header(app, "loo-table")
            assert set(header) <= ANALYSIS_HEADERS | {"▼", "▲"}, header
            if presses == 6:  # by cat: the ids cut to show it
                assert header[-2:] == ["cat", "▼"], header
                table = app.screen.query_one("#loo-table", ThemedTable)
                first = row_text(app, table.region.y + 1)[table.region.x : table.region.right].split()[0]
                assert first.endswith("…") and "workflow/resolve-merge-conflicts".startswith(first[:-1]), first


async def test_agreement_and_simulation_headers_are_whole_at_80_columns(tmp_path: Path) -> None:
    """On the old code Agreement's last column showed in part: "tp/fp" over "19" (19/13/0/0 cut), and the
    kappa whole only by luck of the widths; Simulation's empty table showed "cumulative" of
    `cumulative regret`."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "A")
        await settle(pilot)
        header = table_header(app, "agreement-table")
        assert header == [
            "category", "ref", "compared", "n", "MAE", "Pearson", "Spearman", "kappa", "tp/fp/fn/tn"
        ], header  # fmt: skip
        burst(pilot, "I", "m")
        await settle(pilot)
        header = table_header(app, "sim-table")
        assert header == ["estimator", "spearman", "ρ", "prec@10", "harmful", "regret"], header


@pytest.mark.parametrize(("width", "end"), [(150, " git a…"), (200, " git add -a, unrelated changes")])
async def test_a_session_keywords_cut_to_the_credits_table_end_in_an_ellipsis(
    tmp_path: Path, width: int, end: str
) -> None:
    """The demo's 2026-10-23-158: on the old code the keywords missed were as wide as their widest cell and the
    table's edge cut them mid-word ("git add -a, unrelated ch" at 200x50). At 150x50 the credits table is 100
    cells (2fr beside the journal's 1fr): the keywords missed are cut to 5 cells and an ellipsis. At 200x50 the
    side pane widens to what the table needs (the journal keeping 50 columns or more), and they are whole."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(width, 50)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-23-158")
        table = detail.query_one("#credits", ThemedTable)
        first = row_text(app, table.region.y + 1)[table.region.x : table.region.right]
        assert first.rstrip().endswith(end), first
        assert table.max_scroll_x == 0


async def test_a_draft_grade_s_line_at_80x24_says_every_source_whole(tmp_path: Path) -> None:
    """The demo's 2026-10-23-158 drafted 0.5: "grade 0.6 (record:judge)  draft  0.5  not saved: c commits,
    esc discards  · heuristic 0.47 · outcome 1.0" is 104 cells, the line 78 (80 less the bar's padding).
    On older code it wrapped at a space and showed its first line: it ended in "·", as if nothing came
    after; then it ended in an ellipsis ("· h…"). The draft's hint now gives way: " unsaved " (9 cells) leaves
    the line 76 cells, every source's score whole (" c commits, esc discards " would make it 92)."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-23-158")
        burst(pilot, "5")
        await settle(pilot)
        status = detail.query_one("#grade-status")
        line = row_text(app, status.region.y)[status.region.x : status.region.right]
        assert line.rstrip() == "grade 0.6 (record:judge)  draft  0.5  unsaved  · heuristic 0.47 · outcome 1.0", line


async def test_what_if_headers_are_whole_at_80_columns(tmp_path: Path) -> None:
    """On the old code `mean now` showed in part at the table's edge ("me"). The headers are two lines below 100
    columns, the columns one space apart: 2 cells for the scrollbar, rank (what-if) 8, rank now 5, move 5, mean
    what-if 8, mean now 6, Δ mean 7, n 3 and status 11 (`deprecated` and its space): 25 for the file names,
    escalate-when-blocked (21) whole."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "w")
        await settle(pilot)
        table = app.screen.query_one("#what-if-table", ThemedTable)
        top, bottom = (row_text(app, table.region.y + i)[table.region.x : table.region.right].split() for i in (0, 1))
        assert top == ["rank", "rank", "mean", "mean", "Δ"], top
        assert bottom == ["what-if", "now", "move", "what-if", "now", "mean", "n", "status", "lesson"], bottom
        rows = [
            row_text(app, y)[table.region.x : table.region.right] for y in range(table.region.y, table.region.bottom)
        ]
        assert any(" escalate-when-blocked " in row for row in rows), rows


async def test_the_record_scrolls_to_its_last_line_at_80x24(tmp_path: Path) -> None:
    """The demo's 2026-10-23-158 at 80x24: the record's panel has two lines (the judge's line and the
    record's first: the journal took the third for its own third line); its deliverables, grades and
    trajectory grade are below them. On the old code the panel could not scroll: they could not be reached
    at this size."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-23-158")
        panel = detail.query_one("#record-panel")
        assert panel.region.height == 2
        panel.scroll_end(animate=False, immediate=True)
        await settle(pilot)
        shown = [row_text(app, y) for y in range(panel.region.y, panel.region.bottom)]
        assert any(row.startswith(" trajectory grade: 0.62") for row in shown), shown


@pytest.mark.parametrize("people", [False, True])
async def test_the_agreement_summary_is_whole_at_80x24(tmp_path: Path, people: bool) -> None:
    """Its first line wraps to two at 80 columns; the summary was two rows high, so the line after it (that
    no session has a person's grade to compare) was never seen. The note on the * of two people shares the
    first line's paragraph: whole either way."""
    if people:  # bob's and manual's grades: two people, with a * in the table
        root = agreement_workspace(tmp_path)
        said = "* two people (a person's grades against another's)"
    else:  # a heuristic's rewards alone: nothing to compare
        events = [session(f"s{i}", 0.6, {"a.md": 1.0}) for i in range(3)]
        root = make_workspace(tmp_path, {"a.md": (["a"], "active")}, events)
        said = "No session has both a person's grade and another source's score yet: grade sessions by hand"
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "A")
        await settle(pilot)
        summary = app.screen.query_one("#agreement-summary")
        shown = " ".join(
            row_text(app, y)[summary.region.x : summary.region.right].strip()
            for y in range(summary.region.y, summary.region.bottom)
        )
        assert said in " ".join(shown.split()), shown
