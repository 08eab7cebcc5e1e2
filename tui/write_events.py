"""The writer's append of one grade or undo of the dashboard's write queue (tui/writes.py queues them and keeps
what they leave): the engine's call, what the write learns from it, and the toast that says so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lesson_credit.tui.text import fmt_grade, one_line
from lesson_credit.tui.undo_words import refusal, undone
from lesson_credit.tui.write_state import Write, WriteOutcome

if TYPE_CHECKING:
    from lesson_credit.core.api import GradeAppended
    from lesson_credit.tui.source import WorkspaceSource


def grade_words(value: float | None) -> str:
    return "pending" if value is None else fmt_grade(value)


def append_event(
    source: WorkspaceSource, write: Write, sid: str, operator: str, ours: int | None = None
) -> tuple[WriteOutcome, GradeAppended | None]:
    """(writer) Append `write`, a grade or an undo, logged as `operator`; `sid` is its session in one line: its
    outcome, and the event appended (None: refused, nothing written). Errors other than a refusal propagate.
    `ours`: the line of this dashboard's latest event on the session written so far (`asked_over`)."""
    if write.kind == "grade":
        assert write.value is not None
        from lesson_credit.core.api import GradeConflict  # the engine's: not before the first frame

        try:
            appended = source.append_grade(
                write.session_id,
                write.value,
                grader=operator,
                note=write.note,
                outcome=write.outcome,
                expect_line=asked_over(write, ours),
                seen_line=seen_over(write, ours),
            )
        except GradeConflict:  # graded elsewhere since the question (or since the screen showed it, when none was
            # asked): it would replace a grade the operator never saw
            since = "you were asked to replace it" if write.asked_line is not None else "the screen showed it"
            said = (
                f"Grade {grade_words(write.value)} for {sid} not saved: its grade changed after {since} (graded "
                "elsewhere); nothing was written."
            )  # (the app says what the operator may do: AppWrites.on_write_applied)
            return WriteOutcome(write, False, said), None
        write.before_own = appended.before_own  # (first: `expected_person` reads it once `line` is set)
        write.line, write.before = appended.record.line, appended.before_value
        said = f"Saved grade {grade_words(write.value)} for {sid} (was {grade_words(write.before)})."
        if appended.outranked:  # (the CLI's `grade` says the same)
            said = f"Saved grade {grade_words(write.value)} for {sid}, but " + (
                "the session stays pending: the [rewards] priority leaves its source out."
                if (in_force := appended.in_force) is None
                else f"{grade_words(in_force.base_reward)} ({one_line(in_force.grader)}) stays in force: the [rewards] "
                "priority puts it first."
            )
        return WriteOutcome(write, True, said, appended.warnings), appended
    undo = _append_undo(source, write, write.reverts, sid, operator)
    if isinstance(undo, WriteOutcome):  # refused
        return undo, None
    write.line, write.value, write.before = undo.record.line, undo.record.base_reward, undo.before_value
    return WriteOutcome(write, True, undone(sid, undo.undo, undo.record.note), undo.warnings), undo


def asked_over(write: Write, ours: int | None) -> int | None:
    """(writer) The line the session's latest grade event must be at for `write`, a grade, to be written (None: no
    check). Confirmed over a question, the grade it was asked over is the latest in the view the question was asked
    from (`asked_line`), or this dashboard's latest write on the session, written since (`ours`, its line: the
    writes are applied in key order, so those typed before it are), whichever came last in the log (lines only
    grow). Another grade there (another process's, logged since) was never shown: the engine refuses it
    (GradeConflict), as it does when the write of ours it was asked over was not written (refused or dropped: the
    log's latest is then another's). No check without a line to check (no grade in the view and none of ours), nor
    after a write of ours stored unread (its line is not known)."""
    if write.asked_line is None:
        return None  # no question: nothing was replaced that the operator was asked about
    if write.over is not None and write.over.unread:
        return None
    return max(write.asked_line, ours or 0) or None


def seen_over(write: Write, ours: int | None) -> int | None:
    """(writer) The line after which no grade event of a source that would have asked may be in the log for
    `write`, a grade, to be written (None: no check; the engine's `seen_line`). It was typed over the view's latest
    grade event (`seen_line`; 0: none, the session pending or scored by its record), or this dashboard's latest
    write on the session, written since (`ours`), whichever came last. Another person's grade after it was never
    shown, and the grade would replace it: the engine refuses it (GradeConflict). Committed without a question
    (pending, or over a score ranked below a person's), that is its only check, and a judge's score there does not
    refuse it; confirmed over one, `asked_over` checks more, but not without a line to check (a question asked
    over a grade of ours queued on a session that showed no grade event). No check after a write of ours stored
    unread (its line is not known)."""
    if write.seen_line is None or (write.over is not None and write.over.unread):
        return None
    return max(write.seen_line, ours or 0)


def _append_undo(
    source: WorkspaceSource, write: Write, commit: Write | None, sid: str, operator: str
) -> WriteOutcome | GradeAppended:
    """(writer) Append the undo `write` of `commit`: the event appended, or the refusal's outcome."""
    from lesson_credit.core.api import GradeConflict, NothingToUndo  # the engine's: not before the first frame

    if commit is None:  # none of this dashboard's left: the operator's latest in the log, as the CLI's undo
        try:
            return source.append_undo(write.session_id, grader=operator)
        except NothingToUndo as exc:
            said = f"Nothing to undo on {sid}: {refusal(exc)}."
            if write.elsewhere is not None and write.elsewhere != write.session_id:
                said += f" Your latest grade from here is on {one_line(write.elsewhere)}: u there undoes it."
            return WriteOutcome(write, False, said)
        except GradeConflict as exc:
            return WriteOutcome(write, False, f"Not undone on {sid}: {refusal(exc)}.")
    if commit.unread:  # its line is not known: `lesson-credit undo` reverts it once it can be read
        return WriteOutcome(write, False, f"Not undone: the grade on {sid} was saved but not read back.")
    if commit.line is None:
        return WriteOutcome(write, False, f"Nothing to undo on {sid}: the grade it would undo was not written.")
    if commit.before_own == commit.value:
        already = f"Nothing to undo on {sid}: the grade is already {grade_words(commit.value)}."
        return WriteOutcome(write, False, already)
    try:  # the CLI's undo: it reverts the operator's latest grade not undone yet, which must be `commit`
        return source.append_undo(write.session_id, grader=operator, line=commit.line)
    except GradeConflict as exc:  # (the operator graded elsewhere since, or another person over it)
        write.stale = True  # `refused`: the commit is buried; the next `u` undoes as the CLI's undo
        said = (
            f"Not undone on {sid}: {refusal(exc)}. u again undoes your latest grade there, as lesson-credit undo does."
        )
        return WriteOutcome(write, False, said)
