"""What the dashboard says about an undo, in one voice: an undo of one of its commits and one of a grade from
the log are confirmed alike, from the note the engine logs, and a refusal that names the operator's grades
("manual's") says "you" to the person at the keys. The fixture logs four lines (s1..s4) before these grades."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.source import WorkspaceSource
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
