"""Pilot tests of trust on the dashboard: gptme's outcome words in the Sessions table, sorting that means what
it says, the sort column in view, an empty match said, Home/End, help within 80 columns, one rounding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.lessons import LessonsScreen
from tests.tui.tui_fixture import burst, fixed_clock, open_sessions, settle, table_keys

SIZE = (120, 40)
LESSON = "---\nmatch:\n  keywords: [git]\n---\n# Git\n"


def imported_workspace(root: Path) -> Path:
    """gptme-sessions records (no base_reward, a string outcome) and one graded session of ours."""
    (root / "lessons").mkdir(parents=True)
    (root / "lessons" / "git.md").write_text(LESSON)
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    log.parent.mkdir(parents=True)
    records: list[dict[str, Any]] = [
        {
            "session_id": sid,
            "outcome": word,
            "timestamp": f"2026-10-0{i + 1}T10:00:00Z",
            "lessons": [{"path": "git.md", "salience": 1.0}],
        }
        for i, (sid, word) in enumerate(
            [("g1", "noop"), ("g2", "failed"), ("g3", "violated_policy"), ("g4", "productive")]
        )
    ]
    records.append({"type": "session", "session_id": "ours", "timestamp": "2026-10-09T10:00:00Z", "base_reward": 0.25,
                    "lessons": [{"path": "git.md", "salience": 1.0}]})  # fmt: skip
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    return root


async def test_the_sessions_table_shows_gptmes_words(tmp_path: Path) -> None:
    app = LessonCreditApp(Workspace(imported_workspace(tmp_path / "ws"), clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_sessions(pilot)
        table = screen.query_one("#sessions-table", DataTable)
        grade_column = [str(c.key.value) for c in table.columns.values()].index("grade")
        cells = {key: str(table.get_row_at(row)[grade_column]) for row, key in enumerate(table_keys(table))}
        assert cells == {"g1": "noop", "g2": "failed", "g3": "violated_policy", "g4": "productive", "ours": "0.250"}


# ---------------------------------------------------------------- sorting, help, Home/End


def demo_copy(root: Path, long_names: bool = False) -> Path:
    """The repository's demo workspace, copied (optionally with lesson names too long for 80 columns)."""
    import shutil

    shutil.copytree(REPO / "lessons", root / "lessons")
    shutil.copytree(REPO / "state", root / "state", ignore=shutil.ignore_patterns(".cache", "*.lock"))
    if long_names:
        for path in sorted((root / "lessons").rglob("*.md"))[:5]:
            if path.name != "README.md":
                path.rename(path.with_name("an-unusually-long-lesson-name-for-a-narrow-terminal-" + path.name))
    return root


REPO = Path(__file__).resolve().parents[2]


def visible_columns(table: DataTable[object]) -> list[str]:
    """The column keys whose whole width fits in the table's visible width (scrolled to the left)."""
    width = table.scrollable_content_region.width
    shown, x = [], 0
    for column in table.ordered_columns:
        x += column.get_render_width(table)
        if x <= width:
            shown.append(str(column.key.value))
    return shown


async def test_sorting_by_mean_lists_never_used_lessons_last_and_says_so(tmp_path: Path) -> None:
    app = LessonCreditApp(Workspace(demo_copy(tmp_path / "demo"), clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LessonsScreen) and screen.view is not None
        rows = {row.path: row for row in screen.view.rows}
        unused = {path for path, row in rows.items() if row.n == 0}
        below_prior = {path for path, row in rows.items() if row.n > 0 and row.mean < 0.5}
        assert unused and below_prior  # the case reported: used lessons below the prior's 0.5
        for keys in ((), ("r",)):  # descending (the default), then ascending: never used last both ways
            await pilot.press(*keys)
            await settle(pilot)
            order = table_keys(screen.query_one("#lessons-table", DataTable))
            assert set(order[-len(unused) :]) == unused, order[-len(unused) - 2 :]
            means = [rows[path].mean for path in order[: -len(unused)]]
            assert means == sorted(means, reverse=not keys)
            assert f"{len(unused)} never used, listed last" in str(screen.title)


async def test_the_sort_column_is_visible_at_80_columns(tmp_path: Path) -> None:
    root = demo_copy(tmp_path / "demo", long_names=True)
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#lessons-table", DataTable)
        for _ in range(len(table.columns)):  # every column in turn (o: the next one)
            lessons = app.screen
            assert isinstance(lessons, LessonsScreen)
            sort_column = lessons.sort_column
            assert sort_column in visible_columns(table), (sort_column, visible_columns(table))
            await pilot.press("o")
            await settle(pilot)


async def test_sessions_sort_every_match_as_the_cli_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sorting by grade listed the lowest grades of the newest 1,000 sessions only; with ties (many
    sessions share a grade) in another order than `sessions --sort`."""
    from lesson_credit.cli.main import main
    from lesson_credit.tui.screens import sessions as sessions_module
    from tests.tui.tui_fixture import build_many_sessions_workspace

    shown = 120
    monkeypatch.setattr(sessions_module, "MAX_ROWS", shown)
    root = tmp_path / "ws"
    build_many_sessions_workspace(root, n=600)
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_sessions(pilot)
        table = screen.query_one("#sessions-table", DataTable)
        for column, descending, sort in (
            ("grade", True, "reward:desc"),
            ("grade", False, "reward:asc"),
            ("category", False, "category:asc"),
            ("salience", True, "salience:desc"),
        ):
            while screen.sort_column != column:
                await pilot.press("o")
            if screen.sort_reverse != descending:
                await pilot.press("r")
            await settle(pilot)
            import contextlib
            import io

            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert main(["sessions", "-w", str(root), "--sort", sort, "--limit", str(shown), "--json"]) == 0
            expected = [s["session_id"] for s in json.loads(out.getvalue())["sessions"]]
            assert table_keys(table) == expected, sort


async def test_an_empty_match_says_so_and_home_end_move(tmp_path: Path) -> None:
    from textual.widgets import Static

    app = LessonCreditApp(Workspace(demo_copy(tmp_path / "demo"), clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        table = screen.query_one("#sessions-table", DataTable)
        await pilot.press("end")
        await settle(pilot)
        assert table.cursor_row == table.row_count - 1 == 167  # the demo's 168 sessions
        await pilot.press("home")
        await settle(pilot)
        assert table.cursor_row == 0
        await pilot.press("slash", "z", "z", "q")
        await settle(pilot)
        empty = screen.query_one("#sessions-empty", Static)
        assert table.row_count == 0 and empty.display
        assert "No sessions match" in str(empty.render()) and "zzq" in str(empty.render())


async def test_help_fits_80_columns_and_lists_the_ranking_column(tmp_path: Path) -> None:
    from textual.widgets import Static

    app = LessonCreditApp(Workspace(demo_copy(tmp_path / "demo"), clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_sessions(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        body = app.screen.query_one("#help-body")
        assert body.region.right <= 80
        text = str(app.screen.query_one("#help-text", Static).render())
        lessons = text.split("Lessons columns", 1)[1].split("Sessions columns", 1)[0]
        assert "ranking  the shrunk joint estimate" in lessons


def test_session_detail_and_explain_round_alike(tmp_path: Path) -> None:
    """0.05 x 0.65 is 0.0325 stored as 0.032499999999999994: explain printed +0.032, the detail +0.033."""
    from lesson_credit.tui.text import fmt_signed
    from tests.support.cli_run import run_cli

    root = tmp_path / "ws"
    (root / "lessons").mkdir(parents=True)
    (root / "lessons" / "git.md").write_text(LESSON)
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    log.parent.mkdir(parents=True)
    event = {
        "type": "session",
        "session_id": "s1",
        "base_reward": 0.05,
        "lessons": [{"path": "git.md", "salience": 0.5}],
    }
    log.write_text(json.dumps(event) + "\n")
    (credit,) = Workspace(root).explain("s1").lessons
    code, out, err = run_cli("explain", "s1", "-w", str(root))
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("git.md "))
    assert fmt_signed(credit.alpha_delta) in row.split(), (row, fmt_signed(credit.alpha_delta))


async def test_a_deleted_log_is_said_not_just_never_used(ws_root: Path) -> None:
    """Every lesson 'never used' without a word was all a deleted log showed."""
    from tests.support.textual_private import notification_texts

    log = ws_root / "state" / "lesson-thompson" / "sessions.jsonl"
    assert (log.parent / "bandit-state.json").is_file()
    log.unlink()
    app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = [
            (title, text) for title, text in notification_texts(app) if title == "The event log is missing or empty"
        ]
        assert len(shown) == 1 and str(log) in shown[0][1]


async def test_a_lessons_filter_that_matches_nothing_says_so(app: LessonCreditApp) -> None:
    """Sessions said "No sessions match the filter ..." under an empty table; Lessons showed a bare header."""
    from textual.widgets import Static

    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "slash", *"zzqx")
        await settle(pilot)
        empty = app.screen.query_one("#lessons-empty", Static)
        assert empty.display and str(empty.render()) == "No lessons match the filter 'zzqx' (escape clears the filter)."
        burst(pilot, "escape")
        await settle(pilot)
        assert not empty.display


async def test_records_gone_that_rewards_came_from_are_said(tmp_path: Path) -> None:
    """The judge's scores of a gptme-sessions records file gone: every such session's reward changed without a
    word (as `status` and `lint` say it, the dashboard says it once)."""
    from tests.support.cli_run import run_cli
    from tests.support.records_helpers import RECORDS, judged_workspace
    from tests.support.textual_private import notification_texts

    root = judged_workspace(tmp_path)
    argv = ["record", "-w", str(root), "--session-id", "s3", "--journal", str(root / "j.md"), "--lessons", "a.md"]
    assert run_cli(*argv, "--reward", "0.5")[0] == 0  # bandit-state.json written with s1's and s2's judge scores
    (root / RECORDS).unlink()
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = [text for title, text in notification_texts(app) if title == "The gptme-sessions records are missing"]
        assert len(shown) == 1 and "rewards of 2 sessions" in shown[0] and str(RECORDS) in shown[0]
