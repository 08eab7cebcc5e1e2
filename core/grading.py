"""Appending one grade (or a retraction) under the log lock, knowing exactly what it replaced.

The dashboard's undo needs two facts read atomically with the append: the grade in force
just before it (what an undo restores) and the line the new event got (what a later undo
names and checks is still in force). A retraction (`base_reward` None, docs/format.md §5.3) returns the
session to pending.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.log.events import GRADE, encode
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.views import GradeRecord
from lesson_credit.core.workspace import Workspace


@dataclass(frozen=True)
class GradeAppended:
    before: GradeRecord | None  # the grade in force just before the append (None: the session was pending)
    record: GradeRecord  # the event appended, with its line

    @property
    def before_value(self) -> float | None:
        return None if self.before is None else self.before.base_reward


class GradeConflict(WorkspaceError):
    """The grade in force is not the one the caller expected (another writer got there first)."""


def grade_in_force(history: list[GradeRecord]) -> GradeRecord | None:
    """The latest entry of a grade history, None when the session is pending (never graded or retracted)."""
    if not history or history[-1].base_reward is None:
        return None
    return history[-1]


def append_grade(
    ws: Workspace,
    session_id: str,
    reward: float | None,
    *,
    grader: str,
    note: str | None = None,
    expect_line: int | None = None,
) -> GradeAppended:
    """Append a grade event for a logged session (`reward` None: a retraction).

    With `expect_line`, refuse (GradeConflict, nothing written) unless the latest grade event
    of the session is the one logged at that line.
    """
    if reward is not None:
        reward = credit_mod.check_unit(reward, "reward")
    if not grader or "\n" in grader:
        raise WorkspaceError("grader must be a non-empty single line")
    with ws.log.locked():
        ws.refresh()
        history = ws.grade_history(session_id)  # raises for an unknown session
        if expect_line is not None and (not history or history[-1].line != expect_line):
            raise GradeConflict(
                f"session {session_id!r} was graded elsewhere since line {expect_line}; nothing was written"
            )
        event: dict[str, Any] = {
            "type": GRADE,
            "session_id": session_id,
            "base_reward": reward,
            "grader": grader,
            "timestamp": ws.now_iso(),
        }
        if note:
            event["note"] = note
        ws.log.append_locked(encode(event))
        ws.refresh()
        after = ws.grade_history(session_id)
        ws.write_state()
    return GradeAppended(grade_in_force(history), after[-1])
