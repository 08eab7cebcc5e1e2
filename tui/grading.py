"""What a screen asks of the app to grade (tui/app_writes.py implements it; screens do not import the app)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from lesson_credit.tui.text import fmt_grade

if TYPE_CHECKING:
    from lesson_credit.tui.source_views import SourceSnapshot
    from lesson_credit.tui.write_state import SettingsSave, Write
    from lesson_credit.tui.writes import WriteQueue


class Grading(Protocol):
    """What a screen asks of the app to grade (the app implements it; screens do not import the app)."""

    writes: WriteQueue
    snapshot: SourceSnapshot | None

    def write_waiting_for_lock(self) -> Write | None: ...

    def commit_grade(
        self,
        session_id: str,
        value: float,
        note: str | None,
        shown: float | None,
        outcome: str | None = None,
        person_before: float | None = None,
        asked_line: int | None = None,
        seen_line: int | None = None,
    ) -> Write: ...

    def undo_grade(self, session_id: str) -> Write: ...

    def commit_settings(self, save: SettingsSave, then: Callable[[], None] | None = None) -> Write: ...

    async def open_next_pending(self, after: str | None) -> None: ...

    async def open_session(self, session_id: str, focus_lesson: str | None = None) -> None: ...


def unsaved_write(writes: WriteQueue, session_id: str, lock_wait: Write | None = None) -> str | None:
    """While the writes wait to be retried (the log refuses them), or wait behind `lock_wait` (the write the writer
    waits for another writer's lock to apply: the title bar says so, and the grade line said nothing), and one is the
    session's: the latest of the session's as typed ("0.4", a grade; "undo"); else None. (What an undo of the log's
    leaves is the log's to say.)"""
    unwritten = writes.not_written()
    if writes.waiting() is None and (lock_wait is None or not unwritten or unwritten[0] is not lock_wait):
        return None
    latest = next((w for w in reversed(unwritten) if w.session_id == session_id), None)
    if latest is None or latest.kind == "settings":
        return None
    return fmt_grade(latest.value) if latest.kind == "grade" else "undo"
