"""An undo's result and its refusals as the engine finds them (`Undone`, `UndoRefusal`), and the engine's words for
them: the note it logs and what `lesson-credit undo` prints, the same bytes as before the result had fields (the
strings below are the ones the engine wrote then, written out by hand, not built by the code)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.core.grading import GradeConflict, NothingToUndo, Undone, UndoRefusal, undo_words
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, grade, make_workspace, session

S = {"a.md": 1.0}
# lines 1-6: the sessions (s2's record gives the judge's 0.6); 7: the judge's 0.9 on s3; 8, 9: manual's 0.4 then
# erik's 0.7 on s4 (the same source, people's); 10: bob manual's 0.5 on s5; 11: manual's 0.3 on s6
EVENTS = [
    session("s1", None, S),
    session("s2", 0.6, S, grader="judge"),
    *(session(sid, None, S) for sid in ("s3", "s4", "s5", "s6")),
    grade("s3", 0.9, "judge"),
    grade("s4", 0.4),
    grade("s4", 0.7, "erik"),
    grade("s5", 0.5, "bob manual"),
    grade("s6", 0.3),
]

# each refusal of manual's undo, as the engine said it before (and `lesson-credit undo` after "lesson-credit: ")
PENDING = "nothing to undo: session 's1' is pending"
RECORD_ONLY = "nothing to undo: session 's2' is scored only by its record (no grade)"
THEIRS = (
    "nothing to undo: manual has no grade on session 's3' left (the latest, judge's 0.9 on line 7, is theirs to undo)"
)
REPLACED = (
    "not undone: erik's grade on line 9 replaced manual's on line 8 of session 's4' since (undoing it would withdraw "
    "theirs); nothing was written"
)
NO_GRADE = (
    "nothing to undo: manual has no grade on session 's5' (bob manual's grades there are undone already or changed "
    "nothing)"
)
UNDONE_ALREADY = "nothing to undo: manual's grades on session 's2' are undone already or changed nothing"
MOVED = "session 's6' was graded elsewhere since line 11; nothing was written"


def refusal_of(ws: Workspace, sid: str, line: int | None = None) -> NothingToUndo | GradeConflict:
    log = (ws.root / LOG_REL).read_bytes()
    with pytest.raises((NothingToUndo, GradeConflict)) as refused:
        ws.append_undo(sid, line=line)
    assert (ws.root / LOG_REL).read_bytes() == log  # refused: nothing written
    assert isinstance(refused.value, NothingToUndo | GradeConflict)
    return refused.value


def test_an_undo_and_each_refusal_carry_what_the_engine_found_and_say_what_it_said_before(tmp_path: Path) -> None:
    ws = Workspace(make_workspace(tmp_path, {"a.md": (["alpha"], "active")}, EVENTS))
    cases = [
        ("s1", PENDING, NothingToUndo, UndoRefusal("pending", "s1", "manual")),
        ("s2", RECORD_ONLY, NothingToUndo, UndoRefusal("record_only", "s2", "manual")),
        ("s3", THEIRS, NothingToUndo, UndoRefusal("theirs", "s3", "manual", "judge", 0.9, 7)),
        ("s4", REPLACED, GradeConflict, UndoRefusal("replaced", "s4", "manual", "erik", other_line=9, line=8)),
    ]
    for sid, said, kind, found in cases:
        exc = refusal_of(ws, sid)
        assert (type(exc), str(exc), exc.refusal) == (kind, said, found), sid
        assert undo_words(found) == said
    assert isinstance(exc := refusal_of(ws, "s3"), NothingToUndo) and exc.other == "judge"  # (the CLI names them)

    undo = ws.append_undo("s5", grader="bob manual")  # line 12: bob manual's 0.5 back to pending
    assert undo.undo == Undone("s5", "bob manual", 10, 0.5, None, None)
    assert undo.record.note == "undid bob manual's grade on line 10: 0.5 back to pending"
    exc = refusal_of(ws, "s5")
    assert (str(exc), exc.refusal) == (NO_GRADE, UndoRefusal("no_grade", "s5", "manual", others=("bob manual",)))

    undo = ws.append_undo("s6", note="typo")  # line 13: manual's 0.3 back to pending, with their words
    assert undo.undo == Undone("s6", "manual", 11, 0.3, None, None, None, "typo")
    assert undo.record.note == "undid manual's grade on line 11: 0.3 back to pending; typo"
    assert ws.append_grade("s6", 0.8).record.line == 14
    exc = refusal_of(ws, "s6", line=11)  # the latest of manual's is line 14's now
    assert (type(exc), str(exc), exc.refusal) == (GradeConflict, MOVED, UndoRefusal("moved", "s6", "manual", line=11))

    assert ws.append_grade("s2", 0.9).record.line == 15
    undo = ws.append_undo("s2")  # line 16: no person's score left, the record's judge 0.6 in force again
    assert undo.undo == Undone("s2", "manual", 15, 0.9, None, 0.6, "judge")
    assert undo.record.note == "undid manual's grade on line 15: 0.9 back to 0.6 (judge)"
    exc = refusal_of(ws, "s2")
    assert (str(exc), exc.refusal) == (UNDONE_ALREADY, UndoRefusal("undone_already", "s2", "manual"))


def test_lesson_credit_undo_prints_what_it_printed_before(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {"a.md": (["alpha"], "active")}, EVENTS)
    for sid, said in (("s1", PENDING), ("s2", RECORD_ONLY), ("s4", REPLACED)):
        assert run_cli("undo", sid, "--workspace", str(root)) == (1, "", f"lesson-credit: {said}\n"), sid
    they = "; they undo it with: lesson-credit undo s3 --grader judge"
    assert run_cli("undo", "s3", "--workspace", str(root)) == (1, "", f"lesson-credit: {THEIRS}{they}\n")
    code, out, err = run_cli("undo", "s5", "--grader", "bob manual", "--workspace", str(root))
    assert (code, out.splitlines()[0]) == (0, "s5: undid bob manual's grade on line 10: 0.5 back to pending"), err
    assert run_cli("undo", "s5", "--workspace", str(root)) == (1, "", f"lesson-credit: {NO_GRADE}\n")
