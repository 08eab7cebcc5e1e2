"""The write queue's records (tui/writes.py queues and applies them): one queued write, what a settings save
saves, what the queue held for a session when an undo was queued, and a write's outcome."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from lesson_credit.core.api import CreditSettings


@dataclass(frozen=True)
class SettingsSave:
    """A save of What-if's settings the operator confirmed (the policy and the priority when changed)."""

    settings: CreditSettings
    policy: str | None
    priority: tuple[str, ...] | None

    def describe(self) -> str:
        """What is saved, for a toast: "strategy evidence, floor 0.1, policy seed, rewards by judge>human"."""
        text = f"strategy {self.settings.strategy}, floor {self.settings.floor:g}"
        text += f", policy {self.policy}" if self.policy else ""
        return text + (f", rewards by {'>'.join(self.priority)}" if self.priority else "")


@dataclass(frozen=True)
class Kept:
    """What the queue held for a session when an undo was queued: put back if the undo is refused."""

    expected: bool  # the queue expected a grade for the session (else the screens go by the log)
    grade: float | None  # the grade it expected (None: pending)
    settled: bool  # its writes from here were all read in a snapshot (`settle`)
    read_from: int | None  # the first source version holding its latest write (`graded_unread`)
    undone: Write | None  # the commit undone last on the session before it (`expected_person`)


@dataclass(frozen=True)
class Reaimed:
    """An undo the writer dropped (it reached no log) left the commit it would have undone in the log, on top: the
    undos queued behind it aim one commit up, each at the one the undo before it now leaves (`WriteQueue.failed`)."""

    undos: tuple[tuple[Write, Write | None], ...]  # (an undo re-aimed, the commit it aimed at before: None, the log's)
    back: Write | None  # the commit none of them undoes now (None: an undo of the log's undoes it now)


@dataclass(eq=False)
class Write:
    """One queued write. `line` and `before` are filled in by the writer when it is applied."""

    kind: Literal["grade", "undo", "settings"]
    session_id: str  # (a settings save: "")
    value: float | None = None  # grade: the value committed
    note: str | None = None
    outcome: str | None = None  # grade: the gptme grading word typed for it (logged beside the value)
    reverts: Write | None = None  # undo: the commit it reverts
    kept: Kept | None = None  # undo: what the queue held for the session before it
    stale: bool = False  # undo: refused, its commit graded over since (`buried`)
    buried: bool = False  # grade: graded over since an undo of it was refused: `u` passes it by for the log's undo
    read_back: int | None = None  # undo of the log's (`reverts` None): the first source version holding it
    expected_before: float | None = None  # grade: what the UI expected to be in force when it was typed
    typed_leaves: tuple[bool, float | None] = (False, None)  # its session's (expected, grade) once applied, as typed
    seq: int = 0  # its place in key order among the writes queued (`WriteQueue._restack`)
    over: Write | None = None  # the session's latest write queued or being applied when it was queued (`failed`)
    line: int | None = None  # the log line the event got (None: not written, or `unread`)
    unread: bool = False  # stored, but the log could not be read back then: its line is not known
    before: float | None = None  # grade: the grade in force just before it (None: pending)
    before_own: float | None = None  # grade: the operator's source's score just before it (None: none)
    person_before: float | None = None  # grade: the operator's source's score as typed when it was queued
    # grade confirmed over a question: the line of the latest grade event in the view it was asked from (0: none);
    # written only if the log's latest is that one or this dashboard's latest written since (`asked_over`)
    asked_line: int | None = None
    # grade: the line of the latest grade event in the view it was typed from (0: none; None: no view loaded); not
    # written if a grade that would have asked (another person's) was logged since, besides ours (`seen_over`)
    seen_line: int | None = None
    reaimed: Reaimed | None = None  # undo: dropped by the writer, the undos behind it re-aimed (`failed`)
    elsewhere: str | None = None  # undo of the log's: the session of this dashboard's latest grade not undone
    forgotten: bool = False  # discarded, and what it promised is forgotten (`WriteQueue.failed`)
    save: SettingsSave | None = None  # settings: what is saved
    then: Callable[[], None] | None = None  # settings: called on the UI thread once it is written


@dataclass(frozen=True)
class WriteOutcome:
    write: Write
    written: bool
    message: str  # one line for a toast: the session and the value
    warnings: tuple[str, ...] = ()  # written, but a derived file (bandit-state.json) was not: one toast each
