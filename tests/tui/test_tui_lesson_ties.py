"""Lessons with equal means are listed in id order, as `status` lists them: sorted by mean descending, the
dashboard put a tie in reverse id order, so its ranking and the command line's disagreed."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from tests.tui.tui_fixture import fixed_clock, lesson, settle, table_keys


async def test_equal_means_are_listed_in_id_order(tmp_path: Path) -> None:
    """`a/alpha.md` and `a/beta.md` have the same keywords and were injected in the same two sessions, so
    their posteriors are equal (same n, same mean); `z/low.md` was in the 0.2 session only. By hand: mean
    descending, the tie in id order: alpha, beta, then low (`status --json` lists them so)."""
    for lesson_id, words in (("a/alpha.md", ["pytest"]), ("a/beta.md", ["pytest"]), ("z/low.md", ["commit"])):
        path = tmp_path / "lessons" / lesson_id
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(lesson(words, lesson_id), encoding="utf-8")
    journal = tmp_path / "journal.md"
    journal.write_text("Ran pytest, then made a commit.\n", encoding="utf-8")
    ws = Workspace(tmp_path, clock=fixed_clock)
    ws.record("s1", journal, ["a/alpha.md", "a/beta.md"], reward=0.9, category="code")
    ws.record("s2", journal, ["a/alpha.md", "a/beta.md", "z/low.md"], reward=0.2, category="code")
    rows = {r.path: r for r in Workspace(tmp_path).lesson_table(details=False).rows}
    assert rows["a/alpha.md"].mean == rows["a/beta.md"].mean and rows["a/alpha.md"].n == rows["a/beta.md"].n == 2
    assert rows["z/low.md"].mean < rows["a/alpha.md"].mean
    app = LessonCreditApp(Workspace(tmp_path, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#lessons-table")
        assert table_keys(table) == ["a/alpha.md", "a/beta.md", "z/low.md"]  # type: ignore[arg-type]
        await pilot.press("r")  # ascending: the tie still in id order
        await settle(pilot)
        assert table_keys(table) == ["z/low.md", "a/alpha.md", "a/beta.md"]  # type: ignore[arg-type]
