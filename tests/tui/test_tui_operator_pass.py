"""The operator's pass at 80x24 and 200x50 on the demo: one word for a thing on every screen and in the CLI
(Agreement's reference/compared, the queue's shift), one order for a session's grade history, and a pending
session's grader cell left empty rather than saying pending twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.core.views import GradeRecord
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.grading_queue import GradingQueueScreen
from lesson_credit.tui.screens.health import FindingCard
from lesson_credit.tui.screens.lesson_over_time import LessonOverTimeScreen
from lesson_credit.tui.screens.lesson_pick import LessonPickScreen
from lesson_credit.tui.widgets.grade_bar import grade_history
from lesson_credit.tui.widgets.themed_table import ThemedTable
from lesson_credit.tui.widths import share_cut
from tests.support.cli_run import run_cli
from tests.tui.test_tui_whole_headers import demo_app, row_text, table_header
from tests.tui.tui_fixture import burst, open_session, open_sessions, settle

SIZES = [(80, 24), (200, 50)]


def screen_rows(app: LessonCreditApp) -> list[str]:
    return [row_text(app, y) for y in range(app.size.height)]


@pytest.mark.parametrize("size", SIZES)
async def test_a_pending_session_says_pending_once(tmp_path: Path, size: tuple[int, int]) -> None:
    """The demo's newest session, 2026-10-26-167, is pending: its grade cell says so and its grader cell is
    empty (no one scored it). On the old code both cells read `pending`."""
    app = demo_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        sessions = await open_sessions(pilot)
        table = sessions.query_one("#sessions-table", ThemedTable)
        row = [str(cell).strip() for cell in table.get_row("2026-10-26-167")]  # (below 100 columns: spaced)
        labels = [str(column.label).strip(" ▲▼") for column in table.columns.values()]
        assert row[labels.index("grade")] == "pending", row
        assert row[labels.index("grader")] == "—", row
        line = next(line for line in screen_rows(app) if "2026-10-26-167" in line)
        assert line.count("pending") == 1, line


@pytest.mark.parametrize("size", SIZES)
async def test_agreement_names_its_sources_as_the_cli_does(tmp_path: Path, size: tuple[int, int]) -> None:
    """`lesson-credit agreement` heads its columns reference and compared; the dashboard said a and b."""
    app = demo_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        burst(pilot, "A")
        await settle(pilot)
        header = table_header(app, "agreement-table")
        # below 100 columns `ref` (every column then fits at 80; help's Agreement columns name it)
        assert header[:4] == ["category", "ref" if size[0] < 100 else "reference", "compared", "n"], header
        assert "kappa" in header, header


def test_the_grade_history_runs_newest_first_at_every_size() -> None:
    """Three grades of a session, 0.2 then 0.5 then 0.9: at 24 rows (compact) the line ran newest first and
    at 50 rows oldest first. Both now start with the grade in force, 0.9."""
    grades = tuple(
        GradeRecord(value, grader, f"2026-03-0{day}T10:00:00Z", None, day)
        for day, (value, grader) in enumerate([(0.2, "judge"), (0.5, "erik"), (0.9, "manual")], start=1)
    )
    for compact in (False, True):
        text = grade_history(grades, compact).plain
        assert text.startswith("history (H) 0.9 manual"), (compact, text)
        places = [text.index(value) for value in ("0.9", "0.5")]
        assert places == sorted(places), (compact, text)
    # four shown at 50 rows, two at 24: the earlier ones counted after the oldest shown, at both sizes
    assert grade_history(grades, compact=True).plain.endswith("(+1 earlier)")


async def test_the_queue_says_shift_as_the_cli_does_and_explains_it(tmp_path: Path) -> None:
    """The informative order's first session on the demo: the CLI's `sessions --order informative` prints its
    shift (0.067 for 2026-10-11-121 as the demo was committed); the queue's "why next" said `info 4.5e-3`,
    which no page explained. At 80x24 and at 200x50 it says `shift` with the CLI's number, and a line under
    the table says what expected±sd, spread and shift are."""
    app = demo_app(tmp_path)
    code, out, _ = run_cli("--workspace", str(tmp_path / "demo"), "sessions", "--order", "informative", "--limit", "1")
    first = out.splitlines()[2].split()
    session, shift = first[0], first[-1]
    assert session == "2026-10-11-121" and shift == "0.067" and code == 0, out
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "I", "o")
        await settle(pilot)
        assert isinstance(app.screen, GradingQueueScreen)
        rows = screen_rows(app)
        line = next(line for line in rows if session in line)
        assert line.split()[-2:] == ["shift", shift], line
        # its two lines above the footer break between phrases (36 + 3 + 38 = 77 cells of 78, then 55): one word
        # more in the old 78-cell second line was cropped with no mark
        assert [line.strip() for line in rows[-3:-1]] == [
            "expected±sd: a person's likely grade · spread: its highest score minus lowest",
            "shift: how far that grade would move its lessons' means",
        ], rows[-4:]
        await pilot.resize_terminal(200, 50)
        await settle(pilot)
        table = app.screen.query_one("#queue-table", ThemedTable)
        labels = [str(column.label) for column in table.columns.values()]
        assert labels[-1] == "shift", labels
        assert str(table.get_row(session)[-1]) == shift
        # 36 + 3 + 38 + 3 + 55 = 135 cells: one line at 200 columns
        legend = screen_rows(app)[-2].strip()
        assert legend.endswith("minus lowest · shift: how far that grade would move its lessons' means"), legend


def test_two_columns_share_the_cells_they_must_give() -> None:
    """60 and 20 cells, 30 too many: the wider gives 30 (to 30 beside 20) on its own, where 45 too many leave
    both at 17 and 18 (80 - 45 = 35 cells between them, the lower index taking the odd cut)."""
    widths = {6: 60, 7: 20}
    assert share_cut(widths, {6: 16, 7: 6}, 30) == 0 and widths == {6: 30, 7: 20}
    widths = {6: 60, 7: 20}
    assert share_cut(widths, {6: 16, 7: 6}, 45) == 0 and widths == {6: 17, 7: 18}
    # down to their least (16 + 6 = 22 of 80: 58 can go), the rest is still to cut elsewhere
    widths = {6: 60, 7: 20, 0: 35}
    assert share_cut(widths, {6: 16, 7: 6}, 70) == 12 and widths == {6: 16, 7: 6, 0: 35}


async def test_the_keywords_hit_and_missed_share_the_line_at_200x50(tmp_path: Path) -> None:
    """The demo's 2026-10-07-106: its hits are 59 cells wide (escalate-when-blocked's), its misses 61
    (issue-triage-before-coding's). At 200x50 the credits table is 150 cells; its other columns and padding
    take 85 (their cells, 69, and 2 of padding each), leaving 65 for the two: the old code kept 59 for the
    hits and cut the misses to 6, "confl…" for resolve-merge-conflicts' one miss. Shared, each gets about
    half, and that miss shows whole."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-07-106")
        table = detail.query_one("#credits", ThemedTable)
        widths = {str(column.label): column.width for column in table.columns.values()}
        assert abs(widths["hit"] - widths["missed"]) <= 1 and widths["missed"] >= 30, widths
        first = row_text(app, table.region.y + 1)[table.region.x : table.region.right]
        assert first.startswith(" workflow/resolve-merge-conflicts") and "conflict markers" in first, first
        assert table.max_scroll_x == 0


async def test_why_this_credit_says_more_lines_follow_at_80x24(tmp_path: Path) -> None:
    """The demo's 2026-10-26-167, mock-boundaries first: its story is five lines at 80 columns (salience and
    weight, pending, α β mean, the hits, then "missed: monkeypatch" wrapped to a line of its own), the box four.
    On the old code the box showed four and stopped after the hits' "·", nothing saying a line followed. Now
    its last line says how many lines are below and how to reach them; scrolled to the end, the keywords
    missed show and the mark is gone."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-26-167")
        box = detail.query_one("#credit-box")

        def inside() -> list[str]:
            return [row_text(app, y)[box.region.x : box.region.right] for y in range(box.region.y, box.region.bottom)]

        rows = inside()
        assert rows[0].startswith("╭─ why this credit: testing/mock-boundaries.md") and rows[-1].startswith("╰")
        # 5 lines in 4 rows less the mark's: 3 shown, 2 below it
        assert rows[-2].startswith("│ ▼ 2 more lines: tab to this box and ↓"), rows
        burst(pilot, "tab", "down", "down")
        await settle(pilot)
        rows = inside()
        assert rows[-2].startswith("│ missed: monkeypatch") and not any("▼" in row for row in rows), rows


async def test_the_more_lines_mark_follows_the_focus_at_once(tmp_path: Path) -> None:
    """The mark says how to reach the lines below for the focus the box has now: tab into it and it says "↓
    shows them" (it said "tab to this box" until the next scroll: the focus was read before it moved); tab
    away and it says "tab to this box" again."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-26-167")
        box = detail.query_one("#credit-box")

        def mark() -> str:
            return row_text(app, box.region.bottom - 2)[box.region.x : box.region.right]

        assert mark().startswith("│ ▼ 2 more lines: tab to this box and ↓"), mark()
        burst(pilot, "tab")
        await settle(pilot)
        assert box.has_focus and mark().startswith("│ ▼ 2 more lines: ↓ shows them"), mark()
        burst(pilot, "tab")
        await settle(pilot)
        assert not box.has_focus and mark().startswith("│ ▼ 2 more lines: tab to this box and ↓"), mark()


async def test_lesson_names_cut_at_80x24_end_at_word_breaks_and_stay_apart(tmp_path: Path) -> None:
    """The demo's workflow/check-ci-before-done in the Lessons table's 18 cells at 80x24 (a leading space and 17
    for the name): cut in the middle it read "check-ci-…ore-done", "ore" the end of a word. It ends at the
    break now, "check-ci-…-done", and every drawn name is still another."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#lessons-table", ThemedTable)
        drawn = [row_text(app, y)[1:19].strip() for y in range(table.region.y + 1, table.region.bottom)]
        assert "check-ci-…-done" in drawn and "check-ci-…ore-done" not in drawn, drawn
        assert len(set(drawn)) == len(drawn), drawn


@pytest.mark.parametrize("size", SIZES)
async def test_health_s_enter_on_a_finding_of_several_lessons_lets_the_user_pick(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The demo's broad-keywords finding names two lessons (run-tests-before-claiming's 'test', 70% of the
    journals, and reading-large-files' 'file', 75%). On the old code enter opened the first one's screen and
    nothing led to the second. Now enter lists both; down, enter opens the second over time (typed in one
    burst), and escape on the list goes back to Health."""
    app = demo_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        burst(pilot, "h")
        await settle(pilot)
        assert isinstance(app.focused, FindingCard) and app.focused.finding.code == "broad-keywords"
        burst(pilot, "enter")
        await settle(pilot)
        assert isinstance(app.screen, LessonPickScreen)
        assert app.screen.lessons == ["testing/run-tests-before-claiming.md", "tools/reading-large-files.md"]
        assert any("tools/reading-large-files.md" in line for line in screen_rows(app))
        burst(pilot, "escape", "enter", "down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, LessonOverTimeScreen)
        assert app.screen.lesson_id == "tools/reading-large-files.md"
