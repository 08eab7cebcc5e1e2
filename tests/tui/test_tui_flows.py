"""Pilot tests: drive the dashboard with keys and assert on its state and on the files it writes."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import NoReturn

import pytest
from textual.widgets import DataTable, Input

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.analysis import AnalysisScreen
from lesson_credit.tui.screens.confirm import ConfirmScreen
from lesson_credit.tui.screens.grade_value import GradeValueScreen
from lesson_credit.tui.screens.health import FindingCard, HealthScreen
from lesson_credit.tui.screens.help import HelpScreen
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.sessions import SessionsScreen
from lesson_credit.tui.screens.simulation import SimulationScreen
from lesson_credit.tui.screens.what_if import WhatIfScreen
from lesson_credit.tui.source_views import LessonsView
from lesson_credit.tui.widgets.beta_plot import BetaPlot
from lesson_credit.tui.widgets.journal_view import JournalView
from lesson_credit.tui.widgets.lesson_panel import LessonPanel
from tests.support.engine_helpers import row_of
from tests.support.textual_private import notification_texts
from tests.tui.tui_fixture import (
    CONFIG_REL,
    LOG_REL,
    NEW_SESSION,
    STATE_REL,
    fixed_clock,
    log_lines,
    open_session,
    open_sessions,
    record,
    settle,
    table_keys,
    wait_until,
    weight,
)

SIZE = (120, 40)


def lessons_screen(app: LessonCreditApp) -> LessonsScreen:
    assert isinstance(app.screen, LessonsScreen)
    return app.screen


# ---------------------------------------------------------------------------- Lessons


@pytest.mark.smoke
async def test_opens_on_lessons_with_every_lesson_and_the_missing_one(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = lessons_screen(app)
        table = screen.query_one("#lessons-table", DataTable)
        keys = table_keys(table)
        assert set(keys) == {
            "tools/git-worktree.md",
            "tools/shell-quoting.md",
            "testing/run-tests.md",
            "workflow/small-commits.md",
            "communication/ask-first.md",
            "tools/old-lesson.md",
        }
        # default order: mean, best first; never-used lessons (n 0: the prior's mean says nothing) last
        assert screen.view is not None
        rows = [row_of(screen.view, k) for k in keys]
        used = [row.mean for row in rows if row.n > 0]
        assert used == sorted(used, reverse=True)
        assert [row.n > 0 for row in rows] == sorted((row.n > 0 for row in rows), reverse=True)
        # the missing lesson is shown and explained
        table.move_cursor(row=keys.index("tools/old-lesson.md"))
        await pilot.pause()
        panel = screen.query_one("#lesson-panel", LessonPanel)
        assert panel.detail is not None and panel.detail.row.status == "missing"
        text = panel.describe(panel.detail).plain
        assert "not in the library" in text
        assert "status" not in app.title  # nothing odd in the title


async def test_filter_narrows_the_table_and_slash_focuses_it(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = lessons_screen(app)
        await pilot.press("slash")
        assert isinstance(app.focused, Input) and app.focused.id == "filter"
        await pilot.press(*"shell")
        await settle(pilot)  # the filter re-runs after a pause in typing
        assert table_keys(screen.query_one("#lessons-table", DataTable)) == ["tools/shell-quoting.md"]
        # l and s type into the filter instead of switching screens
        await pilot.press("backspace", "backspace", "backspace", "backspace", "backspace", "s", "l")
        await settle(pilot)
        assert isinstance(app.screen, LessonsScreen)
        assert screen.query_one("#filter", Input).value == "sl"
        # filter by status
        await pilot.press("backspace", "backspace", *"missing", "enter")
        await settle(pilot)
        assert table_keys(screen.query_one("#lessons-table", DataTable)) == ["tools/old-lesson.md"]
        assert app.focused is screen.query_one("#lessons-table")
        await pilot.press("escape")
        await settle(pilot)
        assert len(table_keys(screen.query_one("#lessons-table", DataTable))) == 6


async def test_sort_keys_and_header_click(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = lessons_screen(app)
        table = screen.query_one("#lessons-table", DataTable)
        assert (screen.sort_column, screen.sort_reverse) == ("mean", True)
        await pilot.press("r")
        await settle(pilot)
        assert screen.view is not None
        rows = [row_of(screen.view, k) for k in table_keys(table)]
        used = [row.mean for row in rows if row.n > 0]
        assert used == sorted(used)  # lowest first; never-used lessons still last
        assert [row.n > 0 for row in rows] == sorted((row.n > 0 for row in rows), reverse=True)
        await pilot.press("o")  # mean -> interval
        await settle(pilot)
        assert screen.sort_column == "interval"
        await pilot.press("o", "o", "o", "o", "o")  # interval -> effect -> last -> category -> status -> lesson (wraps)
        await settle(pilot)
        assert screen.sort_column == "lesson"
        assert table_keys(table) == sorted(table_keys(table), reverse=screen.sort_reverse)
        # clicking the "n" header sorts by n, most evidence first; clicking again reverses
        x = sum(col.get_render_width(table) for key, col in table.columns.items() if key.value == "lesson")
        await pilot.click("#lessons-table", offset=(x + 1, 0))
        await settle(pilot)
        assert (screen.sort_column, screen.sort_reverse) == ("n", True)
        ns = [row_of(screen.view, k).n for k in table_keys(table)]
        assert ns == sorted(ns, reverse=True)
        await pilot.click("#lessons-table", offset=(x + 1, 0))
        await settle(pilot)
        assert (screen.sort_column, screen.sort_reverse) == ("n", False)


@pytest.mark.smoke
async def test_highlight_updates_panel_and_plot_at_once(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = lessons_screen(app)
        table = screen.query_one("#lessons-table", DataTable)
        panel = screen.query_one("#lesson-panel", LessonPanel)
        plot = screen.query_one("#lesson-plot", BetaPlot)
        keys = table_keys(table)
        for index in (1, 2, 3):
            await pilot.press("down")
            assert panel.detail is not None and panel.detail.row.path == keys[index]
            main = [c for c in plot.curves if c.role == "main"]
            assert len(main) == 1
            assert screen.view is not None
            row = screen.view.row(keys[index])
            assert row is not None and (main[0].alpha, main[0].beta) == (row.alpha, row.beta)
            assert any(c.role == "prior" and (c.alpha, c.beta) == (1.0, 1.0) for c in plot.curves)
        # the panel shows usage and P(top-k) from the engine
        table.move_cursor(row=keys.index("tools/git-worktree.md"))
        await pilot.pause()
        detail = panel.detail
        assert detail is not None
        assert detail.usage is not None and detail.usage.injected == 2
        assert detail.usage.salient == 2
        expected = Workspace(screen.source.workspace.root).p_top_k(seed=0)["tools/git-worktree.md"]
        assert detail.p_top_k == pytest.approx(expected)
        text = panel.describe(detail).plain
        assert "injected in 2 sessions" in text and "P(in a top-10 draw)" in text


async def test_pin_up_to_three_for_comparison(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = lessons_screen(app)
        table = screen.query_one("#lessons-table", DataTable)
        plot = screen.query_one("#lesson-plot", BetaPlot)
        keys = table_keys(table)
        await pilot.press("p", "down", "p", "down", "p", "down")
        await settle(pilot)
        assert screen.pins == keys[:3]
        pin_curves = [c for c in plot.curves if c.role == "pin"]
        assert len(pin_curves) == 3
        # pinned rows are marked in the table
        first = table.get_row(keys[0])
        assert str(first[0]).strip().startswith("◆")
        assert "◆" not in str(table.get_row(keys[3])[0])
        # a fourth pin is refused
        await pilot.press("p")
        await settle(pilot)
        assert screen.pins == keys[:3]
        # unpin
        await pilot.press("up", "p")
        await settle(pilot)
        assert screen.pins == keys[:2]


async def test_enter_on_a_lesson_opens_its_last_session_focused_on_it(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = lessons_screen(app)
        table = screen.query_one("#lessons-table", DataTable)
        table.move_cursor(row=table_keys(table).index("tools/shell-quoting.md"))
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, SessionDetailScreen)
        assert detail.session_id == "s2" and detail.focused_lesson == "tools/shell-quoting.md"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, LessonsScreen)


# ---------------------------------------------------------------------------- Sessions


@pytest.mark.smoke
async def test_sessions_list_newest_first_pending_filter_and_open(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_sessions(pilot)
        table = screen.query_one("#sessions-table", DataTable)
        assert table_keys(table) == ["s4", "s3", "s2", "s1"]
        assert str(table.get_row("s4")[3]) == "pending"
        assert str(table.get_row("s4")[4]) == "—"  # no one scored it: no grader
        assert str(table.get_row("s1")[3]) == "0.800" and str(table.get_row("s1")[4]) == "heuristic"
        await pilot.press("v")
        await settle(pilot)
        assert table_keys(table) == ["s4"]
        await pilot.press("v")
        await settle(pilot)
        assert len(table_keys(table)) == 4
        # reward over time: one point per session, None while pending
        from lesson_credit.tui.widgets.reward_plot import RewardPlot

        series = screen.query_one("#reward-plot", RewardPlot).series
        assert series is not None and series.xs == (1, 2, 3) and series.ys == (0.8, 0.4, 0.6)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == "s4"
        # l from anywhere goes to Lessons, s goes to the Sessions list
        await pilot.press("l")
        await settle(pilot)
        assert isinstance(app.screen, LessonsScreen)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)  # the list, not the detail left open in it


# ---------------------------------------------------------------------------- Session detail


@pytest.mark.smoke
async def test_detail_shows_breakdown_and_before_after(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")
        credits = detail.query_one("#credits", DataTable)
        assert table_keys(credits) == ["tools/git-worktree.md", "testing/run-tests.md", "tools/shell-quoting.md"]
        # at 120 columns the table beside the journal has the compact columns (sal, wt; Δα and Δβ in the panel)
        cells = [str(credits.get_cell("tools/git-worktree.md", key)) for key in ("salience", "weight", "credited")]
        assert cells == ["0.50", "0.650", "0.520"]  # 0.3 + 0.7 x 0.5 = 0.65; 0.8 x 0.65 = 0.52
        assert "α +0.520   β +0.480" in str(detail.query_one("#credit-story").render())
        hits = [str(credits.get_cell("tools/git-worktree.md", key)) for key in ("hit", "missed")]
        assert hits == ["git worktree", "stale branch"]
        # the journal highlights every hit; the focused lesson's hits are the emphasised ones
        journal = detail.query_one("#journal", JournalView)
        text = journal.display_text
        assert [text[s:e] for s, e in journal._focus] == ["git worktree", "git worktree"]
        assert sorted(text[s:e] for s, e in journal._hits) == ["git worktree", "git worktree", "pytest"]
        await pilot.press("down")
        await settle(pilot)
        assert detail.focused_lesson == "testing/run-tests.md"
        assert [text[s:e] for s, e in journal._focus] == ["pytest"]
        plot = detail.query_one("#credit-plot", BetaPlot)
        credit = next(c for c in detail.credits() if c.path == "testing/run-tests.md")
        assert [(c.role, c.alpha, c.beta) for c in plot.curves] == [
            ("before", credit.alpha_before, credit.beta_before),
            ("after", credit.alpha_after, credit.beta_after),
        ]
        assert credit.alpha_after - credit.alpha_before == pytest.approx(0.8 * weight(0.5))


async def test_missing_journal_shows_the_reason(app: LessonCreditApp, ws_root: Path) -> None:
    (ws_root / "state" / "journals" / "s2.md").unlink()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s2")
        journal = detail.query_one("#journal", JournalView)
        assert journal.display_text == ""
        assert journal.message is not None and "not found" in journal.message
        # credit is still explained from the stored salience
        assert len(detail.credits()) == 3


async def test_markup_and_escapes_in_a_journal_show_literally(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s3")
        journal = detail.query_one("#journal", JournalView)
        assert "[red]boom[/]" in journal.display_text
        assert "\x1b" not in journal.display_text
        assert "␛[31mred␛[0m" in journal.display_text
        assert "    indented" in journal.display_text  # tab expanded
        rendered = "".join(journal.render_line(y).text for y in range(journal.size.height))
        assert "[red]boom[/]" in rendered
        assert "\x1b" not in rendered
        # the hit after the escape sequences is still highlighted where it is
        text = journal.display_text
        assert [text[s:e] for s, e in journal._focus] == ["git worktree"]
        svg = app.export_screenshot()
        assert "[red]boom[/]" in svg.replace("&#160;", " ")


# ---------------------------------------------------------------------------- grading


def grade_events(root: Path) -> list[dict[str, object]]:
    return [e for e in log_lines(root) if e.get("type") == "grade"]


async def test_draft_grade_previews_credit_before_anything_is_written(app: LessonCreditApp, ws_root: Path) -> None:
    before = (ws_root / LOG_REL).read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")
        saliences = {c.path: c.salience for c in detail.credits()}
        for key, draft in (("3", 0.3), ("0", 0.0), ("f", 1.0), ("9", 0.9)):
            await pilot.press(key)
            await settle(pilot)
            assert detail.draft == draft
            assert detail.shown is not None and detail.shown.base_reward == draft
            for credit in detail.credits():
                w = weight(saliences[credit.path])
                assert credit.alpha_delta == pytest.approx(draft * w)  # seed: alpha += base * w
                assert credit.beta_delta == pytest.approx(1 - draft * w)
                assert credit.reward == pytest.approx(draft * w)
        credits = detail.query_one("#credits", DataTable)
        assert str(credits.get_cell("tools/shell-quoting.md", "credited")) == f"{0.9 * weight(0.0):.3f}"
        # +/- step by 0.05 from the draft, clamped to [0, 1]
        await pilot.press("plus")
        await settle(pilot)
        assert detail.draft == pytest.approx(0.95)
        await pilot.press("plus", "plus")
        await settle(pilot)
        assert detail.draft == 1.0
        await pilot.press("minus")
        await settle(pilot)
        assert detail.draft == pytest.approx(0.95)
        # the plot shows the draft's after-curve
        plot = detail.query_one("#credit-plot", BetaPlot)
        focused = next(c for c in detail.credits() if c.path == detail.focused_lesson)
        assert plot.curves[1].alpha == pytest.approx(focused.alpha_before + 0.95 * weight(focused.salience))
        # escape discards the draft (and says so); nothing was written
        await pilot.press("escape")
        await settle(pilot)
        assert detail.draft is None and isinstance(app.screen, SessionDetailScreen)
        assert detail.shown is not None and detail.shown.base_reward == 0.8
    assert (ws_root / LOG_REL).read_bytes() == before


@pytest.mark.smoke
async def test_commit_appends_a_manual_grade_with_the_note(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")  # pending
        await pilot.press("c")  # no draft: nothing to commit
        await settle(pilot)
        assert grade_events(ws_root) == []
        await pilot.press("7", "e", *"checked by hand", "enter")
        await settle(pilot)
        assert app.focused is detail.query_one("#credits")
        await pilot.press("c")
        await settle(pilot)
        grades = grade_events(ws_root)
        assert len(grades) == 1
        assert grades[0]["session_id"] == "s4" and grades[0]["base_reward"] == 0.7
        assert grades[0]["grader"] == "manual" and grades[0]["note"] == "checked by hand"
        assert grades[0]["timestamp"] == "2026-03-05T16:30:00Z"  # the injected clock
        # the screen now shows the committed grade and its history
        assert detail.draft is None
        assert detail.base is not None and detail.base.session.base_reward == 0.7
        assert [g.base_reward for g in detail.base.grades] == [0.7]
        # undoing the first grade of a pending session retracts it: pending again, logged by the operator
        await pilot.press("u")
        await settle(pilot)
        grades = grade_events(ws_root)
        assert [(g["base_reward"], g["grader"]) for g in grades] == [(0.7, "manual"), (None, "manual")]
        assert detail.base is not None and detail.base.session.base_reward is None


async def test_type_an_exact_grade_in_the_modal(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s2")
        await pilot.press("g")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, GradeValueScreen)
        box = modal.query_one("#grade-value", Input)
        assert box.value == "0.4"
        for bad in ("1.5", "nan", "-0.1", "abc", "inf", "[red]x[/]", "[/]"):
            box.value = bad
            await pilot.press("enter")
            await settle(pilot)
            assert app.screen is modal, bad
            assert "-invalid" in modal.query_one("#grade-error").classes
        assert "'[/]'" in str(modal.query_one("#grade-error").render())
        box.value = "0,73"
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is detail and detail.draft == pytest.approx(0.73)
        assert detail.shown is not None and detail.shown.base_reward == pytest.approx(0.73)
        # escape cancels without touching the draft
        await pilot.press("g")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is detail and detail.draft == pytest.approx(0.73)


async def test_undo_appends_the_previous_grade_back(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")
        await pilot.press("u")  # only the grade it was logged with: nothing to undo
        await settle(pilot)
        assert grade_events(ws_root) == []
        await pilot.press("3", "c")  # over the record's 0.8 (the heuristic): no question, it stays in the log
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        grades = grade_events(ws_root)
        # the operator's 0.3 withdrawn (a retraction in the people's source): the record's 0.8 is in force
        assert [g["base_reward"] for g in grades] == [0.3, None]
        assert str(grades[1]["note"]).startswith("undid manual's grade on line ")
        assert detail.base is not None and detail.base.session.base_reward == 0.8
        assert [g.base_reward for g in detail.base.grades] == [0.8, 0.3, None]


async def test_regrading_never_counts_a_session_twice(app: LessonCreditApp, ws_root: Path) -> None:
    fresh_before = {r.path: r for r in Workspace(ws_root).lesson_table().rows}
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")
        await pilot.press("5", "c")  # over the heuristic's 0.8: no question
        await settle(pilot)
        for key in ("9", "2"):  # over the operator's own grade: asked, y (typed once it shows) answers
            await pilot.press(key, "c")
            await settle(pilot)
            await pilot.press("y")
            await settle(pilot)
        assert [g["base_reward"] for g in grade_events(ws_root)] == [0.5, 0.9, 0.2]
        await pilot.press("l")
        await settle(pilot)
        screen = lessons_screen(app)
        assert screen.view is not None
        shown = {r.path: r for r in screen.view.rows}
    # n is unchanged; alpha is the fold with only the final grade (0.2 instead of 0.8)
    for path in ("tools/git-worktree.md", "testing/run-tests.md", "tools/shell-quoting.md"):
        credit = next(c for c in detail.credits() if c.path == path)
        w = weight(credit.salience)
        assert shown[path].n == fresh_before[path].n
        assert shown[path].alpha == pytest.approx(fresh_before[path].alpha - 0.8 * w + 0.2 * w)
        assert shown[path].beta == pytest.approx(fresh_before[path].beta - (1 - 0.8 * w) + (1 - 0.2 * w))
    fresh_after = {r.path: r for r in Workspace(ws_root).lesson_table().rows}
    for path, row in shown.items():
        assert row.alpha == pytest.approx(fresh_after[path].alpha)
        assert row.n == fresh_after[path].n


# ---------------------------------------------------------------------------- what-if


@pytest.mark.smoke
async def test_what_if_refolds_live_and_writes_nothing(app: LessonCreditApp, ws_root: Path) -> None:
    log_before = (ws_root / LOG_REL).read_bytes()
    state_before = (ws_root / STATE_REL).read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WhatIfScreen)
        assert screen.view is not None and screen.view.proposed.strategy == "seed"
        assert all(row.rank_change == 0 and row.delta == 0 for row in screen.view.rows)
        await pilot.press("t")  # seed -> evidence
        await settle(pilot)
        assert screen.view.proposed.strategy == "evidence"
        expected = {r.path: r.mean for r in Workspace(ws_root).replay("evidence", 0.3).rows}
        assert {r.path: r.mean_then for r in screen.view.rows} == pytest.approx(expected)
        await pilot.press("right_square_bracket", "right_square_bracket")
        await settle(pilot)
        assert screen.view.proposed.floor == pytest.approx(0.4)
        assert screen.query_one("#floor", Input).value == "0.4"
        expected = {r.path: r.mean for r in Workspace(ws_root).replay("evidence", 0.4).rows}
        assert {r.path: r.mean_then for r in screen.view.rows} == pytest.approx(expected)
        table = screen.query_one("#what-if-table", DataTable)
        for row in screen.view.rows:
            cells = [str(c) for c in table.get_row(row.path)]  # rank, rank now, move, ...
            assert cells[2] in ("·", f"▲{row.rank_change}", f"▼{-row.rank_change}")
        assert any(row.rank_change != 0 for row in screen.view.rows)
        # a typed floor outside [0, 1] is refused and does not re-fold
        floor = screen.query_one("#floor", Input)
        floor.value = "1.5"
        await settle(pilot)
        assert screen.view.proposed.floor == pytest.approx(0.4)
        floor.value = "0.4"
        await settle(pilot)
        # ctrl+s asks first; escape writes nothing
        screen.query_one("#what-if-table").focus()
        await pilot.press("ctrl+s")
        await settle(pilot)
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, LessonsScreen)
    assert (ws_root / LOG_REL).read_bytes() == log_before
    assert (ws_root / STATE_REL).read_bytes() == state_before
    assert not (ws_root / CONFIG_REL).exists()


async def test_what_if_saves_only_after_confirmation(app: LessonCreditApp, ws_root: Path) -> None:
    log_before = (ws_root / LOG_REL).read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        await pilot.press("t", "t")  # uniform
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)  # the question shows: only keys typed then answer it
        await pilot.press("y")
        await settle(pilot)
        assert 'strategy = "uniform"' in (ws_root / CONFIG_REL).read_text()
        screen = app.screen
        assert isinstance(screen, WhatIfScreen)
        assert screen.view is not None and screen.view.current.strategy == "uniform"
        await pilot.press("escape")
        await settle(pilot)
        lessons = lessons_screen(app)
        assert lessons.view is not None and lessons.view.table.settings.strategy == "uniform"
    assert (ws_root / LOG_REL).read_bytes() == log_before


# ---------------------------------------------------------------------------- live updates, help, problems


async def test_live_reload_after_another_process_appends(workspace: Workspace, ws_root: Path) -> None:
    app = LessonCreditApp(workspace, poll_seconds=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = lessons_screen(app).view
        assert before is not None
        screen = await open_sessions(pilot)
        other = Workspace(ws_root, clock=fixed_clock)  # as if another process
        record(other, ws_root, NEW_SESSION)
        table = screen.query_one("#sessions-table", DataTable)
        for _ in range(1200):  # a minute at most: a limit that only catches a screen that never reloads
            await asyncio.sleep(0.05)
            await pilot.pause()
            if "s5" in table_keys(table):
                break
        assert table_keys(table)[0] == "s5"
        await pilot.press("l")
        await settle(pilot)
        after = lessons_screen(app).view
        assert after is not None and after.version > before.version
        old = before.row("tools/git-worktree.md")
        new = after.row("tools/git-worktree.md")
        assert old is not None and new is not None and new.n == old.n + 1 and new.alpha > old.alpha
        table = lessons_screen(app).query_one("#lessons-table", DataTable)
        assert str(table.get_cell("tools/git-worktree.md", "n")).strip() == str(new.n)
        assert str(table.get_cell("tools/git-worktree.md", "mean")).strip() == f"{new.mean:.3f}"


async def test_help_lists_keys_per_screen(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        assert help_screen.sections[0].title == "Lessons"
        text = "\n".join(f"{k} {d}" for s in help_screen.sections for k, d in s.keys)
        for needle in (
            "/ Filter",
            "p Pin",
            "c Commit",
            "u Undo",
            "n Next to grade",
            "0-9",
            "^s Save settings…",
            "? Help",
            "a Analysis",
            "m Simulation",
            "h Health",
            "^s Write loo-results.json",
            "^r Run",
            "esc Cancel run",
            "^r Re-read, re-check",
            ": Go to session…",
            "v Pending only",
        ):
            assert needle in text, needle
        titles = [s.title for s in help_screen.sections]
        assert (
            "credited the lesson's share of the session's reward: grade x weight (seed strategy)" in text
        )  # columns explained
        assert "n graded sessions the lesson was injected in" in text
        for title in ("Analysis", "Lesson rewards", "Simulation", "Health", "Lessons columns"):
            assert title in titles
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, LessonsScreen)


@pytest.mark.smoke
async def test_command_palette_lists_the_screen_actions(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        names = [command.title for command in app.get_system_commands(app.screen)]
        for name in ("Pin", "What-if", "Sessions", "Analysis", "Simulation", "Health", "Help", "Theme"):
            assert name in names
        detail = await open_session(pilot, "s1")
        names = [command.title for command in app.get_system_commands(detail)]
        assert "Commit" in names and "Next to grade" in names and "Draft 0.3" in names
        # running one from the palette's callback works like the key
        command = next(c for c in app.get_system_commands(detail) if c.title == "Draft 0.3")
        await command.callback()
        await settle(pilot)
        assert detail.draft == 0.3


async def test_library_problems_other_than_broken_files_are_not_called_unloadable(
    workspace: Workspace, ws_root: Path
) -> None:
    """A folder named like a lesson file is a problem of the library, not a file that could not be loaded."""
    (ws_root / "lessons" / "notes.md").mkdir()
    app = LessonCreditApp(workspace, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = [title for title, _ in notification_texts(app)]
        assert "1 problem in the lesson library" in titles, titles
        assert not any("could not be loaded" in t for t in titles)


async def test_problems_are_notified_and_the_broken_lesson_says_why(workspace: Workspace, ws_root: Path) -> None:
    (ws_root / "lessons" / "tools" / "broken.md").write_text("---\nmatch: [unclosed\n---\n# Broken\n")
    first_session = (ws_root / LOG_REL).read_text(encoding="utf-8").splitlines()[0]
    with open(ws_root / LOG_REL, "a", encoding="utf-8") as log:
        log.write("this is not json\n")
        log.write(first_session + "\n")  # s1 logged again: a problem that names its session
    app = LessonCreditApp(workspace, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        messages = [message for _, message in notification_texts(app)]
        titles = [title for title, _ in notification_texts(app)]
        assert any("unreadable line" in t for t in titles)
        assert any("could not be loaded" in t for t in titles)
        assert any("line 5" in m for m in messages)
        screen = lessons_screen(app)
        row = screen.view.row("tools/broken.md") if screen.view else None
        assert row is not None and row.status == "broken"
        table = screen.query_one("#lessons-table", DataTable)
        table.move_cursor(row=table_keys(table).index("tools/broken.md"))
        await pilot.pause()
        panel = screen.query_one("#lesson-panel", LessonPanel)
        assert panel.detail is not None
        assert "could not be loaded" in panel.describe(panel.detail).plain
        await pilot.press("s")
        await settle(pilot)
        problems = app.screen.query_one("#log-problems")
        assert problems.display and "line 5" in str(problems.render())
        sessions = app.screen.query_one("#sessions-table", DataTable)
        assert str(sessions.get_row("s1")[0]) == "⚠ s1"  # the row the duplicate line is about
        assert str(sessions.get_row("s2")[0]) == "s2"


@pytest.mark.smoke
async def test_theme_switch_keeps_working(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.theme = "textual-light"
        await settle(pilot)
        detail = await open_session(pilot, "s3")
        app.theme = "textual-dark"
        await settle(pilot)
        assert detail.query_one("#credits", DataTable).row_count == 2


async def test_engine_failure_is_reported_not_fatal(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")

        def broken(*args: object, **kwargs: object) -> NoReturn:
            raise OSError("disk on fire")

        detail.source.append_grade = broken  # type: ignore[method-assign]  # this source's writes fail
        await pilot.press("5", "c")  # over the heuristic's 0.8: no question
        # the write waits to be retried (so the app is never idle): wait for the warning, not for quiet
        await wait_until(pilot, lambda: any("disk on fire" in message for _, message in notification_texts(app)))
        assert app.is_running
        assert not math.isnan(detail.draft or 0.0)
    # the app closed with the write still waiting: closing ended the writer's wait


async def test_an_empty_workspace_opens_on_every_screen(tmp_path: Path) -> None:
    app = LessonCreditApp(Workspace(tmp_path / "empty", clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = lessons_screen(app)
        assert screen.query_one("#lessons-table", DataTable).row_count == 0
        assert screen.query_one("#lesson-panel", LessonPanel).detail is None
        await pilot.press("enter", "p", "o", "w")
        await settle(pilot)
        assert isinstance(app.screen, WhatIfScreen)
        await pilot.press("t", "escape", "s")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
        await pilot.press("enter", "v", "question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape", "a")
        await settle(pilot)
        assert isinstance(app.screen, AnalysisScreen)
        assert app.screen.query_one("#loo-table", DataTable).row_count == 0
        await pilot.press("enter", "o", "r", "h")
        await settle(pilot)
        assert isinstance(app.screen, HealthScreen)
        # a folder without lessons is flagged, not "no problems found"
        assert [card.finding.code for card in app.screen.query(FindingCard)] == ["no-lessons"]
        assert app.screen.title == "Health · 1 error, 0 warnings"
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, SimulationScreen)
        assert app.is_running


async def test_a_log_change_reloads_each_screen_once(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = lessons_screen(app)
        loads: list[int] = []
        original = screen.source.lessons_view

        def counting() -> LessonsView:
            loads.append(1)
            return original()

        screen.source.lessons_view = counting  # type: ignore[method-assign]  # counts this source's loads
        app.data_version += 1
        await settle(pilot)
        assert len(loads) == 1


async def test_a_log_change_redraws_changed_rows_in_place(workspace: Workspace, ws_root: Path) -> None:
    app = LessonCreditApp(workspace, poll_seconds=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = lessons_screen(app)
        await pilot.press(*"oooooo")  # mean -> interval -> effect -> last -> category -> status -> lesson
        await settle(pilot)
        assert screen.sort_column == "lesson"
        rebuilds: list[int] = []
        original = screen._rebuild

        def counting() -> None:
            rebuilds.append(1)
            original()

        screen._rebuild = counting  # type: ignore[method-assign]  # counts this screen's rebuilds
        version = screen.view.version if screen.view else -1
        record(Workspace(ws_root, clock=fixed_clock), ws_root, NEW_SESSION)
        for _ in range(1200):  # a minute at most: a limit that only catches a screen that never reloads
            await asyncio.sleep(0.05)
            await pilot.pause()
            if screen.view is not None and screen.view.version > version:
                break
        await settle(pilot)
        assert rebuilds == []
        row = screen.view.row("tools/git-worktree.md") if screen.view else None
        assert row is not None and row.n == 3
        table = screen.query_one("#lessons-table", DataTable)
        assert str(table.get_row("tools/git-worktree.md")[1]).strip() == "3"
