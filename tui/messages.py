"""Messages that travel up to the app (screens and workers tell it what happened)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from lesson_credit.tui.source_views import SourceSnapshot
    from lesson_credit.tui.write_state import Write, WriteOutcome


class SourceChanged(Message):
    """The workspace changed (a write of ours, or the poll saw another process's): one per change."""

    def __init__(self, snapshot: SourceSnapshot) -> None:
        super().__init__()
        self.snapshot = snapshot


class WorkspaceWritten(Message):
    """A screen rewrote settings or re-read the library: the app checks the source once."""


class WriteApplied(Message):
    """The writer applied (or refused) one queued grade, undo or settings save."""

    def __init__(self, outcome: WriteOutcome) -> None:
        super().__init__()
        self.outcome = outcome


class WorkFailed(Message):
    """A worker could not finish; `reason` is one line for the operator."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class WriteWaiting(Message):
    """The oldest queued write (a grade, an undo, a settings save) failed and will be tried again; `reason`
    is one line for the operator."""

    def __init__(self, write: Write, reason: str) -> None:
        super().__init__()
        self.write = write
        self.reason = reason


class WriteLockWait(Message):
    """The writer waits for the log's lock, which another writer holds, to apply `write` (up to the lock timeout)."""

    def __init__(self, write: Write) -> None:
        super().__init__()
        self.write = write


class WriteDiscarded(Message):
    """The operator discarded the write the writer was retrying: it reached no log."""

    def __init__(self, write: Write) -> None:
        super().__init__()
        self.write = write


class LogUndoUnread(Message):
    """An undo of the log's a session's screen held its keys for was written, but the log could not be read
    after it (`WriteQueue.forget_log_undo`)."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id


class FirstViewShown(Message):
    """The Lessons screen drew its first rows, or the screen a key typed before them opened (Health) its
    first view: the app starts what can wait until then."""


class ToastHoldersChanged(Message):
    """A screen that holds the toasts (a yes/no question, help) came onto the stack (the toasts on show are held
    with the time they have left) or left it (those held are shown, once none is up): tui/held_toasts.py."""
