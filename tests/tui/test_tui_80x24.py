"""At 80x24 (the size every screen must work at) the list screens answer with their rows: Sessions and
Analysis show at least 12 rows, their headers whole and one word a column. The plot and the
panel they folded away come back with x."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from textual.pilot import Pilot

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.lesson_rewards import LessonRewardsScreen
from lesson_credit.tui.widgets.reward_histogram import RewardHistogramPlot
from lesson_credit.tui.widgets.reward_plot import RewardPlot
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.oracles import eb_penalty, ridge_reference, time_columns
from tests.support.textual_private import screen_lines
from tests.tui.tui_fixture import (
    NEW_SESSION,
    burst,
    fixed_clock,
    lesson,
    log_lines,
    open_session,
    record,
    settle,
    table_keys,
    weight,
)

SIZE = (80, 24)


def words(app: Any, row: int) -> str:
    """The screen's row `row` as text, runs of spaces made one."""
    return " ".join("".join(segment.text for segment in screen_lines(app)[row]).split())


async def test_sessions_show_at_least_12_rows_and_every_header(workspace: Workspace) -> None:
    """On the old code the reward plot took 12 of the 24 rows (6 left for the table) and the headers ran
    off the right edge ("mean salienc"). The fixture's 4 sessions fill 4 rows of a table 19 rows high."""
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        table = app.screen.query_one("#sessions-table", ThemedTable)
        plot = app.screen.query_one(RewardPlot)
        assert table.scrollable_content_region.height >= 12 and not plot.display
        header = next(row for row in range(24) if words(app, row).startswith("session "))
        assert words(app, header) == "session time ▼ category grade grader lessons sal"
        assert words(app, header + 1) == "s4 03-04 13:00 code pending — 2 0.75"  # the fixture's newest
        assert table.max_scroll_x == 0
        await pilot.press("x")
        await settle(pilot)
        assert plot.display and plot.size.height > 0


async def open_sessions_rows(pilot: Pilot[Any]) -> list[str]:
    """Sessions at 80x24: the words of its rows from the header on (the header and five sessions)."""
    await settle(pilot)
    await pilot.press("s")
    await settle(pilot)
    header = next(row for row in range(24) if words(pilot.app, row).startswith("session "))
    return [words(pilot.app, row) for row in range(header, header + 6)]


LONG_CATEGORY = "infrastructure-upkeep-and-ops"  # 29 characters: the columns then need 88 cells of 80


def with_long_category(workspace: Workspace, ws_root: Path) -> None:
    session_id, journal, lessons, reward, _, stamp = NEW_SESSION
    record(workspace, ws_root, (session_id, journal, lessons, reward, LONG_CATEGORY, stamp))


async def test_sessions_cut_a_long_category_so_every_header_is_whole(workspace: Workspace, ws_root: Path) -> None:
    """A category as long as the demo's "autonomous-run" beside its "record:judge" grader pushed the last
    columns past 80: "lessons" was cut to "lesson" at the edge and "sal" was out of sight. The category is
    now cut with an ellipsis instead."""
    with_long_category(workspace, ws_root)
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        lines = await open_sessions_rows(pilot)
        assert lines[0] == "session time ▼ category grade grader lessons sal"
        s5 = lines[1].split()
        assert s5[3].endswith("…") and LONG_CATEGORY.startswith(s5[3][:-1])
        # the mean salience: git worktree 1 of 2 keywords, shell quoting 1 of 3: (0.5 + 0.333) / 2 = 0.42
        assert s5[:3] + s5[4:] == ["s5", "03-05", "14:00", "0.900", "heuristic", "2", "0.42"]


async def test_sessions_sorted_by_the_last_column_name_it_at_80_columns(workspace: Workspace, ws_root: Path) -> None:
    """Sorted by mean salience (o five times from time: category, grade, grader, lessons, salience), the
    marker was on "sal", the column past the edge: no header said what the rows were ordered by. The
    sort column now comes second, as on Lessons."""
    with_long_category(workspace, ws_root)
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await open_sessions_rows(pilot)
        await pilot.press(*"ooooo")
        await settle(pilot)
        header = next(row for row in range(24) if words(app, row).startswith("session "))
        assert words(app, header) == "session sal ▼ time category grade grader lessons"
        rows = [words(app, row).split() for row in range(header + 1, header + 6)]  # the five sessions
        assert sorted(row[0] for row in rows) == ["s1", "s2", "s3", "s4", "s5"]
        saliences = [float(row[1]) for row in rows]
        assert saliences == sorted(saliences, reverse=True)  # the order the header names


async def test_analysis_shows_at_least_12_rows_and_a_whole_header(analysis_workspace: Workspace) -> None:
    """On the old code the panel under the table took 8 rows (10 left for the table)."""
    app = LessonCreditApp(analysis_workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        table = app.screen.query_one("#loo-table", ThemedTable)
        assert table.scrollable_content_region.height >= 12
        header = next(row for row in range(24) if words(app, row).startswith("lesson "))
        assert words(app, header).startswith("lesson effect ▼ 95% CI p BH with w/o naive Δ cat")
        lines = [words(app, row) for row in range(24)]
        assert "tools/retry-budget.md enter: its reward distributions" in lines  # the panel's first line
        assert not any(line.startswith("ranking") for line in lines)  # folded away
        await pilot.press("x")
        await settle(pilot)
        assert any(words(app, row).startswith("ranking (shrunk joint estimate)") for row in range(24))


async def test_a_column_the_lessons_table_cuts_stays_apart_from_the_plot(workspace: Workspace) -> None:
    """At 80x24 a filter shortens the lesson names, and the next column shows in part at the table's
    edge: its "+0." ran into the plot's axis labels ("+0.4.27┤", read as one number). A column of
    space now stands between the table and the side pane."""
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"t", "enter")
        await settle(pilot)
        table = app.screen.query_one("#lessons-table", ThemedTable)
        side = app.screen.query_one("#lessons-side")
        assert side.region.x >= table.region.right + 1
        for row in range(table.region.y, table.region.bottom):
            assert "".join(segment.text for segment in screen_lines(app)[row])[table.region.right] == " "


async def test_rewards_scroll_down_to_the_without_histogram(analysis_workspace: Workspace) -> None:
    """On the old code the lesson's panel and the "with" histogram filled the 22 rows between the title and
    the footer and the "without it" histogram was cut off below them, with no key to reach it. Typed in
    one burst: `a`, `enter` (the first lesson, retry-budget: 8 sessions with it, 32 without), `end`."""
    app = LessonCreditApp(analysis_workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "a", "enter", "end")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonRewardsScreen)
        plot = screen.query_one("#without-plot", RewardHistogramPlot)
        shown = screen.find_widget(plot)
        # all of it in view, between the title bar (row 0) and the footer (row 23), and tall enough to read
        assert shown.visible_region == shown.region and 1 <= shown.region.y and shown.region.bottom <= 23
        assert shown.region.height >= 8
        lines = [words(app, row) for row in range(shown.region.y, shown.region.bottom)]
        assert lines[0].startswith("without it: n=32, mean")
        assert lines[-1] == "session reward"
        await pilot.press("home")  # and back to the lesson's name at the top
        await settle(pilot)
        assert words(app, 1) == "tools/retry-budget.md"
        # a burst ends where its keys say: two lines down, whatever the machine's speed
        burst(pilot, "end", "home", "pagedown", "pageup", "down", "down")
        await settle(pilot)
        assert screen.query_one("#rewards-body").scroll_y == 2
        assert words(app, 1) == f"ranking (shrunk joint estimate) {ranking_by_hand(analysis_workspace.root):+.3f}"


def ranking_by_hand(root: Path, lesson_id: str = "tools/retry-budget.md") -> float:
    """The lesson's shrunk joint estimate recomputed from the log written out densely: 40 graded sessions, so
    two time blocks of 20 beside the three categories (none below 24 sessions, 2 from 24 to 49); weights
    floor + (1 - floor) x salience; lambda the restricted likelihood's optimum (`eb_penalty`; the prior sd
    sigma / sqrt(lambda), about 0.14, is above the analysis's floor 0.05); the estimate is the coefficient
    times the lesson's mean weight. Here +0.20824 (+0.20865 without the blocks: the old +0.209)."""
    sessions = [e for e in log_lines(root) if e.get("type") == "session"]
    n = len(sessions)
    categories = sorted({e["category"] for e in sessions})
    z = np.hstack([np.array([[float(e["category"] == c) for c in categories] for e in sessions]), time_columns(n, 2)])
    ids = sorted({entry["path"] for e in sessions for entry in e["lessons"]})
    x = np.zeros((n, len(ids)))
    for row, event in enumerate(sessions):
        for entry in event["lessons"]:
            x[row, ids.index(entry["path"])] = weight(entry["salience"])
    y = np.array([e["base_reward"] for e in sessions])
    coef, _, _ = ridge_reference(z, x, y, eb_penalty(z, x, y))
    j = ids.index(lesson_id)
    return float(coef[j] * x[x[:, j] > 0, j].mean())


LONG_NAME = "tools/keep-every-worktree-tidy-after-a-rebase.md"  # 38 characters without the folder and .md


async def test_a_pinned_lesson_is_marked_even_when_its_name_is_cut(workspace: Workspace, ws_root: Path) -> None:
    """At 80 columns a long lesson name is cut with an ellipsis (the demo's "rate-limit-backoff ◆" showed as
    "rate-limit-backof…"), and the pin mark after the name was cut off with it: nothing in the table
    said the lesson was pinned. Each lesson is pinned in turn (one at a time) and its row must show
    the mark, the long one cut."""
    path = ws_root / "lessons" / LONG_NAME
    path.write_text(lesson(["git worktree"], "Keep every worktree tidy"), encoding="utf-8")
    session_id, journal, _, reward, category, stamp = NEW_SESSION
    record(workspace, ws_root, (session_id, journal, [LONG_NAME], reward, category, stamp))
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#lessons-table", ThemedTable)
        keys = table_keys(table)
        assert LONG_NAME in keys
        for row, key in enumerate(keys):
            table.move_cursor(row=row)
            await pilot.press("p")
            await settle(pilot)
            line = words(app, table.region.y + 1 + row)  # under the header row
            assert "◆" in line, line
            if key == LONG_NAME:
                assert "…" in line and "keep-every-worktree-tidy-after-a-rebase" not in line
            await pilot.press("p")  # unpin
            await settle(pilot)


async def test_the_lesson_panel_shows_its_numbers_at_80x24(workspace: Workspace) -> None:
    """At 80x24 the side column (30 cells wide, 20 rows) holds the density plot (10 rows at least) and the
    lesson panel under it, cut at the screen's bottom: on the old code the panel led with the lesson's
    path, category and description, and its numbers (mean, interval, P(top-k), usage) were all cut. The
    highlighted lesson's numbers as the engine computes them are now on the screen."""
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        panel_rows = [words(app, row) for row in range(24)]
        screen = "\n".join(panel_rows)
        first = app.screen.query_one("#lessons-table", ThemedTable)
        lesson_id = table_keys(first)[first.cursor_row]
        row = next(r for r in workspace.lesson_table().rows if r.path == lesson_id)
        assert "P(in a top-10 draw) " in screen  # (the old code's panel ended at "avg salience when injected")
        assert "injected in " in screen or "never injected" in screen
        assert f"mean {row.mean:.3f} · n {row.n}" in screen
        assert f"95% interval {row.ci_low:.3f}–{row.ci_high:.3f}" in screen


async def test_the_highlighted_lessons_first_hit_is_in_the_journals_lines(tmp_path: Path) -> None:
    """At 80x24 the journal shows three lines beside two lessons (it showed two). Highlighting a lesson
    scrolled its first hit to the journal's third line (two lines of context above it), out of view of two
    lines: "why this credit" named hits the journal never showed. Here a.md's first hit is on line 10 of the
    journal and b.md's on line 20."""
    from tests.support.engine_helpers import make_workspace, session

    lines = [f"line {i}: nothing of note" for i in range(40)]
    lines[10] = "line 10: set up a git worktree"
    lines[20] = "line 20: ran pytest once"
    event = {**session("s1", None, {"a.md": 1.0, "b.md": 1.0}), "journal_path": "j.md"}
    lessons = {"a.md": (["git worktree"], "active"), "b.md": (["pytest"], "active")}
    root = make_workspace(tmp_path, lessons, [event], journals={"j.md": "\n".join(lines) + "\n"})
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")
        journal = detail.query_one("#journal")

        def shown() -> list[str]:
            return [" ".join(journal.render_line(y).text.split()) for y in range(journal.size.height)]

        # three lines at least (six here: the rows under "why this credit" that showed the plot's first rows, no
        # record above, are the journal's)
        assert journal.size.height >= 3 and "line 10: set up a git worktree" in shown(), shown()
        await pilot.press("down")  # b.md
        await settle(pilot)
        assert detail.focused_lesson == "b.md" and "line 20: ran pytest once" in shown(), shown()


async def test_the_journal_keeps_the_highlighted_lessons_hit_in_view_across_resizes(tmp_path: Path) -> None:
    """After a resize the journal excerpt showed the journal's first lines, not the lesson's keyword hit:
    the journal was laid out again at its new width from the top. Here a.md's first hit is on line 10 of
    the journal; it stays in view at 80x24 after a resize to 160x48 and back, and at 100x30 (wide, short)."""
    from tests.support.engine_helpers import make_workspace, session

    lines = [f"line {i}: nothing of note" for i in range(40)]
    lines[10] = "line 10: set up a git worktree"
    event = {**session("s1", None, {"a.md": 1.0}), "journal_path": "j.md"}
    root = make_workspace(
        tmp_path, {"a.md": (["git worktree"], "active")}, [event], journals={"j.md": "\n".join(lines)}
    )
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")
        journal = detail.query_one("#journal")

        def shown() -> list[str]:
            return [" ".join(journal.render_line(y).text.split()) for y in range(journal.size.height)]

        assert "line 10: set up a git worktree" in shown(), shown()
        for size in ((160, 48), SIZE, (100, 30), SIZE, (81, 24)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            assert "line 10: set up a git worktree" in shown(), (size, shown())
