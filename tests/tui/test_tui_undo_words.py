"""What the dashboard says about an undo, in one voice: an undo of one of its commits and one of a grade from
the log are confirmed alike, from what the engine found it undid, and a refusal says "you" of the operator's
grades to the person at the keys, from why the engine found nothing to undo. The fixture logs four lines
(s1..s4) before these grades."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.grading import GradeConflict, NothingToUndo, Undone, UndoRefusal
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.undo_words import refusal, undone
from lesson_credit.tui.writes import WriteQueue
from tests.tui.tui_fixture import log_lines


def drained(queue: WriteQueue, source: WorkspaceSource) -> list[str]:
    messages = []
    assert queue.start_draining()
    while (write := queue.take()) is not None:
        outcome = queue.apply(source, write)
        if not outcome.written:
            queue.refused(write)
        messages.append(outcome.message)
    return messages


def test_an_undo_of_a_commit_and_of_a_grade_from_the_log_are_confirmed_alike(workspace: Workspace) -> None:
    """manual's 0.5 on s4 from before (line 5); the dashboard commits 0.8 (line 6), then `u u`: its 0.8 back to
    the 0.5, then the log's 0.5 back to pending. On the old code the first said "Undo on s4: back to 0.5 (reverts
    line 6)." and the second "Undo on s4: undid manual's grade on line 5: 0.5 back to pending."."""
    Workspace(workspace.root).append_grade("s4", 0.5, grader="manual")
    source, queue = WorkspaceSource(workspace), WriteQueue()
    queue.commit("s4", 0.8, None, shown=0.5)
    drained(queue, source)
    queue.undo("s4")
    queue.undo("s4")
    assert drained(queue, source) == [
        "Undid your grade on s4 (line 6): 0.8 back to 0.5.",
        "Undid your grade on s4 (line 5): 0.5 back to pending.",
    ]
    notes = [e.get("note") for e in log_lines(workspace.root) if e.get("type") == "grade"][2:]
    assert notes == [
        "undid manual's grade on line 6: 0.8 back to 0.5",
        "undid manual's grade on line 5: 0.5 back to pending",
    ]


def test_refusals_name_the_operators_grades_as_yours(workspace: Workspace, ws_root: Path) -> None:
    """alice grades s2 (line 5): `u` finds no grade of yours left. The dashboard's 0.3 on s1 (line 6), graded over
    by alice (line 7): `u` is refused, alice's grade replaced yours. On the old code they said "manual has no
    grade" and "replaced manual's on line 6"."""
    Workspace(ws_root).append_grade("s2", 0.9, grader="alice")
    source, queue = WorkspaceSource(workspace), WriteQueue()
    queue.undo("s2")
    queue.commit("s1", 0.3, None, shown=0.8)
    assert drained(queue, source)[0] == (
        "Nothing to undo on s2: you have no grade on session 's2' left (the latest, alice's 0.9 on line 5, is "
        "theirs to undo)."
    )
    Workspace(ws_root).append_grade("s1", 0.5, grader="alice")
    queue.undo("s1")
    assert drained(queue, source) == [
        "Not undone on s1: alice's grade on line 7 replaced yours on line 6 of session 's1' since (undoing it would "
        "withdraw theirs); nothing was written. u again undoes your latest grade there, as lesson-credit undo does."
    ]


def test_a_refusal_naming_another_grader_whose_name_ends_with_the_operators_names_them_as_they_are(
    workspace: Workspace, ws_root: Path
) -> None:
    """ "bob manual" grades s2 (line 5) and undoes it (line 6): `u` finds nothing of yours to undo, and bob manual's
    grades are undone. On the old code the rewrite of the engine's words into "you" made that "bob your grades"."""
    Workspace(ws_root).append_grade("s2", 0.9, grader="bob manual")
    Workspace(ws_root).append_undo("s2", grader="bob manual")
    source, queue = WorkspaceSource(workspace), WriteQueue()
    queue.undo("s2")
    assert drained(queue, source) == [
        "Nothing to undo on s2: you have no grade on session 's2' (bob manual's grades there are undone already or "
        "changed nothing)."
    ]


# each kind of refusal the engine finds, and what the dashboard says of it (written out by hand)
REFUSALS = [
    (UndoRefusal("pending", "s1", "manual"), "session 's1' is pending"),
    (UndoRefusal("record_only", "s1", "manual"), "session 's1' is scored only by its record (no grade)"),
    (
        UndoRefusal("theirs", "s1", "manual", "judge", None, 3),
        "you have no grade on session 's1' left (the latest, judge's retraction on line 3, is theirs to undo)",
    ),
    (
        UndoRefusal("theirs", "s1", "manual", "judge", 0.725, 3),
        "you have no grade on session 's1' left (the latest, judge's 0.725 on line 3, is theirs to undo)",
    ),
    (
        UndoRefusal("undone_already", "s1", "manual"),
        "your grades on session 's1' are undone already or changed nothing",
    ),
    (
        UndoRefusal("no_grade", "s1", "manual", others=("alice", "bob", "erik")),
        "you have no grade on session 's1' (alice's, bob's and erik's grades there are undone already or changed "
        "nothing)",
    ),
    (
        UndoRefusal("replaced", "s1", "manual", "alice", other_line=7, line=6),
        "alice's grade on line 7 replaced yours on line 6 of session 's1' since (undoing it would withdraw theirs); "
        "nothing was written",
    ),
    (
        UndoRefusal("moved", "s1", "manual", line=6),
        "session 's1' was graded elsewhere since line 6; nothing was written",
    ),
]


def test_each_refusal_is_worded_for_the_operator_from_what_the_engine_found() -> None:
    for found, said in REFUSALS:
        error = GradeConflict if found.kind in ("replaced", "moved") else NothingToUndo
        assert refusal(error("the engine's words", found)) == said, found.kind
    assert refusal(GradeConflict("s1 was graded elsewhere since")) == "s1 was graded elsewhere since"  # none: its text


def test_an_undo_is_confirmed_from_what_it_undid() -> None:
    """The score in force after it, named by its source when that is another's; the undoer's words after it."""
    assert undone("s4", Undone("s4", "manual", 398, 0.7, None, None), None) == (
        "Undid your grade on s4 (line 398): 0.7 back to pending."
    )
    assert undone("s4", Undone("s4", "manual", 5, 0.9, 0.4, 0.7, "heuristic", "typo"), None) == (
        "Undid your grade on s4 (line 5): 0.9 back to 0.7 (heuristic); typo."
    )
    assert undone("s4", None, "reverts to 0.5") == "Undo on s4: reverts to 0.5."  # (not known: its logged note)
