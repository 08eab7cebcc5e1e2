"""The record panel's judge line: dim exactly when it says a judge's score logged since replaces the record's;
after a retraction of the logged one, the record's judge score counts again and its line is not dim."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from lesson_credit.core.api import SourceScore
from lesson_credit.core.sessions.record_file import Record, record_lines
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.records_views import SessionOutside, outside_view
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.widgets.record_panel import outside_text
from tests.tui.records_fixture import build_records_workspace
from tests.tui.tui_fixture import fixed_clock


def judge_line(text: Text) -> tuple[str, bool]:
    """The panel's judge line and whether it is dim."""
    start = text.plain.index("\njudge ") + 1
    end = text.plain.index("\n", start)
    dim = any(span.style == "dim" and span.start <= start and span.end >= end for span in text.spans)
    return text.plain[start:end], dim


def test_a_withdrawn_judge_score_does_not_dim_the_records_judge_line() -> None:
    """Sources where the log's judge score is withdrawn (line 7) and no record's counts instead: the line
    says no logged score replaces the record's, so it is not dim. The panel dimmed it for any judge event in
    the log, a retraction too, saying nothing of why (its line and `show`'s did not say "replaced")."""
    record = Record("s1", 1, llm_judge_score=0.32, llm_judge_model="haiku", llm_judge_reason="reverted")
    withdrawn = SourceScore("judge", None, "judge", 7, "2026-10-23T23:45:00Z", False)
    lines = tuple(record_lines(record, {}, outcomes={}, logged_judge=None))
    outside = SessionOutside("s1", True, lines, None, (withdrawn,), None, None)
    assert judge_line(outside_text(outside)) == ("judge 0.32 (haiku): reverted", False)


def test_after_the_logged_judge_score_is_retracted_the_records_counts_again_and_says_so(tmp_path: Path) -> None:
    """s4's record says judge 0.7; the judge's 0.6 logged over it replaces it (dim line, "replaced by ... line
    8"); once that is retracted, the record's 0.7 is the judge's score in force again: its line is plain, and
    the sources name it (record:judge)."""
    root = build_records_workspace(tmp_path / "ws")
    ws = Workspace(root, clock=fixed_clock)
    ws.grade("s4", 0.6, grader="judge")  # the fixture logs s1..s4 (lines 1-4), then 3 manual grades (5-7)
    reason = "Fixed the worktree but skipped the flaky test."
    outside = outside_view(WorkspaceSource(Workspace(root, clock=fixed_clock)), "s4")
    replaced = (
        "judge 0.70 (claude-haiku-4-5), replaced by the judge's 0.60 logged on line 8, the score in force; "
        "the record's reason: "
    )
    assert judge_line(outside_text(outside)) == (replaced + reason, True)
    ws.grade("s4", None, grader="judge")
    outside = outside_view(WorkspaceSource(Workspace(root, clock=fixed_clock)), "s4")
    assert judge_line(outside_text(outside)) == ("judge 0.70 (claude-haiku-4-5): " + reason, False)
    judge = next(s for s in outside.sources if s.source == "judge")
    assert (judge.score, judge.grader, judge.line, judge.in_force) == (0.7, "record:judge", None, True)


def test_under_a_persons_grade_the_line_says_neither_judge_score_counts(tmp_path: Path) -> None:
    """s1: a person's 0.7 is in force (line 5), its record's judge says 0.3, and the judge's 0.58 is logged since
    (line 8). The line said the 0.58 "counts instead", which it does not: a person's grade ranks above the judge's
    under the default priority. It now says neither judge score counts and which grade does, as `show` does."""
    root = build_records_workspace(tmp_path / "ws")
    Workspace(root, clock=fixed_clock).grade("s1", 0.58, grader="judge")  # line 8 (s1..s4, then 3 grades)
    outside = outside_view(WorkspaceSource(Workspace(root, clock=fixed_clock)), "s1")
    forcing = [(s.source, s.score, s.grader) for s in outside.sources if s.in_force]
    assert forcing == [("human", 0.7, "manual")]  # what the line must name
    said = (
        "judge 0.30 (claude-haiku-4-5), replaced by the judge's 0.58 logged on line 8; neither counts: a person's "
        "grade, 0.70 (manual), is in force; the record's reason: Fixed the worktree but skipped the flaky test."
    )
    assert judge_line(outside_text(outside)) == (said, True)
    assert outside_text(outside, compact=True).plain.splitlines()[0] == said  # the 80x24 panel's first line
