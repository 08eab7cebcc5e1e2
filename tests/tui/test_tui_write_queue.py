"""The write queue's own bookkeeping, without an app: what it remembers per session stays bounded, and
an undo refused puts back exactly what it found."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from lesson_credit.core.api import GradeConflict
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.write_state import Write
from lesson_credit.tui.writes import WriteQueue

BURST = 500  # sessions graded one after another in a long-running dashboard


class CountingSource:
    """Appends nothing: each grade gets the next line number (the queue only reads what an append returns)."""

    def __init__(self) -> None:
        self.lines = 0

    def append_grade(self, session_id: str, reward: float | None, **_: Any) -> SimpleNamespace:
        self.lines += 1
        record = SimpleNamespace(line=self.lines, base_reward=reward)
        return SimpleNamespace(
            record=record, before_value=None, before_own=None, outranked=False, in_force=None, warnings=()
        )

    def append_undo(self, session_id: str, **_: Any) -> SimpleNamespace:
        raise GradeConflict(f"{session_id} was graded elsewhere since")  # every undo is refused


def test_what_the_queue_keeps_for_refused_undos_does_not_grow_with_every_session_written() -> None:
    """Each session graded once, written, read back in the next snapshot: the map of each session's latest
    write (read only when an undo is refused) held all 500 on the old code; once read back, none is needed."""
    source = cast(WorkspaceSource, CountingSource())
    queue = WriteQueue()
    for n in range(BURST):
        sid = f"s{n}"
        queue.commit(sid, 0.5, None, shown=None)
        assert queue.start_draining()
        write = queue.take()
        assert write is not None and queue.apply(source, write).written
        queue.read_in(sid, n + 1)  # as the app's writer does: the snapshot at version n + 1 holds it
        assert queue.take() is None
        queue.settle(n + 1)
        assert len(queue._latest) <= 1, n
    assert queue._latest == {}
    assert not queue.touched()  # every write read back (the map's pruning changes nothing the screens read)
    assert all(queue.can_undo(f"s{n}") for n in (0, BURST - 1))  # the undo stacks stay for the dashboard's life


def test_a_refused_undo_puts_back_what_it_found_and_is_then_forgotten(workspace: Workspace) -> None:
    """s4 graded 0.6, written and read back at version 1 (settled); an undo of it refused (the grade is
    stored elsewhere since): the queue expects the 0.6 again, settled, read from version 1, as before the undo."""
    source = WorkspaceSource(workspace)
    queue = WriteQueue()
    commit = queue.commit("s4", 0.6, None, shown=None)
    assert queue.start_draining() and queue.take() is commit and queue.apply(source, commit).written
    queue.read_in("s4", 1)
    assert queue.take() is None
    queue.settle(1)
    assert "s4" not in queue.touched() and not queue.graded_unread("s4", 1)
    undo = queue.undo("s4")
    assert undo is not None and undo.kept is not None
    assert (undo.kept.expected, undo.kept.grade, undo.kept.settled, undo.kept.read_from) == (True, 0.6, True, 1)
    assert "s4" in queue.touched() and queue.expected("s4", None) is None  # the undo expects pending
    Workspace(workspace.root).grade("s4", 0.3, grader="alice")  # another person over it: the undo is refused
    assert queue.start_draining() and queue.take() is undo
    assert not queue.apply(source, undo).written
    assert queue.take() is None
    queue.refused(undo)
    assert "s4" not in queue.touched() and not queue.graded_unread("s4", 1)  # settled at version 1 again
    assert queue._latest == {}


def test_still_to_grade_leaves_out_the_sessions_graded_here_that_the_view_does_not_hold() -> None:
    """s2 graded here and read in at version 3; s3 graded here, not written yet; s4 graded then undone here
    (pending again, as every view will say); s1 never graded here. A view read at version 2 holds neither
    grade: s2 and s3 are left out. One read at 3 holds s2's: only s3 is left out. The order is kept."""
    source = cast(WorkspaceSource, CountingSource())
    queue = WriteQueue()
    queue.commit("s2", 0.5, None, shown=None)
    assert queue.start_draining()
    write = queue.take()
    assert write is not None and queue.apply(source, write).written
    queue.read_in("s2", 3)
    assert queue.take() is None
    queue.commit("s3", 0.7, None, shown=None)
    queue.commit("s4", 0.2, None, shown=None)
    queue.undo("s4")
    rows = [(0, "s1"), (1, "s2"), (2, "s3"), (3, "s4")]
    assert queue.still_to_grade(rows, 2, lambda row: row[1]) == [(0, "s1"), (3, "s4")]
    assert queue.still_to_grade(rows, 3, lambda row: row[1]) == [(0, "s1"), (1, "s2"), (3, "s4")]
    assert queue.still_to_grade(["s3", "s1"], 3, lambda sid: sid) == ["s1"]


def test_an_undo_refused_after_the_grade_it_undoes_was_read_back_still_puts_back_what_it_found() -> None:
    """s4's 0.6 is written; its undo is taken and refused by the writer; the snapshot holding the 0.6 lands
    (settle) before the refusal reaches the UI thread. The undo is the session's latest write and wrote
    nothing: it is not forgotten at that settle, so the refusal still puts the 0.6 back as expected."""
    source = cast(WorkspaceSource, CountingSource())
    queue = WriteQueue()
    commit = queue.commit("s4", 0.6, None, shown=None)
    assert queue.start_draining() and queue.take() is commit and queue.apply(source, commit).written
    queue.read_in("s4", 1)
    undo = queue.undo("s4")
    assert undo is not None and queue.take() is undo
    assert not queue.apply(source, undo).written
    assert queue.take() is None
    queue.settle(1)  # lands before the refusal's message
    assert queue.expected("s4", None) is None  # what the undo would have left: pending
    queue.refused(undo)
    assert queue.expected("s4", None) == 0.6
    assert queue._latest == {}


def test_the_persons_score_a_commit_replaces_is_as_typed_until_a_view_holds_the_writes() -> None:
    """What the replace question is asked about: a person's score, not the grade in force. s1: nothing
    written here, so the view's word counts; 0.3 committed over the judge's 0.6 (no person's grade),
    written and read back at version 1: a view read at version 0 predates it (the person's score is the
    typed 0.3; on a view pruned of its write the queue still knows), one read at 1 holds it (its own word,
    here 0.9: another person's since). Undone: the person's score before the commit as the log had it (the
    source says none). s2: 0.4 typed over a person's 0.8, undone before it was written: the typed 0.8."""
    source = cast(WorkspaceSource, CountingSource())
    queue = WriteQueue()
    assert queue.expected_person("s1", 0.7, read_at=0) == 0.7
    commit = queue.commit("s1", 0.3, None, shown=0.6, person_before=None)
    assert queue.start_draining() and queue.take() is commit and queue.apply(source, commit).written
    queue.read_in("s1", 1)
    assert queue.take() is None
    queue.settle(1, grade_of=lambda sid: 0.3)
    assert queue.expected("s1", 0.6) == 0.3  # (the grade in force: the log's, once settled)
    assert queue.expected_person("s1", None, read_at=0) == 0.3
    assert queue.expected_person("s1", 0.9, read_at=1) == 0.9
    assert queue.undo("s1") is not None
    assert queue.expected("s1", 0.3) == 0.6  # the judge's in force again, as typed
    assert queue.expected_person("s1", 0.3, read_at=1) is None
    queue.commit("s2", 0.4, None, shown=0.8, person_before=0.8)
    assert queue.expected_person("s2", 0.8, read_at=1) == 0.4
    assert queue.undo("s2") is not None
    assert queue.expected_person("s2", None, read_at=1) == 0.8


class UnreadSource:
    """Stores every grade and cannot read it back (the database gone after the commit)."""

    def append_grade(self, session_id: str, reward: float | None, **_: Any) -> SimpleNamespace:
        from lesson_credit.core.api import StoredUnread

        raise StoredUnread("the event was stored, but cannot be read back now: the database is gone")


def test_an_undo_refused_keeps_the_commit_it_would_have_undone() -> None:
    """A person's 0.8 on screen; 0.4 typed over it, stored but not read back; `u` is refused (its line is not
    known). The 0.4 stands: the grade in force is 0.4, and so is the person's score the next commit would
    replace (the question names it), and `u` may try again. Before, the refused undo left the commit off
    the undo stack: the question named the 0.8 the 0.4 had replaced, and `u` had nothing to undo."""
    source = cast(WorkspaceSource, UnreadSource())
    queue = WriteQueue()
    commit = queue.commit("s1", 0.4, None, shown=0.8, person_before=0.8)
    assert queue.start_draining() and queue.take() is commit
    assert queue.apply(source, commit).written and commit.unread
    queue.read_in("s1", 1)
    assert queue.take() is None
    undo = queue.undo("s1")
    assert undo is not None and queue.start_draining() and queue.take() is undo
    assert not queue.apply(source, undo).written
    assert queue.take() is None
    queue.refused(undo)
    assert queue.expected("s1", 0.8) == 0.4
    assert queue.expected_person("s1", 0.8, read_at=0) == 0.4
    assert queue.can_undo("s1")


def test_an_undo_typed_before_its_grade_was_written_and_refused_leaves_the_view_to_say_the_persons_score() -> None:
    """0.6 typed over the judge's score (no person's), then `u` at once, before the writer took the 0.6. The 0.6
    is written (line 1) and read back at version 1, its undo still queued behind it; erik grades 0.3 from the
    CLI; the undo is refused (graded elsewhere since). A view read at version 2 holds the 0.6 and erik's 0.3:
    the person's score the next commit replaces is its 0.3. On the old code the queue kept answering the 0.6
    as typed (nothing said a view holds the session's writes), and the replace question named 0.6."""
    source = cast(WorkspaceSource, CountingSource())  # (its every undo is refused: GradeConflict)
    queue = WriteQueue()
    commit = queue.commit("s1", 0.6, None, shown=0.5, person_before=None)
    undo = queue.undo("s1")
    assert undo is not None and queue.start_draining()
    assert queue.take() is commit and queue.apply(source, commit).written
    queue.read_in("s1", 1)  # (as the app's writer: the undo waits behind it)
    assert queue.take() is undo and not queue.apply(source, undo).written
    assert queue.take() is None
    queue.settle(2, grade_of=lambda sid: 0.3)  # erik's 0.3 is the grade in force in the snapshot at version 2
    queue.refused(undo)
    assert queue.expected_person("s1", 0.3, read_at=2) == 0.3
    assert queue.expected_person("s1", None, read_at=0) == 0.6  # a view from before the 0.6: as typed, it stands
    # the 0.6 stands, graded over: `u` again is the log's undo (`lesson-credit undo s1`), not this refused one again
    assert not queue.can_undo("s1") and queue.undo("s1").reverts is None


def test_a_grade_discarded_while_it_was_retried_is_not_expected_under_the_commits_typed_after_it() -> None:
    """s4 shows 0.5. The 0.7 fails (the database is down) and is retried; `u` undoes it (0.5 expected); ctrl+d y
    drops the undo, the 0.7 being retried stays, back on the stack (0.7 expected). 0.6 is typed meanwhile, over
    the 0.7. The 0.7 then fails again and is dropped: it never reached the log, which holds the 0.5 under the 0.6.
    `u` undoes the 0.6, so the grade in force is again the log's 0.5; on the old code the queue expected the 0.7
    never written, and the next commit would have asked to replace it."""
    queue = WriteQueue()
    c1 = queue.commit("s4", 0.7, None, shown=0.5)
    assert queue.start_draining() and queue.take() is c1
    assert queue.retry_after_failure(c1, "down", 0, lambda: None)
    queue.undo("s4")
    queue.discarded(queue.discard())  # ctrl+d y while the 0.7 is retried: the undo leaves, the 0.7 stays
    assert queue.expected("s4", 0.5) == 0.7
    g2 = queue.commit("s4", 0.6, None, shown=0.5)
    assert g2.expected_before == 0.7  # (typed over the 0.7 still being retried)
    assert not queue.retry_after_failure(c1, "down", 0, lambda: None)  # it fails again: dropped (discarded)
    assert queue.take() is g2
    queue.discarded([c1])
    queue.undo("s4")
    assert queue.expected("s4", 0.5) == 0.5


def test_an_undo_typed_over_a_grade_whose_own_grade_below_was_then_dropped_leaves_the_log_grade() -> None:
    """s4 shows 0.5. The 0.7 is retried; ctrl+d y (nothing else queued: the 0.7 is dropped at its next failure);
    0.6 typed over the 0.7, then `u` undoing the 0.6. The 0.7 fails again and is dropped: the undo of the 0.6
    leaves the log's 0.5 (the 0.7 was never written); on the old code the queue expected the 0.7."""
    queue = WriteQueue()
    c1 = queue.commit("s4", 0.7, None, shown=0.5)
    assert queue.start_draining() and queue.take() is c1
    assert queue.retry_after_failure(c1, "down", 0, lambda: None)
    assert queue.discard() == []
    queue.commit("s4", 0.6, None, shown=0.5)
    queue.undo("s4")
    assert queue.expected("s4", 0.5) == 0.7  # (as typed: the 0.7 may yet be written)
    assert not queue.retry_after_failure(c1, "down", 0, lambda: None)
    queue.discarded([c1])
    assert queue.expected("s4", 0.5) == 0.5


def test_a_commit_put_back_by_a_dropped_undo_stays_under_the_grades_typed_after_the_undo() -> None:
    """0.4 then 0.6 written on s1; `u` (undoing the 0.6) fails and is retried; ctrl+d y; 0.2 typed meanwhile; the
    undo fails again and is dropped, so the 0.6 is undoable again, but under the 0.2 typed after it: the person's
    score a commit replaces is the 0.2 and the next `u` undoes the 0.2. On the old code the 0.6 went back on top of
    the stack: the replace question named 0.6 and `u` undid the 0.6 under the 0.2 (refused by the log)."""
    source = cast(WorkspaceSource, CountingSource())
    queue = WriteQueue()
    queue.commit("s1", 0.4, None, shown=None)
    six = queue.commit("s1", 0.6, None, shown=None, person_before=0.4)
    assert queue.start_draining()
    for _ in range(2):
        taken = queue.take()
        assert taken is not None and queue.apply(source, taken).written
    undo = queue.undo("s1")
    assert queue.take() is undo and queue.retry_after_failure(undo, "down", 0, lambda: None)
    assert queue.discard() == []
    two = queue.commit("s1", 0.2, None, shown=None, person_before=0.4)
    assert not queue.retry_after_failure(undo, "down", 0, lambda: None)  # dropped at its next failure
    assert queue.take() is two
    queue.discarded([undo])
    assert queue.expected_person("s1", None, read_at=0) == 0.2
    assert queue.expected("s1", None) == 0.2
    assert queue.undo("s1").reverts is two and queue.undo("s1").reverts is six


def test_an_undo_of_a_grade_dropped_while_it_was_retried_is_refused_and_leaves_the_log_grade() -> None:
    """s1 shows 0.7. The 0.4 is retried; ctrl+d y; `u` typed meanwhile (undoing the 0.4: 0.7 expected). The 0.4
    fails again and is dropped; the undo, with nothing written to undo, is refused: the grade in force is the log's
    0.7. On the old code the refusal put back what the undo found, the 0.4 never written."""
    source = cast(WorkspaceSource, CountingSource())
    queue = WriteQueue()
    four = queue.commit("s1", 0.4, None, shown=0.7)
    assert queue.start_draining() and queue.take() is four
    assert queue.retry_after_failure(four, "down", 0, lambda: None)
    assert queue.discard() == []
    undo = queue.undo("s1")
    assert not queue.retry_after_failure(four, "down", 0, lambda: None)
    with queue._lock:  # (the writer drops the 0.4 and stops: the undo is taken next)
        queue._applying, queue._draining = None, False
    queue.discarded([four])
    assert queue.start_draining() and queue.take() is undo
    assert not queue.apply(source, undo).written  # "the grade it would undo was not written"
    queue.refused(undo)
    assert queue.expected("s1", 0.7) == 0.7


def undo_discarded_while_tried() -> tuple[WriteQueue, Write, Write]:
    """0.6 then 0.7 written on s1; `u` (undoing the 0.7) fails and is tried again; ctrl+d y while it is under
    way: (the queue, the 0.7, the undo the writer drops when this attempt fails too)."""
    source = cast(WorkspaceSource, CountingSource())
    queue = WriteQueue()
    queue.commit("s1", 0.6, None, shown=0.5)
    top = queue.commit("s1", 0.7, None, shown=0.5)
    assert queue.start_draining()
    for _ in range(2):
        write = queue.take()
        assert write is not None and queue.apply(source, write).written
        queue.read_in("s1", write.line or 0)
    dropped = queue.undo("s1")
    assert queue.take() is dropped and dropped.reverts is top
    assert queue.retry_after_failure(dropped, "the store is down", 0, lambda: None)  # it failed: tried again
    assert queue.discard() == []  # ctrl+d y while it is tried
    return queue, top, dropped


def test_u_typed_after_the_writer_dropped_an_undo_and_before_the_app_heard_of_it_undoes_the_grade_on_top() -> None:
    """0.6 then 0.7 written; `u` (the 0.7) fails, ctrl+d y, its attempt under way fails: the writer drops it, and
    a `u` typed before the app has handled that (WriteDiscarded) undoes the 0.7, still on top in the log. On the
    old code it popped the 0.6 under it (the dropped undo had taken the 0.7 off the stack), to be refused."""
    queue, top, dropped = undo_discarded_while_tried()
    assert not queue.retry_after_failure(dropped, "the store is down", 0, lambda: None)  # failed again: dropped
    second = queue.undo("s1")
    assert second.reverts is top
    queue.discarded([dropped])  # the writer's WriteDiscarded arrives: nothing more changes
    assert second.reverts is top and [w.value for w in queue._stacks["s1"]] == [0.6]


def test_u_typed_while_the_writer_drops_an_undo_undoes_the_grade_on_top() -> None:
    """As above, but the writer drops the undo while the `u` is being queued: after the key has looked for writes
    dropped (none yet) and before it is in the queue. The `u` popped the 0.6 (the dropped undo had taken the 0.7
    off the stack) and was queued too late to be re-aimed with the undos waiting: it aimed at the 0.6 under the
    0.7 still on top in the log, to be refused. It undoes the 0.7, as if it had been queued before the drop."""
    queue, top, dropped = undo_discarded_while_tried()
    looked = queue._forget_dropped

    def writer_drops_meanwhile() -> None:  # (the writer thread, between the key's look and its queueing)
        looked()
        assert not queue.retry_after_failure(dropped, "the store is down", 0, lambda: None)  # failed again: dropped

    queue._forget_dropped = writer_drops_meanwhile  # type: ignore[method-assign]
    second = queue.undo("s1")
    del queue._forget_dropped
    assert second.reverts is top
    queue.discarded([dropped])  # the writer's WriteDiscarded arrives
    assert second.reverts is top and [w.value for w in queue._stacks["s1"]] == [0.6]
    assert queue.take() is second  # the writer takes it next, aimed at the 0.7
