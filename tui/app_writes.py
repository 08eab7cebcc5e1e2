"""The app's side of the write queue (tui/writes.py holds the queue): screens commit grades, undos
and settings saves through it, one writer applies them in order, and a write that failed is tried
again until written or discarded; the title bar says so on every screen and ctrl+d discards it."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.widgets import Input

from lesson_credit.tui.messages import (
    LogUndoUnread,
    SourceChanged,
    WorkFailed,
    WriteApplied,
    WriteDiscarded,
    WriteLockWait,
    WriteWaiting,
)
from lesson_credit.tui.screens.base import describe_failure
from lesson_credit.tui.text import counted, fmt_grade, listed, one_line
from lesson_credit.tui.textual_private import withdraw_toasts
from lesson_credit.tui.undo_words import undo_unread
from lesson_credit.tui.write_state import SettingsSave, Write

if TYPE_CHECKING:
    from textual.app import App
    from textual.reactive import reactive

    from lesson_credit.tui.held_toasts import HeldToasts
    from lesson_credit.tui.keys import KeyRouter
    from lesson_credit.tui.screens.confirm import ConfirmScreen
    from lesson_credit.tui.source import WorkspaceSource
    from lesson_credit.tui.writes import WriteQueue

    _Base = App[None]
else:
    _Base = object

PROBLEMS_IN_NOTICE = 3
RETRY_SECONDS = 1.0  # a failed write is tried again after this, doubling up to RETRY_DOUBLINGS times
RETRY_DOUBLINGS = 3
SLOW_WRITE_S = 0.5  # a write the writer has been at this long is said in the title bar ("saving 1 write…")


class AppWrites(_Base):
    """The app's write queue side (a mixin of LessonCreditApp, which has these attributes)."""

    if TYPE_CHECKING:
        source: WorkspaceSource
        writes: WriteQueue
        keys: KeyRouter
        retry_seconds: float
        saving: reactive[str]
        saving_short: str
        _waiting_reason: tuple[Write, str] | None
        _lock_wait: Write | None
        _discard_asked: DiscardAsked | None
        _warned: list[tuple[Write, str, str]]
        held_toasts: HeldToasts
        _check_source: Callable[..., object]  # (a worker of the app's: reads the source, posts what changed)

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
    ) -> Write:
        """Queue a grade (applied after every write queued before it); `shown`: the grade on screen;
        `outcome`: the gptme grading word it was typed as; `person_before`: the person's score it replaces;
        `asked_line`: confirmed over a question, the latest grade event's line in the view it was asked from (0:
        none), which the log must still end with when it is written (tui/write_events.py); `seen_line`: committed
        without a question, the latest grade event's line in the view it was typed from (0: none), after which no
        grade that would have asked (another person's) may be in the log when it is written."""
        write = self.writes.commit(session_id, value, note, shown, outcome, person_before, asked_line, seen_line)
        self._kick_writer()
        return write

    def undo_grade(self, session_id: str) -> Write:
        """Queue an undo of the operator's latest grade on the session (`WriteQueue.undo`)."""
        write = self.writes.undo(session_id)
        self._kick_writer()
        return write

    def commit_settings(self, save: SettingsSave, then: Callable[[], None] | None = None) -> Write:
        """Queue a settings save (after every write queued before it); `then` runs once it is written."""
        write = self.writes.save_settings(save, then)
        self._kick_writer()
        return write

    def _kick_writer(self) -> None:
        """Start the writer if none is at work; the title bar counts the write just queued at once (the key was
        taken), not at its next look (`show_progress`)."""
        if self.writes.start_draining():
            self._drain_writes()
        self._show_saving()

    @work(thread=True, group="writes")
    def _drain_writes(self) -> None:
        """The one writer: applies queued writes oldest first until the queue is empty. A write that
        fails is tried again (after retry_seconds, doubling) until it is written or discarded; the
        writes behind it wait, so the log gets them in the order typed."""
        while (write := self.writes.take()) is not None:
            delay, outcome = self.retry_seconds, None
            lock_wait = partial(self.post_message, WriteLockWait(write))  # (the title bar says why it waits)
            while outcome is None:
                try:
                    with self.source.lock_waits(lock_wait):
                        outcome = self.writes.apply(self.source, write)
                except Exception as exc:  # reported, not raised: the write waits and is tried again
                    reason = lock_words(exc, self.source.root) or describe_failure(exc)
                    announce = partial(self.post_message, WriteWaiting(write, reason))
                    if not self.writes.retry_after_failure(write, reason, delay, announce):
                        self.post_message(WriteDiscarded(write))
                        break
                    delay = min(2 * delay, self.retry_seconds * 2**RETRY_DOUBLINGS)
            if outcome is None:
                continue
            if outcome.written and write.kind != "settings":
                try:  # the log changed: whichever check sees it first (this or a poll) announces it, once
                    snapshot = self.source.check()
                    read_from = self.source.version  # (this check's snapshot, or a poll's after the write)
                except Exception as exc:  # the event is in the log; the views catch up at the next poll
                    self.post_message(WorkFailed(describe_failure(exc)))
                    snapshot, read_from = None, self.source.version + 1
                    if self.writes.forget_log_undo(write):  # (a session's screen held its keys for it)
                        self.post_message(LogUndoUnread(write.session_id))
                self.writes.read_in(write.session_id, read_from)
                if snapshot is not None:
                    self.post_message(SourceChanged(snapshot))
            self.post_message(WriteApplied(outcome))

    def on_log_undo_unread(self, event: LogUndoUnread) -> None:
        """An undo of the log's was written, and the log could not be read after it: the keys held for it go on."""
        self.keys.wake()
        self.notify(undo_unread(event.session_id), title="Keys no longer held", severity="warning", markup=False)

    def on_write_applied(self, event: WriteApplied) -> None:
        """A written event is confirmed as saved; what it could not do besides (a derived file) is a
        warning of its own, never a "not saved". A settings save written: what waited for it runs,
        then the screens reload (the log did not change, the settings did)."""
        outcome = event.outcome
        self._withdraw_warnings([outcome.write])  # (first: it is no toast of the two on show, the outcome is)
        if outcome.write is self._lock_wait:
            self._lock_wait = None
        self._show_saving()
        message = outcome.message
        if not outcome.written and outcome.write.kind == "grade":
            message += " " + self._give_back(outcome.write)
        self.notify(message, severity="information" if outcome.written else "warning", markup=False)
        for warning in outcome.warnings:
            self.notify(one_line(warning), title="Saved, with a warning", severity="warning", markup=False)
        if not outcome.written and outcome.write.kind == "grade":  # asked over a grade the log has no more
            self.writes.failed(outcome.write)  # it reached no log: what it promised is forgotten
            self._check_source()  # the screens read the log: the grade in force now, which the next question names
            self.keys.wake()
        elif not outcome.written:
            self.writes.refused(outcome.write)  # an undo refused: the grade it would have undone stands
            self.keys.wake()  # (the session's screen may hold the keys typed after it: `log_undo_unread`)
        if outcome.written and outcome.write.kind == "settings":
            if outcome.write.then is not None:
                outcome.write.then()
            self._check_source(wrote=True)

    def _give_back(self, write: Write) -> str:
        """A grade the writer refused (graded elsewhere since its question) made the draft of its session's topmost
        screen again, value, note and word, where one is open without a draft of the operator's own (one given back
        from a grade typed before it is replaced: of two refused, the later is the draft, in whichever order their
        refusals are read): what the operator may do now."""
        assert write.value is not None
        for screen in reversed(self.screen_stack):  # (the topmost screen of the session: the one the operator sees)
            restore = getattr(screen, "restore_refused", None)
            if getattr(screen, "session_id", None) == write.session_id and restore is not None:
                if restore(write.value, write.note, write.outcome, write.seq):
                    return f"{fmt_grade(write.value)} is your draft again: c asks to replace the grade in force."
                break
        return f"The session shows the grade in force now: type {fmt_grade(write.value)} again to replace it."

    def write_waiting_for_lock(self) -> Write | None:
        """The write the writer waits for another writer's lock to apply, from the wait's start until it is written
        or fails (a grade line says its session's write waits: `unsaved_write`)."""
        return self._lock_wait

    def on_write_lock_wait(self, event: WriteLockWait) -> None:
        """The writer waits for another writer's lock to apply `event.write`: the title bar says so at once (not
        only once the wait has lasted SLOW_WRITE_S, nor only once it failed), until the write is done or fails."""
        self._lock_wait = event.write
        self._show_saving()

    def on_write_waiting(self, event: WriteWaiting) -> None:
        """The oldest write failed and will be tried again: the title bar says so on every screen
        until it is written or discarded, and a toast says why (again only when the reason changes). The toast is
        keyed on the write, not on whether it still waits: a loaded screen may read the failures after the save."""
        if event.write is self._lock_wait:  # (a new wait for the lock, at a retry, says so again)
            self._lock_wait = None
        self._show_saving()
        self.keys.wake()  # (a session's screen holds no keys for an undo waiting to be retried: `log_undo_unread`)
        reason = one_line(event.reason)
        last = self._waiting_reason
        if last is not None and last[0] is event.write and last[1] == reason:
            return
        self._waiting_reason = event.write, reason
        self._withdraw_warnings([event.write])  # (said again for another reason: the newer says it)
        subject = _subject(event.write)
        message = (
            f"{_what(event.write)} {subject} is not saved yet: {reason}. It is tried again until it is "
            "saved (writes after it wait behind it); ctrl+d discards what is not saved."
        )
        title = f"Waiting to save: {_name(event.write)}"
        self._warned.append((event.write, title, message))
        self.notify(message, title=title, severity="warning", markup=False)

    def _withdraw_warnings(self, writes: list[Write]) -> None:
        """The "not saved yet" warnings of these writes go (saved, discarded, or failing for another reason): one
        stayed up beside the confirmation of its save, and the two toasts shown kept it over the confirmation. Now,
        and once more after the app's messages queued by now (a warning raised just before may not be on show)."""
        said = {(title, message) for write, title, message in self._warned if any(write is w for w in writes)}
        if not said:
            return
        self._warned = [entry for entry in self._warned if (entry[1], entry[2]) not in said]
        self.held_toasts.withdraw(said)
        withdraw_toasts(self, said)
        self.call_later(withdraw_toasts, self, said)

    def _show_saving(self) -> None:
        """The title bar: the writes that wait to be retried, or those behind a write that takes a while
        (another writer holds the log's lock: the write waits up to $LESSON_CREDIT_LOCK_TIMEOUT); and the question
        whether to discard them, while it still asks about the writes waiting (`_discard_question_outdated`)."""
        self._discard_question_outdated()
        waiting = self.writes.waiting()
        if waiting is not None:
            self.saving_short = f"{waiting[0]} unsaved (^d discards)"  # (first: `saving` redraws the title)
            self.saving = f"waiting to save {counted(waiting[0], 'write')} (ctrl+d discards)"
            return
        self.saving_short = ""
        applying = self.writes.applying()
        unwritten = self.writes.not_written()
        if applying and unwritten and unwritten[0] is self._lock_wait:  # (said as the wait starts: `WriteLockWait`)
            count = applying[0]
            self.saving_short = f"{count} unsaved: a lock is held"
            self.saving = f"{counted(count, 'write')} {'waits' if count == 1 else 'wait'} for another writer's lock"
            return
        self.saving = f"saving {counted(applying[0], 'write')}…" if applying and applying[1] >= SLOW_WRITE_S else ""

    def on_write_discarded(self, event: WriteDiscarded) -> None:
        self._forget([event.write])

    def _forget(self, writes: list[Write]) -> None:
        """Discarded writes reached no log: drop what they promised, so prompts show the log's grade."""
        self.writes.discarded(writes)
        self._withdraw_warnings(writes)
        self.keys.wake()  # (a screen may have held the keys for one: `log_undo_unread`)
        self._show_saving()
        if writes:
            named = [f"{_what(w).lower()} {_subject(w)}" for w in writes[:PROBLEMS_IN_NOTICE]]
            shown = listed(named, PROBLEMS_IN_NOTICE, total=len(writes))
            self.notify(f"Discarded, not saved: {shown}.", title="Not saved", severity="warning", markup=False)

    async def action_discard_writes(self, then: Callable[[], Awaitable[None]] | None = None) -> None:
        """ctrl+d: after asking, discard every write not saved yet (while the oldest waits to be retried)."""
        from lesson_credit.tui.screens.confirm import ConfirmScreen

        waiting = self.writes.waiting()
        if waiting is None and then is None and isinstance(self.focused, Input):
            self.focused.action_delete_right()  # nothing to discard: the text box's own ctrl+d
            return
        if waiting is None:
            if then is not None:  # (saved since it was asked for: what a yes would do after discarding goes on)
                await then()
            elif (under_way := next(iter(self.writes.not_written()), None)) is not None:
                self.notify(
                    f"{_what(under_way)} {_subject(under_way)} is being saved: a write under way cannot be discarded "
                    "(ctrl+d discards what waits to be tried again).",
                    markup=False,
                )
            else:
                self.notify("No write is waiting to be saved.", markup=False)
            return
        count, reason = waiting

        async def answered(discard: bool) -> None:
            if self._discard_asked is not None and self._discard_asked.question is question:
                self._discard_asked = None
            if discard:
                self._forget(self.writes.discard())
                if then is not None:
                    await then()

        words = f"Discard {counted(count, 'write')} not saved yet{' and quit' if then is not None else ''}?"
        # each named (the first few), so the question says what it drops: the one being retried, those behind it
        unwritten = self.writes.not_written()
        oldest, behind = (unwritten[0], unwritten[1:]) if unwritten else (None, [])
        named = f", {_what(oldest).lower()} {_subject(oldest)}," if oldest is not None else ""
        detail = f"The oldest{named} failed: {one_line(reason)}."
        if behind:
            later = [f"{_what(w).lower()} {_subject(w)}" for w in behind[:PROBLEMS_IN_NOTICE]]
            detail += f" Also not saved: {listed(later, PROBLEMS_IN_NOTICE, total=len(behind))}."
        detail += " escape keeps them; they are tried again until saved."
        question = ConfirmScreen(words, detail, on_answer=answered)
        self._discard_asked = DiscardAsked(question, count, then)
        await self.push_screen(question)
        self._discard_question_outdated()  # (saved while it was pushed, from the quit's worker: it goes at once)

    def _discard_question_outdated(self) -> None:
        """The question whether to discard the writes not saved yet goes once the oldest it asked about is saved
        (or dropped) meanwhile: it named writes in the log (y discarded nothing), and the quit's stayed up for good,
        the app never quitting. Asked again about those left while one still waits to be retried; else what it was
        asked for goes on (the quit: once the queue is empty). Not under a screen opened over it (ctrl+p's palette):
        answered yes there, it discards what is still not saved (nothing: then the quit goes on)."""
        asked = self._discard_asked
        waiting = self.writes.waiting()
        if asked is None or (waiting is not None and waiting[0] == asked.count) or not asked.question.is_current:
            return
        self._discard_asked = None
        asked.question.on_answer = None
        held = self.keys.held_for(asked.question)
        asked.question.dismiss(False)  # (the keys typed before it go on, as after a yes: they were not about it)
        if waiting is not None:
            self.call_next(self.action_discard_writes, asked.then)  # the writes left, named again
        elif held and asked.then is not None:  # (`then`: the quit's) keys typed after q: quitting would drop them
            self.notify(
                f"Not quitting: {counted(held, 'key')} typed after q go on (q quits).", title="Quit", markup=False
            )
        elif asked.then is not None:
            self.call_next(asked.then)


@dataclass(frozen=True)
class DiscardAsked:
    """The question whether to discard the writes not saved yet, on the stack: how many it named, and what a yes
    does after discarding them (the quit's: quitting)."""

    question: ConfirmScreen
    count: int
    then: Callable[[], Awaitable[None]] | None


def lock_words(exc: Exception, root: Path) -> str | None:
    """A lock file another writer held past the wait (LockHeld), named in words a toast wraps between at 80
    columns: its file name, then its folder in the workspace (`sessions.jsonl.lock in state/lesson-thompson`; a
    folder outside it, from the home folder or absolute), where the store's message names its absolute path, cut
    mid-word; without the store's "retry later" (the dashboard tries again itself, as its warning says). None
    for anything else (a database's lock, which is no file: as the store says it)."""
    from lesson_credit.core.api import LockHeld  # the engine's: not before the first frame

    if not isinstance(exc, LockHeld) or exc.lock is None or exc.waited is None:
        return None
    folder = exc.lock.parent
    for base, shown in ((root, ""), (Path.home(), "~/")):
        with contextlib.suppress(ValueError):
            folder = Path(shown + str(folder.relative_to(base)))
            break
    where = "the workspace's folder" if str(folder) == "." else folder
    return f"another writer held the lock for {exc.waited:g} s; nothing written ({exc.lock.name} in {where})"


def _what(write: Write) -> str:
    if write.save is not None:
        return f"Settings ({write.save.describe()})"
    return f"Grade {fmt_grade(write.value)}" if write.kind == "grade" else "Undo"


def _name(write: Write) -> str:
    """What the write is about: its session, or config.toml for a settings save."""
    return "config.toml" if write.kind == "settings" else one_line(write.session_id)


def _subject(write: Write) -> str:
    return f"{'to' if write.kind == 'settings' else 'for'} {_name(write)}"
