"""What a session screen's reads of the log tell the operator besides the view: a grade logged elsewhere
under a draft, and a read that failed while the screen held its keys for an undo of the log's.

After `u` with none of this dashboard's commits left (the log's undo: tui/writes.py), the screen holds
the keys typed after it until its view holds what the undo left (`WriteQueue.log_undo_unread`). The read
that would show it may fail, and with nothing new in the source no other read comes: the hold then ends
(`UndoHold.read_failed`), with a message that the screen may show the session as before the undo.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from textual.message import Message

from lesson_credit.core.api import Explanation
from lesson_credit.tui.text import fmt_grade, one_line
from lesson_credit.tui.undo_words import undo_unread
from lesson_credit.tui.writes import WriteQueue

T = TypeVar("T")


class ReadFailed(Message):
    """A read of the session's view, begun at source version `read_at`, failed (a WorkFailed follows)."""

    def __init__(self, read_at: int) -> None:
        super().__init__()
        self.read_at = read_at


def reporting(post: Callable[[Message], object], read_at: int, compute: Callable[[], T]) -> Callable[[], T]:
    """`compute`, posting ReadFailed(read_at) before its error propagates (to the screen's `post_result`)."""

    def run() -> T:
        try:
            return compute()
        except Exception:
            post(ReadFailed(read_at))
            raise

    return run


class UndoHold:
    """Whether a session screen holds its keys for an undo of the log's, given the source versions its views
    were read at (`seen`: None for one not loaded)."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.failed_at: int | None = None  # the source version the latest failed read began at

    def held(self, writes: WriteQueue, *seen: int | None) -> bool:
        """Held until the views hold the undo, or a read begun once it was read back failed."""
        return writes.log_undo_unread(self.session_id, *seen) and writes.log_undo_unread(
            self.session_id, self.failed_at
        )

    def read_failed(self, writes: WriteQueue, read_at: int, *seen: int | None) -> str | None:
        """A read begun at `read_at` failed: the message to show when that ends the hold, else None."""
        was = self.held(writes, *seen)
        self.failed_at = read_at if self.failed_at is None else max(self.failed_at, read_at)
        if not was or self.held(writes, *seen):
            return None
        return undo_unread(self.session_id)


def graded_elsewhere(
    session_id: str, before: Explanation | None, after: Explanation, draft: float | None, writes: WriteQueue
) -> str | None:
    """Another process graded the session while a draft is open (its grade in `after`, not `before`): what to
    say (the draft stays a draft), else None."""
    if before is None or draft is None or not after.grades:
        return None
    latest = after.grades[-1]
    if before.grades and before.grades[-1].line == latest.line:
        return None
    if writes.wrote_last(session_id, latest.line):
        return None
    return (
        f"{one_line(session_id)} was graded {fmt_grade(latest.base_reward)} by {one_line(latest.grader)} "
        f"elsewhere. Your draft {fmt_grade(draft)} is kept, not committed."
    )
