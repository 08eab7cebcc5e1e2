"""The grade events found by row (core/log/graded.py) are the ones a pass over every grade event finds, as the
index grows: a grade read before its session is placed when the session is read, one naming no session never."""

from __future__ import annotations

from lesson_credit.core.log.events import GradeEvent, SessionEvent
from lesson_credit.core.log.graded import GradedRows
from lesson_credit.core.log.index import LogIndex


def _session(session_id: str) -> SessionEvent:
    return SessionEvent(session_id=session_id, timestamp=None, base_reward=None, lesson_ids=("a.md",), saliences=(1.0,))


def _grade(session_id: str, note: str | None = None) -> GradeEvent:
    return GradeEvent(session_id=session_id, base_reward=0.5, grader="manual", timestamp=None, note=note)


def _undo(note: str) -> bool:
    return note.startswith("undid")


def test_grades_by_row_follow_the_index_as_it_grows() -> None:
    index = LogIndex()
    graded = GradedRows(index)
    index.add(1, _grade("s2", "undid x"))  # before its session: row unknown when read
    index.add(2, _session("s1"))
    index.add(3, _grade("s1"))
    index.add(4, _grade("nobody", "undid y"))  # names no session, ever
    # rows: s1 is row 0; s2 is not read yet
    assert graded.positions(0) == [1]
    assert graded.rows_noted(_undo, 10) == []
    index.add(5, _session("s2"))  # row 1: the grade on line 1 (position 0) is its
    index.add(6, _grade("s1", "undid z"))
    index.add(7, _grade("s2"))
    # by hand: positions 0 (s2, line 1), 1 (s1, line 3), 2 (nobody), 3 (s1, line 6), 4 (s2, line 7)
    assert graded.positions(0) == [1, 3]
    assert graded.positions(1) == [0, 4]  # the grade read before its session placed, in log order
    assert graded.rows_noted(_undo, 10) == [0, 1]
    assert graded.rows_noted(_undo, 1) == [0]  # rows below n only
    assert [index.grades[position][0] for position in graded.positions(1)] == [1, 7]  # their lines
