"""A grade with base_reward null retracts: the session is pending again (docs/format.md §5.3), on every read path."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.core.grading import GradeConflict
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, grade, log_bytes, make_workspace, session
from tests.support.retraction_log import BASE, LESSONS, retraction


def numbers(ws: Workspace) -> dict[str, tuple[float, float, int]]:
    return {r.path: (round(r.alpha, 12), round(r.beta, 12), r.n) for r in ws.lesson_table().rows}


# BASE (retraction_log) without any grade of s2, by hand (seed: alpha += base*w, beta += 1 - base*w; prior 1, 1):
#   a: alpha 1 + 0.4 = 1.4, beta 1 + 0.6 = 1.6, n 1;  b: the prior, n 0
WITHOUT_S2 = {"a.md": (1.4, 1.6, 1), "b.md": (1.0, 1.0, 0)}


@pytest.mark.parametrize("use_cache", [False, True])
def test_a_retraction_folds_as_if_the_session_had_no_grade(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, use_cache: bool
) -> None:
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)  # the cache path is taken on a tiny log too
    root = make_workspace(tmp_path, LESSONS, [*BASE, grade("s2", 0.6), retraction("s2")])
    Workspace(root, use_cache=use_cache).data()  # writes the cache (when on); the second read uses it
    ws = Workspace(root, use_cache=use_cache)
    assert numbers(ws) == WITHOUT_S2
    assert ws.session("s2").pending and ws.session("s2").grader is None
    assert [s.pending for s in ws.sessions()] == [False, True]
    history = ws.grade_history("s2")
    assert [(g.base_reward, g.grader) for g in history] == [(0.6, "manual"), (None, "manual")]
    explained = ws.explain("s2")
    assert explained.base_reward is None
    assert all(c.alpha_delta == 0 and c.beta_delta == 0 for c in explained.lessons)


def test_the_latest_event_wins_over_a_retraction(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, [*BASE, grade("s2", 0.6), retraction("s2"), grade("s2", 0.5)])
    # s2 at 0.5: a += 0.5*0.3 = 0.15 -> alpha 1.55, beta 1.6 + 0.85 = 2.45, n 2; b: 1.5, 1.5, 1
    assert numbers(Workspace(root)) == {"a.md": (1.55, 2.45, 2), "b.md": (1.5, 1.5, 1)}


def test_retracting_a_logged_grade_makes_the_session_pending(tmp_path: Path) -> None:
    # s1 was logged with 0.4 by the heuristic: a retraction in that source withdraws it (docs/format.md §5.3)
    root = make_workspace(tmp_path, LESSONS, [*BASE, retraction("s1", grader="heuristic")])
    ws = Workspace(root)
    assert ws.session("s1").pending
    assert numbers(ws) == {"a.md": (1.0, 1.0, 0), "b.md": (1.0, 1.0, 0)}


def test_a_retraction_withdraws_only_its_own_sources_score(tmp_path: Path) -> None:
    # reward sources (docs/records.md): a person's retraction withdraws that person's source, which never scored
    # s1; the heuristic's 0.4 from its record stays in force, and the posteriors are BASE's own
    root = make_workspace(tmp_path, LESSONS, [*BASE, retraction("s1")])
    ws = Workspace(root)
    assert (ws.session("s1").base_reward, ws.session("s1").grader) == (0.4, "heuristic")
    assert numbers(ws) == WITHOUT_S2


def test_a_grade_event_without_base_reward_is_still_a_problem(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, [*BASE, {"type": "grade", "session_id": "s1", "grader": "x"}])
    ws = Workspace(root)
    (problem,) = ws.log_problems()
    assert problem.line == 3 and "base_reward" in problem.reason
    assert not ws.session("s1").pending


def test_append_grade_reports_what_it_replaced_and_checks_the_expected_line(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, BASE)
    ws = Workspace(root, clock=fixed_clock)
    first = ws.append_grade("s2", 0.6, grader="manual")
    assert first.before is None and first.record.base_reward == 0.6 and first.record.line == 3
    undone = ws.append_grade("s2", None, grader="manual", note="undo", expect_line=3)
    assert undone.before_value == 0.6 and undone.record.base_reward is None and undone.record.line == 4
    assert numbers(Workspace(root)) == WITHOUT_S2
    before = log_bytes(root)
    with pytest.raises(GradeConflict):
        ws.append_grade("s2", 0.6, grader="manual", expect_line=3)  # line 4 is in force now
    assert log_bytes(root) == before
    # the session record's own grade is what a first regrade of s1 replaces
    over = ws.append_grade("s1", 0.9, grader="manual")
    assert over.before is not None and (over.before.base_reward, over.before.line) == (0.4, 1)


def test_lint_reports_sessions_whose_latest_grade_is_a_retraction(tmp_path: Path) -> None:
    from lesson_credit.core.health import WARNING, lint

    # s1: its record's 0.4, then retracted by its source (pending again, "was 0.4"). s2: 0.6, retracted,
    # regraded 0.5 (its latest event is a grade: not listed). s3: never graded (pending, nothing retracted).
    events = [*BASE, grade("s2", 0.6), retraction("s1", "heuristic"), retraction("s2"), grade("s2", 0.5)]
    events.append(session("s3", None, {"a.md": 1.0}))
    found = {f.code: f for f in lint(Workspace(make_workspace(tmp_path, LESSONS, events)))}
    f = found["grades-retracted"]
    assert f.severity == WARNING
    assert f.items == ("s1",)
    assert "was 0.4" in f.reasons[0]
    assert f.message == "1 session pending again, its latest grade retracted (an undo): s1"
