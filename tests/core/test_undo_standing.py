"""An undo logs, under the undoer's name, the score their grade replaced: a score they never gave. It must
not read as their grade anywhere: each person's score of a session is their latest grade still standing
(neither an undo nor undone), `show` names who gave the score in force, and Agreement compares only
grades people stand by. Before, erik 0.4 then manual 0.7 then manual's undo read as manual's 0.4 (and
agreed with erik's), and a refusal named a retraction as "erik's pending"."""

from __future__ import annotations

import math
from pathlib import Path

from lesson_credit.core.model.sources import HUMAN
from lesson_credit.core.reward_report import agreement_report
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import grade, make_workspace, session

LESSONS = {"a.md": (["alpha"], "active")}


def _undone_over_erik(tmp_path: Path) -> Path:
    """s1: erik 0.4 (line 2), manual 0.7 (line 3), manual undoes theirs (line 4: logged as manual 0.4)."""
    events = [session("s1", None, {"a.md": 1.0}), grade("s1", 0.4, "erik"), grade("s1", 0.7, "manual")]
    root = make_workspace(tmp_path, LESSONS, events)
    undo = Workspace(root).undo_grade("s1")
    assert (undo.base_reward, undo.grader, undo.line) == (0.4, "manual", 4)
    return root


def test_an_undo_is_not_the_undoers_grade_in_person_scores(tmp_path: Path) -> None:
    people = Workspace(_undone_over_erik(tmp_path)).person_scores()
    # erik's 0.4 stands; manual's only grade (0.7) is undone and the undo's 0.4 is not theirs: none
    assert people["erik"].tolist() == [0.4]
    assert math.isnan(people["manual"][0])


def test_an_earlier_grade_of_the_undoer_stands_after_the_undo(tmp_path: Path) -> None:
    events = [session("s1", None, {"a.md": 1.0}), grade("s1", 0.5, "manual"), grade("s1", 0.7, "manual")]
    root = make_workspace(tmp_path, LESSONS, events)
    Workspace(root).undo_grade("s1")  # 0.7 undone: manual's 0.5 (line 2) is theirs again
    assert Workspace(root).person_scores()["manual"].tolist() == [0.5]


def test_agreement_does_not_count_a_withdrawn_grade(tmp_path: Path) -> None:
    report = agreement_report(Workspace(_undone_over_erik(tmp_path)), "erik")
    # erik and manual: manual stands by no grade of s1, so no session both scored (it was 1, agreeing)
    assert [(p.source_a, p.source_b, p.n) for p in report.pairs if {p.source_a, p.source_b} == {"erik", "manual"}] == [
        ("erik", "manual", 0)
    ]


def test_show_names_who_gave_the_score_in_force(tmp_path: Path) -> None:
    root = _undone_over_erik(tmp_path)
    human = next(s for s in Workspace(root).reward_sources("s1") if s.source == HUMAN)
    assert (human.score, human.grader, human.line) == (0.4, "erik", 2)
    code, out, _ = run_cli("show", "s1", "--workspace", str(root))
    assert code == 0
    assert "grade     0.400 (erik)" in out.splitlines()
    assert "human 0.400 (erik, line 2) in force" in out


def test_a_refusal_names_a_retraction_as_one(tmp_path: Path) -> None:
    events = [session("s1", None, {"a.md": 1.0}), grade("s1", 0.7, "manual"), grade("s1", None, "erik")]
    root = make_workspace(tmp_path, LESSONS, events)
    code, _, err = run_cli("undo", "s1", "--grader", "judge", "--workspace", str(root))
    assert code != 0
    assert "the latest, erik's retraction on line 3, is theirs to undo" in err


def test_every_view_names_who_gave_the_score_in_force(tmp_path: Path) -> None:
    """`show` said erik; `explain` (the dashboard's grade bar reads it), the session's summary and the sessions
    table (`sessions`, the Sessions screen) still said manual, the undoer. And where the undo puts back the
    undoer's own earlier grade, it is theirs: manual."""
    root = _undone_over_erik(tmp_path)
    ws = Workspace(root)
    assert ws.explain("s1").session.grader == "erik"
    assert ws.session("s1").grader == "erik"
    assert ws.session_table().graders[0] == "erik"
    code, out, _ = run_cli("sessions", "--json", "--workspace", str(root))
    assert code == 0 and '"grader": "erik"' in out, out
    events = [session("s1", None, {"a.md": 1.0}), grade("s1", 0.5, "manual"), grade("s1", 0.7, "manual")]
    own = make_workspace(tmp_path / "own", LESSONS, events)
    Workspace(own).undo_grade("s1")
    assert Workspace(own).explain("s1").session.grader == "manual"
    assert Workspace(own).session_table().graders[0] == "manual"
