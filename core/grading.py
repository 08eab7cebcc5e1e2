"""The grade events (a grade, an undo, a retraction) and what appending one reports.

`Workspace.append_grade` is the one writer of a grade: the CLI's `grade`, `Workspace.undo_grade`
and the dashboard's grades and undos all go through it. Appending needs two facts read atomically
with the append: the grade in force just before it (what an undo restores) and the line the new
event got (what a later undo names and checks is still in force). A retraction (`base_reward`
None, docs/format.md §5.3) returns the session to pending. An event that reached the log is a success even
when `bandit-state.json` (derived) could not be rewritten: that is a warning, not a failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.log.events import GRADE
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.views import GradeRecord


@dataclass(frozen=True)
class GradeAppended:
    before: GradeRecord | None  # the grade in force just before the append (None: the session was pending)
    record: GradeRecord  # the event appended, with its line
    warnings: tuple[str, ...] = ()  # what the write could not do besides (a derived file): it is logged

    @property
    def before_value(self) -> float | None:
        return None if self.before is None else self.before.base_reward


class GradeConflict(WorkspaceError):
    """The grade in force is not the one the caller expected (another writer got there first)."""


def grade_in_force(history: Sequence[GradeRecord]) -> GradeRecord | None:
    """The latest entry of a grade history, None when the session is pending (never graded or retracted)."""
    if not history or history[-1].base_reward is None:
        return None
    return history[-1]


def check_grader(grader: str) -> None:
    if not grader or "\n" in grader:
        raise WorkspaceError("grader must be a non-empty single line")


def check_reward(reward: float | None) -> float | None:
    """A grade's reward, checked (in [0, 1]); None is a retraction."""
    return None if reward is None else credit_mod.check_unit(reward, "reward")


def check_expected(session_id: str, history: Sequence[GradeRecord], expect_line: int | None) -> None:
    """GradeConflict unless the session's latest grade event is the one at `expect_line` (None: no check)."""
    if expect_line is not None and (not history or history[-1].line != expect_line):
        raise GradeConflict(
            f"session {session_id!r} was graded elsewhere since line {expect_line}; nothing was written"
        )


def grade_event(
    session_id: str, reward: float | None, grader: str, timestamp: str, note: str | None, outcome: str | None = None
) -> dict[str, Any]:
    """A grade event (`reward` None: a retraction); the latest grade of a session is the one that counts.
    `outcome`: the gptme outcome word the reward was given as, kept beside it."""
    event: dict[str, Any] = {
        "type": GRADE,
        "session_id": session_id,
        "base_reward": reward,
        "grader": grader,
        "timestamp": timestamp,
    }
    if note:
        event["note"] = note
    if outcome is not None:
        event["outcome"] = outcome
    return event


def grade_text(value: float | None) -> str:
    """A grade as typed, for notes and messages: "pending", or at least one decimal and at most
    six (0.725 stays 0.725, 1 is 1.0)."""
    if value is None:
        return "pending"
    text = f"{round(value, 6):.6f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def undo_note(line: int, undone: float | None, restored: float | None) -> str:
    """The note of an undo, whoever writes it: which line it reverts, from what to what."""
    return f"undo of line {line}: {grade_text(undone)} back to {grade_text(restored)}"


def undo_of(
    session_id: str, history: Sequence[GradeRecord], record_line: int, note: str | None
) -> tuple[float | None, str]:
    """(reward, note) of the grade event that puts back what was in force before the session's latest
    grade event: the grade before it, or pending (a retraction) when the session was logged pending."""
    if not history or history[-1].line == record_line:  # only the record's own grade (line record_line)
        state = "pending" if not history else "graded only by its record"
        raise WorkspaceError(f"nothing to undo: session {session_id!r} is {state}")
    latest = history[-1]
    previous = history[-2].base_reward if len(history) > 1 else None
    reverts = undo_note(latest.line, latest.base_reward, previous)
    return previous, f"{reverts}; {note}" if note else reverts
