"""The dashboard's writes that wait: a failed write is tried again until written or discarded
(tui/writes.py holds the queue); this says so on every screen and lets the operator discard it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from lesson_credit.tui.messages import WriteDiscarded, WriteWaiting
from lesson_credit.tui.text import fmt_grade, one_line
from lesson_credit.tui.writes import Write

if TYPE_CHECKING:
    from textual.app import App
    from textual.reactive import reactive

    from lesson_credit.tui.writes import WriteQueue

    _Base = App[None]
else:
    _Base = object

PROBLEMS_IN_NOTICE = 3


class WaitingWrites(_Base):
    """The app's handlers of waiting and discarded writes (a mixin of LessonCreditApp, which has these)."""

    if TYPE_CHECKING:
        writes: WriteQueue
        saving: reactive[str]
        _waiting_reason: str | None

    def on_write_waiting(self, event: WriteWaiting) -> None:
        """The oldest write failed and will be tried again: the title bar says so on every screen
        until it is written or discarded, and a toast says why (again only when the reason changes)."""
        self._show_saving()
        reason = one_line(event.reason)
        if reason == self._waiting_reason:
            return
        self._waiting_reason = reason
        sid = one_line(event.write.session_id)
        self.notify(
            f"{_what(event.write)} for {sid} is not saved yet: {reason}. It is tried again until it is "
            "saved (writes after it wait behind it); ctrl+d discards what is not saved.",
            title=f"Waiting to save: {sid}",
            severity="warning",
            markup=False,
        )

    def _show_saving(self) -> None:
        waiting = self.writes.waiting()
        self.saving = "" if waiting is None else f"waiting to save {waiting[0]} write(s) (ctrl+d discards)"
        if waiting is None:
            self._waiting_reason = None

    def on_write_discarded(self, event: WriteDiscarded) -> None:
        self._forget([event.write])

    def _forget(self, writes: list[Write]) -> None:
        """Discarded writes reached no log: drop what they promised, so prompts show the log's grade."""
        for write in writes:
            self.writes.failed(write)
        self._show_saving()
        if writes:
            listed = ", ".join(f"{_what(w).lower()} for {one_line(w.session_id)}" for w in writes[:PROBLEMS_IN_NOTICE])
            more = f" and {len(writes) - PROBLEMS_IN_NOTICE} more" if len(writes) > PROBLEMS_IN_NOTICE else ""
            self.notify(f"Discarded, not saved: {listed}{more}.", title="Not saved", severity="warning", markup=False)

    async def action_discard_writes(self, then: Callable[[], Awaitable[None]] | None = None) -> None:
        """ctrl+d: after asking, discard every write not saved yet (while the oldest waits to be retried)."""
        from lesson_credit.tui.screens.confirm import ConfirmScreen

        waiting = self.writes.waiting()
        if waiting is None:
            if then is None:
                self.notify("No write is waiting to be saved.", markup=False)
            return
        count, reason = waiting

        async def answered(discard: bool) -> None:
            if discard:
                self._forget(self.writes.discard())
                if then is not None:
                    await then()

        question = f"Discard {count} write(s) not saved yet{' and quit' if then is not None else ''}?"
        detail = f"The oldest failed: {one_line(reason)}. escape keeps them; they are tried again until saved."
        await self.push_screen(ConfirmScreen(question, detail, on_answer=answered))


def _what(write: Write) -> str:
    return f"Grade {fmt_grade(write.value)}" if write.kind == "grade" else "Undo"
