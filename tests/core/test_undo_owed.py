"""Who gave the score in force after undos, on every face (explain, the session's summary, the sessions table
and `sessions --json`, `show`), and what a refused undo says when others' grades are there but none is left
to take back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.grading import NothingToUndo
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import grade, make_workspace, session

LESSONS = {"a.md": (["alpha"], "active")}
S1 = {"a.md": 1.0}
PUBLISHED = {"session_id": "s1", "base_reward": 0.6, "lessons": [{"path": "a.md", "salience": 1.0}]}

# (events, undoers in turn, a gptme-sessions record's judge score or None, the score in force afterwards and
# who gave it), worked out by hand from the default priority (human, judge, heuristic, outcome):
CASES: list[tuple[str, list[dict[str, Any]], list[str], float | None, float | None, str | None]] = [
    # the record's own judge 0.6; manual's 0.9 undone: a retraction of the people's source, the judge's 0.6 rules
    ("judge-own", [session("s1", 0.6, S1, grader="judge"), grade("s1", 0.9, "manual")], ["manual"], None, 0.6, "judge"),
    # the record names no grader: its 0.6 is a heuristic score; auto's 0.9 undone logs 0.6 under auto: not theirs
    ("heuristic-own", [session("s1", 0.6, S1), grade("s1", 0.9, "auto")], ["auto"], None, 0.6, "heuristic"),
    # the same for another tool's line in the published shape: 'imported'
    ("imported-own", [PUBLISHED, grade("s1", 0.9, "auto")], ["auto"], None, 0.6, "imported"),
    # llm (the judge's source) 0.9 over the record's judge 0.6, undone: the 0.6 logged under llm is the record's
    ("judge-source", [session("s1", 0.6, S1, grader="judge"), grade("s1", 0.9, "llm")], ["llm"], None, 0.6, "judge"),
    # a person's own record (erik 0.6); manual's 0.9 undone back to erik's 0.6
    ("person-own", [session("s1", 0.6, S1, grader="erik"), grade("s1", 0.9, "manual")], ["manual"], None, 0.6, "erik"),
    # manual twice over the record's judge, both undone: 0.9 back to 0.7 (manual's), then withdrawn: the judge's
    (
        "two-undos",
        [session("s1", 0.6, S1, grader="judge"), grade("s1", 0.7, "manual"), grade("s1", 0.9, "manual")],
        ["manual", "manual"],
        None,
        0.6,
        "judge",
    ),
    # pending, with a gptme-sessions record's judge 0.3: manual's 0.9 undone, the record's score counts
    ("records-judge", [session("s1", None, S1), grade("s1", 0.9, "manual")], ["manual"], 0.3, 0.3, "record:judge"),
    # pending and nothing else: pending again, nobody's
    ("pending", [session("s1", None, S1), grade("s1", 0.9, "manual")], ["manual"], None, None, None),
]


@pytest.mark.parametrize(
    ("events", "undoers", "judge", "score", "grader"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_every_face_names_who_gave_the_score_in_force_after_undos(
    tmp_path: Path,
    events: list[dict[str, Any]],
    undoers: list[str],
    judge: float | None,
    score: float | None,
    grader: str | None,
) -> None:
    root = make_workspace(tmp_path, LESSONS, events)
    if judge is not None:
        records = root / "state/sessions/session-records.jsonl"
        records.parent.mkdir(parents=True)
        records.write_text(json.dumps({"session_id": "s1", "llm_judge_score": judge}) + "\n")
    for undoer in undoers:
        Workspace(root).undo_grade("s1", grader=undoer)
    ws = Workspace(root)
    assert ws.session("s1").base_reward == score
    assert ws.session("s1").grader == grader
    assert ws.explain("s1").session.grader == grader
    assert ws.session_table().graders[0] == grader
    code, out, _ = run_cli("sessions", "--json", "--workspace", str(root))
    assert code == 0 and [s["grader"] for s in json.loads(out)["sessions"]] == [grader]
    code, out, _ = run_cli("show", "s1", "--json", "--workspace", str(root))
    assert code == 0 and (json.loads(out)["base_reward"], json.loads(out)["grader"]) == (score, grader)


def _refusal(root: Path, undoer: str = "manual") -> str:
    with pytest.raises(NothingToUndo) as refused:
        Workspace(root).undo_grade("s1", grader=undoer)
    return str(refused.value)


def test_a_refusal_names_the_grades_that_changed_nothing(tmp_path: Path) -> None:
    """The record's judge 0.6, then llm's 0.6 (the judge's source, the same score: it changed nothing, so no undo
    takes it back). manual has no grade there: the refusal said the session was "scored only by its record (no
    grade)", though llm graded it."""
    events = [session("s1", 0.6, S1, grader="judge"), grade("s1", 0.6, "llm")]
    root = make_workspace(tmp_path, LESSONS, events)
    assert _refusal(root) == (
        "nothing to undo: manual has no grade on session 's1' (llm's grades there are undone already or changed "
        "nothing)"
    )


def test_a_refusal_names_the_others_whose_grades_are_undone(tmp_path: Path) -> None:
    events = [session("s1", 0.6, S1), grade("s1", 0.5, "erik"), grade("s1", 0.8, "judge")]
    root = make_workspace(tmp_path, LESSONS, events)
    Workspace(root).undo_grade("s1", grader="judge")
    Workspace(root).undo_grade("s1", grader="erik")  # the record's own 0.6 is in force again
    assert _refusal(root) == (
        "nothing to undo: manual has no grade on session 's1' (erik's and judge's grades there are undone already "
        "or changed nothing)"
    )
    code, _, err = run_cli("undo", "s1", "--workspace", str(root))
    assert code == 1 and "(erik's and judge's grades there are undone already or changed nothing)" in err


def test_a_session_with_no_grade_event_is_scored_only_by_its_record(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, [session("s1", 0.6, S1, grader="judge")])
    assert _refusal(root) == "nothing to undo: session 's1' is scored only by its record (no grade)"
