""" "Why this credit" on a session whose journal or lesson keywords changed since it was recorded, at 80x24 (the
lines its box shows there): the salience is the log's, and the line no longer says the keywords hit now make it;
what they give now, and a journal whose sha256 is not its record's, are said in the lines in view. s1's journal
(tests/tui/tui_fixture.py) hits "git worktree" of tools/git-worktree.md's two keywords: logged salience 1/2."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from tests.tui.test_tui_detail_sizes import screen_text
from tests.tui.tui_fixture import fixed_clock, lesson, open_session, settle

CHANGED = "⚠ journal changed since the session was recorded (sha256 differs)"


async def story_lines(root: Path) -> list[str]:
    """The screen's lines with s1 open at 80x24, its first lesson (tools/git-worktree.md) selected."""
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")
        assert detail.focused_lesson == "tools/git-worktree.md"
        return [line.strip(" │") for line in screen_text(app)]


async def test_a_keyword_added_since_leaves_the_logged_salience_and_says_what_the_keywords_give_now(
    ws_root: Path,
) -> None:
    """On the old code the line read "salience 1/3 keywords = 0.500", which does not add up, and the note saying
    why was below the box's bottom at 80x24."""
    path = ws_root / "lessons" / "tools" / "git-worktree.md"
    path.write_text(lesson(["git worktree", "stale branch", "rebase"], "Keep worktrees tidy"), encoding="utf-8")
    lines = await story_lines(ws_root)
    # the log's 0.5 (1 of 2 when recorded): weight 0.3 + 0.7 x 0.5 = 0.65; the journal now hits 1 of 3 = 0.333
    assert "salience 0.500 (logged) · weight 0.3 + 0.7×0.500 = 0.650" in lines
    assert "⚠ now 1/3 keywords hit: salience 0.333; the log's 0.500 counts" in lines
    assert not any("keywords = 0.500" in line for line in lines)
    assert CHANGED not in lines  # the journal is as recorded


async def test_a_journal_changed_since_with_the_same_salience_says_so(ws_root: Path) -> None:
    """On the old code nothing on the screen said so, while `show` and `explain` warn."""
    journal = ws_root / "state" / "journals" / "s1.md"
    journal.write_text(journal.read_text(encoding="utf-8") + "Nothing more.\n", encoding="utf-8")
    lines = await story_lines(ws_root)
    assert "salience 1/2 keywords = 0.500 · weight 0.3 + 0.7×0.500 = 0.650" in lines  # still 1 of 2: as logged
    assert CHANGED in lines
    assert not any(line.startswith("⚠ now") for line in lines)


async def test_a_journal_edited_to_hit_fewer_keywords_says_both_in_view(ws_root: Path) -> None:
    """The operator's case: "git worktree" spelt otherwise, so the journal hits 0 of 2 now."""
    journal = ws_root / "state" / "journals" / "s1.md"
    journal.write_text(journal.read_text(encoding="utf-8").replace("git worktree", "g-i-t worktree"), encoding="utf-8")
    lines = await story_lines(ws_root)
    assert "salience 0.500 (logged) · weight 0.3 + 0.7×0.500 = 0.650" in lines
    assert "⚠ now 0/2 keywords hit: salience 0.000; the log's 0.500 counts" in lines
    assert CHANGED in lines


async def test_an_unchanged_session_reads_as_before(ws_root: Path) -> None:
    lines = await story_lines(ws_root)
    assert "salience 1/2 keywords = 0.500 · weight 0.3 + 0.7×0.500 = 0.650" in lines
    assert not any(line.startswith("⚠") for line in lines)
