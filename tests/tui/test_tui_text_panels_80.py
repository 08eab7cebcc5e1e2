"""At 80 columns the text panels break between their phrases: an interval is never cut across two lines
nor a label parted from its number, as the panel is laid out again at its width after a resize. The
numbers are the demo's workflow/resolve-merge-conflicts (Analysis' first row), as `lesson-credit loo
--json` gives them: later half 0.10693 [-0.1035, 0.3174] in 10 sessions with it, naive Δ 0.1432 [0.0488,
0.2377], by category ci-repair 0.1016 [-0.0855, 0.2887] in 6, feature 0.0411 [-0.2023, 0.2844] in 6 (its first
10 of 31 sessions set apart, core/analysis/early.py: the halves and categories read the other 21, and count the 10
as sessions neither with it nor without it: feature's 15 without, [-0.2038, 0.2859] when they counted)."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.tui.screens.analysis import AnalysisScreen
from lesson_credit.tui.screens.lesson_rewards import LessonRewardsScreen
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.tui.test_tui_80x24_in_view import BIG, SIZE, run_simulation, shown
from tests.tui.test_tui_whole_headers import demo_app
from tests.tui.tui_fixture import burst, open_session, settle

WHOLE = (  # each whole on one line at 80 columns
    "later +0.107 [-0.10, +0.32] (n 10)",
    "ci-repair +0.102 [-0.09, +0.29] (n 6)",
    "feature +0.041 [-0.20, +0.28] (n 6)",
    "Δ +0.143  95% CI [+0.05, +0.24]",
)


def assert_whole(lines: list[str], phrases: tuple[str, ...]) -> None:
    for phrase in phrases:
        assert any(phrase in line for line in lines), (phrase, lines)
    for line in lines:  # no interval nor count cut at a line's end
        assert line.count("[") == line.count("]") and line.count("(") == line.count(")"), lines


async def test_the_rewards_panel_breaks_between_phrases_at_80x24_after_a_resize(tmp_path: Path) -> None:
    """On the old code the panel read "later +0.149 [-0.01," then "+0.31] (n 15)", and "Δ +0.143  95% CI"
    then "[+0.05, +0.24]". At 160 columns each part is one line, as before."""
    app = demo_app(tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        burst(pilot, "a", "enter")
        await settle(pilot)
        assert isinstance(app.screen, LessonRewardsScreen)
        wide = shown(app, "rewards-info")
        assert "over time: earlier +0.188 [+0.05, +0.33] (n 10) · later +0.107 [-0.10, +0.32] (n 10)" in wide
        assert any(line.startswith("mean reward with 0.724 (n 31) · without 0.580 (n 122) · Δ +0.143") for line in wide)
        await pilot.resize_terminal(*SIZE)
        await settle(pilot)
        assert_whole(shown(app, "rewards-info"), WHOLE)


async def test_the_analysis_panel_breaks_between_phrases_at_80x24(tmp_path: Path) -> None:
    """The panel opened with x: on the old code "later +0.149 [-0.01, +0.31]" then "(n 15)"."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "a", "x")
        await settle(pilot)
        assert isinstance(app.screen, AnalysisScreen)
        lines = shown(app, "loo-detail")
        assert lines[1] == "workflow/resolve-merge-conflicts.md   enter: its reward distributions", lines
        assert_whole(lines, WHOLE)


async def test_the_analysis_panel_opened_with_x_shows_every_line_at_80x24(tmp_path: Path) -> None:
    """x shows the panel whole: on the old code it was capped at 12 rows (11 lines under its rule), so
    resolve-merge-conflicts' last two lines (the propensity-weighted lift's reason, the sessions without a
    logged propensity) and reading-large-files' last three (with the warning that its keyword 'file'
    matches 75% of journals) were cut. The table keeps its header and the highlighted row in view."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "a", "x")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnalysisScreen)
        footer = screen.query_one("KeyFooter").region.y
        for lesson, last in (
            ("workflow/resolve-merge-conflicts.md", "2 sessions with it have no logged propensity"),
            ("tools/reading-large-files.md", "⚠ keyword 'file' matches 75% of journals: too broad"),
        ):
            table = screen.query_one("#loo-table", ThemedTable)
            table.move_cursor(row=screen.shown.index(lesson), animate=False)
            await settle(pilot)
            lines = shown(app, "loo-detail")
            assert lines[1].startswith(lesson) and lines[-1] == last, lines
            assert screen.query_one("#loo-detail").region.bottom <= footer
            cursor_y = table.region.y + 1 + table.cursor_row - int(table.scroll_y)
            assert table.region.y < cursor_y < table.region.bottom, (cursor_y, table.region)


async def test_simulation_names_the_dropout_estimators_kind_once(tmp_path: Path) -> None:
    """On the old code: "dropout (randomized): randomized: kept minus withheld ..."."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await run_simulation(pilot)
        table = screen.query_one("#sim-table", ThemedTable)
        names = [str(key.value) for key in table.rows]
        table.move_cursor(row=names.index("dropout"), animate=False)
        await settle(pilot)
        detail = " ".join(shown(app, "estimator-info"))
        assert detail.startswith("dropout (randomized): kept minus withheld mean reward"), detail


async def test_simulation_says_what_a_reference_estimator_is_once(tmp_path: Path) -> None:
    """On the old code: "random (reference): reference selection: k candidates uniformly at random", and
    "joint (joint): joint estimate: ...". The kind is named once, with the description's own words."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await run_simulation(pilot)
        table = screen.query_one("#sim-table", ThemedTable)
        names = [str(key.value) for key in table.rows]
        expected = {
            "random": "random (reference selection): k candidates uniformly at random",
            "oracle": "oracle (reference selection): k candidates of highest true value",
            "joint": "joint (joint estimate): category baselines + every lesson's salience weight",
            "seed": "seed (posterior mean): seed credit (alpha += base*w, beta += 1 - base*w)",
        }
        for name, start in expected.items():
            table.move_cursor(row=names.index(name), animate=False)
            await settle(pilot)
            detail = " ".join(shown(app, "estimator-info"))
            assert detail.startswith(start), detail


def test_phrases_break_at_the_width_with_their_own_separators_and_a_hanging_indent() -> None:
    """Widths counted by hand: "a [1, 2]" 8 cells, "  " 2, "p 3" 3 (13 in all), " · " 3, "bb (n 4)" 8."""
    from rich.text import Text

    from lesson_credit.tui.text import Phrase, phrase_lines

    paragraph: list[Phrase] = [Text("a [1, 2]"), ("  ", Text("p 3")), Text("bb (n 4)")]
    assert phrase_lines([paragraph], 0).plain == "a [1, 2]  p 3 · bb (n 4)"
    assert phrase_lines([paragraph], 13, hang=2).plain == "a [1, 2]  p 3\n  bb (n 4)"
    # at 12: 8 + 2 + 3 = 13 and 1 + 3 + 3 + 8 = 15 pass it; a new paragraph starts at the margin
    assert phrase_lines([paragraph, [Text("c")]], 12, hang=1).plain == "a [1, 2]\n p 3\n bb (n 4)\nc"


async def test_session_detail_shows_every_credit_row_of_a_six_lesson_session_at_80x24(tmp_path: Path) -> None:
    """The demo's 2026-09-02-002 has 4 lessons, 2026-09-03-004 has 6: on the old code the credits table
    showed 3 rows and scrolled. A shorter journal excerpt and record give it the rows (header + 6 = 7)."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for session, lessons in (("2026-09-02-002", 4), ("2026-09-03-004", 6)):
            detail = await open_session(pilot, session)
            table = detail.query_one("#credits", ThemedTable)
            assert table.row_count == lessons and table.max_scroll_y == 0, (session, table.max_scroll_y)
            assert table.region.height == lessons + 1, table.region
            footer = detail.query_one("KeyFooter").region.y
            assert detail.query_one("#grade-bar").region.bottom <= footer
            journal = detail.query_one("#journal").region
            assert journal.height >= 3, journal  # a line of it between its borders
            await pilot.press("escape")
            await settle(pilot)


async def test_session_detail_shows_every_credit_row_of_seven_and_eight_lesson_sessions_at_80x24(
    tmp_path: Path,
) -> None:
    """The demo's 2026-09-07-016 has 7 lessons, 2026-09-08-021 7 (pending), 2026-09-01-000 8: on the old code
    the table showed six rows and scrolled. The credit box leaves out its bottom border (the grade bar's rule
    closes it), and for eight the journal's too: every row is in view, the journal keeps a line, the record
    its first and "why this credit" its four lines."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for session, lessons in (("2026-09-07-016", 7), ("2026-09-08-021", 7), ("2026-09-01-000", 8)):
            detail = await open_session(pilot, session)
            table = detail.query_one("#credits", ThemedTable)
            assert table.row_count == lessons and table.max_scroll_y == 0, (session, table.max_scroll_y)
            assert table.region.height == lessons + 1, table.region
            footer = detail.query_one("KeyFooter").region.y
            assert detail.query_one("#grade-bar").region.bottom <= footer
            assert detail.query_one("#journal").scrollable_content_region.height >= 1
            assert detail.query_one("#record-panel").region.height >= 1
            box = detail.query_one("#credit-box")  # four lines: a fifth (long keywords) scrolls, as before
            assert box.scrollable_content_region.height == 4 and box.region.bottom <= footer, box.region
            await pilot.press("escape")
            await settle(pilot)
