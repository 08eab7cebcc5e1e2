"""The grade events found by row (core/log/graded.py) are the ones a pass over every grade event finds, as the
index grows: a grade read before its session is placed when the session is read, one naming no session never."""

from __future__ import annotations

import random

from lesson_credit.core.log.events import GradeEvent, SessionEvent
from lesson_credit.core.log.graded import SCAN_EARLY, GradedRows
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


def test_a_row_found_by_a_scan_is_the_row_the_grouping_finds() -> None:
    """The first rows asked for are found by a scan of the index (no grouping of every grade event built for the
    one session a record shows), later ones by the grouping: both are the grades whose session id has the row,
    found here by looking each grade's id up (grades read before their session, and naming none, among them)."""
    rng = random.Random(7)
    index = LogIndex()
    line = 0
    for step in range(400):
        line += 1
        if step % 3 == 0:
            index.add(line, _session(f"s{step // 3}"))
        else:  # a grade of a session read, of one read later (up to 8 rows on), or of none ever
            index.add(line, _grade(f"s{rng.randrange(step // 3 + 8)}" if step % 17 else "nobody"))
    n = index.n_sessions
    expected = {
        row: [p for p, (_, g) in enumerate(index.grades) if index.row_of(g.session_id) == row] for row in range(n)
    }
    assert sum(len(found) for found in expected.values()) > 100  # (most grades name a session read)
    assert any(index.grade_rows[p] < 0 for found in expected.values() for p in found)  # some read early
    assert sum(1 for row in index.grade_rows if row < 0) <= SCAN_EARLY  # (few enough for a scan)
    for row in range(n):
        assert GradedRows(index).positions(row) == expected[row]  # a scan: the first row asked for
    grouped = GradedRows(index)
    assert [grouped.positions(row) for row in range(n)] == [expected[row] for row in range(n)]  # past the scans


def test_many_grades_read_before_their_session_are_looked_up_once() -> None:
    """A scan looks up the session of each grade read before it; with many such grades (orphans of pruned
    sessions, say) the first rows asked for would look them all up again each: they are grouped once instead."""
    index = LogIndex()
    index.add(1, _session("s0"))
    for line in range(2, 502):  # 500 grades of sessions never read
        index.add(line, _grade(f"gone{line}"))
    index.add(600, _grade("s0"))
    calls = 0
    row_of = index.row_of

    def counted(session_id: str) -> int | None:
        nonlocal calls
        calls += 1
        return row_of(session_id)

    index.row_of = counted  # type: ignore[method-assign]
    graded = GradedRows(index)
    assert [graded.positions(0) for _ in range(8)] == [[500]] * 8  # position 500: the grade on line 600
    assert calls <= 500  # each orphan looked up once (eight scans: 4,000)
