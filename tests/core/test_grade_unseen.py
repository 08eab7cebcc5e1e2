"""A grade given without a question over what the grader was shown (`Workspace.append_grade(seen_line=...)`): under
the log's lock it is refused (GradeConflict, nothing written) when a grade event after the line shown comes from
a source the grade would replace or stand under (its own, or one the [rewards] priority ranks before it), and
written when it comes from a source ranked after it (a judge's score under a person's grade: the grade goes into
force over it as it would have)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.core.grading import GradeConflict
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, grade, log_bytes, make_workspace
from tests.support.retraction_log import BASE, LESSONS

JUDGE_FIRST = '[rewards]\npriority = ["judge", "human", "heuristic", "outcome"]\n'


def grades(ws: Workspace, sid: str) -> list[tuple[float | None, str, int]]:
    return [(g.base_reward, g.grader, g.line) for g in ws.grade_history(sid)]


@pytest.mark.parametrize("other", ["erik", "manual"])
def test_a_persons_grade_logged_after_the_line_shown_is_not_replaced(tmp_path: Path, other: str) -> None:
    """s2 (line 2) is pending with no grade event: shown at line 2, another person's 0.3 lands on line 3 (erik's,
    or one logged as manual from another shell: the grader never saw it either); the 0.8 is refused."""
    root = make_workspace(tmp_path, LESSONS, [*BASE, grade("s2", 0.3, other)])
    ws = Workspace(root, clock=fixed_clock)
    before = log_bytes(root)
    with pytest.raises(GradeConflict, match=rf"graded by {other} \(0.3, line 3\) since line 2; nothing was written"):
        ws.append_grade("s2", 0.8, grader="manual", seen_line=2)
    assert log_bytes(root) == before
    # shown at line 3 (the 0.3 was on the screen), the same grade is written
    assert ws.append_grade("s2", 0.8, grader="manual", seen_line=3).record.line == 4


def test_a_judges_score_after_the_line_shown_does_not_refuse_a_persons_grade(tmp_path: Path) -> None:
    """The judge ranks after people by default: its 0.9 logged since is no grade the 0.8 replaces. Written at
    line 4, and in force (0.8, manual)."""
    root = make_workspace(tmp_path, LESSONS, [*BASE, grade("s2", 0.9, "judge")])
    ws = Workspace(root, clock=fixed_clock)
    appended = ws.append_grade("s2", 0.8, grader="manual", seen_line=2)
    assert appended.record.line == 4
    assert appended.in_force is not None and (appended.in_force.base_reward, appended.in_force.grader) == (
        0.8,
        "manual",
    )
    assert grades(ws, "s2") == [(0.9, "judge", 3), (0.8, "manual", 4)]


def test_a_heuristic_retraction_after_the_line_shown_does_not_refuse(tmp_path: Path) -> None:
    """s1's record scores it (heuristic 0.4, line 1); the heuristic withdraws it on line 3 (ranked after people)."""
    root = make_workspace(tmp_path, LESSONS, [*BASE, grade("s1", None, "heuristic")])
    ws = Workspace(root, clock=fixed_clock)
    assert ws.append_grade("s1", 0.7, grader="manual", seen_line=2).record.line == 4


def test_a_judges_score_ranked_before_people_refuses(tmp_path: Path) -> None:
    """Under judge-first priority the judge's score keeps a person's grade out of force (the dashboard asks before
    such a grade): one logged since the line shown refuses it; before the line shown, it does not."""
    root = make_workspace(tmp_path, LESSONS, [*BASE, grade("s2", 0.9, "judge")], config=JUDGE_FIRST)
    ws = Workspace(root, clock=fixed_clock)
    before = log_bytes(root)
    with pytest.raises(GradeConflict, match=r"graded by judge \(0.9, line 3\) since line 2"):
        ws.append_grade("s2", 0.8, grader="manual", seen_line=2)
    assert log_bytes(root) == before
    assert ws.append_grade("s2", 0.8, grader="manual", seen_line=3).record.line == 4


def test_the_rule_is_the_graders_source(tmp_path: Path) -> None:
    """Whoever grades: a judge's score (default priority) is refused over another judge's score since (the same
    source), not over a heuristic's (ranked after it)."""
    events = [*BASE, grade("s2", 0.2, "llm-judge"), grade("s2", 0.5, "heuristic")]
    ws = Workspace(make_workspace(tmp_path, LESSONS, events), clock=fixed_clock)
    with pytest.raises(GradeConflict, match=r"graded by llm-judge \(0.2, line 3\) since line 2"):
        ws.append_grade("s2", 0.9, grader="judge", seen_line=2)
    assert ws.append_grade("s2", 0.9, grader="judge", seen_line=3).record.line == 5  # (the heuristic's on line 4)


def test_without_seen_line_nothing_is_checked(tmp_path: Path) -> None:
    """The CLI's `grade` (no line shown: it replaces what is there as told)."""
    root = make_workspace(tmp_path, LESSONS, [*BASE, grade("s2", 0.3, "erik")])
    assert Workspace(root, clock=fixed_clock).append_grade("s2", 0.8, grader="manual").record.line == 4
